//! The `graphmem` tool set: GraphMem's tools (seed 002), with its names,
//! parameters and integer ids. Every entity, text observation and relation
//! a user is shown gets a stable integer id the first time (per user, in
//! order: `neotoma.graph_ids`); entity types are canonicalized through
//! `neotoma.entity_type_mappings` (variant → canonical, global rows seeded
//! with the document's, a user's own rows first).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Operations of one bulk_update, at most.
pub const MAX_BULK: usize = 50;

macro_rules! no_arguments {
    ($($name:ident),*) => {$(
        #[derive(Debug, Default, Deserialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            #[serde(default)]
            #[schemars(skip)]
            pub user_id: Option<String>,
        }
    )*};
}
no_arguments!(
    GetVersionRequest,
    GetCurrentTimeRequest,
    GetContextRequest,
    ClearContextRequest
);

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct VersionResponse {
    pub version: String,
    pub server: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct CurrentTimeResponse {
    /// ISO 8601.
    pub current_time: String,
}

/// An entity, without its observations.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct EntityOut {
    pub entity_id: i64,
    pub name: String,
    pub entity_type: String,
    pub aliases: Option<String>,
    pub description: Option<String>,
    pub memory_observations_count: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ObservationOut {
    pub observation_id: i64,
    pub entity_id: i64,
    pub text_content: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RelationOut {
    pub relation_id: i64,
    pub from_entity_id: i64,
    pub to_entity_id: i64,
    pub relation_type: String,
}

/// An entity with its observations and relations.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct EntityDetail {
    #[serde(flatten)]
    pub entity: EntityOut,
    pub observations: Vec<ObservationOut>,
    pub relations: Vec<RelationOut>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewEntity {
    /// The unique name for the new entity.
    pub name: String,
    /// The type classification (auto-canonicalized, e.g. "workspace" becomes "Project").
    pub entity_type: String,
    /// Pipe-separated alternative names.
    pub aliases: Option<String>,
    /// Short description of the entity.
    pub description: Option<String>,
    /// Initial observations.
    pub observations: Option<Vec<String>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateEntityRequest {
    /// The unique name for the new entity.
    pub name: String,
    /// The type classification (auto-canonicalized, e.g. "workspace" becomes "Project").
    pub entity_type: String,
    /// Pipe-separated alternative names.
    pub aliases: Option<String>,
    /// Short description of the entity.
    pub description: Option<String>,
    /// Initial observations.
    pub observations: Option<Vec<String>>,
    #[serde(default)]
    #[schemars(skip)]
    pub user_id: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct CreateEntityResponse {
    /// `created`, or `duplicate_warning` when a similar entity exists (then
    /// nothing is created).
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entity: Option<EntityDetail>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub existing_entity: Option<EntityOut>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cosine_distance: Option<f64>,
}

macro_rules! entity_id_request {
    ($($name:ident),*) => {$(
        #[derive(Debug, Deserialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            /// The ID of the entity.
            pub entity_id: i64,
            #[serde(default)]
            #[schemars(skip)]
            pub user_id: Option<String>,
        }
    )*};
}
entity_id_request!(DeleteEntityRequest);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetEntityRequest {
    /// The ID of the entity.
    pub entity_id: i64,
    /// ISO 8601: as true in the world then (default now).
    #[serde(default)]
    pub valid_at: Option<String>,
    #[serde(default)]
    #[schemars(skip)]
    pub user_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateEntityRequest {
    /// The ID of the entity.
    pub entity_id: i64,
    /// New name (must be unique).
    pub name: Option<String>,
    /// New type (auto-canonicalized).
    pub entity_type: Option<String>,
    /// New aliases (replaces existing). Empty string clears.
    pub aliases: Option<String>,
    /// New description. Empty string clears.
    pub description: Option<String>,
    #[serde(default)]
    #[schemars(skip)]
    pub user_id: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct DeletedResponse {
    pub status: String,
    pub id: i64,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateObservationRequest {
    /// The entity to attach the observation to.
    pub entity_id: i64,
    /// The observation content.
    pub text_content: String,
    #[serde(default)]
    #[schemars(skip)]
    pub user_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteObservationRequest {
    /// The ID of the observation.
    pub observation_id: i64,
    #[serde(default)]
    #[schemars(skip)]
    pub user_id: Option<String>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewRelation {
    /// Source entity ID.
    pub from_entity_id: i64,
    /// Target entity ID.
    pub to_entity_id: i64,
    /// Relationship type (e.g., "part_of", "depends_on").
    pub relation_type: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateRelationRequest {
    /// Source entity ID.
    pub from_entity_id: i64,
    /// Target entity ID.
    pub to_entity_id: i64,
    /// Relationship type (e.g., "part_of", "depends_on").
    pub relation_type: String,
    #[serde(default)]
    #[schemars(skip)]
    pub user_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteRelationRequest {
    /// The ID of the relation.
    pub relation_id: i64,
    #[serde(default)]
    #[schemars(skip)]
    pub user_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindRelationsRequest {
    /// Filter by source entity.
    pub from_entity_id: Option<i64>,
    /// Filter by target entity.
    pub to_entity_id: Option<i64>,
    /// Filter by relation type.
    pub relation_type: Option<String>,
    /// ISO 8601: as true in the world then (default now).
    #[serde(default)]
    pub valid_at: Option<String>,
    #[serde(default)]
    #[schemars(skip)]
    pub user_id: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct RelationsResponse {
    /// At most 1000.
    pub relations: Vec<RelationOut>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchEntitiesRequest {
    /// The search term. Multiple words are tokenized for matching.
    pub query: String,
    /// ISO 8601: as true in the world then (default now).
    #[serde(default)]
    pub valid_at: Option<String>,
    #[serde(default)]
    #[schemars(skip)]
    pub user_id: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct SearchHit {
    pub entity_id: i64,
    pub name: String,
    pub entity_type: String,
    pub description: Option<String>,
    pub aliases: Option<String>,
    pub memory_observations_count: i64,
    /// Reciprocal rank fusion of the text and vector rankings.
    pub relevance_score: f64,
    /// Which of name, entity_type, aliases, description and observations
    /// hold a word of the query.
    pub matched_fields: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct SearchEntitiesResponse {
    /// Best first, at most 50.
    pub results: Vec<SearchHit>,
}

fn first_page() -> i64 {
    1
}
fn twenty() -> i64 {
    20
}
fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListEntitiesRequest {
    /// Page number (default 1).
    #[serde(default = "first_page")]
    pub page: i64,
    /// Entities per page (default 20, max 100).
    #[serde(default = "twenty")]
    pub per_page: i64,
    /// ISO 8601: as true in the world then (default now).
    #[serde(default)]
    pub valid_at: Option<String>,
    #[serde(default)]
    #[schemars(skip)]
    pub user_id: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ListEntitiesResponse {
    pub entities: Vec<EntityOut>,
    pub page: i64,
    pub per_page: i64,
    pub total_count: i64,
    pub total_pages: i64,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchSubgraphRequest {
    /// Search term.
    pub query: String,
    #[serde(default = "yes")]
    pub search_in_name: bool,
    #[serde(default = "yes")]
    pub search_in_type: bool,
    #[serde(default = "yes")]
    pub search_in_aliases: bool,
    #[serde(default = "yes")]
    pub search_in_observations: bool,
    #[serde(default = "first_page")]
    pub page: i64,
    /// Entities per page (default 20, max 100).
    #[serde(default = "twenty")]
    pub per_page: i64,
    /// ISO 8601: as true in the world then (default now).
    #[serde(default)]
    pub valid_at: Option<String>,
    #[serde(default)]
    #[schemars(skip)]
    pub user_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetSubgraphByIdsRequest {
    /// Entity IDs to include (at most 100).
    pub entity_ids: Vec<i64>,
    /// ISO 8601: as true in the world then (default now).
    #[serde(default)]
    pub valid_at: Option<String>,
    #[serde(default)]
    #[schemars(skip)]
    pub user_id: Option<String>,
}

/// Entities with their observations, and the relations among them.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct SubgraphResponse {
    pub entities: Vec<EntityDetail>,
    pub relations: Vec<RelationOut>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_page: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_count: Option<i64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetContextRequest {
    /// The ID of the project entity to scope to.
    pub project_id: i64,
    #[serde(default)]
    #[schemars(skip)]
    pub user_id: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ContextResponse {
    /// `context_set`, `active`, `no_context` or `context_cleared`.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_id: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkObservation {
    pub entity_id: i64,
    pub text_content: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkUpdateRequest {
    /// Entities to create.
    pub entities: Option<Vec<NewEntity>>,
    /// Observations to add.
    pub observations: Option<Vec<BulkObservation>>,
    /// Relations to create.
    pub relations: Option<Vec<NewRelation>>,
    #[serde(default)]
    #[schemars(skip)]
    pub user_id: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct BulkUpdateResponse {
    pub status: String,
    pub operations: i64,
    pub entities: Vec<EntityOut>,
    pub observations: Vec<ObservationOut>,
    pub relations: Vec<RelationOut>,
}

fn default_threshold() -> f64 {
    0.3
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SuggestMergesRequest {
    /// Maximum cosine distance (0 = identical, 1 = unrelated; default 0.3).
    #[serde(default = "default_threshold")]
    pub threshold: f64,
    /// Maximum suggestions (default 20, at most 100).
    #[serde(default = "twenty")]
    pub limit: i64,
    /// Filter to a specific entity type.
    pub entity_type: Option<String>,
    #[serde(default)]
    #[schemars(skip)]
    pub user_id: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct MergeSuggestion {
    pub entity_a: EntityOut,
    pub entity_b: EntityOut,
    pub cosine_distance: f64,
    pub recommendation: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct SuggestMergesResponse {
    /// Closest first.
    pub suggestions: Vec<MergeSuggestion>,
}

/// What a suggested pair's distance recommends.
pub fn recommendation(distance: f64) -> &'static str {
    if distance < 0.1 {
        "merge: almost certainly the same"
    } else if distance < 0.2 {
        "likely the same: review, then merge"
    } else {
        "possibly related: review"
    }
}

/// The words of a query, folded, for matched_fields.
pub fn words(query: &str) -> Vec<String> {
    let mut w: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_lowercase)
        .collect();
    w.sort();
    w.dedup();
    w
}

impl CreateEntityRequest {
    pub fn entity(&self) -> NewEntity {
        NewEntity {
            name: self.name.clone(),
            entity_type: self.entity_type.clone(),
            aliases: self.aliases.clone(),
            description: self.description.clone(),
            observations: self.observations.clone(),
        }
    }
}

/// The catalog's entries of this family's actions, by name: each one's
/// title, its description for an agent and how it behaves
/// (`crate::catalog::spec`).
pub(crate) fn spec(name: &str) -> Option<crate::catalog_entry::Entry> {
    use crate::catalog_entry::Entry;
    use crate::tool_sets::ToolSet;
    Some(match name {
        "graphmem_get_version" => Entry::new(
            "Get version",
            "Returns the current version of the GraphMem server (here: the Neotoma \
                extension's). Returns {version, server}.",
        )
        .read_only()
        .in_set(ToolSet::Graphmem),
        "graphmem_get_current_time" => Entry::new(
            "Get current time",
            "Returns the current server time as an ISO 8601 string: {current_time}.",
        )
        .read_only()
        .not_idempotent()
        .in_set(ToolSet::Graphmem),
        "graphmem_create_entity" => Entry::new(
            "Create entity",
            "Creates a new entity (name, entity_type auto-canonicalized e.g. workspace \
                becomes Project, pipe-separated aliases, description, initial observations). \
                Performs auto-deduplication: if an entity of the same name, or a semantically \
                similar one (cosine distance < 0.25), exists, returns status duplicate_warning \
                with the existing entity instead of creating a duplicate. Returns {status, \
                entity | warning, existing_entity, cosine_distance}.",
        )
        .not_idempotent()
        .in_set(ToolSet::Graphmem),
        "graphmem_get_entity" => Entry::new(
            "Get entity",
            "Retrieves an entity by ID (an integer), including observations and relations.",
        )
        .read_only()
        .in_set(ToolSet::Graphmem),
        "graphmem_update_entity" => Entry::new(
            "Update entity",
            "Updates entity name (must be unique), type (auto-canonicalized), aliases and/or \
                description (an empty string clears). Returns the entity with observations and \
                relations.",
        )
        .in_set(ToolSet::Graphmem),
        "graphmem_delete_entity" => Entry::new(
            "Delete entity",
            "Deletes an entity and all associated observations and relations (its history is \
                kept). Returns {status, id}.",
        )
        .destructive()
        .in_set(ToolSet::Graphmem),
        "graphmem_create_observation" => Entry::new(
            "Create observation",
            "Adds an observation (text_content) to an existing entity; it is searchable by \
                meaning at once. Returns {observation_id, entity_id, text_content}.",
        )
        .in_set(ToolSet::Graphmem),
        "graphmem_delete_observation" => Entry::new(
            "Delete observation",
            "Deletes an observation by ID. Returns {status, id}.",
        )
        .destructive()
        .in_set(ToolSet::Graphmem),
        "graphmem_create_relation" => Entry::new(
            "Create relation",
            "Creates a typed relationship between two entities (relation_type e.g. part_of, \
                depends_on). Returns {relation_id, from_entity_id, to_entity_id, relation_type}.",
        )
        .in_set(ToolSet::Graphmem),
        "graphmem_delete_relation" => Entry::new(
            "Delete relation",
            "Deletes a relation by ID. Returns {status, id}.",
        )
        .destructive()
        .in_set(ToolSet::Graphmem),
        "graphmem_find_relations" => Entry::new(
            "Find relations",
            "Finds relations by optional filters (from_entity_id, to_entity_id, \
                relation_type). Returns {relations}, at most 1000.",
        )
        .read_only()
        .in_set(ToolSet::Graphmem),
        "graphmem_search_entities" => Entry::new(
            "Search entities",
            "Hybrid search combining text tokenization with vector semantic similarity, \
                merged by Reciprocal Rank Fusion. Returns {results:[{entity_id, name, \
                entity_type, description, aliases, memory_observations_count, relevance_score, \
                matched_fields}]}, at most 50.",
        )
        .read_only()
        .in_set(ToolSet::Graphmem),
        "graphmem_list_entities" => Entry::new(
            "List entities",
            "Paginated listing of all entities (page, default 1; per_page, default 20, max \
                100), in the order they were created. Returns {entities, page, per_page, \
                total_count, total_pages}.",
        )
        .read_only()
        .in_set(ToolSet::Graphmem),
        "graphmem_search_subgraph" => Entry::new(
            "Search subgraph",
            "Searches across entity names, types, aliases and observations (each can be \
                turned off) and returns a paginated subgraph: the matching entities with their \
                observations and the relations among them. Returns {entities, relations, page, \
                per_page, total_count}.",
        )
        .read_only()
        .in_set(ToolSet::Graphmem),
        "graphmem_get_subgraph_by_ids" => Entry::new(
            "Get subgraph by IDs",
            "Retrieves a set of entities by their IDs (at most 100) with observations and the \
                relations among them. Returns {entities, relations}.",
        )
        .read_only()
        .in_set(ToolSet::Graphmem),
        "graphmem_set_context" => Entry::new(
            "Set context",
            "Sets the active project context (project_id: the ID of the project entity) for \
                subsequent operations; it is kept in the memory, so it holds across connections. \
                Returns {status, project_id, project_name, project_type}.",
        )
        .in_set(ToolSet::Graphmem),
        "graphmem_get_context" => Entry::new(
            "Get context",
            "Returns the currently active project context {status: active, project_id, \
                project_name, project_type, description}, or {status: no_context}.",
        )
        .read_only()
        .in_set(ToolSet::Graphmem),
        "graphmem_clear_context" => Entry::new(
            "Clear context",
            "Clears the active project context. Returns {status: context_cleared}.",
        )
        .destructive()
        .in_set(ToolSet::Graphmem),
        "graphmem_bulk_update" => Entry::new(
            "Bulk update",
            "Performs multiple operations in a single atomic transaction, at most 50: \
                entities to create ({name, entity_type, aliases?, description?, observations?}), \
                observations to add ({entity_id, text_content}), relations to create \
                ({from_entity_id, to_entity_id, relation_type}). Rolls back entirely on any \
                error. Returns {status, operations, entities, observations, relations}.",
        )
        .not_idempotent()
        .in_set(ToolSet::Graphmem),
        "graphmem_suggest_merges" => Entry::new(
            "Suggest merges",
            "Finds potential duplicate entities by vector cosine similarity: pairs within \
                threshold (maximum cosine distance, default 0.3), at most limit (default 20), \
                optionally of one entity_type. Returns {suggestions:[{entity_a, entity_b, \
                cosine_distance, recommendation}]}.",
        )
        .read_only()
        .in_set(ToolSet::Graphmem),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documented_defaults_and_words() {
        let r: SearchSubgraphRequest =
            serde_json::from_value(serde_json::json!({"query": "q"})).unwrap();
        assert!(
            r.search_in_name && r.search_in_type && r.search_in_aliases && r.search_in_observations
        );
        assert_eq!((r.page, r.per_page), (1, 20));
        let m: SuggestMergesRequest = serde_json::from_value(serde_json::json!({})).unwrap();
        assert_eq!((m.threshold, m.limit), (0.3, 20));
        assert_eq!(
            words("Rails, API-server rails"),
            vec!["api", "rails", "server"]
        );
        assert_eq!(recommendation(0.05), "merge: almost certainly the same");
        let c: CreateEntityRequest =
            serde_json::from_value(serde_json::json!({"name": "n", "entity_type": "repo"}))
                .unwrap();
        assert_eq!(c.entity_type, "repo");
    }
}
