//! What the database's installed SQL has, for a library newer than it: a
//! database keeps working on the new library until `ALTER EXTENSION
//! neotoma UPDATE` (see the README), so the library only uses SQL objects
//! of a newer version once it sees them.

use crate::db;
use neotoma_core::NeotomaError;
use std::borrow::Cow;
use std::cell::Cell;

thread_local! {
    /// Seen once, a version's objects stay: an extension is never downgraded.
    static AT_LEAST_0_4: Cell<bool> = const { Cell::new(false) };
    static AT_LEAST_0_5: Cell<bool> = const { Cell::new(false) };
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

/// The minor versions whose SQL objects the library's queries mark (a line
/// ending `-- 0.6` reads a 0.6.0 object), newest first, each with a probe
/// for one of its columns. Columns, not functions: 0.1 and 0.2 make a
/// function for every action the library knows.
const MARKED: &[(u32, &str)] = &[
    // A user's common lexemes are counted (a search knows them beforehand).
    (
        18,
        "SELECT to_jsonb(to_regclass('neotoma.common_lexemes') IS NOT NULL)",
    ),
    // Embeddings fall into lists (semantic search at scale).
    (
        17,
        "SELECT to_jsonb(to_regclass('neotoma.embedding_lists') IS NOT NULL)",
    ),
    // Inspector sessions live in the database.
    (
        16,
        "SELECT to_jsonb(to_regclass('neotoma.inspector_sessions') IS NOT NULL)",
    ),
    // The gateway is an OAuth authorization server.
    (
        15,
        "SELECT to_jsonb(to_regclass('neotoma.oauth_grants') IS NOT NULL)",
    ),
    // SECURITY DEFINER functions live in neotoma_private.
    (
        14,
        "SELECT to_jsonb(to_regnamespace('neotoma_private') IS NOT NULL)",
    ),
    // The graph servers' integer ids and type mappings.
    (
        13,
        "SELECT to_jsonb(EXISTS (SELECT FROM pg_catalog.pg_attribute
                                 WHERE attrelid = to_regclass('neotoma.graph_ids')
                                   AND attname = 'key' AND NOT attisdropped))",
    ),
    // Entities, sources and what derives from them belong to workspaces.
    (
        12,
        "SELECT to_jsonb(EXISTS (SELECT FROM pg_catalog.pg_attribute
                                 WHERE attrelid = 'neotoma.entities'::regclass
                                   AND attname = 'workspace' AND NOT attisdropped))",
    ),
    // Observations have confidence ratings, and contests.
    (
        11,
        "SELECT to_jsonb(EXISTS (SELECT FROM pg_catalog.pg_attribute
                                 WHERE attrelid = 'neotoma.observations'::regclass
                                   AND attname = 'confidence' AND NOT attisdropped))",
    ),
    // Stored files are searchable.
    (
        10,
        "SELECT to_jsonb(EXISTS (SELECT FROM pg_catalog.pg_attribute
                                 WHERE attrelid = 'neotoma.files'::regclass
                                   AND attname = 'search_vector' AND NOT attisdropped))",
    ),
    // Entities have embeddings.
    (
        9,
        "SELECT to_jsonb(EXISTS (SELECT FROM pg_catalog.pg_attribute
                                 WHERE attrelid = to_regclass('neotoma.entity_embeddings')
                                   AND attname = 'embedding' AND NOT attisdropped))",
    ),
    // Snapshots are searchable.
    (
        8,
        "SELECT to_jsonb(EXISTS (SELECT FROM pg_catalog.pg_attribute
                                 WHERE attrelid = 'neotoma.entity_snapshots'::regclass
                                   AND attname = 'search_vector' AND NOT attisdropped))",
    ),
    // Relationships can be deleted.
    (
        7,
        "SELECT to_jsonb(EXISTS (SELECT FROM pg_catalog.pg_attribute
                                 WHERE attrelid = 'neotoma.relationships'::regclass
                                   AND attname = 'deleted_at' AND NOT attisdropped))",
    ),
    // Entities can be deleted.
    (
        6,
        "SELECT to_jsonb(EXISTS (SELECT FROM pg_catalog.pg_attribute
                                 WHERE attrelid = 'neotoma.entities'::regclass
                                   AND attname = 'deleted_at' AND NOT attisdropped))",
    ),
];

