//! The deprecated record actions of the earlier specification (seed 001
//! §3.4–3.6), kept for old agents on the truth model: a record is an entity,
//! its `properties` are its snapshot. `update_record` corrects fields,
//! `retrieve_records` lists entities, `delete_record` clears every field by
//! corrections (the entity's history stays; the lifecycle's deletion will
//! replace it). Every answer says it is deprecated and what replaces it.

use super::entities::{correct, resolve_live_entity, EntityRow};
use crate::db::{self, Arg};
use crate::registry;
use neotoma_core::actions::common;
use neotoma_core::actions::entities::CorrectRequest;
use neotoma_core::actions::records::*;
use neotoma_core::request::json_type;
use neotoma_core::schema::check_name;
use neotoma_core::{ErrorCode, NeotomaError};
use serde_json::{json, Map, Value};
use uuid::Uuid;

/// The record an id names (following a merge), or RECORD_NOT_FOUND.
fn find_record(user: &Uuid, id: &str) -> Result<EntityRow, NeotomaError> {
    let missing = |id: &str| {
        NeotomaError::new(
            ErrorCode::RecordNotFound,
            format!("no record `{id}` (records are entities now: retrieve_entities lists them)"),
        )
        .with("id", id)
    };
    // Records of the earlier specification had UUIDs: one names no record
    // here (seed 001: RECORD_NOT_FOUND), as any id that is not one's.
    if id.trim().is_empty() {
        return Err(NeotomaError::invalid_field("id", "id names the record"));
    }
    let Ok(id) = common::entity_id("id", id) else {
        return Err(missing(id));
    };
    match resolve_live_entity(user, &id) {
        Ok((entity, _)) => Ok(entity),
        Err(e) if e.code == ErrorCode::EntityNotFound => Err(missing(&id)),
        Err(e) => Err(e),
    }
}

/// A record as the earlier specification shows it: the entity, its
/// snapshot as `properties`, no file URLs (files are sources now).
fn record(user: &Uuid, id: &str) -> Result<Value, NeotomaError> {
    db::parsed(
        "SELECT json_build_object('id', e.id, 'type', e.entity_type,
                  'properties', coalesce(s.snapshot, '{}'::jsonb), 'file_urls', '[]'::json,
                  'created_at', neotoma._iso(e.created_at),
                  'updated_at', neotoma._iso(coalesce(s.last_observation_at, e.created_at)))::text
         FROM neotoma.entities e
         LEFT JOIN neotoma.entity_snapshots s ON s.user_id = e.user_id AND s.entity_id = e.id
         WHERE e.user_id = $1::uuid AND e.id = $2",
        &[Arg::uuid(user), Arg::Text(id)],
        "record",
    )
}

/// An answer marked deprecated, naming the action that replaces this one.
fn deprecated(mut answer: Value, replacement: &str) -> Value {
    answer["deprecated"] = json!(true);
    answer["replacement"] = json!(replacement);
    answer
}

/// Corrects each of `fields` (in key order) of `entity`.
fn correct_fields(
    user: Uuid,
    entity: &EntityRow,
    fields: Map<String, Value>,
) -> Result<(), NeotomaError> {
    for (field, value) in fields {
        correct(
            user,
            CorrectRequest {
                user_id: None,
                entity_id: entity.id.clone(),
                entity_type: entity.entity_type.clone(),
                field,
                value,
                confidence: None,
                workspace: None,
                valid_from: None,
                valid_to: None,
            },
        )?;
    }
    Ok(())
}

