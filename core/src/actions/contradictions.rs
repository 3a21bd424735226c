//! `list_contradictions`: where observations of one entity disagree.

use crate::contradictions::Contradiction;
use crate::workspace::WorkspaceArg;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListContradictionsRequest {
    /// One entity's contradictions (an entity merged into another answers
    /// for that one).
    pub entity_id: Option<String>,
    /// Those of the entities of one type (without either: every type).
    pub entity_type: Option<String>,
    /// Also those a correction resolved (default true; each says
    /// `resolved`).
    pub include_resolved: Option<bool>,
    /// Entities looked at per page (1–100, default 20), in id order.
    pub limit: Option<i64>,
    /// Entities to skip (default 0).
    pub offset: Option<i64>,
    pub user_id: Option<String>,
    /// Which workspaces to answer from: a name, "*" (all of yours) or a
    /// list; the context (set_context), else `default`, when absent.
    pub workspace: Option<WorkspaceArg>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ListContradictionsResponse {
    /// By entity id, then field.
    pub contradictions: Vec<EntityContradiction>,
    /// Entities of this page with observations that disagree.
    pub entities_checked: i64,
    pub limit: i64,
    pub offset: i64,
    /// More entities follow (ask again with offset + limit).
    pub has_more: bool,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct EntityContradiction {
    pub entity_id: String,
    pub entity_type: String,
    #[serde(flatten)]
    pub contradiction: Contradiction,
}

/// The catalog's entries of this family's actions, by name: each one's
/// title, its description for an agent and how it behaves
/// (`crate::catalog::spec`).
pub(crate) fn spec(name: &str) -> Option<crate::catalog_entry::Entry> {
    use crate::catalog_entry::Entry;
    Some(match name {
        "list_contradictions" => Entry::new(
            "List contradictions",
            "The fields where observations of one entity disagree: two or more \
                distinct values from two or more sources (merge_array fields are joined, not \
                contradicted). For one entity_id, the entities of an entity_type, or all, a page \
                of entities (limit 1–100, default 20; offset) in id order. Each contradiction: \
                {entity_id, entity_type, field, values:[{value, observations:[{observation_id, \
                source_id, observed_at, source_priority, specificity_score, correction}]}], \
                chosen_value, chosen_observation_id, strategy, tie_breaker, reason, resolved}: \
                the value the reducer chose (the snapshot's) and why; resolved when a correction \
                decided it (include_resolved: false leaves those out). Returns {contradictions, \
                entities_checked, limit, offset, has_more}.",
        )
        .read_only(),
        _ => return None,
    })
}
