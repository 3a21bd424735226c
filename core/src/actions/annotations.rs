//! `annotate`: a note attached to an entity or one of its observations,
//! beside the truth model (it changes no snapshot and no provenance).

use crate::error::Result;
use crate::workspace::WorkspaceName;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Most characters of a note.
pub const MAX_NOTE_CHARS: usize = 10_000;

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnnotateRequest {
    /// The entity the note is about (an entity merged into another: that
    /// one). Optional when observation_id is given.
    pub entity_id: Option<String>,
    /// The observation the note is about (its entity is the note's too).
    pub observation_id: Option<String>,
    /// The note (1–10,000 characters).
    pub note: String,
    pub user_id: Option<String>,
    /// The workspace to write in; the context (set_context), else `default`,
    /// when absent. What it names must lie there.
    pub workspace: Option<WorkspaceName>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AnnotationOut {
    /// Same entity (or observation) and note → same id: annotating again
    /// changes nothing.
    pub annotation_id: String,
    pub entity_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation_id: Option<String>,
    pub note: String,
    pub created_at: String,
}

/// The note, trimmed; refused when empty or too long.
pub fn check_note(note: &str) -> Result<&str> {
    crate::actions::common::text("note", note, MAX_NOTE_CHARS)
}

/// The catalog's entries of this family's actions, by name: each one's
/// title, its description for an agent and how it behaves
/// (`crate::catalog::spec`).
pub(crate) fn spec(name: &str) -> Option<crate::catalog_entry::Entry> {
    use crate::catalog_entry::Entry;
    Some(match name {
        "annotate" => Entry::new(
            "Annotate",
            "Attach a note to an entity (entity_id) or to one of its observations \
                (observation_id), beside the truth model: no snapshot, value or provenance \
                changes. The same note on the same target is one annotation (annotating again \
                changes nothing). Logged in neotoma.audit_trail; retrieve_entity_snapshot \
                {include_annotations} answers them. Returns {annotation_id, entity_id, \
                observation_id, note, created_at}.",
        ),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_are_checked() {
        assert_eq!(
            check_note("  checked by phone ").unwrap(),
            "checked by phone"
        );
        assert!(check_note("  ").is_err());
        assert!(check_note(&"x".repeat(MAX_NOTE_CHARS + 1)).is_err());
    }
}
