//! The reference MCP memory server's knowledge graph (`memory.jsonl` of
//! `@modelcontextprotocol/server-memory`) read into Neotoma's terms, for
//! `neotoma-mcp import --format memory-jsonl`.
//!
//! The file holds one JSON object per line: `{"type": "entity", "name",
//! "entityType", "observations": [text…]}` or `{"type": "relation", "from",
//! "to", "relationType"}`. Here:
//! - an entity is an entity of type [`type_name`]`(entityType)`, identified
//!   by its `name`; each text observation is one observation of it, whose
//!   `observations` field (an array, merged with `merge_array`) holds that
//!   text, so the snapshot lists them all (sorted, without repeats);
//! - a relation is a `REFERS_TO` relationship (the only free-form type of
//!   the fixed set, and one that allows cycles) whose metadata keeps the
//!   original `relation_type`.

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

/// The type to use when `type_name`'s schema cannot hold these entities.
pub fn fallback_type_name(type_name: &str) -> String {
    format!("memory_{type_name}")
}

/// How a type's active schema suits memory entities.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// No such type: register one.
    Missing,
    /// Identifies entities by `name` alone; `observations` still to add
    /// when false.
    Fits { has_observations: bool },
    /// Identifies entities otherwise (or keeps observations another way):
    /// use [`fallback_type_name`].
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
    match schema.fields.get(OBSERVATIONS) {
        None => Fit::Fits {
            has_observations: false,
        },
        Some(f)
            if f.field_type == crate::schema::FieldType::Array
                && schema
                    .merge_policies
                    .get(OBSERVATIONS)
                    .is_some_and(|p| p.strategy == Strategy::MergeArray) =>
        {
            Fit::Fits {
                has_observations: true,
            }
        }
        Some(_) => Fit::Unfit,
    }
}

/// `register_schema` arguments for a new type of memory entities (for this
/// user only).
pub fn register_args(type_name: &str, original: &str) -> Value {
    json!({
        "entity_type": type_name,
        "user_specific": true,
        "schema_definition": {
            "description": format!("{original} (from the MCP memory server)"),
            "fields": {
                "name": {"type": "string", "required": true, "preserveCase": true},
                OBSERVATIONS: {"type": "array", "description": "What is known of it, one text per observation."}
            },
            "identity_fields": ["name"]
        },
        "reducer_config": {"merge_policies": {OBSERVATIONS: {"strategy": "merge_array"}}}
    })
}

/// `update_schema_incremental` arguments that add `observations` to an
/// existing type (for this user only).
pub fn add_observations_args(type_name: &str) -> Value {
    json!({
        "entity_type": type_name,
        "user_specific": true,
        "fields_to_add": [{"field_name": OBSERVATIONS, "field_type": "array", "reducer_strategy": "merge_array"}]
    })
}

/// What `store` is given for one entity: one object per text observation
/// (one observation each), or one with the name alone.
pub fn store_objects(entity: &Entity, type_name: &str) -> Vec<Value> {
    if entity.observations.is_empty() {
        return vec![json!({"entity_type": type_name, "name": entity.name})];
    }
    entity
        .observations
        .iter()
        .map(|o| json!({"entity_type": type_name, "name": entity.name, OBSERVATIONS: [o]}))
        .collect()
}

/// `create_relationship` arguments for a relation between two entity ids.
pub fn relationship_args(relation: &Relation, from_id: &str, to_id: &str) -> Value {
    json!({
        "relationship_type": RELATIONSHIP_TYPE,
        "source_entity_id": from_id,
        "target_entity_id": to_id,
        "metadata": {"relation_type": relation.relation_type}
    })
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
    fn each_text_is_one_observation() {
        let g = parse(FILE).unwrap();
        let objects = store_objects(&g.entities[0], "person");
        assert_eq!(objects.len(), 3);
        assert_eq!(objects[2]["observations"], json!(["rides"]));
        assert_eq!(
            store_objects(&g.entities[1], "machine_model"),
            vec![json!({"entity_type": "machine_model", "name": "Analytical Engine"})]
        );
        let r = relationship_args(&g.relations[0], "ent_a", "ent_b");
        assert_eq!(r["relationship_type"], "REFERS_TO");
        assert_eq!(r["metadata"]["relation_type"], "programs");
    }

    #[test]
    fn a_schema_fits_when_it_identifies_by_name() {
        let schema = |identity: Value, extra: Value| -> EntitySchema {
            let mut fields = json!({"name": {"type": "string"}, "email": {"type": "string"}});
            if let (Some(f), Some(x)) = (fields.as_object_mut(), extra.as_object()) {
                f.extend(x.clone());
            }
            serde_json::from_value(json!({"entity_type": "t", "schema_version": "1.0",
                "fields": fields, "identity": identity,
                "merge_policies": {"observations": {"strategy": "merge_array"}}}))
            .unwrap()
        };
        assert_eq!(fit(None), Fit::Missing);
        assert_eq!(
            fit(Some(&schema(json!(["email", "name"]), json!({})))),
            Fit::Fits {
                has_observations: false
            }
        );
        assert_eq!(
            fit(Some(&schema(
                json!(["name"]),
                json!({"observations": {"type": "array"}})
            ))),
            Fit::Fits {
                has_observations: true
            }
        );
        assert_eq!(fit(Some(&schema(json!(["email"]), json!({})))), Fit::Unfit);
        assert_eq!(
            fit(Some(&schema(
                json!(["name"]),
                json!({"observations": {"type": "string"}})
            ))),
            Fit::Unfit
        );
        let registered: crate::actions::schemas::RegisterSchemaRequest =
            serde_json::from_value(register_args("machine_model", "Machine Model")).unwrap();
        assert_eq!(registered.entity_type, "machine_model");
    }
}
