//! Deleting and restoring entities: reversible, and recorded as
//! observations of their own (kind `deletion` / `restoration`), so the
//! append-only history says when and why. A deleted entity disappears from
//! the retrievals until it is restored, exactly as it was.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteEntityRequest {
    pub entity_id: String,
    /// Why (kept with the deletion; shown with include_deleted).
    pub reason: Option<String>,
    pub user_id: Option<String>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RestoreEntityRequest {
    pub entity_id: String,
    /// Why (kept with the restoration).
    pub reason: Option<String>,
    pub user_id: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LifecycleResponse {
    pub entity_id: String,
    pub entity_type: String,
    /// Whether the entity is deleted now.
    pub deleted: bool,
    /// When it was deleted (null once restored).
    pub deleted_at: Option<String>,
    pub reason: Option<String>,
    /// The deletion or restoration observation.
    pub observation_id: String,
}

/// Longest reason kept.
pub const MAX_REASON_CHARS: usize = 1000;
