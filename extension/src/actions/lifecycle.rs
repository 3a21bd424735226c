//! `delete_entity`, `restore_entity`, `delete_relationship` and
//! `restore_relationship` (see `crate::lifecycle`).

use crate::actions::entities::resolve_entity;
use crate::lifecycle::{self, Lifecycle, Mark, RelationshipLifecycle};
use neotoma_core::actions::common;
use neotoma_core::actions::lifecycle::*;
use neotoma_core::graph::RelationshipType;
use neotoma_core::ids::relationship_id;
use neotoma_core::{ErrorCode, NeotomaError};
use uuid::Uuid;

/// A reason as kept: trimmed, empty as none, at most [`MAX_REASON_CHARS`].
pub(super) fn reason(r: Option<&str>) -> Result<Option<&str>, NeotomaError> {
    match r.map(str::trim) {
        Some("") | None => Ok(None),
        Some(r) if r.chars().count() > MAX_REASON_CHARS => Err(NeotomaError::invalid_field(
            "reason",
            format!("reason must be at most {MAX_REASON_CHARS} characters"),
        )),
        Some(r) => Ok(Some(r)),
    }
}

/// The entity to delete or restore, its row locked.
fn entity(user: &Uuid, entity_id: &str) -> Result<Lifecycle, NeotomaError> {
    let id = common::entity_id("entity_id", entity_id)?;
    let e = lifecycle::lock(user, &id)?.ok_or_else(|| {
        NeotomaError::new(
            ErrorCode::EntityNotFound,
            format!("no entity {id} (for this user)"),
        )
        .with("entity_id", id.as_str())
    })?;
    crate::scope::current().check_entity(&id, &e.workspace)?;
    if let Some(target) = &e.merged_into {
        return Err(NeotomaError::new(
            ErrorCode::EntityAlreadyMerged,
            format!("{id} was merged into {target}: delete or restore that entity"),
        )
        .with("merged_into", target.as_str()));
    }
    Ok(e)
}

fn answer(user: &Uuid, id: &str, observation: Uuid) -> Result<LifecycleResponse, NeotomaError> {
    let e = lifecycle::lock(user, id)?
        .ok_or_else(|| NeotomaError::new(ErrorCode::EntityNotFound, "the entity went away"))?;
    Ok(LifecycleResponse {
        entity_id: e.id,
        entity_type: e.entity_type,
        deleted: e.deleted_at.is_some(),
        deleted_at: e.deleted_at,
        reason: e.deleted_reason,
        observation_id: observation.to_string(),
    })
}

pub fn delete_entity(
    user: Uuid,
    req: DeleteEntityRequest,
) -> Result<LifecycleResponse, NeotomaError> {
    let why = reason(req.reason.as_deref())?;
    let e = entity(&user, &req.entity_id)?;
    if let Some(at) = &e.deleted_at {
        return Err(NeotomaError::validation(format!(
            "{} is already deleted (restore_entity brings it back)",
            e.id
        ))
        .with("field", "entity_id")
        .with("deleted_at", at.as_str()));
    }
    let observation = lifecycle::mark(&user, &e, Mark::Deletion, why)?;
    answer(&user, &e.id, observation)
}

pub fn restore_entity(
    user: Uuid,
    req: RestoreEntityRequest,
) -> Result<LifecycleResponse, NeotomaError> {
    let why = reason(req.reason.as_deref())?;
    let e = entity(&user, &req.entity_id)?;
    if e.deleted_at.is_none() {
        return Err(
            NeotomaError::validation(format!("{} is not deleted", e.id)).with("field", "entity_id")
        );
    }
    let observation = lifecycle::mark(&user, &e, Mark::Restoration, why)?;
    let mut out = answer(&user, &e.id, observation)?;
    out.reason = why.map(str::to_string);
    Ok(out)
}

