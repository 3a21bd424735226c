//! The schema registry as the extension reads it: active schemas, the user's
//! own variant first, then the global one.

use crate::db::{self, Arg};
use neotoma_core::ids::derived_uuid;
use neotoma_core::schema::{builtin_schemas, EntitySchema};
use neotoma_core::NeotomaError;
use pgrx::prelude::*;
use pgrx::JsonB;
use serde::Deserialize;
use serde_json::{json, Value};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use uuid::Uuid;

/// An active schema and whose it is.
#[derive(Clone)]
pub struct Active {
    pub schema: Rc<EntitySchema>,
    /// "global" or "user".
    pub scope: &'static str,
}

/// The active schemas of the types `$2` (of every type when null) for the
/// user `$1`, the user's own variant first: their names, not definitions.
const ACTIVE: &str = include_str!("../../sql/queries/active_schemas.sql");

/// A schema row as `active_schemas.sql` names it.
#[derive(Deserialize)]
struct Named {
    user_id: Uuid,
    id: Uuid,
    /// The row's xmin: a new row version is a new key.
    version: String,
    global: bool,
}

thread_local! {
    /// Definitions parsed by this backend, by (id, row version): a schema
    /// row's definition never changes under one key, so what the cache
    /// holds is what the row says. Row level security decides which rows a
    /// query names; the cache only saves parsing them.
    static PARSED: RefCell<HashMap<(Uuid, String), Rc<EntitySchema>>> = RefCell::new(HashMap::new());
}

fn load(user: Uuid, types: Option<Vec<String>>) -> Result<BTreeMap<String, Active>, NeotomaError> {
    read(db::json(ACTIVE, &[Arg::uuid(user), Arg::OptTexts(types)])?)
}

/// The schemas `active_schemas.sql` names, by entity type: definitions this
/// backend has not parsed yet are read (in one query) and kept.
pub fn read(rows: Value) -> Result<BTreeMap<String, Active>, NeotomaError> {
    let named: Vec<Named> = db::from_json(rows, "active schemas")?;
    let missing: Vec<&Named> = PARSED.with(|p| {
        let parsed = p.borrow();
        named
            .iter()
            .filter(|n| !parsed.contains_key(&(n.id, n.version.clone())))
            .collect()
    });
    if !missing.is_empty() {
        let mut definitions: BTreeMap<String, Value> = db::from_json(
            db::json(
                "SELECT coalesce(jsonb_object_agg(id || '/' || xmin::text, definition), '{}')
                 FROM neotoma.entity_schemas
                 WHERE (user_id, id) IN (SELECT * FROM unnest($1::uuid[], $2::uuid[]))",
                &[
                    Arg::Uuids(missing.iter().map(|n| n.user_id).collect()),
                    Arg::Uuids(missing.iter().map(|n| n.id).collect()),
                ],
            )?,
            "entity schemas",
        )?;
        for n in &missing {
            let key = format!("{}/{}", n.id, n.version);
            let Some(definition) = definitions.remove(&key) else {
                continue;
            };
            let schema: EntitySchema = db::from_json(definition, "entity schema")?;
            PARSED.with(|p| {
                p.borrow_mut()
                    .insert((n.id, n.version.clone()), Rc::new(schema))
            });
        }
    }
    let mut out = BTreeMap::new();
    PARSED.with(|p| {
        let parsed = p.borrow();
        for n in &named {
            if let Some(schema) = parsed.get(&(n.id, n.version.clone())) {
                let scope = if n.global { "global" } else { "user" };
                out.insert(
                    schema.entity_type.clone(),
                    Active {
                        schema: schema.clone(),
                        scope,
                    },
                );
            }
        }
    });
    Ok(out)
}

/// The active schemas of these entity types (types without one are absent).
pub fn active(user: Uuid, types: &[String]) -> Result<BTreeMap<String, Active>, NeotomaError> {
    load(user, Some(types.to_vec()))
}

/// Every active schema the user can use, by entity type.
pub fn all_active(user: Uuid) -> Result<BTreeMap<String, Active>, NeotomaError> {
    load(user, None)
}

/// Id of a schema version: (scope user, type, version).
pub fn schema_id(scope_user: &Uuid, entity_type: &str, version: &str) -> Uuid {
    derived_uuid("schema", &[&scope_user.to_string(), entity_type, version])
}

/// What is wrong with a row of `neotoma.entity_schemas` as an import gives
/// it (`{entity_type, schema_version, definition, …}`), or NULL when it
/// is a schema `register_schema` would have accepted.
#[pg_extern(immutable, parallel_safe, name = "_schema_row_problem")]
fn schema_row_problem(row: JsonB) -> Option<String> {
    let text = |k: &str| row.0.get(k).and_then(Value::as_str).unwrap_or_default();
    let definition = row.0.get("definition").cloned().unwrap_or(Value::Null);
    neotoma_core::schema::check_stored(text("entity_type"), text("schema_version"), &definition)
        .err()
        .map(|e| e.message)
}

/// The seeded schemas, as rows for `neotoma.entity_schemas` (used once, by
/// CREATE EXTENSION).
#[pg_extern(immutable, parallel_safe, name = "_builtin_schemas")]
pub(crate) fn builtin_schema_rows() -> JsonB {
    let rows: Vec<Value> = builtin_schemas()
        .into_iter()
        .map(|s| {
            json!({
                "id": schema_id(&Uuid::nil(), &s.entity_type, &s.schema_version).to_string(),
                "entity_type": s.entity_type,
                "schema_version": s.schema_version,
                "description": s.description,
                "definition": s,
            })
        })
        .collect();
    JsonB(Value::Array(rows))
}
