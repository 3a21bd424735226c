//! Schema evolution in the database: writing schema versions, migrating raw
//! fragments into observations, recomputing snapshots of a type, and the
//! automatic promotion of fields that raw fragments keep showing.

use crate::db::{self, Arg};
use crate::registry;
use crate::snapshots;
use neotoma_core::evolution::{self, AutoPromotion, FieldStats, Fragment};
use neotoma_core::ids::derived_uuid;
use neotoma_core::schema::{EntitySchema, FieldDef};
use neotoma_core::{ErrorCode, NeotomaError};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use uuid::Uuid;

/// Serialises schema changes of a type with each other and with every
/// write that folds observations of that type (which hold the same lock
/// shared, see `snapshots::lock_types_shared`). Taken before anything else
/// the action locks. A user's own schema (`scope` the user) first takes the
/// user's merge lock, shared, as every fold does: the recomputation it may
/// make needs it, and taking it after the type's would deadlock with a merge
/// (which holds the user's lock and waits for the type's). A global one
/// (`scope` nil) takes each user's while it recomputes them.
pub fn lock_schema(scope: &Uuid, entity_type: &str) -> Result<(), NeotomaError> {
    if !scope.is_nil() {
        crate::snapshots::lock_user(&scope.to_string(), false)?;
    }
    db::run(
        "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
        &[Arg::Text(&crate::snapshots::type_lock(entity_type))],
    )
}

/// Like [`lock_schema`], without waiting: false when another transaction
/// holds the type (automatic promotion then waits for a later store rather
/// than risk a deadlock with it).
fn try_lock_schema(entity_type: &str) -> Result<bool, NeotomaError> {
    let v = db::json(
        "SELECT to_jsonb(pg_try_advisory_xact_lock(hashtextextended($1, 0)))",
        &[Arg::Text(&crate::snapshots::type_lock(entity_type))],
    )?;
    Ok(v.as_bool().unwrap_or(false))
}

/// Writes a schema version in a scope ([`write_schema`]) and, when it
/// becomes active and changes what the reducer or the timeline derive for
/// the users it applies to, recomputes their snapshots in the same
/// transaction. Answers the schema's id and how many entities were
/// recomputed. Call it holding [`lock_schema`].
pub fn apply_schema(
    scope: &Uuid,
    schema: &EntitySchema,
    activate: bool,
) -> Result<(Uuid, i64), NeotomaError> {
    let global = scope.is_nil();
    // The schema these users had until now: a user's own variant, or the
    // global one it falls back to.
    let before = match active_in_scope(scope, &schema.entity_type)? {
        Some(s) => Some(s),
        None if !global => active_in_scope(&Uuid::nil(), &schema.entity_type)?,
        None => None,
    };
    let id = write_schema(scope, schema, activate)?;
    let changed = before.is_none_or(|b| b.derivation() != schema.derivation());
    let recomputed = if activate && changed {
        snapshots::recompute_type(&schema.entity_type, (!global).then_some(scope))?
    } else {
        0
    };
    Ok((id, recomputed))
}

/// Versions of a type that exist in a scope.
pub fn versions(scope: &Uuid, entity_type: &str) -> Result<Vec<String>, NeotomaError> {
    let v = db::json(
        "SELECT coalesce(jsonb_agg(schema_version ORDER BY schema_version), '[]') FROM neotoma.entity_schemas
         WHERE user_id = $1::uuid AND entity_type = $2",
        &[Arg::uuid(scope), Arg::Text(entity_type)],
    )?;
    db::from_json(v, "schema versions")
}

/// The active schema of a type in exactly this scope.
pub fn active_in_scope(
    scope: &Uuid,
    entity_type: &str,
) -> Result<Option<EntitySchema>, NeotomaError> {
    let v = db::json(
        "SELECT definition FROM neotoma.entity_schemas WHERE user_id = $1::uuid AND entity_type = $2 AND active",
        &[Arg::uuid(scope), Arg::Text(entity_type)],
    )?;
    if v.is_null() {
        Ok(None)
    } else {
        db::from_json(v, "entity schema").map(Some)
    }
}

