//! Stage 4: entities as schema fields and unknown fields, with their
//! identities resolved.

use crate::registry;
use neotoma_core::identity;
use neotoma_core::interpret::coerce;
use neotoma_core::limits::{truncate_bytes, MAX_IDENTIFIER_BYTES, MAX_KEY_BYTES};
use neotoma_core::request::json_type;
use neotoma_core::schema::{check_name, FieldType};
use neotoma_core::NeotomaError;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use uuid::Uuid;

/// One entity, split and resolved.
pub struct Prepared {
    pub entity_type: String,
    pub schema_version: String,
    pub identity: identity::Identity,
    pub fields: Map<String, Value>,
    pub unknown: Vec<(String, Value)>,
    pub specificity: f64,
}

/// Entities ready to store, how many were left out (lenient mode only), and
/// the schemas they were prepared with (which their snapshots are folded
/// with: the types' locks are held, so they stay the active ones).
pub struct PreparedBatch {
    pub entities: Vec<Prepared>,
    pub skipped: u64,
    pub schemas: BTreeMap<String, registry::Active>,
}

impl PreparedBatch {
    /// The unknown fields of the batch, by entity type.
    pub fn unknown_keys_by_type(&self) -> BTreeMap<String, BTreeSet<String>> {
        let mut keys: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for p in &self.entities {
            keys.entry(p.entity_type.clone())
                .or_default()
                .extend(p.unknown.iter().map(|(k, _)| k.clone()));
        }
        keys
    }
}

fn entity_type_of(i: usize, obj: &Map<String, Value>) -> Result<String, NeotomaError> {
    let at = format!("entities[{i}].entity_type");
    match obj.get("entity_type") {
        Some(Value::String(t)) => {
            let t = t.trim().to_string();
            check_name(&at, &t)?;
            Ok(t)
        }
        Some(other) => Err(NeotomaError::invalid_field(
            &at,
            format!(
                "entities[{i}].entity_type must be a string, got {}",
                json_type(other)
            ),
        )),
        None => Err(NeotomaError::invalid_field(
            &at,
            format!("entities[{i}] has no entity_type; call list_entity_types to choose one"),
        )),
    }
}

/// Splits each entity into schema fields and unknown fields and resolves its
/// identity. Strict (agents' structured input): any problem is a
/// VALIDATION_ERROR naming the field. Lenient (what an interpreter read from
/// a file): values are coerced to the field's type where they can be
/// (numbers and booleans from text), else kept as raw_fragments; entities
/// without a known type are skipped and counted.
pub fn prepare(
    user: Uuid,
    entities: &[Value],
    lenient: bool,
) -> Result<PreparedBatch, NeotomaError> {
    // Identities are resolved within the workspace written to.
    let workspace = crate::scope::current().write_workspace();
    let mut objects = Vec::with_capacity(entities.len());
    let mut skipped = 0;
    for (i, e) in entities.iter().enumerate() {
        let Value::Object(obj) = e else {
            if lenient {
                skipped += 1;
                continue;
            }
            return Err(NeotomaError::invalid_field(
                &format!("entities[{i}]"),
                format!("entities[{i}] must be an object, got {}", json_type(e)),
            ));
        };
        match entity_type_of(i, obj) {
            Ok(t) => objects.push((i, t, obj)),
            Err(_) if lenient => skipped += 1,
            Err(e) => return Err(e),
        }
    }
    let mut types: Vec<String> = objects.iter().map(|(_, t, _)| t.clone()).collect();
    types.sort();
    types.dedup();
    // The user's merge lock and the types' schema locks, shared, before the
    // schemas are read: no schema change or merge lands between this read
    // and the fold of what is stored (see `crate::snapshots`).
    crate::snapshots::lock_user_and_types(&user.to_string(), &types.iter().cloned().collect())?;
    let schemas = registry::active(user, &types)?;
    let mut out = Vec::with_capacity(objects.len());
    for (i, entity_type, obj) in objects {
        let Some(active) = schemas.get(&entity_type) else {
            if lenient {
                skipped += 1;
                continue;
            }
            return Err(NeotomaError::validation(format!(
                "unknown entity_type `{entity_type}`: call list_entity_types to find the right \
                 type, or register_schema to define a new one"
            ))
            .with("field", format!("entities[{i}].entity_type"))
            .with("entity_type", entity_type));
        };
        let schema = &active.schema;
        let mut fields = Map::new();
        let mut unknown = Vec::new();
        for (k, v) in obj {
            if k == "entity_type" {
                continue;
            }
            // Keys longer than an index row allows: refused from agents
            // (check_input), shortened from what an interpreter read.
            let k = &truncate_bytes(k, MAX_KEY_BYTES).to_string();
            match schema.fields.get(k) {
                Some(def) if def.field_type.accepts(v) => {
                    fields.insert(k.clone(), v.clone());
                }
                Some(def) if lenient => match coerce(def.field_type, v) {
                    Some(c) => {
                        fields.insert(k.clone(), c);
                    }
                    None => unknown.push((k.clone(), v.clone())),
                },
                Some(def) => {
                    let date = if def.field_type == FieldType::Date {
                        " that is not an ISO 8601 date"
                    } else {
                        ""
                    };
                    return Err(NeotomaError::validation(format!(
                        "entities[{i}].{k} must be a {} (or null), got {}{date}",
                        def.field_type.as_str(),
                        json_type(v),
                    ))
                    .with("field", format!("entities[{i}].{k}"))
                    .with("expected", def.field_type.as_str())
                    .with("got", json_type(v)));
                }
                None => unknown.push((k.clone(), v.clone())),
            }
        }
        if !lenient {
            check_identity_lengths(i, schema, &fields)?;
        }
        out.push(Prepared {
            identity: identity::resolve_in(&user, &workspace, schema, &fields),
            specificity: schema.specificity(&fields),
            schema_version: schema.schema_version.clone(),
            entity_type,
            fields,
            unknown,
        });
    }
    Ok(PreparedBatch {
        entities: out,
        skipped,
        schemas,
    })
}

/// Refuses identity values longer than a lookup may be: they could never be
/// found by identifier.
pub(crate) fn check_identity_lengths(
    i: usize,
    schema: &neotoma_core::schema::EntitySchema,
    fields: &Map<String, Value>,
) -> Result<(), NeotomaError> {
    for rule in &schema.identity {
        for f in rule.fields() {
            let Some(Value::String(v)) = fields.get(f) else {
                continue;
            };
            if v.len() > MAX_IDENTIFIER_BYTES {
                return Err(NeotomaError::invalid_field(
                    &format!("entities[{i}].{f}"),
                    format!(
                        "{f} identifies the entity and is at most {MAX_IDENTIFIER_BYTES} bytes; this one is {}",
                        v.len()
                    ),
                )
                .with("max_bytes", MAX_IDENTIFIER_BYTES));
            }
        }
    }
    Ok(())
}
