//! `annotate` and the annotations `retrieve_entity_snapshot` answers
//! (sql/annotations.sql): notes beside the truth model.

use crate::db::{self, Arg};
use neotoma_core::actions::annotations::{check_note, AnnotateRequest, AnnotationOut};
use neotoma_core::actions::common;
use neotoma_core::ids::derived_uuid;
use neotoma_core::{ErrorCode, NeotomaError};
use uuid::Uuid;

/// An annotation as the actions answer it (`a` is neotoma.annotations).
const ANNOTATION_JSON: &str = "jsonb_build_object('annotation_id', a.id, 'entity_id', a.entity_id,
    'observation_id', a.observation_id, 'note', a.note, 'created_at', neotoma._iso(a.created_at))";

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
            Some(v.as_str().map(str::to_string).ok_or_else(|| {
                NeotomaError::new(
                    ErrorCode::NotFound,
                    format!("no observation {o} (for this user)"),
                )
                .with("observation_id", o.to_string())
            })?)
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
        Some(_) => asked,
        None => {
            let v = db::json(
                "SELECT to_jsonb(coalesce(e.merged_into, e.id)) FROM neotoma.entities e
                 WHERE e.user_id = $1::uuid AND e.id = $2",
                &[Arg::uuid(user), Arg::Text(&asked)],
            )?;
            v.as_str().map(str::to_string).ok_or_else(|| {
                NeotomaError::new(
                    ErrorCode::EntityNotFound,
                    format!("no entity {asked} (for this user)"),
                )
                .with("entity_id", asked.as_str())
            })?
        }
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

/// The annotations of an entity and of the entities merged into it, oldest
/// first.
pub fn annotations_of(user: &Uuid, entity_id: &str) -> Result<Vec<AnnotationOut>, NeotomaError> {
    let v = db::json(
        &format!(
            "SELECT coalesce(jsonb_agg({ANNOTATION_JSON} ORDER BY a.created_at, a.id), '[]')
             FROM neotoma.annotations a
             WHERE a.user_id = $1::uuid
               AND a.entity_id = ANY(ARRAY[$2::text] || ARRAY(SELECT id FROM neotoma.entities
                                                             WHERE user_id = $1::uuid AND merged_into = $2))"
        ),
        &[Arg::uuid(user), Arg::Text(entity_id)],
    )?;
    db::from_json(v, "annotations")
}
