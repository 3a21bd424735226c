//! Snapshot maintenance: the statement-level trigger on observations folds new
//! observations into the stored reducer state of their entities (cost
//! independent of how many observations an entity already has);
//! `neotoma.verify()` recomputes every snapshot from scratch and reports any
//! difference; `recompute` rebuilds chosen snapshots (after merges and merge
//! policy changes).
//!
//! Correct under concurrency: the state an entity's snapshot is folded from
//! is read only after the entity's row is locked, in a statement of its own
//! (so under READ COMMITTED it sees every transaction that held the lock
//! before), and the schema it is folded with is read after a shared lock on
//! its entity type, which schema changes take exclusively. Merges of a
//! user's entities take that user's lock exclusively (folds take it
//! shared), so merge targets do not move during a fold. Locks are always
//! taken in the same order: the user, entity types, then entities by id.
//!
//! Snapshots, identifiers and timeline events are derived data: only the
//! trigger and `neotoma_private._recompute` (both running as the extension's owner)
//! write them; users may read them, never write them.

use crate::db::{self, Arg};
use crate::registry;
use neotoma_core::confidence::Confidence;
use neotoma_core::reducer::{self, Observation, Policies, SnapshotState};
use neotoma_core::schema::EntitySchema;
use neotoma_core::valid_time;
use neotoma_core::{graph, identity};
use neotoma_core::{ErrorCode, NeotomaError};
use pgrx::prelude::*;
use pgrx::JsonB;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use uuid::Uuid;

/// An observation row as the trigger hands it over.
#[derive(Deserialize)]
struct Row {
    user_id: String,
    id: String,
    entity_id: String,
    /// Absent in batches of a 0.1.0 trigger (before ALTER EXTENSION UPDATE).
    #[serde(default)]
    entity_type: Option<String>,
    source_id: String,
    observed_at: i64,
    source_priority: i32,
    specificity_score: f64,
    fields: Map<String, Value>,
    /// Absent in batches of a trigger before 0.11.0, and for observations
    /// no caller rated.
    #[serde(default)]
    confidence: Option<Confidence>,
    /// Absent in batches of a trigger before 0.16.0.
    #[serde(default)]
    write_order: i64,
    /// Its valid time (absent before 0.24.0, null when unbounded).
    #[serde(default)]
    valid_from: Option<i64>,
    #[serde(default)]
    valid_to: Option<i64>,
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
            confidence: self.confidence,
            // A new observation: nobody contested it yet.
            contests: 0,
            write_order: self.write_order,
            valid_from: self.valid_from,
            valid_to: self.valid_to,
        }
    }
}

/// A locked entity: its type and the entity it was merged into, if any.
#[derive(Deserialize)]
struct Locked {
    id: String,
    entity_type: String,
    merged_into: Option<String>,
}

/// Trigger body: folds a statement's new observations (the JSON text of an
/// array of rows, read straight into [`Row`]s) into their entities'
/// snapshots. Observations of a merged entity count for the entity it was
/// merged into.
#[pg_extern(volatile, parallel_unsafe, name = "_apply_observations")]
pub(crate) fn apply_observation_batch(batch: Option<&str>) {
    let Some(batch) = batch else { return };
    let rows: Vec<Row> = match serde_json::from_str(batch) {
        Ok(rows) => rows,
        Err(e) => pgrx::error!("neotoma: unreadable observation batch: {e}"),
    };
    let mut by_user: BTreeMap<String, Vec<Row>> = BTreeMap::new();
    for r in rows {
        by_user.entry(r.user_id.clone()).or_default().push(r);
    }
    for (user, rows) in by_user {
        if let Err(e) = db::with_generic_plans(db::Work::Writes, || apply_for_user(&user, rows)) {
            crate::error::raise(&e);
        }
    }
}

/// The trigger body of 0.1.0 (`_apply_observations(jsonb)`), kept in the
/// library so that a database still on 0.1.0 keeps working until it is
/// updated.
#[pg_extern(volatile, parallel_unsafe, sql = false)]
fn apply_observations(batch: Option<JsonB>) {
    apply_observation_batch(batch.map(|b| b.0.to_string()).as_deref())
}

/// The advisory lock key of a user's merges (see [`lock_user`]); posting
/// the user's common words takes it too, in SQL (sql/word_postings.sql:
/// keep the two in step).
fn user_lock(user: &str) -> String {
    format!("neotoma-user:{user}")
}

/// The advisory lock key of an entity type's schema (see
/// [`lock_types_shared`]; schema changes take it exclusively).
pub fn type_lock(entity_type: &str) -> String {
    format!("neotoma-type:{entity_type}")
}

/// Takes these advisory locks shared, in the order given.
fn lock_shared(keys: Vec<String>) -> Result<(), NeotomaError> {
    db::run(
        "SELECT pg_advisory_xact_lock_shared(hashtextextended(k, 0))
         FROM unnest($1::text[]) WITH ORDINALITY AS u(k, n) ORDER BY n",
        &[Arg::Texts(keys)],
    )
}

/// Takes the user's merge lock: shared for folds and recomputations,
/// exclusive for `merge_entities`, so the merge targets a fold reads cannot
/// change under it.
pub fn lock_user(user: &str, exclusive: bool) -> Result<(), NeotomaError> {
    if !exclusive {
        return lock_shared(vec![user_lock(user)]);
    }
    db::run(
        "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
        &[Arg::Text(&user_lock(user))],
    )
}

/// Takes a shared lock on the types of these entities (read without a
/// lock: an entity's type never changes).
pub fn lock_types_of(user: &str, ids: &[String]) -> Result<(), NeotomaError> {
    let types = db::json(
        "SELECT coalesce(jsonb_agg(DISTINCT entity_type), '[]') FROM neotoma.entities
         WHERE user_id = $1::uuid AND id = ANY($2)",
        &[Arg::Text(user), Arg::Texts(ids.to_vec())],
    )?;
    lock_types_shared(&db::from_json(types, "entity types")?)
}

/// Takes a shared lock on each entity type: a schema change of the type
/// (which locks it exclusively) then waits for this transaction, or this
/// one for it, so snapshots are always folded with the schema that holds.
pub fn lock_types_shared(types: &BTreeSet<String>) -> Result<(), NeotomaError> {
    if types.is_empty() {
        return Ok(());
    }
    lock_shared(types.iter().map(|t| type_lock(t)).collect())
}

/// Takes, in one statement and in the order every writer uses, the user's
/// merge lock and each type's lock, both shared (see [`lock_user`] and
/// [`lock_types_shared`]).
pub fn lock_user_and_types(user: &str, types: &BTreeSet<String>) -> Result<(), NeotomaError> {
    lock_shared(
        std::iter::once(user_lock(user))
            .chain(types.iter().map(|t| type_lock(t)))
            .collect(),
    )
}

/// Locks these entities (in id order, so concurrent writers cannot
/// deadlock) and answers them as they are once locked.
fn lock_entities(user: &str, ids: &BTreeSet<String>) -> Result<Vec<Locked>, NeotomaError> {
    let v = db::json(
        "SELECT coalesce(jsonb_agg(jsonb_build_object('id', e.id, 'entity_type', e.entity_type,
                                                      'merged_into', e.merged_into) ORDER BY e.id), '[]')
         FROM (SELECT id, entity_type, merged_into FROM neotoma.entities
               WHERE user_id = $1::uuid AND id = ANY($2) ORDER BY id FOR NO KEY UPDATE) e",
        &[Arg::Text(user), Arg::Texts(ids.iter().cloned().collect())],
    )?;
    db::from_json(v, "entities")
}

