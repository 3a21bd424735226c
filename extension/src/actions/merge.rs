//! Merging a duplicate entity into another: its observations,
//! relationships and events count for the target from then on.

use crate::actions::entities::{find_entity, EntityRow};
use crate::actions::relationships::{
    apply_to_relationship, find_path, lock_type, relationship_observations, undeleted_edges,
    Direction,
};
use crate::db::{self, Arg};
use crate::snapshots;
use neotoma_core::actions::common;
use neotoma_core::actions::merge::*;
use neotoma_core::graph::RelationshipType;
use neotoma_core::ids::{derived_uuid, relationship_id};
use neotoma_core::{ErrorCode, NeotomaError};
use std::collections::BTreeMap;
use uuid::Uuid;

pub fn merge_entities(
    user: Uuid,
    req: MergeEntitiesRequest,
) -> Result<MergeEntitiesResponse, NeotomaError> {
    let from = common::entity_id("from_entity_id", &req.from_entity_id)?;
    let to = common::entity_id("to_entity_id", &req.to_entity_id)?;
    if from == to {
        return Err(NeotomaError::invalid_field(
            "to_entity_id",
            "an entity cannot be merged into itself",
        ));
    }
    if req.merge_reason.as_ref().is_some_and(|r| r.len() > 2000) {
        return Err(NeotomaError::invalid_field(
            "merge_reason",
            "merge_reason is longer than 2000 characters",
        ));
    }
    // Deleted entities are merged after a restore: a merge would bring a
    // deleted one back inside the other, or hide a live one.
    for id in [&from, &to] {
        super::entities::hide_beyond_limit(&user, id, || {
            crate::scope::absent(ErrorCode::EntityNotFound, "entity", id)
        })?;
        if let Some(at) = crate::lifecycle::deleted_at(&user, id)? {
            return Err(crate::lifecycle::deleted_error(id, &at));
        }
    }
    merge_into(&user, &from, &to, req.merge_reason.as_deref(), false)
}

fn merged_already(e: &EntityRow, field: &str) -> Option<NeotomaError> {
    e.merged_into.as_ref().map(|into| {
        NeotomaError::new(
            ErrorCode::EntityAlreadyMerged,
            format!("{} was already merged into {into}", e.id),
        )
        .with("field", field)
        .with("entity_id", e.id.clone())
        .with("merged_into", into.clone())
    })
}

/// Merges `from` into `to`; with `retype` (reclassify) `to` may be of
/// another type, whose schema then folds `from`'s observations.
pub(super) fn merge_into(
    user: &Uuid,
    from: &str,
    to: &str,
    reason: Option<&str>,
    retype: bool,
) -> Result<MergeEntitiesResponse, NeotomaError> {
    let user_s = user.to_string();
    // Merges of this user's entities wait for every fold in progress (and
    // folds for the merge); then locks in the order every writer uses: the
    // entity type (shared), then the entities by id. NO KEY UPDATE, like the
    // snapshot trigger: a FOR UPDATE would also wait for the key-share locks
    // of a concurrent store's foreign keys, taken in its input order, and
    // could deadlock with it. See snapshots.
    snapshots::lock_user(&user_s, true)?;
    snapshots::lock_types_of(&user_s, &[from.to_string(), to.to_string()])?;
    // The entities already merged into `from` are re-pointed too: they are
    // locked in the same ordered pass.
    db::run(
        "SELECT 1 FROM neotoma.entities WHERE user_id = $1::uuid AND (id = ANY($2) OR merged_into = $3)
         ORDER BY id FOR NO KEY UPDATE",
        &[
            Arg::uuid(user),
            Arg::Texts(vec![from.to_string(), to.to_string()]),
            Arg::Text(from),
        ],
    )?;
    let not_found = |id: &str, field: &str| {
        NeotomaError::new(
            ErrorCode::EntityNotFound,
            format!("no entity {id} (for this user)"),
        )
        .with("field", field)
        .with("entity_id", id)
    };
    let f = find_entity(user, from)?.ok_or_else(|| not_found(from, "from_entity_id"))?;
    let t = find_entity(user, to)?.ok_or_else(|| not_found(to, "to_entity_id"))?;
    // Both in the workspace written to: merges never cross workspaces.
    let scope = crate::scope::current();
    scope.check_entity(from, &f.workspace)?;
    scope.check_entity(to, &t.workspace)?;
    if let Some(e) =
        merged_already(&f, "from_entity_id").or_else(|| merged_already(&t, "to_entity_id"))
    {
        return Err(e);
    }
    if f.entity_type != t.entity_type && !retype {
        return Err(NeotomaError::invalid_field(
            "to_entity_id",
            format!(
                "cannot merge a {} into a {}: entities must have the same type",
                f.entity_type, t.entity_type
            ),
        ));
    }
    let moved = db::json(
        "SELECT jsonb_build_object(
           'observations', (SELECT count(*) FROM neotoma.observations o WHERE o.user_id = $1::uuid
                              AND o.entity_id IN (SELECT $2::text UNION ALL SELECT id FROM neotoma.entities
                                   WHERE user_id = $1::uuid AND merged_into = $2)),
           'snapshot', (SELECT to_jsonb(s) - 'user_id' - 'reducer_state' FROM neotoma.entity_snapshots s
                        WHERE s.user_id = $1::uuid AND s.entity_id = $2))",
        &[Arg::uuid(user), Arg::Text(from)],
    )?;
    db::run(
        "UPDATE neotoma.entities SET merged_into = $3, merged_at = coalesce(merged_at, now())
         WHERE user_id = $1::uuid AND (id = $2 OR merged_into = $2)",
        &[Arg::uuid(user), Arg::Text(from), Arg::Text(to)],
    )?;
    let relationships_moved = move_relationships(user, from, to)?;
    // `from` loses its timeline events; `to` folds both entities' observations.
    snapshots::recompute(user, &[from.to_string(), to.to_string()])?;
    let merge_id = derived_uuid("merge", &[&user_s, from, to]).to_string();
    let merged_at = db::text(
        "INSERT INTO neotoma.entity_merges (user_id, id, from_entity_id, to_entity_id, merge_reason,
             observations_moved, relationships_moved, from_snapshot)
         VALUES ($1::uuid, $2::uuid, $3, $4, $5, $6, $7, $8)
         RETURNING neotoma._iso(merged_at)",
        &[
            Arg::uuid(user),
            Arg::Text(&merge_id),
            Arg::Text(from),
            Arg::Text(to),
            Arg::OptText(reason),
            Arg::Int(moved["observations"].as_i64().unwrap_or(0)),
            Arg::Int(relationships_moved),
            Arg::Json(&moved["snapshot"]),
        ],
    )?
    .unwrap_or_default();
    Ok(MergeEntitiesResponse {
        from_entity_id: from.to_string(),
        to_entity_id: to.to_string(),
        observations_moved: moved["observations"].as_i64().unwrap_or(0),
        relationships_moved,
        merged_at,
        merge_reason: reason.map(str::to_string),
    })
}

