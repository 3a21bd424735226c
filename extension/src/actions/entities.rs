//! Reading entities (snapshot, observations, field provenance, listings,
//! lookup by identifier) and `correct`.

use crate::db::{self, Arg};
use crate::registry;
use crate::snapshots;
use neotoma_core::actions::common;
use neotoma_core::actions::entities::*;
use neotoma_core::canonical::{canonical_json, sha256_hex};
use neotoma_core::confidence::Confidence;
use neotoma_core::identity::{grams_query, identifier_candidates, partial_forms, IdentifierKind};
use neotoma_core::ids::{derived_uuid, source_id};
use neotoma_core::reducer::{self, FieldState, SnapshotState, CORRECTION_PRIORITY};
use neotoma_core::request::json_type;
use neotoma_core::schema::check_name;
use neotoma_core::time::format_micros;
use neotoma_core::valid_time;
use neotoma_core::{ErrorCode, NeotomaError};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use uuid::Uuid;

/// An entity row.
#[derive(Deserialize)]
pub struct EntityRow {
    pub id: String,
    pub entity_type: String,
    pub canonical_name: String,
    pub merged_into: Option<String>,
    /// The workspace it belongs to (`default` before 0.12.0).
    #[serde(default = "default_workspace")]
    pub workspace: String,
}

fn default_workspace() -> String {
    neotoma_core::workspace::DEFAULT.to_string()
}

pub fn find_entity(user: &Uuid, entity_id: &str) -> Result<Option<EntityRow>, NeotomaError> {
    let v = db::json(
        &crate::installed::adapt(
            "SELECT to_jsonb(e) FROM (SELECT id, entity_type, canonical_name, merged_into
                                            , workspace
                                     FROM neotoma.entities WHERE user_id = $1::uuid AND id = $2) e",
        )?,
        &[Arg::uuid(user), Arg::Text(entity_id)],
    )?;
    if v.is_null() {
        Ok(None)
    } else {
        db::from_json(v, "entity").map(Some)
    }
}

fn not_found(entity_id: &str) -> NeotomaError {
    crate::scope::absent(ErrorCode::EntityNotFound, "entity", entity_id)
}

/// Under a token limited to some workspaces, `absent` when the entity `id`
/// (itself, not where it was merged) lies beyond them: checked before
/// anything else is said of it (deleted, merged, of which entity an
/// observation is), which would tell it exists.
pub fn hide_beyond_limit(
    user: &Uuid,
    id: &str,
    absent: impl FnOnce() -> NeotomaError,
) -> Result<(), NeotomaError> {
    if beyond_limit(user, id)? {
        return Err(absent());
    }
    Ok(())
}

/// Whether the entity `id` lies beyond the workspaces the call's token is
/// limited to (false without such a limit, or for no such entity). Read
/// from the call's limits, not the scope: the other tool sets' actions run
/// without one.
pub fn beyond_limit(user: &Uuid, id: &str) -> Result<bool, NeotomaError> {
    let limits = crate::tenancy::call_limits();
    if limits.workspaces.is_none() {
        return Ok(false);
    }
    Ok(find_entity(user, id)?.is_some_and(|e| !limits.admits_workspace(&e.workspace)))
}

/// The entity, following a merge to where it went. Answers the entity and,
/// when it was merged, the id that was asked for. One outside the action's
/// workspaces is not found (saying where it is).
pub fn resolve_entity(
    user: &Uuid,
    entity_id: &str,
) -> Result<(EntityRow, Option<String>), NeotomaError> {
    let entity = find_entity(user, entity_id)?.ok_or_else(|| not_found(entity_id))?;
    let found = match &entity.merged_into {
        Some(target) => {
            let t = find_entity(user, target)?.ok_or_else(|| not_found(target))?;
            (t, Some(entity_id.to_string()))
        }
        None => (entity, None),
    };
    crate::scope::current().check_entity(entity_id, &found.0.workspace)?;
    Ok(found)
}

