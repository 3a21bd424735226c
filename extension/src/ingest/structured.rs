//! Stage 1 for structured entities: the canonical JSON of the entities is
//! the source (its hash, its id); then the run of the `structured`
//! interpreter over it.

use super::complete;
use super::prepare::prepare;
use super::runs::run_id;
use super::write::{observation_id, Origin, Trust};
use crate::db::{self, Arg};
use neotoma_core::actions::store::*;
use neotoma_core::canonical::{canonical_json, sha256_hex};
use neotoma_core::ids::source_id_in;
use neotoma_core::NeotomaError;
use serde_json::{json, Map, Value};
use uuid::Uuid;

/// Stores structured entities (`store` with `entities`): stages 1 to 7
/// for a source of type `structured`. Content stored before answers what
/// that store made, and creates nothing.
pub fn store(
    user: Uuid,
    entities: &[Value],
    req: &StoreRequest,
) -> Result<StoreResponse, NeotomaError> {
    if entities.is_empty() || entities.len() > MAX_ENTITIES {
        return Err(NeotomaError::invalid_field(
            "entities",
            format!("entities must hold 1 to {MAX_ENTITIES} entities"),
        )
        .with("got", entities.len()));
    }
    let valid = crate::installed::served_interval(&req.valid_from, &req.valid_to)?;
    let content = structured_content(entities, valid);
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
        .map(|p| neotoma_core::actions::common::micros("provenance.extracted_at", &p.extracted_at))
        .transpose()?;
    let batch = prepare(user, entities, false)?;
    let content_hash = sha256_hex(canonical.as_bytes());
    let workspace = crate::scope::current().write_workspace();
    let source = source_id_in(&user, &workspace, &content_hash);
    let run = run_id(&user, &source, "structured", &Map::new());
    let origin = Origin {
        user,
        source_id: source,
        run_id: run,
        kind: "store",
        trust: Trust {
            priority,
            confidence: req.confidence,
        },
        observed_at: extracted_at,
        valid,
    };

    let provenance = match &req.provenance {
        Some(p) => json!({
            "source_refs": p.source_refs, "extracted_at": p.extracted_at,
            "extractor_version": p.extractor_version, "agent_id": p.agent_id,
        }),
        None => json!({}),
    };
    // Content stored before (or at the same moment by another session, which
    // then wins) is not inserted: this store answers as its duplicate. A new
    // source gets its structured run in the same statement.
    let inserted = db::json(
        &crate::installed::adapt(
            "WITH source AS (
           INSERT INTO neotoma.sources (user_id, id, content_hash, source_type, mime_type, file_size,
                                        content, source_priority, provenance
                                        , confidence
                                        , workspace
                                        )
           VALUES ($1::uuid, $2::uuid, $3, 'structured', 'application/json', $4, $5, $6::int, $7
                   , $9
                   , $10
                   )
           ON CONFLICT DO NOTHING RETURNING id),
         run AS (
           INSERT INTO neotoma.interpretation_runs (user_id, id, source_id, interpreter, config, status)
           SELECT $1::uuid, $8::uuid, id, 'structured', '{}', 'running' FROM source
           ON CONFLICT DO NOTHING)
         SELECT to_jsonb(count(*) > 0) FROM source",
        )?,
        &[
            Arg::uuid(user),
            Arg::uuid(source),
            Arg::Text(&content_hash),
            Arg::Int(canonical.len() as i64),
            Arg::Json(&content),
            Arg::Int(priority as i64),
            Arg::Json(&provenance),
            Arg::uuid(run),
            Arg::OptText(req.confidence.map(|c| c.to_string()).as_deref()),
            Arg::Text(&workspace),
        ],
    )? == Value::Bool(true);
    if !inserted {
        super::refuse_erased(&user, &source)?;
        return deduplicated(&origin, &content_hash, batch.entities.len());
    }
    let stored = complete(&origin, &batch)?;
    Ok(StoreResponse {
        source_id: source.to_string(),
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
        // The action adds what the entities are related to.
        related_entities: None,
        related_relationships: None,
        mime_type: None,
        storage_path: None,
        external_interpretation: None,
    })
}

/// The answer for content stored before: what that store created (the
/// observations of its `count` entities), nothing new.
fn deduplicated(
    origin: &Origin,
    content_hash: &str,
    count: usize,
) -> Result<StoreResponse, NeotomaError> {
    let observation_ids: Vec<String> = (0..count)
        .map(|i| observation_id(origin, i).to_string())
        .collect();
    let found = db::json(
        "SELECT jsonb_build_object(
           'entities', coalesce((SELECT jsonb_object_agg(o.id::text, jsonb_build_object(
                          'entity_id', coalesce(e.merged_into, o.entity_id), 'entity_type', o.entity_type))
                        FROM neotoma.observations o
                        JOIN neotoma.entities e ON e.user_id = o.user_id AND e.id = o.entity_id
                        WHERE o.user_id = $1::uuid AND o.id = ANY($3)), '{}'),
           'unknown', (SELECT count(*) FROM neotoma.raw_fragments f
                       WHERE f.user_id = $1::uuid AND f.source_id = $2::uuid))",
        &[
            Arg::uuid(origin.user),
            Arg::uuid(origin.source_id),
            Arg::uuid_texts(&observation_ids),
        ],
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
    Ok(StoreResponse {
        source_id: origin.source_id.to_string(),
        content_hash: content_hash.to_string(),
        file_size: None,
        deduplicated: true,
        interpretation: Some(InterpretationSummary {
            run_id: origin.run_id.to_string(),
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
