//! Stored sources read again and stored files handed out: `reinterpret` (a
//! new interpretation run), `record_interpretation` (what the gateway's
//! model read, for a pending run) and `retrieve_file_url` (a signed URL).

use crate::workspace::WorkspaceArg;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Request of `reinterpret`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReinterpretRequest {
    /// The source to interpret again.
    pub source_id: String,
    /// provider, model_id, temperature, prompt_hash, code_version, feature_flags (and entity_type for CSV).
    pub interpretation_config: Map<String, Value>,
    pub user_id: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ReinterpretResponse {
    pub run_id: String,
    pub entities_created: u64,
    pub observations_created: u64,
    pub source_id: String,
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external_interpretation: Option<Value>,
}

/// Request of `record_interpretation` (used by the MCP server's model
/// interpreter, not an agent tool).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordInterpretationRequest {
    pub run_id: String,
    /// The entities the model read (objects with entity_type).
    pub entities: Option<Vec<Value>>,
    /// Set when the model could not read the file.
    pub error: Option<String>,
    /// Facts about the call (model, tokens, elapsed) kept with the run.
    pub details: Option<Map<String, Value>>,
    pub user_id: Option<String>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetrieveFileUrlRequest {
    /// The file's storage_path (from store or retrieve_field_provenance), or its source id.
    pub file_path: String,
    /// Seconds the URL stays valid (default 3600, at most 604800).
    pub expires_in: Option<i64>,
    pub user_id: Option<String>,
    /// Which workspaces to answer from: a name, "*" (all of yours) or a
    /// list; the context (set_context), else `default`, when absent.
    pub workspace: Option<WorkspaceArg>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RetrieveFileUrlResponse {
    pub signed_url: String,
    pub expires_at: String,
}

/// The catalog's entries of this family's actions, by name: each one's
/// title, its description for an agent and how it behaves
/// (`crate::catalog::spec`).
pub(crate) fn spec(name: &str) -> Option<crate::catalog_entry::Entry> {
    use crate::catalog_entry::Entry;
    Some(match name {
        "reinterpret" => Entry::new(
            "Reinterpret a source",
            "Interpret a stored source again with a new interpretation_config \
                (provider, model_id, temperature, prompt_hash, code_version, feature_flags; \
                entity_type for CSV). It is a new interpretation run: the observations of earlier \
                runs stay, and the reducer decides what snapshots show. The same source and \
                config give the same run and observations.",
        ),
        "retrieve_file_url" => Entry::new(
            "Retrieve file URL",
            "Get a signed, expiring URL (expires_in seconds, default 3600) to \
                download a stored file (by its storage_path or source id) from the MCP server's \
                HTTP endpoint. Returns {signed_url, expires_at}.",
        )
        .read_only()
        .not_idempotent()
        .aliases(&["get_file_url"]),
        "record_interpretation" => Entry::new(
            "Record an interpretation",
            "Record what an external model read from a file (entities, or an \
                error) for a pending interpretation run. Used by the MCP server's model \
                interpreter, not an agent tool.",
        )
        .internal(),
        _ => return None,
    })
}