/// Checks that the entity `id` (itself, not where it was merged) lies in
/// the action's workspaces; one that is not there is left to the caller.
pub fn check_in_scope(user: &Uuid, id: &str) -> Result<(), NeotomaError> {
    if let Some(e) = find_entity(user, id)? {
        crate::scope::current().check_entity(id, &e.workspace)?;
    }
    Ok(())
}

/// [`resolve_entity`], refusing an entity that is deleted (what the
/// retrievals and writes about it answer until it is restored).
pub fn resolve_live_entity(
    user: &Uuid,
    entity_id: &str,
) -> Result<(EntityRow, Option<String>), NeotomaError> {
    let found = resolve_entity(user, entity_id)?;
    if let Some(at) = crate::lifecycle::deleted_at(user, &found.0.id)? {
        return Err(crate::lifecycle::deleted_error(entity_id, &at));
    }
    Ok(found)
}

pub fn retrieve_entity_snapshot(
    user: Uuid,
    req: RetrieveEntitySnapshotRequest,
) -> Result<EntitySnapshotResponse, NeotomaError> {
    let entity_id = common::entity_id("entity_id", &req.entity_id)?;
    hide_beyond_limit(&user, &entity_id, || not_found(&entity_id))?;
    let deletion = crate::lifecycle::deletion(&user, &entity_id)?;
    if let (Some(d), false) = (&deletion, req.include_deleted.unwrap_or(false)) {
        return Err(crate::lifecycle::deleted_error(&entity_id, &d.at));
    }
    let at = common::optional_micros("at", &req.at)?;
    let valid_at = common::optional_micros("valid_at", &req.valid_at)?;
    // Followed through a merge; outside the action's workspaces: not found.
    let (entity, redirected_from) = resolve_entity(&user, &entity_id)?;
    let mut out = match at {
        None => current_snapshot(&user, &entity, valid_at)?,
        Some(at) => snapshot_at(
            &user,
            &entity,
            at,
            req.at.as_deref().unwrap_or_default(),
            valid_at.unwrap_or(at),
        )?,
    };
    out.valid_at = req.valid_at.clone();
    out.redirected_from = redirected_from;
    if let Some(d) = deletion {
        out.deleted_at = Some(d.at);
        out.deleted_reason = d.reason;
    }
    if let Some(min) = req.min_confidence {
        reducer::keep_passing(
            min,
            &mut out.snapshot,
            &mut out.provenance,
            &mut out.field_provenance,
        );
    }
    if req.include_annotations.unwrap_or(false) {
        out.annotations = Some(annotations_of(&user, &out.entity_id)?);
    }
    if req.include_contradictions.unwrap_or(false) {
        out.contradictions = Some(snapshots::contradictions_of(
            &user,
            &out.entity_id,
            &out.entity_type,
            at,
        )?);
    }
    Ok(out)
}

/// The stored snapshot of an entity (as resolved: not merged away), or
/// its stored state rendered at `valid_at` of valid time, or now when the
/// stored render has stopped holding since it was written.
fn current_snapshot(
    user: &Uuid,
    entity: &EntityRow,
    valid_at: Option<i64>,
) -> Result<EntitySnapshotResponse, NeotomaError> {
    let found: Option<Value> = db::parsed(
        &crate::installed::adapt(
            "SELECT jsonb_build_object(
           'entity_id', $2::text, 'entity_type', $3::text, 'canonical_name', $4::text,
           'schema_version', coalesce(s.schema_version, ''),
           'snapshot', coalesce(s.snapshot, '{}'), 'provenance', coalesce(s.provenance, '{}'),
           'field_provenance', coalesce(s.field_provenance, '{}'),
           'computed_at', neotoma._iso(s.computed_at),
           'observation_count', coalesce(s.observation_count, 0),
           'last_observation_at', neotoma._iso(s.last_observation_at)
           , 'valid_until', neotoma._iso(s.valid_until) -- new
           , 'state', CASE WHEN $5 OR s.valid_until <= now() THEN s.reducer_state END -- new
           )::text
         FROM (SELECT) one
         LEFT JOIN neotoma.entity_snapshots s ON s.user_id = $1::uuid AND s.entity_id = $2",
        )?,
        &[
            Arg::uuid(user),
            Arg::Text(&entity.id),
            Arg::Text(&entity.entity_type),
            Arg::Text(&entity.canonical_name),
            Arg::Bool(valid_at.is_some()),
        ],
        "snapshot",
    )?;
    let mut found = found.ok_or_else(|| not_found(&entity.id))?;
    let state = found.get_mut("state").map(Value::take);
    let mut out: EntitySnapshotResponse = db::from_json(found, "snapshot")?;
    if let Some(state) = state.filter(|s| !s.is_null()) {
        let state: SnapshotState = db::from_json(state, "reducer state")?;
        let t = valid_at.unwrap_or_else(db::transaction_start_micros);
        let (r, until) = valid_time::rendered_at(&state, t);
        out.snapshot = r.snapshot;
        out.provenance = r.provenance;
        out.field_provenance = r.field_provenance;
        out.valid_until = until.map(format_micros);
    }
    Ok(out)
}

