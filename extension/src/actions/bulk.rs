//! `bulk` and `create_relationships`: several writes in the one transaction
//! of the call. Each operation runs through the same handler as the action
//! alone (its validation, tenancy and audit); the first that fails ends the
//! call with an error naming it, and what the earlier ones wrote is undone
//! (a subtransaction, rolled back; the action's SQL function then raises).

use super::relationships;
use crate::db;
use neotoma_core::actions::bulk::{
    self, BulkRequest, BulkResponse, BulkResult, CreateRelationshipsRequest,
    CreateRelationshipsResponse, BULK_ACTIONS,
};
use neotoma_core::catalog;
use neotoma_core::NeotomaError;
use serde_json::json;
use std::collections::HashMap;
use uuid::Uuid;

pub fn bulk(_user: Uuid, req: BulkRequest) -> Result<BulkResponse, NeotomaError> {
    let total = req.operations.len();
    bulk::check_count("operations", total)?;
    db::all_or_nothing(|| run_operations(req, total))
}

fn run_operations(req: BulkRequest, total: usize) -> Result<BulkResponse, NeotomaError> {
    let req_workspace = req.workspace.clone();
    let mut refs: HashMap<String, String> = HashMap::new();
    let mut results = Vec::with_capacity(total);
    for (index, mut op) in req.operations.into_iter().enumerate() {
        let failed = |e: NeotomaError| {
            let mut e = e
                .with("operation", index + 1)
                .with("operation_index", index);
            e.message = format!(
                "operation {} of {total} ({}) failed, so none was kept: {}",
                index + 1,
                op.action,
                e.message
            );
            e
        };
        let id = catalog::resolve(&op.action)
            .filter(|id| BULK_ACTIONS.contains(&id.name()))
            .ok_or_else(|| {
                failed(NeotomaError::invalid_field(
                    "action",
                    format!("a bulk operation runs one of {}", BULK_ACTIONS.join(", ")),
                ))
            })?;
        if let Some(name) = &op.reference {
            if !bulk::is_ref_name(name) {
                return Err(failed(NeotomaError::invalid_field(
                    "ref",
                    "a ref is 1 to 64 letters, digits, `_` or `-`",
                )));
            }
            if refs.contains_key(name) {
                return Err(failed(NeotomaError::invalid_field(
                    "ref",
                    format!("the ref `{name}` names an earlier operation already"),
                )));
            }
        }
        let mut args = op.args.take().unwrap_or_else(|| json!({}));
        if !args.is_object() {
            return Err(failed(NeotomaError::invalid_field(
                "args",
                "args must be an object: the action's arguments",
            )));
        }
        // A file's interpretation may be left to the gateway's model, which
        // completes only a top-level store's: files go in their own call.
        if id.name() == "store"
            && (args.get("file_content").is_some() || args.get("file_path").is_some())
        {
            return Err(failed(NeotomaError::invalid_field(
                "args",
                "a bulk store takes structured entities; store a file in its own call",
            )));
        }
        bulk::substitute_refs(&mut args, &refs)
            .map_err(|m| failed(NeotomaError::invalid_field("args", m)))?;
        // The call's workspace, unless the operation names its own.
        if let (Some(w), Some(map)) = (&req_workspace, args.as_object_mut()) {
            map.entry("workspace").or_insert_with(|| json!(w));
        }
        let answer = super::call(id, args).map_err(failed)?;
        let entity_id = bulk::yielded_entity(id.name(), &answer);
        if let Some(name) = &op.reference {
            let Some(entity) = &entity_id else {
                return Err(failed(NeotomaError::invalid_field(
                    "ref",
                    format!("{} yields no entity for a ref to name", op.action),
                )));
            };
            refs.insert(name.clone(), entity.clone());
        }
        results.push(BulkResult {
            index,
            action: op.action,
            reference: op.reference,
            entity_id,
            result: answer,
        });
    }
    Ok(BulkResponse {
        results,
        operations: total,
    })
}

pub fn create_relationships(
    _user: Uuid,
    req: CreateRelationshipsRequest,
) -> Result<CreateRelationshipsResponse, NeotomaError> {
    let total = req.relationships.len();
    bulk::check_count("relationships", total)?;
    db::all_or_nothing(|| create_all(req, total))
}

fn create_all(
    req: CreateRelationshipsRequest,
    total: usize,
) -> Result<CreateRelationshipsResponse, NeotomaError> {
    let mut created = Vec::with_capacity(total);
    for (index, r) in req.relationships.into_iter().enumerate() {
        // A relationship naming a user is checked as an action naming one
        // is (the session's user, or FORBIDDEN).
        let named = r.user_id.clone();
        let out = crate::tenancy::with_user(named.as_deref(), |user| {
            // Its own workspace, else the call's.
            let own = match &r.workspace {
                Some(_) => crate::scope::establish(
                    Some(&user),
                    neotoma_core::workspace::Requested::Write(r.workspace.as_ref()),
                )?,
                None => None,
            };
            crate::scope::within(own, || relationships::create_relationship(user, r))
        })
        .map_err(|e| {
            let mut e = e.with("relationship", index + 1);
            e.message = format!(
                "relationship {} of {total} failed, so none was created: {}",
                index + 1,
                e.message
            );
            e
        })?;
        created.push(out);
    }
    Ok(CreateRelationshipsResponse {
        count: created.len(),
        relationships: created,
    })
}
