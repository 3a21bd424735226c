//! What a limited token may call (`neotoma-mcp token create --read-only
//! --tools … --workspaces …`): an agent trusted with less than everything
//! its user may do. The extension checks every call that comes with a
//! token (`neotoma.token_id`) against its token's limits before the action
//! runs; a workspace limit also bounds the scope the action establishes.

use crate::catalog::{self, ActionId, Scoping};
use crate::tool_sets::{self, Selection, ToolGroup, ToolSet};
use crate::workspace::WorkspaceName;
use crate::{ErrorCode, NeotomaError};
use std::collections::BTreeSet;

/// A limit a call can be beyond (`details.limit` of its refusal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Limit {
    ReadOnly,
    Tools,
    Workspaces,
}

impl Limit {
    fn name(self) -> &'static str {
        match self {
            Limit::ReadOnly => "read_only",
            Limit::Tools => "tools",
            Limit::Workspaces => "workspaces",
        }
    }
}

/// A token's limits, as stored with it (`neotoma.api_tokens`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TokenLimits {
    /// Only actions that write nothing.
    pub read_only: bool,
    /// Only the tools this selection lists (`--tools`' syntax); None: all.
    pub tools: Option<Selection>,
    /// Only these workspaces of the user; None: all.
    pub workspaces: Option<BTreeSet<String>>,
}

/// Whether `id` answers from, or writes to, only the workspaces its scope
/// establishes (an action of workspaces, or another server's tool, which
/// works in the caller's context), or is about the server and the user's
/// contexts rather than memory: what a workspace-limited token may call.
/// Schema administration, analytics, files' interpretations and
/// connectors (an account's credentials are the user's, whichever
/// workspace its syncs store in) act across every workspace: not.
pub fn stays_in_workspaces(id: ActionId) -> bool {
    use ActionId::*;
    if matches!(
        id,
        ConnectProvider | RecordConnector | PlaidExchangePublicToken | RecordPlaidItem
    ) {
        return false;
    }
    id.scoping() != Scoping::None
        || catalog::spec(id).tool_set != ToolSet::Neotoma
        || matches!(
            id,
            GetVersion
                | GetCurrentTime
                | ListEntityTypes
                | ListWorkspaces
                | SetContext
                | GetContext
                | ClearContext
        )
}

impl TokenLimits {
    /// The limits of a token row. A stored tool list that no longer reads
    /// (a set or group since renamed) permits nothing rather than all.
    pub fn new(read_only: bool, tools: Option<&str>) -> Self {
        let tools = tools.map(|t| {
            tool_sets::parse_selection(t).unwrap_or(Selection {
                sets: Vec::new(),
                groups: Default::default(),
            })
        });
        TokenLimits {
            read_only,
            tools,
            workspaces: None,
        }
    }

    /// These limits, and only the workspaces `names` (None: all).
    pub fn in_workspaces(mut self, names: Option<Vec<String>>) -> Self {
        self.workspaces = names.map(|n| n.into_iter().collect());
        self
    }

    /// Whether a row of `workspace` is within the limits.
    pub fn admits_workspace(&self, workspace: &str) -> bool {
        self.workspaces
            .as_ref()
            .is_none_or(|w| w.contains(workspace))
    }

    /// FORBIDDEN for a workspace beyond the limits, named by the call
    /// (`field`); the limits' own workspaces are named, never others.
    pub fn permit_workspace(&self, field: &str, workspace: &str) -> Result<(), NeotomaError> {
        let Some(allowed) = self.workspaces.as_ref().filter(|w| !w.contains(workspace)) else {
            return Ok(());
        };
        let names: Vec<&str> = allowed.iter().map(String::as_str).collect();
        Err(NeotomaError::new(
            ErrorCode::Forbidden,
            format!(
                "this token may use only the workspaces {}: not `{workspace}`",
                names.join(", ")
            ),
        )
        .with("limit", Limit::Workspaces.name())
        .with("field", field)
        .with("workspaces", names))
    }

