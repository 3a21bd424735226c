//! Stage 5: entities (new ones), observations and raw fragments. The
//! observation trigger folds each statement's observations into snapshots.

use super::prepare::{Prepared, PreparedBatch};
use crate::db::{self, Arg};
use neotoma_core::actions::store::StoredEntity;
use neotoma_core::ids::derived_uuid;
use neotoma_core::schema::FieldType;
use neotoma_core::NeotomaError;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use uuid::Uuid;

/// Where stored entities come from.
pub struct Origin {
    pub user: Uuid,
    pub source_id: Uuid,
    pub run_id: Uuid,
    /// The observations' kind: `store` (given by an agent) or
    /// `interpretation` (read from a source by an interpreter).
    pub kind: &'static str,
    pub source_priority: i32,
    /// Microseconds since the epoch; none = the transaction's time.
    pub observed_at: Option<i64>,
}

impl Origin {
    /// Entities an interpreter read from a source, observed now, at the
    /// source's priority.
    pub fn interpretation(
        user: Uuid,
        source_id: Uuid,
        run_id: Uuid,
        source_priority: i32,
    ) -> Origin {
        Origin {
            user,
            source_id,
            run_id,
            kind: "interpretation",
            source_priority,
            observed_at: None,
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
}

/// Entities written per statement: a file of many rows is stored in slices
/// of this size, so memory stays small and every statement's snapshot work
/// (the observation trigger) stays bounded.
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
        let part = store_chunk(origin, chunk, n * CHUNK)?;
        stored.entities.extend(part.entities);
        stored.entities_created += part.entities_created;
        stored.observations_created += part.observations_created;
        stored.unknown_fields += part.unknown_fields;
    }
    Ok(stored)
}

/// One slice of a batch; `first` is the index of its first entity in the
/// batch (observation ids derive from it).
fn store_chunk(
    origin: &Origin,
    prepared: &[Prepared],
    first: usize,
) -> Result<Stored, NeotomaError> {
    let user = origin.user;
    let user_s = user.to_string();
    let observation_ids: Vec<String> = (0..prepared.len())
        .map(|i| observation_id(origin, first + i).to_string())
        .collect();

    // New entities are inserted; entities merged into others are looked up
    // in the same statement: new observations go to the merge target.
    let mut entity_rows: BTreeMap<String, Value> = BTreeMap::new();
    for p in prepared {
        entity_rows.entry(p.identity.entity_id.clone()).or_insert_with(|| {
            json!({"id": p.identity.entity_id, "entity_type": p.entity_type,
                   "canonical_name": p.identity.canonical_name, "identity_key": p.identity.identity_key})
        });
    }
    let ids: Vec<String> = entity_rows.keys().cloned().collect();
    let mut written = db::json(
        "WITH ins AS (
           INSERT INTO neotoma.entities (user_id, id, entity_type, canonical_name, identity_key)
           SELECT $1::uuid, r.id, r.entity_type, r.canonical_name, r.identity_key
           FROM jsonb_to_recordset($2) AS r(id text, entity_type text, canonical_name text, identity_key text)
           ORDER BY r.id
           ON CONFLICT (user_id, id) DO NOTHING RETURNING 1)
         SELECT jsonb_build_object(
           'created', (SELECT count(*) FROM ins),
           'redirects', (SELECT coalesce(jsonb_object_agg(id, merged_into), '{}') FROM neotoma.entities
                         WHERE user_id = $1::uuid AND id = ANY($3) AND merged_into IS NOT NULL))",
        &[
            Arg::uuid(user),
            Arg::Json(&Value::Array(entity_rows.into_values().collect())),
            Arg::Texts(ids),
        ],
    )?;
    let created = written["created"].as_u64().unwrap_or(0);
    let redirects: BTreeMap<String, String> =
        db::from_json(written["redirects"].take(), "merge redirects")?;
    let target = |p: &Prepared| {
        redirects
            .get(&p.identity.entity_id)
            .cloned()
            .unwrap_or_else(|| p.identity.entity_id.clone())
    };

    let mut observation_rows = Vec::with_capacity(prepared.len());
    let mut fragment_rows = Vec::new();
    let mut stored = Vec::with_capacity(prepared.len());
    for (i, p) in prepared.iter().enumerate() {
        let entity_id = target(p);
        observation_rows.push(json!({
            "id": observation_ids[i], "entity_id": entity_id, "entity_type": p.entity_type,
            "schema_version": p.schema_version, "specificity_score": p.specificity, "fields": p.fields,
        }));
        for (key, value) in &p.unknown {
            fragment_rows.push(json!({
                "id": derived_uuid("fragment", &[&user_s, &observation_ids[i], key]).to_string(),
                "entity_id": entity_id, "observation_id": observation_ids[i], "entity_type": p.entity_type,
                "key": key, "value": value,
                "inferred_type": FieldType::infer(value).map_or("null", FieldType::as_str),
            }));
        }
        stored.push(StoredEntity {
            entity_id,
            entity_type: p.entity_type.clone(),
            observation_id: observation_ids[i].clone(),
        });
    }
    if !observation_rows.is_empty() {
        db::run(
            "INSERT INTO neotoma.observations (user_id, id, entity_id, entity_type, schema_version, source_id,
                 interpretation_run_id, kind, observed_at, specificity_score, source_priority, fields)
             SELECT $1::uuid, r.id, r.entity_id, r.entity_type, r.schema_version, $2::uuid, $3::uuid, $4,
                    coalesce(neotoma._from_micros($5), now()), r.specificity_score, $6::int, r.fields
             FROM jsonb_to_recordset($7) AS r(id uuid, entity_id text, entity_type text, schema_version text,
                  specificity_score double precision, fields jsonb)",
            &[
                Arg::uuid(user),
                Arg::uuid(origin.source_id),
                Arg::uuid(origin.run_id),
                Arg::Text(origin.kind),
                Arg::OptInt(origin.observed_at),
                Arg::Int(origin.source_priority as i64),
                Arg::Json(&Value::Array(observation_rows)),
            ],
        )?;
    }
    let unknown_fields = fragment_rows.len() as u64;
    if !fragment_rows.is_empty() {
        // `r->'value'`, not a record column: a JSON null stays a JSON null.
        db::run(
            "INSERT INTO neotoma.raw_fragments (user_id, id, source_id, entity_id, observation_id,
                 interpretation_run_id, entity_type, fragment_key, fragment_value, inferred_type)
             SELECT $1::uuid, (r->>'id')::uuid, $2::uuid, r->>'entity_id', (r->>'observation_id')::uuid,
                    $3::uuid, r->>'entity_type', r->>'key', r->'value', r->>'inferred_type'
             FROM jsonb_array_elements($4) AS r
             ON CONFLICT DO NOTHING",
            &[Arg::uuid(user), Arg::uuid(origin.source_id), Arg::uuid(origin.run_id), Arg::Json(&Value::Array(fragment_rows))],
        )?;
    }
    Ok(Stored {
        entities: stored,
        entities_created: created,
        observations_created: prepared.len() as u64,
        unknown_fields,
    })
}