/// Locks `ids` and every entity they were merged into, in one ordered
/// pass, and answers each locked entity by id. The merge targets are read
/// before the rows are locked: under the user's merge lock (see
/// [`lock_user`]) no merge can move them meanwhile.
fn lock_with_targets(
    user: &str,
    ids: &BTreeSet<String>,
) -> Result<BTreeMap<String, Locked>, NeotomaError> {
    // The ids first, then the rows joined to them by key: a filter holding
    // a subquery is not leakproof, so under row level security Postgres
    // would check the user's every entity against it (a join by key it
    // applies through the index).
    let locked: Vec<Locked> = db::parsed(
        "SELECT coalesce(json_agg(json_build_object('id', e.id, 'entity_type', e.entity_type,
                                                    'merged_into', e.merged_into) ORDER BY e.id), '[]')::text
         FROM (SELECT e.id, e.entity_type, e.merged_into
               FROM (SELECT unnest($2::text[]) AS id
                     UNION
                     SELECT m.merged_into FROM neotoma.entities m
                     WHERE m.user_id = $1::uuid AND m.id = ANY($2) AND m.merged_into IS NOT NULL) w
               JOIN neotoma.entities e ON e.user_id = $1::uuid AND e.id = w.id
               ORDER BY e.id FOR NO KEY UPDATE OF e) e",
        &[Arg::Text(user), Arg::Texts(ids.iter().cloned().collect())],
        "entities",
    )?;
    Ok(locked.into_iter().map(|e| (e.id.clone(), e)).collect())
}

/// What a fold starts from, read in one statement once the entities and
/// their types are locked: the active schemas of `types` and the stored
/// reducer states of `ids`.
type FoldInputs = (
    BTreeMap<String, registry::Active>,
    BTreeMap<String, SnapshotState>,
);

fn fold_inputs(
    user: &Uuid,
    types: &[String],
    ids: &BTreeSet<String>,
) -> Result<FoldInputs, NeotomaError> {
    let mut v = db::json(
        FOLD_INPUTS,
        &[
            Arg::uuid(user),
            Arg::Texts(types.to_vec()),
            Arg::Texts(ids.iter().cloned().collect()),
        ],
    )?;
    Ok((
        registry::read(v["schemas"].take())?,
        db::from_json(v["states"].take(), "reducer states")?,
    ))
}

const FOLD_INPUTS: &str = concat!(
    "SELECT jsonb_build_object('schemas', (",
    include_str!("../../sql/queries/active_schemas.sql"),
    "), 'states', (SELECT coalesce(jsonb_object_agg(entity_id, reducer_state), '{}')
                   FROM neotoma.entity_snapshots WHERE user_id = $1::uuid AND entity_id = ANY($3)))"
);

fn policies_of(schema: Option<&registry::Active>) -> Policies {
    schema
        .map(|a| a.schema.merge_policies.clone())
        .unwrap_or_default()
}

/// Where an entity's observations count after merges: the entity itself,
/// or the entity it was (last) merged into.
fn target_in(locked: &BTreeMap<String, Locked>, id: &str) -> String {
    let mut at = id.to_string();
    while let Some(next) = locked.get(&at).and_then(|e| e.merged_into.clone()) {
        at = next;
    }
    at
}

/// Entities folded, by id: their type and reducer state.
type States = BTreeMap<String, (String, SnapshotState)>;

/// Folds observations (each with the entity it was made of) into the
/// stored states of their targets (`stored`, read after the targets were
/// locked); answers the states and which entities had a snapshot before
/// (only those can have identifiers and timeline events to replace).
fn fold(
    locked: &BTreeMap<String, Locked>,
    mut stored: BTreeMap<String, SnapshotState>,
    schemas: &BTreeMap<String, registry::Active>,
    mut observations: Vec<(String, Observation)>,
) -> (States, Vec<String>) {
    let folded_before: Vec<String> = stored.keys().cloned().collect();
    let mut states = States::new();
    for (id, _) in &observations {
        let target = target_in(locked, id);
        if let Some(e) = locked.get(&target) {
            states.entry(target).or_insert_with_key(|t| {
                (e.entity_type.clone(), stored.remove(t).unwrap_or_default())
            });
        }
    }
    observations.sort_by(|a, b| (&a.0, &a.1.id).cmp(&(&b.0, &b.1.id)));
    for (id, observation) in &observations {
        let Some((entity_type, state)) = states.get_mut(&target_in(locked, id)) else {
            continue;
        };
        let policies = policies_of(schemas.get(entity_type.as_str()));
        valid_time::apply(state, observation, &policies);
    }
    (states, folded_before)
}

fn apply_for_user(user: &str, rows: Vec<Row>) -> Result<(), NeotomaError> {
    let user_id = Uuid::parse_str(user).map_err(|e| NeotomaError::validation(e.to_string()))?;
    let types: BTreeSet<String> = rows.iter().filter_map(|r| r.entity_type.clone()).collect();
    lock_user_and_types(user, &types)?;
    let ids: BTreeSet<String> = rows.iter().map(|r| r.entity_id.clone()).collect();
    let locked = lock_with_targets(user, &ids)?;
    let target_ids: BTreeSet<String> = ids.iter().map(|id| target_in(&locked, id)).collect();
    let target_types: Vec<String> = target_ids
        .iter()
        .filter_map(|id| locked.get(id).map(|e| e.entity_type.clone()))
        .collect();
    let (schemas, stored) = fold_inputs(&user_id, &target_types, &target_ids)?;
    let observations = rows
        .into_iter()
        .map(|r| (r.entity_id.clone(), r.observation()))
        .collect();
    let (states, folded_before) = fold(&locked, stored, &schemas, observations);
    store_states(user, &states, &schemas, folded_before)
}

thread_local! {
    /// Set while a store writes observations it has folded itself, in the
    /// same statement as their snapshots: the observation trigger, whose
    /// WHEN asks `neotoma._store_folding()`, then leaves them alone.
    static STORE_FOLDING: Cell<bool> = const { Cell::new(false) };
}

/// `neotoma._store_folding()`: whether this backend is inside a store's
/// own write of observations it folded already. Only [`Fold::write`] sets
/// it, for the statement that writes them with their snapshots; every
/// other insert of observations is folded by the trigger.
#[pg_extern(volatile, parallel_safe, name = "_store_folding")]
pub(crate) fn store_folding() -> bool {
    STORE_FOLDING.get()
}

/// Runs `f` as the extension's owner (what SECURITY DEFINER does for the
/// trigger), with the trigger told that this backend folds what `f`
/// inserts; both are undone afterwards, also when `f` fails.
fn as_folding_owner<R>(f: impl FnOnce() -> Result<R, NeotomaError>) -> Result<R, NeotomaError> {
    struct Quiet;
    impl Drop for Quiet {
        fn drop(&mut self) {
            STORE_FOLDING.set(false);
        }
    }
    crate::owner::as_owner(|| {
        let _quiet = Quiet;
        STORE_FOLDING.set(true);
        f()
    })
}

/// A store's fold of its own observations, before they are inserted: the
/// entities they are made of are locked with their merge targets, and the
/// targets' reducer states read. The caller holds the user's lock and its
/// entity types' locks already (`crate::ingest::prepare` takes them before
/// it reads the schemas the fold uses).
pub struct Fold {
    user: Uuid,
    locked: BTreeMap<String, Locked>,
    stored: BTreeMap<String, SnapshotState>,
    /// Write orders reserved for the observations about to be written, in
    /// increasing order (none on an installed SQL before 0.16.0).
    pub write_orders: Vec<i64>,
}

/// What a fold starts from: the stored states of its targets and the
/// write orders of its observations.
#[derive(Deserialize)]
struct FoldStart {
    states: BTreeMap<String, SnapshotState>,
    #[serde(default)]
    orders: Vec<i64>,
}

/// The derived rows of a fold, each row as JSON text, for
/// `write_snapshots.sql`'s parameters $2 (snapshots), $3 (identifiers) and
/// $4 (timeline events).
pub struct DerivedRows {
    pub snapshots: Vec<String>,
    pub identifiers: Vec<String>,
    pub events: Vec<String>,
}

