//! The timeline: events derived from the date fields of snapshots.

use crate::workspace::WorkspaceArg;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

type Object = Map<String, Value>;

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListTimelineEventsRequest {
    /// e.g. InvoiceIssued, TaskDue.
    pub event_type: Option<String>,
    /// Only events at or after this date (ISO 8601).
    pub after_date: Option<String>,
    /// Only events before this date (ISO 8601).
    pub before_date: Option<String>,
    /// Only events from this source.
    pub source_id: Option<String>,
    /// Only events of this entity.
    pub entity_id: Option<String>,
    /// ISO 8601, with entity_id: its events as true in the world then
    /// (default now).
    pub valid_at: Option<String>,
    /// Max results (1–1000, default 100).
    pub limit: Option<i64>,
    pub offset: Option<i64>,
    pub user_id: Option<String>,
    /// Which workspaces to answer from: a name, "*" (all of yours) or a
    /// list; the context (set_context), else `default`, when absent.
    pub workspace: Option<WorkspaceArg>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct TimelineEventOut {
    pub id: String,
    pub event_type: String,
    pub event_timestamp: String,
    pub source_id: String,
    pub entity_ids: Vec<String>,
    pub properties: Object,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ListTimelineEventsResponse {
    /// Newest first (event_timestamp DESC, then id).
    pub events: Vec<TimelineEventOut>,
    pub total: i64,
    pub limit: i64,
    pub offset: i64,
}

/// The catalog's entries of this family's actions, by name: each one's
/// title, its description for an agent and how it behaves
/// (`crate::catalog::spec`).
pub(crate) fn spec(name: &str) -> Option<crate::catalog_entry::Entry> {
    use crate::catalog_entry::Entry;
    Some(match name {
        "list_timeline_events" => Entry::new(
            "List timeline events",
            "List dated events derived from entities' date fields (e.g. \
                InvoiceIssued, InvoiceDue, TaskDue, TransactionDate), newest first, filtered by \
                event_type, a date range (after_date inclusive, before_date exclusive), source_id \
                or entity_id, paginated.",
        )
        .read_only(),
        _ => return None,
    })
}
