//! The few ways the extension talks to Postgres through SPI. Queries take
//! their arguments as parameters, as values of their types (text, text[],
//! jsonb, bigint, boolean, bytea, uuid; timestamps as bigint microseconds) and answer one jsonb value, which keeps the Rust side free of
//! per-column plumbing.
//!
//! Every query text is prepared once per backend and its plan kept (Postgres
//! invalidates kept plans itself when the objects they use change), so a hot
//! action does not parse and plan its statements on every call. Actions run
//! with generic plans only ([`with_generic_plans`]): left to itself, Postgres
//! re-plans a statement on every call when the values it is given make a
//! custom plan look cheaper (an array of one id against the ten it assumes),
//! which was a fifth of a store's time and half an identifier lookup's.
//! Generic plans stay good as tables grow because their statistics are kept
//! current (`crate::statistics`), and every read's statement has one shape
//! per kind of call, which a generic plan serves with its indexes.

use neotoma_core::{ErrorCode, NeotomaError};
use pgrx::datum::DatumWithOid;
use pgrx::pg_sys::{BuiltinOid, PgOid};
use pgrx::prelude::*;
use pgrx::spi::{OwnedPreparedStatement, SpiError, SpiTupleTable};
use pgrx::JsonB;
use pgrx::PgMemoryContexts;
use serde_json::Value;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use uuid::Uuid;

fn spi_error(sql: &str, e: SpiError) -> NeotomaError {
    NeotomaError::new(ErrorCode::DbQueryFailed, format!("query failed: {e}")).with(
        "query",
        sql.trim().lines().next().unwrap_or_default().trim(),
    )
}

/// A query argument.
#[derive(Clone)]
pub enum Arg<'a> {
    Text(&'a str),
    OptText(Option<&'a str>),
    Texts(Vec<String>),
    OptTexts(Option<Vec<String>>),
    Json(&'a Value),
    /// JSON already serialised (large batches are written straight to text,
    /// never built as a `Value`).
    JsonText(String),
    /// Rows to write, each the JSON text of one row: a `jsonb[]`, which a
    /// statement reads with `unnest` one row at a time (a `jsonb` array read
    /// by `jsonb_to_recordset` is unpacked whole into memory many times its
    /// size first).
    JsonRows(Vec<String>),
    Int(i64),
    OptInt(Option<i64>),
    Bool(bool),
    /// bytea: a file's bytes, as they are.
    Bytes(&'a [u8]),
    Uuid(Uuid),
    /// uuid[]. Bound as uuid[], never as text[] cast in the query: a cast
    /// array (`$n::uuid[]`) is not leakproof, so under row level security
    /// `id = ANY($n::uuid[])` is no index condition and reads every row of
    /// the user (46 ms at 56,000 observations instead of 0.07 ms).
    Uuids(Vec<Uuid>),
    /// real[]: an embedding (or NULL).
    OptReals(Option<&'a [f32]>),
    /// integer[] (int4).
    Ints(&'a [i32]),
}

impl Arg<'_> {
    /// A uuid argument (from a `Uuid` or a reference to one).
    pub fn uuid(u: impl std::borrow::Borrow<Uuid>) -> Arg<'static> {
        Arg::Uuid(*u.borrow())
    }

    /// A uuid[] argument of ids given as text: an id that is not a uuid
    /// names no row, so it is left out (a cast would raise an error).
    pub fn uuid_texts(ids: &[String]) -> Arg<'static> {
        Arg::Uuids(
            ids.iter()
                .filter_map(|id| Uuid::parse_str(id).ok())
                .collect(),
        )
    }
}

/// A jsonb datum read from JSON text by Postgres' own `jsonb_in` (no copy
/// of the value on the Rust side).
struct JsonbFromText(std::ffi::CString);

impl pgrx::datum::IntoDatum for JsonbFromText {
    fn into_datum(self) -> Option<pg_sys::Datum> {
        // jsonb_in builds a tree of the whole value, many times the size of
        // the text, before it packs the jsonb: it runs in a context of its
        // own, and only the packed jsonb is copied out to the caller's.
        let caller = PgMemoryContexts::CurrentMemoryContext.value();
        let mut parsing = PgMemoryContexts::new("neotoma jsonb_in");
        // SAFETY: jsonb_in reads a NUL-terminated string (alive until it
        // returns) and answers a palloc'd jsonb in `parsing`; the copy
        // copies that varlena (it is plain, not toasted) into the caller's context before `parsing` is
        // deleted (when it drops).
        unsafe {
            parsing.switch_to(|_| {
                let parsed = pgrx::fcinfo::direct_function_call_as_datum(
                    pg_sys::jsonb_in,
                    &[Some(pg_sys::Datum::from(self.0.as_ptr()))],
                )?;
                let source = parsed.cast_mut_ptr::<pg_sys::varlena>();
                let size = pgrx::varlena::varsize_any(source);
                let copy = pg_sys::MemoryContextAlloc(caller, size);
                std::ptr::copy_nonoverlapping(source.cast::<u8>(), copy.cast::<u8>(), size);
                Some(pg_sys::Datum::from(copy))
            })
        }
    }

    fn type_oid() -> pg_sys::Oid {
        pg_sys::JSONBOID
    }
}

/// A jsonb value returned as the JSON text it is read from (by `jsonb_in`,
/// once): an action's answer goes from its serialised response to jsonb
/// without being built as a `Value` first.
pub struct JsonbText(pub String);

impl pgrx::datum::IntoDatum for JsonbText {
    fn into_datum(self) -> Option<pg_sys::Datum> {
        std::ffi::CString::new(self.0)
            .ok()
            .and_then(|c| JsonbFromText(c).into_datum())
    }

    fn type_oid() -> pg_sys::Oid {
        pg_sys::JSONBOID
    }
}

// A JsonbText is a jsonb datum, as `JsonB` is, returned as pgrx returns
// its own datums.
pgrx::impl_sql_translatable!(JsonbText, "jsonb");

// SAFETY: the datum comes from `into_datum` (jsonb_in, in the function's
// memory context), as pgrx's own `BoxRet` for `JsonB` does.
unsafe impl pgrx::callconv::BoxRet for JsonbText {
    unsafe fn box_into<'fcx>(
        self,
        fcinfo: &mut pgrx::callconv::FcInfo<'fcx>,
    ) -> pgrx::datum::Datum<'fcx> {
        match pgrx::datum::IntoDatum::into_datum(self) {
            Some(datum) => unsafe { fcinfo.return_raw_datum(datum) },
            None => fcinfo.return_null(),
        }
    }
}

