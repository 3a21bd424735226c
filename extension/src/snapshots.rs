//! Snapshot maintenance: the statement-level trigger on observations folds new
//! observations into the stored reducer state of their entities (cost
//! independent of how many observations an entity already has);
//! `neotoma.verify()` recomputes every snapshot from scratch and reports any
//! difference; `recompute` rebuilds chosen snapshots (after merges and merge
//! policy changes).

use crate::db::{self, Arg};
use crate::registry;
use neotoma_core::reducer::{self, Observation, Policies, SnapshotState};
use neotoma_core::schema::EntitySchema;
use neotoma_core::NeotomaError;
use neotoma_core::{graph, identity};
use pgrx::prelude::*;
use pgrx::JsonB;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use uuid::Uuid;

/// An observation row as the trigger hands it over.
#[derive(Deserialize)]
struct Row {
    user_id: String,
    id: String,
    entity_id: String,
    source_id: String,
    observed_at: i64,
    source_priority: i32,
    specificity_score: f64,
    fields: Map<String, Value>,
}

impl Row {
    fn observation(self) -> Observation {
        Observation {
            id: self.id,
            source_id: self.source_id,
            observed_at: self.observed_at,
            source_priority: self.source_priority,
            specificity_score: self.specificity_score,
            fields: self.fields,
        }
    }
}

/// An entity whose snapshot is being (re)computed.
#[derive(Deserialize)]
struct Target {
    id: String,
    entity_type: String,
    state: Option<Value>,
}

/// Trigger body: folds a statement's new observations into their entities'
/// snapshots. Observations of a merged entity count for the entity it was
/// merged into.
#[pg_extern(volatile, parallel_unsafe, name = "_apply_observations")]
fn apply_observations(batch: Option<JsonB>) {
    let rows: Vec<Row> = match batch {
        Some(JsonB(v)) => match serde_json::from_value(v) {
            Ok(rows) => rows,
            Err(e) => pgrx::error!("neotoma: unreadable observation batch: {e}"),
        },
        None => return,
    };
    let mut by_user: BTreeMap<String, Vec<Row>> = BTreeMap::new();
    for r in rows {
        by_user.entry(r.user_id.clone()).or_default().push(r);
    }
    for (user, rows) in by_user {
        if let Err(e) = apply_for_user(&user, rows) {
            pgrx::error!("neotoma: could not update snapshots: {e}");
        }
    }
}

/// Locks the entities (in id order, so concurrent stores cannot deadlock) and
/// returns each with its stored reducer state.
fn lock_targets(user: &str, ids: Vec<String>) -> Result<Vec<Target>, NeotomaError> {
    let v = db::json(
        "SELECT coalesce(jsonb_agg(jsonb_build_object('id', e.id, 'entity_type', e.entity_type,
                                                      'state', s.reducer_state) ORDER BY e.id), '[]')
         FROM (SELECT id, entity_type FROM neotoma.entities
               WHERE user_id = $1::uuid AND id = ANY($2) ORDER BY id FOR NO KEY UPDATE) e
         LEFT JOIN neotoma.entity_snapshots s ON s.user_id = $1::uuid AND s.entity_id = e.id",
        &[Arg::Text(user), Arg::Texts(ids)],
    )?;
    db::from_json(v, "entities")
}

/// entity id → the entity it was merged into (itself when not merged).
fn merge_targets(user: &str, ids: Vec<String>) -> Result<BTreeMap<String, String>, NeotomaError> {
    let v = db::json(
        "SELECT coalesce(jsonb_object_agg(id, coalesce(merged_into, id)), '{}')
         FROM neotoma.entities WHERE user_id = $1::uuid AND id = ANY($2)",
        &[Arg::Text(user), Arg::Texts(ids)],
    )?;
    db::from_json(v, "merge targets")
}

fn policies_of(schema: Option<&registry::Active>) -> Policies {
    schema
        .map(|a| a.schema.merge_policies.clone())
        .unwrap_or_default()
}

