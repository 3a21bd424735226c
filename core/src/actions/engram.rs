//! The `engram` tool set: EngraMCP's three tools (seed 004), with its
//! names, parameters and response shapes. A memory is a graph entity of
//! type `Memory` named by its content; `memory_id` is its entity id, so
//! `correct_memory` corrects any entity of the user.

use crate::confidence::Confidence;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The longest memory content.
pub const MAX_CONTENT: usize = 10_000;

/// Where a memory came from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SourceInput {
    /// What the source is (document, conversation, web page…).
    #[serde(rename = "type")]
    pub source_type: Option<String>,
    /// Where to find it (URL, file, message id…).
    #[serde(rename = "ref")]
    pub reference: Option<String>,
    /// The words it said.
    pub citation: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendMemoryRequest {
    /// The affirmation / fact / observation
    pub content: String,
    /// Source reference (type, ref, citation)
    pub source: Option<SourceInput>,
    /// Source reliability letter (A-F); the memory is rated `<letter>3`
    /// (uncorroborated), F3 without one.
    pub confidence_hint: Option<String>,
    /// Calling agent identifier
    pub agent_id: Option<String>,
    #[serde(default)]
    #[schemars(skip)]
    pub user_id: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct SendMemoryResult {
    pub memory_id: String,
    /// `stored`, or `already_stored` when the memory held this content.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

fn default_depth() -> i64 {
    3
}
fn default_min_confidence() -> String {
    "F6".into()
}
fn yes() -> bool {
    true
}
fn default_limit() -> i64 {
    20
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetMemoryRequest {
    /// Natural language query
    pub query: String,
    /// Max causal chain traversal depth (default 3, at most 5)
    #[serde(default = "default_depth")]
    pub max_depth: i64,
    /// Minimum NATO rating: a memory passes when both its letter and its
    /// number are at least as good (default F6: all)
    #[serde(default = "default_min_confidence")]
    pub min_confidence: String,
    /// Include contradictions (default true)
    #[serde(default = "yes")]
    pub include_contradictions: bool,
    /// Include source chains (default true)
    #[serde(default = "yes")]
    pub include_sources: bool,
    /// Max memories returned (default 20, at most 100)
    #[serde(default = "default_limit")]
    pub limit: i64,
    /// Omit sources, chains, participants and contradictions
    #[serde(default)]
    pub compact: bool,
    #[serde(default)]
    #[schemars(skip)]
    pub user_id: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SourceEntry {
    /// The Neotoma source the memory's observation came from.
    pub source_id: String,
    /// What the writer said of the source.
    #[serde(rename = "type")]
    pub source_type: Option<String>,
    #[serde(rename = "ref")]
    pub reference: Option<String>,
    pub citation: Option<String>,
    pub agent_id: Option<String>,
    pub observed_at: String,
}

/// One link of a chain of relations from the memory.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CausalLink {
    pub from_id: String,
    pub to_id: String,
    pub relation: String,
    /// 1 for a relation of the memory itself.
    pub depth: i64,
    pub to_content: String,
}

/// An entity the memory is related to directly.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Participant {
    pub id: String,
    pub name: String,
    #[serde(rename = "type")]
    pub entity_type: String,
    pub relation: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct MemoryEntry {
    pub id: String,
    pub content: String,
    #[serde(rename = "type")]
    pub memory_type: String,
    /// The NATO rating of the observation its content came from.
    pub confidence: Confidence,
    pub sources: Vec<SourceEntry>,
    pub causal_chain: Vec<CausalLink>,
    pub participants: Vec<Participant>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ContradictionEntry {
    pub memory_id: String,
    pub field: String,
    /// `source_disagreement`: sources gave the field different values.
    pub nature: String,
    pub values: Vec<Value>,
    pub chosen_value: Value,
    pub reason: String,
    pub resolved: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct MetaInfo {
    pub query: String,
    pub total_found: i64,
    pub returned: i64,
    pub max_depth: i64,
    pub min_confidence: String,
    pub compact: bool,
    /// The search that answered (`lexical`, `semantic`, `hybrid`).
    pub search_method: Option<String>,
    pub workspace: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct GetMemoryResult {
    pub memories: Vec<MemoryEntry>,
    pub contradictions: Vec<ContradictionEntry>,
    pub meta: MetaInfo,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CorrectionAction {
    Contest,
    Annotate,
    MergeEntities,
    SplitEntity,
    Reclassify,
}

/// Each action's payload:
/// - contest: `{reason}`: disputes the observation the memory's content came from;
/// - annotate: `{note}`;
/// - merge_entities: `{source_id}`: that memory (or entity) is merged into the target;
/// - split_entity: `{observation_ids}` or `{source_ids}`, optionally `{to_entity_id}`: those move to another entity;
/// - reclassify: `{new_type, reason}`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CorrectMemoryRequest {
    /// ID of the memory to correct
    pub target_id: String,
    /// One of: contest, annotate, merge_entities, split_entity, reclassify
    pub action: CorrectionAction,
    /// Action-specific data
    pub payload: Option<serde_json::Map<String, Value>>,
    #[serde(default)]
    #[schemars(skip)]
    pub user_id: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct CorrectMemoryResult {
    pub target_id: String,
    pub action: CorrectionAction,
    /// `applied`, or `not_found` when no memory has this id.
    pub status: String,
    /// What Neotoma's action answered.
    pub details: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// The rating a hint gives a new memory: the letter, uncorroborated (3).
pub fn hinted_confidence(hint: Option<&str>) -> Result<Confidence, String> {
    let letter = hint.unwrap_or("F").trim();
    if letter.len() != 1 {
        return Err(format!(
            "`{letter}` is not a reliability letter: one of A to F"
        ));
    }
    Confidence::parse(&format!("{letter}3"))
        .map_err(|_| format!("`{letter}` is not a reliability letter: one of A to F"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hint_rates_a_memory_uncorroborated() {
        assert_eq!(hinted_confidence(Some("b")).unwrap().to_string(), "B3");
        assert_eq!(hinted_confidence(None).unwrap().to_string(), "F3");
        assert!(hinted_confidence(Some("G")).is_err());
        assert!(hinted_confidence(Some("A1")).is_err());
    }

    #[test]
    fn get_memory_has_the_documented_defaults() {
        let r: GetMemoryRequest =
            serde_json::from_value(serde_json::json!({"query": "q"})).unwrap();
        assert_eq!(
            (r.max_depth, r.min_confidence.as_str(), r.limit),
            (3, "F6", 20)
        );
        assert!(r.include_contradictions && r.include_sources && !r.compact);
        let c: CorrectMemoryRequest = serde_json::from_value(
            serde_json::json!({"target_id": "x", "action": "merge_entities"}),
        )
        .unwrap();
        assert_eq!(c.action, CorrectionAction::MergeEntities);
    }
}