impl Fold {
    /// Locks the entities `ids` with their merge targets, reads the
    /// targets' states and reserves the write orders of `observations`
    /// observations: after the locks, so that of two stores into one
    /// entity the one that locked it later writes later.
    pub fn begin(
        user: &Uuid,
        ids: &BTreeSet<String>,
        observations: usize,
    ) -> Result<Fold, NeotomaError> {
        let locked = lock_with_targets(&user.to_string(), ids)?;
        let targets: BTreeSet<String> = ids.iter().map(|id| target_in(&locked, id)).collect();
        // In a statement of its own, after the lock: it sees every fold
        // that held the lock before.
        let start: FoldStart = db::parsed(
            &crate::installed::adapt(
                "SELECT json_build_object(
                   'states', (SELECT coalesce(jsonb_object_agg(entity_id, reducer_state), '{}')
                              FROM neotoma.entity_snapshots WHERE user_id = $1::uuid AND entity_id = ANY($2))
                   , 'orders', (SELECT coalesce(json_agg(nextval('neotoma.observation_write_order')), '[]')
                                FROM generate_series(1, $3::int))
                   )::text",
            )?,
            &[
                Arg::uuid(user),
                Arg::Texts(targets.into_iter().collect()),
                Arg::Int(observations as i64),
            ],
            "reducer states",
        )?;
        let mut write_orders = start.orders;
        write_orders.sort_unstable();
        Ok(Fold {
            user: *user,
            locked,
            stored: start.states,
            write_orders,
        })
    }

    /// The entity the observations of `id` count for.
    pub fn target_of(&self, id: &str) -> String {
        target_in(&self.locked, id)
    }

    /// Folds `observations` (each with the entity it is of) with `schemas`
    /// (those of every type folded) and hands the derived rows to `write`,
    /// which writes them and the observations in one statement, run as the
    /// extension's owner with the observation trigger quiet. A store's
    /// slice is at most [`WRITE_SLICE`] entities: one statement.
    pub fn write(
        self,
        observations: Vec<(String, Observation)>,
        schemas: &BTreeMap<String, registry::Active>,
        write: impl FnOnce(DerivedRows) -> Result<(), NeotomaError>,
    ) -> Result<(), NeotomaError> {
        // A target of another type than what was stored (an entity
        // reclassified: merged into one of its new type) folds by its own
        // type's schema, read here.
        let others: Vec<String> = self
            .locked
            .values()
            .map(|e| e.entity_type.clone())
            .filter(|t| !schemas.contains_key(t))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let with_others;
        let schemas = if others.is_empty() {
            schemas
        } else {
            let mut all: BTreeMap<String, registry::Active> = schemas
                .iter()
                .map(|(t, a)| (t.clone(), a.clone()))
                .collect();
            all.extend(registry::active(self.user, &others)?);
            with_others = all;
            &with_others
        };
        let (states, folded_before) = fold(&self.locked, self.stored, schemas, observations);
        if let Some((_, (missing, _))) = states.iter().find(|(_, (t, _))| !schemas.contains_key(t))
        {
            return Err(NeotomaError::new(
                ErrorCode::DbQueryFailed,
                format!("no schema was read for the entity type `{missing}`"),
            ));
        }
        let slice: Vec<_> = states.iter().collect();
        let rows = derived_rows(&self.user, &slice, schemas)?;
        as_folding_owner(|| {
            delete_derived(&self.user.to_string(), folded_before)?;
            write(rows)
        })
    }
}

/// A snapshot row as written to `neotoma.entity_snapshots` (and compared
/// by verify()): serialised straight to JSON text, borrowing the state.
#[derive(Serialize)]
struct SnapshotRow<'a> {
    entity_id: &'a str,
    entity_type: &'a str,
    schema_version: &'a str,
    snapshot: &'a Map<String, Value>,
    provenance: &'a Map<String, Value>,
    field_provenance: &'a Map<String, Value>,
    reducer_state: &'a SnapshotState,
    observation_count: u64,
    last_us: Option<i64>,
    /// Until when the render holds (microseconds; absent: for ever).
    #[serde(skip_serializing_if = "Option::is_none")]
    valid_until: Option<i64>,
    /// The values that hold over valid time, compact (absent: none).
    #[serde(skip_serializing_if = "valid_time::ValueTimelines::is_empty")]
    valid_values: valid_time::ValueTimelines,
}

#[derive(Serialize)]
struct IdentifierRow<'a> {
    entity_id: &'a str,
    field: String,
    value: String,
}

/// A timeline event row as written to `neotoma.timeline_events`.
#[derive(Serialize, Deserialize, PartialEq, Debug)]
pub struct EventRow {
    pub id: Uuid,
    pub event_type: String,
    pub ts: i64,
    pub source_id: String,
    pub entity_id: String,
    pub source_field: String,
    pub observation_id: String,
    pub properties: Value,
}

/// The JSON text of each row (they are plain data: serialising cannot fail).
pub fn json_rows<T: Serialize>(rows: &[T]) -> Result<Vec<String>, NeotomaError> {
    rows.iter()
        .map(|r| {
            serde_json::to_string(r)
                .map_err(|e| NeotomaError::new(ErrorCode::DbQueryFailed, format!("rows: {e}")))
        })
        .collect()
}

/// Writes snapshots (and identifiers, and timeline events) of these
/// entities from their states; `replaced` are those whose earlier
/// identifiers and events are to be deleted (the others have none).
fn store_states(
    user: &str,
    states: &BTreeMap<String, (String, SnapshotState)>,
    schemas: &BTreeMap<String, registry::Active>,
    replaced: Vec<String>,
) -> Result<(), NeotomaError> {
    let user_id = Uuid::parse_str(user).map_err(|e| NeotomaError::validation(e.to_string()))?;
    delete_derived(user, replaced)?;
    let states: Vec<_> = states.iter().collect();
    for slice in states.chunks(WRITE_SLICE) {
        let rows = derived_rows(&user_id, slice, schemas)?;
        db::run(
            &crate::installed::adapt(WRITE_SNAPSHOTS)?,
            &[
                Arg::Text(user),
                Arg::JsonRows(rows.snapshots),
                Arg::JsonRows(rows.identifiers),
                Arg::JsonRows(rows.events),
            ],
        )?;
    }
    Ok(())
}

/// Deletes the identifiers and timeline events of these entities (whose
/// snapshots are about to be replaced).
fn delete_derived(user: &str, replaced: Vec<String>) -> Result<(), NeotomaError> {
    if replaced.is_empty() {
        return Ok(());
    }
    db::run(
        "WITH identifiers AS (DELETE FROM neotoma.entity_identifiers
                              WHERE user_id = $1::uuid AND entity_id = ANY($2)),
              events AS (DELETE FROM neotoma.timeline_events
                         WHERE user_id = $1::uuid AND entity_id = ANY($2))
         SELECT 1",
        &[Arg::Text(user), Arg::Texts(replaced)],
    )
}

/// The snapshot, identifier and timeline event rows of these states.
fn derived_rows(
    user_id: &Uuid,
    slice: &[(&String, &(String, SnapshotState))],
    schemas: &BTreeMap<String, registry::Active>,
) -> Result<DerivedRows, NeotomaError> {
    // Rendered at the transaction's instant: what is true in the world now
    // (the same instant for every row the transaction writes).
    let now = db::transaction_start_micros();
    let rendered: Vec<(reducer::Rendered, Option<i64>)> = slice
        .iter()
        .map(|(_, (_, state))| valid_time::rendered_at(state, now))
        .collect();
    let mut snapshot_rows = Vec::with_capacity(slice.len());
    let mut identifier_rows = Vec::new();
    let mut event_rows = Vec::new();
    for ((entity_id, (entity_type, state)), (rendered, valid_until)) in slice.iter().zip(&rendered)
    {
        let schema = schemas.get(entity_type.as_str()).map(|a| &*a.schema);
        if let Some(schema) = schema {
            for (field, value) in identity::identifiers(schema, &rendered.snapshot) {
                identifier_rows.push(IdentifierRow {
                    entity_id,
                    field,
                    value,
                });
            }
            event_rows.extend(event_rows_of(user_id, schema, entity_id, state, rendered));
        }
        snapshot_rows.push(snapshot_row(
            entity_id,
            entity_type,
            state,
            (rendered, *valid_until),
            schema,
        ));
    }
    Ok(DerivedRows {
        snapshots: json_rows(&snapshot_rows)?,
        identifiers: json_rows(&identifier_rows)?,
        events: json_rows(&event_rows)?,
    })
}

/// Entities whose derived rows one statement writes: a snapshot row is a few
/// kB of JSON, and reading JSON into jsonb takes many times its size while
/// the statement runs, so large folds are written in slices.
pub const WRITE_SLICE: usize = 100;