/// The reducer's state of an entity from the observations observed up to
/// `at`, with the version of the schema it was folded with ("" without
/// one).
fn known_at(
    user: &Uuid,
    entity: &EntityRow,
    at: i64,
) -> Result<(SnapshotState, String), NeotomaError> {
    let observations = snapshots::observations_of(user, &entity.id, Some(at))?;
    let schemas = registry::active(*user, std::slice::from_ref(&entity.entity_type))?;
    let schema = schemas.get(&entity.entity_type).map(|a| &*a.schema);
    let policies = schema.map(|s| s.merge_policies.clone()).unwrap_or_default();
    Ok((
        valid_time::reduce(&observations, &policies),
        schema.map(|s| s.schema_version.clone()).unwrap_or_default(),
    ))
}

/// The snapshot recomputed from the observations observed up to `at`
/// (normalised); the answer repeats `at` as the caller wrote it.
fn snapshot_at(
    user: &Uuid,
    entity: &EntityRow,
    at: i64,
    as_given: &str,
    valid_at: i64,
) -> Result<EntitySnapshotResponse, NeotomaError> {
    let (state, schema_version) = known_at(user, entity, at)?;
    let (r, valid_until) = valid_time::rendered_at(&state, valid_at);
    let last = state.last_observation_at.map(format_micros);
    Ok(EntitySnapshotResponse {
        entity_id: entity.id.clone(),
        entity_type: entity.entity_type.clone(),
        canonical_name: entity.canonical_name.clone(),
        schema_version,
        snapshot: r.snapshot,
        provenance: r.provenance,
        field_provenance: r.field_provenance,
        computed_at: last.clone(),
        observation_count: state.observation_count as i64,
        last_observation_at: last,
        at: Some(as_given.to_string()),
        valid_at: None,
        valid_until: valid_until.map(format_micros),
        redirected_from: None,
        deleted_at: None,
        deleted_reason: None,
        contradictions: None,
        annotations: None,
    })
}

pub fn list_observations(
    user: Uuid,
    req: ListObservationsRequest,
) -> Result<ListObservationsResponse, NeotomaError> {
    let entity_id = common::entity_id("entity_id", &req.entity_id)?;
    let (limit, offset) = common::page(req.limit, req.offset)?;
    let (entity, _) = resolve_entity(&user, &entity_id)?;
    let v = db::json(
        &crate::installed::adapt(LIST_OBSERVATIONS)?,
        &[
            Arg::uuid(user),
            Arg::Text(&entity.id),
            Arg::Int(limit),
            Arg::Int(offset),
        ],
    )?;
    db::from_json(v, "observations")
}

