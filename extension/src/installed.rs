//! What the database's installed SQL has, for a library newer than it: a
//! database keeps working on the new library until `ALTER EXTENSION
//! neotoma UPDATE` (see the README), so the library only uses SQL objects
//! of a newer version once it sees them.

use crate::db;
use neotoma_core::NeotomaError;
use std::cell::Cell;

thread_local! {
    /// Seen once, 0.4.0's objects stay: an extension is never downgraded.
    static AT_LEAST_0_4: Cell<bool> = const { Cell::new(false) };
}

/// Whether the installed SQL is 0.4.0 or newer (it has
/// `neotoma.entity_counts` and `neotoma._refresh_statistics()`).
pub fn at_least_0_4() -> Result<bool, NeotomaError> {
    if AT_LEAST_0_4.get() {
        return Ok(true);
    }
    let found = db::json(
        "SELECT to_jsonb(to_regclass('neotoma.entity_counts') IS NOT NULL)",
        &[],
    )? == serde_json::Value::Bool(true);
    AT_LEAST_0_4.set(found);
    Ok(found)
}