/// The relationship named by type and ends (each end followed through a
/// merge, as the relationship was), its row locked.
fn relationship(
    user: &Uuid,
    rtype: &str,
    source: &str,
    target: &str,
) -> Result<RelationshipLifecycle, NeotomaError> {
    let rtype = RelationshipType::parse("relationship_type", rtype)?;
    let source = common::entity_id("source_entity_id", source)?;
    let target = common::entity_id("target_entity_id", target)?;
    // A merge re-keys relationships under the user's lock: not meanwhile.
    crate::snapshots::lock_user(&user.to_string(), false)?;
    let (s, _) = resolve_entity(user, &source)?;
    let (t, _) = resolve_entity(user, &target)?;
    let id = relationship_id(user, rtype.as_str(), &s.id, &t.id).to_string();
    lifecycle::lock_relationship(user, &id)?.ok_or_else(|| {
        NeotomaError::new(
            ErrorCode::NotFound,
            format!(
                "no {} relationship from {} to {}",
                rtype.as_str(),
                s.id,
                t.id
            ),
        )
        .with("relationship_type", rtype.as_str())
        .with("source_entity_id", s.id.as_str())
        .with("target_entity_id", t.id.as_str())
    })
}

fn relationship_answer(
    user: &Uuid,
    id: &str,
    observation: Uuid,
) -> Result<RelationshipLifecycleResponse, NeotomaError> {
    let r = lifecycle::lock_relationship(user, id)?
        .ok_or_else(|| NeotomaError::new(ErrorCode::NotFound, "the relationship went away"))?;
    Ok(RelationshipLifecycleResponse {
        relationship_id: r.id,
        relationship_type: r.relationship_type,
        source_entity_id: r.source_entity_id,
        target_entity_id: r.target_entity_id,
        deleted: r.deleted_at.is_some(),
        deleted_at: r.deleted_at,
        reason: r.deleted_reason,
        observation_id: observation.to_string(),
    })
}

pub fn delete_relationship(
    user: Uuid,
    req: DeleteRelationshipRequest,
) -> Result<RelationshipLifecycleResponse, NeotomaError> {
    let why = reason(req.reason.as_deref())?;
    let r = relationship(
        &user,
        &req.relationship_type,
        &req.source_entity_id,
        &req.target_entity_id,
    )?;
    if let Some(at) = &r.deleted_at {
        return Err(NeotomaError::validation(format!(
            "the relationship {} is already deleted (restore_relationship brings it back)",
            r.id
        ))
        .with("relationship_id", r.id.as_str())
        .with("deleted_at", at.as_str()));
    }
    let observation = lifecycle::mark_relationship(&user, &r, Mark::Deletion, why)?;
    relationship_answer(&user, &r.id, observation)
}

pub fn restore_relationship(
    user: Uuid,
    req: RestoreRelationshipRequest,
) -> Result<RelationshipLifecycleResponse, NeotomaError> {
    let why = reason(req.reason.as_deref())?;
    let r = relationship(
        &user,
        &req.relationship_type,
        &req.source_entity_id,
        &req.target_entity_id,
    )?;
    if r.deleted_at.is_none() {
        return Err(
            NeotomaError::validation(format!("the relationship {} is not deleted", r.id))
                .with("relationship_id", r.id.as_str()),
        );
    }
    let observation = lifecycle::mark_relationship(&user, &r, Mark::Restoration, why)?;
    let mut out = relationship_answer(&user, &r.id, observation)?;
    out.reason = why.map(str::to_string);
    Ok(out)
}

