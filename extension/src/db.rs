//! The few ways the extension talks to Postgres through SPI. Queries take
//! their arguments as parameters, as values of their types (text, text[],
//! jsonb, bigint, bytea, uuid; timestamps as bigint microseconds) and answer one jsonb value, which keeps the Rust side free of
//! per-column plumbing.
//!
//! Every query text is prepared once per backend and its plan kept (Postgres
//! invalidates kept plans itself when the objects they use change), so a hot
//! action does not parse and plan its statements on every call.

use neotoma_core::{ErrorCode, NeotomaError};
use pgrx::datum::DatumWithOid;
use pgrx::pg_sys::{BuiltinOid, PgOid};
use pgrx::prelude::*;
use pgrx::spi::{OwnedPreparedStatement, SpiError, SpiTupleTable};
use pgrx::JsonB;
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
pub enum Arg<'a> {
    Text(&'a str),
    OptText(Option<&'a str>),
    Texts(Vec<String>),
    OptTexts(Option<Vec<String>>),
    Json(&'a Value),
    OptJson(Option<&'a Value>),
    /// JSON already serialised (large batches are written straight to text,
    /// never built as a `Value`).
    JsonText(String),
    Int(i64),
    OptInt(Option<i64>),
    /// bytea: a file's bytes, as they are.
    Bytes(&'a [u8]),
    Uuid(Uuid),
}

impl Arg<'_> {
    /// A uuid argument (from a `Uuid` or a reference to one).
    pub fn uuid(u: impl std::borrow::Borrow<Uuid>) -> Arg<'static> {
        Arg::Uuid(*u.borrow())
    }
}

/// A jsonb datum read from JSON text by Postgres' own `jsonb_in` (no copy
/// of the value on the Rust side).
struct JsonbFromText(std::ffi::CString);

impl pgrx::datum::IntoDatum for JsonbFromText {
    fn into_datum(self) -> Option<pg_sys::Datum> {
        // SAFETY: jsonb_in reads a NUL-terminated string and answers a
        // palloc'd jsonb in the current memory context; the string lives
        // until it returns.
        unsafe {
            pgrx::fcinfo::direct_function_call_as_datum(
                pg_sys::jsonb_in,
                &[Some(pg_sys::Datum::from(self.0.as_ptr()))],
            )
        }
    }

    fn type_oid() -> pg_sys::Oid {
        pg_sys::JSONBOID
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
            Arg::OptJson(Some(v)) => jsonb(v.to_string()),
            Arg::OptJson(None) => DatumWithOid::null_oid(pg_sys::JSONBOID),
            Arg::JsonText(s) => jsonb(s.clone()),
            Arg::Int(i) => (*i).into(),
            Arg::OptInt(i) => (*i).into(),
            Arg::Bytes(b) => b.to_vec().into(),
            Arg::Uuid(u) => pgrx::datum::Uuid::from_bytes(*u.as_bytes()).into(),
        }
    }

    fn oid(&self) -> PgOid {
        PgOid::BuiltIn(match self {
            Arg::Text(_) | Arg::OptText(_) => BuiltinOid::TEXTOID,
            Arg::Texts(_) | Arg::OptTexts(_) => BuiltinOid::TEXTARRAYOID,
            Arg::Json(_) | Arg::OptJson(_) | Arg::JsonText(_) => BuiltinOid::JSONBOID,
            Arg::Int(_) | Arg::OptInt(_) => BuiltinOid::INT8OID,
            Arg::Bytes(_) => BuiltinOid::BYTEAOID,
            Arg::Uuid(_) => BuiltinOid::UUIDOID,
        })
    }
}

thread_local! {
    /// Kept plans, by query text and argument types. Shared out as `Rc` so no
    /// borrow is held while a plan runs: running one can fire the observation
    /// trigger, which runs plans of its own.
    static PLANS: RefCell<HashMap<String, Rc<OwnedPreparedStatement>>> = RefCell::new(HashMap::new());
}

/// Runs `sql` with `args` through its kept plan; `read` gets the result.
fn execute<R>(
    sql: &str,
    args: &[Arg],
    limit: Option<i64>,
    read: impl FnOnce(SpiTupleTable) -> Result<R, SpiError>,
) -> Result<R, NeotomaError> {
    let oids: Vec<PgOid> = args.iter().map(Arg::oid).collect();
    let key = format!("{oids:?}{sql}");
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
        read(client.update(plan.as_ref(), limit, &datums)?)
    })
    .map_err(|e| spi_error(sql, e))
}

/// Runs `sql`, which produces one row with one jsonb column, and returns that
/// value (`Value::Null` for SQL NULL or no row).
pub fn json(sql: &str, args: &[Arg]) -> Result<Value, NeotomaError> {
    execute(sql, args, Some(1), |t| match t.first().get_one::<JsonB>() {
        Ok(v) => Ok(v.map(|j| j.0).unwrap_or(Value::Null)),
        Err(SpiError::InvalidPosition) => Ok(Value::Null),
        Err(e) => Err(e),
    })
}

/// Runs `sql` that produces one text value (or none).
pub fn text(sql: &str, args: &[Arg]) -> Result<Option<String>, NeotomaError> {
    execute(sql, args, Some(1), |t| {
        match t.first().get_one::<String>() {
            Err(SpiError::InvalidPosition) => Ok(None),
            other => other,
        }
    })
}

/// Runs `sql` that produces one bytea value (or none).
pub fn bytes(sql: &str, args: &[Arg]) -> Result<Option<Vec<u8>>, NeotomaError> {
    execute(sql, args, Some(1), |t| {
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
    let v = json(
        &format!("WITH ins AS ({insert} RETURNING 1) SELECT to_jsonb(count(*) > 0) FROM ins"),
        args,
    )?;
    Ok(v == Value::Bool(true))
}

/// Runs a statement for its effect.
pub fn run(sql: &str, args: &[Arg]) -> Result<(), NeotomaError> {
    execute(sql, args, None, |_| Ok(()))
}

/// Reads a JSON value into a type; a mismatch is an internal error.
pub fn from_json<T: serde::de::DeserializeOwned>(v: Value, what: &str) -> Result<T, NeotomaError> {
    serde_json::from_value(v)
        .map_err(|e| NeotomaError::new(ErrorCode::DbQueryFailed, format!("unreadable {what}: {e}")))
}