fn apply_for_user(user: &str, rows: Vec<Row>) -> Result<(), NeotomaError> {
    let user_id = Uuid::parse_str(user).map_err(|e| NeotomaError::validation(e.to_string()))?;
    let mut ids: Vec<String> = rows.iter().map(|r| r.entity_id.clone()).collect();
    ids.sort();
    ids.dedup();
    let resolved = merge_targets(user, ids)?;
    let mut target_ids: Vec<String> = resolved.values().cloned().collect();
    target_ids.sort();
    target_ids.dedup();
    let targets = lock_targets(user, target_ids)?;
    let types: Vec<String> = targets.iter().map(|t| t.entity_type.clone()).collect();
    let schemas = registry::active(user_id, &types)?;

    let mut states: BTreeMap<String, (String, SnapshotState)> = BTreeMap::new();
    for t in targets {
        let state = match t.state {
            Some(v) => db::from_json(v, "reducer state")?,
            None => SnapshotState::default(),
        };
        states.insert(t.id, (t.entity_type, state));
    }
    for row in rows {
        let target = resolved
            .get(&row.entity_id)
            .cloned()
            .unwrap_or_else(|| row.entity_id.clone());
        let Some((entity_type, state)) = states.get_mut(&target) else {
            continue;
        };
        let policies = policies_of(schemas.get(entity_type.as_str()));
        reducer::apply(state, &row.observation(), &policies);
    }
    store_states(user, &states, &schemas)
}

/// Writes snapshots (and identifiers) of these entities from their states.
fn store_states(
    user: &str,
    states: &BTreeMap<String, (String, SnapshotState)>,
    schemas: &BTreeMap<String, registry::Active>,
) -> Result<(), NeotomaError> {
    let user_id = Uuid::parse_str(user).map_err(|e| NeotomaError::validation(e.to_string()))?;
    let mut snapshot_rows = Vec::new();
    let mut identifier_rows = Vec::new();
    let mut event_rows = Vec::new();
    for (entity_id, (entity_type, state)) in states {
        let schema = schemas.get(entity_type.as_str()).map(|a| &a.schema);
        let rendered = reducer::render(state);
        if let Some(schema) = schema {
            for (field, value) in identity::identifiers(schema, &rendered.snapshot) {
                identifier_rows
                    .push(json!({"entity_id": entity_id, "field": field, "value": value}));
            }
            event_rows.extend(event_rows_of(&user_id, schema, entity_id, &rendered));
        }
        snapshot_rows.push(snapshot_row(
            entity_id,
            entity_type,
            state,
            &rendered,
            schema,
        ));
    }
    db::run(
        "INSERT INTO neotoma.entity_snapshots AS t (user_id, entity_id, entity_type, schema_version,
             snapshot, provenance, field_provenance, reducer_state, observation_count,
             last_observation_at, computed_at)
         SELECT $1::uuid, r.entity_id, r.entity_type, r.schema_version, r.snapshot, r.provenance,
                r.field_provenance, r.reducer_state, r.observation_count,
                neotoma._from_micros(r.last_us), neotoma._from_micros(r.last_us)
         FROM jsonb_to_recordset($2) AS r(entity_id text, entity_type text, schema_version text,
              snapshot jsonb, provenance jsonb, field_provenance jsonb, reducer_state jsonb,
              observation_count bigint, last_us bigint)
         ON CONFLICT (user_id, entity_id) DO UPDATE SET
             entity_type = EXCLUDED.entity_type, schema_version = EXCLUDED.schema_version,
             snapshot = EXCLUDED.snapshot, provenance = EXCLUDED.provenance,
             field_provenance = EXCLUDED.field_provenance, reducer_state = EXCLUDED.reducer_state,
             observation_count = EXCLUDED.observation_count,
             last_observation_at = EXCLUDED.last_observation_at, computed_at = EXCLUDED.computed_at",
        &[Arg::Text(user), Arg::Json(&Value::Array(snapshot_rows))],
    )?;
    let ids: Vec<String> = states.keys().cloned().collect();
    db::run(
        "DELETE FROM neotoma.entity_identifiers WHERE user_id = $1::uuid AND entity_id = ANY($2)",
        &[Arg::Text(user), Arg::Texts(ids)],
    )?;
    db::run(
        "INSERT INTO neotoma.entity_identifiers (user_id, entity_id, field, value)
         SELECT $1::uuid, r.entity_id, r.field, r.value
         FROM jsonb_to_recordset($2) AS r(entity_id text, field text, value text)",
        &[Arg::Text(user), Arg::Json(&Value::Array(identifier_rows))],
    )?;
    write_events(user, states.keys().cloned().collect(), event_rows)
}

