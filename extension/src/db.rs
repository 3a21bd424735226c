//! The few ways the extension talks to Postgres through SPI. Queries take
//! their arguments as parameters and answer one jsonb value, which keeps the
//! Rust side free of per-column plumbing.

use neotoma_core::{ErrorCode, NeotomaError};
use pgrx::datum::DatumWithOid;
use pgrx::prelude::*;
use pgrx::JsonB;
use serde_json::Value;

fn spi_error(sql: &str, e: pgrx::spi::SpiError) -> NeotomaError {
    NeotomaError::new(ErrorCode::DbQueryFailed, format!("query failed: {e}"))
        .with("query", sql.lines().next().unwrap_or_default().trim())
}

/// Runs `sql`, which must produce one row with one jsonb column, and returns
/// that value (`Value::Null` for SQL NULL or no row).
pub fn json(sql: &str, args: &[DatumWithOid]) -> Result<Value, NeotomaError> {
    match Spi::get_one_with_args::<JsonB>(sql, args) {
        Ok(v) => Ok(v.map(|j| j.0).unwrap_or(Value::Null)),
        Err(pgrx::spi::SpiError::InvalidPosition) => Ok(Value::Null),
        Err(e) => Err(spi_error(sql, e)),
    }
}

/// Runs `sql` that produces one text value (or none).
pub fn text(sql: &str, args: &[DatumWithOid]) -> Result<Option<String>, NeotomaError> {
    match Spi::get_one_with_args::<String>(sql, args) {
        Ok(v) => Ok(v),
        Err(pgrx::spi::SpiError::InvalidPosition) => Ok(None),
        Err(e) => Err(spi_error(sql, e)),
    }
}

/// Runs a statement for its effect.
pub fn run(sql: &str, args: &[DatumWithOid]) -> Result<(), NeotomaError> {
    Spi::run_with_args(sql, args).map_err(|e| spi_error(sql, e))
}
