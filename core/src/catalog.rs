//! The action catalog: every action the extension serves, with what an MCP
//! client needs to call it. The gateway builds its tool list from this (read
//! through `neotoma.action_catalog()`), so adding an action never touches it.

use crate::actions::system;
use crate::canonical::{canonical_json, sha256_hex};
use crate::request::schema_for;
use serde_json::{json, Value};

/// Version of the MCP contract this catalog implements (seed 000 section 8).
pub const API_VERSION: &str = "1.0.0";

/// One action.
pub struct ActionSpec {
    pub name: &'static str,
    pub title: &'static str,
    /// Written for an agent: when to use it and what it returns.
    pub description: &'static str,
    pub input_schema: fn() -> Value,
    /// Set where the result has a fixed shape.
    pub output_schema: Option<fn() -> Value>,
    pub read_only: bool,
    pub idempotent: bool,
    pub destructive: bool,
    /// Older names (seed 001) that keep working.
    pub aliases: &'static [&'static str],
}

impl ActionSpec {
    /// The SQL function serving this action; it takes and returns jsonb.
    pub fn sql_function(&self) -> String {
        format!("neotoma.{}", self.name)
    }

    pub fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "input_schema": (self.input_schema)(),
            "output_schema": self.output_schema.map(|f| f()),
            "annotations": {
                "read_only": self.read_only,
                "idempotent": self.idempotent,
                "destructive": self.destructive,
            },
            "sql_function": self.sql_function(),
            "aliases": self.aliases,
        })
    }
}

/// Every action, in a fixed order.
pub fn actions() -> Vec<ActionSpec> {
    vec![
        ActionSpec {
            name: "get_version",
            title: "Get version",
            description: "Report the versions of the Neotoma extension, its action catalog, \
                the MCP contract and Postgres. Use it to check that the memory is reachable \
                and which features it has. Returns {extension_version, catalog_version, \
                api_version, server_version, postgres_version}.",
            input_schema: schema_for::<system::GetVersionRequest>,
            output_schema: Some(schema_for::<system::GetVersionResponse>),
            read_only: true,
            idempotent: true,
            destructive: false,
            aliases: &[],
        },
        ActionSpec {
            name: "get_current_time",
            title: "Get current time",
            description: "Return the memory's clock (the database's), in UTC. Use it to \
                timestamp what you store (`provenance.extracted_at`) or to ask about \
                'today' consistently with stored data. Returns {now, unix_ms, timezone}.",
            input_schema: schema_for::<system::GetCurrentTimeRequest>,
            output_schema: Some(schema_for::<system::GetCurrentTimeResponse>),
            read_only: true,
            idempotent: false,
            destructive: false,
            aliases: &[],
        },
    ]
}

/// The canonical action name for `name`, which may be an alias.
pub fn resolve(name: &str) -> Option<&'static str> {
    actions()
        .into_iter()
        .find(|a| a.name == name || a.aliases.contains(&name))
        .map(|a| a.name)
}

/// The whole catalog as served by `neotoma.action_catalog()`.
pub fn catalog_json(extension_version: &str) -> Value {
    let actions: Vec<Value> = actions().iter().map(ActionSpec::to_json).collect();
    let digest = sha256_hex(canonical_json(&Value::Array(actions.clone())).as_bytes());
    json!({
        "catalog_version": format!("{extension_version}+{}", &digest[..12]),
        "extension_version": extension_version,
        "api_version": API_VERSION,
        "actions": actions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_and_aliases_are_unique() {
        let mut seen = HashSet::new();
        for a in actions() {
            assert!(seen.insert(a.name), "duplicate {}", a.name);
            for alias in a.aliases {
                assert!(seen.insert(alias), "duplicate alias {alias}");
            }
        }
    }

    #[test]
    fn every_action_has_an_object_input_schema_and_a_description() {
        for a in actions() {
            let schema = (a.input_schema)();
            assert_eq!(schema["type"], "object", "{}", a.name);
            assert!(
                a.description.len() > 40,
                "{} needs a real description",
                a.name
            );
            if let Some(out) = a.output_schema {
                assert_eq!(out()["type"], "object", "{}", a.name);
            }
            assert!(!(a.read_only && a.destructive), "{}", a.name);
        }
    }

    #[test]
    fn catalog_version_is_stable_and_tracks_content() {
        let a = catalog_json("1.2.3");
        assert_eq!(a, catalog_json("1.2.3"));
        let v = a["catalog_version"].as_str().unwrap();
        assert!(v.starts_with("1.2.3+"), "{v}");
        assert_eq!(a["actions"][0]["sql_function"], "neotoma.get_version");
        assert_eq!(resolve("get_version"), Some("get_version"));
        assert_eq!(resolve("nope"), None);
    }
}
