//! `reclassify`: an entity moved to another type, its history kept. The
//! entity of the new type is the one its current snapshot identifies under
//! the new type's identity rules (found, or made); the old entity is merged
//! into it, so its observations, relationships and events count there and
//! its id redirects there.

use crate::error::Result;
use crate::workspace::WorkspaceName;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Most characters of a reclassification's reason.
pub const MAX_REASON_CHARS: usize = 1000;

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReclassifyRequest {
    /// The entity to move (an entity merged into another: that one).
    pub entity_id: String,
    /// The type it is (it needs an active schema; see list_entity_types).
    pub new_entity_type: String,
    /// Why (1–1,000 characters).
    pub reason: String,
    pub user_id: Option<String>,
    /// The workspace to write in; the context (set_context), else `default`,
    /// when absent. What it names must lie there.
    pub workspace: Option<WorkspaceName>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ReclassifyResponse {
    /// The entity of the new type that now holds the history.
    pub entity_id: String,
    pub entity_type: String,
    /// The entity as it was: it redirects to `entity_id` from now on.
    pub previous_entity_id: String,
    pub previous_entity_type: String,
    /// True when an entity of the new type with the same identity existed
    /// already: the two are now one.
    pub joined_existing: bool,
    /// Observations and relationships that now count for `entity_id`.
    pub observations_moved: i64,
    pub relationships_moved: i64,
    pub reason: String,
    pub reclassified_at: String,
}

/// The reason, trimmed; refused when empty or too long.
pub fn check_reason(reason: &str) -> Result<&str> {
    crate::actions::common::text("reason", reason, MAX_REASON_CHARS)
}

/// The catalog's entries of this family's actions, by name: each one's
/// title, its description for an agent and how it behaves
/// (`crate::catalog::spec`).
pub(crate) fn spec(name: &str) -> Option<crate::catalog_entry::Entry> {
    use crate::catalog_entry::Entry;
    Some(match name {
        "reclassify" => Entry::new(
            "Reclassify an entity",
            "Move an entity (entity_id) to another type (new_entity_type, with an active \
                schema) and say why (reason), its history kept: the entity of the new type is \
                the one its current snapshot identifies under that type's identity rules (found \
                or made), and the old entity is merged into it, so every observation, \
                relationship and event counts there and the old id redirects there. Later \
                stores under either type reach it. Logged in neotoma.audit_trail as reclassify. \
                Returns {entity_id, entity_type, previous_entity_id, previous_entity_type, \
                joined_existing, observations_moved, relationships_moved, reason, \
                reclassified_at}.",
        )
        .not_idempotent()
        .destructive(),
        _ => return None,
    })
}
