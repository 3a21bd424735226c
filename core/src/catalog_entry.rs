//! What the catalog says of one action, as its family's module declares it
//! (`spec` in each module of `crate::actions`): its title, its description
//! for an agent and how it behaves. `crate::catalog` adds its id.

use crate::tool_sets::ToolSet;

pub struct Entry {
    pub title: &'static str,
    /// Written for an agent: when to use it and what it returns.
    pub description: &'static str,
    pub read_only: bool,
    pub idempotent: bool,
    pub destructive: bool,
    /// Older names (seed 001) that keep working.
    pub aliases: &'static [&'static str],
    /// Callable as an MCP tool. The resource functions are not: the gateway
    /// serves them as MCP resources.
    pub tool: bool,
    /// An action of the earlier specification: callable, but not listed.
    pub legacy: bool,
    /// The tool set listing it (`--tools`), under
    /// `crate::catalog::ActionSpec::tool_name`.
    pub tool_set: ToolSet,
}

impl Entry {
    /// An action listed as a tool that writes, idempotently, destroying
    /// nothing; the methods below change what differs.
    pub fn new(title: &'static str, description: &'static str) -> Self {
        Entry {
            title,
            description,
            read_only: false,
            idempotent: true,
            destructive: false,
            aliases: &[],
            tool: true,
            legacy: false,
            tool_set: ToolSet::Neotoma,
        }
    }

    pub fn read_only(self) -> Self {
        Entry {
            read_only: true,
            ..self
        }
    }

    pub fn not_idempotent(self) -> Self {
        Entry {
            idempotent: false,
            ..self
        }
    }

    pub fn destructive(self) -> Self {
        Entry {
            destructive: true,
            ..self
        }
    }

    pub fn aliases(self, aliases: &'static [&'static str]) -> Self {
        Entry { aliases, ..self }
    }

    /// Not a tool: served otherwise (resources) or used by the gateway.
    pub fn internal(self) -> Self {
        Entry {
            tool: false,
            ..self
        }
    }

    /// A tool of another server's set: its action name is `<set>_<tool>`.
    pub fn in_set(self, tool_set: ToolSet) -> Self {
        Entry { tool_set, ..self }
    }

    pub fn legacy(self) -> Self {
        Entry {
            legacy: true,
            ..self
        }
    }
}