/// `erase`: removes an entity or a source for good (see `crate::erasure`),
/// leaving an audit row of counts.
pub fn erase(user: Uuid, req: EraseRequest) -> Result<EraseResponse, NeotomaError> {
    let why = reason(req.reason.as_deref())?;
    if req.confirm != Some(true) {
        return Err(NeotomaError::invalid_field(
            "confirm",
            "erase removes content for good and cannot be undone: pass confirm: true",
        ));
    }
    let user_s = user.to_string();
    // No fold or merge of this user runs meanwhile (they wait, as for a merge).
    crate::snapshots::lock_user(&user_s, true)?;
    let (kind, counts) = match (req.entity_id.as_deref(), req.source_id.as_deref()) {
        (Some(entity), None) => {
            let id = common::entity_id("entity_id", entity)?;
            let e = crate::actions::entities::find_entity(&user, &id)?.ok_or_else(|| {
                NeotomaError::new(
                    ErrorCode::EntityNotFound,
                    format!("no entity {id} (for this user)"),
                )
                .with("entity_id", id.as_str())
            })?;
            crate::scope::current().check_entity(&id, &e.workspace)?;
            let counts = super::erasure::while_erasing(|| {
                super::erasure::erase_entities(&user, std::slice::from_ref(&e.id))
            })?;
            ("entity", counts)
        }
        (None, Some(source)) => {
            let id = common::uuid("source_id", source)?;
            let found = crate::db::json(
                "SELECT jsonb_build_object('workspace', coalesce(to_jsonb(s) -> 'workspace', '\"default\"'))
                 FROM neotoma.sources s WHERE s.user_id = $1::uuid AND s.id = $2::uuid",
                &[crate::db::Arg::uuid(user), crate::db::Arg::uuid(id)],
            )?;
            if found.is_null() {
                return Err(NeotomaError::new(
                    ErrorCode::SourceNotFound,
                    format!("no source {id} (for this user)"),
                )
                .with("source_id", id.to_string()));
            }
            crate::scope::current().check(
                "source",
                ErrorCode::SourceNotFound,
                &id.to_string(),
                found["workspace"].as_str().unwrap_or_default(),
            )?;
            let counts =
                super::erasure::while_erasing(|| super::erasure::erase_source(&user, &id))?;
            ("source", counts)
        }
        _ => {
            return Err(NeotomaError::validation(
                "give exactly one of entity_id and source_id",
            ))
        }
    };
    let (erasure_id, erased_at) = super::erasure::audit(&user, kind, why, &counts)?;
    Ok(EraseResponse {
        erased: kind.to_string(),
        erasure_id,
        erased_at,
        counts,
    })
}

