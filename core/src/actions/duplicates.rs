//! Finding and repairing duplicates: `list_potential_duplicates` (pairs of
//! entities that may be one, with the evidence) and `split_entity` (the
//! inverse of a merge: some of an entity's observations become another
//! entity's).

use crate::workspace::{WorkspaceArg, WorkspaceName};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListPotentialDuplicatesRequest {
    pub entity_type: String,
    /// Least similarity of a pair (0–1, default 0.6).
    pub threshold: Option<f64>,
    /// Max pairs (1–500, default 50).
    pub limit: Option<i64>,
    pub user_id: Option<String>,
    /// Which workspaces to answer from: a name, "*" (all of yours) or a
    /// list; the context (set_context), else `default`, when absent.
    pub workspace: Option<WorkspaceArg>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DuplicateEvidence {
    /// `name` (the snapshot's name, else title, else the canonical name), or
    /// an identity field (e.g. `email`).
    pub field: String,
    /// `trigram` (similarity of the names' three-letter pieces, as pg_trgm
    /// computes it) or `exact` (the same normalised identifier).
    pub method: String,
    pub score: f64,
    pub values: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DuplicatePair {
    pub entity_id: String,
    pub other_entity_id: String,
    /// The names compared (the snapshot's name, else title, else the
    /// canonical name).
    pub name: String,
    pub other_name: String,
    /// The best of the evidence scores.
    pub score: f64,
    pub evidence: Vec<DuplicateEvidence>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ListPotentialDuplicatesResponse {
    /// Best first, then by entity ids (each pair once, the smaller id first).
    pub pairs: Vec<DuplicatePair>,
    pub entity_type: String,
    pub threshold: f64,
    /// Entities compared (current ones of the type, up to the cap).
    pub entities_compared: i64,
    /// Whether the type has more entities than are compared.
    pub truncated: bool,
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SplitEntityRequest {
    /// The entity to split observations off.
    pub entity_id: String,
    /// Observations of it to move (ids from list_observations).
    pub observation_ids: Option<Vec<String>>,
    /// Or every observation of it from these sources.
    pub source_ids: Option<Vec<String>>,
    /// An existing entity of the same type to move them to; without it a
    /// new entity is made.
    pub to_entity_id: Option<String>,
    /// Why (kept with the split, in the audit trail).
    pub reason: Option<String>,
    pub user_id: Option<String>,
    /// The workspace to write in; the context (set_context), else `default`,
    /// when absent. What it names must lie there.
    pub workspace: Option<WorkspaceName>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SplitEntityResponse {
    pub split_id: String,
    pub from_entity_id: String,
    pub to_entity_id: String,
    /// Whether to_entity_id was made by this split.
    pub created: bool,
    pub observations_moved: i64,
    pub split_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The catalog's entries of this family's actions, by name: each one's
/// title, its description for an agent and how it behaves
/// (`crate::catalog::spec`).
pub(crate) fn spec(name: &str) -> Option<crate::catalog_entry::Entry> {
    use crate::catalog_entry::Entry;
    Some(match name {
        "list_potential_duplicates" => Entry::new(
            "List potential duplicates",
            "Pairs of current entities of entity_type that may be the same thing, best first: \
                names (the snapshot's name or title) whose trigram similarity (as pg_trgm computes it) is at least threshold \
                (default 0.6), or the same normalised identifier (e-mail, phone, …; score 1). \
                Each pair once, with its evidence (which field matched how). Read-only: merge \
                the ones that are duplicates with merge_entities. Returns {pairs: \
                [{entity_id, other_entity_id, name, other_name, score, \
                evidence: [{field, method, score, values}]}], entity_type, threshold, \
                entities_compared, truncated}.",
        )
        .read_only(),
        "split_entity" => Entry::new(
            "Split an entity",
            "The inverse of merge_entities: move some observations of entity_id (by \
                observation_ids, or every one from source_ids) to another entity of its type \
                (to_entity_id) or to a new one. The observations themselves never change: \
                copies with the same source, time and fields count for the target, the originals \
                no longer count for entity_id; both snapshots are recomputed; relationships stay \
                with entity_id. Logged in neotoma.audit_trail. Returns {split_id, from_entity_id, \
                to_entity_id, created, observations_moved, split_at, reason}.",
        )
        .not_idempotent()
        .destructive(),
        _ => return None,
    })
}
