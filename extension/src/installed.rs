//! Which SQL of the extension the database has. A library serves a
//! database at its own version and at the release before it, so that a
//! rolling update works: the new library is installed first, then each
//! database runs `ALTER EXTENSION neotoma UPDATE`. Actions on a database at
//! any other version are refused with SERVICE_UNAVAILABLE naming the
//! command to run (docs/upgrades.md).

use crate::db;
use neotoma_core::valid_time::Interval;
use neotoma_core::{ErrorCode, NeotomaError};
use std::borrow::Cow;
use std::cell::Cell;

/// The library's own version: the SQL it was built with.
pub const CURRENT: &str = env!("CARGO_PKG_VERSION");

/// The release before [`CURRENT`], whose SQL the library also serves
/// (`sql/upgrades/neotoma--PREVIOUS--CURRENT.sql` updates it;
/// scripts/check-released-sql checks both).
pub const PREVIOUS: &str = "0.23.0";

/// The SQL a served database has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sql {
    Current,
    Previous,
}

thread_local! {
    /// Seen once, the current version stays: an extension is never
    /// downgraded.
    static CURRENT_SEEN: Cell<bool> = const { Cell::new(false) };
    /// The transaction (its start) that last found the previous version.
    static PREVIOUS_IN: Cell<i64> = const { Cell::new(i64::MIN) };
}

/// The SQL the database has, or SERVICE_UNAVAILABLE when this library does
/// not serve it. Read once per transaction until it is the current version
/// (an `ALTER EXTENSION neotoma UPDATE` may come between two).
pub fn sql() -> Result<Sql, NeotomaError> {
    if CURRENT_SEEN.get() {
        return Ok(Sql::Current);
    }
    let xact = db::transaction_start_micros();
    if PREVIOUS_IN.get() == xact {
        return Ok(Sql::Previous);
    }
    let installed = db::json(
        "SELECT to_jsonb(extversion) FROM pg_catalog.pg_extension WHERE extname = 'neotoma'",
        &[],
    )?;
    match installed.as_str() {
        Some(CURRENT) => {
            CURRENT_SEEN.set(true);
            Ok(Sql::Current)
        }
        Some(PREVIOUS) => {
            PREVIOUS_IN.set(xact);
            Ok(Sql::Previous)
        }
        other => Err(unserved(other.unwrap_or("no"))),
    }
}

/// Why a database at `installed` is not served.
fn unserved(installed: &str) -> NeotomaError {
    NeotomaError::new(
        ErrorCode::ServiceUnavailable,
        format!(
            "the database has the {installed} SQL of the neotoma extension; this library \
             ({CURRENT}) serves {CURRENT} and {PREVIOUS}: run ALTER EXTENSION neotoma UPDATE \
             (from a version older than {PREVIOUS}, the update runs every upgrade script on \
             the way)"
        ),
    )
}

/// Whether the database has this library's own SQL (not the previous
/// release's, nor an older one that an upgrade script passes through).
pub fn is_current() -> bool {
    matches!(sql(), Ok(Sql::Current))
}

/// A request's valid time (`valid_from`, `valid_to`), refused with
/// SERVICE_UNAVAILABLE when it holds over an interval and the database's
/// SQL is the previous release's, which has no columns to keep it.
pub fn served_interval(
    valid_from: &Option<String>,
    valid_to: &Option<String>,
) -> Result<Interval, NeotomaError> {
    let valid = neotoma_core::actions::common::valid_interval(valid_from, valid_to)?;
    if valid != Interval::ALWAYS && !is_current() {
        return Err(NeotomaError::new(
            ErrorCode::ServiceUnavailable,
            "valid_from/valid_to need the extension's current SQL: run ALTER EXTENSION neotoma UPDATE",
        ));
    }
    Ok(valid)
}

/// `query` as the installed SQL can run it: on a database at the previous
/// version, without its lines ending `-- new` (they read objects only the
/// current version's SQL has). Actions refuse an unserved version before
/// they get here ([`sql`]); the library's functions that upgrade scripts
/// call on the way through older versions (0.22.0's runs `verify`) run the
/// query without those lines too.
pub fn adapt(query: &str) -> Result<Cow<'_, str>, NeotomaError> {
    if query.contains("-- new") && !is_current() {
        return Ok(Cow::Owned(without_lines(query, |l| {
            l.trim_end().ends_with("-- new")
        })));
    }
    Ok(Cow::Borrowed(query))
}

/// `query` without the lines `gone` picks out: how marked lines leave a
/// query (new objects here, workspaces in crate::scope, a lookup's index
/// condition in actions::entities).
pub fn without_lines(query: &str, gone: impl Fn(&str) -> bool) -> String {
    query
        .lines()
        .filter(|l| !gone(l))
        .collect::<Vec<_>>()
        .join("\n")
}
