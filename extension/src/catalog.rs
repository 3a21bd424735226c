//! `neotoma.action_catalog()` and `neotoma._invoke()`, the dispatcher behind
//! every per-action SQL function.

use crate::actions::{self, EXTENSION_VERSION};
use crate::db::JsonbText;
use crate::routing;
use neotoma_core::{catalog, NeotomaError};
use pgrx::prelude::*;
use pgrx::JsonB;

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
    if routing::is_router() {
        return JsonbText(routing::forward(action, args));
    }
    JsonbText(crate::error::result_envelope(crate::db::without_jit(
        || run(action, args),
    )))
}

/// Runs `action` with the request text `args` here.
fn run(action: &str, args: &str) -> Result<String, NeotomaError> {
    let args = neotoma_core::limits::parse_input(args)?;
    let id = catalog::action_named(action)?;
    let limits = crate::tenancy::permit_call(id)?;
    crate::tenancy::within_limits(limits, || actions::dispatch(id, &args))
}

/// The partition's side of a router (the `neotoma_router` extension,
/// docs/scale-out.md): runs `action` for `user_id`, as an operator or not,
/// with the `neotoma.*` `settings` the router's call had. Only a member of
/// `neotoma_router` may call it (it names the user). An action that answers
/// an error leaves nothing written (its envelope is the answer, which the
/// router raises).
#[pg_extern(volatile, parallel_unsafe, name = "routed")]
#[search_path(pg_catalog, neotoma, pg_temp)]
fn routed(
    user_id: Option<pgrx::datum::Uuid>,
    as_operator: bool,
    settings: JsonB,
    action: &str,
    args: &str,
) -> JsonbText {
    let user = user_id.map(|u| uuid::Uuid::from_bytes(*u.as_bytes()));
    let result = routing::taken_on(user, as_operator, &settings.0, || {
        crate::db::all_or_nothing(|| crate::db::without_jit(|| run(action, args)))
    });
    JsonbText(crate::error::result_envelope(result))
}

/// The entry point of 0.1.0 (`_invoke(text, jsonb)`), kept in the library
/// so that a database still on 0.1.0 keeps working until it is updated.
#[pg_extern(volatile, parallel_unsafe, sql = false)]
fn invoke(action: &str, args: JsonB) -> JsonbText {
    invoke_text(action, &args.0.to_string())
}
