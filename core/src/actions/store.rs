//! `store`: the unified action that stores source material.

use crate::confidence::Confidence;
use crate::valid_time::Interval;
use crate::workspace::WorkspaceName;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

/// Largest structured payload one `store` accepts (canonical JSON bytes).
pub const MAX_STRUCTURED_BYTES: usize = 4 * 1024 * 1024;
/// Most entities one `store` accepts.
pub const MAX_ENTITIES: usize = 1000;
/// Default source priority of stored data.
pub const DEFAULT_SOURCE_PRIORITY: i32 = 100;

fn entities_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "array",
        "minItems": 1,
        "maxItems": MAX_ENTITIES,
        "description": "Structured form: the entities to store. Each object has `entity_type` (see \
            list_entity_types) and its fields. Include ALL fields of the source data: fields \
            the schema lacks are kept in raw_fragments, never dropped.",
        "items": {
            "type": "object",
            "required": ["entity_type"],
            "properties": {"entity_type": {"type": "string", "description": "e.g. invoice, person, note"}},
            "additionalProperties": true
        }
    })
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StoreProvenance {
    /// Ids of the sources this data was derived from.
    #[serde(default)]
    pub source_refs: Option<Vec<String>>,
    /// When the data was extracted (ISO 8601); becomes the observations' observed_at.
    pub extracted_at: String,
    /// Version of what extracted it, e.g. "my-agent/1.2".
    pub extractor_version: String,
    /// Which agent stored it.
    #[serde(default)]
    pub agent_id: Option<String>,
}

/// Store source material: structured entities (`entities`), or a file
/// (`file_content` base64 or `file_path`, with `mime_type`).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StoreRequest {
    /// User the material belongs to (UUID); optional when the connection already identifies the user.
    pub user_id: Option<String>,
    /// The workspace to write in; the context (set_context), else `default`,
    /// when absent. What it names must lie there.
    pub workspace: Option<WorkspaceName>,
    #[schemars(schema_with = "entities_schema")]
    pub entities: Option<Vec<Value>>,
    /// How much this source is trusted (default 100; corrections use 1000).
    #[schemars(range(min = 0, max = 999))]
    pub source_priority: Option<i32>,
    /// Where the structured data came from.
    pub provenance: Option<StoreProvenance>,
    /// How far its observations are to be believed (admiralty code: source
    /// reliability A–F, information credibility 1–6, e.g. B2); default F3.
    /// A file's interpretations, now or later, have it too.
    pub confidence: Option<Confidence>,
    /// ISO 8601: when the fields start to hold in the world (absent: always).
    pub valid_from: Option<String>,
    /// ISO 8601: when they stop holding, excluded (absent: never).
    pub valid_to: Option<String>,
    /// Unstructured form: the file's bytes, base64-encoded.
    pub file_content: Option<String>,
    /// Unstructured form: a path readable by the MCP server (alternative to file_content).
    #[schemars(extend("x-neotoma-read-file" = {"content_field": "file_content", "name_field": "original_filename"}))]
    pub file_path: Option<String>,
    /// MIME type of the file, e.g. application/pdf (detected when absent).
    pub mime_type: Option<String>,
    /// Original file name.
    pub original_filename: Option<String>,
    /// Interpret the file into entities now (default true).
    pub interpret: Option<bool>,
    /// Interpretation settings: provider, model_id, temperature, prompt_hash, code_version, feature_flags.
    pub interpretation_config: Option<Map<String, Value>>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct InterpretationSummary {
    pub run_id: String,
    pub entities_created: u64,
    pub observations_created: u64,
    /// completed, pending (an external model is reading the file), failed or skipped.
    #[serde(default = "completed")]
    pub status: String,
    /// Why it was skipped or failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

fn completed() -> String {
    "completed".into()
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct StoredEntity {
    pub entity_id: String,
    pub entity_type: String,
    pub observation_id: String,
}

/// Most entities a file store lists in its answer.
pub const MAX_LISTED_ENTITIES: usize = 1000;

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct StoreResponse {
    /// Id of the source (same content → same id).
    pub source_id: String,
    /// SHA-256 of the content.
    pub content_hash: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_size: Option<i64>,
    /// True when this content was stored before: nothing new was created.
    pub deduplicated: bool,
    pub interpretation: Option<InterpretationSummary>,
    /// The entities the content is about (for a file, the first
    /// `MAX_LISTED_ENTITIES`; `entities_total` then says how many there are).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entities: Option<Vec<StoredEntity>>,
    /// How many entities a file's observations are about, when `entities`
    /// lists only the first of them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entities_total: Option<u64>,
    /// Fields kept in raw_fragments because the schema lacks them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown_fields_count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub related_entities: Option<Vec<Map<String, Value>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub related_relationships: Option<Vec<Map<String, Value>>>,
    /// MIME type of a stored file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Where a stored file is (for retrieve_file_url).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub storage_path: Option<String>,
    /// Work for the MCP server's model interpreter (it completes it before answering).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external_interpretation: Option<Value>,
}

/// The canonical content of a structured store: what its hash is taken of.
/// Only the entities count: the same entities stored again (with another
/// timestamp or priority) are the same source.
pub fn structured_content(entities: &[Value], valid: Interval) -> Value {
    valid.stamped(json!({ "entities": entities }))
}

/// The catalog's entries of this family's actions, by name: each one's
/// title, its description for an agent and how it behaves
/// (`crate::catalog::spec`).
pub(crate) fn spec(name: &str) -> Option<crate::catalog_entry::Entry> {
    use crate::catalog_entry::Entry;
    Some(match name {
        "store" => Entry::new(
            "Store source material",
            "Store what you learned. Structured: `entities`, an array of objects each \
                with an `entity_type` (call list_entity_types first to pick it) and ALL the fields \
                of the source data; fields the schema lacks are kept in raw_fragments \
                (`unknown_fields_count`). Unstructured: `file_content` (base64) or `file_path` with \
                `mime_type`, interpreted by the server (do not extract fields yourself). Content is \
                hashed: storing the same content again returns the same source_id with \
                `deduplicated: true` and creates nothing. The same real-world thing stored twice \
                (same identity fields, e.g. an invoice number and vendor, a person's e-mail) lands \
                on one entity. Returns {source_id, content_hash, deduplicated, interpretation, \
                entities:[{entity_id, entity_type, observation_id}], unknown_fields_count}.",
        )
        .aliases(&["ingest", "ingest_structured"]),
        _ => return None,
    })
}
