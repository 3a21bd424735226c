//! Stage 5: entities (new ones), observations and raw fragments, and the
//! snapshots they make: the store folds its own observations
//! (`crate::snapshots::Fold`) and writes them with their snapshots in one
//! statement.

use super::prepare::{Prepared, PreparedBatch};
use crate::db::{self, Arg};
use crate::registry::Active;
use crate::snapshots::{json_rows, DerivedRows, Fold};
use neotoma_core::actions::store::{StoredEntity, DEFAULT_SOURCE_PRIORITY};
use neotoma_core::confidence::Confidence;
use neotoma_core::ids::derived_uuid;
use neotoma_core::reducer::Observation;
use neotoma_core::schema::FieldType;
use neotoma_core::valid_time::Interval;
use neotoma_core::NeotomaError;
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use uuid::Uuid;

/// Where stored entities come from.
pub struct Origin {
    pub user: Uuid,
    pub source_id: Uuid,
    pub run_id: Uuid,
    /// The observations' kind: `store` (given by an agent) or
    /// `interpretation` (read from a source by an interpreter).
    pub kind: &'static str,
    pub trust: Trust,
    /// Microseconds since the epoch; none = the transaction's time.
    pub observed_at: Option<i64>,
    /// When in the world what it observes holds (an interpreter's: always).
    pub valid: Interval,
}

/// How far a source is trusted: its priority and confidence rating, which
/// what is observed from it gets.
#[derive(Clone, Copy)]
pub struct Trust {
    pub priority: i32,
    pub confidence: Option<Confidence>,
}

impl Trust {
    /// A source's trust as a query reads it: `priority` and `confidence`
    /// (absent before 0.11.0).
    pub fn of(source: &Value) -> Trust {
        Trust {
            priority: source["priority"]
                .as_i64()
                .map_or(DEFAULT_SOURCE_PRIORITY, |p| p as i32),
            confidence: source["confidence"]
                .as_str()
                .and_then(|c| Confidence::parse(c).ok()),
        }
    }
}

impl Origin {
    /// Entities an interpreter read from a source, observed now, with the
    /// source's trust.
    pub fn interpretation(user: Uuid, source_id: Uuid, run_id: Uuid, trust: Trust) -> Origin {
        Origin {
            user,
            source_id,
            run_id,
            kind: "interpretation",
            trust,
            observed_at: None,
            valid: Interval::ALWAYS,
        }
    }
}

/// What storing a batch made.
#[derive(Default)]
pub struct Stored {
    pub entities: Vec<StoredEntity>,
    pub entities_created: u64,
    pub observations_created: u64,
    pub unknown_fields: u64,
    /// Whether the run's counts and status were written with the rows.
    pub run_finished: bool,
}

/// Entities written per statement: a file of many rows is stored in slices
/// of this size, so memory stays small and every statement's snapshot work
/// stays bounded (at most one `crate::snapshots` write slice).
const CHUNK: usize = 100;

pub fn observation_id(o: &Origin, index: usize) -> Uuid {
    derived_uuid(
        "observation",
        &[
            &o.user.to_string(),
            &o.source_id.to_string(),
            &o.run_id.to_string(),
            &index.to_string(),
        ],
    )
}

/// Writes entities (new ones), observations and raw_fragments of a batch,
/// in slices of [`CHUNK`]; answers what it made.
pub fn store_entities(origin: &Origin, batch: &PreparedBatch) -> Result<Stored, NeotomaError> {
    crate::statistics::note_rows(batch.entities.len());
    let mut stored = Stored::default();
    for (n, chunk) in batch.entities.chunks(CHUNK).enumerate() {
        if n > 0 {
            crate::statistics::keep_current_within()?;
        }
        store_chunk(origin, chunk, n * CHUNK, &batch.schemas, &mut stored)?;
    }
    Ok(stored)
}

