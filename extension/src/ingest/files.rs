//! Stage 1 and 3 for files: the bytes (stored once per user and content
//! hash), and reading them: a built-in reader in the database, or the
//! gateway's model, for which the run is left pending until it answers
//! (`record_interpretation`). Also `reinterpret`, for any stored source.
//! The handlers of those two actions (actions/files.rs) call in here.

use super::complete;
use super::prepare::prepare;
use super::runs::{
    check_quota, earlier_run, existing_run, finish_run, insert_run, run_id, summary, RunOutcome,
};
use super::write::{Origin, Trust};
use crate::db::{self, Arg};
use crate::registry;
use crate::settings;
use neotoma_core::actions::store::*;
use neotoma_core::canonical::sha256_hex;
use neotoma_core::ids::source_id_in;
use neotoma_core::interpret::{self, decode_base64, detect_mime, interpreter_for, normalize_mime};
use neotoma_core::{ErrorCode, NeotomaError};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use uuid::Uuid;

/// Where a file source's bytes are, as `retrieve_file_url` takes it.
pub fn storage_path(source: &Uuid) -> String {
    format!("sources/{source}")
}

/// A stored file, as its interpretation needs it.
struct StoredFile<'a> {
    source: Uuid,
    bytes: &'a [u8],
    mime: &'a str,
    filename: Option<&'a str>,
    /// The source's trust, which its observations get.
    trust: Trust,
}

