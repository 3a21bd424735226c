//! Following relationships: the entities related to one within some hops,
//! and the neighborhood of an entity or a source.

use super::relationships::{direction_schema, relationship_types_schema};
use crate::workspace::WorkspaceArg;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

type Object = Map<String, Value>;

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
    /// ISO 8601: relationships holding then (default now).
    pub valid_at: Option<String>,
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
    /// ISO 8601: relationships holding then (default now).
    pub valid_at: Option<String>,
    pub user_id: Option<String>,
    /// Which workspaces to answer from: a name, "*" (all of yours) or a
    /// list; the context (set_context), else `default`, when absent.
    pub workspace: Option<WorkspaceArg>,
}

/// The catalog's entries of this family's actions, by name: each one's
/// title, its description for an agent and how it behaves
/// (`crate::catalog::spec`).
pub(crate) fn spec(name: &str) -> Option<crate::catalog_entry::Entry> {
    use crate::catalog_entry::Entry;
    Some(match name {
        "retrieve_related_entities" => Entry::new(
            "Retrieve related entities",
            "Walk the relationship graph from an entity up to max_hops (default 1, \
                at most 5) in a direction, optionally only through some relationship_types. \
                Returns the entities reached (with snapshots unless include_entities is false) \
                and the relationships walked, each once, in a stable order.",
        )
        .read_only()
        .aliases(&["get_related_entities"]),
        "retrieve_graph_neighborhood" => Entry::new(
            "Retrieve graph neighborhood",
            "Everything around one node (an entity, or a source with \
                node_type 'source'): its snapshot or source material, its relationships and \
                related entities, the sources it came from, its timeline events and, on request, \
                its observations. Use it to get full context in one call.",
        )
        .read_only()
        .aliases(&["get_graph_neighborhood"]),
        _ => return None,
    })
}
