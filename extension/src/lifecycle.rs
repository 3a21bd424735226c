//! Whether an entity or a relationship is deleted: the latest of its
//! deletion and restoration observations says (for entities the observation
//! trigger keeps `entities.deleted_at` and `deleted_reason` in step; for
//! relationships [`mark_relationship`] does; verify() checks both). Marking
//! one writes a `lifecycle` source and the observation; the reducers never
//! fold them.

use crate::db::{self, Arg};
use crate::registry;
use neotoma_core::canonical::{canonical_json, sha256_hex};
use neotoma_core::ids::{derived_uuid, source_id};
use neotoma_core::{ErrorCode, NeotomaError};
use serde::Deserialize;
use serde_json::{json, Value};
use uuid::Uuid;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    Deletion,
    Restoration,
}

impl Mark {
    fn kind(self) -> &'static str {
        match self {
            Mark::Deletion => "deletion",
            Mark::Restoration => "restoration",
        }
    }
}

/// An entity as deletion sees it, its row locked.
#[derive(Debug, Deserialize)]
pub struct Lifecycle {
    pub id: String,
    pub entity_type: String,
    pub merged_into: Option<String>,
    pub deleted_at: Option<String>,
    pub deleted_reason: Option<String>,
    /// The latest deletion or restoration observation.
    pub last_mark: Option<String>,
    /// Its workspace (`default` before 0.12.0).
    pub workspace: String,
}

/// The entity's lifecycle, its row locked until the transaction ends (a
/// concurrent store or deletion of it waits).
pub fn lock(user: &Uuid, entity_id: &str) -> Result<Option<Lifecycle>, NeotomaError> {
    // The lock first; then, in a statement of its own (a fresh snapshot, so
    // it sees what a session it waited for committed), the state.
    let locked = db::json(
        "SELECT to_jsonb(true) FROM neotoma.entities WHERE user_id = $1::uuid AND id = $2 FOR UPDATE",
        &[Arg::uuid(user), Arg::Text(entity_id)],
    )?;
    if locked.is_null() {
        return Ok(None);
    }
    let v = db::json(
        &crate::installed::adapt(
        "SELECT jsonb_build_object('id', e.id, 'entity_type', e.entity_type, 'merged_into', e.merged_into,
                   'deleted_at', neotoma._iso(e.deleted_at), 'deleted_reason', e.deleted_reason,
                   'last_mark', (SELECT o.id FROM neotoma.observations o
                                 WHERE o.user_id = e.user_id AND o.entity_id = e.id
                                   AND o.kind IN ('deletion', 'restoration')
                                 ORDER BY o.observed_at DESC
                                          , o.write_order DESC
                                          , o.id DESC LIMIT 1),
                   'workspace', coalesce(to_jsonb(e) -> 'workspace', '\"default\"'))
         FROM neotoma.entities e WHERE e.user_id = $1::uuid AND e.id = $2",
        )?,
        &[Arg::uuid(user), Arg::Text(entity_id)],
    )?;
    if v.is_null() {
        return Ok(None);
    }
    db::from_json(v, "entity").map(Some)
}

/// Records a deletion or restoration of `entity`; answers the observation's
/// id. The caller checked that it changes something.
pub fn mark(
    user: &Uuid,
    entity: &Lifecycle,
    mark: Mark,
    reason: Option<&str>,
) -> Result<Uuid, NeotomaError> {
    let user_s = user.to_string();
    let source = lifecycle_source(
        user,
        json!({ mark.kind(): {"entity_id": entity.id, "reason": reason} }),
    )?;
    // One id per step of the entity's lifecycle: the same step taken twice
    // (by two sessions at once) is one observation.
    let previous = entity.last_mark.clone().unwrap_or_default();
    let id = derived_uuid(mark.kind(), &[&user_s, &entity.id, &previous]);
    let version = registry::active(*user, std::slice::from_ref(&entity.entity_type))?
        .get(&entity.entity_type)
        .map(|a| a.schema.schema_version.clone())
        .unwrap_or_else(|| "1.0".into());
    let fields = match reason {
        Some(r) => json!({ "reason": r }),
        None => json!({}),
    };
    db::run(
        "INSERT INTO neotoma.observations (user_id, id, entity_id, entity_type, schema_version, source_id,
             kind, observed_at, fields)
         VALUES ($1::uuid, $2::uuid, $3, $4, $5, $6::uuid, $7, clock_timestamp(), $8)",
        &[
            Arg::uuid(user),
            Arg::uuid(id),
            Arg::Text(&entity.id),
            Arg::Text(&entity.entity_type),
            Arg::Text(&version),
            Arg::uuid(source),
            Arg::Text(mark.kind()),
            Arg::Json(&fields),
        ],
    )?;
    Ok(id)
}