/// The jsonb datum of JSON text (serde escapes NUL, so the text has none).
fn jsonb(text: String) -> DatumWithOid<'static> {
    match std::ffi::CString::new(text) {
        Ok(c) => JsonbFromText(c).into(),
        Err(_) => DatumWithOid::null_oid(pg_sys::JSONBOID),
    }
}

impl Arg<'_> {
    fn datum(&self) -> DatumWithOid<'static> {
        match self {
            Arg::Text(s) => (*s).to_string().into(),
            Arg::OptText(s) => s.map(str::to_string).into(),
            Arg::Texts(v) => v.clone().into(),
            Arg::OptTexts(v) => v.clone().into(),
            Arg::Json(v) => jsonb(v.to_string()),
            Arg::JsonText(s) => jsonb(s.clone()),
            Arg::JsonRows(rows) => rows
                .iter()
                // serde escapes NUL: a row never has one (and an empty
                // text would be refused by jsonb_in, not stored).
                .map(|r| JsonbFromText(std::ffi::CString::new(r.as_str()).unwrap_or_default()))
                .collect::<Vec<_>>()
                .into(),
            Arg::Int(i) => (*i).into(),
            Arg::OptInt(i) => (*i).into(),
            Arg::Bool(b) => (*b).into(),
            Arg::Bytes(b) => b.to_vec().into(),
            Arg::Uuid(u) => pgrx::datum::Uuid::from_bytes(*u.as_bytes()).into(),
            Arg::Uuids(v) => v
                .iter()
                .map(|u| pgrx::datum::Uuid::from_bytes(*u.as_bytes()))
                .collect::<Vec<_>>()
                .into(),
            Arg::OptReals(v) => v.map(<[f32]>::to_vec).into(),
            Arg::Ints(v) => v.to_vec().into(),
        }
    }

    fn oid(&self) -> PgOid {
        PgOid::BuiltIn(match self {
            Arg::Text(_) | Arg::OptText(_) => BuiltinOid::TEXTOID,
            Arg::Texts(_) | Arg::OptTexts(_) => BuiltinOid::TEXTARRAYOID,
            Arg::Json(_) | Arg::JsonText(_) => BuiltinOid::JSONBOID,
            Arg::JsonRows(_) => BuiltinOid::JSONBARRAYOID,
            Arg::Int(_) | Arg::OptInt(_) => BuiltinOid::INT8OID,
            Arg::Bool(_) => BuiltinOid::BOOLOID,
            Arg::Bytes(_) => BuiltinOid::BYTEAOID,
            Arg::Uuid(_) => BuiltinOid::UUIDOID,
            Arg::Uuids(_) => BuiltinOid::UUIDARRAYOID,
            Arg::OptReals(_) => BuiltinOid::FLOAT4ARRAYOID,
            Arg::Ints(_) => BuiltinOid::INT4ARRAYOID,
        })
    }
}

