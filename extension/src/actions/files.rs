//! Files: storing them (bytes once per user and content hash), interpreting
//! them (built-in readers in the database; an external model through the MCP
//! server), reinterpreting, and signed URLs to fetch them.

use super::store::{finish_run, insert_run, prepare, run_id, store_entities, Origin};
use crate::catalog::to_value;
use crate::db::{self, Arg};
use crate::registry;
use crate::settings;
use crate::tenancy;
use neotoma_core::actions::common;
use neotoma_core::actions::store::*;
use neotoma_core::canonical::sha256_hex;
use neotoma_core::ids::source_id;
use neotoma_core::interpret::{
    self, decode_base64, detect_mime, encode_base64, interpreter_for, normalize_mime,
};
use neotoma_core::request::parse;
use neotoma_core::{ErrorCode, NeotomaError};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use uuid::Uuid;

pub fn storage_path(source: &Uuid) -> String {
    format!("sources/{source}")
}

/// What the run of an interpretation tells the caller.
struct RunOutcome {
    summary: InterpretationSummary,
    external: Option<Value>,
    /// The entities this run stored (None: ask the database).
    entities: Option<Vec<StoredEntity>>,
}

impl RunOutcome {
    /// A run that leaves nothing for the gateway and stored nothing now.
    fn of(summary: InterpretationSummary) -> RunOutcome {
        RunOutcome {
            summary,
            external: None,
            entities: None,
        }
    }
}

fn summary(
    run: &Uuid,
    status: &str,
    created: (u64, u64),
    reason: Option<String>,
) -> InterpretationSummary {
    InterpretationSummary {
        run_id: run.to_string(),
        entities_created: created.0,
        observations_created: created.1,
        status: status.to_string(),
        reason,
    }
}

/// Refuses a new run past the user's monthly quota.
fn check_quota(user: &Uuid) -> Result<(), NeotomaError> {
    // neotoma.interpretation_quota: runs per user and calendar month (0: unlimited).
    let quota = i64::from(settings::INTERPRETATION_QUOTA.get());
    if quota <= 0 {
        return Ok(());
    }
    let used = db::json(
        "SELECT to_jsonb(count(*)) FROM neotoma.interpretation_runs
         WHERE user_id = $1::uuid AND interpreter <> 'structured' AND status <> 'skipped'
           AND started_at >= date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'",
        &[Arg::Text(&user.to_string())],
    )?
    .as_i64()
    .unwrap_or(0);
    if used >= quota {
        return Err(NeotomaError::new(
            ErrorCode::QuotaExceeded,
            format!("the interpretation quota of {quota} runs this month is used up"),
        )
        .with("quota", quota)
        .with("used", used)
        .with("period", "calendar month (UTC)"));
    }
    Ok(())
}

/// The run of the same source and config made before (by this or a
/// concurrent session), if any: it is not made again.
fn earlier_run(user: &Uuid, run: &Uuid) -> Result<Option<RunOutcome>, NeotomaError> {
    let status = db::json(
        "SELECT to_jsonb(status) FROM neotoma.interpretation_runs WHERE user_id = $1::uuid AND id = $2::uuid",
        &[Arg::Text(&user.to_string()), Arg::Text(&run.to_string())],
    )?;
    Ok(status.as_str().map(|status| {
        RunOutcome::of(summary(
            run,
            status,
            (0, 0),
            Some("this source was interpreted with this config before".to_string()),
        ))
    }))
}

/// The run this session could not record because it exists: the earlier
/// one, or one a concurrent session is making right now.
fn existing_run(user: &Uuid, run: &Uuid) -> Result<RunOutcome, NeotomaError> {
    Ok(earlier_run(user, run)?.unwrap_or_else(|| lost_race(run)))
}

/// A run another session is making right now (not yet visible here).
fn lost_race(run: &Uuid) -> RunOutcome {
    RunOutcome::of(summary(
        run,
        "running",
        (0, 0),
        Some("another session is interpreting this source with this config".to_string()),
    ))
}