/// The `lifecycle` source recording a step (content-addressed: the same
/// step with the same reason is one source).
fn lifecycle_source(user: &Uuid, content: Value) -> Result<Uuid, NeotomaError> {
    let content_hash = sha256_hex(canonical_json(&content).as_bytes());
    let source = source_id(user, &content_hash);
    // In the workspace written to (the entity's: writes refuse another).
    db::run(
        &crate::installed::adapt(
            "INSERT INTO neotoma.sources (user_id, id, content_hash, source_type, mime_type, content
                                         , workspace
                                         )
             VALUES ($1::uuid, $2::uuid, $3, 'lifecycle', 'application/json', $4
                     , $5
                     )
             ON CONFLICT DO NOTHING",
        )?,
        &[
            Arg::uuid(user),
            Arg::uuid(source),
            Arg::Text(&content_hash),
            Arg::Json(&content),
            Arg::Text(&crate::scope::current().write_workspace()),
        ],
    )?;
    Ok(source)
}

/// A relationship as deletion sees it, its row locked.
#[derive(Debug, Deserialize)]
pub struct RelationshipLifecycle {
    pub id: String,
    pub relationship_type: String,
    pub source_entity_id: String,
    pub target_entity_id: String,
    pub deleted_at: Option<String>,
    pub deleted_reason: Option<String>,
    /// The latest deletion or restoration observation.
    pub last_mark: Option<String>,
}

/// The relationship `id` (not merged away), its row locked until the
/// transaction ends.
pub fn lock_relationship(
    user: &Uuid,
    id: &str,
) -> Result<Option<RelationshipLifecycle>, NeotomaError> {
    let locked = db::json(
        "SELECT to_jsonb(true) FROM neotoma.relationships
         WHERE user_id = $1::uuid AND id = $2::uuid AND merged_into IS NULL FOR UPDATE",
        &[Arg::uuid(user), Arg::Text(id)],
    )?;
    if locked.is_null() {
        return Ok(None);
    }
    let v = db::json(
        "SELECT jsonb_build_object('id', r.id, 'relationship_type', r.relationship_type,
                   'source_entity_id', r.source_entity_id, 'target_entity_id', r.target_entity_id,
                   'deleted_at', neotoma._iso(r.deleted_at), 'deleted_reason', r.deleted_reason,
                   'last_mark', (SELECT o.id FROM neotoma.relationship_observations o
                                 WHERE o.user_id = r.user_id AND o.relationship_id = r.id
                                   AND o.kind IN ('deletion', 'restoration')
                                 ORDER BY o.observed_at DESC, o.id DESC LIMIT 1))
         FROM neotoma.relationships r WHERE r.user_id = $1::uuid AND r.id = $2::uuid",
        &[Arg::uuid(user), Arg::Text(id)],
    )?;
    if v.is_null() {
        return Ok(None);
    }
    db::from_json(v, "relationship").map(Some)
}