/// Timeline event rows of an entity, as stored in `neotoma.timeline_events`.
pub fn event_rows_of(
    user: &Uuid,
    schema: &EntitySchema,
    entity_id: &str,
    rendered: &reducer::Rendered,
) -> Vec<Value> {
    graph::derive_events(user, schema, entity_id, rendered)
        .into_iter()
        .map(|e| {
            json!({
                "id": e.id, "event_type": e.event_type, "ts": e.timestamp, "source_id": e.source_id,
                "entity_id": entity_id, "source_field": e.source_field,
                "observation_id": e.observation_id, "properties": e.properties,
            })
        })
        .collect()
}

/// Replaces the timeline events of these entities.
pub fn write_events(
    user: &str,
    entity_ids: Vec<String>,
    rows: Vec<Value>,
) -> Result<(), NeotomaError> {
    db::run(
        "DELETE FROM neotoma.timeline_events WHERE user_id = $1::uuid AND entity_id = ANY($2)",
        &[Arg::Text(user), Arg::Texts(entity_ids)],
    )?;
    if rows.is_empty() {
        return Ok(());
    }
    db::run(
        "INSERT INTO neotoma.timeline_events (user_id, id, event_type, event_timestamp, source_id,
             entity_id, entity_ids, source_field, observation_id, properties)
         SELECT $1::uuid, r.id, r.event_type, neotoma._from_micros(r.ts), r.source_id, r.entity_id,
                ARRAY[r.entity_id], r.source_field, r.observation_id, r.properties
         FROM jsonb_to_recordset($2) AS r(id uuid, event_type text, ts bigint, source_id uuid,
              entity_id text, source_field text, observation_id uuid, properties jsonb)",
        &[Arg::Text(user), Arg::Json(&Value::Array(rows))],
    )
}

/// The snapshot row of an entity, as stored and as compared by verify().
fn snapshot_row(
    entity_id: &str,
    entity_type: &str,
    state: &SnapshotState,
    r: &reducer::Rendered,
    schema: Option<&EntitySchema>,
) -> Value {
    json!({
        "entity_id": entity_id,
        "entity_type": entity_type,
        "schema_version": schema.map(|s| s.schema_version.as_str()).unwrap_or("unregistered"),
        "snapshot": r.snapshot,
        "provenance": r.provenance,
        "field_provenance": r.field_provenance,
        "reducer_state": state,
        "observation_count": state.observation_count,
        "last_us": state.last_observation_at,
    })
}

/// Every observation that counts for `entity_id` (its own and those of the
/// entities merged into it), as reducer input, by id.
const OBSERVATIONS_OF: &str = "
    SELECT coalesce(jsonb_agg(jsonb_build_object(
             'id', o.id, 'source_id', o.source_id, 'observed_at', neotoma._micros(o.observed_at),
             'source_priority', o.source_priority, 'specificity_score', o.specificity_score,
             'fields', o.fields) ORDER BY o.id), '[]')
    FROM neotoma.observations o
    WHERE o.user_id = $1::uuid
      AND (o.entity_id = $2 OR o.entity_id IN (SELECT id FROM neotoma.entities
                                               WHERE user_id = $1::uuid AND merged_into = $2))
      AND ($3::text IS NULL OR o.observed_at <= $3::timestamptz)";