thread_local! {
    /// The newest marked minor version seen installed (0: none of them).
    static MINOR: Cell<u32> = const { Cell::new(0) };
    /// The transaction (its start) that last probed, while older than newest.
    static PROBED_IN: Cell<i64> = const { Cell::new(i64::MIN) };
}

/// The newest of the [`MARKED`] versions the installed SQL has (0 when it
/// is older than all of them), remembered once it is the newest.
fn minor() -> Result<u32, NeotomaError> {
    let newest = MARKED[0].0;
    if MINOR.get() == newest {
        return Ok(newest);
    }
    // Older than the library: probed again once per transaction (an
    // ALTER EXTENSION UPDATE may come between two).
    let xact = db::transaction_start_micros();
    if PROBED_IN.get() == xact {
        return Ok(MINOR.get());
    }
    PROBED_IN.set(xact);
    for (minor, probe) in MARKED {
        if *minor <= MINOR.get() {
            break;
        }
        if db::json(probe, &[])? == serde_json::Value::Bool(true) {
            MINOR.set(*minor);
            break;
        }
    }
    Ok(MINOR.get())
}

/// Whether the installed SQL is 0.`minor`.0 or newer (for a marked
/// version: 6 to 15).
pub fn at_least(minor_version: u32) -> Result<bool, NeotomaError> {
    debug_assert!(MARKED.iter().any(|(m, _)| *m == minor_version));
    Ok(minor()? >= minor_version)
}

/// Refuses `what` (an action, or part of one) until the installed SQL is
/// 0.`minor_version`.0 or newer: a clear SERVICE_UNAVAILABLE, not a missing
/// column.
pub fn require(minor_version: u32, what: &str) -> Result<(), NeotomaError> {
    if at_least(minor_version)? {
        return Ok(());
    }
    Err(NeotomaError::new(
        neotoma_core::ErrorCode::ServiceUnavailable,
        format!(
            "{what} needs the 0.{minor_version}.0 SQL of the extension: run ALTER EXTENSION neotoma UPDATE"
        ),
    ))
}

/// Whether the installed SQL is 0.6.0 or newer (entities can be deleted).
pub fn at_least_0_6() -> Result<bool, NeotomaError> {
    at_least(6)
}

/// `query` as the installed SQL can run it: without its lines marked with
/// a newer minor version than it has (`-- 0.7` on a 0.6.0 database), nor
/// those marked as older than one it has (`-- <0.10`, the way a 0.9.0
/// database is read, on a 0.10.0 one).
pub fn adapt(query: &str) -> Result<Cow<'_, str>, NeotomaError> {
    let installed = minor()?;
    if installed == MARKED[0].0 && !query.contains("-- <0.") {
        return Ok(Cow::Borrowed(query));
    }
    Ok(Cow::Owned(without_newer(query, installed)))
}

/// The lines of `query` not marked with a minor version above `installed`
/// (`-- 0.N`) nor as older than a version it has (`-- <0.N`).
fn without_newer(query: &str, installed: u32) -> String {
    without_lines(query, |l| {
        let line = l.trim_end();
        let marked = |mark: &str| {
            line.rsplit_once(mark)
                .and_then(|(_, m)| m.parse::<u32>().ok())
        };
        marked("-- 0.").is_some_and(|m| m > installed)
            || marked("-- <0.").is_some_and(|m| installed >= m)
    })
}

/// `query` without the lines `gone` picks out: how marked lines leave a
/// query (versions here, workspaces in crate::scope, a lookup's index
/// condition in actions::entities).
pub fn without_lines(query: &str, gone: impl Fn(&str) -> bool) -> String {
    query
        .lines()
        .filter(|l| !gone(l))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::without_newer;

    #[test]
    fn newer_lines_leave() {
        let q = "SELECT 1\n AND a -- 0.6\n AND b -- 0.7\n-- 0.6.0 has none\nEND";
        assert_eq!(without_newer(q, 7), q);
        assert_eq!(
            without_newer(q, 6),
            "SELECT 1\n AND a -- 0.6\n-- 0.6.0 has none\nEND"
        );
        assert_eq!(without_newer(q, 0), "SELECT 1\n-- 0.6.0 has none\nEND");
        let q = "SELECT a -- <0.10\nSELECT b -- 0.10";
        assert_eq!(without_newer(q, 9), "SELECT a -- <0.10");
        assert_eq!(without_newer(q, 10), "SELECT b -- 0.10");
    }
}