/// Records a deletion or restoration of relationship `r` and sets its
/// deleted_at / deleted_reason; answers the observation's id.
pub fn mark_relationship(
    user: &Uuid,
    r: &RelationshipLifecycle,
    mark: Mark,
    reason: Option<&str>,
) -> Result<Uuid, NeotomaError> {
    let user_s = user.to_string();
    let source = lifecycle_source(
        user,
        json!({ mark.kind(): {"relationship_id": r.id, "reason": reason} }),
    )?;
    let previous = r.last_mark.clone().unwrap_or_default();
    let id = derived_uuid(
        &format!("relationship_{}", mark.kind()),
        &[&user_s, &r.id, &previous],
    );
    let metadata = match reason {
        Some(r) => json!({ "reason": r }),
        None => json!({}),
    };
    db::run(
        "WITH ins AS (
           INSERT INTO neotoma.relationship_observations (user_id, id, relationship_id, source_id,
               observed_at, kind, metadata)
           VALUES ($1::uuid, $2::uuid, $3::uuid, $4::uuid, clock_timestamp(), $5, $6)
           RETURNING observed_at)
         UPDATE neotoma.relationships
         SET deleted_at = CASE WHEN $5 = 'deletion' THEN (SELECT observed_at FROM ins) END,
             deleted_reason = CASE WHEN $5 = 'deletion' THEN $6->>'reason' END
         WHERE user_id = $1::uuid AND id = $3::uuid",
        &[
            Arg::uuid(user),
            Arg::uuid(id),
            Arg::Text(&r.id),
            Arg::uuid(source),
            Arg::Text(mark.kind()),
            Arg::Json(&metadata),
        ],
    )?;
    Ok(id)
}

/// Deletes `entity_id` of `user` unless it is deleted already (a bank
/// feed's removal); answers whether it did.
pub fn delete_if_live(user: &Uuid, entity_id: &str, reason: &str) -> Result<bool, NeotomaError> {
    match lock(user, entity_id)? {
        Some(e) if e.deleted_at.is_none() && e.merged_into.is_none() => {
            mark(user, &e, Mark::Deletion, Some(reason))?;
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// The rows whose deleted_at / deleted_reason follow their latest deletion
/// or restoration observation: entities (from 0.6.0), relationships (0.7.0).
#[derive(Debug, Clone, Copy)]
pub enum Marked {
    Entities,
    Relationships,
}

impl Marked {
    fn table(self) -> &'static str {
        match self {
            Marked::Entities => "neotoma.entities",
            Marked::Relationships => "neotoma.relationships",
        }
    }

    /// How a mismatch names the row.
    fn key(self) -> &'static str {
        match self {
            Marked::Entities => "entity_id",
            Marked::Relationships => "relationship_id",
        }
    }

    /// The ids argument ($2), of the id column's type (text or uuid).
    fn ids(self, ids: &[String]) -> Arg<'static> {
        match self {
            Marked::Entities => Arg::Texts(ids.to_vec()),
            Marked::Relationships => Arg::uuid_texts(ids),
        }
    }

    /// What the latest deletion or restoration of row `t` says (`l`).
    fn latest_step(self) -> &'static str {
        match self {
            Marked::Entities => {
                "LEFT JOIN LATERAL (SELECT CASE WHEN o.kind = 'deletion' THEN o.observed_at END AS deleted_at,
                                          CASE WHEN o.kind = 'deletion' THEN o.fields->>'reason' END AS reason
                                   FROM neotoma.observations o
                                   WHERE o.user_id = t.user_id AND o.entity_id = t.id
                                     AND o.kind IN ('deletion', 'restoration')
                                   ORDER BY o.observed_at DESC
                                            , o.write_order DESC
                                            , o.id DESC LIMIT 1) l ON true"
            }
            Marked::Relationships => {
                "LEFT JOIN LATERAL (SELECT CASE WHEN o.kind = 'deletion' THEN o.observed_at END AS deleted_at,
                                          CASE WHEN o.kind = 'deletion' THEN o.metadata->>'reason' END AS reason
                                   FROM neotoma.relationship_observations o
                                   WHERE o.user_id = t.user_id AND o.relationship_id = t.id
                                     AND o.kind IN ('deletion', 'restoration')
                                   ORDER BY o.observed_at DESC, o.id DESC LIMIT 1) l ON true"
            }
        }
    }
}

