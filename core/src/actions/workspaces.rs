//! `list_workspaces`, `set_context`, `get_context`, `clear_context`: the
//! workspaces a user's memory is divided into, and the one an action
//! without `workspace` uses (docs/design/workspaces.md).

use crate::workspace::{Origin, WorkspaceName};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListWorkspacesRequest {
    pub user_id: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct WorkspaceOut {
    pub name: String,
    /// Current entities (neither merged into another nor deleted).
    pub entities: i64,
    /// Entities not deleted, merged ones included.
    pub entities_including_merged: i64,
    /// Sources stored in it.
    pub sources: i64,
    /// When it was first written to or chosen (none for `default`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// Whether actions without `workspace` use it now.
    pub in_context: bool,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ListWorkspacesResponse {
    /// `default` first, then by name.
    pub workspaces: Vec<WorkspaceOut>,
    /// The workspace actions without `workspace` use, and why.
    pub context: EffectiveContext,
}

/// Which context `set_context` and `clear_context` change: the one of the
/// token the caller used, or the user's own (for every token without one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ContextLevel {
    Token,
    User,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetContextRequest {
    /// The workspace actions without `workspace` are to use (created if new).
    pub workspace: Option<WorkspaceName>,
    /// Or a project: an entity whose workspace is to be used (it is shown
    /// back by get_context).
    pub project_entity_id: Option<String>,
    /// token (default when the caller came with a token) or user (default
    /// otherwise, e.g. over stdio).
    pub level: Option<ContextLevel>,
    pub user_id: Option<String>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetContextRequest {
    pub user_id: Option<String>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClearContextRequest {
    /// Which to clear: token, user, or (absent) the one set_context would set.
    pub level: Option<ContextLevel>,
    pub user_id: Option<String>,
}

/// One level's context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ContextOut {
    pub workspace: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_entity_id: Option<String>,
    pub set_at: String,
}

/// The workspace actions without `workspace` use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EffectiveContext {
    pub workspace: String,
    /// token_context, user_context, or default.
    pub from: Origin,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ContextResponse {
    /// The context of the token the caller used (none without a token, or
    /// when it has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<ContextOut>,
    /// The user's own context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<ContextOut>,
    pub effective: EffectiveContext,
    /// Whether the caller came with a token (else the token level is not
    /// there to set).
    pub has_token: bool,
    /// clear_context: whether there was a context to clear.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cleared: Option<bool>,
}

/// The catalog's entries of this family's actions, by name: each one's
/// title, its description for an agent and how it behaves
/// (`crate::catalog::spec`).
pub(crate) fn spec(name: &str) -> Option<crate::catalog_entry::Entry> {
    use crate::catalog_entry::Entry;
    Some(match name {
        "list_workspaces" => Entry::new(
            "List workspaces",
            "List the workspaces your memory is divided into (`default` first), with how \
                many entities and sources each holds and which one actions without `workspace` \
                use now (in_context; set_context chooses it). Reads take `workspace`: a name, \
                \"*\" for all, or a list. Returns {workspaces:[{name, entities, \
                entities_including_merged, sources, created_at, in_context}], context:{workspace, \
                from}}.",
        )
        .read_only(),
        "set_context" => Entry::new(
            "Set context",
            "Choose the workspace every later action without `workspace` uses, by name \
                (`workspace`, created if new) or by a project entity (`project_entity_id`: its \
                workspace). It is kept in the memory, so it holds across requests, connections \
                and gateways: for the token you came with (level token, the default with a \
                token), or for you (level user, the default without one, e.g. over stdio). \
                Returns {token, user, effective:{workspace, from}, has_token}.",
        ),
        "get_context" => Entry::new(
            "Get context",
            "Show which workspace actions without `workspace` use, and why: the context of \
                the token you came with, else yours, else `default`. Returns {token, user, \
                effective:{workspace, from}, has_token}.",
        )
        .read_only(),
        "clear_context" => Entry::new(
            "Clear context",
            "Forget a context set by set_context (level token or user; by default the one \
                set_context would set), so actions without `workspace` fall back to the next: \
                the user's context, then `default`. Returns {token, user, effective, has_token, \
                cleared}.",
        )
        .destructive(),
        _ => return None,
    })
}