/// A store's observations ($5 rows, a jsonb[] read one at a time; $1 user, $6 source, $7 run, $8 kind,
/// $9 source priority, $10 observed at in microseconds) and raw fragments
/// ($11), as CTEs. `r->'value'`, not a record column: a JSON null stays a
/// JSON null.
macro_rules! observation_ctes {
    () => {
        "observations AS (
  INSERT INTO neotoma.observations (user_id, id, entity_id, entity_type, schema_version, source_id,
      interpretation_run_id, kind, observed_at, specificity_score, source_priority, fields
      , confidence
      , write_order
      , valid_from, valid_to -- new
      )
  SELECT $1::uuid, (r->>'id')::uuid, r->>'entity_id', r->>'entity_type', r->>'schema_version', $6::uuid,
         $7::uuid, $8, neotoma._from_micros($10), (r->>'specificity_score')::double precision, $9::int,
         r->'fields'
         , r->>'confidence'
         , (r->>'write_order')::bigint
         , neotoma._from_micros((r->>'valid_from')::bigint), neotoma._from_micros((r->>'valid_to')::bigint) -- new
  FROM unnest($5::jsonb[]) AS r
  RETURNING entity_id, entity_type
), fragments AS (
  INSERT INTO neotoma.raw_fragments (user_id, id, source_id, entity_id, observation_id,
      interpretation_run_id, entity_type, fragment_key, fragment_value, inferred_type)
  SELECT $1::uuid, (r->>'id')::uuid, $6::uuid, r->>'entity_id', (r->>'observation_id')::uuid,
         $7::uuid, r->>'entity_type', r->>'key', r->'value', r->>'inferred_type'
  FROM jsonb_array_elements($11) AS r
  ON CONFLICT DO NOTHING
)"
    };
}

/// A slice written by a store that folds its own observations: the derived rows of the fold ($2 to $4), the observations and fragments,
/// and the run's counts so far ($12 entities created, $13 observations,
/// $14 unknown fields), in one statement.
const WRITE_FOLDED: &str = concat!(
    include_str!("../../../sql/queries/write_snapshots.sql"),
    ", ",
    observation_ctes!(),
    ", run AS (
  UPDATE neotoma.interpretation_runs SET status = 'completed', entities_created = $12,
      observations_created = $13, unknown_fields_count = $14, error = NULL,
      finished_at = clock_timestamp()
  WHERE user_id = $1::uuid AND id = $7::uuid)
  -- The change feed's rows of these entities, and of a structured store's
  -- new source when $15 (0.7.0 on; the feed's triggers leave these to it).
  , feed AS (
  INSERT INTO neotoma.changes (user_id, kind, operation, entity_id, entity_type, source_id)
  SELECT $1::uuid, 'source', 'created', NULL::text, NULL::text, $6::uuid WHERE $15
  UNION ALL (SELECT DISTINCT ON (o.entity_id) $1::uuid, 'entity',
         CASE $8 WHEN 'correction' THEN 'corrected' ELSE 'observed' END, o.entity_id, o.entity_type, $6::uuid
  FROM observations o ORDER BY o.entity_id))
SELECT 1"
);

/// An observation row as the statement reads it.
#[derive(Serialize)]
struct ObservationRow<'a> {
    id: &'a str,
    entity_id: &'a str,
    entity_type: &'a str,
    schema_version: &'a str,
    specificity_score: f64,
    fields: &'a Map<String, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    confidence: Option<Confidence>,
    write_order: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    valid_from: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    valid_to: Option<i64>,
}

