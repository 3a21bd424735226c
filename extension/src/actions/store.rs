//! `store`: structured entities, or a file. Either way the content becomes a
//! source (content-addressed per user) and an interpretation run turns it
//! into entities, observations (the trigger folds them into snapshots) and
//! raw_fragments.

use crate::catalog::to_value;
use crate::db::{self, Arg};
use crate::registry;
use crate::tenancy;
use neotoma_core::actions::store::*;
use neotoma_core::canonical::{canonical_json, sha256_hex};
use neotoma_core::identity;
use neotoma_core::ids::{derived_uuid, source_id};
use neotoma_core::interpret::coerce;
use neotoma_core::limits::{truncate_bytes, MAX_IDENTIFIER_BYTES, MAX_KEY_BYTES};
use neotoma_core::request::{json_type, parse};
use neotoma_core::schema::{check_name, FieldType};
use neotoma_core::NeotomaError;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use uuid::Uuid;

pub fn store(args: &Value) -> Result<Value, NeotomaError> {
    let req: StoreRequest = parse(args)?;
    tenancy::with_user(req.user_id.as_deref(), |user| {
        match (&req.entities, &req.file_content, &req.file_path) {
            (Some(_), Some(_), _) => Err(NeotomaError::validation(
                "give either `entities` (structured) or `file_content` (a file), not both",
            )
            .with("field", "file_content")),
            (_, None, Some(_)) => Err(NeotomaError::invalid_field(
                "file_path",
                "`file_path` is read by the MCP server; in SQL pass the bytes as `file_content` (base64)",
            )),
            (_, Some(content), _) => super::files::store_file(user, content, &req),
            (Some(entities), None, None) => store_structured(user, entities, &req),
            (None, None, None) => Err(NeotomaError::validation(
                "store needs `entities` (structured) or `file_content`/`file_path` (a file)",
            )
            .with("field", "entities")),
        }
    })
}

/// One entity, split and resolved.
pub struct Prepared {
    entity_type: String,
    schema_version: String,
    identity: identity::Identity,
    fields: Map<String, Value>,
    unknown: Vec<(String, Value)>,
    specificity: f64,
}

/// Entities ready to store, and how many were left out (lenient mode only).
pub struct PreparedBatch {
    pub entities: Vec<Prepared>,
    pub skipped: u64,
}

fn entity_type_of(i: usize, obj: &Map<String, Value>) -> Result<String, NeotomaError> {
    let at = format!("entities[{i}].entity_type");
    match obj.get("entity_type") {
        Some(Value::String(t)) => {
            let t = t.trim().to_string();
            check_name(&at, &t)?;
            Ok(t)
        }
        Some(other) => Err(NeotomaError::invalid_field(
            &at,
            format!(
                "entities[{i}].entity_type must be a string, got {}",
                json_type(other)
            ),
        )),
        None => Err(NeotomaError::invalid_field(
            &at,
            format!("entities[{i}] has no entity_type; call list_entity_types to choose one"),
        )),
    }
}

