//! `annotate` (sql/annotations.sql): notes beside the truth model;
//! `retrieve_entity_snapshot` answers them (actions::entities).

use super::entities::{resolve_entity, ANNOTATION_JSON};
use crate::db::{self, Arg};
use neotoma_core::actions::annotations::{check_note, AnnotateRequest, AnnotationOut};
use neotoma_core::actions::common;
use neotoma_core::ids::derived_uuid;
use neotoma_core::{ErrorCode, NeotomaError};
use uuid::Uuid;

pub fn annotate(user: Uuid, req: AnnotateRequest) -> Result<AnnotationOut, NeotomaError> {
    let note = check_note(&req.note)?;
    let observation = req
        .observation_id
        .as_deref()
        .map(|o| common::uuid("observation_id", o))
        .transpose()?;
    // The observation's entity (an observation a split moved counts for the
    // entity it was moved to only through its copy: the original's is named).
    let observed_entity = match observation {
        Some(o) => {
            let v = db::json(
                "SELECT to_jsonb(o.entity_id) FROM neotoma.observations o
                 WHERE o.user_id = $1::uuid AND o.id = $2::uuid",
                &[Arg::uuid(user), Arg::Text(&o.to_string())],
            )?;
            let absent =
                || crate::scope::absent(ErrorCode::NotFound, "observation", &o.to_string());
            let entity = v.as_str().map(str::to_string).ok_or_else(absent)?;
            super::entities::hide_beyond_limit(&user, &entity, absent)?;
            Some(entity)
        }
        None => None,
    };
    let asked = match (&req.entity_id, &observed_entity) {
        (Some(e), _) => common::entity_id("entity_id", e)?,
        (None, Some(e)) => e.clone(),
        (None, None) => {
            return Err(NeotomaError::invalid_field(
                "entity_id",
                "annotate needs entity_id or observation_id",
            ))
        }
    };
    if let (Some(given), Some(of_observation)) = (&req.entity_id, &observed_entity) {
        if given != of_observation {
            return Err(NeotomaError::invalid_field(
                "observation_id",
                format!(
                    "observation {} is not of entity {given}",
                    req.observation_id.as_deref().unwrap_or_default()
                ),
            ));
        }
    }
    // A note on an entity goes to where it was merged, as its snapshot does;
    // one on an observation stays with the observation's own entity.
    let entity_id = match observation {
        Some(_) => {
            // Where it lies, as for a note on the entity itself.
            super::entities::check_in_scope(&user, &asked)?;
            asked
        }
        None => resolve_entity(&user, &asked)?.0.id,
    };
    let observation_text = observation.map(|o| o.to_string()).unwrap_or_default();
    let id = derived_uuid(
        "annotation",
        &[&user.to_string(), &entity_id, &observation_text, note],
    );
    let v = db::json(
        &format!(
            "WITH ins AS (
               INSERT INTO neotoma.annotations (user_id, id, entity_id, observation_id, note)
               VALUES ($1::uuid, $2::uuid, $3, nullif($4, '')::uuid, $5)
               ON CONFLICT (user_id, id) DO NOTHING
               RETURNING *)
             SELECT {ANNOTATION_JSON} FROM (SELECT * FROM ins
                                            UNION ALL
                                            SELECT * FROM neotoma.annotations
                                            WHERE user_id = $1::uuid AND id = $2::uuid) a
             LIMIT 1"
        ),
        &[
            Arg::uuid(user),
            Arg::Text(&id.to_string()),
            Arg::Text(&entity_id),
            Arg::Text(&observation_text),
            Arg::Text(note),
        ],
    )?;
    if !v.is_null() {
        return db::from_json(v, "annotation");
    }
    // The same annotation, committed by another call after this statement
    // began: neither inserted nor seen by it. A new statement sees it.
    let v = db::json(
        &format!("SELECT {ANNOTATION_JSON} FROM neotoma.annotations a WHERE a.user_id = $1::uuid AND a.id = $2::uuid"),
        &[Arg::uuid(user), Arg::Text(&id.to_string())],
    )?;
    db::from_json(v, "annotation")
}