pub fn retrieve_field_provenance(
    user: Uuid,
    req: RetrieveFieldProvenanceRequest,
) -> Result<RetrieveFieldProvenanceResponse, NeotomaError> {
    let entity_id = common::entity_id("entity_id", &req.entity_id)?;
    if req.field.trim().is_empty() {
        return Err(NeotomaError::invalid_field(
            "field",
            "field must not be empty",
        ));
    }
    let (entity, _) = resolve_entity(&user, &entity_id)?;
    let found = db::json(
        "SELECT jsonb_build_object('value', s.snapshot -> $3, 'prov', s.field_provenance -> $3,
                                   'fields', (SELECT coalesce(jsonb_agg(k ORDER BY k), '[]')
                                              FROM jsonb_object_keys(s.snapshot) k))
         FROM neotoma.entity_snapshots s WHERE s.user_id = $1::uuid AND s.entity_id = $2",
        &[
            Arg::uuid(user),
            Arg::Text(&entity.id),
            Arg::Text(&req.field),
        ],
    )?;
    let Some(observation_id) = found["prov"]["observation_id"].as_str() else {
        return Err(NeotomaError::new(
            ErrorCode::FieldNotFound,
            format!("the snapshot of {} has no field `{}`", entity.id, req.field),
        )
        .with("field", req.field.clone())
        .with("available_fields", found["fields"].clone()));
    };
    let v = db::json(
        &crate::installed::adapt(FIELD_PROVENANCE)?,
        &[
            Arg::uuid(user),
            Arg::Text(observation_id),
            Arg::Text(&req.field),
            Arg::Json(&found["value"]),
        ],
    )?;
    db::from_json(v, "field provenance")
}

pub fn retrieve_field_history(
    user: Uuid,
    req: RetrieveFieldHistoryRequest,
) -> Result<RetrieveFieldHistoryResponse, NeotomaError> {
    let entity_id = common::entity_id("entity_id", &req.entity_id)?;
    if req.field.trim().is_empty() {
        return Err(NeotomaError::invalid_field(
            "field",
            "field must not be empty",
        ));
    }
    let at = common::optional_micros("at", &req.at)?;
    hide_beyond_limit(&user, &entity_id, || not_found(&entity_id))?;
    let (entity, _) = resolve_entity(&user, &entity_id)?;
    let state = match at {
        None => db::parsed::<Option<SnapshotState>>(
            "SELECT reducer_state::text FROM neotoma.entity_snapshots
             WHERE user_id = $1::uuid AND entity_id = $2",
            &[Arg::uuid(user), Arg::Text(&entity.id)],
            "reducer state",
        )?
        .unwrap_or_default(),
        Some(at) => known_at(&user, &entity, at)?.0,
    };
    let intervals: Vec<FieldInterval> = valid_time::history(&state, &req.field)
        .into_iter()
        .map(|s| FieldInterval {
            valid_from: s.from.map(format_micros),
            valid_to: s.to.map(format_micros),
            value: s.value,
            provenance: s.provenance,
        })
        .collect();
    if intervals.is_empty() {
        let fields: BTreeSet<&String> = state.fields.keys().chain(state.timelines.keys()).collect();
        return Err(NeotomaError::new(
            ErrorCode::FieldNotFound,
            format!(
                "no observation of {} has the field `{}`",
                entity.id, req.field
            ),
        )
        .with("field", req.field.clone())
        .with("available_fields", json!(fields)));
    }
    Ok(RetrieveFieldHistoryResponse {
        entity_id: entity.id,
        field: req.field,
        intervals,
    })
}

fn optional_type(field: &str, t: &Option<String>) -> Result<(), NeotomaError> {
    match t {
        Some(t) => check_name(field, t),
        None => Ok(()),
    }
}

pub fn retrieve_entities(
    user: Uuid,
    req: RetrieveEntitiesRequest,
) -> Result<RetrieveEntitiesResponse, NeotomaError> {
    let valid_at = common::optional_micros("valid_at", &req.valid_at)?;
    let min_confidence = req.min_confidence;
    let say_ended = req.current_only == Some(false);
    let mut out = list_or_search(user, req)?;
    if let Some(t) = valid_at {
        render_page_at(&user, &mut out.entities, t, min_confidence)?;
    }
    if say_ended {
        mark_ended(&user, &mut out.entities)?;
    }
    Ok(out)
}

