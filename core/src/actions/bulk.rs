//! `bulk`: several writes in one transaction, all or nothing, later
//! operations referring to the entities of earlier ones; and
//! `create_relationships`, a batch of relationship creations. Pure: the
//! requests, the references and what each operation yields.

use crate::error::{NeotomaError, Result};
use crate::workspace::WorkspaceName;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;

/// Most operations in one `bulk` call (and relationships in one
/// `create_relationships` call).
pub const MAX_OPERATIONS: usize = 500;

/// The actions a `bulk` operation may run: the writes of entities and
/// relationships.
pub const BULK_ACTIONS: &[&str] = &[
    "store",
    "correct",
    "create_relationship",
    "delete_entity",
    "restore_entity",
    "delete_relationship",
    "restore_relationship",
    "merge_entities",
];

/// The argument names whose values are entity ids: where `"$<ref>"` stands
/// for the entity of an earlier operation (also inside arrays under them).
pub const ENTITY_ID_FIELDS: &[&str] = &[
    "entity_id",
    "entity_ids",
    "source_entity_id",
    "target_entity_id",
    "from_entity_id",
    "to_entity_id",
];

/// Most characters of a reference's name.
pub const MAX_REF_CHARS: usize = 64;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkRequest {
    /// The operations, run in order in one transaction (1–500): if one
    /// fails, none of them is kept, and the error names it.
    pub operations: Vec<BulkOperation>,
    pub user_id: Option<String>,
    /// The workspace to write in; the context (set_context), else `default`,
    /// when absent. What it names must lie there.
    pub workspace: Option<WorkspaceName>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkOperation {
    /// The action: store, correct, create_relationship, delete_entity,
    /// restore_entity, delete_relationship, restore_relationship or
    /// merge_entities.
    pub action: String,
    /// The action's own arguments. Where an entity id is expected
    /// (entity_id, source_entity_id, target_entity_id, from_entity_id,
    /// to_entity_id), "$<ref>" names the entity of an earlier operation.
    #[serde(default)]
    pub args: Option<Value>,
    /// A name for the entity this operation yields (a store's first entity;
    /// the entity a correction, deletion or restoration acts on; a merge's
    /// target), for later operations to refer to as "$<ref>": 1–64 letters,
    /// digits, `_` or `-`.
    #[serde(rename = "ref")]
    pub reference: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct BulkResponse {
    /// Each operation's answer, in order.
    pub results: Vec<BulkResult>,
    pub operations: usize,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct BulkResult {
    /// The operation's place in `operations`, from 0.
    pub index: usize,
    pub action: String,
    #[serde(rename = "ref", skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// The entity the operation yields (what its ref names), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entity_id: Option<String>,
    /// The action's own answer.
    pub result: Value,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateRelationshipsRequest {
    /// The relationships to create (1–500), as create_relationship takes
    /// them, in one transaction: all or none.
    pub relationships: Vec<crate::actions::relationships::CreateRelationshipRequest>,
    pub user_id: Option<String>,
    /// The workspace to write in; the context (set_context), else `default`,
    /// when absent. What it names must lie there.
    pub workspace: Option<WorkspaceName>,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct CreateRelationshipsResponse {
    /// Each relationship as created (or found: creating one again asserts
    /// it again), in the order given.
    pub relationships: Vec<crate::actions::relationships::RelationshipOut>,
    pub count: usize,
}

/// Refuses an empty list or one over [`MAX_OPERATIONS`].
pub fn check_count(field: &str, n: usize) -> Result<()> {
    if n == 0 || n > MAX_OPERATIONS {
        return Err(NeotomaError::invalid_field(
            field,
            format!("`{field}` must hold 1 to {MAX_OPERATIONS} items (it has {n})"),
        ));
    }
    Ok(())
}

/// Whether `name` is a valid reference name.
pub fn is_ref_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().count() <= MAX_REF_CHARS
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Replaces, under the [`ENTITY_ID_FIELDS`] of `args` (at any depth), every
/// `"$<name>"` with the entity `refs` names; an unknown name is an error.
pub fn substitute_refs(
    args: &mut Value,
    refs: &HashMap<String, String>,
) -> std::result::Result<(), String> {
    fn replace(v: &mut Value, refs: &HashMap<String, String>) -> std::result::Result<(), String> {
        match v {
            Value::String(s) => {
                if let Some(name) = s.strip_prefix('$') {
                    match refs.get(name) {
                        Some(id) => *s = id.clone(),
                        None => {
                            return Err(format!(
                                "\"{s}\" names no earlier operation's ref (an operation can \
                                 refer only to the operations before it)"
                            ))
                        }
                    }
                }
                Ok(())
            }
            Value::Array(items) => items.iter_mut().try_for_each(|x| replace(x, refs)),
            _ => Ok(()),
        }
    }
    match args {
        Value::Object(map) => map.iter_mut().try_for_each(|(k, v)| {
            if ENTITY_ID_FIELDS.contains(&k.as_str()) {
                replace(v, refs)
            } else {
                substitute_refs(v, refs)
            }
        }),
        Value::Array(items) => items.iter_mut().try_for_each(|x| substitute_refs(x, refs)),
        _ => Ok(()),
    }
}

/// The entity an operation of `action` yields, read from its answer: a
/// store's first entity, the entity a correction, deletion or restoration
/// acts on, a merge's target; None for relationships.
pub fn yielded_entity(action: &str, answer: &Value) -> Option<String> {
    let id = match action {
        "store" => &answer["entities"][0]["entity_id"],
        "correct" | "delete_entity" | "restore_entity" => &answer["entity_id"],
        "merge_entities" => &answer["to_entity_id"],
        _ => return None,
    };
    id.as_str().map(str::to_string)
}

/// The catalog's entries of this family's actions, by name: each one's
/// title, its description for an agent and how it behaves
/// (`crate::catalog::spec`).
pub(crate) fn spec(name: &str) -> Option<crate::catalog_entry::Entry> {
    use crate::catalog_entry::Entry;
    Some(match name {
        "bulk" => Entry::new(
            "Bulk writes",
            "Run several writes in one transaction, all or nothing: operations \
                [{action, args, ref?}] (1–500), each action one of store, correct, \
                create_relationship, delete_entity, restore_entity, delete_relationship, \
                restore_relationship, merge_entities, with that action's own args. An operation \
                with ref: \"alice\" names the entity it yields (a store's first entity; the \
                entity corrected, deleted or restored; a merge's target), and later operations \
                write \"$alice\" wherever an entity id goes (entity_id, source_entity_id, \
                target_entity_id, from_entity_id, to_entity_id): two entities and the \
                relationship between them in one call. If one fails nothing is kept and the \
                error names it (details.operation, from 1; operation_index, from 0). Returns \
                {results:[{index, action, ref, entity_id, result}], operations}.",
        )
        .not_idempotent()
        .destructive(),
        "create_relationships" => Entry::new(
            "Create relationships",
            "Create several relationships at once (1–500), each as create_relationship \
                takes it ({relationship_type, source_entity_id, target_entity_id, metadata?}), \
                in one transaction: all or none (the error names the failing one: \
                details.relationship, from 1). Returns {relationships:[…as created], count}.",
        ),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn references_are_replaced_where_entity_ids_go() {
        let refs = HashMap::from([("alice".to_string(), "ent_a".to_string())]);
        let mut args = json!({"relationship_type": "REFERS_TO", "source_entity_id": "$alice",
                              "target_entity_id": "ent_b", "metadata": {"note": "$alice"},
                              "nested": [{"entity_ids": ["$alice", "ent_c"]}]});
        substitute_refs(&mut args, &refs).unwrap();
        assert_eq!(args["source_entity_id"], "ent_a");
        // Not an entity id's place: a value like any other.
        assert_eq!(args["metadata"]["note"], "$alice");
        assert_eq!(args["nested"][0]["entity_ids"], json!(["ent_a", "ent_c"]));
        let mut unknown = json!({"entity_id": "$bob"});
        assert!(substitute_refs(&mut unknown, &refs)
            .unwrap_err()
            .contains("$bob"));
    }

    #[test]
    fn names_and_counts_are_checked() {
        assert!(is_ref_name("alice_1-x"));
        assert!(!is_ref_name(""));
        assert!(!is_ref_name("a b"));
        assert!(!is_ref_name(&"a".repeat(65)));
        assert!(check_count("operations", 1).is_ok());
        assert!(check_count("operations", MAX_OPERATIONS).is_ok());
        assert!(check_count("operations", 0).is_err());
        assert!(check_count("operations", MAX_OPERATIONS + 1).is_err());
    }

    #[test]
    fn operations_yield_their_entity() {
        let stored = json!({"entities": [{"entity_id": "ent_1"}, {"entity_id": "ent_2"}]});
        assert_eq!(yielded_entity("store", &stored).as_deref(), Some("ent_1"));
        assert_eq!(yielded_entity("store", &json!({"entities": []})), None);
        assert_eq!(
            yielded_entity("merge_entities", &json!({"to_entity_id": "ent_9"})).as_deref(),
            Some("ent_9")
        );
        assert_eq!(
            yielded_entity("create_relationship", &json!({"id": "r"})),
            None
        );
    }
}
