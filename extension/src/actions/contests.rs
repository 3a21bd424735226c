//! `contest` (sql/confidence.sql): an observation disputed. Inserting the
//! contest is the whole write: the table's trigger rebuilds the snapshot
//! its observation counts for, whoever inserts it.

use super::entities::resolve_entity;
use crate::db::{self, Arg};
use neotoma_core::actions::common;
use neotoma_core::actions::contests::{check_reason, ContestRequest, ContestResponse};
use neotoma_core::ids::derived_uuid;
use neotoma_core::reducer::Observation;
use neotoma_core::{ErrorCode, NeotomaError};
use serde::Deserialize;
use uuid::Uuid;

/// The contested observation as the action needs it.
#[derive(Deserialize)]
struct Contested {
    entity_id: String,
    kind: String,
    /// Set when a split moved it: its copy counts instead.
    moved_to: Option<String>,
    /// As the reducer reads it (rating and contests).
    observation: Observation,
}

const CONTESTED: &str = "
    SELECT jsonb_build_object('entity_id', o.entity_id, 'kind', o.kind,
             'moved_to', (SELECT m.copy_id FROM neotoma.observation_moves m
                          WHERE m.user_id = o.user_id AND m.observation_id = o.id),
             'observation', jsonb_build_object('id', o.id, 'source_id', o.source_id,
                 'observed_at', neotoma._micros(o.observed_at), 'source_priority', o.source_priority,
                 'specificity_score', o.specificity_score, 'fields', '{}'::jsonb, 'confidence', o.confidence,
                 'contests', (SELECT count(*) FROM neotoma.observation_contests c
                              WHERE c.user_id = o.user_id AND c.observation_id = o.id)
                 , 'write_order', o.write_order
                 ))
    FROM neotoma.observations o WHERE o.user_id = $1::uuid AND o.id = $2::uuid";

fn contested(user: &Uuid, observation: &Uuid) -> Result<Contested, NeotomaError> {
    let v = db::json(
        &crate::installed::adapt(CONTESTED)?,
        &[Arg::uuid(user), Arg::Text(&observation.to_string())],
    )?;
    if v.is_null() {
        return Err(crate::scope::absent(
            ErrorCode::NotFound,
            "observation",
            &observation.to_string(),
        ));
    }
    db::from_json(v, "observation")
}

pub fn contest(user: Uuid, req: ContestRequest) -> Result<ContestResponse, NeotomaError> {
    let reason = check_reason(&req.reason)?;
    let observation = common::uuid("observation_id", &req.observation_id)?;
    let before = contested(&user, &observation)?;
    super::entities::hide_beyond_limit(&user, &before.entity_id, || {
        crate::scope::absent(ErrorCode::NotFound, "observation", &observation.to_string())
    })?;
    if matches!(before.kind.as_str(), "deletion" | "restoration") {
        return Err(NeotomaError::invalid_field(
            "observation_id",
            format!(
                "observation {observation} is a {}: it gives no value to contest",
                before.kind
            ),
        ));
    }
    if let Some(copy) = &before.moved_to {
        return Err(NeotomaError::invalid_field(
            "observation_id",
            format!(
                "a split moved observation {observation}: its copy {copy} counts instead; contest that"
            ),
        )
        .with("copy_id", copy.clone()));
    }
    // The observation's entity lies in the workspace written to.
    super::entities::check_in_scope(&user, &before.entity_id)?;
    let id = derived_uuid(
        "contest",
        &[&user.to_string(), &observation.to_string(), reason],
    );
    // Another call committing the same contest meanwhile: its row wins
    // (ON CONFLICT), and this one answers as a repeat.
    let created_at = db::json(
        "WITH ins AS (
           INSERT INTO neotoma.observation_contests (user_id, id, observation_id, reason)
           VALUES ($1::uuid, $2::uuid, $3::uuid, $4)
           ON CONFLICT (user_id, id) DO NOTHING RETURNING created_at)
         SELECT to_jsonb(neotoma._iso(created_at)) FROM ins",
        &[
            Arg::uuid(user),
            Arg::Text(&id.to_string()),
            Arg::Text(&observation.to_string()),
            Arg::Text(reason),
        ],
    )?;
    let already = created_at.is_null();
    let created_at = match created_at.as_str() {
        Some(at) => at.to_string(),
        None => db::json(
            "SELECT to_jsonb(neotoma._iso(created_at)) FROM neotoma.observation_contests
             WHERE user_id = $1::uuid AND id = $2::uuid",
            &[Arg::uuid(user), Arg::Text(&id.to_string())],
        )?
        .as_str()
        .unwrap_or_default()
        .to_string(),
    };
    let after = contested(&user, &observation)?;
    let confidence_before = if already {
        after.observation.effective_confidence()
    } else {
        before.observation.effective_confidence()
    };
    Ok(ContestResponse {
        contest_id: id.to_string(),
        observation_id: observation.to_string(),
        entity_id: resolve_entity(&user, &after.entity_id)?.0.id,
        reason: reason.to_string(),
        confidence_before,
        confidence: after.observation.effective_confidence(),
        contests: after.observation.contests,
        already_contested: already,
        created_at,
    })
}
