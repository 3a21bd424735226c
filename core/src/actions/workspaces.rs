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
