//! ISO 8601 timestamps. Inside Neotoma a timestamp is microseconds since the
//! Unix epoch (what Postgres stores); it is printed as RFC 3339 in UTC.

use chrono::{DateTime, NaiveDate, NaiveDateTime, SecondsFormat, TimeZone, Utc};

/// Parses an RFC 3339 date-time, a date-time without offset (taken as UTC), or
/// a date (midnight UTC), into microseconds since the epoch.
pub fn parse_date_or_datetime(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Ok(dt) = DateTime::parse_from_rfc3339(s) {
        return Some(dt.timestamp_micros());
    }
    for fmt in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
    ] {
        if let Ok(dt) = NaiveDateTime::parse_from_str(s, fmt) {
            return Some(Utc.from_utc_datetime(&dt).timestamp_micros());
        }
    }
    NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|dt| Utc.from_utc_datetime(&dt).timestamp_micros())
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
    fn formats_utc_with_microseconds() {
        let t = parse_date_or_datetime("2024-01-15T10:20:30.123456+02:00").unwrap();
        assert_eq!(format_micros(t), "2024-01-15T08:20:30.123456Z");
    }
}