/// Interprets a stored file with `config`: a built-in reader when one knows
/// its MIME type (synchronously), else the MCP server's model when it has one
/// (the run is left pending with the work described for it), else nothing:
/// with `explicit` (the caller asked for interpretation) that is
/// UNSUPPORTED_FILE_TYPE, otherwise a `skipped` run saying why.
fn interpret_file(
    user: &Uuid,
    source: &Uuid,
    bytes: &[u8],
    mime: &str,
    filename: Option<&str>,
    config: &Map<String, Value>,
    explicit: bool,
) -> Result<RunOutcome, NeotomaError> {
    let model = settings::MODEL_INTERPRETER.get();
    let interpreter = match (interpreter_for(mime), model) {
        (Some(name), _) => name,
        (None, true) => "model",
        (None, false) => {
            let reason = format!(
                "no interpreter reads {mime}: the built-in ones read JSON, CSV/TSV, vCard, iCalendar, \
                 e-mail and text; configure a model (neotoma-mcp --model-url) for the rest"
            );
            if explicit {
                return Err(NeotomaError::new(ErrorCode::UnsupportedFileType, reason)
                    .with("mime_type", mime));
            }
            let run = run_id(user, source, "none", config);
            let known = db::json(
                "SELECT to_jsonb(id) FROM neotoma.interpretation_runs WHERE user_id = $1::uuid AND id = $2::uuid",
                &[Arg::Text(&user.to_string()), Arg::Text(&run.to_string())],
            )?;
            if known.is_null() {
                insert_run(user, &run, source, "none", config, "skipped", Some(&reason))?;
            }
            return Ok(RunOutcome::of(summary(
                &run,
                "skipped",
                (0, 0),
                Some(reason),
            )));
        }
    };
    let run = run_id(user, source, interpreter, config);
    if let Some(earlier) = earlier_run(user, &run)? {
        return Ok(earlier);
    }
    check_quota(user)?;
    if interpreter == "model" {
        if !insert_run(user, &run, source, "model", config, "pending", None)? {
            return existing_run(user, &run);
        }
        let types: Vec<Value> = registry::all_active(*user)?
            .values()
            .map(|a| {
                let fields: Map<String, Value> =
                    a.schema.fields.iter().map(|(k, d)| (k.clone(), json!(d.field_type.as_str()))).collect();
                json!({"entity_type": a.schema.entity_type, "description": a.schema.description, "fields": fields})
            })
            .collect();
        let external = json!({
            "run_id": run, "source_id": source, "mime_type": mime, "original_filename": filename,
            "config": config, "file_content": encode_base64(bytes), "entity_types": types,
        });
        return Ok(RunOutcome {
            summary: summary(
                &run,
                "pending",
                (0, 0),
                Some("a model is reading the file".into()),
            ),
            external: Some(external),
            entities: None,
        });
    }
    if !insert_run(user, &run, source, interpreter, config, "running", None)? {
        return existing_run(user, &run);
    }
    let schemas: Vec<_> = registry::all_active(*user)?
        .into_values()
        .map(|a| a.schema)
        .collect();
    match interpret::interpret(interpreter, bytes, config, &schemas) {
        Ok(read) if read.entities.len() > settings::INTERPRET_MAX_ROWS.get().max(0) as usize => {
            let message = format!(
                "the file holds {} records; at most {} are interpreted from one file \
                 (neotoma.interpret_max_rows). The file is stored; split it to interpret it",
                read.entities.len(),
                settings::INTERPRET_MAX_ROWS.get()
            );
            finish_run(user, &run, None, Some(&message))?;
            Ok(RunOutcome::of(summary(
                &run,
                "failed",
                (0, 0),
                Some(message),
            )))
        }
        Ok(read) => {
            let mut entities: Vec<Value> = read.entities.into_iter().map(Value::Object).collect();
            entities
                .iter_mut()
                .for_each(neotoma_core::limits::scrub_nul);
            let mut batch = prepare(*user, &entities, true)?;
            batch.skipped += read.skipped;
            let origin = Origin {
                user: *user,
                source_id: *source,
                run_id: run,
                kind: "interpretation",
                source_priority: DEFAULT_SOURCE_PRIORITY,
                observed_at: None,
            };
            let stored = store_entities(&origin, &batch)?;
            finish_run(user, &run, Some(&stored), None)?;
            let reason = (batch.skipped > 0).then(|| {
                format!(
                    "{} part(s) could not be typed and were left out",
                    batch.skipped
                )
            });
            Ok(RunOutcome {
                summary: summary(
                    &run,
                    "completed",
                    (stored.entities_created, stored.observations_created),
                    reason,
                ),
                external: None,
                entities: Some(stored.entities),
            })
        }
        Err(message) => {
            finish_run(user, &run, None, Some(&message))?;
            Ok(RunOutcome::of(summary(
                &run,
                "failed",
                (0, 0),
                Some(message),
            )))
        }
    }
}

