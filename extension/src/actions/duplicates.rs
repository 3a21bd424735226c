//! `list_potential_duplicates` and `split_entity` (see
//! `neotoma_core::actions::duplicates`).

use super::entities::find_entity;
use crate::db::{self, Arg};
use crate::snapshots;
use neotoma_core::actions::common;
use neotoma_core::actions::duplicates::*;
use neotoma_core::canonical::sha256_hex;
use neotoma_core::ids::{derived_uuid, entity_id_in};
use neotoma_core::schema::check_name;
use neotoma_core::similarity::{duplicate_pairs, Candidate};
use neotoma_core::{ErrorCode, NeotomaError};
use serde::Deserialize;
use std::collections::BTreeSet;
use uuid::Uuid;

/// Most entities of a type compared in one call (the answer says when a
/// type has more).
pub const MAX_COMPARED: i64 = 2_000;
/// Most observations one split moves.
const MAX_MOVED: usize = 10_000;

pub fn list_potential_duplicates(
    user: Uuid,
    req: ListPotentialDuplicatesRequest,
) -> Result<ListPotentialDuplicatesResponse, NeotomaError> {
    check_name("entity_type", &req.entity_type)?;
    let threshold = req.threshold.unwrap_or(0.6);
    if !(0.1..=1.0).contains(&threshold) {
        return Err(NeotomaError::invalid_field(
            "threshold",
            "threshold must be between 0.1 and 1",
        ));
    }
    let limit = match req.limit {
        None => 50,
        Some(n) if (1..=500).contains(&n) => n,
        Some(_) => {
            return Err(NeotomaError::invalid_field(
                "limit",
                "limit must be between 1 and 500",
            ))
        }
    };
    #[derive(Deserialize)]
    struct Row {
        id: String,
        name: String,
        identifiers: Vec<(String, String)>,
        /// `default` before 0.12.0.
        workspace: String,
    }
    // Duplicates within the action's workspaces, each pair within one.
    let scope = crate::scope::current();
    let rows: Vec<Row> = db::parsed(
        &scope.adapt(
            "SELECT coalesce(jsonb_agg(jsonb_build_object('id', e.id,
                   'workspace', coalesce(to_jsonb(e) -> 'workspace', '\"default\"'),
                   'name', coalesce(s.snapshot->>'name', s.snapshot->>'title', e.canonical_name),
                   'identifiers', (SELECT coalesce(jsonb_agg(jsonb_build_array(i.field, i.value)
                                                             ORDER BY i.field, i.value), '[]')
                                   FROM neotoma.entity_identifiers i
                                   WHERE i.user_id = e.user_id AND i.entity_id = e.id))
                 ORDER BY e.id), '[]')::text
         FROM (SELECT * FROM neotoma.entities e
               WHERE e.user_id = $1::uuid AND e.entity_type = $2 AND e.merged_into IS NULL
                 AND e.deleted_at IS NULL
                 AND e.workspace = ANY($4::text[])
               ORDER BY e.id LIMIT $3 + 1) e
         LEFT JOIN neotoma.entity_snapshots s ON s.user_id = e.user_id AND s.entity_id = e.id",
        )?,
        &[
            Arg::uuid(user),
            Arg::Text(&req.entity_type),
            Arg::Int(MAX_COMPARED),
            scope.arg(),
        ],
        "entities",
    )?;
    let truncated = rows.len() as i64 > MAX_COMPARED;
    let candidates: Vec<Candidate> = rows
        .into_iter()
        .take(MAX_COMPARED as usize)
        .map(|r| Candidate {
            id: r.id,
            name: r.name,
            identifiers: r.identifiers,
            group: r.workspace,
        })
        .collect();
    Ok(ListPotentialDuplicatesResponse {
        pairs: duplicate_pairs(&candidates, threshold, limit as usize),
        entity_type: req.entity_type,
        threshold,
        entities_compared: candidates.len() as i64,
        truncated,
    })
}

