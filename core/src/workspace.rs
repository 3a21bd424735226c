//! Workspaces (issue 18; docs/design/workspaces.md): a user's memory
//! divided by name. Pure parts: names, what a read selects, and which
//! workspace an action without one uses.
//!
//! Workspaces organise one user's data; they are not a security boundary
//! (row level security stays per user).

use crate::error::{NeotomaError, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt;

/// The workspace every user has, where existing data lives: its ids derive
/// exactly as before workspaces existed.
pub const DEFAULT: &str = "default";

/// What a read writes for "every workspace of mine".
pub const ALL: &str = "*";

/// A workspace name: 1–63 characters, lower-case letters, digits, `_` and
/// `-`, starting with a letter or digit.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct WorkspaceName(String);

impl JsonSchema for WorkspaceName {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "WorkspaceName".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "pattern": "^[a-z0-9][a-z0-9_-]{0,62}$",
            "description": "A workspace: 1 to 63 lower-case letters, digits, _ and -; `default` unless the context (set_context) says otherwise"
        })
    }
}

impl WorkspaceName {
    pub fn parse(field: &str, name: &str) -> Result<Self> {
        let valid = !name.is_empty()
            && name.len() <= 63
            && name
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
        if valid {
            Ok(WorkspaceName(name.to_string()))
        } else {
            Err(NeotomaError::invalid_field(
                field,
                format!(
                    "`{name}` is not a workspace name: 1 to 63 lower-case letters, digits, _ and -, starting with a letter or digit"
                ),
            ))
        }
    }

    /// The workspace a graph server's free-form `workspaceName` (seed 003)
    /// means: folded to lower case, every run of other characters than
    /// letters, digits, `_` and `-` one `-`, at most 63 characters.
    pub fn from_label(field: &str, label: &str) -> Result<Self> {
        let mut name = String::new();
        for c in label.trim().chars() {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-' {
                name.push(c);
            } else if !name.ends_with('-') {
                name.push('-');
            }
        }
        let name: String = name
            .trim_matches(|c| c == '-' || c == '_')
            .chars()
            .take(63)
            .collect();
        if name.is_empty() {
            return Err(NeotomaError::invalid_field(
                field,
                format!("`{label}` names no workspace: give letters or digits"),
            ));
        }
        WorkspaceName::parse(field, &name)
    }

    pub fn default_workspace() -> Self {
        WorkspaceName(DEFAULT.to_string())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn is_default(&self) -> bool {
        self.0 == DEFAULT
    }
}

impl fmt::Display for WorkspaceName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for WorkspaceName {
    type Error = String;
    fn try_from(s: String) -> std::result::Result<Self, String> {
        WorkspaceName::parse("workspace", &s).map_err(|e| e.message)
    }
}

impl From<WorkspaceName> for String {
    fn from(w: WorkspaceName) -> String {
        w.0
    }
}

/// A read's `workspace` argument as given: a name, `*` (all of the
/// caller's workspaces), or a list of names. [`Selection::parse`] checks it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum WorkspaceArg {
    One(String),
    Several(Vec<String>),
}

impl JsonSchema for WorkspaceArg {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "WorkspaceSelection".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "Which workspaces to answer from: a name, \"*\" (all of yours) or a list of 1 to 100 names; the context (set_context), else `default`, when absent",
            "anyOf": [
                {"type": "string"},
                {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 100}
            ]
        })
    }
}

/// What a read answers from: some workspaces, or all of the user's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    All,
    Some(BTreeSet<WorkspaceName>),
}

impl Selection {
    /// A read's `workspace`: a name, `*`, or a list of names (1–100; `*`
    /// alone in it means all).
    pub fn parse(field: &str, arg: &WorkspaceArg) -> Result<Self> {
        let names: Vec<&str> = match arg {
            WorkspaceArg::One(s) => vec![s.as_str()],
            WorkspaceArg::Several(items) if (1..=100).contains(&items.len()) => {
                items.iter().map(String::as_str).collect()
            }
            _ => {
                return Err(NeotomaError::invalid_field(
                    field,
                    "workspace is a name, \"*\" (all of yours) or a list of 1 to 100 names",
                ))
            }
        };
        if names.contains(&ALL) {
            return Ok(Selection::All);
        }
        Ok(Selection::Some(
            names
                .into_iter()
                .map(|n| WorkspaceName::parse(field, n))
                .collect::<Result<_>>()?,
        ))
    }

    pub fn one(name: WorkspaceName) -> Self {
        Selection::Some(BTreeSet::from([name]))
    }

    /// Whether a row of `workspace` is answered.
    pub fn admits(&self, workspace: &str) -> bool {
        match self {
            Selection::All => true,
            Selection::Some(names) => names.iter().any(|n| n.as_str() == workspace),
        }
    }
}

