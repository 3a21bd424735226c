//! Relationships, graph traversal, timeline and merges.

use crate::workspace::{WorkspaceArg, WorkspaceName};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

type Object = Map<String, Value>;

pub(crate) fn relationship_type_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "enum": ["PART_OF", "CORRECTS", "REFERS_TO", "SETTLES", "DUPLICATE_OF", "DEPENDS_ON", "SUPERSEDES"],
        "description": "PART_OF, DEPENDS_ON, SUPERSEDES, CORRECTS and SETTLES may not form cycles."
    })
}

fn relationship_types_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "array",
        "items": {"type": "string", "enum": ["PART_OF", "CORRECTS", "REFERS_TO", "SETTLES", "DUPLICATE_OF", "DEPENDS_ON", "SUPERSEDES"]},
        "description": "Only follow relationships of these types."
    })
}

fn direction_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "string", "enum": ["inbound", "outbound", "both"], "description": "Default both."})
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateRelationshipRequest {
    #[schemars(schema_with = "relationship_type_schema")]
    pub relationship_type: String,
    /// Entity the relationship goes from.
    pub source_entity_id: String,
    /// Entity the relationship goes to.
    pub target_entity_id: String,
    /// Facts about the relationship (amount settled, role, note…); reduced like entity fields.
    pub metadata: Option<Object>,
    pub user_id: Option<String>,
    /// The workspace to write in; the context (set_context), else `default`,
    /// when absent. What it names must lie there.
    pub workspace: Option<WorkspaceName>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct RelationshipOut {
    pub id: String,
    pub relationship_type: String,
    pub source_entity_id: String,
    pub target_entity_id: String,
    /// The relationship's current metadata (its snapshot).
    pub metadata: Object,
    pub created_at: String,
    /// Set when the relationship is deleted (shown with include_deleted, or
    /// when a creation asserts a deleted relationship again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleted_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleted_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListRelationshipsRequest {
    pub entity_id: String,
    #[schemars(schema_with = "direction_schema")]
    pub direction: Option<String>,
    pub relationship_type: Option<String>,
    /// Max results (1–1000, default 100).
    pub limit: Option<i64>,
    pub offset: Option<i64>,
    /// Also list deleted relationships and those to deleted entities, with
    /// deleted_at (default false).
    pub include_deleted: Option<bool>,
    pub user_id: Option<String>,
    /// Which workspaces to answer from: a name, "*" (all of yours) or a
    /// list; the context (set_context), else `default`, when absent.
    pub workspace: Option<WorkspaceArg>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ListRelationshipsResponse {
    /// Newest first (created_at DESC, then id).
    pub relationships: Vec<RelationshipOut>,
    pub total: i64,
    pub limit: i64,
    pub offset: i64,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetRelationshipSnapshotRequest {
    #[schemars(schema_with = "relationship_type_schema")]
    pub relationship_type: String,
    pub source_entity_id: String,
    pub target_entity_id: String,
    /// Answer for a deleted relationship too (with deleted_at) instead of
    /// NOT_FOUND (default false).
    pub include_deleted: Option<bool>,
    pub user_id: Option<String>,
    /// Which workspaces to answer from: a name, "*" (all of yours) or a
    /// list; the context (set_context), else `default`, when absent.
    pub workspace: Option<WorkspaceArg>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct RelationshipSnapshot {
    /// `{type}:{source}:{target}`.
    pub relationship_key: String,
    pub id: String,
    pub relationship_type: String,
    pub source_entity_id: String,
    pub target_entity_id: String,
    pub schema_version: String,
    pub snapshot: Object,
    pub computed_at: Option<String>,
    pub observation_count: i64,
    pub last_observation_at: Option<String>,
    /// Metadata field → observation id.
    pub provenance: Object,
    pub user_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleted_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleted_reason: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct RelationshipObservationOut {
    pub id: String,
    /// `assertion`, or `deletion` / `restoration` of the relationship.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    pub source_id: String,
    pub observed_at: String,
    pub specificity_score: f64,
    pub source_priority: i32,
    pub metadata: Object,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct GetRelationshipSnapshotResponse {
    pub snapshot: RelationshipSnapshot,
    /// Newest first.
    pub observations: Vec<RelationshipObservationOut>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetrieveRelatedEntitiesRequest {
    /// Where to start.
    pub entity_id: String,
    #[schemars(schema_with = "relationship_types_schema")]
    pub relationship_types: Option<Vec<String>>,
    #[schemars(schema_with = "direction_schema")]
    pub direction: Option<String>,
    /// How many relationship hops to follow (1–5, default 1).
    pub max_hops: Option<i64>,
    /// Include each entity's snapshot (default true).
    pub include_entities: Option<bool>,
    pub user_id: Option<String>,
    /// Which workspaces to answer from: a name, "*" (all of yours) or a
    /// list; the context (set_context), else `default`, when absent.
    pub workspace: Option<WorkspaceArg>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct RelatedEntity {
    pub id: String,
    pub entity_type: String,
    pub canonical_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<Object>,
    /// Hops from the start.
    pub hop: i64,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct RelationshipRef {
    pub id: String,
    pub relationship_type: String,
    pub source_entity_id: String,
    pub target_entity_id: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct RetrieveRelatedEntitiesResponse {
    /// By hop, then id.
    pub entities: Vec<RelatedEntity>,
    /// By hop, then id.
    pub relationships: Vec<RelationshipRef>,
    pub total_entities: i64,
    pub total_relationships: i64,
    pub hops_traversed: i64,
    /// True when the result was cut at the size limit.
    pub truncated: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetrieveGraphNeighborhoodRequest {
    /// An entity id or a source id.
    pub node_id: String,
    /// "entity" (default) or "source".
    #[schemars(extend("enum" = ["entity", "source"]))]
    pub node_type: Option<String>,
    /// Default true.
    pub include_relationships: Option<bool>,
    /// Default true.
    pub include_sources: Option<bool>,
    /// Default true.
    pub include_events: Option<bool>,
    /// Default false.
    pub include_observations: Option<bool>,
    pub user_id: Option<String>,
    /// Which workspaces to answer from: a name, "*" (all of yours) or a
    /// list; the context (set_context), else `default`, when absent.
    pub workspace: Option<WorkspaceArg>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListTimelineEventsRequest {
    /// e.g. InvoiceIssued, TaskDue.
    pub event_type: Option<String>,
    /// Only events at or after this date (ISO 8601).
    pub after_date: Option<String>,
    /// Only events before this date (ISO 8601).
    pub before_date: Option<String>,
    /// Only events from this source.
    pub source_id: Option<String>,
    /// Only events of this entity.
    pub entity_id: Option<String>,
    /// Max results (1–1000, default 100).
    pub limit: Option<i64>,
    pub offset: Option<i64>,
    pub user_id: Option<String>,
    /// Which workspaces to answer from: a name, "*" (all of yours) or a
    /// list; the context (set_context), else `default`, when absent.
    pub workspace: Option<WorkspaceArg>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct TimelineEventOut {
    pub id: String,
    pub event_type: String,
    pub event_timestamp: String,
    pub source_id: String,
    pub entity_ids: Vec<String>,
    pub properties: Object,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ListTimelineEventsResponse {
    /// Newest first (event_timestamp DESC, then id).
    pub events: Vec<TimelineEventOut>,
    pub total: i64,
    pub limit: i64,
    pub offset: i64,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MergeEntitiesRequest {
    pub user_id: Option<String>,
    /// The workspace to write in; the context (set_context), else `default`,
    /// when absent. What it names must lie there.
    pub workspace: Option<WorkspaceName>,
    /// The duplicate, merged away.
    pub from_entity_id: String,
    /// The entity that remains.
    pub to_entity_id: String,
    pub merge_reason: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct MergeEntitiesResponse {
    pub from_entity_id: String,
    pub to_entity_id: String,
    /// Observations that now count for the target.
    pub observations_moved: i64,
    /// Relationships re-keyed onto the target.
    pub relationships_moved: i64,
    pub merged_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merge_reason: Option<String>,
}
