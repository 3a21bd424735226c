//! `contest`: an observation disputed. The observation stays as it was; the
//! contest is a recorded fact the reducer counts (one step of credibility
//! lower per contest: [`crate::confidence`]).

use crate::confidence::Confidence;
use crate::error::Result;
use crate::workspace::WorkspaceName;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Most characters of a contest's reason.
pub const MAX_REASON_CHARS: usize = 10_000;

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContestRequest {
    /// The observation disputed (an id from field_provenance, list_observations
    /// or list_contradictions).
    pub observation_id: String,
    /// Why it is disputed (1–10,000 characters).
    pub reason: String,
    pub user_id: Option<String>,
    /// The workspace to write in; the context (set_context), else `default`,
    /// when absent. What it names must lie there.
    pub workspace: Option<WorkspaceName>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ContestResponse {
    /// Same observation and reason → same id: contesting again for the same
    /// reason changes nothing.
    pub contest_id: String,
    pub observation_id: String,
    /// The entity whose snapshot the observation counts for (after merges).
    pub entity_id: String,
    pub reason: String,
    /// The observation's rating before this contest, and now.
    pub confidence_before: Confidence,
    pub confidence: Confidence,
    /// How many contests it has.
    pub contests: u32,
    /// True when this reason was given before: nothing changed.
    pub already_contested: bool,
    pub created_at: String,
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
        "contest" => Entry::new(
            "Contest an observation",
            "Dispute one observation (observation_id) and say why (reason). The observation \
                stays as it was; the contest is recorded and lowers its confidence rating one \
                step of credibility (B2 becomes B3, down to 6), so fields merged by \
                highest_confidence may choose another value and min_confidence filters may \
                leave it out. The entity's snapshot is recomputed at once. The same reason \
                again changes nothing. Logged in neotoma.audit_trail. Returns {contest_id, \
                observation_id, entity_id, reason, confidence_before, confidence, contests, \
                already_contested, created_at}.",
        ),
        _ => return None,
    })
}
