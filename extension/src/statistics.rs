//! Planner statistics that keep up with the memory's growth. Writes run
//! with generic plans, planned once per backend; a plan made while a table
//! was small (a sequential scan, or an index on `user_id` alone, which reads
//! every row of a user) would stay in use while the table grows, until the
//! next ANALYZE (autovacuum's comes up to a minute later, or never while
//! tables only grow in a burst). So after a write, every table that has
//! doubled since its statistics were taken is analysed at once: that renews
//! its statistics and, through Postgres' invalidation, every backend's plans
//! over it. Doubling keeps the cost logarithmic in the data: a table of a
//! million rows has been analysed about twenty times in its life.

use crate::db;
use neotoma_core::NeotomaError;
use std::cell::Cell;

/// A backend looks at its tables' sizes on its first write, then once it
/// has written [`ROWS`] entities or made [`WRITES`] writes since it last
/// looked: the look costs about as much as a small store.
const WRITES: u32 = 32;
const ROWS: usize = 256;

thread_local! {
    /// Writes and rows since the last look; none yet = look at once.
    static SINCE: Cell<Option<(u32, usize)>> = const { Cell::new(None) };
}

/// Notes that a write stored `rows` entities.
pub fn note_rows(rows: usize) {
    if let Some((writes, n)) = SINCE.get() {
        SINCE.set(Some((writes, n + rows)));
    }
}

/// Within a write of many entities (a file's rows, a large batch), between
/// its slices: analyses the tables that outgrew their statistics now, not
/// after the call. The plans made for its first slices, when the tables
/// were small, would otherwise serve the rest: a foreign-key check planned
/// then read every entity of the user for each key, which made a
/// 200,000-row file quadratic (35,500 rows in 13 minutes).
/// (`neotoma_private._refresh_statistics()` runs as the tables' owner.)
pub fn keep_current_within() -> Result<(), NeotomaError> {
    db::run(
        &crate::installed::adapt("SELECT neotoma_private._refresh_statistics()")?,
        &[],
    )
}

/// After a write action: analyses the tables that outgrew their statistics
/// (as [`keep_current_within`] does), when it is time to look.
pub fn keep_current() -> Result<(), NeotomaError> {
    match SINCE.get() {
        Some((writes, rows)) if writes + 1 < WRITES && rows < ROWS => {
            SINCE.set(Some((writes + 1, rows)));
            Ok(())
        }
        _ => {
            SINCE.set(Some((0, 0)));
            keep_current_within()
        }
    }
}