    /// Whether a call of `id` is within the limits; FORBIDDEN, naming the
    /// limit, when it is not.
    pub fn permit(&self, id: ActionId) -> Result<(), NeotomaError> {
        let spec = catalog::spec(id);
        let Some(limit) = self.broken(
            spec.read_only,
            spec.tool_set,
            catalog::group_of(id),
            stays_in_workspaces(id),
        ) else {
            return Ok(());
        };
        let message = match limit {
            Limit::ReadOnly => format!(
                "this token is read-only: {} writes (use a token made without --read-only)",
                spec.name()
            ),
            Limit::Tools => format!(
                "this token may call only the tools of --tools {}: not {}",
                self.tools
                    .as_ref()
                    .map(Selection::describe)
                    .unwrap_or_default(),
                spec.name()
            ),
            Limit::Workspaces => format!(
                "this token may use only some workspaces, and {} acts across all of them",
                spec.name()
            ),
        };
        Err(NeotomaError::new(ErrorCode::Forbidden, message)
            .with("limit", limit.name())
            .with("action", spec.name()))
    }

    /// Whether a tool that writes (or not), of `set` and `group`, that
    /// stays in its workspaces (or not, [`stays_in_workspaces`]), is within
    /// the limits: what `tools/list` shows a token's session.
    pub fn permits(
        &self,
        read_only: bool,
        set: ToolSet,
        group: ToolGroup,
        in_workspaces: bool,
    ) -> bool {
        self.broken(read_only, set, group, in_workspaces).is_none()
    }

    /// The limit a tool is beyond; None when it is within them all. The
    /// one rule both [`Self::permit`] and [`Self::permits`] apply.
    fn broken(
        &self,
        read_only: bool,
        set: ToolSet,
        group: ToolGroup,
        in_workspaces: bool,
    ) -> Option<Limit> {
        if self.read_only && !read_only {
            return Some(Limit::ReadOnly);
        }
        if self.tools.as_ref().is_some_and(|t| !t.lists(set, group)) {
            return Some(Limit::Tools);
        }
        if self.workspaces.is_some() && !in_workspaces {
            return Some(Limit::Workspaces);
        }
        None
    }

    /// Whether the token is limited at all.
    pub fn limited(&self) -> bool {
        self.read_only || self.tools.is_some() || self.workspaces.is_some()
    }