/// The compact value timelines (`entity_snapshots.valid_values`) of those
/// of `ids` that have values over valid time, in one statement.
pub fn value_timelines_of(
    user: &Uuid,
    ids: Vec<String>,
) -> Result<BTreeMap<String, valid_time::ValueTimelines>, NeotomaError> {
    if ids.is_empty() || !crate::installed::is_current() {
        return Ok(BTreeMap::new());
    }
    db::parsed(
        "SELECT coalesce(jsonb_object_agg(entity_id, valid_values), '{}')::text
         FROM neotoma.entity_snapshots
         WHERE user_id = $1::uuid AND entity_id = ANY($2) AND valid_values IS NOT NULL",
        &[Arg::uuid(user), Arg::Texts(ids)],
        "value timelines",
    )
}

/// Says, of each answered entity, which of its values held over valid time
/// until before now and no longer hold (`ended`, latest end first).
fn mark_ended(user: &Uuid, entities: &mut [EntitySummary]) -> Result<(), NeotomaError> {
    let now = db::transaction_start_micros();
    let timelines = value_timelines_of(user, entities.iter().map(|e| e.id.clone()).collect())?;
    for e in entities {
        let Some(timelines) = timelines.get(&e.id) else {
            continue;
        };
        let mut ended: Vec<(i64, EndedValue)> = Vec::new();
        for (field, holding) in valid_time::values_at(timelines, now) {
            let current = holding.map(|s| &s.2);
            for s in &timelines[field] {
                match s.1 {
                    Some(to) if to <= now && current != Some(&s.2) => ended.push((
                        to,
                        EndedValue {
                            field: field.clone(),
                            value: s.2.clone(),
                            valid_to: format_micros(to),
                        },
                    )),
                    _ => {}
                }
            }
        }
        ended.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.field.cmp(&b.1.field)));
        e.ended = Some(ended.into_iter().map(|(_, v)| v).collect());
    }
    Ok(())
}

/// Renders the snapshots of a page at the instant `t` of valid time: the
/// fields of its entities that hold over valid time (their compact value
/// timelines, `entity_snapshots.valid_values`, read in one statement) take
/// their value then; the others are the same at every instant, as the
/// page has them.
fn render_page_at(
    user: &Uuid,
    entities: &mut [EntitySummary],
    t: i64,
    min_confidence: Option<Confidence>,
) -> Result<(), NeotomaError> {
    let ids: Vec<String> = entities
        .iter()
        .filter(|e| e.snapshot.is_some())
        .map(|e| e.id.clone())
        .collect();
    let timelines = value_timelines_of(user, ids)?;
    for e in entities {
        let (Some(timelines), Some(snapshot)) = (timelines.get(&e.id), e.snapshot.as_mut()) else {
            continue;
        };
        valid_time::overlay_at(snapshot, timelines, t, |s| {
            min_confidence.is_none_or(|min| s.3.passes(min))
        });
    }
    Ok(())
}

/// `retrieve_entities` as it answers now: a listing, or a search.
fn list_or_search(
    user: Uuid,
    req: RetrieveEntitiesRequest,
) -> Result<RetrieveEntitiesResponse, NeotomaError> {
    optional_type("entity_type", &req.entity_type)?;
    if let Some(text) = req.search.as_deref() {
        if req.min_confidence.is_some() {
            return Err(NeotomaError::invalid_field(
                "min_confidence",
                "min_confidence does not go with search: filter a listing, or retrieve_entity_snapshot {min_confidence}",
            ));
        }
        return super::search::search_entities(user, &req, text);
    }
    for (field, given) in [
        ("search_mode", req.search_mode.is_some()),
        ("include_observations", req.include_observations.is_some()),
        ("current_only", req.current_only.is_some()),
    ] {
        if given {
            return Err(NeotomaError::invalid_field(
                field,
                format!("{field} goes with search (the text to look for)"),
            ));
        }
    }
    let (limit, offset) = common::page(req.limit, req.offset)?;
    let include_snapshots = req.include_snapshots.unwrap_or(true);
    let include_merged = req.include_merged.unwrap_or(false);
    let include_deleted = req.include_deleted.unwrap_or(false);
    let flag = |on: bool| Arg::Text(if on { "true" } else { "false" });
    let scope = crate::scope::current();
    if let Some(min) = req.min_confidence {
        return db::parsed(
            &crate::installed::adapt(RETRIEVE_ENTITIES_CONFIDENT)?,
            &[
                Arg::uuid(user),
                Arg::OptText(req.entity_type.as_deref()),
                flag(include_merged),
                flag(include_snapshots),
                Arg::Int(limit),
                Arg::Int(offset),
                flag(include_deleted),
                Arg::Text(&min.to_string()),
                scope.arg(),
            ],
            "entities",
        );
    }
    let typed = req.entity_type.is_some();
    let listing = if typed {
        RETRIEVE_ENTITIES_OF_TYPE
    } else {
        RETRIEVE_ENTITIES
    };
    let type_filter = if typed { " AND e.entity_type = $2" } else { "" };
    let query = scope.adapt(listing)?;
    // The count rows leave deleted entities out: with them, the total is
    // counted from the entities.
    let query = if include_deleted {
        Cow::Owned(counting(&query, type_filter))
    } else {
        query
    };
    // A custom plan: with the page's LIMIT known, Postgres reads the index
    // in order; a generic plan, guessing a tenth of the rows, sorts them all.
    db::with_custom_plans(|| {
        db::parsed(
            &query,
            &[
                Arg::uuid(user),
                Arg::OptText(req.entity_type.as_deref()),
                flag(include_merged),
                flag(include_snapshots),
                Arg::Int(limit),
                Arg::Int(offset),
                flag(include_deleted),
                scope.arg(),
            ],
            "entities",
        )
    })
}

