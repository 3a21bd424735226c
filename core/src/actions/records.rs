//! The deprecated record actions of the earlier specification (seed 001): a
//! record is an entity (`update_record` → corrections, `retrieve_records` →
//! entities, `delete_record` → deletion). Callable, not listed as tools.

use crate::workspace::{WorkspaceArg, WorkspaceName};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

/// `update_record` (deprecated): a record is an entity; its properties are
/// set by corrections.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateRecordRequest {
    /// The record: an entity id.
    pub id: String,
    /// The record's type: when given, the entity's type (it cannot change).
    #[serde(rename = "type")]
    pub record_type: Option<String>,
    /// Fields of the entity's schema and their new values (null clears one).
    pub properties: Option<Map<String, Value>>,
    /// Ignored: files are sources now (store them with store).
    pub file_urls: Option<Vec<String>>,
    /// Ignored: embeddings are not kept.
    pub embedding: Option<Vec<f64>>,
    pub user_id: Option<String>,
    /// The workspace to write in; the context (set_context), else `default`,
    /// when absent.
    pub workspace: Option<WorkspaceName>,
}

/// How `retrieve_records` searched (seed 001): every mode is answered by
/// keyword matching here.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RecordSearchMode {
    Semantic,
    Keyword,
    Both,
}

/// `retrieve_records` (deprecated): entities as records.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetrieveRecordsRequest {
    /// Only records (entities) of this type.
    #[serde(rename = "type")]
    pub record_type: Option<String>,
    /// Only records whose properties have these values.
    pub properties: Option<Map<String, Value>>,
    /// At most this many (1 to 100, default 10).
    pub limit: Option<i64>,
    /// Terms that must each appear in the record's name or a property value
    /// (case-insensitive).
    pub search: Option<Vec<String>>,
    pub search_mode: Option<RecordSearchMode>,
    /// Ignored (keyword matching only).
    pub similarity_threshold: Option<f64>,
    /// Ignored (keyword matching only).
    pub query_embedding: Option<Vec<f64>>,
    pub user_id: Option<String>,
    /// Which workspaces to answer from: a name, "*" (all of yours) or a
    /// list; the context (set_context), else `default`, when absent.
    pub workspace: Option<WorkspaceArg>,
}

/// `delete_record` (deprecated).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteRecordRequest {
    /// The record: an entity id.
    pub id: String,
    pub user_id: Option<String>,
    /// The workspace to write in; the context (set_context), else `default`,
    /// when absent.
    pub workspace: Option<WorkspaceName>,
}

/// Default and largest page of `retrieve_records`.
pub const RECORDS_DEFAULT_LIMIT: i64 = 10;
pub const RECORDS_MAX_LIMIT: i64 = 100;

/// The catalog's entries of this family's actions, by name: each one's
/// title, its description for an agent and how it behaves
/// (`crate::catalog::spec`).
pub(crate) fn spec(name: &str) -> Option<crate::catalog_entry::Entry> {
    use crate::catalog_entry::Entry;
    Some(match name {
        "update_record" => Entry::new(
            "Update record (deprecated)",
            "Deprecated (earlier specification): sets the properties of a record \
                (an entity: `id`) by corrections, one per property. Use correct.",
        )
        .legacy(),
        "retrieve_records" => Entry::new(
            "Retrieve records (deprecated)",
            "Deprecated (earlier specification): entities as records, filtered by \
                `type`, `properties` and keyword `search` terms. Use retrieve_entities.",
        )
        .read_only()
        .legacy(),
        "delete_record" => Entry::new(
            "Delete record (deprecated)",
            "Deprecated (earlier specification): deletes a record (an entity) as \
                delete_entity does; its history stays. Use delete_entity.",
        )
        .destructive()
        .legacy(),
        _ => return None,
    })
}