/// The reducer state stored with an entity's snapshot (None without one).
pub fn stored_state(user: &Uuid, entity_id: &str) -> Result<Option<SnapshotState>, NeotomaError> {
    match db::json(
        "SELECT reducer_state FROM neotoma.entity_snapshots WHERE user_id = $1::uuid AND entity_id = $2",
        &[Arg::uuid(user), Arg::Text(entity_id)],
    )? {
        Value::Null => Ok(None),
        v => db::from_json(v, "reducer state").map(Some),
    }
}

/// Timeline event rows of an entity, as stored in `neotoma.timeline_events`:
/// those of its date fields' values (rendered) and those of its values'
/// stretches over valid time (its state).
pub fn event_rows_of(
    user: &Uuid,
    schema: &EntitySchema,
    entity_id: &str,
    state: &SnapshotState,
    rendered: &reducer::Rendered,
) -> Vec<EventRow> {
    let of_values = graph::derive_events(user, schema, entity_id, rendered);
    let of_validity = graph::derive_validity_events(user, &schema.entity_type, entity_id, state);
    of_values
        .into_iter()
        .chain(of_validity)
        .map(|e| EventRow {
            id: e.id,
            event_type: e.event_type,
            ts: e.timestamp,
            source_id: e.source_id,
            entity_id: entity_id.to_string(),
            source_field: e.source_field,
            observation_id: e.observation_id,
            properties: e.properties,
        })
        .collect()
}

/// Deletes the timeline events of these entities.
fn delete_events(user: &str, entity_ids: Vec<String>) -> Result<(), NeotomaError> {
    db::run(
        "DELETE FROM neotoma.timeline_events WHERE user_id = $1::uuid AND entity_id = ANY($2)",
        &[Arg::Text(user), Arg::Texts(entity_ids)],
    )
}

/// The snapshot row of an entity, as stored and as compared by verify().
fn snapshot_row<'a>(
    entity_id: &'a str,
    entity_type: &'a str,
    state: &'a SnapshotState,
    (r, valid_until): (&'a reducer::Rendered, Option<i64>),
    schema: Option<&'a EntitySchema>,
) -> SnapshotRow<'a> {
    SnapshotRow {
        entity_id,
        entity_type,
        schema_version: schema
            .map(|s| s.schema_version.as_str())
            .unwrap_or("unregistered"),
        snapshot: &r.snapshot,
        provenance: &r.provenance,
        field_provenance: &r.field_provenance,
        reducer_state: state,
        observation_count: state.observation_count,
        last_us: state.last_observation_at,
        valid_until,
        valid_values: valid_time::value_timelines(state),
    }
}

/// Every observation that counts for each of the entities `$2` (its own
/// and those of the entities merged into it), as reducer input, by id;
/// only those observed up to `$3` (microseconds) when given. Entity id →
/// its observations, one statement for a batch.
const OBSERVATIONS_OF: &str = "
    SELECT coalesce(jsonb_object_agg(x.owner, x.observations), '{}') FROM (
      SELECT t.owner, jsonb_agg(jsonb_build_object(
               'id', o.id, 'source_id', o.source_id, 'observed_at', neotoma._micros(o.observed_at),
               'source_priority', o.source_priority, 'specificity_score', o.specificity_score,
               'fields', o.fields
               , 'confidence', o.confidence, 'contests', (SELECT count(*) FROM neotoma.observation_contests c
                   WHERE c.user_id = o.user_id AND c.observation_id = o.id
                     AND ($3::bigint IS NULL OR c.created_at <= neotoma._from_micros($3)))
               , 'write_order', o.write_order
               , 'valid_from', neotoma._micros(o.valid_from), 'valid_to', neotoma._micros(o.valid_to) -- new
               ) ORDER BY o.id) AS observations
      FROM (SELECT id AS owner, id AS member FROM unnest($2::text[]) id
            UNION ALL
            SELECT e.merged_into, e.id FROM neotoma.entities e
            WHERE e.user_id = $1::uuid AND e.merged_into = ANY ($2::text[])) t
      JOIN neotoma.observations o ON o.user_id = $1::uuid AND o.entity_id = t.member
      WHERE o.kind NOT IN ('deletion', 'restoration')
        AND ($3::bigint IS NULL OR o.observed_at <= neotoma._from_micros($3))
        -- Not those a split moved to another entity.
        AND NOT EXISTS (SELECT FROM neotoma.observation_moves m WHERE m.user_id = $1::uuid AND m.observation_id = o.id)
      GROUP BY t.owner) x";

/// The observations of an entity (optionally only those observed up to `at`,
/// in microseconds since the epoch).
pub fn observations_of(
    user: &Uuid,
    entity_id: &str,
    at: Option<i64>,
) -> Result<Vec<Observation>, NeotomaError> {
    let mut by_entity = observations_of_many(&user.to_string(), vec![entity_id.to_string()], at)?;
    Ok(by_entity.remove(entity_id).unwrap_or_default())
}

/// The observations of these entities, by entity ([`OBSERVATIONS_OF`]); an
/// entity without any is absent.
fn observations_of_many(
    user: &str,
    entity_ids: Vec<String>,
    at: Option<i64>,
) -> Result<BTreeMap<String, Vec<Observation>>, NeotomaError> {
    let v = db::json(
        &crate::installed::adapt(OBSERVATIONS_OF)?,
        &[Arg::Text(user), Arg::Texts(entity_ids), Arg::OptInt(at)],
    )?;
    db::from_json(v, "observations")
}

/// The contradictions of one (live, unmerged) entity, as of `at` when
/// given: neotoma_core::contradictions over the observations the reducer
/// folds, with the type's merge policies.
pub fn contradictions_of(
    user: &Uuid,
    entity_id: &str,
    entity_type: &str,
    at: Option<i64>,
) -> Result<Vec<neotoma_core::contradictions::Contradiction>, NeotomaError> {
    let observations = observations_of(user, entity_id, at)?;
    let schemas = registry::active(*user, &[entity_type.to_string()])?;
    Ok(neotoma_core::contradictions::find(
        &observations,
        &policies_of(schemas.get(entity_type)),
    ))
}

/// Rebuilds the snapshots of these entities from all their observations
/// (a merged entity keeps no timeline events: its observations count for
/// the entity it was merged into). Runs as the extension's owner: callers
/// outside the trigger and `_recompute_type` go through [`recompute`].
fn rebuild(user: &Uuid, entity_ids: &[String]) -> Result<i64, NeotomaError> {
    let user_s = user.to_string();
    let ids: BTreeSet<String> = entity_ids.iter().cloned().collect();
    lock_user(&user_s, false)?;
    lock_types_of(&user_s, entity_ids)?;
    let locked = lock_entities(&user_s, &ids)?;
    let (merged, live): (Vec<&Locked>, Vec<&Locked>) =
        locked.iter().partition(|e| e.merged_into.is_some());
    if !merged.is_empty() {
        delete_events(&user_s, merged.iter().map(|e| e.id.clone()).collect())?;
    }
    let types: Vec<String> = live.iter().map(|e| e.entity_type.clone()).collect();
    let schemas = registry::active(*user, &types)?;
    let mut observations =
        observations_of_many(&user_s, live.iter().map(|e| e.id.clone()).collect(), None)?;
    let mut states = BTreeMap::new();
    for e in &live {
        let state = valid_time::reduce(
            &observations.remove(&e.id).unwrap_or_default(),
            &policies_of(schemas.get(e.entity_type.as_str())),
        );
        states.insert(e.id.clone(), (e.entity_type.clone(), state));
    }
    let replaced = states.keys().cloned().collect();
    store_states(&user_s, &states, &schemas, replaced)?;
    Ok(locked.len() as i64)
}

/// `neotoma_private._recompute(user_id, entity_ids)`: rebuilds these snapshots from
/// their observations. Runs as the extension's owner (derived data is
/// written by nobody else), for the session's own user only, unless the
/// caller is an operator.
#[pg_extern(
    volatile,
    parallel_unsafe,
    security_definer,
    name = "_recompute",
    schema = "neotoma_private"
)]
#[search_path(pg_catalog, neotoma, pg_temp)]
fn recompute_sql(user_id: pgrx::datum::Uuid, entity_ids: Vec<String>) -> i64 {
    let user = own_user(user_id);
    match rebuild(&user, &entity_ids) {
        Ok(n) => n,
        Err(e) => crate::error::raise(&e),
    }
}