pub fn retrieve_entity_by_identifier(
    user: Uuid,
    req: RetrieveEntityByIdentifierRequest,
) -> Result<RetrieveEntityByIdentifierResponse, NeotomaError> {
    optional_type("entity_type", &req.entity_type)?;
    let identifier = req.identifier.trim();
    if identifier.is_empty() || identifier.len() > 1000 {
        return Err(NeotomaError::invalid_field(
            "identifier",
            "identifier must be 1 to 1000 characters",
        ));
    }
    let candidates = identifier_candidates(identifier);
    // Partial: each kind of field is searched with the form of the
    // identifier that kind uses.
    let partial = partial_forms(identifier);
    // Narrowed by the index of the values' runs of three characters, unless
    // a form is too short to have one.
    let grams = grams_query(partial.iter().map(|(_, form)| form.as_str()));
    let forms: BTreeMap<IdentifierKind, String> = partial
        .into_iter()
        .map(|(kind, form)| (kind, contains_pattern(&form)))
        .collect();
    let scope = crate::scope::current();
    let query = scope.adapt(IDENTIFIER_LOOKUP)?;
    let query = match &grams {
        Some(_) => query,
        None => Cow::Owned(crate::installed::without_lines(&query, |l| {
            l.contains("-- grams")
        })),
    };
    db::parsed(
        &query,
        &[
            Arg::uuid(user),
            Arg::OptText(req.entity_type.as_deref()),
            Arg::Texts(candidates),
            Arg::OptText(forms.get(&IdentifierKind::Phone).map(String::as_str)),
            Arg::OptText(forms.get(&IdentifierKind::Url).map(String::as_str)),
            Arg::OptText(forms.get(&IdentifierKind::Text).map(String::as_str)),
            Arg::Text(identifier),
            scope.arg(),
            Arg::OptText(grams.as_deref()),
        ],
        "identified entities",
    )
}

/// `%value%` for LIKE, with LIKE's own characters escaped.
fn contains_pattern(value: &str) -> String {
    format!(
        "%{}%",
        value
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_")
    )
}

