//! ISO 8601 timestamps. Inside Neotoma a timestamp is microseconds since the
//! Unix epoch (what Postgres stores); it is printed as RFC 3339 in UTC.

use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, SecondsFormat, TimeZone, Utc};

/// Years a timestamp may have: four digits, AD (what ISO 8601 writes without
/// an agreement between the parties, and what every store handles).
pub const YEARS: std::ops::RangeInclusive<i32> = 1..=9999;
/// Largest time-zone offset, in seconds (Postgres accepts up to 15:59).
pub const MAX_OFFSET_SECONDS: i32 = 15 * 3600 + 59 * 60;

/// Parses an RFC 3339 date-time, a date-time without offset (taken as UTC), or
/// a date (midnight UTC), into microseconds since the epoch. Years outside
/// [`YEARS`] and offsets beyond ±15:59 are refused.
pub fn parse_date_or_datetime(s: &str) -> Option<i64> {
    let s = s.trim();
    let in_range = |d: NaiveDate| YEARS.contains(&d.year());
    if let Ok(dt) = DateTime::parse_from_rfc3339(s) {
        let offset = dt.offset().local_minus_utc();
        let ok = in_range(dt.naive_local().date())
            && in_range(dt.naive_utc().date())
            && offset.abs() <= MAX_OFFSET_SECONDS;
        return ok.then(|| dt.timestamp_micros());
    }
    for fmt in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
    ] {
        if let Ok(dt) = NaiveDateTime::parse_from_str(s, fmt) {
            return in_range(dt.date()).then(|| Utc.from_utc_datetime(&dt).timestamp_micros());
        }
    }
    NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .ok()
        .filter(|d| in_range(*d))
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|dt| Utc.from_utc_datetime(&dt).timestamp_micros())
}

/// A timestamp in the one form Neotoma writes (UTC, microseconds), or None
/// when `s` is not one [`parse_date_or_datetime`] accepts.
pub fn normalize(s: &str) -> Option<String> {
    parse_date_or_datetime(s).map(format_micros)
}

/// Microseconds since the epoch → `2024-01-15T10:00:00.000000Z`.
pub fn format_micros(micros: i64) -> String {
    Utc.timestamp_micros(micros)
        .single()
        .map(|dt| dt.to_rfc3339_opts(SecondsFormat::Micros, true))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_iso_forms() {
        let day = parse_date_or_datetime("2024-01-15").unwrap();
        assert_eq!(parse_date_or_datetime("2024-01-15T00:00:00Z"), Some(day));
        assert_eq!(
            parse_date_or_datetime("2024-01-15T01:00:00+01:00"),
            Some(day)
        );
        assert_eq!(parse_date_or_datetime("2024-01-15T00:00:00"), Some(day));
        assert_eq!(parse_date_or_datetime("2024-01-15 00:00:00.000"), Some(day));
        assert_eq!(
            parse_date_or_datetime("2024-01-15T00:00:00.5Z"),
            Some(day + 500_000)
        );
        for bad in ["", "yesterday", "2024-13-01", "2024-02-30", "15/01/2024"] {
            assert_eq!(parse_date_or_datetime(bad), None, "{bad}");
        }
    }

    #[test]
    fn refuses_years_and_offsets_out_of_range() {
        for bad in [
            "0000-01-01",
            "+10000-01-01",
            "-0001-01-01",
            "-100000-01-01",
            "0000-12-31T23:00:00Z",
            "2024-01-01T00:00:00+23:59",
            "2024-01-01T00:00:00-16:00",
            "0001-01-01T00:30:00+01:00",
            "9999-12-31T23:30:00-01:00",
        ] {
            assert_eq!(parse_date_or_datetime(bad), None, "{bad}");
        }
        for good in [
            "0001-01-01",
            "9999-12-31T23:59:59Z",
            "2024-01-01T00:00:00+14:00",
        ] {
            assert!(parse_date_or_datetime(good).is_some(), "{good}");
        }
        assert_eq!(
            normalize("2024-01-15T01:00:00+01:00").as_deref(),
            Some("2024-01-15T00:00:00.000000Z")
        );
    }

    #[test]
    fn formats_utc_with_microseconds() {
        let t = parse_date_or_datetime("2024-01-15T10:20:30.123456+02:00").unwrap();
        assert_eq!(format_micros(t), "2024-01-15T08:20:30.123456Z");
    }
}