/// A stored file source: how many observations it has, and its MIME type.
const EXISTING_SOURCE: &str = "
    SELECT jsonb_build_object('observations', (SELECT count(*) FROM neotoma.observations o
                                                WHERE o.user_id = s.user_id AND o.source_id = s.id),
                              'mime_type', s.mime_type)
    FROM neotoma.sources s WHERE s.user_id = $1::uuid AND s.id = $2::uuid";

pub fn store_file(user: Uuid, content: &str, req: &StoreRequest) -> Result<Value, NeotomaError> {
    let Some(bytes) = decode_base64(content) else {
        return Err(NeotomaError::invalid_field(
            "file_content",
            "file_content is not valid base64",
        ));
    };
    if bytes.is_empty() {
        return Err(NeotomaError::invalid_field(
            "file_content",
            "the file is empty",
        ));
    }
    let max = i64::from(settings::MAX_FILE_BYTES.get());
    if bytes.len() as i64 > max {
        return Err(NeotomaError::new(
            ErrorCode::FileTooLarge,
            format!(
                "the file is {} bytes; the limit is {max} bytes",
                bytes.len()
            ),
        )
        .with("file_size_bytes", bytes.len())
        .with("max_size_bytes", max));
    }
    let filename = req
        .original_filename
        .as_deref()
        .map(str::trim)
        .filter(|f| !f.is_empty());
    let mime = match req
        .mime_type
        .as_deref()
        .map(normalize_mime)
        .filter(|m| !m.is_empty())
    {
        Some(m) if m.contains('/') => m,
        Some(m) => {
            return Err(NeotomaError::invalid_field(
                "mime_type",
                format!("`{m}` is not a MIME type (type/subtype)"),
            ))
        }
        None => detect_mime(&bytes, filename),
    };
    let config = req.interpretation_config.clone().unwrap_or_default();
    let content_hash = sha256_hex(&bytes);
    let source = source_id(&user, &content_hash);
    let user_s = user.to_string();
    let source_s = source.to_string();
    let mut existing = db::json(EXISTING_SOURCE, &[Arg::Text(&user_s), Arg::Text(&source_s)])?;
    let mut deduplicated = !existing.is_null();
    let mime = if deduplicated {
        existing["mime_type"].as_str().unwrap_or(&mime).to_string()
    } else {
        mime
    };
    if !deduplicated {
        // The same file stored at the same moment by another session: that
        // store wins and this one answers as a duplicate of it.
        let inserted = db::inserted(
            "INSERT INTO neotoma.sources (user_id, id, content_hash, source_type, mime_type, original_filename,
                                          file_size, storage_path, source_priority)
             VALUES ($1::uuid, $2::uuid, $3, 'file', $4, $5, $6, $7, $8::int)
             ON CONFLICT DO NOTHING",
            &[
                Arg::Text(&user_s),
                Arg::Text(&source_s),
                Arg::Text(&content_hash),
                Arg::Text(&mime),
                Arg::OptText(filename),
                Arg::Int(bytes.len() as i64),
                Arg::Text(&storage_path(&source)),
                Arg::Int(req.source_priority.unwrap_or(DEFAULT_SOURCE_PRIORITY) as i64),
            ],
        )?;
        if inserted {
            db::run(
                "INSERT INTO neotoma.files (user_id, source_id, content) VALUES ($1::uuid, $2::uuid, decode($3, 'base64'))",
                &[Arg::Text(&user_s), Arg::Text(&source_s), Arg::Text(&encode_base64(&bytes))],
            )?;
        } else {
            deduplicated = true;
            existing = db::json(EXISTING_SOURCE, &[Arg::Text(&user_s), Arg::Text(&source_s)])?;
        }
    }
    // Interpret unless told not to, or the (deduplicated) source already has
    // observations.
    let has_observations = existing["observations"].as_i64().unwrap_or(0) > 0;
    let outcome = match req.interpret {
        Some(false) => None,
        _ if has_observations => None,
        explicit => Some(interpret_file(
            &user,
            &source,
            &bytes,
            &mime,
            filename,
            &config,
            explicit == Some(true),
        )?),
    };
    let (interpretation, external, ran) = match outcome {
        Some(o) => (Some(o.summary), o.external, o.entities),
        None => (None, None, None),
    };
    let (entities, total) = match ran {
        Some(mut list) => {
            let total = list.len() as u64;
            list.truncate(MAX_LISTED_ENTITIES);
            (list, total)
        }
        None => stored_entities(&user_s, &source_s)?,
    };
    to_value(&StoreResponse {
        source_id: source_s,
        content_hash,
        file_size: Some(bytes.len() as i64),
        deduplicated,
        interpretation,
        entities_total: (total > entities.len() as u64).then_some(total),
        entities: Some(entities),
        unknown_fields_count: None,
        related_entities: None,
        related_relationships: None,
        mime_type: Some(mime),
        storage_path: Some(storage_path(&source)),
        external_interpretation: external,
    })
}

