//! The `memory` tool set: the tools of the reference MCP memory server
//! (`@modelcontextprotocol/server-memory`), with its names, parameters and
//! response shapes, over graph entities ([`crate::memory_graph`]).
//!
//! Requests say nothing of users or workspaces (the original has neither):
//! the caller is the gateway's, the workspace the caller's context. The
//! `user_id` trusted back ends may pass over SQL is not in the schemas, nor
//! is `provenance` (the `memory.jsonl` import's: the file it read).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An entity as the memory server shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryEntity {
    /// The name of the entity
    pub name: String,
    /// The type of the entity
    #[serde(rename = "entityType")]
    pub entity_type: String,
    /// An array of observation contents associated with the entity
    pub observations: Vec<String>,
}

/// A relation as the memory server shows it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryRelation {
    /// The name of the entity where the relation starts
    pub from: String,
    /// The name of the entity where the relation ends
    pub to: String,
    /// The type of the relation
    #[serde(rename = "relationType")]
    pub relation_type: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateEntitiesRequest {
    pub entities: Vec<MemoryEntity>,
    #[serde(default)]
    #[schemars(skip)]
    pub provenance: Option<Value>,
    #[serde(default)]
    #[schemars(skip)]
    pub user_id: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct CreateEntitiesResponse {
    /// The entities created (a name already in the graph is left as it is).
    pub entities: Vec<MemoryEntity>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateRelationsRequest {
    pub relations: Vec<MemoryRelation>,
    #[serde(default)]
    #[schemars(skip)]
    pub provenance: Option<Value>,
    #[serde(default)]
    #[schemars(skip)]
    pub user_id: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct CreateRelationsResponse {
    /// The relations created (one already in the graph is left out).
    pub relations: Vec<MemoryRelation>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ObservationAddition {
    /// The name of the entity to add the observations to
    #[serde(rename = "entityName")]
    pub entity_name: String,
    /// An array of observation contents to add
    pub contents: Vec<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddObservationsRequest {
    pub observations: Vec<ObservationAddition>,
    #[serde(default)]
    #[schemars(skip)]
    pub user_id: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct AddedObservations {
    #[serde(rename = "entityName")]
    pub entity_name: String,
    #[serde(rename = "addedObservations")]
    pub added_observations: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct AddObservationsResponse {
    pub results: Vec<AddedObservations>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteEntitiesRequest {
    /// An array of entity names to delete
    #[serde(rename = "entityNames")]
    pub entity_names: Vec<String>,
    #[serde(default)]
    #[schemars(skip)]
    pub user_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ObservationDeletion {
    /// The name of the entity containing the observations
    #[serde(rename = "entityName")]
    pub entity_name: String,
    /// An array of observations to delete
    pub observations: Vec<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteObservationsRequest {
    pub deletions: Vec<ObservationDeletion>,
    #[serde(default)]
    #[schemars(skip)]
    pub user_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteRelationsRequest {
    /// An array of relations to delete
    pub relations: Vec<MemoryRelation>,
    #[serde(default)]
    #[schemars(skip)]
    pub user_id: Option<String>,
}

/// What the memory server's deletions answer.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct SuccessResponse {
    pub success: bool,
    pub message: String,
}

/// `read_graph` reads the graph a page at a time (the original answers the
/// whole graph, which outgrows an agent's context): `limit` entities (100
/// unless given, at most 1000) in the order they were created, with every
/// relation starting at one of them, and `nextCursor` while more follow.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadGraphRequest {
    /// Entities per page (default 100, at most 1000).
    pub limit: Option<i64>,
    /// The `nextCursor` of the previous page.
    pub cursor: Option<String>,
    /// ISO 8601: as true in the world then (default now).
    #[serde(default)]
    pub valid_at: Option<String>,
    #[serde(default)]
    #[schemars(skip)]
    pub user_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchNodesRequest {
    /// The search query to match against entity names, types, and observation content
    pub query: String,
    /// ISO 8601: as true in the world then (default now).
    #[serde(default)]
    pub valid_at: Option<String>,
    #[serde(default)]
    #[schemars(skip)]
    pub user_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenNodesRequest {
    /// An array of entity names to retrieve
    pub names: Vec<String>,
    /// ISO 8601: as true in the world then (default now).
    #[serde(default)]
    pub valid_at: Option<String>,
    #[serde(default)]
    #[schemars(skip)]
    pub user_id: Option<String>,
}

/// A graph, or part of one: entities and the relations touching them.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct GraphResponse {
    pub entities: Vec<MemoryEntity>,
    pub relations: Vec<MemoryRelation>,
    /// read_graph: the cursor of the next page, while there is one.
    #[serde(
        rename = "nextCursor",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub next_cursor: Option<String>,
    /// search_nodes: true when more entities matched than the 1000 shown.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// The catalog's entries of this family's actions, by name: each one's
/// title, its description for an agent and how it behaves
/// (`crate::catalog::spec`).
pub(crate) fn spec(name: &str) -> Option<crate::catalog_entry::Entry> {
    use crate::catalog_entry::Entry;
    use crate::tool_sets::ToolSet;
    Some(match name {
        "memory_create_entities" => Entry::new(
            "Create Entities",
            "Create multiple new entities in the knowledge graph. (An entity whose name the \
                graph has already is left as it is; the entities created are returned.)",
        )
        .not_idempotent()
        .in_set(ToolSet::Memory),
        "memory_create_relations" => Entry::new(
            "Create Relations",
            "Create multiple new relations between entities in the knowledge graph. Relations \
                should be in active voice. (Both entities must exist; a relation the graph has \
                already is left out of the answer.)",
        )
        .not_idempotent()
        .in_set(ToolSet::Memory),
        "memory_add_observations" => Entry::new(
            "Add Observations",
            "Add new observations to existing entities in the knowledge graph",
        )
        .not_idempotent()
        .in_set(ToolSet::Memory),
        "memory_delete_entities" => Entry::new(
            "Delete Entities",
            "Delete multiple entities and their associated relations from the knowledge graph",
        )
        .destructive()
        .in_set(ToolSet::Memory),
        "memory_delete_observations" => Entry::new(
            "Delete Observations",
            "Delete specific observations from entities in the knowledge graph",
        )
        .destructive()
        .in_set(ToolSet::Memory),
        "memory_delete_relations" => Entry::new(
            "Delete Relations",
            "Delete multiple relations from the knowledge graph",
        )
        .destructive()
        .in_set(ToolSet::Memory),
        "memory_read_graph" => Entry::new(
            "Read Graph",
            "Read the entire knowledge graph, a page at a time: up to `limit` entities (100 \
                unless given, at most 1000) in the order they were created, with the relations \
                starting at them; while more follow, pass the answer's nextCursor as `cursor`.",
        )
        .read_only()
        .in_set(ToolSet::Memory),
        "memory_search_nodes" => Entry::new(
            "Search Nodes",
            "Search for nodes in the knowledge graph based on a query (matched, case \
                folded, against entity names, types, and observation content; at most 1000 \
                entities, with the relations touching them)",
        )
        .read_only()
        .in_set(ToolSet::Memory),
        "memory_open_nodes" => Entry::new(
            "Open Nodes",
            "Open specific nodes in the knowledge graph by their names (with the relations \
                touching them)",
        )
        .read_only()
        .in_set(ToolSet::Memory),
        _ => return None,
    })
}