/// Splits each entity into schema fields and unknown fields and resolves its
/// identity. Strict (agents' structured input): any problem is a
/// VALIDATION_ERROR naming the field. Lenient (what an interpreter read from
/// a file): values are coerced to the field's type where they can be
/// (numbers and booleans from text), else kept as raw_fragments; entities
/// without a known type are skipped and counted.
pub fn prepare(
    user: Uuid,
    entities: &[Value],
    lenient: bool,
) -> Result<PreparedBatch, NeotomaError> {
    let mut objects = Vec::with_capacity(entities.len());
    let mut skipped = 0;
    for (i, e) in entities.iter().enumerate() {
        let Value::Object(obj) = e else {
            if lenient {
                skipped += 1;
                continue;
            }
            return Err(NeotomaError::invalid_field(
                &format!("entities[{i}]"),
                format!("entities[{i}] must be an object, got {}", json_type(e)),
            ));
        };
        match entity_type_of(i, obj) {
            Ok(t) => objects.push((i, t, obj)),
            Err(_) if lenient => skipped += 1,
            Err(e) => return Err(e),
        }
    }
    let mut types: Vec<String> = objects.iter().map(|(_, t, _)| t.clone()).collect();
    types.sort();
    types.dedup();
    let schemas = registry::active(user, &types)?;
    let mut out = Vec::with_capacity(objects.len());
    for (i, entity_type, obj) in objects {
        let Some(active) = schemas.get(&entity_type) else {
            if lenient {
                skipped += 1;
                continue;
            }
            return Err(NeotomaError::validation(format!(
                "unknown entity_type `{entity_type}`: call list_entity_types to find the right \
                 type, or register_schema to define a new one"
            ))
            .with("field", format!("entities[{i}].entity_type"))
            .with("entity_type", entity_type));
        };
        let schema = &active.schema;
        let mut fields = Map::new();
        let mut unknown = Vec::new();
        for (k, v) in obj {
            if k == "entity_type" {
                continue;
            }
            // Keys longer than an index row allows: refused from agents
            // (check_input), shortened from what an interpreter read.
            let k = &truncate_bytes(k, MAX_KEY_BYTES).to_string();
            match schema.fields.get(k) {
                Some(def) if def.field_type.accepts(v) => {
                    fields.insert(k.clone(), v.clone());
                }
                Some(def) if lenient => match coerce(def.field_type, v) {
                    Some(c) => {
                        fields.insert(k.clone(), c);
                    }
                    None => unknown.push((k.clone(), v.clone())),
                },
                Some(def) => {
                    let date = if def.field_type == FieldType::Date {
                        " that is not an ISO 8601 date"
                    } else {
                        ""
                    };
                    return Err(NeotomaError::validation(format!(
                        "entities[{i}].{k} must be a {} (or null), got {}{date}",
                        def.field_type.as_str(),
                        json_type(v),
                    ))
                    .with("field", format!("entities[{i}].{k}"))
                    .with("expected", def.field_type.as_str())
                    .with("got", json_type(v)));
                }
                None => unknown.push((k.clone(), v.clone())),
            }
        }
        if !lenient {
            check_identity_lengths(i, schema, &fields)?;
        }
        out.push(Prepared {
            identity: identity::resolve(&user, schema, &fields),
            specificity: schema.specificity(&fields),
            schema_version: schema.schema_version.clone(),
            entity_type,
            fields,
            unknown,
        });
    }
    Ok(PreparedBatch {
        entities: out,
        skipped,
    })
}

/// Refuses identity values longer than a lookup may be: they could never be
/// found by identifier.
fn check_identity_lengths(
    i: usize,
    schema: &neotoma_core::schema::EntitySchema,
    fields: &Map<String, Value>,
) -> Result<(), NeotomaError> {
    for rule in &schema.identity {
        for f in rule.fields() {
            let Some(Value::String(v)) = fields.get(f) else {
                continue;
            };
            if v.len() > MAX_IDENTIFIER_BYTES {
                return Err(NeotomaError::invalid_field(
                    &format!("entities[{i}].{f}"),
                    format!(
                        "{f} identifies the entity and is at most {MAX_IDENTIFIER_BYTES} bytes; this one is {}",
                        v.len()
                    ),
                )
                .with("max_bytes", MAX_IDENTIFIER_BYTES));
            }
        }
    }
    Ok(())
}