/// Re-keys the relationships of `from` onto `to`: each becomes (or joins) the
/// relationship with `to` in its place, with copies of its observations; the
/// old one points at it. A relationship between `from` and `to` themselves
/// would become a self-loop and is dissolved (it points at the nil UUID).
fn move_relationships(user: &Uuid, from: &str, to: &str) -> Result<i64, NeotomaError> {
    // A deleted relationship stays behind, deleted, with the merged entity.
    let old = undeleted_edges(user, vec![from.to_string()], Direction::Both)?;
    let mut rekeyed: BTreeMap<String, (RelationshipType, String, String)> = BTreeMap::new();
    let mut moves = 0;
    for e in &old {
        let rtype = RelationshipType::parse("relationship_type", &e.relationship_type)?;
        let swap = |id: &String| {
            if id == from {
                to.to_string()
            } else {
                id.clone()
            }
        };
        let (s, t) = (swap(&e.source_entity_id), swap(&e.target_entity_id));
        let new_id = if s == t {
            Uuid::nil().to_string()
        } else {
            let id = relationship_id(user, rtype.as_str(), &s, &t).to_string();
            db::run(
                "INSERT INTO neotoma.relationships (user_id, id, relationship_type, source_entity_id, target_entity_id)
                 VALUES ($1::uuid, $2::uuid, $3, $4, $5) ON CONFLICT DO NOTHING",
                &[Arg::uuid(user), Arg::Text(&id), Arg::Text(rtype.as_str()), Arg::Text(&s), Arg::Text(&t)],
            )?;
            db::run(
                &crate::installed::adapt(MOVE_ASSERTIONS)?,
                &[Arg::uuid(user), Arg::Text(&e.id), Arg::Text(&id)],
            )?;
            rekeyed.insert(id.clone(), (rtype, s, t));
            id
        };
        db::run(
            "UPDATE neotoma.relationships SET merged_into = $3::uuid WHERE user_id = $1::uuid AND id = $2::uuid",
            &[Arg::uuid(user), Arg::Text(&e.id), Arg::Text(&new_id)],
        )?;
        moves += 1;
    }
    for (id, (rtype, s, t)) in &rekeyed {
        let observations = relationship_observations(user, id)?;
        apply_to_relationship(user, id, &observations, true)?;
        if rtype.acyclic() {
            lock_type(user, *rtype)?;
            if let Some(mut path) = find_path(user, *rtype, t, s)? {
                path.insert(0, s.clone());
                return Err(NeotomaError::new(
                    ErrorCode::CycleDetected,
                    format!("merging would close a {} cycle", rtype.as_str()),
                )
                .with("relationship_type", rtype.as_str())
                .with("cycle", path));
            }
        }
    }
    Ok(moves)
}

/// Copies the assertions of relationship $2 onto relationship $3 (not its
/// deletions and restorations: those stay with it).
const MOVE_ASSERTIONS: &str = "
    INSERT INTO neotoma.relationship_observations (user_id, id, relationship_id, source_id,
        observed_at, source_priority, specificity_score, metadata
        , valid_from, valid_to -- new
        )
    SELECT o.user_id, neotoma._derived_uuid('moved_relationship_observation', ARRAY[o.id::text, $3]),
           $3::uuid, o.source_id, o.observed_at, o.source_priority, o.specificity_score, o.metadata
           , o.valid_from, o.valid_to -- new
    FROM neotoma.relationship_observations o
    WHERE o.user_id = $1::uuid AND o.relationship_id = $2::uuid
      AND o.kind = 'assertion'
    ON CONFLICT DO NOTHING";
