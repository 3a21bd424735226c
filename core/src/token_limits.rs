//! What a limited token may call (`neotoma-mcp token create --read-only
//! --tools …`): an agent trusted with less than everything its user may
//! do. The extension checks every call that comes with a token
//! (`neotoma.token_id`) against its token's limits before the action runs.

use crate::catalog::{self, ActionId};
use crate::tool_sets::{self, Selection, ToolGroup, ToolSet};
use crate::{ErrorCode, NeotomaError};

/// A limit a call can be beyond (`details.limit` of its refusal).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Limit {
    ReadOnly,
    Tools,
}

impl Limit {
    fn name(self) -> &'static str {
        match self {
            Limit::ReadOnly => "read_only",
            Limit::Tools => "tools",
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
        TokenLimits { read_only, tools }
    }

    /// Whether a call of `id` is within the limits; FORBIDDEN, naming the
    /// limit, when it is not.
    pub fn permit(&self, id: ActionId) -> Result<(), NeotomaError> {
        let spec = catalog::spec(id);
        let Some(limit) = self.broken(spec.read_only, spec.tool_set, catalog::group_of(id)) else {
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
        };
        Err(NeotomaError::new(ErrorCode::Forbidden, message)
            .with("limit", limit.name())
            .with("action", spec.name()))
    }

    /// Whether a tool that writes (or not), of `set` and `group`, is
    /// within the limits: what `tools/list` shows a token's session.
    pub fn permits(&self, read_only: bool, set: ToolSet, group: ToolGroup) -> bool {
        self.broken(read_only, set, group).is_none()
    }

    /// The limit a tool that writes (or not), of `set` and `group`, is
    /// beyond; None when it is within them all. The one rule both
    /// [`Self::permit`] and [`Self::permits`] apply.
    fn broken(&self, read_only: bool, set: ToolSet, group: ToolGroup) -> Option<Limit> {
        if self.read_only && !read_only {
            return Some(Limit::ReadOnly);
        }
        if self.tools.as_ref().is_some_and(|t| !t.lists(set, group)) {
            return Some(Limit::Tools);
        }
        None
    }

    /// Whether the token is limited at all.
    pub fn limited(&self) -> bool {
        self.read_only || self.tools.is_some()
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
        ] {
            for a in catalog::actions() {
                assert_eq!(
                    limits.permits(a.read_only, a.tool_set, catalog::group_of(a.id)),
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
}