/// Where stored entities come from.
pub struct Origin<'a> {
    pub user: Uuid,
    pub source_id: Uuid,
    pub run_id: Uuid,
    pub kind: &'a str,
    pub source_priority: i32,
    /// ISO 8601; none = the transaction's time.
    pub observed_at: Option<&'a str>,
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
const CHUNK: usize = 2000;

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
/// in slices of [`CHUNK`]; then promotes fields that now qualify; answers
/// what it made.
pub fn store_entities(origin: &Origin, batch: &PreparedBatch) -> Result<Stored, NeotomaError> {
    let mut stored = Stored::default();
    for (n, chunk) in batch.entities.chunks(CHUNK).enumerate() {
        let part = store_chunk(origin, chunk, n * CHUNK)?;
        stored.entities.extend(part.entities);
        stored.entities_created += part.entities_created;
        stored.observations_created += part.observations_created;
        stored.unknown_fields += part.unknown_fields;
    }
    if stored.unknown_fields > 0 {
        let mut touched: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for p in &batch.entities {
            touched
                .entry(p.entity_type.clone())
                .or_default()
                .extend(p.unknown.iter().map(|(k, _)| k.clone()));
        }
        crate::evolution::auto_promote(&origin.user, &touched)?;
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
    let source_s = origin.source_id.to_string();
    let run_s = origin.run_id.to_string();
    let observation_ids: Vec<String> = (0..prepared.len())
        .map(|i| observation_id(origin, first + i).to_string())
        .collect();

    // Entities merged into others: new observations go to the merge target.
    let mut ids: Vec<String> = prepared
        .iter()
        .map(|p| p.identity.entity_id.clone())
        .collect();
    ids.sort();
    ids.dedup();
    let redirects: BTreeMap<String, String> = db::from_json(
        db::json(
            "SELECT coalesce(jsonb_object_agg(id, merged_into), '{}') FROM neotoma.entities
             WHERE user_id = $1::uuid AND id = ANY($2) AND merged_into IS NOT NULL",
            &[Arg::Text(&user_s), Arg::Texts(ids)],
        )?,
        "merge redirects",
    )?;
    let target = |p: &Prepared| {
        redirects
            .get(&p.identity.entity_id)
            .cloned()
            .unwrap_or_else(|| p.identity.entity_id.clone())
    };

    let mut entity_rows: BTreeMap<String, Value> = BTreeMap::new();
    for p in prepared {
        entity_rows.entry(p.identity.entity_id.clone()).or_insert_with(|| {
            json!({"id": p.identity.entity_id, "entity_type": p.entity_type,
                   "canonical_name": p.identity.canonical_name, "identity_key": p.identity.identity_key})
        });
    }
    let created = db::json(
        "WITH ins AS (
           INSERT INTO neotoma.entities (user_id, id, entity_type, canonical_name, identity_key)
           SELECT $1::uuid, r.id, r.entity_type, r.canonical_name, r.identity_key
           FROM jsonb_to_recordset($2) AS r(id text, entity_type text, canonical_name text, identity_key text)
           ORDER BY r.id
           ON CONFLICT (user_id, id) DO NOTHING RETURNING 1)
         SELECT to_jsonb(count(*)) FROM ins",
        &[Arg::Text(&user_s), Arg::Json(&Value::Array(entity_rows.into_values().collect()))],
    )?
    .as_u64()
    .unwrap_or(0);

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
                    coalesce($5::timestamptz, now()), r.specificity_score, $6::int, r.fields
             FROM jsonb_to_recordset($7) AS r(id uuid, entity_id text, entity_type text, schema_version text,
                  specificity_score double precision, fields jsonb)",
            &[
                Arg::Text(&user_s),
                Arg::Text(&source_s),
                Arg::Text(&run_s),
                Arg::Text(origin.kind),
                Arg::OptText(origin.observed_at),
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
            &[Arg::Text(&user_s), Arg::Text(&source_s), Arg::Text(&run_s), Arg::Json(&Value::Array(fragment_rows))],
        )?;
    }
    Ok(Stored {
        entities: stored,
        entities_created: created,
        observations_created: prepared.len() as u64,
        unknown_fields,
    })
}

/// Records a run of `interpreter` over a source. Its id depends on (user,
/// source, interpreter, config): the same config is the same run.
pub fn run_id(user: &Uuid, source: &Uuid, interpreter: &str, config: &Map<String, Value>) -> Uuid {
    derived_uuid(
        "run",
        &[
            &user.to_string(),
            &source.to_string(),
            interpreter,
            &canonical_json(&Value::Object(config.clone())),
        ],
    )
}

/// Records a new run; false when the run exists already (the same source
/// and config interpreted by a concurrent session, which then owns it).
pub fn insert_run(
    user: &Uuid,
    run: &Uuid,
    source: &Uuid,
    interpreter: &str,
    config: &Map<String, Value>,
    status: &str,
    error: Option<&str>,
) -> Result<bool, NeotomaError> {
    db::inserted(
        "INSERT INTO neotoma.interpretation_runs (user_id, id, source_id, interpreter, config, status, error, finished_at)
         VALUES ($1::uuid, $2::uuid, $3::uuid, $4, $5, $6, CASE WHEN $7::text IS NULL THEN NULL ELSE jsonb_build_object('message', $7::text) END,
                 CASE WHEN $6 IN ('running', 'pending') THEN NULL ELSE clock_timestamp() END)
         ON CONFLICT DO NOTHING",
        &[
            Arg::Text(&user.to_string()),
            Arg::Text(&run.to_string()),
            Arg::Text(&source.to_string()),
            Arg::Text(interpreter),
            Arg::Json(&Value::Object(config.clone())),
            Arg::Text(status),
            Arg::OptText(error),
        ],
    )
}

