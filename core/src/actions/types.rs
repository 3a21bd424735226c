//! `list_entity_types`: the schema registry as agents see it (one line per
//! type, or types in full).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListEntityTypesRequest {
    /// Words to look for in type names, descriptions and field names.
    pub keyword: Option<String>,
    /// One type, in full (its fields, their types and merge policies).
    pub entity_type: Option<String>,
    /// Every type in full; by default each is one line: its name, what it
    /// is for and the fields that identify it.
    pub detail: Option<bool>,
    pub user_id: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct FieldSummary {
    #[serde(rename = "type")]
    pub field_type: String,
    pub required: bool,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct EntityTypeOut {
    pub entity_type: String,
    pub description: String,
    /// Fields that decide identity, in precedence order.
    pub identity_fields: Vec<Value>,
    /// The rest in full only (`entity_type` or `detail`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_names: Option<Vec<String>>,
    /// Field → {type, required, merge_policy}.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_summary: Option<Map<String, Value>>,
    /// "global" or "user".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub similarity_score: Option<f64>,
    /// "keyword" (its name or a field name contains it), "vector" (near in
    /// meaning) or "similarity" (fuzzy fallback).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub match_type: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ListEntityTypesResponse {
    pub entity_types: Vec<EntityTypeOut>,
    pub total: i64,
    pub keyword: Option<String>,
    /// "all", "keyword_exact", "vector_semantic" or "similarity".
    pub search_method: String,
}

/// The catalog's entries of this family's actions, by name: each one's
/// title, its description for an agent and how it behaves
/// (`crate::catalog::spec`).
pub(crate) fn spec(name: &str) -> Option<crate::catalog_entry::Entry> {
    use crate::catalog_entry::Entry;
    Some(match name {
        "list_entity_types" => Entry::new(
            "List entity types",
            "The entity types you can store, one line each (name, what it is for, the \
                fields that identify it). `keyword` ranks them by name, fields and meaning \
                ('payment' finds transaction and invoice); `entity_type` gives one type in full \
                (its fields, types, merge policies); `detail: true` gives every type in full.",
        )
        .read_only(),
        _ => return None,
    })
}