/// `user_id` when it is the session's own user or the caller an operator;
/// otherwise the call is refused.
fn own_user(user_id: pgrx::datum::Uuid) -> Uuid {
    let user = Uuid::from_bytes(*user_id.as_bytes());
    let allowed = crate::tenancy::established_user().ok().flatten() == Some(user)
        || crate::settings::operator(true);
    if !allowed {
        crate::error::raise(&NeotomaError::new(
            ErrorCode::Forbidden,
            "snapshots can be recomputed only for the session's own user",
        ));
    }
    user
}

/// Tells the change feed that these entities were recomputed (after an
/// erasure, a contest: what a reader cached of them may be gone).
pub fn entities_recomputed(user: &Uuid, ids: &[String]) -> Result<(), NeotomaError> {
    db::run(
        "INSERT INTO neotoma.changes (user_id, kind, operation, entity_id, entity_type)
         SELECT user_id, 'entity', 'recomputed', id, entity_type FROM neotoma.entities
         WHERE user_id = $1 AND id = ANY($2) ORDER BY id",
        &[Arg::uuid(user), Arg::Texts(ids.to_vec())],
    )
}

/// `neotoma_private._recompute_targets(user_id, entity_ids)`: rebuilds the
/// snapshots these entities' observations count for (each entity, or the
/// entity it was merged into), as `_recompute` does, and tells the change
/// feed. The contests trigger calls it: a contest changes how its
/// observation's entity folds.
#[pg_extern(
    volatile,
    parallel_unsafe,
    security_definer,
    name = "_recompute_targets",
    schema = "neotoma_private"
)]
#[search_path(pg_catalog, neotoma, pg_temp)]
fn recompute_targets_sql(user_id: pgrx::datum::Uuid, entity_ids: Vec<String>) -> i64 {
    let user = own_user(user_id);
    let rebuilt = (|| {
        // The targets are read unlocked: under the user's lock no merge can
        // move them, and `rebuild` then locks types before entities, in the
        // order every writer uses.
        lock_user(&user.to_string(), false)?;
        let targets: Vec<String> = db::from_json(
            db::json(
                "SELECT coalesce(jsonb_agg(DISTINCT coalesce(merged_into, id)), '[]')
                 FROM neotoma.entities WHERE user_id = $1::uuid AND id = ANY($2)",
                &[Arg::uuid(user), Arg::Texts(entity_ids)],
            )?,
            "merge targets",
        )?;
        let n = rebuild(&user, &targets)?;
        entities_recomputed(&user, &targets)?;
        Ok(n)
    })();
    match rebuilt {
        Ok(n) => n,
        Err(e) => crate::error::raise(&e),
    }
}

/// `neotoma_private._rerender_past_validity(max)`: renders again, from
/// their observations, up to `max` stored snapshots whose `valid_until`
/// has passed (a value stopped or started holding in the world since they
/// were written), those due longest first; answers how many. The gateway's
/// upkeep calls it each round (`maintain_embedding_lists`); a read of one
/// entity renders its state again by itself.
#[pg_extern(
    volatile,
    parallel_unsafe,
    security_definer,
    name = "_rerender_past_validity",
    schema = "neotoma_private"
)]
#[search_path(pg_catalog, neotoma, pg_temp)]
fn rerender_past_validity(max: i32) -> i64 {
    let rendered = (|| {
        let due: BTreeMap<String, Vec<String>> = db::parsed(
            "SELECT coalesce(json_object_agg(d.user_id, d.ids), '{}')::text FROM (
               SELECT user_id, array_agg(entity_id ORDER BY entity_id) AS ids FROM (
                 SELECT user_id, entity_id FROM neotoma.entity_snapshots
                 WHERE valid_until <= now() ORDER BY valid_until, user_id, entity_id LIMIT $1) s
               GROUP BY user_id) d",
            &[Arg::Int(max.max(0) as i64)],
            "snapshots past their validity",
        )?;
        let mut n = 0;
        for (user, ids) in due {
            let user =
                Uuid::parse_str(&user).map_err(|e| NeotomaError::validation(e.to_string()))?;
            n += rebuild(&user, &ids)?;
        }
        Ok(n)
    })();
    match rendered {
        Ok(n) => n,
        Err(e) => crate::error::raise(&e),
    }
}

/// Rebuilds the snapshots of these entities of `user` (see `_recompute`).
pub fn recompute(user: &Uuid, entity_ids: &[String]) -> Result<i64, NeotomaError> {
    let n = db::json(
        &crate::installed::adapt("SELECT to_jsonb(neotoma_private._recompute($1::uuid, $2))")?,
        &[Arg::uuid(user), Arg::Texts(entity_ids.to_vec())],
    )?;
    Ok(n.as_i64().unwrap_or(0))
}

/// `neotoma_private._recompute_type(entity_type, only_user)`: rebuilds the snapshots
/// of every entity of a type, of every user or of one, after a schema change
/// that alters what the reducer or the timeline makes. Runs as the
/// extension's owner, so an operator's global change reaches every user;
/// anyone else may only recompute their own user's.
#[pg_extern(
    volatile,
    parallel_unsafe,
    security_definer,
    name = "_recompute_type",
    schema = "neotoma_private"
)]
#[search_path(pg_catalog, neotoma, pg_temp)]
fn recompute_type_sql(entity_type: &str, only_user: Option<pgrx::datum::Uuid>) -> i64 {
    let only = only_user.map(|u| Uuid::from_bytes(*u.as_bytes()));
    let allowed = match only {
        Some(u) => {
            crate::tenancy::established_user().ok().flatten() == Some(u)
                || crate::settings::operator(true)
        }
        None => crate::settings::operator(true),
    };
    if !allowed {
        crate::error::raise(&NeotomaError::new(
            ErrorCode::Forbidden,
            "recomputing other users' snapshots needs an operator",
        ));
    }
    match rebuild_type(entity_type, only.as_ref()) {
        Ok(n) => n,
        Err(e) => crate::error::raise(&e),
    }
}

/// The entities of a type (of one user, or of every user except those with
/// their own variant of the type, when the global schema changed), rebuilt.
fn rebuild_type(entity_type: &str, only_user: Option<&Uuid>) -> Result<i64, NeotomaError> {
    let rows = db::json(
        "SELECT coalesce(jsonb_object_agg(user_id, ids), '{}') FROM (
           SELECT e.user_id, jsonb_agg(e.id ORDER BY e.id) AS ids FROM neotoma.entities e
           WHERE e.entity_type = $1 AND e.merged_into IS NULL
             AND CASE WHEN $2::text IS NULL
                      THEN NOT EXISTS (SELECT 1 FROM neotoma.entity_schemas s
                                       WHERE s.user_id = e.user_id AND s.entity_type = $1 AND s.active)
                      ELSE e.user_id = $2::uuid END
           GROUP BY e.user_id) x",
        &[Arg::Text(entity_type), Arg::OptText(only_user.map(|u| u.to_string()).as_deref())],
    )?;
    let by_user: BTreeMap<Uuid, Vec<String>> = db::from_json(rows, "entities")?;
    let mut n = 0;
    for (user, ids) in by_user {
        for chunk in ids.chunks(500) {
            n += rebuild(&user, chunk)?;
        }
    }
    Ok(n)
}

/// Rebuilds the snapshots of a type after a schema change (see
/// `_recompute_type`); answers how many.
pub fn recompute_type(entity_type: &str, only_user: Option<&Uuid>) -> Result<i64, NeotomaError> {
    let n = db::json(
        &crate::installed::adapt("SELECT to_jsonb(neotoma_private._recompute_type($1, $2::uuid))")?,
        &[
            Arg::Text(entity_type),
            Arg::OptText(only_user.map(|u| u.to_string()).as_deref()),
        ],
    )?;
    Ok(n.as_i64().unwrap_or(0))
}