/// Marks a run finished with what it made (or why it failed).
pub fn finish_run(
    user: &Uuid,
    run: &Uuid,
    stored: Option<&Stored>,
    error: Option<&str>,
) -> Result<(), NeotomaError> {
    db::run(
        "UPDATE neotoma.interpretation_runs SET
           status = CASE WHEN $6::text IS NULL THEN 'completed' ELSE 'failed' END,
           entities_created = $3, observations_created = $4, unknown_fields_count = $5,
           error = CASE WHEN $6::text IS NULL THEN NULL ELSE jsonb_build_object('message', $6::text) END,
           finished_at = clock_timestamp()
         WHERE user_id = $1::uuid AND id = $2::uuid",
        &[
            Arg::Text(&user.to_string()),
            Arg::Text(&run.to_string()),
            Arg::Int(stored.map_or(0, |s| s.entities_created as i64)),
            Arg::Int(stored.map_or(0, |s| s.observations_created as i64)),
            Arg::Int(stored.map_or(0, |s| s.unknown_fields as i64)),
            Arg::OptText(error),
        ],
    )
}

fn store_structured(
    user: Uuid,
    entities: &[Value],
    req: &StoreRequest,
) -> Result<Value, NeotomaError> {
    if entities.is_empty() || entities.len() > MAX_ENTITIES {
        return Err(NeotomaError::invalid_field(
            "entities",
            format!("entities must hold 1 to {MAX_ENTITIES} entities"),
        )
        .with("got", entities.len()));
    }
    let content = structured_content(entities);
    let canonical = canonical_json(&content);
    if canonical.len() > MAX_STRUCTURED_BYTES {
        return Err(NeotomaError::invalid_field(
            "entities",
            format!(
                "the entities are {} bytes; at most {MAX_STRUCTURED_BYTES} fit in one store",
                canonical.len()
            ),
        )
        .with("bytes", canonical.len())
        .with("max_bytes", MAX_STRUCTURED_BYTES));
    }
    let priority = req.source_priority.unwrap_or(DEFAULT_SOURCE_PRIORITY);
    if !(0..1000).contains(&priority) {
        return Err(NeotomaError::invalid_field(
            "source_priority",
            "source_priority must be between 0 and 999 (1000 is reserved for corrections)",
        )
        .with("got", priority));
    }
    let extracted_at = req
        .provenance
        .as_ref()
        .map(|p| {
            neotoma_core::actions::common::timestamp("provenance.extracted_at", &p.extracted_at)
        })
        .transpose()?;
    let batch = prepare(user, entities, false)?;
    let content_hash = sha256_hex(canonical.as_bytes());
    let source = source_id(&user, &content_hash);
    let run = run_id(&user, &source, "structured", &Map::new());
    let user_s = user.to_string();
    let source_s = source.to_string();
    let origin = Origin {
        user,
        source_id: source,
        run_id: run,
        kind: "store",
        source_priority: priority,
        observed_at: extracted_at.as_deref(),
    };

    let existing = db::json(
        "SELECT to_jsonb(s.id) FROM neotoma.sources s WHERE s.user_id = $1::uuid AND s.id = $2::uuid",
        &[Arg::Text(&user_s), Arg::Text(&source_s)],
    )?;
    if !existing.is_null() {
        let ids: Vec<String> = (0..batch.entities.len())
            .map(|i| observation_id(&origin, i).to_string())
            .collect();
        return deduplicated(&user_s, &source_s, &content_hash, &run, &ids);
    }

    let provenance = match &req.provenance {
        Some(p) => json!({
            "source_refs": p.source_refs, "extracted_at": p.extracted_at,
            "extractor_version": p.extractor_version, "agent_id": p.agent_id,
        }),
        None => json!({}),
    };
    // The same content stored at the same moment by another session: that
    // store wins and this one answers as a duplicate of it.
    let inserted = db::inserted(
        "INSERT INTO neotoma.sources (user_id, id, content_hash, source_type, mime_type, file_size,
                                      content, source_priority, provenance)
         VALUES ($1::uuid, $2::uuid, $3, 'structured', 'application/json', $4, $5, $6::int, $7)
         ON CONFLICT DO NOTHING",
        &[
            Arg::Text(&user_s),
            Arg::Text(&source_s),
            Arg::Text(&content_hash),
            Arg::Int(canonical.len() as i64),
            Arg::Json(&content),
            Arg::Int(priority as i64),
            Arg::Json(&provenance),
        ],
    )?;
    if !inserted {
        let ids: Vec<String> = (0..batch.entities.len())
            .map(|i| observation_id(&origin, i).to_string())
            .collect();
        return deduplicated(&user_s, &source_s, &content_hash, &run, &ids);
    }
    // The source is new, so its structured run is too.
    insert_run(
        &user,
        &run,
        &source,
        "structured",
        &Map::new(),
        "running",
        None,
    )?;
    let stored = store_entities(&origin, &batch)?;
    finish_run(&user, &run, Some(&stored), None)?;
    let mut stored_ids: Vec<String> = stored
        .entities
        .iter()
        .map(|e| e.entity_id.clone())
        .collect();
    stored_ids.sort();
    stored_ids.dedup();
    let (related_entities, related_relationships) = super::graph::related_to(&user, &stored_ids)?;
    to_value(&StoreResponse {
        source_id: source_s,
        content_hash,
        file_size: None,
        deduplicated: false,
        interpretation: Some(InterpretationSummary {
            run_id: run.to_string(),
            entities_created: stored.entities_created,
            observations_created: stored.observations_created,
            status: "completed".into(),
            reason: None,
        }),
        unknown_fields_count: Some(stored.unknown_fields),
        entities: Some(stored.entities),
        entities_total: None,
        related_entities: Some(related_entities),
        related_relationships: Some(related_relationships),
        mime_type: None,
        storage_path: None,
        external_interpretation: None,
    })
}

