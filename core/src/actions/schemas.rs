//! Schema evolution actions: analyze_schema_candidates,
//! get_schema_recommendations, update_schema_incremental, register_schema.

use crate::schema::{FieldDef, IdentityRule, MergePolicy, TemporalField};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnalyzeSchemaCandidatesRequest {
    /// Only this entity type (all when absent).
    pub entity_type: Option<String>,
    pub user_id: Option<String>,
    /// Least occurrences a field needs (default 5).
    pub min_frequency: Option<i64>,
    /// Least confidence, 0–1 (default 0.8).
    pub min_confidence: Option<f64>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct CandidateField {
    pub field_name: String,
    /// string, number, date, boolean, array or object.
    pub field_type: String,
    pub frequency: i64,
    pub confidence: f64,
    pub type_consistency: f64,
    pub sample_values: Vec<Value>,
    pub naming_pattern_match: bool,
    pub format_consistency: f64,
    pub distinct_sources: i64,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct CandidateRecommendation {
    /// Id of the stored (pending) recommendation.
    pub id: String,
    pub entity_type: String,
    pub fields: Vec<CandidateField>,
    pub source: String,
    pub confidence_score: f64,
    pub reasoning: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct AnalyzeSchemaCandidatesResponse {
    pub recommendations: Vec<CandidateRecommendation>,
    pub total_entity_types: i64,
    pub total_fields: i64,
    pub min_frequency: i64,
    pub min_confidence: f64,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetSchemaRecommendationsRequest {
    pub entity_type: String,
    pub user_id: Option<String>,
    /// raw_fragments, agent, inference or all (default all).
    #[schemars(extend("enum" = ["raw_fragments", "agent", "inference", "all"]))]
    pub source: Option<String>,
    /// pending (default), approved, rejected, applied, auto_applied or all.
    #[schemars(extend("enum" = ["pending", "approved", "rejected", "applied", "auto_applied", "all"]))]
    pub status: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct RecommendedField {
    pub field_name: String,
    pub field_type: String,
    pub required: bool,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct StoredRecommendation {
    pub id: String,
    pub entity_type: String,
    pub fields: Vec<RecommendedField>,
    pub source: String,
    pub confidence_score: f64,
    pub reasoning: Option<String>,
    pub status: String,
    /// The statistics the recommendation rests on.
    pub evidence: Map<String, Value>,
    /// The schema version it was applied in, if any.
    pub schema_version: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct GetSchemaRecommendationsResponse {
    pub recommendations: Vec<StoredRecommendation>,
    pub total: i64,
    pub entity_type: String,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FieldToAdd {
    pub field_name: String,
    #[schemars(extend("enum" = ["string", "number", "date", "boolean", "array", "object"]))]
    pub field_type: String,
    pub required: Option<bool>,
    #[schemars(extend("enum" = ["last_write", "highest_priority", "most_specific", "merge_array", "highest_confidence"]))]
    pub reducer_strategy: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateSchemaIncrementalRequest {
    pub entity_type: String,
    pub fields_to_add: Vec<FieldToAdd>,
    /// The new version (next minor version when absent).
    pub schema_version: Option<String>,
    /// Make a variant of the schema for this user only (default false: global).
    pub user_specific: Option<bool>,
    pub user_id: Option<String>,
    /// Make it the active version now (default true).
    pub activate: Option<bool>,
    /// Turn the stored raw_fragments of these fields into observations (default false).
    pub migrate_existing: Option<bool>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct UpdateSchemaIncrementalResponse {
    pub success: bool,
    pub entity_type: String,
    pub schema_version: String,
    pub fields_added: Vec<String>,
    pub activated: bool,
    pub migrated_existing: bool,
    /// How many raw_fragments became observations.
    pub fragments_migrated: i64,
    /// global or user.
    pub scope: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SchemaDefinition {
    pub fields: BTreeMap<String, FieldDef>,
    /// Identity precedence: field names or {"composite": [..]} (default: no
    /// identity fields, so content decides identity).
    pub identity_fields: Option<Vec<IdentityRule>>,
    /// Date fields that produce timeline events.
    pub temporal_fields: Option<Vec<TemporalField>>,
    /// What the type is (used by list_entity_types).
    pub description: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReducerConfig {
    pub merge_policies: BTreeMap<String, MergePolicy>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RegisterSchemaRequest {
    pub entity_type: String,
    pub schema_definition: SchemaDefinition,
    pub reducer_config: ReducerConfig,
    /// Default "1.0".
    pub schema_version: Option<String>,
    /// A variant for this user only (default false: global).
    pub user_specific: Option<bool>,
    pub user_id: Option<String>,
    /// Make it the active version now (default false, but true for a type that has no active schema yet).
    pub activate: Option<bool>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct RegisterSchemaResponse {
    pub success: bool,
    pub entity_type: String,
    pub schema_version: String,
    pub activated: bool,
    pub scope: String,
    pub schema_id: String,
    /// Entities whose snapshots were recomputed because merge policies changed.
    pub entities_recomputed: i64,
}

/// The catalog's entries of this family's actions, by name: each one's
/// title, its description for an agent and how it behaves
/// (`crate::catalog::spec`).
pub(crate) fn spec(name: &str) -> Option<crate::catalog_entry::Entry> {
    use crate::catalog_entry::Entry;
    Some(match name {
        "analyze_schema_candidates" => Entry::new(
            "Analyze schema candidates",
            "Look at the fields kept in raw_fragments (stored data the schema \
                lacks) and recommend which should become schema fields: per field its \
                frequency, distinct sources, dominant type and type consistency, format \
                consistency, up to 10 sample values and a confidence. Filtered by min_frequency \
                (default 5) and min_confidence (default 0.8); recommendations are kept as \
                pending (get_schema_recommendations).",
        ),
        "get_schema_recommendations" => Entry::new(
            "Get schema recommendations",
            "List the stored schema recommendations for an entity type: pending ones \
                from analyze_schema_candidates, and those applied automatically (auto_applied) \
                with the evidence they rest on. Filter by source and status.",
        )
        .read_only(),
        "update_schema_incremental" => Entry::new(
            "Add fields to a schema",
            "Add fields to an entity type's schema as a new version, active at once \
                by default, so the next stores keep those fields in observations (and \
                snapshots) instead of raw_fragments. user_specific makes a variant for this user \
                only. migrate_existing turns the raw_fragments already stored for those fields \
                into observations (provenance kept) and updates the snapshots.",
        ),
        "register_schema" => Entry::new(
            "Register a schema",
            "Define a new entity type, or a new version of one: its fields (type, \
                required), identity fields, temporal fields and a merge policy per field \
                (last_write, highest_priority, most_specific, merge_array, highest_confidence; tie breaker \
                observed_at or source_priority). A new type is usable by store at once; a new \
                version of an existing type becomes active with activate=true (snapshots are \
                recomputed under the new policies).",
        )
        .not_idempotent(),
        _ => return None,
    })
}
