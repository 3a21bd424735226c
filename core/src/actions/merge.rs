//! Merging a duplicate entity into the one that remains.

use crate::workspace::WorkspaceName;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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

/// The catalog's entries of this family's actions, by name: each one's
/// title, its description for an agent and how it behaves
/// (`crate::catalog::spec`).
pub(crate) fn spec(name: &str) -> Option<crate::catalog_entry::Entry> {
    use crate::catalog_entry::Entry;
    Some(match name {
        "merge_entities" => Entry::new(
            "Merge entities",
            "Merge a duplicate entity (from_entity_id) into another of the same type \
                (to_entity_id): its observations, relationships and events count for the target \
                from now on, the target's snapshot is recomputed, and the duplicate is hidden \
                (retrieving it redirects to the target). Nothing is deleted; the merge is logged \
                with its reason. Merging an entity twice is ENTITY_ALREADY_MERGED.",
        )
        .not_idempotent()
        .destructive(),
        _ => return None,
    })
}