/// Rows whose deleted_at / deleted_reason disagree with their latest
/// deletion or restoration observation (verify()).
pub fn mismatches(marked: Marked) -> Result<Vec<Value>, NeotomaError> {
    let v = db::json(
        &crate::installed::adapt(&format!(
            "SELECT coalesce(jsonb_agg(jsonb_build_object('user_id', t.user_id, '{key}', t.id,
                   'what', 'deleted_at', 'expected', l.deleted_at, 'stored', t.deleted_at)), '[]')
             FROM {table} t {latest}
             WHERE t.deleted_at IS DISTINCT FROM l.deleted_at OR t.deleted_reason IS DISTINCT FROM l.reason",
            key = marked.key(),
            table = marked.table(),
            latest = marked.latest_step(),
        ))?,
        &[],
    )?;
    db::from_json(v, "lifecycle mismatches")
}

/// Sets deleted_at / deleted_reason from the observations again: of every
/// row (verify(repair)), or of these rows of a user (after an erasure
/// removed some of their observations).
pub fn repair(marked: Marked, only: Option<(&Uuid, &[String])>) -> Result<(), NeotomaError> {
    let scope = match only {
        Some(_) => "AND t.user_id = $1::uuid AND t.id = ANY($2)".to_string(),
        None => String::new(),
    };
    let sql = format!(
        "UPDATE {table} x SET deleted_at = l.deleted_at, deleted_reason = l.reason
         FROM {table} t {latest}
         WHERE x.user_id = t.user_id AND x.id = t.id {scope}
           AND (t.deleted_at IS DISTINCT FROM l.deleted_at OR t.deleted_reason IS DISTINCT FROM l.reason)",
        table = marked.table(),
        latest = marked.latest_step(),
    );
    let sql = crate::installed::adapt(&sql)?;
    match only {
        Some((user, ids)) => db::run(&sql, &[Arg::uuid(user), marked.ids(ids)]),
        None => db::run(&sql, &[]),
    }
}

/// When the entity (or the entity it was merged into) was deleted, if it
/// is; never on a database before 0.6.0.
pub fn deleted_at(user: &Uuid, entity_id: &str) -> Result<Option<String>, NeotomaError> {
    Ok(deletion(user, entity_id)?.map(|d| d.at))
}

/// When and why an entity (or the entity it was merged into) was deleted.
#[derive(serde::Deserialize)]
pub struct Deletion {
    pub at: String,
    pub reason: Option<String>,
}

/// The deletion of an entity, or of the entity it was merged into: None
/// while it is live. Two lookups by key (the lateral read keeps Postgres
/// from joining the user's every entity, which row level security made it
/// do).
pub fn deletion(user: &Uuid, entity_id: &str) -> Result<Option<Deletion>, NeotomaError> {
    let found: Option<Deletion> = db::parsed(
        "SELECT json_build_object('at', neotoma._iso(t.deleted_at), 'reason', t.deleted_reason)::text
         FROM neotoma.entities e
         CROSS JOIN LATERAL (SELECT x.deleted_at, x.deleted_reason FROM neotoma.entities x
                             -- (CASE, not coalesce, which row level security
                             -- keeps from the index: a scan of the user's entities.)
                             WHERE x.user_id = $1::uuid
                               AND x.id = CASE WHEN e.merged_into IS NULL THEN e.id ELSE e.merged_into END
                             OFFSET 0) t
         WHERE e.user_id = $1::uuid AND e.id = $2 AND t.deleted_at IS NOT NULL",
        &[Arg::uuid(user), Arg::Text(entity_id)],
        "deletion",
    )?;
    Ok(found)
}

/// The error for a request about a deleted entity.
pub fn deleted_error(entity_id: &str, deleted_at: &str) -> NeotomaError {
    NeotomaError::new(
        ErrorCode::EntityNotFound,
        format!(
            "entity {entity_id} is deleted (restore_entity brings it back; include_deleted shows it)"
        ),
    )
    .with("entity_id", entity_id)
    .with("deleted_at", deleted_at)
}
