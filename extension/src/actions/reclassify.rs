//! `reclassify`: an entity moved to another type by merging it into the
//! entity of that type its snapshot identifies (see actions::merge), so
//! nothing of its history changes and its id redirects.

use super::entities::resolve_live_entity;
use super::merge::merge_into;
use crate::db::{self, Arg};
use crate::registry;
use neotoma_core::actions::common;
use neotoma_core::actions::reclassify::{check_reason, ReclassifyRequest, ReclassifyResponse};
use neotoma_core::identity;
use neotoma_core::schema::check_name;
use neotoma_core::{ErrorCode, NeotomaError};
use serde_json::{Map, Value};
use uuid::Uuid;

pub fn reclassify(user: Uuid, req: ReclassifyRequest) -> Result<ReclassifyResponse, NeotomaError> {
    let asked = common::entity_id("entity_id", &req.entity_id)?;
    check_name("new_entity_type", &req.new_entity_type)?;
    let reason = check_reason(&req.reason)?.to_string();
    // All or nothing, also through `_invoke` (which answers errors instead
    // of raising them): the new entity goes if the merge fails.
    db::all_or_nothing(|| reclassify_locked(user, &asked, &req.new_entity_type, &reason))
}

fn reclassify_locked(
    user: Uuid,
    asked: &str,
    new_entity_type: &str,
    reason: &str,
) -> Result<ReclassifyResponse, NeotomaError> {
    // First the user's merge lock, as a merge takes it (every fold of this
    // user in progress ends first, none starts): what is read below stays
    // as read until the merge is done.
    crate::snapshots::lock_user(&user.to_string(), true)?;
    let (from, _) = resolve_live_entity(&user, asked)?;
    if from.entity_type == new_entity_type {
        return Err(NeotomaError::invalid_field(
            "new_entity_type",
            format!("{} is a {} already", from.id, from.entity_type),
        ));
    }
    let schemas = registry::active(user, &[new_entity_type.to_string()])?;
    let Some(schema) = schemas.get(new_entity_type).map(|a| &*a.schema) else {
        return Err(NeotomaError::new(
            ErrorCode::SchemaNotFound,
            format!(
                "`{}` has no active schema: register_schema it first (list_entity_types lists the types)",
                new_entity_type
            ),
        )
        .with("field", "new_entity_type"));
    };
    // Who it is under the new type's rules: its current values of the new
    // type's fields, as a store of them would resolve it.
    let snapshot: Map<String, Value> = db::from_json(
        db::json(
            "SELECT coalesce((SELECT snapshot FROM neotoma.entity_snapshots
                              WHERE user_id = $1::uuid AND entity_id = $2), '{}')",
            &[Arg::uuid(user), Arg::Text(&from.id)],
        )?,
        "snapshot",
    )?;
    // Its values that fit the new type's fields, as a store would keep them.
    let fields: Map<String, Value> = snapshot
        .into_iter()
        .filter(|(k, v)| {
            schema
                .fields
                .get(k)
                .is_some_and(|d| d.field_type.accepts(v))
        })
        .collect();
    crate::ingest::prepare::check_identity_lengths(0, schema, &fields)
        .map_err(|e| e.with("field", "new_entity_type"))?;
    // Within from's workspace.
    let mut target = identity::resolve_in(&user, &from.workspace, schema, &fields);
    // No identity rule of the new type holds: the content would identify
    // it, and entities with the same (or no) content would all become one.
    // It is then its own entity of the new type, keyed by where it came from.
    if target.by_content() {
        let key = format!("reclassified={}", from.id);
        target = identity::Identity {
            entity_id: neotoma_core::ids::entity_id_in(
                &user,
                &from.workspace,
                &schema.entity_type,
                &key,
            ),
            identity_key: key,
            canonical_name: from.canonical_name.clone(),
        };
    }
    let created = db::inserted(
        &crate::installed::adapt(
            "INSERT INTO neotoma.entities (user_id, id, entity_type, canonical_name, identity_key
                                          , workspace
                                          )
             VALUES ($1::uuid, $2, $3, $4, $5
                     , $6
                     ) ON CONFLICT (user_id, id) DO NOTHING",
        )?,
        &[
            Arg::uuid(user),
            Arg::Text(&target.entity_id),
            Arg::Text(&schema.entity_type),
            Arg::Text(&target.canonical_name),
            Arg::Text(&target.identity_key),
            Arg::Text(&from.workspace),
        ],
    )?;
    // An entity of the new type with that identity may exist, merged into
    // another (then that one), or deleted (then it is refused: restore it
    // first).
    let (to, _) = resolve_live_entity(&user, &target.entity_id)
        .map_err(|e| e.with("field", "new_entity_type"))?;
    if to.id == from.id || to.entity_type != schema.entity_type {
        // The entity it would become was itself reclassified, into this one
        // or on to a third type: its merge would point back at itself.
        return Err(NeotomaError::invalid_field(
            "new_entity_type",
            format!(
                "the {} {} would become ({}) was reclassified into {} (a {}): reclassifying back is not supported",
                schema.entity_type, from.id, target.entity_id, to.id, to.entity_type
            ),
        )
        .with("reclassified_entity_id", target.entity_id.clone()));
    }
    let merged = merge_into(
        &user,
        &from.id,
        &to.id,
        Some(&format!("reclassified as {}: {reason}", schema.entity_type)),
        true,
    )?;
    Ok(ReclassifyResponse {
        entity_id: to.id,
        entity_type: to.entity_type,
        previous_entity_id: from.id,
        previous_entity_type: from.entity_type,
        joined_existing: !created,
        observations_moved: merged.observations_moved,
        relationships_moved: merged.relationships_moved,
        reason: reason.to_string(),
        reclassified_at: merged.merged_at,
    })
}