/// Recomputes every snapshot the session can see from the observations and
/// compares it with the stored one. Answers {ok, entities_checked,
/// mismatches: [{user_id, entity_id, differences}]} (at most 100 listed);
/// on a router, also `partitions` (whether each answers, and agrees with
/// the others on the global schemas: docs/scale-out.md).
/// With repair => true, mismatching snapshots are rewritten.
#[pg_extern(volatile, parallel_unsafe)]
fn verify(repair: default!(bool, false)) -> JsonB {
    match verify_all(repair) {
        Ok(v) => JsonB(v),
        Err(e) => pgrx::error!("neotoma.verify: {e}"),
    }
}

/// A page of relationships with the observations their snapshots fold
/// (assertions: not their deletions and restorations).
const VERIFY_RELATIONSHIPS_PAGE: &str = "
    SELECT coalesce(jsonb_agg(jsonb_build_object('user_id', r.user_id, 'id', r.id,
               'snapshot', r.snapshot, 'provenance', r.provenance, 'count', r.observation_count,
               'observations', (SELECT coalesce(jsonb_agg(jsonb_build_object('id', o.id,
                   'source_id', o.source_id, 'observed_at', neotoma._micros(o.observed_at),
                   'source_priority', o.source_priority, 'specificity_score', o.specificity_score,
                   'fields', o.metadata) ORDER BY o.id), '[]')
                 FROM neotoma.relationship_observations o
                 WHERE o.user_id = r.user_id AND o.relationship_id = r.id
                   AND o.kind = 'assertion'
                   )
               , 'valid_during', neotoma._valid_during(r.valid_during), 'expected_valid_during', neotoma._valid_during((SELECT coalesce(range_agg(tstzrange(o.valid_from, o.valid_to)), '{(,)}') FROM neotoma.relationship_observations o WHERE o.user_id = r.user_id AND o.relationship_id = r.id AND o.kind = 'assertion')) -- new
               ) ORDER BY r.user_id, r.id), '[]')
    FROM (SELECT * FROM neotoma.relationships
          WHERE merged_into IS NULL AND (user_id, id) > ($1::uuid, $2::uuid)
          ORDER BY user_id, id LIMIT $3) r";

/// Recomputes every visible relationship's snapshot from its observations.
fn verify_relationships() -> Result<(u64, Vec<Value>), NeotomaError> {
    let mut checked = 0;
    let mut mismatches = Vec::new();
    let mut after = (Uuid::nil().to_string(), Uuid::nil().to_string());
    loop {
        let rows = db::json(
            &crate::installed::adapt(VERIFY_RELATIONSHIPS_PAGE)?,
            &[
                Arg::Text(&after.0),
                Arg::Text(&after.1),
                Arg::Int(VERIFY_PAGE),
            ],
        )?;
        let Some(page) = rows.as_array().filter(|p| !p.is_empty()) else {
            break;
        };
        for r in page {
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
            } else if r["valid_during"] != r["expected_valid_during"] {
                // When it holds: the union of its assertions' intervals.
                mismatches.push(json!({"user_id": r["user_id"], "relationship_id": r["id"],
                                       "field": "valid_during",
                                       "expected": r["expected_valid_during"], "stored": r["valid_during"]}));
            }
        }
        let last = &page[page.len() - 1];
        after = (
            last["user_id"].as_str().unwrap_or_default().to_string(),
            last["id"].as_str().unwrap_or_default().to_string(),
        );
    }
    Ok((checked, mismatches))
}

/// Compares the timeline counts (`neotoma.timeline_counts`, summed) with
/// the events of every (user, workspace, day, type) the session can see;
/// with `repair`, rebuilds the count rows. Not on an older release's SQL,
/// which keeps no such counts.
fn verify_timeline_counts(repair: bool) -> Result<Vec<Value>, NeotomaError> {
    if !crate::installed::is_current() {
        return Ok(vec![]);
    }
    let v = db::json(
        "SELECT coalesce(jsonb_agg(jsonb_build_object('user_id', user_id, 'workspace', workspace,
                   'day', day, 'event_type', event_type, 'what', 'timeline_counts',
                   'expected', coalesce(a.events, 0), 'stored', coalesce(c.events, 0))
                 ORDER BY user_id, workspace, day, event_type), '[]')
         FROM (SELECT user_id, workspace, (event_timestamp AT TIME ZONE 'UTC')::date AS day, event_type,
                      count(*) AS events
               FROM neotoma.timeline_events GROUP BY 1, 2, 3, 4) a
         FULL JOIN (SELECT user_id, workspace, day, event_type, sum(events) AS events
                    FROM neotoma.timeline_counts GROUP BY 1, 2, 3, 4) c
           USING (user_id, workspace, day, event_type)
         WHERE coalesce(a.events, 0) <> coalesce(c.events, 0)",
        &[],
    )?;
    let mismatches: Vec<Value> = db::from_json(v, "timeline counts")?;
    if repair && !mismatches.is_empty() {
        db::run("SELECT neotoma_private._recount_events()", &[])?;
    }
    Ok(mismatches)
}

/// Compares the entity counts (`neotoma.entity_counts`, summed) with the
/// entities of every (user, type) the session can see; with `repair`,
/// replaces the count rows of those that differ.
fn verify_counts(repair: bool) -> Result<Vec<Value>, NeotomaError> {
    // Deleted entities are counted in neither; counts are per workspace.
    let live = "deleted_at IS NULL";
    let (ws, ws_key) = (", workspace", ", 'workspace', workspace");
    let v = db::json(
        &format!(
            "SELECT coalesce(jsonb_agg(jsonb_build_object('user_id', user_id, 'entity_type', entity_type{ws_key},
                   'what', 'entity_counts', 'expected', jsonb_build_object('current', ac, 'total', at),
                   'stored', jsonb_build_object('current', cc, 'total', ct))
                 ORDER BY user_id, entity_type{ws}), '[]')
         FROM (SELECT user_id, entity_type{ws}, coalesce(a.current, 0) AS ac, coalesce(a.total, 0) AS at,
                      coalesce(c.current, 0) AS cc, coalesce(c.total, 0) AS ct
               FROM (SELECT user_id, entity_type{ws},
                            count(*) FILTER (WHERE merged_into IS NULL AND {live}) AS current,
                            count(*) FILTER (WHERE {live}) AS total
                     FROM neotoma.entities GROUP BY user_id, entity_type{ws}) a
               FULL JOIN (SELECT user_id, entity_type{ws}, sum(current) AS current, sum(total) AS total
                          FROM neotoma.entity_counts GROUP BY user_id, entity_type{ws}) c
                 USING (user_id, entity_type{ws})) x
         WHERE ac <> cc OR at <> ct"
        ),
        &[],
    )?;
    let mismatches: Vec<Value> = db::from_json(v, "entity counts")?;
    if repair && !mismatches.is_empty() {
        db::run(
            &crate::installed::adapt("SELECT neotoma_private._recount_entities()")?,
            &[],
        )?;
    }
    Ok(mismatches)
}

/// The snapshots and timeline events whose copy of their entity's
/// workspace differs from it ({user_id, entity_id, what}); with `repair`,
/// copied again, as the owner (as the fold writes them).
fn verify_workspaces(repair: bool) -> Result<Vec<Value>, NeotomaError> {
    const DIFFERENT: &str = "
        SELECT s.user_id, s.entity_id, 'snapshot_workspace' AS what
        FROM neotoma.entity_snapshots s
        JOIN neotoma.entities e ON e.user_id = s.user_id AND e.id = s.entity_id
        WHERE s.workspace <> e.workspace
        UNION
        SELECT t.user_id, t.entity_id, 'timeline_event_workspace'
        FROM neotoma.timeline_events t
        JOIN neotoma.entities e ON e.user_id = t.user_id AND e.id = t.entity_id
        WHERE t.workspace <> e.workspace";
    let v = db::json(
        &format!(
            "SELECT coalesce(jsonb_agg(to_jsonb(d) ORDER BY d.user_id, d.entity_id, d.what), '[]')
             FROM ({DIFFERENT}) d"
        ),
        &[],
    )?;
    let mismatches: Vec<Value> = db::from_json(v, "workspaces")?;
    if repair && !mismatches.is_empty() {
        crate::owner::as_owner(|| {
            db::run(
                "UPDATE neotoma.entity_snapshots s SET workspace = e.workspace FROM neotoma.entities e
                 WHERE e.user_id = s.user_id AND e.id = s.entity_id AND s.workspace <> e.workspace",
                &[],
            )?;
            db::run(
                "UPDATE neotoma.timeline_events t SET workspace = e.workspace FROM neotoma.entities e
                 WHERE e.user_id = t.user_id AND e.id = t.entity_id AND t.workspace <> e.workspace",
                &[],
            )
        })?;
    }
    Ok(mismatches)
}

