//! The `engram` tool set: EngraMCP's three tools (seed 004), with its
//! names, parameters and response shapes. A memory is a graph entity
//! labelled `Fact` named by its content; its id is `mem_<hex16>`, the
//! entity's stable graph number (`neotoma.graph_ids`, as GraphMem shows it)
//! in hexadecimal, so `correct_memory` corrects any entity of the user.
//!
//! As the original answers them: a call whose arguments are readable but
//! refused is a normal result (`status` `rejected`, or `error` for
//! `get_memory`, with `error_code` such as `validation_error` and a
//! `message`); only arguments that cannot be read (a missing `content`)
//! are an MCP error.

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
    /// `mem_<hex16>` (empty when rejected).
    pub memory_id: String,
    /// `accepted`, or `rejected` (then `error_code` and `message` say why).
    pub status: String,
    pub error_code: Option<String>,
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
    /// ISO 8601: as true in the world then (default now).
    #[serde(default)]
    pub valid_at: Option<String>,
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
    /// `mem_<hex16>`.
    pub id: String,
    pub content: String,
    #[serde(rename = "type")]
    pub memory_type: String,
    /// A type the memory was given besides its own (none here).
    pub dynamic_type: Option<String>,
    /// The NATO rating of the observation its content came from.
    pub confidence: Confidence,
    /// What corrections marked: `status` `contested` with `contest_reason`
    /// and `contested_at`, `annotations` (`note`, `created_at`), times in
    /// seconds since the epoch.
    pub properties: serde_json::Map<String, Value>,
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
    /// Whether more memories passed than `limit` returned.
    pub truncated: bool,
    pub max_depth_used: i64,
    pub min_confidence_applied: String,
    /// Not measured here.
    pub retrieval_ms: Option<f64>,
    /// The original's working-memory hits: none here (one store).
    pub working_memory_hits: i64,
    /// Memories found in the graph (all of them here).
    pub graph_hits: i64,
    pub max_depth: i64,
    pub min_confidence: String,
    pub compact: bool,
    /// The search that answered (`lexical`, `semantic`, `hybrid`).
    pub search_method: Option<String>,
    pub workspace: String,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct GetMemoryResult {
    /// `ok`, or `error` (then `error_code` and `message` say why).
    pub status: String,
    pub memories: Vec<MemoryEntry>,
    pub contradictions: Vec<ContradictionEntry>,
    pub meta: MetaInfo,
    pub error_code: Option<String>,
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
/// - merge_entities: `{merge_with}`: that memory is merged into the target, which keeps its id;
/// - split_entity: `{split_into: [content, …]}`: each becomes a memory of its own, with the
///   target's source and reliability, and the target is deleted (or `{observation_ids}` /
///   `{source_ids}`: those observations move to another entity);
/// - reclassify: `{new_type, reason}`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CorrectMemoryRequest {
    /// ID of the memory to correct
    pub target_id: String,
    /// One of: contest, annotate, merge_entities, split_entity, reclassify
    pub action: String,
    /// Action-specific data
    pub payload: Option<serde_json::Map<String, Value>>,
    #[serde(default)]
    #[schemars(skip)]
    pub user_id: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct CorrectMemoryResult {
    pub target_id: String,
    /// The action asked for.
    pub action: String,
    /// `applied`; `not_found` when no memory has this id; `rejected` (then
    /// `error_code` and `message` say why).
    pub status: String,
    /// What the correction did.
    pub details: Value,
    pub error_code: Option<String>,
    pub message: Option<String>,
}

impl CorrectionAction {
    pub fn parse(action: &str) -> Option<CorrectionAction> {
        serde_json::from_value(Value::String(action.to_string())).ok()
    }
}

/// How the original names an error: the original's own code where the
/// error names one (`details.error_code`, e.g. `invalid_merge_target`),
/// else Neotoma's code in lower case (`VALIDATION_ERROR` →
/// `validation_error`).
pub fn error_code_of(e: &crate::NeotomaError) -> String {
    e.details
        .get("error_code")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| e.code.as_str().to_ascii_lowercase())
}

/// A memory's id: its graph number in hexadecimal (`mem_0000000000000007`).
pub fn memory_id(graph_id: i64) -> String {
    format!("mem_{graph_id:016x}")
}

/// The graph number a memory id names.
pub fn graph_id_of(memory_id: &str) -> Option<i64> {
    let hex = memory_id.strip_prefix("mem_")?;
    (hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| i64::from_str_radix(hex, 16).ok())
        .flatten()
        .filter(|n| *n > 0)
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

/// The catalog's entries of this family's actions, by name: each one's
/// title, its description for an agent and how it behaves
/// (`crate::catalog::spec`).
pub(crate) fn spec(name: &str) -> Option<crate::catalog_entry::Entry> {
    use crate::catalog_entry::Entry;
    use crate::tool_sets::ToolSet;
    Some(match name {
        "engram_send_memory" => Entry::new(
            "Send memory",
            "Write one memory: an affirmation, fact or observation (content), with where it \
                came from (source {type, ref, citation}), the source's reliability letter A-F \
                (confidence_hint: the memory is rated <letter>3, uncorroborated; F3 without one) \
                and the calling agent (agent_id). The same content again corroborates the same \
                memory. Returns {memory_id, status}.",
        )
        .in_set(ToolSet::Engram),
        "engram_get_memory" => Entry::new(
            "Get memory",
            "Read the memories matching a natural language query, best first: each with its \
                NATO confidence rating, sources, causal chain (relations up to max_depth steps) \
                and participants, plus the contradictions among their sources. min_confidence \
                keeps memories whose letter and number both pass (F6: all); compact leaves out \
                sources, chains, participants and contradictions. Returns {memories, \
                contradictions, meta}.",
        )
        .read_only()
        .in_set(ToolSet::Engram),
        "engram_correct_memory" => Entry::new(
            "Correct memory",
            "Correct a memory (target_id) by one action with its payload: contest {reason} \
                (lowers its rating a step), annotate {note}, merge_entities {source_id} (that \
                memory joins this one), split_entity {observation_ids | source_ids, \
                to_entity_id?} or reclassify {new_type, reason?}. History is kept and the \
                correction audited. Returns {target_id, action, status (applied, not_found), \
                details}.",
        )
        .not_idempotent()
        .in_set(ToolSet::Engram),
        _ => return None,
    })
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
        assert_eq!(
            CorrectionAction::parse(&c.action),
            Some(CorrectionAction::MergeEntities)
        );
        assert_eq!(CorrectionAction::parse("invalid_action"), None);
    }

    #[test]
    fn memory_ids_are_graph_numbers_in_hex() {
        assert_eq!(memory_id(7), "mem_0000000000000007");
        assert_eq!(memory_id(255), "mem_00000000000000ff");
        assert_eq!(graph_id_of("mem_00000000000000ff"), Some(255));
        assert_eq!(graph_id_of(&memory_id(123_456_789)), Some(123_456_789));
        for bad in [
            "mem_",
            "mem_0000000000000000",
            "mem_ff",
            "ent_00000000000000ff",
            "mem_zzzzzzzzzzzzzzzz",
        ] {
            assert_eq!(graph_id_of(bad), None, "{bad}");
        }
    }
}
