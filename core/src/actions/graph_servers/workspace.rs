//! The `workspace` tool set: the tools of the workspace-partitioned graph
//! server (seed 003), with its names, parameters and response shapes. Its
//! `workspaceName` is any text; it selects the Neotoma workspace
//! [`crate::workspace::WorkspaceName::from_label`] makes of it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadGraphRequest {
    /// Partition key for isolation.
    #[serde(rename = "workspaceName")]
    pub workspace_name: String,
    /// Entities per page (default and at most 1000).
    pub limit: Option<i64>,
    /// The `nextCursor` of the previous page.
    pub cursor: Option<String>,
    /// ISO 8601: as true in the world then (default now).
    #[serde(default, rename = "validAt")]
    pub valid_at: Option<String>,
    #[serde(default)]
    #[schemars(skip)]
    pub user_id: Option<String>,
}

/// An entity as the server shows it.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct EntityModel {
    #[serde(rename = "workspaceName")]
    pub workspace_name: String,
    pub name: String,
    #[serde(rename = "entityType")]
    pub entity_type: String,
    pub observations: Vec<String>,
    /// A JSON text, as the writer gave it.
    pub metadata: Option<String>,
    pub id: String,
}

/// A relation as the server shows it.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct RelationModel {
    /// The relationship holding it.
    pub id: String,
    #[serde(rename = "workspaceName")]
    pub workspace_name: String,
    #[serde(rename = "fromEntityId")]
    pub from_entity_id: String,
    #[serde(rename = "toEntityId")]
    pub to_entity_id: String,
    #[serde(rename = "relationType")]
    pub relation_type: String,
    pub metadata: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ReadGraphResponse {
    #[serde(rename = "workspaceName")]
    pub workspace_name: String,
    pub entities: Vec<EntityModel>,
    /// The relations starting at the entities of this page.
    pub relations: Vec<RelationModel>,
    #[serde(
        rename = "nextCursor",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub next_cursor: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpsertEntityRequest {
    #[serde(rename = "workspaceName")]
    pub workspace_name: String,
    /// Matched within the workspace: an entity of this name is updated.
    pub name: String,
    #[serde(rename = "entityType")]
    pub entity_type: String,
    /// Replaces the entity's observations when given.
    pub observations: Option<Vec<String>>,
    /// A JSON text kept as given; replaces the entity's when given.
    pub metadata: Option<String>,
    #[serde(default)]
    #[schemars(skip)]
    pub user_id: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct UpsertEntityResponse {
    pub success: bool,
    pub id: String,
    pub workspace: String,
    pub name: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpsertRelationRequest {
    #[serde(rename = "workspaceName")]
    pub workspace_name: String,
    #[serde(rename = "fromEntityId")]
    pub from_entity_id: Option<String>,
    #[serde(rename = "toEntityId")]
    pub to_entity_id: Option<String>,
    /// Legacy: the source entity's name (instead of fromEntityId).
    pub from: Option<String>,
    /// Legacy: the target entity's name (instead of toEntityId).
    pub to: Option<String>,
    #[serde(rename = "relationType")]
    pub relation_type: String,
    /// A JSON text kept as given.
    pub metadata: Option<String>,
    #[serde(default)]
    #[schemars(skip)]
    pub user_id: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct UpsertRelationResponse {
    pub success: bool,
    #[serde(rename = "relationId")]
    pub relation_id: String,
    pub workspace: String,
    #[serde(rename = "fromEntityId")]
    pub from_entity_id: String,
    #[serde(rename = "toEntityId")]
    pub to_entity_id: String,
    #[serde(rename = "relationType")]
    pub relation_type: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetEntityRelationsRequest {
    #[serde(rename = "workspaceName")]
    pub workspace_name: String,
    /// The entity's id (preferred).
    #[serde(rename = "entityId")]
    pub entity_id: Option<String>,
    /// Or its name.
    #[serde(rename = "entityName")]
    pub entity_name: Option<String>,
    /// ISO 8601: as true in the world then (default now).
    #[serde(default, rename = "validAt")]
    pub valid_at: Option<String>,
    #[serde(default)]
    #[schemars(skip)]
    pub user_id: Option<String>,
}

/// One relation from the entity.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct OutgoingRelation {
    pub id: String,
    #[serde(rename = "relationType")]
    pub relation_type: String,
    #[serde(rename = "toEntityId")]
    pub to_entity_id: String,
    pub metadata: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct GetEntityRelationsResponse {
    pub success: bool,
    #[serde(rename = "workspaceName")]
    pub workspace_name: String,
    #[serde(rename = "entityId")]
    pub entity_id: String,
    pub relations: Vec<OutgoingRelation>,
}

/// The catalog's entries of this family's actions, by name: each one's
/// title, its description for an agent and how it behaves
/// (`crate::catalog::spec`).
pub(crate) fn spec(name: &str) -> Option<crate::catalog_entry::Entry> {
    use crate::catalog_entry::Entry;
    use crate::tool_sets::ToolSet;
    Some(match name {
        "workspace_read_graph" => Entry::new(
            "Read graph",
            "Returns all entities and relations for a workspace (workspaceName), a page at a \
                time: up to `limit` entities (at most 1000) in the order they were created, \
                with the relations starting at them, and nextCursor (pass it as `cursor`) while \
                more follow.",
        )
        .read_only()
        .in_set(ToolSet::Workspace),
        "workspace_upsert_entity" => Entry::new(
            "Upsert entity",
            "Creates or updates an entity by name within a workspace: entityType, \
                observations (replacing the entity's when given) and metadata (a JSON text). \
                Returns {success, id, workspace, name}.",
        )
        .in_set(ToolSet::Workspace),
        "workspace_upsert_relation" => Entry::new(
            "Upsert relation",
            "Creates or updates a relation between two existing entities of a workspace, \
                named by fromEntityId/toEntityId or by the legacy from/to names, with an \
                optional metadata JSON text. Returns {success, relationId, workspace, \
                fromEntityId, toEntityId, relationType}.",
        )
        .in_set(ToolSet::Workspace),
        "workspace_get_entity_relations" => Entry::new(
            "Get entity relations",
            "Lists all relations originating from a given entity of a workspace (entityId, \
                preferred, or entityName). Returns {success, workspaceName, entityId, \
                relations:[{id, relationType, toEntityId, metadata}]}.",
        )
        .read_only()
        .in_set(ToolSet::Workspace),
        _ => return None,
    })
}
