//! `neotoma.action_catalog()` and `neotoma._invoke()`, the dispatcher behind
//! every per-action SQL function.

use crate::actions::{self, EXTENSION_VERSION};
use crate::db::JsonbText;
use neotoma_core::{catalog, NeotomaError};
use pgrx::prelude::*;
use pgrx::JsonB;
use serde_json::json;

/// Every action: name, description, JSON Schema of its input (and output where
/// fixed), MCP annotations, SQL function and legacy aliases.
#[pg_extern(immutable, parallel_safe)]
fn action_catalog() -> JsonB {
    JsonB(catalog::catalog_json(EXTENSION_VERSION))
}

/// Runs `action` with `args` (the JSON text of the request); answers
/// `{"ok": result}` or `{"error": {code, message, details}}`. Use
/// `neotoma.<action>(args)`, which raises the error instead.
///
/// The request arrives as text and is parsed here, so that input serde
/// cannot read (numbers out of range, nesting too deep) is a
/// VALIDATION_ERROR and not a crash in the conversion of the argument.
///
/// Its search_path is the one the SECURITY DEFINER functions (the
/// observation trigger) pin: Postgres re-plans a kept plan whenever it runs
/// under another search_path than the last time, and the same statements
/// run from both.
#[pg_extern(volatile, parallel_unsafe, name = "_invoke")]
#[search_path(pg_catalog, neotoma, pg_temp)]
pub(crate) fn invoke_text(action: &str, args: &str) -> JsonbText {
    let result = crate::db::without_jit(|| {
        neotoma_core::limits::parse_input(args).and_then(|args| match catalog::resolve(action) {
            Some(id) => actions::dispatch(id, &args),
            None => Err(
                NeotomaError::validation(format!("unknown action `{action}`"))
                    .with("action", action),
            ),
        })
    });
    JsonbText(match result {
        Ok(answer) => format!("{{\"ok\":{answer}}}"),
        Err(e) => {
            // An error may echo input; it must be storable as jsonb.
            let mut error = e.to_json();
            neotoma_core::limits::scrub_nul(&mut error);
            json!({ "error": error }).to_string()
        }
    })
}

/// The entry point of 0.1.0 (`_invoke(text, jsonb)`), kept in the library
/// so that a database still on 0.1.0 keeps working until it is updated.
#[pg_extern(volatile, parallel_unsafe, sql = false)]
fn invoke(action: &str, args: JsonB) -> JsonbText {
    invoke_text(action, &args.0.to_string())
}
