//! Where an action runs when users are spread over several servers
//! (docs/scale-out.md): a router database hands each call to the partition
//! of the user it acts for, except the few that change what every partition
//! holds alike.

use crate::catalog::ActionId;
use serde_json::Value;

/// Where a call runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// On the partition of the user the call acts for.
    User,
    /// On every partition, the same change on each: an operator's change to
    /// the global schemas, which each partition keeps a copy of.
    Everywhere,
    /// On every partition, the answers combined: an operator's read over
    /// every user (product analytics: the partitions' counters added up).
    Combined,
}

/// Where the call of `id` with `args` runs.
pub fn placement(id: ActionId, args: &Value) -> Placement {
    match id {
        // Without `user_specific`, these change the global schema of a type.
        ActionId::RegisterSchema | ActionId::UpdateSchemaIncremental
            if !args
                .get("user_specific")
                .and_then(Value::as_bool)
                .unwrap_or(false) =>
        {
            Placement::Everywhere
        }
        ActionId::GetProductAnalytics => Placement::Combined,
        _ => Placement::User,
    }
}

/// The `neotoma.*` settings of a call that the partition must see as the
/// router saw them (the user and whether it acts as an operator travel
/// apart): which token the call came with, what the gateway computed for
/// it (the query's embedding, whether a model interprets files), and the
/// base of the file URLs it signs (its public URL).
pub const FORWARDED_SETTINGS: &[&str] = &[
    "neotoma.token_id",
    "neotoma.public_url",
    "neotoma.model_interpreter",
    "neotoma.query_embedding_model",
    "neotoma.query_embedding",
    "neotoma.query_embedding_error",
];

/// Whether `value` is one the forwarded setting `name` takes: Postgres
/// refuses a boolean setting any other word (an error the partition would
/// raise instead of answering).
pub fn forwarded_value_ok(name: &str, value: &str) -> bool {
    match name {
        "neotoma.model_interpreter" => matches!(
            value.trim().to_ascii_lowercase().as_str(),
            "on" | "off" | "true" | "false" | "yes" | "no" | "1" | "0"
        ),
        _ => !value.contains('\0'),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn global_schema_changes_run_everywhere() {
        let schema = json!({"entity_type": "invoice"});
        assert_eq!(
            placement(ActionId::RegisterSchema, &schema),
            Placement::Everywhere
        );
        assert_eq!(
            placement(ActionId::UpdateSchemaIncremental, &schema),
            Placement::Everywhere
        );
        let own = json!({"entity_type": "invoice", "user_specific": true});
        assert_eq!(placement(ActionId::RegisterSchema, &own), Placement::User);
        assert_eq!(
            placement(ActionId::UpdateSchemaIncremental, &own),
            Placement::User
        );
    }

    #[test]
    fn product_analytics_combine_every_partition() {
        assert_eq!(
            placement(ActionId::GetProductAnalytics, &json!({})),
            Placement::Combined
        );
    }

    #[test]
    fn forwarded_values_are_checked_by_kind() {
        assert!(forwarded_value_ok("neotoma.model_interpreter", " On"));
        assert!(!forwarded_value_ok("neotoma.model_interpreter", "maybe"));
        assert!(forwarded_value_ok("neotoma.query_embedding", "[0.1, 0.2]"));
        assert!(!forwarded_value_ok("neotoma.token_id", "a\0b"));
    }

    #[test]
    fn everything_else_runs_where_the_user_is() {
        let args = json!({"user_specific": false});
        for id in ActionId::ALL {
            if !matches!(
                id,
                ActionId::RegisterSchema
                    | ActionId::UpdateSchemaIncremental
                    | ActionId::GetProductAnalytics
            ) {
                assert_eq!(placement(*id, &args), Placement::User, "{}", id.name());
            }
        }
    }
}
