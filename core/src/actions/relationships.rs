//! Relationships between entities: creating them, listing an entity's,
//! and one relationship's snapshot with its observations.

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

pub(crate) fn relationship_types_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "array",
        "items": {"type": "string", "enum": ["PART_OF", "CORRECTS", "REFERS_TO", "SETTLES", "DUPLICATE_OF", "DEPENDS_ON", "SUPERSEDES"]},
        "description": "Only follow relationships of these types."
    })
}

pub(crate) fn direction_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
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
    /// ISO 8601: holds in the world from (absent: always).
    pub valid_from: Option<String>,
    /// ISO 8601: until, excluded (absent: never).
    pub valid_to: Option<String>,
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
    /// When it holds in the world, when not always: [valid_from, valid_to)
    /// stretches, earliest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_during: Option<Vec<ValidStretch>>,
    /// Whether an assertion of it holds over an interval (its metadata is
    /// then rendered at the instant asked; not answered).
    #[serde(default, skip_serializing)]
    #[schemars(skip)]
    pub timed: bool,
}

/// A stretch of valid time, `[valid_from, valid_to)` (an absent end:
/// unbounded).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ValidStretch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_from: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_to: Option<String>,
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
    /// ISO 8601: as true in the world then (default now).
    pub valid_at: Option<String>,
    /// Only those holding at valid_at (default true).
    pub current_only: Option<bool>,
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
    /// ISO 8601: as true in the world then (default now).
    pub valid_at: Option<String>,
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
    /// When it holds in the world, when not always.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_during: Option<Vec<ValidStretch>>,
    /// As RelationshipOut's (not answered).
    #[serde(default, skip_serializing)]
    #[schemars(skip)]
    pub timed: bool,
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
    /// An assertion's valid time, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_from: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_to: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct GetRelationshipSnapshotResponse {
    pub snapshot: RelationshipSnapshot,
    /// Newest first.
    pub observations: Vec<RelationshipObservationOut>,
}

/// The catalog's entries of this family's actions, by name: each one's
/// title, its description for an agent and how it behaves
/// (`crate::catalog::spec`).
pub(crate) fn spec(name: &str) -> Option<crate::catalog_entry::Entry> {
    use crate::catalog_entry::Entry;
    Some(match name {
        "create_relationship" => Entry::new(
            "Create relationship",
            "Link two entities with a typed, directed relationship: PART_OF, \
                DEPENDS_ON, SUPERSEDES, CORRECTS, SETTLES (none of these may form a cycle: \
                CYCLE_DETECTED with the path), REFERS_TO or DUPLICATE_OF. Optional metadata is \
                recorded as an observation with provenance. Same type and entities → same \
                relationship id; asserting it again is idempotent.",
        ),
        "list_relationships" => Entry::new(
            "List relationships",
            "List an entity's relationships (direction inbound, outbound or both; \
                optionally one relationship_type), newest first, paginated. Returns \
                {relationships:[{id, relationship_type, source_entity_id, target_entity_id, \
                metadata, created_at}], total}.",
        )
        .read_only(),
        "get_relationship_snapshot" => Entry::new(
            "Get relationship snapshot",
            "Get one relationship (by type, source and target entity) with its \
                metadata reduced from every assertion of it, provenance per metadata field, and \
                the observations themselves.",
        )
        .read_only(),
        _ => return None,
    })
}