thread_local! {
    /// Kept plans, by query text and argument types. Shared out as `Rc` so no
    /// borrow is held while a plan runs: running one can fire the observation
    /// trigger, which runs plans of its own.
    static PLANS: RefCell<HashMap<String, Rc<OwnedPreparedStatement>>> = RefCell::new(HashMap::new());
}

/// What an action does, for how its statements are planned.
#[derive(Clone, Copy, PartialEq)]
pub enum Work {
    Reads,
    Writes,
}

/// Runs `f` with Postgres planning every statement it runs (its own, the
/// triggers' and the foreign-key checks') generically: planned once per
/// backend, never per call. Writes also go without sequential scans: a
/// write reads rows by key, and a plan made while a table was a page or two
/// must not scan it whole once it has grown. The session's own settings
/// come back afterwards, also when `f` fails.
pub fn with_generic_plans<R>(work: Work, f: impl FnOnce() -> R) -> R {
    planned(
        pg_sys::PlanCacheMode::PLAN_CACHE_MODE_FORCE_GENERIC_PLAN,
        work == Work::Writes,
        f,
    )
}

/// Runs `f` with the GUC variable `var` set to `value`; the session's own
/// value comes back afterwards, also when `f` fails (unwinds).
///
/// # Safety
/// `var` is one of Postgres's GUC variables (a backend runs one thread).
unsafe fn with_variable<V: Copy, R>(var: *mut V, value: V, f: impl FnOnce() -> R) -> R {
    struct Restore<V: Copy>(*mut V, V);
    impl<V: Copy> Drop for Restore<V> {
        fn drop(&mut self) {
            // SAFETY: the variable `with_variable` was given.
            unsafe { *self.0 = self.1 }
        }
    }
    let _restore = Restore(var, *var);
    *var = value;
    f()
}

/// Runs `f` with its statements planned without JIT compilation: an
/// action's statements read a few thousand rows at most, and compiling one
/// whose estimated cost passes `jit_above_cost` (a search's candidates
/// probed by key) took 45 ms of a 78 ms search. The session's setting comes
/// back afterwards, also when `f` fails.
pub fn without_jit<R>(f: impl FnOnce() -> R) -> R {
    // SAFETY: the GUC's own variable; the planner reads it when it plans.
    unsafe { with_variable(&raw mut pg_sys::jit_enabled, false, f) }
}