pub fn split_entity(
    user: Uuid,
    req: SplitEntityRequest,
) -> Result<SplitEntityResponse, NeotomaError> {
    let from_id = common::entity_id("entity_id", &req.entity_id)?;
    let reason = super::lifecycle::reason(req.reason.as_deref())?.map(str::to_string);
    let (by, ids) = match (&req.observation_ids, &req.source_ids) {
        (Some(o), None) if !o.is_empty() => ("observation_ids", o),
        (None, Some(s)) if !s.is_empty() => ("source_ids", s),
        _ => {
            return Err(NeotomaError::validation(
                "give the observations to move: observation_ids or source_ids (one, not empty)",
            ))
        }
    };
    if ids.len() > MAX_MOVED {
        return Err(NeotomaError::invalid_field(
            by,
            format!("at most {MAX_MOVED} ids"),
        ));
    }
    let ids: BTreeSet<String> = ids
        .iter()
        .map(|i| common::uuid(by, i).map(|u| u.to_string()))
        .collect::<Result<_, _>>()?;
    let to_id = req
        .to_entity_id
        .as_deref()
        .map(|t| common::entity_id("to_entity_id", t))
        .transpose()?;

    let user_s = user.to_string();
    // Like a merge: every fold of this user waits, and the entities are locked.
    snapshots::lock_user(&user_s, true)?;
    let live = |id: &str, field: &str| -> Result<_, NeotomaError> {
        let e = find_entity(&user, id)?.ok_or_else(|| {
            NeotomaError::new(
                ErrorCode::EntityNotFound,
                format!("no entity {id} (for this user)"),
            )
            .with("field", field)
            .with("entity_id", id)
        })?;
        crate::scope::current().check_entity(id, &e.workspace)?;
        if let Some(into) = &e.merged_into {
            return Err(NeotomaError::new(
                ErrorCode::EntityAlreadyMerged,
                format!("{id} was merged into {into}: split that entity"),
            )
            .with("field", field)
            .with("merged_into", into.as_str()));
        }
        if let Some(at) = crate::lifecycle::deleted_at(&user, id)? {
            return Err(crate::lifecycle::deleted_error(id, &at));
        }
        Ok(e)
    };
    let from = live(&from_id, "entity_id")?;
    // What counts for the entity now (what its snapshot folds): its
    // observations and those of the entities merged into it, but deletions,
    // restorations and what an earlier split moved away. In id order.
    let fold = snapshots::observations_of(&user, &from.id, None)?;
    let total = fold.len();
    let chosen: Vec<String> = fold
        .into_iter()
        .filter(|o| match by {
            "observation_ids" => ids.contains(&o.id),
            _ => ids.contains(&o.source_id),
        })
        .map(|o| o.id)
        .collect();
    if by == "observation_ids" && chosen.len() < ids.len() {
        let found: BTreeSet<&String> = chosen.iter().collect();
        let unknown: Vec<&String> = ids.iter().filter(|i| !found.contains(i)).collect();
        return Err(NeotomaError::invalid_field(
            by,
            format!(
                "{} of these observations do not count for {} (unknown, another entity's, a deletion, or moved already)",
                unknown.len(),
                from.id
            ),
        )
        .with("unknown", serde_json::json!(unknown)));
    }
    if chosen.is_empty() {
        return Err(NeotomaError::invalid_field(
            by,
            format!("no observation of {} comes from these sources", from.id),
        ));
    }
    if chosen.len() >= total {
        return Err(NeotomaError::invalid_field(
            by,
            format!(
                "this would move every observation of {}: merge_entities it into the other entity instead",
                from.id
            ),
        ));
    }
    let (to, created) = match &to_id {
        Some(t) => {
            if *t == from.id {
                return Err(NeotomaError::invalid_field(
                    "to_entity_id",
                    "an entity cannot be split into itself",
                ));
            }
            let to = live(t, "to_entity_id")?;
            if to.entity_type != from.entity_type {
                return Err(NeotomaError::invalid_field(
                    "to_entity_id",
                    format!(
                        "cannot move observations of a {} to a {}: entities must have the same type",
                        from.entity_type, to.entity_type
                    ),
                ));
            }
            (to.id, false)
        }
        None => {
            // A new entity, named after the moved observations: the same
            // split makes the same id.
            let key = format!(
                "split:{}:{}",
                from.id,
                sha256_hex(chosen.join(",").as_bytes())
            );
            // In from's workspace.
            let id = entity_id_in(&user, &from.workspace, &from.entity_type, &key);
            let created = db::inserted(
                &crate::installed::adapt(
                    "INSERT INTO neotoma.entities (user_id, id, entity_type, canonical_name, identity_key
                                                  , workspace
                                                  )
                     VALUES ($1::uuid, $2, $3, $4, $5
                             , $6
                             ) ON CONFLICT DO NOTHING",
                )?,
                &[
                    Arg::uuid(user),
                    Arg::Text(&id),
                    Arg::Text(&from.entity_type),
                    Arg::Text(&from.canonical_name),
                    Arg::Text(&key),
                    Arg::Text(&from.workspace),
                ],
            )?;
            (id, created)
        }
    };
    let split_id = derived_uuid("split", &[&user_s, &from.id, &to, &chosen.join(",")]);
    // The split's rows are the extension's to write (users read them): as
    // its owner, every statement naming the user.
    let split_at = crate::owner::as_owner(|| {
        let split_at = db::text(
            "WITH s AS (
               INSERT INTO neotoma.entity_splits (user_id, id, from_entity_id, to_entity_id, created_entity,
                   reason, observations_moved)
               VALUES ($1::uuid, $2::uuid, $3, $4, $5, $6, $7) RETURNING split_at)
             SELECT neotoma._iso(split_at) FROM s",
            &[
                Arg::uuid(user),
                Arg::uuid(split_id),
                Arg::Text(&from.id),
                Arg::Text(&to),
                Arg::Bool(created),
                Arg::OptText(reason.as_deref()),
                Arg::Int(chosen.len() as i64),
            ],
        )?
        .unwrap_or_default();
        // The originals leave `from`'s fold; copies count for `to` (the
        // observation trigger folds them in).
        db::run(
            "INSERT INTO neotoma.observation_moves (user_id, observation_id, split_id, to_entity_id, copy_id)
             SELECT $1::uuid, o::uuid, $2::uuid, $3, neotoma._derived_uuid('split_observation', ARRAY[o, $3])
             FROM unnest($4::text[]) o",
            &[
                Arg::uuid(user),
                Arg::uuid(split_id),
                Arg::Text(&to),
                Arg::Texts(chosen.clone()),
            ],
        )?;
        db::run(
            &crate::installed::adapt(
                "INSERT INTO neotoma.observations (user_id, id, entity_id, entity_type, schema_version, source_id,
                 interpretation_run_id, kind, observed_at, specificity_score, source_priority, fields
                 , confidence
                 , write_order
                 , token_id -- new
                 )
             SELECT o.user_id, m.copy_id, $2, o.entity_type, o.schema_version, o.source_id,
                    o.interpretation_run_id, o.kind, o.observed_at, o.specificity_score, o.source_priority, o.fields
                    , o.confidence
                    , o.write_order
                    , o.token_id -- new
             FROM neotoma.observation_moves m
             JOIN neotoma.observations o ON o.user_id = m.user_id AND o.id = m.observation_id
             WHERE m.user_id = $1::uuid AND m.split_id = $3::uuid
             ORDER BY m.copy_id",
            )?,
            &[Arg::uuid(user), Arg::Text(&to), Arg::uuid(split_id)],
        )?;
        // Their contests too: a copy is as disputed as its original (ids as
        // `contest` derives them, so contesting the copy for the same reason
        // again changes nothing).
        db::run(
            "INSERT INTO neotoma.observation_contests (user_id, id, observation_id, reason, created_at)
             SELECT c.user_id, neotoma._derived_uuid('contest', ARRAY[c.user_id::text, m.copy_id::text, c.reason]),
                    m.copy_id, c.reason, c.created_at
             FROM neotoma.observation_moves m
             JOIN neotoma.observation_contests c ON c.user_id = m.user_id AND c.observation_id = m.observation_id
             WHERE m.user_id = $1::uuid AND m.split_id = $2::uuid
             ORDER BY 2
             ON CONFLICT DO NOTHING",
            &[Arg::uuid(user), Arg::uuid(split_id)],
        )?;
        // Unknown fields of the moved observations go with them.
        db::run(
            "UPDATE neotoma.raw_fragments f SET entity_id = m.to_entity_id, observation_id = m.copy_id
             FROM neotoma.observation_moves m
             WHERE m.user_id = $1::uuid AND m.split_id = $2::uuid
               AND f.user_id = m.user_id AND f.observation_id = m.observation_id",
            &[Arg::uuid(user), Arg::uuid(split_id)],
        )?;
        Ok(split_at)
    })?;
    snapshots::recompute(&user, &[from.id.clone(), to.clone()])?;
    Ok(SplitEntityResponse {
        split_id: split_id.to_string(),
        from_entity_id: from.id,
        to_entity_id: to,
        created,
        observations_moved: chosen.len() as i64,
        split_at,
        reason,
    })
}
