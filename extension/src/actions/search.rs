//! `retrieve_entities` with `search`: the user's entities ranked by how well
//! they match (sql/queries/search_entities.sql; the query's forms and the
//! mode in neotoma_core::search).

use crate::db::{self, Arg};
use neotoma_core::actions::common;
use neotoma_core::actions::entities::{RetrieveEntitiesRequest, RetrieveEntitiesResponse};
use neotoma_core::search::{self, NAME_THRESHOLD};
use neotoma_core::{ErrorCode, NeotomaError};
use uuid::Uuid;

const SEARCH_ENTITIES: &str = include_str!("../../sql/queries/search_entities.sql");

pub fn search_entities(
    user: Uuid,
    req: &RetrieveEntitiesRequest,
    text: &str,
) -> Result<RetrieveEntitiesResponse, NeotomaError> {
    let q = search::check_query(text)?;
    let (limit, offset) = common::page(req.limit, req.offset)?;
    if !crate::installed::at_least(8)? {
        return Err(NeotomaError::new(
            ErrorCode::ServiceUnavailable,
            "search needs the extension's 0.8.0 objects: run ALTER EXTENSION neotoma UPDATE",
        ));
    }
    let (method, fallback) = search::answering_mode(req.search_mode.unwrap_or_default());
    let flag = |b: Option<bool>, default: bool| {
        if b.unwrap_or(default) {
            "true"
        } else {
            "false"
        }
    };
    let mut answer: RetrieveEntitiesResponse = if search::has_words(q) {
        let grams = search::query_trigrams(q);
        let least = search::least_shared(grams.len());
        let threshold = NAME_THRESHOLD.to_string();
        db::quietly(|| {
            db::with_custom_index_plans(|| {
                db::parsed(
                    SEARCH_ENTITIES,
                    &[
                        Arg::uuid(user),
                        Arg::Text(q),
                        Arg::Texts(grams),
                        Arg::Int(least),
                        Arg::OptText(req.entity_type.as_deref()),
                        Arg::Text(flag(req.include_merged, false)),
                        Arg::Text(flag(req.include_deleted, false)),
                        Arg::Text(flag(req.include_snapshots, true)),
                        Arg::Int(limit),
                        Arg::Int(offset),
                        Arg::Text(&threshold),
                    ],
                    "found entities",
                )
            })
        })?
    } else {
        // Nothing to match (punctuation only): nothing matches.
        RetrieveEntitiesResponse {
            entities: vec![],
            total: 0,
            excluded_merged: !req.include_merged.unwrap_or(false),
            limit,
            offset,
            search_method: None,
            search_fallback: None,
        }
    };
    answer.search_method = Some(method.to_string());
    answer.search_fallback = fallback;
    Ok(answer)
}
