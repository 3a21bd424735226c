//! `neotoma.action_catalog()` and `neotoma._invoke()`, the dispatcher behind
//! every per-action SQL function.

use crate::actions;
use neotoma_core::{catalog, NeotomaError};
use pgrx::prelude::*;
use pgrx::JsonB;
use serde_json::{json, Value};

pub const EXTENSION_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Every action: name, description, JSON Schema of its input (and output where
/// fixed), MCP annotations, SQL function and legacy aliases.
#[pg_extern(immutable, parallel_safe)]
fn action_catalog() -> JsonB {
    JsonB(catalog::catalog_json(EXTENSION_VERSION))
}

/// Runs `action` with `args`; answers `{"ok": result}` or
/// `{"error": {code, message, details}}`. Use `neotoma.<action>(args)`, which
/// raises the error instead.
#[pg_extern(volatile, parallel_unsafe, name = "_invoke")]
fn invoke(action: &str, args: JsonB) -> JsonB {
    let result = match catalog::resolve(action) {
        Some(name) => actions::dispatch(name, &args.0),
        None => Err(
            NeotomaError::validation(format!("unknown action `{action}`")).with("action", action),
        ),
    };
    JsonB(match result {
        Ok(v) => json!({ "ok": v }),
        Err(e) => json!({ "error": e.to_json() }),
    })
}

/// Serialises a response; responses are plain data, so this cannot fail in
/// practice, but it is mapped to an error rather than a panic all the same.
pub fn to_value<T: serde::Serialize>(v: &T) -> Result<Value, NeotomaError> {
    serde_json::to_value(v).map_err(|e| {
        NeotomaError::new(
            neotoma_core::ErrorCode::DbQueryFailed,
            format!("response serialisation: {e}"),
        )
    })
}