/// The observations of an entity (optionally only those observed up to `at`).
pub fn observations_of(
    user: &Uuid,
    entity_id: &str,
    at: Option<&str>,
) -> Result<Vec<Observation>, NeotomaError> {
    let user = user.to_string();
    let v = db::json(
        OBSERVATIONS_OF,
        &[Arg::Text(&user), Arg::Text(entity_id), Arg::OptText(at)],
    )?;
    db::from_json(v, "observations")
}

/// Rebuilds the snapshots of these entities from all their observations.
pub fn recompute(user: &Uuid, entity_ids: &[String]) -> Result<(), NeotomaError> {
    let user_s = user.to_string();
    let targets = lock_targets(&user_s, entity_ids.to_vec())?;
    let types: Vec<String> = targets.iter().map(|t| t.entity_type.clone()).collect();
    let schemas = registry::active(*user, &types)?;
    let mut states = BTreeMap::new();
    for t in targets {
        let observations = observations_of(user, &t.id, None)?;
        let state = reducer::reduce(
            &observations,
            &policies_of(schemas.get(t.entity_type.as_str())),
        );
        states.insert(t.id, (t.entity_type, state));
    }
    store_states(&user_s, &states, &schemas)
}

/// Recomputes every snapshot the session can see from the observations and
/// compares it with the stored one. Answers {ok, entities_checked,
/// mismatches: [{user_id, entity_id, differences}]} (at most 100 listed).
/// With repair => true, mismatching snapshots are rewritten.
#[pg_extern(volatile, parallel_unsafe)]
fn verify(repair: default!(bool, false)) -> JsonB {
    match verify_all(repair) {
        Ok(v) => JsonB(v),
        Err(e) => pgrx::error!("neotoma.verify: {e}"),
    }
}

/// Recomputes every visible relationship's snapshot from its observations.
fn verify_relationships() -> Result<(u64, Vec<Value>), NeotomaError> {
    let rows = db::json(
        "SELECT coalesce(jsonb_agg(jsonb_build_object('user_id', r.user_id, 'id', r.id,
                   'snapshot', r.snapshot, 'provenance', r.provenance, 'count', r.observation_count,
                   'observations', (SELECT coalesce(jsonb_agg(jsonb_build_object('id', o.id,
                       'source_id', o.source_id, 'observed_at', neotoma._micros(o.observed_at),
                       'source_priority', o.source_priority, 'specificity_score', o.specificity_score,
                       'fields', o.metadata) ORDER BY o.id), '[]')
                     FROM neotoma.relationship_observations o
                     WHERE o.user_id = r.user_id AND o.relationship_id = r.id)) ORDER BY r.user_id, r.id), '[]')
         FROM neotoma.relationships r WHERE r.merged_into IS NULL",
        &[],
    )?;
    let mut checked = 0;
    let mut mismatches = Vec::new();
    for r in rows.as_array().into_iter().flatten() {
        checked += 1;
        let observations: Vec<Observation> =
            db::from_json(r["observations"].clone(), "relationship observations")?;
        let state = reducer::reduce(&observations, &Policies::new());
        let rendered = reducer::render(&state);
        if r["snapshot"] != Value::Object(rendered.snapshot.clone())
            || r["provenance"] != Value::Object(rendered.provenance.clone())
            || r["count"] != json!(state.observation_count)
        {
            mismatches.push(json!({"user_id": r["user_id"], "relationship_id": r["id"],
                                   "expected": rendered.snapshot, "stored": r["snapshot"]}));
        }
    }
    Ok((checked, mismatches))
}

/// The stored timeline events of an entity, in the shape `event_rows_of` makes.
fn stored_events_of(user: &Uuid, entity_id: &str) -> Result<Vec<Value>, NeotomaError> {
    let v = db::json(
        "SELECT coalesce(jsonb_agg(jsonb_build_object('id', id, 'event_type', event_type,
                   'ts', neotoma._micros(event_timestamp), 'source_id', source_id, 'entity_id', entity_id,
                   'source_field', source_field, 'observation_id', observation_id, 'properties', properties)
                 ORDER BY id), '[]')
         FROM neotoma.timeline_events WHERE user_id = $1::uuid AND entity_id = $2",
        &[Arg::Text(&user.to_string()), Arg::Text(entity_id)],
    )?;
    db::from_json(v, "timeline events")
}

