//! Raising an action error from code that cannot answer `{"error": …}`
//! (triggers, functions called by SQL).

use neotoma_core::NeotomaError;

/// Raises `e` as an action error (SQLSTATE NT001 with the envelope).
pub fn raise(e: &NeotomaError) -> ! {
    let _ = crate::db::run(
        "SELECT neotoma._raise($1)",
        &[crate::db::Arg::Json(&e.to_json())],
    );
    pgrx::error!("{e}")
}

/// The answer of `_invoke`: `{"ok": answer}` (the answer's JSON text) or
/// `{"error": envelope}`.
pub fn result_envelope(result: Result<String, NeotomaError>) -> String {
    match result {
        Ok(answer) => format!("{{\"ok\":{answer}}}"),
        Err(e) => envelope(&e),
    }
}

/// The answer `_invoke` gives for `e`: `{"error": {code, message, details}}`.
pub fn envelope(e: &NeotomaError) -> String {
    // An error may echo input; it must be storable as jsonb.
    let mut error = e.to_json();
    neotoma_core::limits::scrub_nul(&mut error);
    serde_json::json!({ "error": error }).to_string()
}
