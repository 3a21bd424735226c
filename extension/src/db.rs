//! The few ways the extension talks to Postgres through SPI. Queries take
//! their arguments as parameters (text, text[] or jsonb; SQL casts them) and
//! answer one jsonb value, which keeps the Rust side free of per-column
//! plumbing.

use neotoma_core::{ErrorCode, NeotomaError};
use pgrx::datum::DatumWithOid;
use pgrx::prelude::*;
use pgrx::JsonB;
use serde_json::Value;

fn spi_error(sql: &str, e: pgrx::spi::SpiError) -> NeotomaError {
    NeotomaError::new(ErrorCode::DbQueryFailed, format!("query failed: {e}"))
        .with("query", sql.lines().next().unwrap_or_default().trim())
}

/// A query argument.
pub enum Arg<'a> {
    Text(&'a str),
    OptText(Option<&'a str>),
    Texts(Vec<String>),
    Json(&'a Value),
    Int(i64),
}

impl<'a> Arg<'a> {
    fn datum(&self) -> DatumWithOid<'static> {
        match self {
            Arg::Text(s) => (*s).to_string().into(),
            Arg::OptText(s) => s.map(str::to_string).into(),
            Arg::Texts(v) => v.clone().into(),
            Arg::Json(v) => JsonB((*v).clone()).into(),
            Arg::Int(i) => (*i).into(),
        }
    }
}

/// Runs `sql`, which produces one row with one jsonb column, and returns that
/// value (`Value::Null` for SQL NULL or no row).
pub fn json(sql: &str, args: &[Arg]) -> Result<Value, NeotomaError> {
    let datums: Vec<DatumWithOid> = args.iter().map(Arg::datum).collect();
    match Spi::get_one_with_args::<JsonB>(sql, &datums) {
        Ok(v) => Ok(v.map(|j| j.0).unwrap_or(Value::Null)),
        Err(pgrx::spi::SpiError::InvalidPosition) => Ok(Value::Null),
        Err(e) => Err(spi_error(sql, e)),
    }
}

/// Runs `sql` that produces one text value (or none).
pub fn text(sql: &str, args: &[Arg]) -> Result<Option<String>, NeotomaError> {
    let datums: Vec<DatumWithOid> = args.iter().map(Arg::datum).collect();
    match Spi::get_one_with_args::<String>(sql, &datums) {
        Ok(v) => Ok(v),
        Err(pgrx::spi::SpiError::InvalidPosition) => Ok(None),
        Err(e) => Err(spi_error(sql, e)),
    }
}

/// Runs a statement for its effect.
pub fn run(sql: &str, args: &[Arg]) -> Result<(), NeotomaError> {
    let datums: Vec<DatumWithOid> = args.iter().map(Arg::datum).collect();
    Spi::run_with_args(sql, &datums).map_err(|e| spi_error(sql, e))
}

/// Reads a JSON value into a type; a mismatch is an internal error.
pub fn from_json<T: serde::de::DeserializeOwned>(v: Value, what: &str) -> Result<T, NeotomaError> {
    serde_json::from_value(v)
        .map_err(|e| NeotomaError::new(ErrorCode::DbQueryFailed, format!("unreadable {what}: {e}")))
}
