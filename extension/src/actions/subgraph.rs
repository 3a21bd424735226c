//! `search_subgraph` and `get_subgraph_by_ids`: entities with their latest
//! observations and the relationships among them (sql/queries/subgraph.sql),
//! found by a search (super::search) or named by id.

use super::search::{self, Search};
use crate::db::{self, Arg};
use neotoma_core::actions::common;
use neotoma_core::actions::subgraph::*;
use neotoma_core::NeotomaError;
use uuid::Uuid;

const SUBGRAPH: &str = include_str!("../../../sql/queries/subgraph.sql");

pub fn search_subgraph(
    user: Uuid,
    req: SearchSubgraphRequest,
) -> Result<SubgraphResponse, NeotomaError> {
    let page = req.page.unwrap_or(1);
    if page < 1 {
        return Err(NeotomaError::invalid_field("page", "page counts from 1"));
    }
    let per_page = req.per_page.unwrap_or(PER_PAGE);
    if !(1..=MAX_PER_PAGE).contains(&per_page) {
        return Err(NeotomaError::invalid_field(
            "per_page",
            format!("per_page must be 1 to {MAX_PER_PAGE}"),
        ));
    }
    let offset = (page - 1)
        .checked_mul(per_page)
        .ok_or_else(|| NeotomaError::invalid_field("page", "page is past any result"))?;
    let found = search::run(
        user,
        &Search {
            text: &req.query,
            // Seed 002's search: by words and names, as asked (search_in_*).
            mode: neotoma_core::search::SearchMode::Lexical,
            entity_type: None,
            limit: per_page,
            offset,
            include_merged: false,
            include_deleted: false,
            include_snapshots: false,
            in_values: req.search_in_observations.unwrap_or(true),
            in_observations: req.search_in_observations.unwrap_or(true),
            in_names: req.search_in_name.unwrap_or(true),
            in_aliases: req.search_in_aliases.unwrap_or(true),
            in_types: req.search_in_type.unwrap_or(true),
        },
    )
    .map_err(|e| e.renamed_field("search", "query"))?;
    let ids: Vec<String> = found.entities.iter().map(|e| e.id.clone()).collect();
    let mut graph = subgraph(user, ids, &req.valid_at)?;
    for (entity, hit) in graph.entities.iter_mut().zip(&found.entities) {
        entity.relevance_score = hit.relevance_score;
        entity.matched_fields = hit.matched_fields.clone();
    }
    graph.missing = None;
    graph.total = Some(found.total);
    graph.page = Some(page);
    graph.per_page = Some(per_page);
    graph.search_method = found.search_method;
    Ok(graph)
}

pub fn get_subgraph_by_ids(
    user: Uuid,
    req: GetSubgraphByIdsRequest,
) -> Result<SubgraphResponse, NeotomaError> {
    if req.entity_ids.is_empty() || req.entity_ids.len() > MAX_IDS {
        return Err(NeotomaError::invalid_field(
            "entity_ids",
            format!("entity_ids holds 1 to {MAX_IDS} entity ids"),
        ));
    }
    let ids = req
        .entity_ids
        .iter()
        .map(|id| common::entity_id("entity_ids", id))
        .collect::<Result<Vec<String>, _>>()?;
    subgraph(user, ids, &req.valid_at)
}

/// The subgraph of `ids` (in their order), with the relationships holding
/// at `valid_at` (default now).
fn subgraph(
    user: Uuid,
    ids: Vec<String>,
    valid_at: &Option<String>,
) -> Result<SubgraphResponse, NeotomaError> {
    let valid_at = super::relationships::valid_at_or_now(valid_at)?;
    let scope = crate::scope::current();
    let mut graph: SubgraphResponse = db::with_custom_index_plans(|| {
        db::parsed(
            &scope.adapt(SUBGRAPH)?,
            &[
                Arg::uuid(user),
                Arg::Texts(ids),
                Arg::Int(OBSERVATIONS_PER_ENTITY),
                scope.arg(),
                Arg::Int(valid_at),
            ],
            "subgraph",
        )
    })?;
    for r in graph.relationships.iter_mut() {
        if let Some(rendered) = super::relationships::rendered_at(&user, &r.id, r.timed, valid_at)?
        {
            r.snapshot = rendered.snapshot;
        }
    }
    Ok(graph)
}