pub fn update_record(user: Uuid, req: UpdateRecordRequest) -> Result<Value, NeotomaError> {
    let entity = find_record(&user, &req.id)?;
    if let Some(t) = &req.record_type {
        if *t != entity.entity_type {
            return Err(NeotomaError::invalid_field(
                "type",
                format!(
                    "record {} is of type {}, not {}: a record's type does not change",
                    entity.id, entity.entity_type, t
                ),
            )
            .with("expected", entity.entity_type.clone()));
        }
    }
    let properties = req.properties.unwrap_or_default();
    // Every property is checked before any is corrected, so that the error
    // names the property as the request does.
    let schemas = registry::active(user, std::slice::from_ref(&entity.entity_type))?;
    let Some(schema) = schemas.get(&entity.entity_type).map(|a| &*a.schema) else {
        return Err(NeotomaError::new(
            ErrorCode::SchemaNotFound,
            "the record's type has no active schema",
        ));
    };
    for (key, value) in &properties {
        let at = format!("properties.{key}");
        match schema.fields.get(key) {
            None => {
                return Err(NeotomaError::invalid_field(
                    &at,
                    format!("`{key}` is not a field of {}", entity.entity_type),
                )
                .with("fields", schema.fields.keys().cloned().collect::<Vec<_>>()))
            }
            Some(def) if !def.field_type.accepts(value) => {
                return Err(NeotomaError::invalid_field(
                    &at,
                    format!(
                        "{key} must be a {} (or null), got {}",
                        def.field_type.as_str(),
                        json_type(value)
                    ),
                )
                .with("expected", def.field_type.as_str()))
            }
            Some(_) => {}
        }
    }
    correct_fields(user, &entity, properties)?;
    Ok(deprecated(record(&user, &entity.id)?, "correct"))
}

pub fn retrieve_records(user: Uuid, req: RetrieveRecordsRequest) -> Result<Value, NeotomaError> {
    if let Some(t) = &req.record_type {
        check_name("type", t)?;
    }
    let limit = req.limit.unwrap_or(RECORDS_DEFAULT_LIMIT);
    if !(1..=RECORDS_MAX_LIMIT).contains(&limit) {
        return Err(NeotomaError::invalid_field(
            "limit",
            format!("limit must be 1 to {RECORDS_MAX_LIMIT}"),
        )
        .with("got", limit));
    }
    let terms: Vec<String> = req
        .search
        .unwrap_or_default()
        .iter()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect();
    let scope = crate::scope::current();
    let answer: Value = db::parsed(
        &scope.adapt(RETRIEVE_RECORDS)?,
        &[
            Arg::uuid(user),
            Arg::OptText(req.record_type.as_deref()),
            Arg::Json(&Value::Object(req.properties.unwrap_or_default())),
            Arg::Texts(terms),
            Arg::Int(limit),
            scope.arg(),
        ],
        "records",
    )?;
    Ok(deprecated(answer, "retrieve_entities"))
}

pub fn delete_record(user: Uuid, req: DeleteRecordRequest) -> Result<Value, NeotomaError> {
    let entity = find_record(&user, &req.id)?;
    let gone = || {
        NeotomaError::new(
            ErrorCode::RecordNotFound,
            format!("record `{}` was deleted", entity.id),
        )
        .with("id", entity.id.clone())
    };
    // The entity's deletion: out of every listing, its history kept
    // (restore_entity brings it back).
    if !crate::lifecycle::delete_if_live(&user, &entity.id, "delete_record")? {
        return Err(gone());
    }
    Ok(deprecated(
        json!({"success": true, "deleted_id": entity.id}),
        "delete_entity",
    ))
}

const RETRIEVE_RECORDS: &str = "
WITH matching AS (
  SELECT e.id, e.entity_type, e.created_at, s.snapshot, s.last_observation_at
  FROM neotoma.entities e
  JOIN neotoma.entity_snapshots s ON s.user_id = e.user_id AND s.entity_id = e.id
  WHERE e.user_id = $1::uuid AND e.merged_into IS NULL
    AND e.deleted_at IS NULL
    AND s.workspace = ANY($6::text[])
    AND ($2::text IS NULL OR e.entity_type = $2)
    AND s.snapshot <> '{}'::jsonb AND s.snapshot @> $3
    AND NOT EXISTS (
      SELECT 1 FROM unnest($4::text[]) AS t(term)
      WHERE strpos(lower(e.canonical_name || ' ' ||
                         coalesce((SELECT string_agg(v.value, ' ') FROM jsonb_each_text(s.snapshot) v), '')),
                   lower(t.term)) = 0)),
page AS (SELECT * FROM matching ORDER BY last_observation_at DESC NULLS LAST, id LIMIT $5)
SELECT json_build_object(
  'records', coalesce((SELECT json_agg(json_build_object(
      'id', p.id, 'type', p.entity_type, 'properties', p.snapshot, 'file_urls', '[]'::json,
      'created_at', neotoma._iso(p.created_at),
      'updated_at', neotoma._iso(coalesce(p.last_observation_at, p.created_at)))
    ORDER BY p.last_observation_at DESC NULLS LAST, p.id) FROM page p), '[]'::json),
  'total', (SELECT count(*) FROM matching))::text";