pub fn list_recent_changes(
    user: Uuid,
    req: ListRecentChangesRequest,
) -> Result<ListRecentChangesResponse, NeotomaError> {
    let (limit, _) = common::page(req.limit, None)?;
    if let Some(t) = &req.entity_type {
        neotoma_core::schema::check_name("entity_type", t)?;
    }
    let after = match req.since.as_deref() {
        None => ChangeCursor { xid: 0, seq: 0 },
        Some(text) => ChangeCursor::decode(text).ok_or_else(|| {
            NeotomaError::invalid_field(
                "since",
                "since must be a next_cursor (or a change's cursor) from list_recent_changes",
            )
        })?,
    };
    #[derive(serde::Deserialize)]
    struct Row {
        xid: String,
        seq: i64,
        kind: String,
        operation: String,
        entity_id: Option<String>,
        entity_type: Option<String>,
        relationship_id: Option<String>,
        relationship_type: Option<String>,
        source_entity_id: Option<String>,
        target_entity_id: Option<String>,
        source_id: Option<String>,
        changed_at: String,
    }
    // Changes of what lies outside the action's workspaces are left out;
    // those of schemas and erasures (the user's, not a workspace's) stay,
    // but for a token limited to some workspaces (an erasure elsewhere is
    // not its to hear of).
    let scope = crate::scope::current();
    let rows: Vec<Row> = crate::db::parsed(
        &scope.adapt("SELECT coalesce(jsonb_agg(jsonb_build_object('xid', c.xid::text, 'seq', c.seq, 'kind', c.kind,
                   'operation', c.operation, 'entity_id', c.entity_id, 'entity_type', c.entity_type,
                   'relationship_id', c.relationship_id, 'relationship_type', r.relationship_type,
                   'source_entity_id', r.source_entity_id, 'target_entity_id', r.target_entity_id,
                   'source_id', c.source_id,
                   'changed_at', neotoma._iso(c.changed_at)) ORDER BY c.xid, c.seq), '[]')::text
         FROM (SELECT * FROM neotoma.changes c
               WHERE c.user_id = $1::uuid AND (c.xid, c.seq) > ($2::text::xid8, $3::bigint)
                 -- Settled: every transaction below the snapshot's xmin has ended.
                 AND c.xid < pg_snapshot_xmin(pg_current_snapshot())
                 AND ($4::text IS NULL OR c.entity_type = $4)
                 AND CASE c.kind -- ws:some
                   WHEN 'entity' THEN EXISTS (SELECT FROM neotoma.entities e WHERE e.user_id = $1::uuid -- ws:some
                     AND e.id = c.entity_id AND e.workspace = ANY($6::text[])) -- ws:some
                   WHEN 'source' THEN EXISTS (SELECT FROM neotoma.sources s WHERE s.user_id = $1::uuid -- ws:some
                     AND s.id = c.source_id AND s.workspace = ANY($6::text[])) -- ws:some
                   WHEN 'relationship' THEN EXISTS (SELECT FROM neotoma.relationships x -- ws:some
                     JOIN neotoma.entities e ON e.user_id = x.user_id AND e.id = x.source_entity_id -- ws:some
                     WHERE x.user_id = $1::uuid AND x.id = c.relationship_id AND e.workspace = ANY($6::text[])) -- ws:some
                   ELSE NOT $7 END -- ws:some
               ORDER BY c.xid, c.seq LIMIT $5 + 1) c
         LEFT JOIN neotoma.relationships r ON r.user_id = $1::uuid AND r.id = c.relationship_id")?,
        &[
            crate::db::Arg::uuid(user),
            crate::db::Arg::Text(&after.xid.to_string()),
            crate::db::Arg::Int(after.seq),
            crate::db::Arg::OptText(req.entity_type.as_deref()),
            crate::db::Arg::Int(limit),
            scope.arg(),
            crate::db::Arg::Bool(scope.limited()),
        ],
        "changes",
    )?;
    let has_more = rows.len() as i64 > limit;
    let mut last = after;
    let changes = rows
        .into_iter()
        .take(limit as usize)
        .map(|r| {
            let cursor = ChangeCursor {
                xid: r.xid.parse().unwrap_or(0),
                seq: r.seq,
            };
            last = cursor;
            ChangeOut {
                cursor: cursor.encode(),
                kind: r.kind,
                operation: r.operation,
                entity_id: r.entity_id,
                entity_type: r.entity_type,
                relationship_id: r.relationship_id,
                relationship_type: r.relationship_type,
                source_entity_id: r.source_entity_id,
                target_entity_id: r.target_entity_id,
                source_id: r.source_id,
                changed_at: r.changed_at,
            }
        })
        .collect();
    // Filtered and read to the end: past the rows it passed over too, so
    // the next poll does not scan them again. (Not for a token limited to
    // some workspaces: its cursor moving would tell of changes elsewhere.)
    if (req.entity_type.is_some() || !scope.covers_all()) && !has_more && !scope.limited() {
        let v = crate::db::json(
            "SELECT jsonb_build_object('xid', c.xid::text, 'seq', c.seq) FROM neotoma.changes c
             WHERE c.user_id = $1::uuid AND (c.xid, c.seq) > ($2::text::xid8, $3::bigint)
               AND c.xid < pg_snapshot_xmin(pg_current_snapshot())
             ORDER BY c.xid DESC, c.seq DESC LIMIT 1",
            &[
                crate::db::Arg::uuid(user),
                crate::db::Arg::Text(&last.xid.to_string()),
                crate::db::Arg::Int(last.seq),
            ],
        )?;
        if let (Some(xid), Some(seq)) = (
            v["xid"].as_str().and_then(|x| x.parse().ok()),
            v["seq"].as_i64(),
        ) {
            last = ChangeCursor { xid, seq };
        }
    }
    Ok(ListRecentChangesResponse {
        changes,
        next_cursor: Some(last.encode()),
        has_more,
    })
}
