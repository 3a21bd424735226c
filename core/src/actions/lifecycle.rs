//! Deleting and restoring entities: reversible, and recorded as
//! observations of their own (kind `deletion` / `restoration`), so the
//! append-only history says when and why. A deleted entity disappears from
//! the retrievals until it is restored, exactly as it was.

use crate::workspace::{WorkspaceArg, WorkspaceName};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteEntityRequest {
    pub entity_id: String,
    /// Why (kept with the deletion; shown with include_deleted).
    pub reason: Option<String>,
    pub user_id: Option<String>,
    /// The workspace to write in; the context (set_context), else `default`,
    /// when absent. What it names must lie there.
    pub workspace: Option<WorkspaceName>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RestoreEntityRequest {
    pub entity_id: String,
    /// Why (kept with the restoration).
    pub reason: Option<String>,
    pub user_id: Option<String>,
    /// The workspace to write in; the context (set_context), else `default`,
    /// when absent. What it names must lie there.
    pub workspace: Option<WorkspaceName>,
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

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteRelationshipRequest {
    #[schemars(schema_with = "crate::actions::relationships::relationship_type_schema")]
    pub relationship_type: String,
    pub source_entity_id: String,
    pub target_entity_id: String,
    /// Why (kept with the deletion; shown with include_deleted).
    pub reason: Option<String>,
    pub user_id: Option<String>,
    /// The workspace to write in; the context (set_context), else `default`,
    /// when absent. What it names must lie there.
    pub workspace: Option<WorkspaceName>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RestoreRelationshipRequest {
    #[schemars(schema_with = "crate::actions::relationships::relationship_type_schema")]
    pub relationship_type: String,
    pub source_entity_id: String,
    pub target_entity_id: String,
    /// Why (kept with the restoration).
    pub reason: Option<String>,
    pub user_id: Option<String>,
    /// The workspace to write in; the context (set_context), else `default`,
    /// when absent. What it names must lie there.
    pub workspace: Option<WorkspaceName>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RelationshipLifecycleResponse {
    pub relationship_id: String,
    pub relationship_type: String,
    pub source_entity_id: String,
    pub target_entity_id: String,
    /// Whether the relationship is deleted now.
    pub deleted: bool,
    /// When it was deleted (null once restored).
    pub deleted_at: Option<String>,
    pub reason: Option<String>,
    /// The deletion or restoration observation of the relationship.
    pub observation_id: String,
}

/// Longest reason kept.
pub const MAX_REASON_CHARS: usize = 1000;

/// `erase`: removes content for good (GDPR), unlike deletion.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EraseRequest {
    /// The entity to erase, with every observation, relationship, event and
    /// fragment of it, and the sources that only it came from. Give this or
    /// source_id.
    pub entity_id: Option<String>,
    /// The source to erase, with everything it gave; what other sources
    /// still say of its entities stays, recomputed.
    pub source_id: Option<String>,
    /// Must be true: erasing cannot be undone.
    pub confirm: Option<bool>,
    /// Why (kept in the audit row; write no personal content here).
    pub reason: Option<String>,
    pub user_id: Option<String>,
    /// The workspace to write in; the context (set_context), else `default`,
    /// when absent. What it names must lie there.
    pub workspace: Option<WorkspaceName>,
}

/// What an erasure removed (counts only: the audit row keeps nothing else).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct ErasedCounts {
    pub entities: i64,
    pub observations: i64,
    pub relationships: i64,
    pub relationship_observations: i64,
    pub sources: i64,
    /// Sources that still feed other entities: their stored content and
    /// file bytes are removed, the row (type, hash, date) stays.
    pub sources_redacted: i64,
    pub raw_fragments: i64,
    pub timeline_events: i64,
    /// Entities whose snapshots were recomputed from what remains.
    pub entities_recomputed: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct EraseResponse {
    /// `entity` or `source`.
    pub erased: String,
    /// The audit row (neotoma.audit_trail, action `erase`).
    pub erasure_id: String,
    pub erased_at: String,
    pub counts: ErasedCounts,
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListRecentChangesRequest {
    /// The next_cursor of a previous answer: only changes after it. Without
    /// it, from the first change kept.
    pub since: Option<String>,
    /// Max changes (1–1000, default 100).
    pub limit: Option<i64>,
    /// Only changes of entities of this type.
    pub entity_type: Option<String>,
    pub user_id: Option<String>,
    /// Which workspaces to answer from: a name, "*" (all of yours) or a
    /// list; the context (set_context), else `default`, when absent.
    pub workspace: Option<WorkspaceArg>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChangeOut {
    /// Where this change is in the feed (pass as `since` to read after it).
    pub cursor: String,
    /// `entity`, `relationship`, `source`, `schema` or `erasure`.
    pub kind: String,
    /// What happened: observed, corrected, deleted, restored, merged,
    /// merge_target (entity); asserted, deleted, restored (relationship);
    /// created (source); insert, update (schema); entity, source, user
    /// (erasure).
    pub operation: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entity_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entity_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relationship_id: Option<String>,
    /// A relationship change's type and ends (while the relationship exists).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relationship_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_entity_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_entity_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_id: Option<String>,
    pub changed_at: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ListRecentChangesResponse {
    /// In commit-safe order: a change appears once every transaction that
    /// started before it has ended, so paging never skips one.
    pub changes: Vec<ChangeOut>,
    /// Pass as `since` for the changes after these (the same cursor again
    /// when there were none).
    pub next_cursor: Option<String>,
    /// Whether more changes are ready now.
    pub has_more: bool,
}

/// A feed position: the transaction and sequence number of a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChangeCursor {
    pub xid: u64,
    pub seq: i64,
}

impl ChangeCursor {
    /// The opaque text form (`c1.` + hex xid + `.` + hex seq).
    pub fn encode(self) -> String {
        format!("c1.{:x}.{:x}", self.xid, self.seq)
    }

    pub fn decode(text: &str) -> Option<ChangeCursor> {
        let rest = text.trim().strip_prefix("c1.")?;
        let (xid, seq) = rest.split_once('.')?;
        let xid = u64::from_str_radix(xid, 16).ok()?;
        let seq = i64::from_str_radix(seq, 16).ok()?;
        (seq >= 0).then_some(ChangeCursor { xid, seq })
    }
}

/// The catalog's entries of this family's actions, by name: each one's
/// title, its description for an agent and how it behaves
/// (`crate::catalog::spec`).
pub(crate) fn spec(name: &str) -> Option<crate::catalog_entry::Entry> {
    use crate::catalog_entry::Entry;
    Some(match name {
        "delete_entity" => Entry::new(
            "Delete an entity",
            "Delete an entity: it disappears from retrieve_entities, lookups and snapshots \
                (include_deleted shows it, with deleted_at and the reason) until restore_entity \
                brings it back exactly as it was. Nothing is erased: the deletion is an \
                observation of its own (list_observations shows it). Deleting a deleted entity is \
                an error. Returns {entity_id, entity_type, deleted, deleted_at, reason, \
                observation_id}.",
        )
        .destructive(),
        "restore_entity" => Entry::new(
            "Restore an entity",
            "Bring back a deleted entity exactly as it was before its deletion (recorded as a \
                restoration observation). Restoring an entity that is not deleted is an error. \
                Returns {entity_id, entity_type, deleted: false, deleted_at: null, reason, \
                observation_id}.",
        ),
        "delete_relationship" => Entry::new(
            "Delete a relationship",
            "Delete the relationship of relationship_type from source_entity_id to \
                target_entity_id: it disappears from list_relationships, traversals, \
                neighborhoods and store's related_* (include_deleted shows it, with deleted_at \
                and the reason) until restore_relationship brings it back exactly as it was. \
                Nothing is erased: the deletion is an observation of the relationship. The \
                entities stay. Deleting a deleted relationship is an error; an unknown one is \
                NOT_FOUND. Returns {relationship_id, relationship_type, source_entity_id, \
                target_entity_id, deleted, deleted_at, reason, observation_id}.",
        )
        .destructive(),
        "list_recent_changes" => Entry::new(
            "List recent changes",
            "The change feed of this user's memory: entities observed, corrected, deleted, \
                restored or merged; relationships asserted, deleted or restored; sources created; \
                schemas registered or updated; erasures. Oldest first, in an order that never skips \
                a change: pass the answer's next_cursor as `since` to read on (polling with it \
                returns nothing until something changes). entity_type keeps entity changes of \
                that type. Returns {changes: [{cursor, kind, operation, entity_id, entity_type, \
                relationship_id, relationship_type, source_entity_id, target_entity_id, \
                source_id, changed_at}], next_cursor, has_more}; MCP resource subscriptions are \
                driven by this feed.",
        )
        .read_only(),
        "erase" => Entry::new(
            "Erase for good (GDPR)",
            "Erase an entity (entity_id) or a source (source_id) for good, with confirm: true. \
                An entity goes with its observations, relationships, timeline events, raw \
                fragments and merges, and the sources only it came from (sources that also fed \
                other entities lose their stored content and file bytes). A source goes with \
                everything it gave; its entities are recomputed from what other sources say, \
                and erased if nothing else does. Signed file URLs stop working. Unlike \
                delete_entity this cannot be undone; an audit row of counts (no content) stays \
                in neotoma.audit_trail. Returns {erased, erasure_id, erased_at, counts}.",
        )
        .not_idempotent()
        .destructive(),
        "restore_relationship" => Entry::new(
            "Restore a relationship",
            "Bring back a deleted relationship exactly as it was (recorded as a restoration \
                observation of it). Restoring a relationship that is not deleted is an error. \
                Returns {relationship_id, relationship_type, source_entity_id, target_entity_id, \
                deleted: false, deleted_at: null, reason, observation_id}.",
        ),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::ChangeCursor;

    #[test]
    fn cursors_round_trip_and_reject_garbage() {
        let c = ChangeCursor {
            xid: 7_000_123,
            seq: 42,
        };
        assert_eq!(ChangeCursor::decode(&c.encode()), Some(c));
        for bad in ["", "c1.", "c1.zz.1", "c2.1.1", "c1.1", "c1.1.-1", "1.1"] {
            assert_eq!(ChangeCursor::decode(bad), None, "{bad}");
        }
    }
}
