//! Action handlers, one module per concern. Each takes the request JSON and
//! returns the response JSON or a `NeotomaError`.

use neotoma_core::NeotomaError;
use serde_json::Value;

mod system;

/// Runs the action `name` (a canonical catalog name).
pub fn dispatch(name: &str, args: &Value) -> Result<Value, NeotomaError> {
    match name {
        "get_version" => system::get_version(args),
        "get_current_time" => system::get_current_time(args),
        other => Err(NeotomaError::new(
            neotoma_core::ErrorCode::ServiceUnavailable,
            format!("action `{other}` is in the catalog but this build has no handler for it"),
        )),
    }
}