/// The `workspace` argument of an action, by the kind of action the
/// catalog marks it (`[read]`, `[write]`); `NotScoped` for actions about the
/// user or the server rather than stored memory.
#[derive(Debug, Clone, Copy)]
pub enum Requested<'a> {
    NotScoped,
    Read(Option<&'a WorkspaceArg>),
    Write(Option<&'a WorkspaceName>),
}

/// What every response of an action of workspaces says about where it
/// answered from (`workspace_context`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorkspaceContext {
    /// The workspaces read from, or the one written to.
    pub workspaces: Vec<String>,
    /// Whether every workspace of the caller was selected (`*`).
    pub all: bool,
    /// Where the choice came from: the action's `workspace` argument, the
    /// context of the caller's token, the user's context, or `default`.
    pub from: Origin,
}

/// Where the workspace an action used came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// The action's own `workspace` argument.
    Argument,
    /// The context set for the token the caller used.
    TokenContext,
    /// The context set for the user.
    UserContext,
    /// None of those: `default`.
    Default,
}

/// The workspace an action uses: its argument, else the token's context,
/// else the user's, else `default`.
pub fn effective(
    argument: Option<WorkspaceName>,
    token_context: Option<WorkspaceName>,
    user_context: Option<WorkspaceName>,
) -> (WorkspaceName, Origin) {
    match (argument, token_context, user_context) {
        (Some(w), _, _) => (w, Origin::Argument),
        (None, Some(w), _) => (w, Origin::TokenContext),
        (None, None, Some(w)) => (w, Origin::UserContext),
        (None, None, None) => (WorkspaceName::default_workspace(), Origin::Default),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn graph_server_names_fold_to_workspace_names() {
        let f = |l: &str| WorkspaceName::from_label("workspaceName", l).map(|w| w.0);
        assert_eq!(f("demo").unwrap(), "demo");
        assert_eq!(f(" My Project / 2025 ").unwrap(), "my-project-2025");
        assert_eq!(f("Demo").unwrap(), "demo");
        assert_eq!(f(&"x".repeat(100)).unwrap().len(), 63);
        assert!(f("  ").is_err() && f("人物").is_err() && f("--").is_err());
    }

    fn w(n: &str) -> WorkspaceName {
        WorkspaceName::parse("workspace", n).unwrap()
    }

    #[test]
    fn names_are_checked() {
        for good in ["default", "a", "project-x", "2026_taxes", &"a".repeat(63)] {
            assert!(WorkspaceName::parse("workspace", good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "-x",
            "_x",
            "Work",
            "a b",
            "a/b",
            "é",
            "*",
            &"a".repeat(64),
        ] {
            assert!(WorkspaceName::parse("workspace", bad).is_err(), "{bad}");
        }
        assert!(serde_json::from_value::<WorkspaceName>(json!("Bad")).is_err());
        assert!(w("default").is_default() && !w("x").is_default());
    }

    /// A read's `workspace` as JSON, deserialised as the request is, then parsed.
    fn selection(v: serde_json::Value) -> Result<Selection> {
        let arg: WorkspaceArg = serde_json::from_value(v)
            .map_err(|e| NeotomaError::invalid_field("workspace", e.to_string()))?;
        Selection::parse("workspace", &arg)
    }

    #[test]
    fn a_read_selects_names_or_all() {
        let s = selection(json!("home")).unwrap();
        assert!(s.admits("home") && !s.admits("default"));
        let s = selection(json!(["home", "work", "home"])).unwrap();
        assert_eq!(s, Selection::Some(BTreeSet::from([w("home"), w("work")])));
        assert_eq!(selection(json!("*")).unwrap(), Selection::All);
        assert_eq!(selection(json!(["x", "*"])).unwrap(), Selection::All);
        assert!(Selection::All.admits("anything"));
        for bad in [
            json!([]),
            json!(3),
            json!(["ok", 1]),
            json!(["Bad"]),
            json!(null),
        ] {
            assert!(selection(bad.clone()).is_err(), "{bad}");
        }
        let many: Vec<String> = (0..101).map(|i| format!("w{i}")).collect();
        assert!(selection(json!(many)).is_err());
    }

    #[test]
    fn the_argument_then_the_token_then_the_user_then_default() {
        assert_eq!(
            effective(Some(w("a")), Some(w("b")), Some(w("c"))),
            (w("a"), Origin::Argument)
        );
        assert_eq!(
            effective(None, Some(w("b")), Some(w("c"))),
            (w("b"), Origin::TokenContext)
        );
        assert_eq!(
            effective(None, None, Some(w("c"))),
            (w("c"), Origin::UserContext)
        );
        assert_eq!(effective(None, None, None), (w("default"), Origin::Default));
    }
}