/// The entities a source's observations are about (the first
/// `MAX_LISTED_ENTITIES`, by when they were observed), and how many there
/// are in all.
fn stored_entities(user: &str, source: &str) -> Result<(Vec<StoredEntity>, u64), NeotomaError> {
    let v = db::json(
        "WITH o AS (SELECT id, entity_id, entity_type, created_at FROM neotoma.observations
                    WHERE user_id = $1::uuid AND source_id = $2::uuid),
              listed AS (SELECT * FROM o ORDER BY created_at, id LIMIT $3)
         SELECT jsonb_build_object(
           'entities', coalesce((SELECT jsonb_agg(jsonb_build_object('entity_id', l.entity_id,
                          'entity_type', l.entity_type, 'observation_id', l.id) ORDER BY l.created_at, l.id)
                        FROM listed l), '[]'),
           'merged', coalesce((SELECT jsonb_object_agg(e.id, e.merged_into) FROM neotoma.entities e
                        WHERE e.user_id = $1::uuid AND e.merged_into IS NOT NULL
                          AND e.id IN (SELECT entity_id FROM listed)), '{}'),
           'total', (SELECT count(*) FROM o))",
        &[Arg::Text(user), Arg::Text(source), Arg::Int(MAX_LISTED_ENTITIES as i64)],
    )?;
    let merged: BTreeMap<String, String> = db::from_json(v["merged"].clone(), "merges")?;
    let mut entities: Vec<StoredEntity> = db::from_json(v["entities"].clone(), "stored entities")?;
    // An entity merged since: its observations count for where it went.
    for e in &mut entities {
        if let Some(to) = merged.get(&e.entity_id) {
            e.entity_id = to.clone();
        }
    }
    Ok((entities, v["total"].as_u64().unwrap_or(0)))
}

