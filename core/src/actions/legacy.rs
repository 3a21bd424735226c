//! Actions of the earlier specification (seed 001) whose requests differ from
//! their successors': `submit_payload` (a capability and a body → `store`),
//! `upload_file` (a local file → `store`), and the deprecated record actions
//! (`update_record` → corrections, `retrieve_records` → entities,
//! `delete_record` → corrections that clear every field). Callable, not
//! listed as tools.

use super::store::StoreProvenance;
use crate::error::{ErrorCode, NeotomaError, Result};
use crate::workspace::{WorkspaceArg, WorkspaceName};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SubmitPayloadRequest {
    /// e.g. "neotoma:store_invoice:v1".
    pub capability_id: String,
    /// The payload's fields.
    pub body: Map<String, Value>,
    /// The same provenance as store's.
    pub provenance: StoreProvenance,
    pub client_request_id: Option<String>,
    pub user_id: Option<String>,
    /// The workspace to write in; the context (set_context), else `default`,
    /// when absent.
    pub workspace: Option<WorkspaceName>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UploadFileRequest {
    /// A file readable by the MCP server.
    #[schemars(extend("x-neotoma-read-file" = {"content_field": "file_content", "name_field": "original_filename"}))]
    pub file_path: Option<String>,
    /// The file, base64 (what the MCP server sends after reading file_path).
    pub file_content: Option<String>,
    pub original_filename: Option<String>,
    /// Ignored (records are gone; sources replace them).
    pub record_id: Option<String>,
    /// Ignored (files live in the database).
    pub bucket: Option<String>,
    /// JSON properties: when given, the file is not interpreted.
    pub properties: Option<String>,
    pub user_id: Option<String>,
    /// The workspace to write in; the context (set_context), else `default`,
    /// when absent.
    pub workspace: Option<WorkspaceName>,
}

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

/// The capabilities of the earlier specification, each naming an entity type.
pub const CAPABILITY_TYPES: [&str; 5] = ["invoice", "transaction", "receipt", "contract", "note"];

/// `neotoma:store_invoice:v1` → `invoice`.
pub fn capability_entity_type(capability_id: &str) -> Result<&'static str> {
    capability_id
        .strip_prefix("neotoma:store_")
        .and_then(|rest| rest.strip_suffix(":v1"))
        .and_then(|t| CAPABILITY_TYPES.iter().copied().find(|c| *c == t))
        .ok_or_else(|| {
            NeotomaError::new(
                ErrorCode::UnknownCapability,
                format!(
                    "unknown capability `{capability_id}`; known: {}; for other data use store with an entity_type",
                    CAPABILITY_TYPES.map(|t| format!("neotoma:store_{t}:v1")).join(", ")
                ),
            )
            .with("field", "capability_id")
        })
}

/// The catalog's entries of this family's actions, by name: each one's
/// title, its description for an agent and how it behaves
/// (`crate::catalog::spec`).
pub(crate) fn spec(name: &str) -> Option<crate::catalog_entry::Entry> {
    use crate::catalog_entry::Entry;
    Some(match name {
        "submit_payload" => Entry::new(
            "Submit payload (earlier specification)",
            "Earlier name: stores `body` as an entity of the capability's type \
                (neotoma:store_invoice:v1 → invoice) with `provenance`. Use store.",
        )
        .legacy(),
        "upload_file" => Entry::new(
            "Upload file (earlier specification)",
            "Earlier name: stores a local file (file_path) like store does; with \
                `properties` the file is not interpreted. Use store.",
        )
        .legacy(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capabilities_name_entity_types() {
        assert_eq!(
            capability_entity_type("neotoma:store_invoice:v1").unwrap(),
            "invoice"
        );
        assert_eq!(
            capability_entity_type("neotoma:store_note:v1").unwrap(),
            "note"
        );
        for bad in [
            "neotoma:store_invoice:v2",
            "store_invoice",
            "neotoma:store_:v1",
            "neotoma:store_person:v1",
        ] {
            assert_eq!(
                capability_entity_type(bad).unwrap_err().code,
                ErrorCode::UnknownCapability,
                "{bad}"
            );
        }
    }
}
