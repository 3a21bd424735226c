//! Actions of the earlier specification (seed 001) whose requests differ from
//! their successors': `submit_payload` (a capability and a body → `store`)
//! and `upload_file` (a local file → `store`); the deprecated record actions
//! are in `records`. Callable, not listed as tools.

use super::store::StoreProvenance;
use crate::error::{ErrorCode, NeotomaError, Result};
use crate::workspace::WorkspaceName;
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
