//! Knowledge graphs in Neotoma's terms: the graph of the reference MCP
//! memory server (`@modelcontextprotocol/server-memory`), whose tools the
//! `memory` tool set serves and whose `memory.jsonl` `neotoma-mcp import
//! --format memory-jsonl` reads, and of the other graph servers' tool sets.
//!
//! - A graph entity is an entity of type [`type_name`]`(entityType)`
//!   (registered for the user when new) identified by its `name`; the
//!   `entityType` as given is kept in [`LABEL`], its text observations in
//!   [`OBSERVATIONS`], a list each write states whole (merged `last_write`),
//!   so deleting one is a new observation like adding one.
//! - A relation `from -relationType-> to` is a `REFERS_TO` relationship (the
//!   free-form type of the fixed set, which allows cycles) from `from` to
//!   `to` whose metadata holds one key per relation type ([`relation_key`]),
//!   so several types between two entities, written concurrently, all stay;
//!   a deleted type's key says `active: false`.

use crate::schema::{EntitySchema, IdentityRule, Strategy};
use serde::Deserialize;
use serde_json::{json, Value};

/// The relationship type every relation becomes.
pub const RELATIONSHIP_TYPE: &str = "REFERS_TO";
/// The field holding an entity's text observations.
pub const OBSERVATIONS: &str = "observations";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entity {
    pub name: String,
    /// As the file gives it.
    pub entity_type: String,
    pub observations: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relation {
    pub from: String,
    pub to: String,
    pub relation_type: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Graph {
    /// In the file's order; an entity named twice is one, with the
    /// observations of both.
    pub entities: Vec<Entity>,
    pub relations: Vec<Relation>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum Line {
    Entity {
        name: String,
        #[serde(rename = "entityType")]
        entity_type: String,
        #[serde(default)]
        observations: Vec<String>,
    },
    Relation {
        from: String,
        to: String,
        #[serde(rename = "relationType")]
        relation_type: String,
    },
}

/// Reads a `memory.jsonl`; an unreadable line is an error naming it.
pub fn parse(text: &str) -> Result<Graph, String> {
    let mut graph = Graph::default();
    let mut index: std::collections::HashMap<String, usize> = Default::default();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let parsed: Line = serde_json::from_str(line).map_err(|e| {
            format!(
                "line {}: not an entity or relation of the memory server ({e})",
                n + 1
            )
        })?;
        match parsed {
            Line::Entity {
                name,
                entity_type,
                observations,
            } => {
                if name.trim().is_empty() {
                    return Err(format!("line {}: an entity without a name", n + 1));
                }
                match index.get(&name) {
                    Some(&i) => {
                        let known = &mut graph.entities[i];
                        for o in observations {
                            if !known.observations.contains(&o) {
                                known.observations.push(o);
                            }
                        }
                    }
                    None => {
                        index.insert(name.clone(), graph.entities.len());
                        graph.entities.push(Entity {
                            name,
                            entity_type,
                            observations,
                        });
                    }
                }
            }
            Line::Relation {
                from,
                to,
                relation_type,
            } => graph.relations.push(Relation {
                from,
                to,
                relation_type,
            }),
        }
    }
    Ok(graph)
}

/// A Neotoma type name for a memory server `entityType` ([`crate::search::type_name`]).
pub use crate::search::type_name;

/// The field keeping the `entityType` as the graph server was given it.
pub const LABEL: &str = "entity_type_label";

/// The type to use when `type_name`'s schema cannot hold graph entities.
pub fn fallback_type_name(type_name: &str) -> String {
    format!("memory_{type_name}")
}

/// The fields a type needs for graph entities besides `name`, with their types.
pub const GRAPH_FIELDS: &[(&str, &str)] = &[(OBSERVATIONS, "array"), (LABEL, "string")];

/// How a type's active schema suits graph entities.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fit {
    /// No such type: register one.
    Missing,
    /// Identifies entities by `name` alone; these fields still to add.
    Fits { add: Vec<&'static str> },
    /// Identifies entities otherwise, or has one of the fields with another
    /// type: use [`fallback_type_name`].
    Unfit,
}

pub fn fit(schema: Option<&EntitySchema>) -> Fit {
    let Some(schema) = schema else {
        return Fit::Missing;
    };
    let by_name = schema.fields.contains_key("name")
        && schema
            .identity
            .iter()
            .any(|r| matches!(r, IdentityRule::Field(f) if f == "name"));
    if !by_name {
        return Fit::Unfit;
    }
    let mut add = Vec::new();
    for (field, field_type) in GRAPH_FIELDS {
        match schema.fields.get(*field) {
            None => add.push(*field),
            Some(f) if f.field_type.as_str() == *field_type => {}
            Some(_) => return Fit::Unfit,
        }
    }
    Fit::Fits { add }
}

/// Whether a type keeps observations as a union (types registered by a
/// `memory.jsonl` import before 0.13.0): a text is then removed by a
/// correction stating the list.
pub fn observations_by_union(schema: &EntitySchema) -> bool {
    schema
        .merge_policies
        .get(OBSERVATIONS)
        .is_some_and(|p| p.strategy == Strategy::MergeArray)
}

/// `register_schema` arguments for a new type of graph entities (for this
/// user only).
pub fn register_args(type_name: &str, original: &str) -> Value {
    json!({
        "entity_type": type_name,
        "user_specific": true,
        "schema_definition": {
            "description": format!("{original} (graph entities, as the MCP memory server keeps them)"),
            "fields": {
                "name": {"type": "string", "required": true, "preserveCase": true},
                OBSERVATIONS: {"type": "array", "description": "What is known of it: the whole list, as of the latest write."},
                LABEL: {"type": "string", "description": "Its type as the agent named it."}
            },
            "identity_fields": ["name"]
        },
        // Every observation gives the same name: the most reliable one's
        // rating is the entity's.
        "reducer_config": {"merge_policies": {"name": {"strategy": "highest_confidence"}}}
    })
}

/// `update_schema_incremental` arguments that add `fields` (of
/// [`GRAPH_FIELDS`]) to an existing type (for this user only).
pub fn add_fields_args(type_name: &str, fields: &[&str]) -> Value {
    let fields: Vec<Value> = GRAPH_FIELDS
        .iter()
        .filter(|(f, _)| fields.contains(f))
        .map(|(f, t)| json!({"field_name": f, "field_type": t}))
        .collect();
    json!({"entity_type": type_name, "user_specific": true, "fields_to_add": fields})
}

/// The metadata key of one relation type: `rel_<type>` when the type is a
/// snake-case name that does not end like a digest, else
/// `rel_<type_name>_<8 hex digits of its SHA-256>`. Different types never
/// share a key (the two forms cannot meet: one never ends like a digest,
/// the other always does), and no key is the 0.12 import's `relation_type`.
pub fn relation_key(relation_type: &str) -> String {
    let name = type_name(relation_type);
    let digest_like = |s: &str| {
        s.len() > 9
            && s.as_bytes()[s.len() - 9] == b'_'
            && s[s.len() - 8..].bytes().all(|b| b.is_ascii_hexdigit())
    };
    if name == relation_type && !digest_like(&name) {
        format!("rel_{name}")
    } else {
        let digest = crate::canonical::sha256_hex(relation_type.as_bytes());
        format!("rel_{name}_{}", &digest[..8])
    }
}

/// Whether a metadata key holds one relation type ([`relation_key`]).
pub fn is_relation_key(key: &str) -> bool {
    key.starts_with("rel_")
}

/// The metadata of one assertion of a relation type: active (created) or
/// not (deleted), at `at` (which keeps a re-creation a new observation).
pub fn relation_metadata(relation_type: &str, active: bool, at: &str) -> Value {
    json!({relation_key(relation_type): {"relation_type": relation_type, "active": active, "at": at}})
}

/// The relation types a relationship's metadata holds as active, sorted;
/// `relation_type` (a 0.12 import's one type) counts when no key names it.
pub fn active_relation_types(metadata: &Value) -> Vec<String> {
    let Some(m) = metadata.as_object() else {
        return Vec::new();
    };
    let mut types: Vec<String> = m
        .iter()
        .filter(|(k, _)| is_relation_key(k))
        .filter(|(_, v)| v["active"] == Value::Bool(true))
        .filter_map(|(_, v)| v["relation_type"].as_str().map(str::to_string))
        .collect();
    if let Some(legacy) = m.get("relation_type").and_then(Value::as_str) {
        if !m.contains_key(&relation_key(legacy)) {
            types.push(legacy.to_string());
        }
    }
    types.sort();
    types.dedup();
    types
}

/// Whether the metadata holds relation types (else the relationship is one
/// of Neotoma's own, named by its type).
pub fn holds_relation_types(metadata: &Value) -> bool {
    metadata
        .as_object()
        .is_some_and(|m| m.keys().any(|k| is_relation_key(k)) || m.contains_key("relation_type"))
}

/// Whether the metadata says anything of `relation_type` (active or not).
pub fn mentions_relation_type(metadata: &Value, relation_type: &str) -> bool {
    metadata.get(relation_key(relation_type)).is_some()
        || metadata.get("relation_type").and_then(Value::as_str) == Some(relation_type)
}

/// The observations list after adding `texts` (in order, without repeats).
pub fn with_added(current: &[String], texts: &[String]) -> (Vec<String>, Vec<String>) {
    let mut list = current.to_vec();
    let mut added = Vec::new();
    for t in texts {
        if !list.contains(t) {
            list.push(t.clone());
            added.push(t.clone());
        }
    }
    (list, added)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"{"type":"entity","name":"Ada","entityType":"person","observations":["writes programs","likes tea"]}
{"type":"entity","name":"Analytical Engine","entityType":"Machine Model","observations":[]}

{"type":"relation","from":"Ada","to":"Analytical Engine","relationType":"programs"}
{"type":"entity","name":"Ada","entityType":"person","observations":["likes tea","rides"]}
"#;

    #[test]
    fn reads_entities_and_relations_and_joins_repeated_names() {
        let g = parse(FILE).unwrap();
        assert_eq!(g.entities.len(), 2);
        assert_eq!(
            g.entities[0].observations,
            vec!["writes programs", "likes tea", "rides"]
        );
        assert_eq!(g.entities[1].entity_type, "Machine Model");
        assert_eq!(
            g.relations,
            vec![Relation {
                from: "Ada".into(),
                to: "Analytical Engine".into(),
                relation_type: "programs".into()
            }]
        );
    }

    #[test]
    fn names_the_bad_line() {
        let e = parse(
            "{\"type\":\"entity\",\"name\":\"A\",\"entityType\":\"x\"}\n{\"type\":\"node\"}\n",
        )
        .unwrap_err();
        assert!(e.starts_with("line 2:"), "{e}");
        assert!(parse("not json").unwrap_err().starts_with("line 1:"));
        assert!(
            parse("{\"type\":\"entity\",\"name\":\" \",\"entityType\":\"x\"}")
                .unwrap_err()
                .contains("without a name")
        );
    }

    #[test]
    fn type_names_are_valid_names() {
        for (given, expected) in [
            ("Person", "person"),
            ("AI Model", "ai_model"),
            ("  event/meeting ", "event_meeting"),
            ("3D print", "t_3d_print"),
            ("人物", "entity"),
        ] {
            assert_eq!(type_name(given), expected);
            crate::schema::check_name("entity_type", &type_name(given)).unwrap();
        }
        assert_eq!(type_name(&"x".repeat(300)).len(), 80);
    }

    #[test]
    fn relation_types_each_keep_a_key() {
        assert_eq!(relation_key("works_on"), "rel_works_on");
        let odd = relation_key("Works On");
        assert!(odd.starts_with("rel_works_on_") && odd.len() == 21, "{odd}");
        assert_ne!(relation_key("works on"), relation_key("works-on"));
        // A type spelled like another's key gets a key of its own.
        assert_ne!(relation_key(&odd[4..]), odd);
        assert_ne!(relation_key("type"), "relation_type");
        schema_name_ok(&relation_key(&"x".repeat(300)));
        schema_name_ok(&relation_key("人物"));
        let mut m = relation_metadata("works_on", true, "t1");
        m.as_object_mut().unwrap().extend(
            relation_metadata("Knows", true, "t2")
                .as_object()
                .unwrap()
                .clone(),
        );
        assert_eq!(active_relation_types(&m), vec!["Knows", "works_on"]);
        m.as_object_mut().unwrap().extend(
            relation_metadata("Knows", false, "t3")
                .as_object()
                .unwrap()
                .clone(),
        );
        assert_eq!(active_relation_types(&m), vec!["works_on"]);
        assert!(mentions_relation_type(&m, "Knows"));
        assert!(!mentions_relation_type(&m, "likes"));
        // A 0.12 import's relationship.
        let legacy = json!({"relation_type": "programs"});
        assert_eq!(active_relation_types(&legacy), vec!["programs"]);
        let mut gone = legacy.clone();
        gone.as_object_mut().unwrap().extend(
            relation_metadata("programs", false, "t")
                .as_object()
                .unwrap()
                .clone(),
        );
        assert!(active_relation_types(&gone).is_empty());
    }

    fn schema_name_ok(name: &str) {
        crate::schema::check_name("metadata", name).unwrap();
    }

    #[test]
    fn adding_keeps_order_and_skips_repeats() {
        let current = vec!["a".to_string(), "b".to_string()];
        let (list, added) = with_added(&current, &["b".into(), "c".into(), "c".into()]);
        assert_eq!(list, vec!["a", "b", "c"]);
        assert_eq!(added, vec!["c"]);
    }

    #[test]
    fn a_schema_fits_when_it_identifies_by_name() {
        let schema = |identity: Value, extra: Value, policy: &str| -> EntitySchema {
            let mut fields = json!({"name": {"type": "string"}, "email": {"type": "string"}});
            if let (Some(f), Some(x)) = (fields.as_object_mut(), extra.as_object()) {
                f.extend(x.clone());
            }
            serde_json::from_value(json!({"entity_type": "t", "schema_version": "1.0",
                "fields": fields, "identity": identity,
                "merge_policies": {"observations": {"strategy": policy}}}))
            .unwrap()
        };
        assert_eq!(fit(None), Fit::Missing);
        assert_eq!(
            fit(Some(&schema(
                json!(["email", "name"]),
                json!({}),
                "last_write"
            ))),
            Fit::Fits {
                add: vec![OBSERVATIONS, LABEL]
            }
        );
        let imported = schema(
            json!(["name"]),
            json!({"observations": {"type": "array"}}),
            "merge_array",
        );
        assert_eq!(fit(Some(&imported)), Fit::Fits { add: vec![LABEL] });
        assert!(observations_by_union(&imported));
        assert_eq!(
            fit(Some(&schema(json!(["email"]), json!({}), "last_write"))),
            Fit::Unfit
        );
        assert_eq!(
            fit(Some(&schema(
                json!(["name"]),
                json!({"observations": {"type": "string"}}),
                "last_write"
            ))),
            Fit::Unfit
        );
        let registered: crate::actions::schemas::RegisterSchemaRequest =
            serde_json::from_value(register_args("machine_model", "Machine Model")).unwrap();
        assert_eq!(registered.entity_type, "machine_model");
        let added: crate::actions::schemas::UpdateSchemaIncrementalRequest =
            serde_json::from_value(add_fields_args("person", &[LABEL])).unwrap();
        assert_eq!(added.entity_type, "person");
    }
}