    /// A stored workspace list's names, checked (`--workspaces a,b`): at
    /// least one, each a workspace name; sorted, without repeats.
    pub fn parse_workspaces(list: &str) -> Result<Vec<String>, NeotomaError> {
        let names = list
            .split(',')
            .map(str::trim)
            .map(|n| WorkspaceName::parse("workspaces", n).map(|w| w.as_str().to_string()))
            .collect::<Result<BTreeSet<String>, _>>()?;
        Ok(names.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(r: Result<(), NeotomaError>) -> Option<ErrorCode> {
        r.err().map(|e| e.code)
    }

    #[test]
    fn a_token_without_limits_calls_everything() {
        let any = TokenLimits::new(false, None);
        assert!(!any.limited());
        for a in catalog::actions() {
            assert!(any.permit(a.id).is_ok(), "{}", a.name());
        }
    }

    #[test]
    fn a_read_only_token_calls_only_what_writes_nothing() {
        let reader = TokenLimits::new(true, None);
        for a in catalog::actions() {
            assert_eq!(reader.permit(a.id).is_ok(), a.read_only, "{}", a.name());
        }
        assert_eq!(
            code(reader.permit(ActionId::Store)),
            Some(ErrorCode::Forbidden)
        );
        assert_eq!(
            code(reader.permit(ActionId::Bulk)),
            Some(ErrorCode::Forbidden)
        );
        assert!(reader.permit(ActionId::RetrieveEntities).is_ok());
    }

    #[test]
    fn what_a_token_is_shown_is_what_it_may_call() {
        for limits in [
            TokenLimits::new(true, None),
            TokenLimits::new(false, Some("memory,neotoma,review")),
            TokenLimits::new(true, Some("all")),
            TokenLimits::new(false, None).in_workspaces(Some(vec!["team".into()])),
        ] {
            for a in catalog::actions() {
                assert_eq!(
                    limits.permits(
                        a.read_only,
                        a.tool_set,
                        catalog::group_of(a.id),
                        stays_in_workspaces(a.id)
                    ),
                    limits.permit(a.id).is_ok(),
                    "{}",
                    a.name()
                );
            }
        }
    }

    #[test]
    fn a_token_with_tools_calls_only_those_listed() {
        let memory = TokenLimits::new(false, Some("memory"));
        assert!(memory.permit(ActionId::MemoryReadGraph).is_ok());
        assert!(memory.permit(ActionId::MemoryCreateEntities).is_ok());
        assert_eq!(
            code(memory.permit(ActionId::RetrieveEntities)),
            Some(ErrorCode::Forbidden)
        );
        let core = TokenLimits::new(true, Some("neotoma"));
        assert!(core.permit(ActionId::RetrieveEntities).is_ok());
        assert!(core.permit(ActionId::DeleteEntity).is_err());
        assert!(core.permit(ActionId::ListRecentChanges).is_err());
        assert!(core.permit(ActionId::MemoryReadGraph).is_err());
        // What no longer reads permits nothing.
        let broken = TokenLimits::new(false, Some("no-such-set"));
        assert!(broken.permit(ActionId::GetVersion).is_err());
    }

    #[test]
    fn a_stored_tool_list_reads_back_as_it_was_chosen() {
        for list in [
            "memory",
            "neotoma",
            "memory,neotoma,bulk,review",
            "all",
            "graphmem,workspaces",
        ] {
            let chosen = tool_sets::parse_selection(list).unwrap();
            assert_eq!(
                tool_sets::parse_selection(&chosen.describe()).unwrap(),
                chosen,
                "{list}"
            );
        }
    }

    #[test]
    fn a_workspace_limited_token_calls_only_what_stays_in_workspaces() {
        let team = TokenLimits::new(false, None).in_workspaces(Some(vec!["team".into()]));
        assert!(team.limited());
        for id in [
            ActionId::Store,
            ActionId::RetrieveEntities,
            ActionId::ReadResource,
            ActionId::MemoryReadGraph,
            ActionId::WorkspaceReadGraph,
            ActionId::ListWorkspaces,
            ActionId::SetContext,
            ActionId::GetVersion,
        ] {
            assert!(team.permit(id).is_ok(), "{id:?}");
        }
        for id in [
            ActionId::RegisterSchema,
            ActionId::AnalyzeSchemaCandidates,
            ActionId::GetProductAnalytics,
            ActionId::Reinterpret,
            ActionId::SyncProviderImports,
            ActionId::ConnectProvider,
            ActionId::PlaidExchangePublicToken,
        ] {
            let e = team.permit(id).unwrap_err();
            assert_eq!(e.code, ErrorCode::Forbidden);
            assert_eq!(e.details["limit"], "workspaces", "{id:?}");
        }
        assert!(team.admits_workspace("team"));
        assert!(!team.admits_workspace("default"));
        let e = team.permit_workspace("workspace", "secret").unwrap_err();
        assert_eq!(e.details["limit"], "workspaces");
        assert_eq!(e.details["workspaces"], serde_json::json!(["team"]));
        assert!(TokenLimits::default()
            .permit_workspace("workspace", "x")
            .is_ok());
    }

    #[test]
    fn a_workspace_list_is_checked_and_sorted() {
        assert_eq!(
            TokenLimits::parse_workspaces("team, default,team").unwrap(),
            vec!["default".to_string(), "team".to_string()]
        );
        assert!(TokenLimits::parse_workspaces("").is_err());
        assert!(TokenLimits::parse_workspaces("team,").is_err());
        assert!(TokenLimits::parse_workspaces("no spaces allowed").is_err());
    }
}