pub fn correct(user: Uuid, req: CorrectRequest) -> Result<CorrectResponse, NeotomaError> {
    let entity_id = common::entity_id("entity_id", &req.entity_id)?;
    check_name("entity_type", &req.entity_type)?;
    check_name("field", &req.field)?;
    let (entity, _) = resolve_live_entity(&user, &entity_id)?;
    if entity.entity_type != req.entity_type {
        return Err(NeotomaError::invalid_field(
            "entity_type",
            format!(
                "{} is a {}, not a {}",
                entity.id, entity.entity_type, req.entity_type
            ),
        )
        .with("expected", entity.entity_type.clone()));
    }
    let schemas = registry::active(user, std::slice::from_ref(&entity.entity_type))?;
    let Some(schema) = schemas.get(&entity.entity_type).map(|a| &*a.schema) else {
        return Err(NeotomaError::new(
            ErrorCode::SchemaNotFound,
            "the entity's type has no active schema",
        ));
    };
    let Some(def) = schema.fields.get(&req.field) else {
        return Err(NeotomaError::invalid_field(
            "field",
            format!("`{}` is not a field of {}", req.field, entity.entity_type),
        )
        .with("fields", schema.fields.keys().cloned().collect::<Vec<_>>()));
    };
    if !def.field_type.accepts(&req.value) {
        return Err(NeotomaError::invalid_field(
            "value",
            format!(
                "{} must be a {}, got {}",
                req.field,
                def.field_type.as_str(),
                json_type(&req.value)
            ),
        )
        .with("expected", def.field_type.as_str()));
    }
    let valid = crate::installed::served_interval(&req.valid_from, &req.valid_to)?;
    let user_s = user.to_string();
    let state = snapshots::stored_state(&user, &entity.id)?;
    // The value it corrects: the field's where the correction holds (its
    // start, else the instant before its end, else now).
    let instant = valid
        .from
        .or(valid.to.map(|t| t - 1))
        .unwrap_or_else(db::transaction_start_micros);
    let winner = state
        .as_ref()
        .and_then(|s| match s.timelines.get(&req.field) {
            Some(timeline) => timeline.at(instant),
            None => s.fields.get(&req.field),
        });
    let previous = match winner {
        Some(FieldState::Value { value, prov, .. }) => {
            // The same value again is the same correction, unless it is
            // rated otherwise (then it is a new one, with that rating).
            let same_rating = req.confidence.is_none_or(|c| prov.confidence() == c);
            if prov.source_priority >= CORRECTION_PRIORITY && *value == req.value && same_rating {
                return answer(
                    prov.observation_id.clone(),
                    &entity.id,
                    &req,
                    "already corrected to this value",
                );
            }
            prov.observation_id.clone()
        }
        Some(FieldState::Set { latest, .. }) => latest.observation_id.clone(),
        None => String::new(),
    };
    let value_json = canonical_json(&req.value);
    // A correction over an interval is another correction than one that
    // holds always (its id and source say which).
    let interval = [("valid_from", valid.from), ("valid_to", valid.to)]
        .into_iter()
        .filter_map(|(k, t)| Some((k, format_micros(t?))))
        .collect::<BTreeMap<_, _>>();
    let mut id_parts = vec![
        user_s.as_str(),
        &entity.id,
        &req.field,
        &value_json,
        &previous,
    ];
    id_parts.extend(interval.values().map(String::as_str));
    let observation_id = derived_uuid("correction", &id_parts);
    let mut content =
        json!({"correction": {"entity_id": entity.id, "field": req.field, "value": req.value}});
    for (k, t) in &interval {
        content["correction"][k] = json!(t);
    }
    let content_hash = sha256_hex(canonical_json(&content).as_bytes());
    let source = source_id(&user, &content_hash).to_string();
    // In the entity's workspace.
    db::run(
        &crate::installed::adapt(
            "INSERT INTO neotoma.sources (user_id, id, content_hash, source_type, mime_type, content, source_priority
                                         , workspace
                                         )
             VALUES ($1::uuid, $2::uuid, $3, 'correction', 'application/json', $4, $5::int
                     , $6
                     )
             ON CONFLICT DO NOTHING",
        )?,
        &[
            Arg::uuid(user),
            Arg::Text(&source),
            Arg::Text(&content_hash),
            Arg::Json(&content),
            Arg::Int(CORRECTION_PRIORITY as i64),
            Arg::Text(&entity.workspace),
        ],
    )?;
    let mut fields = Map::new();
    fields.insert(req.field.clone(), req.value.clone());
    // The same correction made at the same moment by another session:
    // it wins, and this one answers as a repeat of it.
    let inserted = db::inserted(
        &crate::installed::adapt(
            "INSERT INTO neotoma.observations (user_id, id, entity_id, entity_type, schema_version, source_id,
             kind, observed_at, specificity_score, source_priority, fields
             , confidence
             , valid_from, valid_to -- new
             )
         VALUES ($1::uuid, $2::uuid, $3, $4, $5, $6::uuid, 'correction', clock_timestamp(), 1.0, $7::int, $8
                 , $9
                 , neotoma._from_micros($10), neotoma._from_micros($11) -- new
                 )
         ON CONFLICT DO NOTHING",
        )?,
        &[
            Arg::uuid(user),
            Arg::uuid(observation_id),
            Arg::Text(&entity.id),
            Arg::Text(&entity.entity_type),
            Arg::Text(&schema.schema_version),
            Arg::Text(&source),
            Arg::Int(CORRECTION_PRIORITY as i64),
            Arg::Json(&Value::Object(fields)),
            Arg::OptText(req.confidence.map(|c| c.to_string()).as_deref()),
            Arg::OptInt(valid.from),
            Arg::OptInt(valid.to),
        ],
    )?;
    answer(
        observation_id.to_string(),
        &entity.id,
        &req,
        if inserted {
            "corrected; the snapshot shows the new value"
        } else {
            "already corrected to this value"
        },
    )
}