/// Runs `f` in a subtransaction, undone when `f` answers an error: an
/// action of several writes (`bulk`) is all or nothing even when called
/// through `_invoke`, which answers errors instead of raising them. A
/// Postgres ERROR inside `f` (a panic here) also rolls the subtransaction
/// back before it goes on up, as PL/pgSQL's exception blocks do: the
/// caller's transaction (and its own subtransactions) stay consistent.
pub fn all_or_nothing<T>(f: impl FnOnce() -> Result<T, NeotomaError>) -> Result<T, NeotomaError> {
    // SAFETY: a backend runs one thread; as PL/Python's subtransactions do,
    // the caller's memory context and resource owner come back when the
    // subtransaction ends.
    let (context, owner) = unsafe {
        let saved = (pg_sys::CurrentMemoryContext, pg_sys::CurrentResourceOwner);
        pg_sys::BeginInternalSubTransaction(std::ptr::null());
        pg_sys::MemoryContextSwitchTo(saved.0);
        saved
    };
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    // SAFETY: as above; the subtransaction begun above is the current one
    // (pgrx has copied and flushed a Postgres error before it unwinds).
    unsafe {
        pg_sys::MemoryContextSwitchTo(context);
        if matches!(outcome, Ok(Ok(_))) {
            pg_sys::ReleaseCurrentSubTransaction();
        } else {
            pg_sys::RollbackAndReleaseCurrentSubTransaction();
        }
        pg_sys::MemoryContextSwitchTo(context);
        pg_sys::CurrentResourceOwner = owner;
    }
    match outcome {
        Ok(result) => result,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// Runs `f` with notices kept from the client: a text-search query of stop
/// words only says so with a NOTICE, which is no news to the caller.
pub fn quietly<R>(f: impl FnOnce() -> R) -> R {
    // SAFETY: the GUC's own variable.
    unsafe {
        with_variable(
            &raw mut pg_sys::client_min_messages,
            pg_sys::WARNING as std::ffi::c_int,
            f,
        )
    }
}

/// Runs `f` with its statements planned for the values they are given, on
/// every call: for the few reads whose best plan depends on them (a page's
/// LIMIT decides between reading an index in order and sorting).
pub fn with_custom_plans<R>(f: impl FnOnce() -> R) -> R {
    planned(
        pg_sys::PlanCacheMode::PLAN_CACHE_MODE_FORCE_CUSTOM_PLAN,
        false,
        f,
    )
}

/// Runs `f` planned once per backend and without sequential scans: for a
/// search, whose statement is long (planning it took 13–16 ms of a 20 ms
/// answer) and reads by key only; without sequential scans its generic
/// plan takes the indexes a custom plan takes, at every size measured
/// (300,000 entities: 4–15 ms an answer instead of 14–35).
pub fn with_generic_index_plans<R>(f: impl FnOnce() -> R) -> R {
    planned(
        pg_sys::PlanCacheMode::PLAN_CACHE_MODE_FORCE_GENERIC_PLAN,
        true,
        f,
    )
}

/// Runs `f` planned for its values and without sequential scans: for reads
/// that probe a few hundred rows by key (the candidates of a search), where
/// a generic plan's guess makes Postgres scan whole tables to hash them.
pub fn with_custom_index_plans<R>(f: impl FnOnce() -> R) -> R {
    planned(
        pg_sys::PlanCacheMode::PLAN_CACHE_MODE_FORCE_CUSTOM_PLAN,
        true,
        f,
    )
}

fn planned<R>(mode: pg_sys::PlanCacheMode::Type, no_seqscan: bool, f: impl FnOnce() -> R) -> R {
    // SAFETY: the GUCs' own variables, read by the planner when it plans.
    unsafe {
        let seqscan = pg_sys::enable_seqscan && !no_seqscan;
        with_variable(
            &raw mut pg_sys::plan_cache_mode,
            mode as std::ffi::c_int,
            || with_variable(&raw mut pg_sys::enable_seqscan, seqscan, f),
        )
    }
}

/// No row limit, though these statements answer one row: a limit stops a
/// top-level `INSERT … RETURNING` after its first row, before its AFTER
/// STATEMENT triggers fire (the change feed's would be skipped).
const ALL_ROWS: Option<i64> = None;

/// Runs `sql` with `args` through its kept plan; `read` gets the result.
fn execute<R>(
    sql: &str,
    args: &[Arg],
    limit: Option<i64>,
    read: impl FnOnce(SpiTupleTable) -> Result<R, SpiError>,
) -> Result<R, NeotomaError> {
    let oids: Vec<PgOid> = args.iter().map(Arg::oid).collect();
    let key = format!("{oids:?}{sql}");
    // The arguments' datums (and what converting them leaves behind: jsonb_in
    // builds a tree about ten times its text) live in a context of their
    // own, deleted once the answer has been read into Rust values, instead
    // of in the caller's, which lives as long as the whole action: a store
    // of 1,000 entities held ~80 MB that way.
    let mut memory = PgMemoryContexts::new("neotoma query");
    // SAFETY: everything allocated in `memory` is used inside the closure
    // only: `read` answers Rust-owned values.
    unsafe {
        memory.switch_to(|_| {
            let datums: Vec<DatumWithOid> = args.iter().map(Arg::datum).collect();
            Spi::connect_mut(|client| {
                let kept = PLANS.with(|plans| plans.borrow().get(&key).cloned());
                let plan = match kept {
                    Some(plan) => plan,
                    None => {
                        let plan = Rc::new(client.prepare_mut(sql, &oids)?.keep());
                        PLANS.with(|plans| plans.borrow_mut().insert(key, plan.clone()));
                        plan
                    }
                };
                // `select`, not `update`: pgrx's update first asks for a
                // transaction id, which made every read a writing
                // transaction (a commit record flushed at its end, and
                // refused on a read replica). The plan is a mutating one,
                // so SPI runs it as a write all the same, and Postgres
                // assigns the id when a statement does write.
                read(client.select(plan.as_ref(), limit, &datums)?)
            })
        })
    }
    .map_err(|e| spi_error(sql, e))
}

/// Runs `sql`, which produces one row with one jsonb column, and returns that
/// value (`Value::Null` for SQL NULL or no row).
pub fn json(sql: &str, args: &[Arg]) -> Result<Value, NeotomaError> {
    execute(sql, args, ALL_ROWS, |t| {
        match t.first().get_one::<JsonB>() {
            Ok(v) => Ok(v.map(|j| j.0).unwrap_or(Value::Null)),
            Err(SpiError::InvalidPosition) => Ok(Value::Null),
            Err(e) => Err(e),
        }
    })
}

/// Runs `sql`, which produces the JSON text of one value (a `::text` of
/// jsonb, or json), and reads it straight into `T`: large answers (pages,
/// walks) are never built as a `Value`. No row or NULL reads as JSON null.
pub fn parsed<T: serde::de::DeserializeOwned>(
    sql: &str,
    args: &[Arg],
    what: &str,
) -> Result<T, NeotomaError> {
    let text = text(sql, args)?;
    serde_json::from_str(text.as_deref().unwrap_or("null"))
        .map_err(|e| NeotomaError::new(ErrorCode::DbQueryFailed, format!("unreadable {what}: {e}")))
}

/// Runs `sql` that produces one text value (or none).
pub fn text(sql: &str, args: &[Arg]) -> Result<Option<String>, NeotomaError> {
    execute(sql, args, ALL_ROWS, |t| {
        match t.first().get_one::<String>() {
            Err(SpiError::InvalidPosition) => Ok(None),
            other => other,
        }
    })
}

/// Runs `sql` that produces rows of one real[] column (embeddings,
/// centroids), in its order; a NULL reads as an empty vector.
pub fn vectors(sql: &str, args: &[Arg]) -> Result<Vec<Vec<f32>>, NeotomaError> {
    execute(sql, args, ALL_ROWS, |t| {
        t.map(|row| Ok(row.get::<Vec<f32>>(1)?.unwrap_or_default()))
            .collect()
    })
}

/// Runs `sql` and hands its rows to `read` (values borrowed from them
/// live only until `read` returns).
pub fn rows<R>(
    sql: &str,
    args: &[Arg],
    read: impl FnOnce(SpiTupleTable) -> Result<R, SpiError>,
) -> Result<R, NeotomaError> {
    execute(sql, args, ALL_ROWS, read)
}

/// Runs `sql` that produces one bytea value (or none).
pub fn bytes(sql: &str, args: &[Arg]) -> Result<Option<Vec<u8>>, NeotomaError> {
    execute(sql, args, ALL_ROWS, |t| {
        match t.first().get_one::<Vec<u8>>() {
            Err(SpiError::InvalidPosition) => Ok(None),
            other => other,
        }
    })
}

/// Runs an `INSERT … ON CONFLICT DO NOTHING` (without `RETURNING`):
/// whether it inserted anything, false when the row was there already (or
/// a concurrent transaction inserted it first and committed).
pub fn inserted(insert: &str, args: &[Arg]) -> Result<bool, NeotomaError> {
    Ok(affected(insert, args)? > 0)
}

/// Runs an INSERT, UPDATE or DELETE (without its own RETURNING or WITH);
/// answers how many rows it wrote or removed.
pub fn affected(statement: &str, args: &[Arg]) -> Result<i64, NeotomaError> {
    let v = json(
        &format!("WITH d AS ({statement} RETURNING 1) SELECT to_jsonb(count(*)) FROM d"),
        args,
    )?;
    Ok(v.as_i64().unwrap_or(0))
}

/// Runs a statement for its effect.
pub fn run(sql: &str, args: &[Arg]) -> Result<(), NeotomaError> {
    execute(sql, args, None, |_| Ok(()))
}

/// The transaction's start (`now()`), in microseconds since the epoch.
pub fn transaction_start_micros() -> i64 {
    // Postgres counts from 2000-01-01; the epoch is 946,684,800 s before.
    // SAFETY: reads the current transaction's start time.
    unsafe { pg_sys::GetCurrentTransactionStartTimestamp() + 946_684_800_000_000 }
}

/// Reads a JSON value into a type; a mismatch is an internal error.
pub fn from_json<T: serde::de::DeserializeOwned>(v: Value, what: &str) -> Result<T, NeotomaError> {
    serde_json::from_value(v)
        .map_err(|e| NeotomaError::new(ErrorCode::DbQueryFailed, format!("unreadable {what}: {e}")))
}