/// One slice of a batch; `first` is the index of its first entity in the
/// batch (observation ids derive from it). `stored` collects what the
/// batch made so far.
fn store_chunk(
    origin: &Origin,
    prepared: &[Prepared],
    first: usize,
    schemas: &BTreeMap<String, Active>,
    stored: &mut Stored,
) -> Result<(), NeotomaError> {
    let user = origin.user;
    let user_s = user.to_string();
    let created = insert_entities(&user, prepared)?;
    let ids: BTreeSet<String> = prepared
        .iter()
        .map(|p| p.identity.entity_id.clone())
        .collect();
    // New observations go to the entity an entity was merged into.
    let fold = Fold::begin(&user, &ids, prepared.len())?;
    let target = |p: &Prepared| fold.target_of(&p.identity.entity_id);
    let observed_at = origin
        .observed_at
        .unwrap_or_else(db::transaction_start_micros);

    // In the order given: of two observations of one field the later one
    // wins (bulk's operations, or a file's rows, in order).
    let write_orders = fold.write_orders.clone();
    let mut observations = Vec::with_capacity(prepared.len());
    let mut fragment_rows = Vec::new();
    for (i, p) in prepared.iter().enumerate() {
        let entity_id = target(p);
        let observation_id = observation_id(origin, first + i).to_string();
        for (key, value) in &p.unknown {
            fragment_rows.push(json!({
                "id": derived_uuid("fragment", &[&user_s, &observation_id, key]).to_string(),
                "entity_id": entity_id, "observation_id": observation_id, "entity_type": p.entity_type,
                "key": key, "value": value,
                "inferred_type": FieldType::infer(value).map_or("null", FieldType::as_str),
            }));
        }
        stored.entities.push(StoredEntity {
            entity_id: entity_id.clone(),
            entity_type: p.entity_type.clone(),
            observation_id: observation_id.clone(),
        });
        observations.push((
            entity_id,
            Observation {
                id: observation_id,
                source_id: origin.source_id.to_string(),
                observed_at,
                source_priority: origin.trust.priority,
                specificity_score: p.specificity,
                fields: p.fields.clone(),
                confidence: origin.trust.confidence,
                contests: 0,
                write_order: write_orders.get(i).copied().unwrap_or(0),
                valid_from: origin.valid.from,
                valid_to: origin.valid.to,
            },
        ));
    }
    let observation_rows = json_rows(
        &prepared
            .iter()
            .zip(&observations)
            .map(|(p, (entity_id, o))| ObservationRow {
                id: &o.id,
                entity_id,
                entity_type: &p.entity_type,
                schema_version: &p.schema_version,
                specificity_score: o.specificity_score,
                fields: &o.fields,
                confidence: o.confidence,
                write_order: o.write_order,
                valid_from: o.valid_from,
                valid_to: o.valid_to,
            })
            .collect::<Vec<_>>(),
    )?;
    stored.entities_created += created;
    stored.observations_created += prepared.len() as u64;
    stored.unknown_fields += fragment_rows.len() as u64;
    let fragment_rows = Value::Array(fragment_rows);
    let totals = [
        stored.entities_created,
        stored.observations_created,
        stored.unknown_fields,
    ];
    // A structured store's source is new (a duplicate never gets here) and
    // its feed row is written with the first slice.
    let new_structured_source = origin.kind == "store" && first == 0;
    let args = move |derived: DerivedRows| {
        vec![
            Arg::uuid(user),
            Arg::JsonRows(derived.snapshots),
            Arg::JsonRows(derived.identifiers),
            Arg::JsonRows(derived.events),
            Arg::JsonRows(observation_rows),
            Arg::uuid(origin.source_id),
            Arg::uuid(origin.run_id),
            Arg::Text(origin.kind),
            Arg::Int(origin.trust.priority as i64),
            Arg::Int(observed_at),
            Arg::JsonText(fragment_rows.to_string()),
            Arg::Int(totals[0] as i64),
            Arg::Int(totals[1] as i64),
            Arg::Int(totals[2] as i64),
            Arg::Bool(new_structured_source),
        ]
    };
    fold.write(observations, schemas, |derived| {
        db::run(&crate::installed::adapt(WRITE_FOLDED)?, &args(derived))
    })?;
    stored.run_finished = true;
    Ok(())
}

/// Inserts the entities of a slice that are new; answers how many were.
fn insert_entities(user: &Uuid, prepared: &[Prepared]) -> Result<u64, NeotomaError> {
    let mut entity_rows: BTreeMap<&str, Value> = BTreeMap::new();
    for p in prepared {
        entity_rows.entry(&p.identity.entity_id).or_insert_with(|| {
            json!({"id": p.identity.entity_id, "entity_type": p.entity_type,
                   "canonical_name": p.identity.canonical_name, "identity_key": p.identity.identity_key})
        });
    }
    let created = db::json(
        &crate::installed::adapt(
            "WITH ins AS (
           INSERT INTO neotoma.entities (user_id, id, entity_type, canonical_name, identity_key
                                        , workspace
                                        )
           SELECT $1::uuid, r.id, r.entity_type, r.canonical_name, r.identity_key
                  , $3
           FROM jsonb_to_recordset($2) AS r(id text, entity_type text, canonical_name text, identity_key text)
           ORDER BY r.id
           ON CONFLICT (user_id, id) DO NOTHING RETURNING 1)
         SELECT to_jsonb(count(*)) FROM ins",
        )?,
        &[
            Arg::uuid(user),
            Arg::Json(&Value::Array(entity_rows.into_values().collect())),
            Arg::Text(&crate::scope::current().write_workspace()),
        ],
    )?;
    Ok(created.as_u64().unwrap_or(0))
}