/// Stores a schema version in a scope (SCHEMA_EXISTS if the version is
/// taken), making it the active one if asked. Answers its id.
pub fn write_schema(
    scope: &Uuid,
    schema: &EntitySchema,
    activate: bool,
) -> Result<Uuid, NeotomaError> {
    if versions(scope, &schema.entity_type)?.contains(&schema.schema_version) {
        return Err(NeotomaError::new(
            ErrorCode::SchemaExists,
            format!(
                "{} version {} already exists",
                schema.entity_type, schema.schema_version
            ),
        )
        .with("field", "schema_version")
        .with("schema_version", schema.schema_version.clone()));
    }
    let id = registry::schema_id(scope, &schema.entity_type, &schema.schema_version);
    let definition = serde_json::to_value(schema).unwrap_or_default();
    if activate {
        db::run(
            "UPDATE neotoma.entity_schemas SET active = false WHERE user_id = $1::uuid AND entity_type = $2 AND active",
            &[Arg::uuid(scope), Arg::Text(&schema.entity_type)],
        )?;
    }
    db::run(
        "INSERT INTO neotoma.entity_schemas (user_id, id, entity_type, schema_version, description, definition, active)
         VALUES ($1::uuid, $2::uuid, $3, $4, $5, $6, $7 = 'true')",
        &[
            Arg::uuid(scope),
            Arg::uuid(id),
            Arg::Text(&schema.entity_type),
            Arg::Text(&schema.schema_version),
            Arg::Text(&schema.description),
            Arg::Json(&definition),
            Arg::Text(if activate { "true" } else { "false" }),
        ],
    )?;
    Ok(id)
}

#[derive(Deserialize)]
struct FragmentRow {
    id: String,
    key: String,
    value: Value,
    observation_id: Option<String>,
    entity_id: Option<String>,
    source_id: String,
    observed_at: Option<i64>,
    source_priority: Option<i64>,
    run_id: Option<String>,
}

/// Turns the unmigrated raw_fragments of these fields (of the session's
/// user) into observations: one per original observation, same source, time
/// and priority, kind `migration`. Values that do not fit the field's type
/// stay fragments. Fragments are marked, not deleted. Answers how many moved.
pub fn migrate(user: &Uuid, schema: &EntitySchema, fields: &[String]) -> Result<i64, NeotomaError> {
    let user_s = user.to_string();
    let v = db::json(
        "SELECT coalesce(jsonb_agg(jsonb_build_object('id', f.id, 'key', f.fragment_key, 'value', f.fragment_value,
                   'observation_id', f.observation_id, 'entity_id', coalesce(o.entity_id, f.entity_id),
                   'source_id', f.source_id, 'observed_at', neotoma._micros(o.observed_at),
                   'source_priority', o.source_priority, 'run_id', o.interpretation_run_id) ORDER BY f.id), '[]')
         FROM neotoma.raw_fragments f
         LEFT JOIN neotoma.observations o ON o.user_id = f.user_id AND o.id = f.observation_id
         WHERE f.user_id = $1::uuid AND f.entity_type = $2 AND f.fragment_key = ANY($3) AND f.migrated_at IS NULL",
        &[Arg::uuid(user), Arg::Text(&schema.entity_type), Arg::Texts(fields.to_vec())],
    )?;
    let rows: Vec<FragmentRow> = db::from_json(v, "raw fragments")?;
    // By original observation: the migration observation replacing its fragments.
    let mut groups: BTreeMap<String, Migration> = BTreeMap::new();
    for r in rows {
        let fits = schema
            .fields
            .get(&r.key)
            .is_some_and(|d| d.field_type.accepts(&r.value));
        let (Some(original), Some(entity_id), true) =
            (r.observation_id.clone(), r.entity_id.clone(), fits)
        else {
            continue;
        };
        let m = groups.entry(original).or_insert_with(|| Migration {
            entity_id,
            source_id: r.source_id.clone(),
            observed_at: r.observed_at,
            source_priority: r.source_priority.unwrap_or(100),
            run_id: r.run_id.clone(),
            fields: Map::new(),
            fragment_ids: Vec::new(),
        });
        m.fields.insert(r.key, r.value);
        m.fragment_ids.push(r.id);
    }
    let mut observation_rows = Vec::new();
    let mut fragment_rows = Vec::new();
    for (original, m) in &groups {
        let id =
            derived_uuid("migration", &[&user_s, original, &schema.schema_version]).to_string();
        observation_rows.push(json!({
            "id": id, "original": original, "entity_id": m.entity_id, "source_id": m.source_id, "run_id": m.run_id,
            "observed_at": m.observed_at, "source_priority": m.source_priority,
            "specificity_score": schema.specificity(&m.fields), "fields": m.fields,
        }));
        for f in &m.fragment_ids {
            fragment_rows.push(json!({"id": f, "observation_id": id}));
        }
    }
    if observation_rows.is_empty() {
        return Ok(0);
    }
    // A slice per statement: the observation trigger folds each statement's
    // observations at once, so its memory stays that of one slice.
    for slice in observation_rows.chunks(crate::snapshots::WRITE_SLICE) {
        db::run(
            &crate::installed::adapt(
                "INSERT INTO neotoma.observations (user_id, id, entity_id, entity_type, schema_version, source_id,
                 interpretation_run_id, kind, observed_at, specificity_score, source_priority, fields
                 , confidence
                 , write_order
                 , token_id -- new
                 )
             SELECT $1::uuid, r.id, r.entity_id, $2, $3, r.source_id, r.run_id, 'migration',
                    neotoma._from_micros(r.observed_at), r.specificity_score, r.source_priority, r.fields
                    -- What is migrated keeps the rating, the write order and
                    -- the token of the observation it came with.
                    , (SELECT o.confidence FROM neotoma.observations o WHERE o.user_id = $1::uuid AND o.id = r.original)
                    , (SELECT o.write_order FROM neotoma.observations o WHERE o.user_id = $1::uuid AND o.id = r.original)
                    , (SELECT o.token_id FROM neotoma.observations o WHERE o.user_id = $1::uuid AND o.id = r.original) -- new
             FROM jsonb_to_recordset($4) AS r(id uuid, original uuid, entity_id text, source_id uuid, run_id uuid, observed_at bigint,
                  source_priority int, specificity_score double precision, fields jsonb)
             ON CONFLICT DO NOTHING",
            )?,
            &[
                Arg::uuid(user),
                Arg::Text(&schema.entity_type),
                Arg::Text(&schema.schema_version),
                Arg::JsonText(serde_json::to_string(slice).unwrap_or_default()),
            ],
        )?;
    }
    db::run(
        "UPDATE neotoma.raw_fragments f SET migrated_at = now(), migrated_observation_id = r.observation_id
         FROM jsonb_to_recordset($2) AS r(id uuid, observation_id uuid)
         WHERE f.user_id = $1::uuid AND f.id = r.id",
        &[Arg::uuid(user), Arg::Json(&Value::Array(fragment_rows.clone()))],
    )?;
    Ok(fragment_rows.len() as i64)
}

