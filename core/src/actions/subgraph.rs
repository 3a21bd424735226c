//! Subgraphs (seed 002's `search_subgraph` and `get_subgraph_by_ids`, on
//! this truth model): entities with their latest observations and the
//! relationships among them, found by a search or named by id.

use crate::workspace::WorkspaceArg;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

type Object = Map<String, Value>;

/// Entities per page (default) and at most; observations per entity.
pub const PER_PAGE: i64 = 20;
pub const MAX_PER_PAGE: i64 = 100;
pub const OBSERVATIONS_PER_ENTITY: i64 = 10;
/// Most ids `get_subgraph_by_ids` takes.
pub const MAX_IDS: usize = 100;

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchSubgraphRequest {
    /// What to look for (1–1000 characters), as retrieve_entities' search reads it.
    pub query: String,
    /// Match names, typos forgiven (default true).
    pub search_in_name: Option<bool>,
    /// Match entity types: the query names a type (default true).
    pub search_in_type: Option<bool>,
    /// Match the names of entities merged into others (default true).
    pub search_in_aliases: Option<bool>,
    /// Match what is known of them: every snapshot value, every
    /// observation's values and the stored text files they came from
    /// (default true).
    pub search_in_observations: Option<bool>,
    /// Page number, from 1 (default 1).
    pub page: Option<i64>,
    /// Entities per page (1–100, default 20).
    pub per_page: Option<i64>,
    /// ISO 8601: relationships holding then (default now).
    pub valid_at: Option<String>,
    pub user_id: Option<String>,
    /// Which workspaces to answer from: a name, "*" (all of yours) or a
    /// list; the context (set_context), else `default`, when absent.
    pub workspace: Option<WorkspaceArg>,
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetSubgraphByIdsRequest {
    /// Entity ids (1–100).
    pub entity_ids: Vec<String>,
    /// ISO 8601: relationships holding then (default now).
    pub valid_at: Option<String>,
    pub user_id: Option<String>,
    /// Which workspaces to answer from: a name, "*" (all of yours) or a
    /// list; the context (set_context), else `default`, when absent.
    pub workspace: Option<WorkspaceArg>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SubgraphObservation {
    pub id: String,
    pub kind: String,
    pub source_id: String,
    pub observed_at: String,
    pub fields: Object,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SubgraphEntity {
    pub entity_id: String,
    pub entity_type: String,
    pub canonical_name: String,
    pub snapshot: Object,
    pub observation_count: i64,
    /// The latest observations, newest first (at most 10).
    pub observations: Vec<SubgraphObservation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relevance_score: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matched_fields: Option<Vec<String>>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SubgraphRelationship {
    pub id: String,
    pub relationship_type: String,
    pub source_entity_id: String,
    pub target_entity_id: String,
    /// Its metadata at the valid time asked for.
    pub snapshot: Object,
    /// When it holds in the world, when not always.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_during: Option<Vec<crate::actions::relationships::ValidStretch>>,
    /// Whether an assertion of it holds over an interval (not answered).
    #[serde(default, skip_serializing)]
    #[schemars(skip)]
    pub timed: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SubgraphResponse {
    /// Best first (search), or in the order asked for (by ids).
    pub entities: Vec<SubgraphEntity>,
    /// The current relationships whose both ends are among `entities`.
    pub relationships: Vec<SubgraphRelationship>,
    /// Search: entities matching in all, and the page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_page: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_method: Option<String>,
    /// By ids: the ids that name no current entity of the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<Vec<String>>,
}

/// The catalog's entries of this family's actions, by name: each one's
/// title, its description for an agent and how it behaves
/// (`crate::catalog::spec`).
pub(crate) fn spec(name: &str) -> Option<crate::catalog_entry::Entry> {
    use crate::catalog_entry::Entry;
    Some(match name {
        "search_subgraph" => Entry::new(
            "Search a subgraph",
            "Search the memory and get a subgraph: the entities that match query (names with \
                typos forgiven, entity types, names of entities merged into them, every snapshot \
                value; each search_in_* turns one off), best first and paginated (page, per_page \
                up to 100), each with its snapshot, its latest observations, relevance_score and \
                matched_fields, and the current relationships among them. Returns {entities: \
                [{entity_id, entity_type, canonical_name, snapshot, observation_count, \
                observations, relevance_score, matched_fields}], relationships: [{id, \
                relationship_type, source_entity_id, target_entity_id, snapshot}], total, page, \
                per_page, search_method}.",
        )
        .read_only(),
        "get_subgraph_by_ids" => Entry::new(
            "Get a subgraph by ids",
            "The entities named by entity_ids (1–100, in that order), each with its snapshot and \
                latest observations, and the current relationships among them; ids that name no \
                current entity are listed in missing. Returns {entities, relationships, missing}.",
        )
        .read_only(),
        _ => return None,
    })
}