pub fn reinterpret(args: &Value) -> Result<Value, NeotomaError> {
    let req: ReinterpretRequest = parse(args)?;
    let source = common::uuid("source_id", &req.source_id)?;
    tenancy::with_user(req.user_id.as_deref(), |user| {
        let user_s = user.to_string();
        let found = db::json(
            "SELECT jsonb_build_object('type', s.source_type, 'mime_type', s.mime_type, 'name', s.original_filename,
                      'content', s.content, 'priority', s.source_priority,
                      'file', (SELECT encode(f.content, 'base64') FROM neotoma.files f
                               WHERE f.user_id = s.user_id AND f.source_id = s.id))
             FROM neotoma.sources s WHERE s.user_id = $1::uuid AND s.id = $2::uuid",
            &[Arg::Text(&user_s), Arg::Text(&source.to_string())],
        )?;
        if found.is_null() {
            return Err(NeotomaError::new(
                ErrorCode::SourceNotFound,
                format!("no source {source}"),
            )
            .with("source_id", source.to_string()));
        }
        let outcome = match found["type"].as_str() {
            Some("file") => {
                let bytes = found["file"]
                    .as_str()
                    .and_then(decode_base64)
                    .unwrap_or_default();
                interpret_file(
                    &user,
                    &source,
                    &bytes,
                    found["mime_type"]
                        .as_str()
                        .unwrap_or("application/octet-stream"),
                    found["name"].as_str(),
                    &req.interpretation_config,
                    true,
                )?
            }
            Some("structured") => {
                reinterpret_structured(&user, &source, &found, &req.interpretation_config)?
            }
            other => {
                return Err(NeotomaError::invalid_field(
                    "source_id",
                    format!(
                        "a {} source cannot be interpreted",
                        other.unwrap_or("unknown")
                    ),
                ))
            }
        };
        to_value(&ReinterpretResponse {
            run_id: outcome.summary.run_id,
            entities_created: outcome.summary.entities_created,
            observations_created: outcome.summary.observations_created,
            source_id: source.to_string(),
            status: outcome.summary.status,
            reason: outcome.summary.reason,
            external_interpretation: outcome.external,
        })
    })
}

