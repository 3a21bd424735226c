//! Lean answers: what an agent reads of an answer unless it asks for all of
//! it (`verbose: true`, docs/actions.md). An agent pays for every byte, so
//! the MCP gateway leaves out of Neotoma's answers what carries nothing
//! for it: fields that are null, collections that are empty (below the top
//! level, where an empty list is the answer), bookkeeping (which embedding
//! model ranked, how many embeddings are pending, content hashes, run
//! ids), `workspace_context` when it only says `default`, an item's
//! `workspace` when it is `default`, and the short `provenance` map (field
//! → observation id) beside `field_provenance`, which says the same and
//! more. The user's own data (snapshots, fields, metadata, values) is never
//! touched: a null there says a field was cleared.

use serde_json::{Map, Value};

/// Keys an answer keeps for operators and audits, not for agents.
pub const BOOKKEEPING: &[&str] = &[
    "embedding_model",
    "pending_embeddings",
    "excluded_merged",
    "content_hash",
    "interpretation_run_id",
    "run_id",
    "computed_at",
];

/// Keys whose values are the user's data, kept as they are.
const DATA: &[&str] = &[
    "snapshot",
    "fields",
    "metadata",
    "value",
    "values",
    "chosen_value",
    "properties",
    "result",
];

/// Leaves out of `answer` what an agent does not need (see the module).
pub fn lean(answer: &mut Value) {
    if let Value::Object(map) = answer {
        if map.get("workspace_context").is_some_and(only_default) {
            map.remove("workspace_context");
        }
        lean_map(map, 0);
    }
}

/// A workspace context that says nothing: the `default` workspace, by
/// default.
fn only_default(context: &Value) -> bool {
    context["workspaces"] == serde_json::json!(["default"])
        && context["all"] != Value::Bool(true)
        && context["from"] == "default"
}

fn lean_map(map: &mut Map<String, Value>, depth: usize) {
    if map.contains_key("field_provenance") {
        map.remove("provenance");
    }
    map.retain(|key, value| {
        if value.is_null() || BOOKKEEPING.contains(&key.as_str()) {
            return false;
        }
        if key == "workspace" && value == "default" {
            return false;
        }
        if !DATA.contains(&key.as_str()) {
            lean_value(value, depth + 1);
        }
        depth == 0 || !is_empty(value)
    });
}

fn lean_value(value: &mut Value, depth: usize) {
    match value {
        Value::Object(map) => lean_map(map, depth),
        Value::Array(items) => items.iter_mut().for_each(|v| lean_value(v, depth)),
        _ => {}
    }
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// An output schema for lean answers: the same, with nothing required (a
/// lean answer leaves out what is null or empty). The catalog keeps the
/// whole schema for SQL callers and `verbose` answers.
pub fn lenient_schema(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| k.as_str() != "required")
                .map(|(k, v)| {
                    let lenient = match (k.as_str(), v) {
                        // Property names (a property may be called
                        // `required`), each a schema.
                        ("properties" | "$defs" | "definitions", Value::Object(props)) => {
                            Value::Object(
                                props
                                    .iter()
                                    .map(|(name, p)| (name.clone(), lenient_schema(p)))
                                    .collect(),
                            )
                        }
                        _ => lenient_schema(v),
                    };
                    (k.clone(), lenient)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(lenient_schema).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn leaves_out_nulls_empties_and_bookkeeping_but_not_data() {
        let mut a = json!({
            "entities": [],
            "total": 0,
            "embedding_model": "potion-base-8M",
            "workspace_context": {"workspaces": ["default"], "all": false, "from": "default"},
        });
        lean(&mut a);
        assert_eq!(
            a,
            json!({"entities": [], "total": 0}),
            "the top level keeps the answer"
        );
        let mut b = json!({
            "entities": [{"id": "e", "merged_into": null, "matched_fields": [], "workspace": "default",
                          "snapshot": {"x": null, "tags": []}, "relevance_score": 0.5}],
            "workspace_context": {"workspaces": ["work"], "all": false, "from": "argument"},
            "deduplicated": false,
        });
        lean(&mut b);
        assert_eq!(
            b,
            json!({"entities": [{"id": "e", "snapshot": {"x": null, "tags": []}, "relevance_score": 0.5}],
                   "workspace_context": {"workspaces": ["work"], "all": false, "from": "argument"},
                   "deduplicated": false})
        );
    }

    #[test]
    fn field_provenance_stands_for_provenance_and_other_workspaces_are_named() {
        let mut a = json!({
            "snapshot": {"name": "Ada", "workspace": "default"},
            "provenance": {"name": "o1"},
            "field_provenance": {"name": {"observation_id": "o1", "source_id": "s1"}},
            "entities": [{"id": "e", "workspace": "work"}],
        });
        lean(&mut a);
        assert_eq!(
            a,
            json!({"snapshot": {"name": "Ada", "workspace": "default"},
                   "field_provenance": {"name": {"observation_id": "o1", "source_id": "s1"}},
                   "entities": [{"id": "e", "workspace": "work"}]}),
            "the user's own `workspace` field stays"
        );
    }

    #[test]
    fn lenient_schemas_require_nothing() {
        let s = json!({"type": "object", "required": ["a"], "properties": {
            "a": {"type": "object", "required": ["b"]},
            "required": {"type": "boolean"}}});
        assert_eq!(
            lenient_schema(&s),
            json!({"type": "object", "properties": {"a": {"type": "object"}, "required": {"type": "boolean"}}}),
            "a property called `required` stays"
        );
    }
}
