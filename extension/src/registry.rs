//! The schema registry as the extension reads it: active schemas, the user's
//! own variant first, then the global one.

use crate::db::{self, Arg};
use neotoma_core::ids::derived_uuid;
use neotoma_core::schema::{builtin_schemas, EntitySchema};
use neotoma_core::NeotomaError;
use pgrx::prelude::*;
use pgrx::JsonB;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use uuid::Uuid;

/// An active schema and whose it is.
pub struct Active {
    pub schema: EntitySchema,
    /// "global" or "user".
    pub scope: &'static str,
}

/// The active schemas of the types `$2` (of every type when null) for the
/// user `$1`, the user's own variant first.
const ACTIVE: &str = include_str!("../sql/queries/active_schemas.sql");

fn load(user: Uuid, types: Option<Vec<String>>) -> Result<BTreeMap<String, Active>, NeotomaError> {
    read(db::json(ACTIVE, &[Arg::uuid(user), Arg::OptTexts(types)])?)
}

/// The schemas `active_schemas.sql` answers, by entity type.
pub fn read(rows: Value) -> Result<BTreeMap<String, Active>, NeotomaError> {
    let mut out = BTreeMap::new();
    for row in rows.as_array().into_iter().flatten() {
        let schema: EntitySchema = db::from_json(row["definition"].clone(), "entity schema")?;
        let scope = if row["global"] == json!(true) {
            "global"
        } else {
            "user"
        };
        out.insert(schema.entity_type.clone(), Active { schema, scope });
    }
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
