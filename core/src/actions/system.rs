//! `get_version` and `get_current_time`: small actions that prove the path
//! agent → gateway → SQL → extension works.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `get_version` takes no arguments but the `user_id` every action accepts.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetVersionRequest {
    /// Accepted like every action's (checked against the session's user).
    pub user_id: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct GetVersionResponse {
    /// Version of the `neotoma` extension installed in this database.
    pub extension_version: String,
    /// Version of the action catalog (changes whenever an action's contract changes).
    pub catalog_version: String,
    /// Version of the MCP contract (seed 000 section 8).
    pub api_version: String,
    /// Version of the MCP server (gateway) making the call, when known.
    pub server_version: Option<String>,
    /// `server_version` of Postgres.
    pub postgres_version: String,
}

/// `get_current_time` takes no arguments but the `user_id` every action accepts.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetCurrentTimeRequest {
    /// Accepted like every action's (checked against the session's user).
    pub user_id: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct GetCurrentTimeResponse {
    /// The database clock, ISO 8601 in UTC.
    pub now: String,
    /// Milliseconds since the Unix epoch.
    pub unix_ms: i64,
    /// Always "UTC".
    pub timezone: String,
}

/// The catalog's entries of this family's actions, by name: each one's
/// title, its description for an agent and how it behaves
/// (`crate::catalog::spec`).
pub(crate) fn spec(name: &str) -> Option<crate::catalog_entry::Entry> {
    use crate::catalog_entry::Entry;
    Some(match name {
        "get_version" => Entry::new(
            "Get version",
            "Report the versions of the Neotoma extension, its action catalog, \
                the MCP contract and Postgres. Use it to check that the memory is reachable \
                and which features it has. Returns {extension_version, catalog_version, \
                api_version, server_version, postgres_version}.",
        )
        .read_only(),
        "get_current_time" => Entry::new(
            "Get current time",
            "Return the memory's clock (the database's), in UTC. Use it to \
                timestamp what you store (`provenance.extracted_at`) or to ask about \
                'today' consistently with stored data. Returns {now, unix_ms, timezone}.",
        )
        .read_only()
        .not_idempotent(),
        _ => return None,
    })
}
