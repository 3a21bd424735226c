//! Tool sets ("dialects"): the tool lists of other memory servers, served
//! over Neotoma's truth model so agents built around them switch by
//! changing the server command only (`neotoma-mcp --tools memory`).
//!
//! Every tool of every set is one catalog action (`<set>_<tool>`, e.g.
//! `memory_read_graph`), listed under the set's own tool name. Errors are
//! raised as Neotoma errors (so one call stays one transaction) and the
//! gateway shapes them the way the set's server answers them.

use crate::NeotomaError;
use serde_json::{json, Value};

/// A tool set `--tools` can choose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ToolSet {
    /// Neotoma's own tools (seed 000 and its earlier names).
    Neotoma,
    /// `@modelcontextprotocol/server-memory`, the reference memory server.
    Memory,
    /// GraphMem (seed 002).
    Graphmem,
    /// The workspace-partitioned graph server (seed 003).
    Workspace,
    /// EngraMCP (seed 004).
    Engram,
}

impl ToolSet {
    pub const ALL: &'static [ToolSet] = &[
        ToolSet::Neotoma,
        ToolSet::Memory,
        ToolSet::Graphmem,
        ToolSet::Workspace,
        ToolSet::Engram,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            ToolSet::Neotoma => "neotoma",
            ToolSet::Memory => "memory",
            ToolSet::Graphmem => "graphmem",
            ToolSet::Workspace => "workspace",
            ToolSet::Engram => "engram",
        }
    }

    pub fn parse(name: &str) -> Option<ToolSet> {
        ToolSet::ALL.iter().copied().find(|s| s.name() == name)
    }

    /// How a failed call of this set's tools answers.
    pub const fn error_style(self) -> ErrorStyle {
        match self {
            ToolSet::Neotoma => ErrorStyle::Envelope,
            ToolSet::Memory | ToolSet::Graphmem => ErrorStyle::Text,
            ToolSet::Workspace => ErrorStyle::SuccessMessage,
            ToolSet::Engram => ErrorStyle::ErrorCode,
        }
    }

    /// The catalog action name of `tool` in this set.
    pub fn action_name(self, tool: &str) -> String {
        match self {
            ToolSet::Neotoma => tool.to_string(),
            _ => format!("{}_{tool}", self.name()),
        }
    }
}

/// Reads `--tools`: comma-separated set names, in order of precedence
/// (the first set listing a tool name gets it), each once.
pub fn parse_list(list: &str) -> Result<Vec<ToolSet>, String> {
    let mut sets = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let set = ToolSet::parse(name).ok_or_else(|| {
            format!(
                "unknown tool set `{name}`: choose from {}",
                ToolSet::ALL
                    .iter()
                    .map(|s| s.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
        if !sets.contains(&set) {
            sets.push(set);
        }
    }
    if sets.is_empty() {
        return Err("no tool set named".into());
    }
    Ok(sets)
}

/// The shape of a failure, as each server answers one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorStyle {
    /// `{"error": {code, message, details, trace_id}}` (seed 000).
    Envelope,
    /// The message as text, like an exception thrown by the tool (the
    /// memory server's TypeScript SDK, GraphMem's fast-mcp).
    Text,
    /// `{"success": false, "message"}` (seed 003).
    SuccessMessage,
    /// `{"error_code", "message"}` (seed 004).
    ErrorCode,
}

/// A failed call's structured body (None: text only) and its text.
pub fn shape_error(style: ErrorStyle, e: &NeotomaError, trace_id: &str) -> (Option<Value>, String) {
    match style {
        ErrorStyle::Envelope => {
            let body = e.envelope(Some(trace_id));
            let text = body.to_string();
            (Some(body), text)
        }
        ErrorStyle::Text => (None, e.message.clone()),
        ErrorStyle::SuccessMessage => {
            let body = json!({"success": false, "message": e.message});
            let text = body.to_string();
            (Some(body), text)
        }
        ErrorStyle::ErrorCode => {
            let body = json!({"error_code": e.code, "message": e.message});
            let text = body.to_string();
            (Some(body), text)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;

    #[test]
    fn parses_lists_in_order_once() {
        assert_eq!(
            parse_list("memory, neotoma,memory").unwrap(),
            vec![ToolSet::Memory, ToolSet::Neotoma]
        );
        assert!(parse_list("memory,mem0").unwrap_err().contains("mem0"));
        assert!(parse_list(" , ").is_err());
        for s in ToolSet::ALL {
            assert_eq!(ToolSet::parse(s.name()), Some(*s));
        }
    }

    #[test]
    fn each_set_answers_failures_its_way() {
        let e = NeotomaError::new(ErrorCode::EntityNotFound, "Entity with name X not found");
        let (body, text) = shape_error(ErrorStyle::Text, &e, "t");
        assert_eq!(
            (body, text.as_str()),
            (None, "Entity with name X not found")
        );
        let (body, _) = shape_error(ErrorStyle::SuccessMessage, &e, "t");
        assert_eq!(
            body.unwrap(),
            json!({"success": false, "message": "Entity with name X not found"})
        );
        let (body, _) = shape_error(ErrorStyle::ErrorCode, &e, "t");
        assert_eq!(body.unwrap()["error_code"], "ENTITY_NOT_FOUND");
        let (body, _) = shape_error(ErrorStyle::Envelope, &e, "t");
        assert_eq!(body.unwrap()["error"]["trace_id"], "t");
        assert_eq!(
            ToolSet::Memory.action_name("read_graph"),
            "memory_read_graph"
        );
        assert_eq!(ToolSet::Neotoma.action_name("store"), "store");
    }
}