fn answer(
    observation_id: String,
    entity_id: &str,
    req: &CorrectRequest,
    message: &str,
) -> Result<CorrectResponse, NeotomaError> {
    Ok(CorrectResponse {
        observation_id,
        entity_id: entity_id.to_string(),
        field: req.field.clone(),
        value: req.value.clone(),
        message: message.to_string(),
    })
}

const FIELD_PROVENANCE: &str = include_str!("../../../sql/queries/field_provenance.sql");
const IDENTIFIER_LOOKUP: &str = include_str!("../../../sql/queries/identifier_lookup.sql");
const LIST_OBSERVATIONS: &str = include_str!("../../../sql/queries/list_observations.sql");
const RETRIEVE_ENTITIES: &str = include_str!("../../../sql/queries/retrieve_entities.sql");
const RETRIEVE_ENTITIES_OF_TYPE: &str =
    include_str!("../../../sql/queries/retrieve_entities_of_type.sql");
const RETRIEVE_ENTITIES_CONFIDENT: &str =
    include_str!("../../../sql/queries/retrieve_entities_confident.sql");

fn counting(query: &str, type_filter: &str) -> String {
    let start = query
        .find("  -- Exact, in constant time")
        .expect("the listing query marks its total");
    let end = query
        .find("  'excluded_merged'")
        .expect("the listing query's total ends before excluded_merged");
    format!(
        "{}  'total', (SELECT count(*) FROM neotoma.entities e WHERE e.user_id = $1::uuid{type_filter}
                 AND e.workspace = ANY($8::text[]) AND ($3 = 'true' OR e.merged_into IS NULL)),\n{}",
        &query[..start],
        &query[end..]
    )
}

/// An annotation as the actions answer it (`a` is neotoma.annotations).
pub(super) const ANNOTATION_JSON: &str =
    "jsonb_build_object('annotation_id', a.id, 'entity_id', a.entity_id,
    'observation_id', a.observation_id, 'note', a.note, 'created_at', neotoma._iso(a.created_at))";

/// The annotations of an entity and of the entities merged into it, oldest
/// first.
fn annotations_of(
    user: &Uuid,
    entity_id: &str,
) -> Result<Vec<neotoma_core::actions::annotations::AnnotationOut>, NeotomaError> {
    let v = db::json(
        &format!(
            "SELECT coalesce(jsonb_agg({ANNOTATION_JSON} ORDER BY a.created_at, a.id), '[]')
             FROM neotoma.annotations a
             WHERE a.user_id = $1::uuid
               AND a.entity_id IN (SELECT $2::text UNION ALL SELECT id FROM neotoma.entities
                                                             WHERE user_id = $1::uuid AND merged_into = $2)"
        ),
        &[Arg::uuid(user), Arg::Text(entity_id)],
    )?;
    db::from_json(v, "annotations")
}