/// The stored timeline events of an entity, in the shape `event_rows_of` makes.
fn stored_events_of(user: &Uuid, entity_id: &str) -> Result<Vec<EventRow>, NeotomaError> {
    let v = db::json(
        "SELECT coalesce(jsonb_agg(jsonb_build_object('id', id, 'event_type', event_type,
                   'ts', neotoma._micros(event_timestamp), 'source_id', source_id, 'entity_id', entity_id,
                   'source_field', source_field, 'observation_id', observation_id, 'properties', properties)
                 ORDER BY id), '[]')
         FROM neotoma.timeline_events WHERE user_id = $1::uuid AND entity_id = $2",
        &[Arg::uuid(user), Arg::Text(entity_id)],
    )?;
    db::from_json(v, "timeline events")
}

fn same_events(mut expected: Vec<EventRow>, stored: &[EventRow]) -> bool {
    expected.sort_by_key(|e| e.id);
    expected == stored
}

/// Entities (and relationships) verify() reads at once: a database of any
/// size is checked page by page.
const VERIFY_PAGE: i64 = 500;

/// The next page of current entities after (user, id), with their stored
/// snapshots.
fn entity_page(after: &(String, String)) -> Result<Vec<Value>, NeotomaError> {
    let v = db::json(
        &crate::installed::adapt(
            "SELECT coalesce(jsonb_agg(jsonb_build_object('user_id', e.user_id, 'id', e.id,
                   'entity_type', e.entity_type,
                   'stored', to_jsonb(s) - 'user_id' - 'computed_at' - 'valid_until'
                   , 'valid_until', neotoma._micros(s.valid_until) -- new
                   ) ORDER BY e.user_id, e.id), '[]')
         FROM (SELECT user_id, id, entity_type FROM neotoma.entities
               WHERE merged_into IS NULL AND (user_id, id) > ($1::uuid, $2)
               ORDER BY user_id, id LIMIT $3) e
         LEFT JOIN neotoma.entity_snapshots s ON s.user_id = e.user_id AND s.entity_id = e.id",
        )?,
        &[
            Arg::Text(&after.0),
            Arg::Text(&after.1),
            Arg::Int(VERIFY_PAGE),
        ],
    )?;
    db::from_json(v, "entities")
}

fn verify_all(repair: bool) -> Result<Value, NeotomaError> {
    let now = db::transaction_start_micros();
    let mut checked = 0u64;
    let mut mismatches = Vec::new();
    let mut mismatch_count: u64 = 0;
    let mut schemas: BTreeMap<Uuid, BTreeMap<String, registry::Active>> = BTreeMap::new();
    let mut after = (Uuid::nil().to_string(), String::new());
    loop {
        let page = entity_page(&after)?;
        let Some(last) = page.last() else { break };
        after = (
            last["user_id"].as_str().unwrap_or_default().to_string(),
            last["id"].as_str().unwrap_or_default().to_string(),
        );
        // The page's observations, one statement per user in it.
        let mut by_user: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for e in &page {
            by_user
                .entry(e["user_id"].as_str().unwrap_or_default().to_string())
                .or_default()
                .push(e["id"].as_str().unwrap_or_default().to_string());
        }
        let mut page_observations = BTreeMap::new();
        for (user, ids) in by_user {
            for (id, observations) in observations_of_many(&user, ids, None)? {
                page_observations.insert((user.clone(), id), observations);
            }
        }
        for e in &page {
            checked += 1;
            let user: Uuid = db::from_json(e["user_id"].clone(), "user id")?;
            let id = e["id"].as_str().unwrap_or_default();
            let entity_type = e["entity_type"].as_str().unwrap_or_default();
            let user_schemas = match schemas.entry(user) {
                std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::btree_map::Entry::Vacant(e) => {
                    e.insert(registry::all_active(user)?)
                }
            };
            let schema = user_schemas.get(entity_type);
            let observations = page_observations
                .remove(&(user.to_string(), id.to_string()))
                .unwrap_or_default();
            if observations.is_empty() && e["stored"].is_null() {
                continue;
            }
            let state = valid_time::reduce(&observations, &policies_of(schema));
            // A render holds until its valid_until, after which the upkeep
            // renders it again: it is checked as of the last instant it
            // still holds, if that is before now.
            let stored_until = e["valid_until"].as_i64();
            let instant = stored_until.map_or(now, |u| now.min(u - 1));
            let (rendered, valid_until) = valid_time::rendered_at(&state, instant);
            let expected = serde_json::to_value(snapshot_row(
                id,
                entity_type,
                &state,
                (&rendered, valid_until),
                schema.map(|a| &*a.schema),
            ))
            .unwrap_or_default();
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
            if stored_until != valid_until {
                differences.push(
                    json!({"what": "valid_until", "expected": valid_until, "stored": stored_until}),
                );
            }
            // (Absent on the previous release's SQL, which has no column.)
            if stored.get("valid_values").unwrap_or(&Value::Null) != &expected["valid_values"] {
                differences.push(
                    json!({"what": "valid_values", "expected": expected["valid_values"],
                                        "stored": stored.get("valid_values")}),
                );
            }
            let stored_state: Option<SnapshotState> = stored
                .get("reducer_state")
                .and_then(|v| serde_json::from_value(v.clone()).ok());
            if stored_state.as_ref() != Some(&state) {
                differences.push(json!({"what": "reducer_state"}));
            }
            let expected_events = match schema {
                Some(a) => event_rows_of(&user, &a.schema, id, &state, &rendered),
                None => vec![],
            };
            let stored_events = stored_events_of(&user, id)?;
            let expected_json = json!(expected_events);
            if !same_events(expected_events, &stored_events) {
                differences.push(json!({"what": "timeline_events", "expected": expected_json, "stored": stored_events}));
            }
            if !differences.is_empty() {
                mismatch_count += 1;
                if mismatches.len() < 100 {
                    mismatches.push(
                        json!({"user_id": user, "entity_id": id, "differences": differences}),
                    );
                }
                if repair {
                    recompute(&user, &[id.to_string()])?;
                }
            }
        }
    }
    let (relationships_checked, relationship_mismatches) = verify_relationships()?;
    mismatch_count += relationship_mismatches.len() as u64;
    mismatches.extend(relationship_mismatches.into_iter().take(100));
    // Deleted or not, as the latest deletion or restoration says.
    use crate::lifecycle::Marked;
    for marked in [Marked::Entities, Marked::Relationships] {
        let lifecycle = crate::lifecycle::mismatches(marked)?;
        if repair && !lifecycle.is_empty() {
            crate::lifecycle::repair(marked, None)?;
        }
        mismatch_count += lifecycle.len() as u64;
        mismatches.extend(lifecycle.into_iter().take(100));
    }
    let workspace_mismatches = verify_workspaces(repair)?;
    mismatch_count += workspace_mismatches.len() as u64;
    mismatches.extend(workspace_mismatches.into_iter().take(100));
    let count_mismatches = verify_counts(repair)?;
    mismatch_count += count_mismatches.len() as u64;
    mismatches.extend(count_mismatches.into_iter().take(100));
    let timeline_count_mismatches = verify_timeline_counts(repair)?;
    mismatch_count += timeline_count_mismatches.len() as u64;
    mismatches.extend(timeline_count_mismatches.into_iter().take(100));
    let name_mismatches = verify_name_trigrams(repair)?;
    mismatch_count += name_mismatches.len() as u64;
    mismatches.extend(name_mismatches.into_iter().take(100));
    let posting_mismatches = verify_word_postings(repair)?;
    mismatch_count += posting_mismatches.len() as u64;
    mismatches.extend(posting_mismatches.into_iter().take(100));
    if crate::embeddings::with_model(|_| ()).is_some() {
        let embedding_mismatches = verify_embeddings(repair)?;
        mismatch_count += embedding_mismatches.len() as u64;
        mismatches.extend(embedding_mismatches.into_iter().take(100));
    }
    let mut answer = json!({
        "ok": mismatch_count == 0,
        "entities_checked": checked,
        "relationships_checked": relationships_checked,
        "mismatch_count": mismatch_count,
        "mismatches": mismatches,
        "repaired": repair && mismatch_count > 0,
    });
    // A router holds no user's data: what it checks is that its partitions
    // answer and agree on what each keeps a copy of (the global schemas;
    // neotoma_router.verify(), as the owner: digests, no user's rows). Each
    // partition's own data is verified there.
    if crate::routing::is_router() {
        let partitions =
            crate::owner::as_owner(|| db::json("SELECT neotoma_router.verify()", &[]))?;
        answer["ok"] = json!(mismatch_count == 0 && partitions["ok"] == json!(true));
        answer["partitions"] = partitions["partitions"].clone();
    }
    Ok(answer)
}