/// Structured content read again, under the current schemas, as a new run.
fn reinterpret_structured(
    user: &Uuid,
    source: &Uuid,
    found: &Value,
    config: &Map<String, Value>,
) -> Result<RunOutcome, NeotomaError> {
    let run = run_id(user, source, "structured", config);
    let known = db::json(
        "SELECT to_jsonb(status) FROM neotoma.interpretation_runs WHERE user_id = $1::uuid AND id = $2::uuid",
        &[Arg::Text(&user.to_string()), Arg::Text(&run.to_string())],
    )?;
    if let Some(status) = known.as_str() {
        let reason = Some("this source was interpreted with this config before".to_string());
        return Ok(RunOutcome::of(summary(&run, status, (0, 0), reason)));
    }
    let entities = found["content"]["entities"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let batch = prepare(*user, &entities, true)?;
    if !insert_run(user, &run, source, "structured", config, "running", None)? {
        return existing_run(user, &run);
    }
    let origin = Origin {
        user: *user,
        source_id: *source,
        run_id: run,
        kind: "interpretation",
        source_priority: found["priority"]
            .as_i64()
            .unwrap_or(DEFAULT_SOURCE_PRIORITY as i64) as i32,
        observed_at: None,
    };
    let stored = store_entities(&origin, &batch)?;
    finish_run(user, &run, Some(&stored), None)?;
    Ok(RunOutcome {
        summary: summary(
            &run,
            "completed",
            (stored.entities_created, stored.observations_created),
            None,
        ),
        external: None,
        entities: Some(stored.entities),
    })
}

pub fn record_interpretation(args: &Value) -> Result<Value, NeotomaError> {
    let req: RecordInterpretationRequest = parse(args)?;
    let run = common::uuid("run_id", &req.run_id)?;
    tenancy::with_user(req.user_id.as_deref(), |user| {
        let user_s = user.to_string();
        let found = db::json(
            "SELECT jsonb_build_object('status', r.status, 'source_id', r.source_id, 'priority', s.source_priority)
             FROM neotoma.interpretation_runs r JOIN neotoma.sources s ON s.user_id = r.user_id AND s.id = r.source_id
             WHERE r.user_id = $1::uuid AND r.id = $2::uuid FOR UPDATE OF r",
            &[Arg::Text(&user_s), Arg::Text(&run.to_string())],
        )?;
        if found.is_null() {
            return Err(NeotomaError::new(
                ErrorCode::NotFound,
                format!("no interpretation run {run}"),
            )
            .with("run_id", run.to_string()));
        }
        let source: Uuid = db::from_json(found["source_id"].clone(), "source id")?;
        if found["status"] != json!("pending") {
            return Err(NeotomaError::validation(format!(
                "run {run} is {}, not pending",
                found["status"]
            ))
            .with("field", "run_id")
            .with("status", found["status"].clone()));
        }
        if let Some(details) = &req.details {
            db::run(
                "UPDATE neotoma.interpretation_runs SET config = config || jsonb_build_object('call', $3::jsonb)
                 WHERE user_id = $1::uuid AND id = $2::uuid",
                &[Arg::Text(&user_s), Arg::Text(&run.to_string()), Arg::Json(&Value::Object(details.clone()))],
            )?;
        }
        let (status, created, reason) = match (&req.error, &req.entities) {
            (Some(message), _) => {
                finish_run(&user, &run, None, Some(message))?;
                ("failed", (0, 0), Some(message.clone()))
            }
            (None, entities) => {
                let batch = prepare(user, entities.as_deref().unwrap_or_default(), true)?;
                let origin = Origin {
                    user,
                    source_id: source,
                    run_id: run,
                    kind: "interpretation",
                    source_priority: found["priority"]
                        .as_i64()
                        .unwrap_or(DEFAULT_SOURCE_PRIORITY as i64)
                        as i32,
                    observed_at: None,
                };
                let stored = store_entities(&origin, &batch)?;
                finish_run(&user, &run, Some(&stored), None)?;
                let reason = (batch.skipped > 0)
                    .then(|| format!("{} entity(ies) could not be typed", batch.skipped));
                (
                    "completed",
                    (stored.entities_created, stored.observations_created),
                    reason,
                )
            }
        };
        let mut out = to_value(&summary(&run, status, created, reason))?;
        out["source_id"] = json!(source);
        let (entities, total) = stored_entities(&user_s, &source.to_string())?;
        if total > entities.len() as u64 {
            out["entities_total"] = json!(total);
        }
        out["entities"] = to_value(&entities)?;
        Ok(out)
    })
}

pub fn retrieve_file_url(args: &Value) -> Result<Value, NeotomaError> {
    let req: RetrieveFileUrlRequest = parse(args)?;
    let id = req.file_path.trim().trim_start_matches("sources/");
    let source = Uuid::parse_str(id).map_err(|_| {
        NeotomaError::new(
            ErrorCode::FileNotFound,
            format!("no file at `{}`", req.file_path),
        )
        .with("file_path", req.file_path.clone())
    })?;
    let expires_in = req.expires_in.unwrap_or(3600);
    if !(1..=7 * 24 * 3600).contains(&expires_in) {
        return Err(NeotomaError::invalid_field(
            "expires_in",
            "expires_in must be between 1 and 604800 seconds",
        ));
    }
    tenancy::with_user(req.user_id.as_deref(), |_user| {
        // The expiry is computed once: the URL carries exactly what was signed.
        let signed = db::json(
            "SELECT neotoma._sign_file($1::uuid, e.expires) || jsonb_build_object('expires', e.expires)
             FROM (SELECT $2::bigint + floor(extract(epoch FROM clock_timestamp()))::bigint AS expires) e",
            &[Arg::Text(&source.to_string()), Arg::Int(expires_in)],
        )?;
        let (Some(user), Some(kid), Some(sig), Some(expires)) = (
            signed["user_id"].as_str(),
            signed["kid"].as_str(),
            signed["sig"].as_str(),
            signed["expires"].as_i64(),
        ) else {
            return Err(NeotomaError::new(
                ErrorCode::FileNotFound,
                format!("no file at `{}`", req.file_path),
            )
            .with("file_path", req.file_path.clone()));
        };
        let base = settings::text(&settings::PUBLIC_URL).unwrap_or_default();
        let base = base.trim_end_matches('/');
        to_value(&RetrieveFileUrlResponse {
            signed_url: format!(
                "{base}/files/{user}/{source}?expires={expires}&kid={kid}&sig={sig}"
            ),
            expires_at: neotoma_core::time::format_micros(expires * 1_000_000),
        })
    })
}
