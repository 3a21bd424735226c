//! What the database's installed SQL has, for a library newer than it: a
//! database keeps working on the new library until `ALTER EXTENSION
//! neotoma UPDATE` (see the README), so the library only uses SQL objects
//! of a newer version once it sees them.

use crate::db;
use neotoma_core::NeotomaError;
use std::cell::Cell;

thread_local! {
    /// Seen once, a version's objects stay: an extension is never downgraded.
    static AT_LEAST_0_4: Cell<bool> = const { Cell::new(false) };
    static AT_LEAST_0_5: Cell<bool> = const { Cell::new(false) };
    static AT_LEAST_0_6: Cell<bool> = const { Cell::new(false) };
}

/// Whether `probe` (a query answering a jsonb boolean) finds the objects
/// of a version, remembered once it does.
fn seen(
    cell: &'static std::thread::LocalKey<Cell<bool>>,
    probe: &str,
) -> Result<bool, NeotomaError> {
    if cell.get() {
        return Ok(true);
    }
    let found = db::json(probe, &[])? == serde_json::Value::Bool(true);
    cell.set(found);
    Ok(found)
}

/// Whether the installed SQL is 0.4.0 or newer (it has
/// `neotoma.entity_counts` and `neotoma._refresh_statistics()`).
pub fn at_least_0_4() -> Result<bool, NeotomaError> {
    seen(
        &AT_LEAST_0_4,
        "SELECT to_jsonb(to_regclass('neotoma.entity_counts') IS NOT NULL)",
    )
}

/// Whether the installed SQL is 0.5.0 or newer (its observation trigger
/// leaves a store's own observations to the store: `_store_folding()`).
pub fn at_least_0_5() -> Result<bool, NeotomaError> {
    seen(
        &AT_LEAST_0_5,
        "SELECT to_jsonb(to_regprocedure('neotoma._store_folding()') IS NOT NULL)",
    )
}

/// Whether the installed SQL is 0.6.0 or newer (entities can be deleted:
/// `entities.deleted_at`). A column, not a function: 0.1 and 0.2 make a
/// function for every action the library knows.
pub fn at_least_0_6() -> Result<bool, NeotomaError> {
    seen(
        &AT_LEAST_0_6,
        "SELECT to_jsonb(EXISTS (SELECT FROM pg_catalog.pg_attribute
                                 WHERE attrelid = 'neotoma.entities'::regclass
                                   AND attname = 'deleted_at' AND NOT attisdropped))",
    )
}

/// A query without its lines marked `-- 0.6` (those about deleted
/// entities), for a database before 0.6.0, which has none.
pub fn before_0_6(query: &str) -> String {
    query
        .lines()
        .filter(|l| !l.trim_end().ends_with("-- 0.6"))
        .collect::<Vec<_>>()
        .join("\n")
}