/// A table kept by triggers from the snapshots, as `verify()` checks it:
/// `expected` and `stored` select the same columns, user_id and entity_id
/// first; `delete` and `insert` ($1 user, $2 entity) rewrite one entity's
/// rows.
struct TriggerKept<'a> {
    what: &'a str,
    expected: &'a str,
    stored: &'a str,
    delete: &'a str,
    insert: &'a str,
}

/// The entities whose rows differ from what their snapshots give
/// ({user_id, entity_id, what}, in key order); with `repair`, their rows
/// rewritten, as the owner (as the triggers write them).
fn verify_derived(rows: &TriggerKept, repair: bool) -> Result<Vec<Value>, NeotomaError> {
    let TriggerKept {
        what,
        expected,
        stored,
        delete,
        insert,
    } = rows;
    let different = format!(
        "WITH expected AS ({expected}),
         stored AS ({stored}),
         different AS ((SELECT * FROM expected EXCEPT SELECT * FROM stored)
                       UNION (SELECT * FROM stored EXCEPT SELECT * FROM expected))
         SELECT coalesce(jsonb_agg(jsonb_build_object('user_id', user_id, 'entity_id', entity_id,
                                                      'what', '{what}')
                                   ORDER BY user_id, entity_id), '[]')
         FROM (SELECT DISTINCT user_id, entity_id FROM different) d"
    );
    let v = db::json(&different, &[])?;
    let mismatches: Vec<Value> = db::from_json(v, what)?;
    if repair {
        for m in &mismatches {
            let key = [
                Arg::Text(m["user_id"].as_str().unwrap_or_default()),
                Arg::Text(m["entity_id"].as_str().unwrap_or_default()),
            ];
            crate::owner::as_owner(|| {
                db::run(delete, &key)?;
                db::run(insert, &key)
            })?;
        }
    }
    Ok(mismatches)
}

/// Compares the index of name trigrams (`neotoma.entity_name_trigrams`,
/// kept by triggers) with the trigrams of every snapshot the session can
/// see; with `repair`, rewrites the rows of the entities that differ.
fn verify_name_trigrams(repair: bool) -> Result<Vec<Value>, NeotomaError> {
    // The rows each snapshot's name gives: its trigrams, with the name's
    // trigram count, and (from 0.24.0 on) its words' deletion variants; and
    // the rows stored.
    const EXPECTED: &str = "
        SELECT s.user_id, g AS trigram, s.entity_id
               , length(s.name_trigrams) AS name_trigram_count
        FROM neotoma.entity_snapshots s, unnest(tsvector_to_array(s.name_trigrams)
          || neotoma._name_variants(neotoma._snapshot_name(s.snapshot)) -- new
          ) g";
    const STORED: &str = "
        SELECT t.user_id, t.trigram, t.entity_id
               , t.name_trigram_count
        FROM neotoma.entity_name_trigrams t";
    let expected = crate::installed::adapt(EXPECTED)?;
    let stored = crate::installed::adapt(STORED)?;
    verify_derived(
        &TriggerKept {
            what: "entity_name_trigrams",
            expected: &expected,
            stored: &stored,
            delete: "DELETE FROM neotoma.entity_name_trigrams WHERE user_id = $1::uuid AND entity_id = $2",
            insert: &format!(
                "INSERT INTO neotoma.entity_name_trigrams
                 SELECT * FROM ({expected}) x WHERE x.user_id = $1::uuid AND x.entity_id = $2"
            ),
        },
        repair,
    )
}

/// Compares the postings of the users' posted words
/// (`neotoma.word_postings`, kept by triggers, sql/word_postings.sql) with
/// the words of every snapshot the session can see; with `repair`,
/// rewrites the rows of the entities that differ. (The previous release's
/// SQL has none.)
fn verify_word_postings(repair: bool) -> Result<Vec<Value>, NeotomaError> {
    if !crate::installed::is_current() {
        return Ok(vec![]);
    }
    const EXPECTED: &str = "
        SELECT s.user_id, s.entity_id, k.lexeme, s.workspace, s.entity_type
        FROM neotoma.entity_snapshots s
        CROSS JOIN LATERAL unnest(tsvector_to_array(s.search_vector)) l(l)
        JOIN neotoma.posted_lexemes k ON k.user_id = s.user_id AND k.lexeme = l.l
        WHERE s.user_id IN (SELECT p.user_id FROM neotoma.posted_lexemes p)";
    verify_derived(
        &TriggerKept {
            what: "word_postings",
            expected: EXPECTED,
            stored: "SELECT p.user_id, p.entity_id, p.lexeme, p.workspace, p.entity_type
                     FROM neotoma.word_postings p",
            delete: "DELETE FROM neotoma.word_postings WHERE user_id = $1::uuid AND entity_id = $2",
            insert: &format!(
                "INSERT INTO neotoma.word_postings (user_id, entity_id, lexeme, workspace, entity_type)
                 SELECT * FROM ({EXPECTED}) x WHERE x.user_id = $1::uuid AND x.entity_id = $2"
            ),
        },
        repair,
    )
}

/// Compares the server model's embeddings (`neotoma.entity_embeddings`,
/// kept by triggers) with those it gives every snapshot the session can see
/// (none missing, none stale, none of any model of a snapshot gone; a
/// remote provider's are dropped by the triggers when the text changes and
/// written only for the current text); with `repair`,
/// rewrites those that differ, e.g. after the model was installed or
/// changed. Skipped while there is no model.
fn verify_embeddings(repair: bool) -> Result<Vec<Value>, NeotomaError> {
    // Every snapshot's embedding by the server's model, as the trigger
    // writes it (none where the model knows no word of it).
    const EXPECTED: &str = "
        SELECT * FROM (
          SELECT s.user_id, s.entity_id, s.entity_type, neotoma._embedding_model() AS model,
                 neotoma._entity_embedding(s.entity_type, s.snapshot) AS embedding
          FROM neotoma.entity_snapshots s) e
        WHERE e.embedding IS NOT NULL";
    // The rows checked: the server model's, and any whose snapshot is gone.
    const CHECKED: &str = "
        (v.model = neotoma._embedding_model()
         OR NOT EXISTS (SELECT FROM neotoma.entity_snapshots s
                        WHERE s.user_id = v.user_id AND s.entity_id = v.entity_id))";
    verify_derived(
        &TriggerKept {
            what: "entity_embeddings",
            expected: EXPECTED,
            stored: &format!(
                "SELECT v.user_id, v.entity_id, v.entity_type, v.model, v.embedding
                 FROM neotoma.entity_embeddings v WHERE {CHECKED}"
            ),
            delete: &format!(
                "DELETE FROM neotoma.entity_embeddings v
                 WHERE v.user_id = $1::uuid AND v.entity_id = $2 AND {CHECKED}"
            ),
            insert: &format!(
                "INSERT INTO neotoma.entity_embeddings (user_id, entity_id, entity_type, model, embedding)
                 SELECT * FROM ({EXPECTED}) x WHERE x.user_id = $1::uuid AND x.entity_id = $2"
            ),
        },
        repair,
    )
}

/// The derived rows of a slice of entities (the CTEs of
/// `write_snapshots.sql`), alone.
const WRITE_SNAPSHOTS: &str = concat!(
    include_str!("../../sql/queries/write_snapshots.sql"),
    "\nSELECT 1"
);