fn same_events(expected: &[Value], stored: &[Value]) -> bool {
    let key = |v: &Value| v["id"].as_str().unwrap_or_default().to_string();
    let mut a = expected.to_vec();
    a.sort_by_key(key);
    a == stored
}

fn verify_all(repair: bool) -> Result<Value, NeotomaError> {
    let entities = db::json(
        "SELECT coalesce(jsonb_agg(jsonb_build_object('user_id', e.user_id, 'id', e.id,
                   'entity_type', e.entity_type, 'stored', to_jsonb(s) - 'user_id' - 'computed_at')
                 ORDER BY e.user_id, e.id), '[]')
         FROM neotoma.entities e
         LEFT JOIN neotoma.entity_snapshots s ON s.user_id = e.user_id AND s.entity_id = e.id
         WHERE e.merged_into IS NULL",
        &[],
    )?;
    let mut checked = 0u64;
    let mut mismatches = Vec::new();
    let mut mismatch_count: u64 = 0;
    let mut schemas: BTreeMap<Uuid, BTreeMap<String, registry::Active>> = BTreeMap::new();
    for e in entities.as_array().into_iter().flatten() {
        checked += 1;
        let user: Uuid = db::from_json(e["user_id"].clone(), "user id")?;
        let id = e["id"].as_str().unwrap_or_default();
        let entity_type = e["entity_type"].as_str().unwrap_or_default();
        let user_schemas = match schemas.entry(user) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => e.insert(registry::all_active(user)?),
        };
        let schema = user_schemas.get(entity_type);
        let observations = observations_of(&user, id, None)?;
        if observations.is_empty() && e["stored"].is_null() {
            continue;
        }
        let state = reducer::reduce(&observations, &policies_of(schema));
        let rendered = reducer::render(&state);
        let expected = snapshot_row(
            id,
            entity_type,
            &state,
            &rendered,
            schema.map(|a| &a.schema),
        );
        let stored = &e["stored"];
        let mut differences = Vec::new();
        // schema_version is not compared: it records which version computed
        // the snapshot, and a newer version with the same merge policies
        // gives the same snapshot.
        for key in [
            "snapshot",
            "provenance",
            "field_provenance",
            "observation_count",
        ] {
            if stored.get(key) != Some(&expected[key]) {
                differences.push(
                    json!({"what": key, "expected": expected[key], "stored": stored.get(key)}),
                );
            }
        }
        let stored_state: Option<SnapshotState> = stored
            .get("reducer_state")
            .and_then(|v| serde_json::from_value(v.clone()).ok());
        if stored_state.as_ref() != Some(&state) {
            differences.push(json!({"what": "reducer_state"}));
        }
        let expected_events = match schema {
            Some(a) => event_rows_of(&user, &a.schema, id, &rendered),
            None => vec![],
        };
        let stored_events = stored_events_of(&user, id)?;
        if !same_events(&expected_events, &stored_events) {
            differences.push(json!({"what": "timeline_events", "expected": expected_events, "stored": stored_events}));
        }
        if !differences.is_empty() {
            mismatch_count += 1;
            if mismatches.len() < 100 {
                mismatches
                    .push(json!({"user_id": user, "entity_id": id, "differences": differences}));
            }
            if repair {
                recompute(&user, &[id.to_string()])?;
            }
        }
    }
    let (relationships_checked, relationship_mismatches) = verify_relationships()?;
    mismatch_count += relationship_mismatches.len() as u64;
    mismatches.extend(relationship_mismatches.into_iter().take(100));
    Ok(json!({
        "ok": mismatch_count == 0,
        "entities_checked": checked,
        "relationships_checked": relationships_checked,
        "mismatch_count": mismatch_count,
        "mismatches": mismatches,
        "repaired": repair && mismatch_count > 0,
    }))
}