/// The observation that replaces the fragments of one original observation.
struct Migration {
    entity_id: String,
    source_id: String,
    observed_at: Option<i64>,
    source_priority: i64,
    run_id: Option<String>,
    fields: Map<String, Value>,
    fragment_ids: Vec<String>,
}

/// Statistics of the unmigrated fragments of a user, by (entity type, key),
/// optionally only of one type or of some keys.
pub fn fragment_stats(
    user: &Uuid,
    entity_type: Option<&str>,
    keys: Option<Vec<String>>,
) -> Result<BTreeMap<(String, String), FieldStats>, NeotomaError> {
    let v = db::json(
        "SELECT coalesce(jsonb_agg(jsonb_build_array(entity_type, fragment_key, fragment_value, inferred_type, source_id)
                                   ORDER BY entity_type, fragment_key, id), '[]')
         FROM neotoma.raw_fragments
         WHERE user_id = $1::uuid AND migrated_at IS NULL AND ($2::text IS NULL OR entity_type = $2)
           AND ($3::text[] IS NULL OR fragment_key = ANY($3))",
        &[Arg::uuid(user), Arg::OptText(entity_type), Arg::OptTexts(keys)],
    )?;
    let rows: Vec<(String, String, Value, String, String)> = db::from_json(v, "raw fragments")?;
    let mut grouped: BTreeMap<(String, String), Vec<Fragment>> = BTreeMap::new();
    for (t, k, value, inferred_type, source_id) in rows {
        grouped.entry((t, k)).or_default().push(Fragment {
            value,
            inferred_type,
            source_id,
        });
    }
    Ok(grouped
        .into_iter()
        .filter_map(|((t, k), f)| evolution::stats(&k, &f).map(|s| ((t, k), s)))
        .collect())
}

/// The auto-promotion rule of this database, or None when switched off
/// (`ALTER DATABASE … SET neotoma.auto_promote = off`). Thresholds come from
/// `neotoma.auto_promote_min_consistency`, `…_min_sources`,
/// `…_min_occurrences`.
fn auto_promotion() -> Option<AutoPromotion> {
    use crate::settings::*;
    AUTO_PROMOTE.get().then(|| AutoPromotion {
        min_type_consistency: AUTO_PROMOTE_MIN_CONSISTENCY.get(),
        min_sources: AUTO_PROMOTE_MIN_SOURCES.get().max(1) as u64,
        min_occurrences: AUTO_PROMOTE_MIN_OCCURRENCES.get().max(1) as u64,
    })
}

/// JSON evidence of a field's statistics.
pub fn evidence(stats: &FieldStats) -> Value {
    json!({
        "frequency": stats.frequency, "distinct_sources": stats.distinct_sources,
        "type_consistency": stats.type_consistency, "format_consistency": stats.format_consistency,
        "sample_values": stats.sample_values, "confidence": stats.confidence,
        "naming_pattern_match": stats.naming_pattern_match,
    })
}

