//! `list_contradictions` and `retrieve_entity_snapshot {include_contradictions}`:
//! the fields where observations of one entity disagree
//! (neotoma_core::contradictions, over the observations the reducer folds).
//! A page's candidates come from one query over the observations (fields
//! with two or more distinct values from two or more sources); each is
//! then checked against its merge policies.

use super::entities::resolve_entity;
use crate::db::{self, Arg};
use crate::snapshots;
use neotoma_core::actions::common;
use neotoma_core::actions::contradictions::{
    EntityContradiction, ListContradictionsRequest, ListContradictionsResponse,
};
use neotoma_core::NeotomaError;
use uuid::Uuid;

/// Most entities a page looks at.
const MAX_PAGE: i64 = 100;

/// The live entities with a field given two or more distinct values by two
/// or more sources (their snapshot's fold says so; merged ones count for
/// their target, whose fold has their observations), as [user, entity,
/// type] in user and id order, from the indexes entity_snapshots_disagreeing
/// and entity_snapshots_disagreeing_over_time (their predicates, word for
/// word): $1 the user (null: every one the session
/// can read), $2 the type (or null), $3 limit (null: all), $4 offset, $5
/// the workspaces (text[]; null: all).
const CANDIDATES: &str = "
    SELECT coalesce(jsonb_agg(jsonb_build_array(p.user_id, p.entity_id, p.entity_type)
                              ORDER BY p.user_id, p.entity_id), '[]')
    FROM (SELECT s.user_id, s.entity_id, s.entity_type FROM neotoma.entity_snapshots s
          WHERE ($1::uuid IS NULL OR s.user_id = $1::uuid)
            AND (s.reducer_state @? '$.fields.* ? (@.d == 3)'
                 OR s.reducer_state @? '$.timelines.*[*].s ? (@.d == 3)' -- new
                 )
            AND ($2::text IS NULL OR s.entity_type = $2)
            AND ($5::text[] IS NULL OR s.workspace = ANY($5::text[]))
            AND EXISTS (SELECT FROM neotoma.entities e WHERE e.user_id = s.user_id AND e.id = s.entity_id
                          AND e.merged_into IS NULL AND e.deleted_at IS NULL)
          ORDER BY s.user_id, s.entity_id LIMIT $3 OFFSET $4) p";

/// The [`CANDIDATES`] of `user` (None: of every user the session can read).
fn candidates(
    user: Option<&Uuid>,
    entity_type: Option<&str>,
    limit: Option<i64>,
    offset: i64,
    workspaces: Option<Vec<String>>,
) -> Result<Vec<(Uuid, String, String)>, NeotomaError> {
    let user = user.map(Uuid::to_string);
    let v = db::json(
        &crate::installed::adapt(CANDIDATES)?,
        &[
            Arg::OptText(user.as_deref()),
            Arg::OptText(entity_type),
            Arg::OptInt(limit),
            Arg::Int(offset),
            Arg::OptTexts(workspaces),
        ],
    )?;
    db::from_json(v, "contradicting entities")
}

pub fn list_contradictions(
    user: Uuid,
    req: ListContradictionsRequest,
) -> Result<ListContradictionsResponse, NeotomaError> {
    let (limit, offset) = common::page_of(req.limit, req.offset, 20, MAX_PAGE)?;
    let include_resolved = req.include_resolved.unwrap_or(true);
    // One entity, or a page of those whose observations disagree.
    let (entities, has_more): (Vec<(String, String)>, bool) = match &req.entity_id {
        Some(id) => {
            let id = common::entity_id("entity_id", id)?;
            let (entity, _) = resolve_entity(&user, &id)?;
            if req
                .entity_type
                .as_ref()
                .is_some_and(|t| *t != entity.entity_type)
            {
                (vec![], false)
            } else {
                (vec![(entity.id, entity.entity_type)], false)
            }
        }
        None => {
            let mut found: Vec<(String, String)> = candidates(
                Some(&user),
                req.entity_type.as_deref(),
                Some(limit + 1),
                offset,
                Some(crate::scope::current().names()),
            )?
            .into_iter()
            .map(|(_, id, t)| (id, t))
            .collect();
            let more = found.len() as i64 > limit;
            found.truncate(limit as usize);
            (found, more)
        }
    };
    let mut out = Vec::new();
    for (entity_id, entity_type) in &entities {
        for c in snapshots::contradictions_of(&user, entity_id, entity_type, None)? {
            if include_resolved || !c.resolved {
                out.push(EntityContradiction {
                    entity_id: entity_id.clone(),
                    entity_type: entity_type.clone(),
                    contradiction: c,
                });
            }
        }
    }
    Ok(ListContradictionsResponse {
        contradictions: out,
        entities_checked: entities.len() as i64,
        limit,
        offset,
        has_more,
    })
}

/// Every contradiction the session can read (row level security picks the
/// users: an ordinary role its user's, a superuser everyone's), for the
/// analysts' view `neotoma.contradictions`.
#[allow(clippy::type_complexity)]
#[pgrx::pg_extern(stable, name = "_contradictions")]
pub(crate) fn contradictions_view() -> pgrx::iter::TableIterator<
    'static,
    (
        pgrx::name!(user_id, pgrx::Uuid),
        pgrx::name!(entity_id, String),
        pgrx::name!(entity_type, String),
        pgrx::name!(field, String),
        pgrx::name!(chosen_value, pgrx::JsonB),
        pgrx::name!(chosen_observation_id, String),
        pgrx::name!(strategy, String),
        pgrx::name!(tie_breaker, String),
        pgrx::name!(reason, String),
        pgrx::name!(resolved, bool),
        pgrx::name!(competing_values, pgrx::JsonB),
    ),
> {
    let rows = (|| -> Result<Vec<_>, NeotomaError> {
        let mut rows = Vec::new();
        for (user, entity_id, entity_type) in candidates(None, None, None, 0, None)? {
            for c in snapshots::contradictions_of(&user, &entity_id, &entity_type, None)? {
                rows.push((
                    pgrx::Uuid::from_bytes(*user.as_bytes()),
                    entity_id.clone(),
                    entity_type.clone(),
                    c.field,
                    pgrx::JsonB(c.chosen_value),
                    c.chosen_observation_id,
                    c.strategy,
                    c.tie_breaker,
                    c.reason,
                    c.resolved,
                    pgrx::JsonB(serde_json::to_value(&c.values).unwrap_or_default()),
                ));
            }
        }
        Ok(rows)
    })()
    .unwrap_or_else(|e| pgrx::error!("neotoma.contradictions: {}", e.message));
    pgrx::iter::TableIterator::new(rows)
}
