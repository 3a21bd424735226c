//! `delete_entity` and `restore_entity` (see `crate::lifecycle`).

use crate::lifecycle::{self, Lifecycle, Mark};
use neotoma_core::actions::common;
use neotoma_core::actions::lifecycle::*;
use neotoma_core::{ErrorCode, NeotomaError};
use uuid::Uuid;

fn reason(r: Option<&str>) -> Result<Option<&str>, NeotomaError> {
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