/// Interprets a stored file with `config`: a built-in reader when one knows
/// its MIME type (synchronously), else the MCP server's model when it has one
/// (the run is left pending with the work described for it), else nothing:
/// with `explicit` (the caller asked for interpretation) that is
/// UNSUPPORTED_FILE_TYPE, otherwise a `skipped` run saying why.
fn interpret_file(
    user: &Uuid,
    file: &StoredFile,
    config: &Map<String, Value>,
    explicit: bool,
) -> Result<RunOutcome, NeotomaError> {
    let StoredFile {
        source,
        bytes,
        mime,
        filename,
        trust,
    } = *file;
    let source = &source;
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
            // Recorded once: a run that exists already is left as it is.
            let run = run_id(user, source, "none", config);
            insert_run(user, &run, source, "none", config, "skipped", Some(&reason))?;
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
            "config": config, "entity_types": types,
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
        .map(|a| (*a.schema).clone())
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
            let origin = Origin::interpretation(*user, *source, run, trust);
            let stored = complete(&origin, &batch)?;
            let reason = (batch.skipped > 0).then(|| {
                format!(
                    "{} part(s) could not be typed and were left out",
                    batch.skipped
                )
            });
            Ok(RunOutcome::completed(&run, stored, reason))
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

/// A stored file source: how many observations it has, its MIME type and
/// its trust (`Trust::of`).
const EXISTING_SOURCE: &str = "
    SELECT jsonb_build_object('observations', (SELECT count(*) FROM neotoma.observations o
                                                WHERE o.user_id = s.user_id AND o.source_id = s.id),
                              'mime_type', s.mime_type, 'priority', s.source_priority,
                              'confidence', to_jsonb(s) -> 'confidence')
    FROM neotoma.sources s WHERE s.user_id = $1::uuid AND s.id = $2::uuid";

/// Stores a file (`store` with `file_content`): stage 1 for a source of
/// type `file` (its bytes once per user and hash), then, unless told not to
/// or already done, its interpretation.
pub fn store(user: Uuid, content: &str, req: &StoreRequest) -> Result<StoreResponse, NeotomaError> {
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
    let workspace = crate::scope::current().write_workspace();
    let source = source_id_in(&user, &workspace, &content_hash);
    let mut existing = db::json(EXISTING_SOURCE, &[Arg::uuid(user), Arg::uuid(source)])?;
    let mut deduplicated = !existing.is_null();
    if deduplicated {
        super::refuse_erased(&user, &source)?;
    }
    let mime = if deduplicated {
        existing["mime_type"].as_str().unwrap_or(&mime).to_string()
    } else {
        mime
    };
    if !deduplicated {
        // The same file stored at the same moment by another session: that
        // store wins and this one answers as a duplicate of it.
        let inserted = db::inserted(
            &crate::installed::adapt(
                "INSERT INTO neotoma.sources (user_id, id, content_hash, source_type, mime_type, original_filename,
                                          file_size, storage_path, source_priority
                                          , confidence
                                          , workspace
                                          )
             VALUES ($1::uuid, $2::uuid, $3, 'file', $4, $5, $6, $7, $8::int
                     , $9
                     , $10
                     )
             ON CONFLICT DO NOTHING",
            )?,
            &[
                Arg::uuid(user),
                Arg::uuid(source),
                Arg::Text(&content_hash),
                Arg::Text(&mime),
                Arg::OptText(filename),
                Arg::Int(bytes.len() as i64),
                Arg::Text(&storage_path(&source)),
                Arg::Int(req.source_priority.unwrap_or(DEFAULT_SOURCE_PRIORITY) as i64),
                Arg::OptText(req.confidence.map(|c| c.to_string()).as_deref()),
                Arg::Text(&workspace),
            ],
        )?;
        if inserted {
            db::run(
                "INSERT INTO neotoma.files (user_id, source_id, content) VALUES ($1::uuid, $2::uuid, $3)",
                &[Arg::uuid(user), Arg::uuid(source), Arg::Bytes(&bytes)],
            )?;
        } else {
            deduplicated = true;
            super::refuse_erased(&user, &source)?;
            existing = db::json(EXISTING_SOURCE, &[Arg::uuid(user), Arg::uuid(source)])?;
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
            &StoredFile {
                source,
                bytes: &bytes,
                mime: &mime,
                filename,
                // A new source has the request's trust, a stored one its own.
                trust: if existing.is_null() {
                    Trust {
                        priority: req.source_priority.unwrap_or(DEFAULT_SOURCE_PRIORITY),
                        confidence: req.confidence,
                    }
                } else {
                    Trust::of(&existing)
                },
            },
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
        None => stored_entities(&user, &source)?,
    };
    Ok(StoreResponse {
        source_id: source.to_string(),
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
fn stored_entities(user: &Uuid, source: &Uuid) -> Result<(Vec<StoredEntity>, u64), NeotomaError> {
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
        &[Arg::uuid(user), Arg::uuid(source), Arg::Int(MAX_LISTED_ENTITIES as i64)],
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

/// A stored source read again with another config, as a new run (the
/// earlier runs' observations stay): what `reinterpret` does (its handler,
/// in actions/files.rs, reads the request and makes the answer).
pub fn reinterpret(
    user: Uuid,
    source: Uuid,
    config: &Map<String, Value>,
) -> Result<RunOutcome, NeotomaError> {
    let found = db::json(
        "SELECT jsonb_build_object('type', s.source_type, 'mime_type', s.mime_type, 'name', s.original_filename,
                  'content', s.content, 'priority', s.source_priority,
                  'confidence', to_jsonb(s) -> 'confidence', 'workspace', to_jsonb(s) -> 'workspace')
         FROM neotoma.sources s WHERE s.user_id = $1::uuid AND s.id = $2::uuid",
        &[Arg::uuid(user), Arg::uuid(source)],
    )?;
    if found.is_null() {
        return Err(
            NeotomaError::new(ErrorCode::SourceNotFound, format!("no source {source}"))
                .with("source_id", source.to_string()),
        );
    }
    // Read again into the source's workspace.
    crate::scope::writing_in(found["workspace"].as_str(), || {
        match found["type"].as_str() {
            Some("file") => {
                let bytes = db::bytes(
                "SELECT content FROM neotoma.files WHERE user_id = $1::uuid AND source_id = $2::uuid",
                &[Arg::uuid(user), Arg::uuid(source)],
            )?
            .unwrap_or_default();
                interpret_file(
                    &user,
                    &StoredFile {
                        source,
                        bytes: &bytes,
                        mime: found["mime_type"]
                            .as_str()
                            .unwrap_or("application/octet-stream"),
                        filename: found["name"].as_str(),
                        trust: Trust::of(&found),
                    },
                    config,
                    true,
                )
            }
            Some("structured") => reinterpret_structured(&user, &source, &found, config),
            other => Err(NeotomaError::invalid_field(
                "source_id",
                format!(
                    "a {} source cannot be interpreted",
                    other.unwrap_or("unknown")
                ),
            )),
        }
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
    if let Some(earlier) = earlier_run(user, &run)? {
        return Ok(earlier);
    }
    let entities = found["content"]["entities"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let batch = prepare(*user, &entities, true)?;
    if !insert_run(user, &run, source, "structured", config, "running", None)? {
        return existing_run(user, &run);
    }
    let origin = Origin::interpretation(*user, *source, run, Trust::of(found));
    let stored = complete(&origin, &batch)?;
    Ok(RunOutcome::completed(&run, stored, None))
}

/// What the gateway's model read from a file (`Ok`: its entities, `Err`:
/// why it could not), for the pending run it was asked to make, with the
/// facts about the call (`details`): what `record_interpretation` does (its
/// handler is in actions/files.rs).
pub fn record_interpretation(
    user: Uuid,
    run: Uuid,
    read: Result<&[Value], &str>,
    details: Option<&Map<String, Value>>,
) -> Result<Value, NeotomaError> {
    let found = db::json(
        "SELECT jsonb_build_object('status', r.status, 'source_id', r.source_id, 'priority', s.source_priority,
                                  'confidence', to_jsonb(s) -> 'confidence', 'workspace', to_jsonb(s) -> 'workspace')
         FROM neotoma.interpretation_runs r JOIN neotoma.sources s ON s.user_id = r.user_id AND s.id = r.source_id
         WHERE r.user_id = $1::uuid AND r.id = $2::uuid FOR UPDATE OF r",
        &[Arg::uuid(user), Arg::uuid(run)],
    )?;
    if found.is_null() {
        return Err(
            NeotomaError::new(ErrorCode::NotFound, format!("no interpretation run {run}"))
                .with("run_id", run.to_string()),
        );
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
    if let Some(details) = details {
        db::run(
            "UPDATE neotoma.interpretation_runs SET config = config || jsonb_build_object('call', $3::jsonb)
             WHERE user_id = $1::uuid AND id = $2::uuid",
            &[Arg::uuid(user), Arg::uuid(run), Arg::Json(&Value::Object(details.clone()))],
        )?;
    }
    let (status, created, reason) = match read {
        Err(message) => {
            finish_run(&user, &run, None, Some(message))?;
            ("failed", (0, 0), Some(message.to_string()))
        }
        Ok(entities) => {
            // Into the source's workspace.
            let (batch, stored) = crate::scope::writing_in(found["workspace"].as_str(), || {
                let batch = prepare(user, entities, true)?;
                let origin = Origin::interpretation(user, source, run, Trust::of(&found));
                let stored = complete(&origin, &batch)?;
                Ok((batch, stored))
            })?;
            let reason = (batch.skipped > 0)
                .then(|| format!("{} entity(ies) could not be typed", batch.skipped));
            (
                "completed",
                (stored.entities_created, stored.observations_created),
                reason,
            )
        }
    };
    let mut out = json!(summary(&run, status, created, reason));
    out["source_id"] = json!(source);
    let (entities, total) = stored_entities(&user, &source)?;
    if total > entities.len() as u64 {
        out["entities_total"] = json!(total);
    }
    out["entities"] = json!(entities);
    Ok(out)
}
