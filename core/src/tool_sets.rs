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

/// Groups of Neotoma's own tools. `core` is the default profile, what an
/// agent needs to store, find, read with provenance, correct, relate and
/// follow time (within a byte budget: docs/tool-sets.md); an operator adds
/// the others with `--tools`. A group only decides what `tools/list`
/// shows: every tool of a set served stays callable by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ToolGroup {
    Core,
    /// Delete, restore and erase; the change feed; duplicates and splits.
    Lifecycle,
    /// Confidence and disagreement: contest, annotate, contradictions, reclassify.
    Review,
    /// Workspaces and the caller's context.
    Workspaces,
    /// Several writes in one call.
    Bulk,
    /// Subgraphs by search or by ids.
    Subgraphs,
    /// Schema evolution: candidates, recommendations, changes.
    Schema,
    /// Banking and mail imports (Plaid, IMAP providers).
    Connectors,
    /// The server: versions, clock, analytics and metrics.
    Admin,
}

impl ToolGroup {
    pub const ALL: &'static [ToolGroup] = &[
        ToolGroup::Core,
        ToolGroup::Lifecycle,
        ToolGroup::Review,
        ToolGroup::Workspaces,
        ToolGroup::Bulk,
        ToolGroup::Subgraphs,
        ToolGroup::Schema,
        ToolGroup::Connectors,
        ToolGroup::Admin,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            ToolGroup::Core => "core",
            ToolGroup::Lifecycle => "lifecycle",
            ToolGroup::Review => "review",
            ToolGroup::Workspaces => "workspaces",
            ToolGroup::Bulk => "bulk",
            ToolGroup::Subgraphs => "subgraphs",
            ToolGroup::Schema => "schema",
            ToolGroup::Connectors => "connectors",
            ToolGroup::Admin => "admin",
        }
    }

    pub fn parse(name: &str) -> Option<ToolGroup> {
        ToolGroup::ALL.iter().copied().find(|g| g.name() == name)
    }
}

/// What `--tools` chose: the tool sets in order of precedence (the first
/// set listing a tool name gets it), and the groups of Neotoma's own tools
/// listed (when Neotoma's set is served).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    pub sets: Vec<ToolSet>,
    pub groups: std::collections::BTreeSet<ToolGroup>,
}

impl Default for Selection {
    /// Neotoma's core profile.
    fn default() -> Self {
        Selection {
            sets: vec![ToolSet::Neotoma],
            groups: [ToolGroup::Core].into(),
        }
    }
}

impl Selection {
    /// Whether `tools/list` shows a tool of `set` in `group`.
    pub fn lists(&self, set: ToolSet, group: ToolGroup) -> bool {
        self.sets.contains(&set) && (set != ToolSet::Neotoma || self.groups.contains(&group))
    }

    /// The selection as `--tools` reads it: its sets in order, Neotoma's
    /// groups beside `neotoma`'s core.
    pub fn describe(&self) -> String {
        let mut names = Vec::new();
        for set in &self.sets {
            names.push(set.name());
            if *set == ToolSet::Neotoma {
                names.extend(
                    self.groups
                        .iter()
                        .filter(|g| **g != ToolGroup::Core)
                        .map(|g| g.name()),
                );
            }
        }
        names.join(",")
    }
}

/// Reads `--tools`: comma-separated names of tool sets (`neotoma`: its
/// core profile), of groups of Neotoma's tools (which bring Neotoma's set,
/// at that place), or `all` (Neotoma's every group); each once, in order
/// of precedence.
pub fn parse_selection(list: &str) -> Result<Selection, String> {
    let mut selection = Selection {
        sets: Vec::new(),
        groups: Default::default(),
    };
    fn neotoma(selection: &mut Selection, groups: &[ToolGroup]) {
        if !selection.sets.contains(&ToolSet::Neotoma) {
            selection.sets.push(ToolSet::Neotoma);
        }
        selection.groups.insert(ToolGroup::Core);
        selection.groups.extend(groups);
    }
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        if name == "all" {
            neotoma(&mut selection, ToolGroup::ALL);
        } else if let Some(group) = ToolGroup::parse(name) {
            neotoma(&mut selection, &[group]);
        } else if let Some(ToolSet::Neotoma) = ToolSet::parse(name) {
            neotoma(&mut selection, &[]);
        } else {
            let set = ToolSet::parse(name).ok_or_else(|| {
                format!(
                    "unknown tool set or group `{name}`: choose from the sets {}, the groups {} of Neotoma's tools, or all",
                    ToolSet::ALL.iter().map(|s| s.name()).collect::<Vec<_>>().join(", "),
                    ToolGroup::ALL.iter().map(|g| g.name()).collect::<Vec<_>>().join(", ")
                )
            })?;
            if !selection.sets.contains(&set) {
                selection.sets.push(set);
            }
        }
    }
    if selection.sets.is_empty() {
        return Err("no tool set named".into());
    }
    Ok(selection)
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
    fn groups_bring_neotomas_set_and_all_brings_every_group() {
        assert_eq!(parse_selection("neotoma").unwrap(), Selection::default());
        let s = parse_selection("memory,lifecycle,bulk").unwrap();
        assert_eq!(s.sets, vec![ToolSet::Memory, ToolSet::Neotoma]);
        assert_eq!(
            s.groups,
            [ToolGroup::Core, ToolGroup::Lifecycle, ToolGroup::Bulk].into()
        );
        assert!(s.lists(ToolSet::Neotoma, ToolGroup::Bulk));
        assert!(!s.lists(ToolSet::Neotoma, ToolGroup::Admin));
        assert!(s.lists(ToolSet::Memory, ToolGroup::Core));
        let all = parse_selection("all").unwrap();
        assert_eq!(all.groups.len(), ToolGroup::ALL.len());
        assert_eq!(all.sets, vec![ToolSet::Neotoma]);
        // Only memory: no Neotoma tool listed.
        let m = parse_selection("memory").unwrap();
        assert!(!m.lists(ToolSet::Neotoma, ToolGroup::Core));
        assert!(parse_selection("memory,mem0").unwrap_err().contains("mem0"));
        for g in ToolGroup::ALL {
            assert_eq!(ToolGroup::parse(g.name()), Some(*g));
            assert!(
                ToolSet::parse(g.name()).is_none(),
                "{} names a set and a group",
                g.name()
            );
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
