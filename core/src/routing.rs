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
/// it (the query's embedding, whether a model interprets files), the
/// base of the file URLs it signs (its public URL) and its version
/// (`get_version`'s `server_version`).
pub const FORWARDED_SETTINGS: &[&str] = &[
    "neotoma.token_id",
    "neotoma.public_url",
    "neotoma.server_version",
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

/// The answer of a change made on every partition alike (a global schema),
/// from each partition's envelope: theirs when they agree, the counts of
/// each partition's own data (`entities_recomputed`, `fragments_migrated`)
/// added up; None when they differ
/// otherwise (one could not apply it, or had it already).
pub fn agreed_answer(answers: &[Value]) -> Option<Value> {
    /// What a schema change counts of the partition's own data.
    const PARTITION_COUNTS: &[&str] = &["entities_recomputed", "fragments_migrated"];
    let (first, rest) = answers.split_first()?;
    let Some(first_ok) = first.get("ok").and_then(Value::as_object) else {
        return rest.iter().all(|a| a == first).then(|| first.clone());
    };
    let mut agreed = first_ok.clone();
    for answer in rest {
        let ok = answer.get("ok").and_then(Value::as_object)?;
        if ok.len() != agreed.len() {
            return None;
        }
        for (key, value) in ok {
            let mine = agreed.get_mut(key)?;
            if mine == value {
                continue;
            }
            match (mine.as_i64(), value.as_i64()) {
                (Some(a), Some(b)) if PARTITION_COUNTS.contains(&key.as_str()) => {
                    *mine = Value::from(a + b)
                }
                _ => return None,
            }
        }
    }
    Some(serde_json::json!({ "ok": agreed }))
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

    #[test]
    fn a_change_everywhere_agrees_when_only_the_counts_differ() {
        let on = |n: i64| json!({"ok": {"entity_type": "probe", "schema_version": "2.0", "entities_recomputed": n}});
        assert_eq!(agreed_answer(&[on(1), on(0), on(4)]), Some(on(5)));
        let other = json!({"ok": {"entity_type": "probe", "schema_version": "2.1", "entities_recomputed": 0}});
        assert_eq!(agreed_answer(&[on(1), other]), None);
        let exists = json!({"error": {"code": "SCHEMA_EXISTS", "message": "m", "details": {}}});
        assert_eq!(
            agreed_answer(&[exists.clone(), exists.clone()]),
            Some(exists.clone())
        );
        assert_eq!(agreed_answer(&[on(1), exists.clone()]), None);
        assert_eq!(agreed_answer(&[exists, on(1)]), None);
        assert_eq!(agreed_answer(&[]), None);
    }
}