/// After a store left raw fragments: promotes every touched field that now
/// qualifies into the user's own variant of the schema (a new active
/// version), migrates its fragments, and records an `auto_applied`
/// recommendation with the evidence.
pub fn auto_promote(
    user: &Uuid,
    touched: &BTreeMap<String, BTreeSet<String>>,
) -> Result<(), NeotomaError> {
    let Some(rule) = auto_promotion() else {
        return Ok(());
    };
    for (entity_type, keys) in touched {
        let stats = fragment_stats(
            user,
            Some(entity_type),
            Some(keys.iter().cloned().collect()),
        )?;
        let qualifying: Vec<(&String, &FieldStats)> = stats
            .iter()
            .filter(|(_, s)| rule.qualifies(s))
            .map(|((_, k), s)| (k, s))
            .collect();
        if qualifying.is_empty() || !try_lock_schema(entity_type)? {
            continue;
        }
        let Some(current) =
            registry::active(*user, std::slice::from_ref(entity_type))?.remove(entity_type)
        else {
            continue;
        };
        let mut schema = (*current.schema).clone();
        let mut added = Vec::new();
        for (key, s) in &qualifying {
            if neotoma_core::schema::check_name("field", key).is_ok()
                && !schema.fields.contains_key(*key)
            {
                schema.fields.insert(
                    (*key).clone(),
                    FieldDef {
                        field_type: s.field_type,
                        required: false,
                        description: None,
                        validator: None,
                        preserve_case: false,
                    },
                );
                added.push((*key).clone());
            }
        }
        if added.is_empty() {
            continue;
        }
        schema.schema_version =
            evolution::next_version(&schema.schema_version, &versions(user, entity_type)?);
        apply_schema(user, &schema, true)?;
        migrate(user, &schema, &added)?;
        let fields: Vec<Value> = qualifying
            .iter()
            .filter(|(k, _)| added.contains(k))
            .map(|(k, s)| json!({"field_name": k, "field_type": s.field_type.as_str(), "required": false}))
            .collect();
        let ev: Map<String, Value> = qualifying
            .iter()
            .filter(|(k, _)| added.contains(k))
            .map(|(k, s)| ((*k).clone(), evidence(s)))
            .collect();
        let confidence = qualifying
            .iter()
            .map(|(_, s)| s.confidence)
            .fold(1.0, f64::min);
        record_recommendation(
            user,
            entity_type,
            "raw_fragments",
            &Value::Array(fields),
            confidence,
            &format!("auto-promoted: seen in raw_fragments often enough ({} occurrences, {} sources, {}% consistent type)",
                rule.min_occurrences, rule.min_sources, (rule.min_type_consistency * 100.0).round()),
            &Value::Object(ev),
            "auto_applied",
            Some(&schema.schema_version),
        )?;
    }
    Ok(())
}

/// Stores (or refreshes, while pending) a recommendation; answers its id.
#[allow(clippy::too_many_arguments)]
pub fn record_recommendation(
    user: &Uuid,
    entity_type: &str,
    source: &str,
    fields: &Value,
    confidence: f64,
    reasoning: &str,
    evidence: &Value,
    status: &str,
    schema_version: Option<&str>,
) -> Result<String, NeotomaError> {
    let names: Vec<String> = fields
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["field_name"].as_str().map(str::to_string))
        .collect();
    let mut key = vec![
        user.to_string(),
        entity_type.to_string(),
        source.to_string(),
        status.to_string(),
    ];
    key.extend(names);
    if let Some(v) = schema_version {
        key.push(v.to_string());
    }
    let refs: Vec<&str> = key.iter().map(String::as_str).collect();
    let id = derived_uuid("recommendation", &refs).to_string();
    db::run(
        "INSERT INTO neotoma.schema_recommendations (user_id, id, entity_type, fields, source, confidence_score,
             reasoning, evidence, status, schema_version)
         VALUES ($1::uuid, $2::uuid, $3, $4, $5, $6::text::double precision, $7, $8, $9, $10)
         ON CONFLICT (user_id, id) DO UPDATE SET fields = EXCLUDED.fields,
             confidence_score = EXCLUDED.confidence_score, reasoning = EXCLUDED.reasoning,
             evidence = EXCLUDED.evidence, updated_at = now()
         WHERE neotoma.schema_recommendations.status = 'pending'",
        &[
            Arg::uuid(user),
            Arg::Text(&id),
            Arg::Text(entity_type),
            Arg::Json(fields),
            Arg::Text(source),
            Arg::Text(&confidence.to_string()),
            Arg::Text(reasoning),
            Arg::Json(evidence),
            Arg::Text(status),
            Arg::OptText(schema_version),
        ],
    )?;
    Ok(id)
}
