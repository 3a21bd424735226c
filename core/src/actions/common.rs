//! Pieces several requests share: pagination and id checks.

use crate::error::{NeotomaError, Result};
use crate::ids;
use uuid::Uuid;

pub const DEFAULT_LIMIT: i64 = 100;
pub const MAX_LIMIT: i64 = 1000;

/// Validated `limit`/`offset`.
pub fn page(limit: Option<i64>, offset: Option<i64>) -> Result<(i64, i64)> {
    page_of(limit, offset, DEFAULT_LIMIT, MAX_LIMIT)
}

/// Validated `limit` (1 to `max`, `default` when absent) and `offset`.
pub fn page_of(
    limit: Option<i64>,
    offset: Option<i64>,
    default: i64,
    max: i64,
) -> Result<(i64, i64)> {
    let limit = limit.unwrap_or(default);
    if !(1..=max).contains(&limit) {
        return Err(NeotomaError::invalid_field(
            "limit",
            format!("limit must be between 1 and {max}"),
        )
        .with("got", limit));
    }
    let offset = offset.unwrap_or(0);
    if offset < 0 {
        return Err(
            NeotomaError::invalid_field("offset", "offset must not be negative")
                .with("got", offset),
        );
    }
    Ok((limit, offset))
}

/// An entity id argument: `ent_` followed by 32 hex digits.
pub fn entity_id(field: &str, value: &str) -> Result<String> {
    if ids::is_entity_id(value) {
        Ok(value.to_string())
    } else {
        Err(NeotomaError::invalid_field(
            field,
            format!("`{field}` is not an entity id (ent_ followed by 32 hex digits)"),
        ))
    }
}

/// A text argument, trimmed: 1 to `max` characters (VALIDATION_ERROR
/// otherwise).
pub fn text<'a>(field: &str, value: &'a str, max: usize) -> Result<&'a str> {
    let text = value.trim();
    if text.is_empty() || text.chars().count() > max {
        return Err(NeotomaError::invalid_field(
            field,
            format!("{field} must be 1 to {max} characters of text"),
        ));
    }
    Ok(text)
}

/// A UUID argument.
pub fn uuid(field: &str, value: &str) -> Result<Uuid> {
    Uuid::parse_str(value)
        .map_err(|_| NeotomaError::invalid_field(field, format!("`{field}` must be a UUID")))
}

/// A timestamp argument (ISO 8601, years 0001–9999), in the one form
/// Neotoma writes (UTC, microseconds), which Postgres always accepts.
/// A timestamp argument as microseconds since the epoch (what crosses into
/// SQL, so that no session time zone can reinterpret it).
pub fn micros(field: &str, value: &str) -> Result<i64> {
    crate::time::parse_date_or_datetime(value).ok_or_else(|| bad_timestamp(field))
}

/// An optional instant ([`micros`]) when given.
pub fn optional_micros(field: &str, value: &Option<String>) -> Result<Option<i64>> {
    value.as_deref().map(|v| micros(field, v)).transpose()
}

/// A request's valid time (`valid_from`, `valid_to`, ISO 8601): parsed,
/// and refused when it holds no instant.
pub fn valid_interval(
    valid_from: &Option<String>,
    valid_to: &Option<String>,
) -> Result<crate::valid_time::Interval> {
    crate::valid_time::Interval::new(
        optional_micros("valid_from", valid_from)?,
        optional_micros("valid_to", valid_to)?,
    )
}

fn bad_timestamp(field: &str) -> NeotomaError {
    NeotomaError::invalid_field(
        field,
        format!("`{field}` must be an ISO 8601 date or date-time with a year from 0001 to 9999"),
    )
}

pub fn timestamp(field: &str, value: &str) -> Result<String> {
    crate::time::normalize(value).ok_or_else(|| bad_timestamp(field))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pagination_bounds() {
        assert_eq!(page(None, None).unwrap(), (100, 0));
        assert_eq!(page(Some(1000), Some(5)).unwrap(), (1000, 5));
        assert_eq!(page(Some(0), None).unwrap_err().details["field"], "limit");
        assert_eq!(
            page(Some(1001), None).unwrap_err().details["field"],
            "limit"
        );
        assert_eq!(page(None, Some(-1)).unwrap_err().details["field"], "offset");
    }

    #[test]
    fn argument_shapes() {
        assert!(entity_id("entity_id", "ent_0123456789abcdef0123456789abcdef").is_ok());
        assert_eq!(
            entity_id("entity_id", "x").unwrap_err().details["field"],
            "entity_id"
        );
        assert!(uuid("source_id", "nope").is_err());
        assert!(timestamp("at", "2024-01-01").is_ok());
        assert!(timestamp("at", "soon").is_err());
    }
}