/// The answer for content stored before: what that store created, nothing new.
fn deduplicated(
    user: &str,
    source: &str,
    content_hash: &str,
    run_id: &Uuid,
    observation_ids: &[String],
) -> Result<Value, NeotomaError> {
    let found = db::json(
        "SELECT jsonb_build_object(
           'entities', coalesce((SELECT jsonb_object_agg(o.id::text, jsonb_build_object(
                          'entity_id', coalesce(e.merged_into, o.entity_id), 'entity_type', o.entity_type))
                        FROM neotoma.observations o
                        JOIN neotoma.entities e ON e.user_id = o.user_id AND e.id = o.entity_id
                        WHERE o.user_id = $1::uuid AND o.id::text = ANY($3)), '{}'),
           'unknown', (SELECT count(*) FROM neotoma.raw_fragments f
                       WHERE f.user_id = $1::uuid AND f.source_id = $2::uuid))",
        &[Arg::Text(user), Arg::Text(source), Arg::Texts(observation_ids.to_vec())],
    )?;
    let stored = observation_ids
        .iter()
        .filter_map(|id| {
            let e = found["entities"].get(id)?;
            Some(StoredEntity {
                entity_id: e["entity_id"].as_str()?.to_string(),
                entity_type: e["entity_type"].as_str()?.to_string(),
                observation_id: id.clone(),
            })
        })
        .collect();
    to_value(&StoreResponse {
        source_id: source.to_string(),
        content_hash: content_hash.to_string(),
        file_size: None,
        deduplicated: true,
        interpretation: Some(InterpretationSummary {
            run_id: run_id.to_string(),
            entities_created: 0,
            observations_created: 0,
            status: "skipped".into(),
            reason: Some("already stored: this content was interpreted before".into()),
        }),
        entities: Some(stored),
        entities_total: None,
        unknown_fields_count: Some(found["unknown"].as_u64().unwrap_or(0)),
        related_entities: Some(vec![]),
        related_relationships: Some(vec![]),
        mime_type: None,
        storage_path: None,
        external_interpretation: None,
    })
}
