//! `get_product_analytics` (seed 001 §3.29): product metrics computed from the
//! truth tables themselves, across users, for operators. Which metrics exist,
//! what they mean, their thresholds, and how a request names one.

use super::common::micros;
use crate::error::{ErrorCode, NeotomaError, Result};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MetricType {
    Activation,
    Retention,
    Usage,
    Funnel,
    Cohort,
}

impl MetricType {
    pub fn as_str(self) -> &'static str {
        match self {
            MetricType::Activation => "activation",
            MetricType::Retention => "retention",
            MetricType::Usage => "usage",
            MetricType::Funnel => "funnel",
            MetricType::Cohort => "cohort",
        }
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimeRange {
    /// ISO 8601 (a date means midnight UTC).
    pub start: String,
    /// ISO 8601, exclusive.
    pub end: String,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetProductAnalyticsRequest {
    pub metric_type: MetricType,
    /// A metric of that type (default: the type's first).
    pub metric_name: Option<String>,
    /// Default: the 30 days before now.
    pub time_range: Option<TimeRange>,
    /// For `cohort`: the week (its Monday, a date) whose retention curve to
    /// answer; without it, the size of every weekly cohort.
    pub cohort: Option<String>,
    /// Accepted for the earlier specification; no filter is supported.
    pub filters: Option<Map<String, Value>>,
    pub user_id: Option<String>,
}

/// One metric: its name, type, meaning and the seed's thresholds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Metric {
    pub name: &'static str,
    pub metric_type: MetricType,
    pub description: &'static str,
    /// (required, target), where the seed gives them.
    pub threshold: Option<(f64, f64)>,
    /// False for what this server does not record (reads are not logged).
    pub recorded: bool,
}

const fn metric(
    name: &'static str,
    metric_type: MetricType,
    description: &'static str,
    threshold: Option<(f64, f64)>,
    recorded: bool,
) -> Metric {
    Metric {
        name,
        metric_type,
        description,
        threshold,
        recorded,
    }
}

use MetricType::*;

/// Every metric the seed names, the first of each type its default.
pub const METRICS: &[Metric] = &[
    metric("activation_first_upload_rate", Activation,
        "Share of the users who signed up in the range (their first stored source) who stored a file within 24 hours",
        Some((0.60, 0.80)), true),
    metric("activation_first_extraction_rate", Activation,
        "Share of the users who signed up in the range whose file was interpreted (a completed run) within 24 hours",
        None, true),
    metric("activation_first_entity_rate", Activation,
        "Share of the users who signed up in the range who had an entity within 24 hours",
        None, true),
    metric("activation_first_event_rate", Activation,
        "Share of the users who signed up in the range who had a timeline event within 24 hours",
        None, true),
    metric("activation_first_search_rate", Activation,
        "Searches are not recorded by this server", None, false),
    metric("activation_first_ai_query_rate", Activation,
        "AI queries are not recorded by this server", None, false),
    metric("day_1_retention", Retention,
        "Per signup day: share of that day's new users who stored something the next day (UTC)",
        Some((0.40, 0.60)), true),
    metric("week_1_retention", Retention,
        "Per signup week: share of that week's new users who stored something 7 to 13 days after signing up",
        None, true),
    metric("month_1_retention", Retention,
        "Per signup month: share of that month's new users who stored something 30 to 59 days after signing up",
        None, true),
    metric("daily_active_users", Usage,
        "Per day: users who stored something (a source) that day (UTC)", None, true),
    metric("weekly_active_users", Usage,
        "Per week (from Monday): users who stored something that week", None, true),
    metric("avg_uploads_per_user_per_week", Usage,
        "Files stored in the range per active user, per week of the range", None, true),
    metric("avg_searches_per_user_per_week", Usage,
        "Searches are not recorded by this server", None, false),
    metric("signup_to_timeline", Funnel,
        "Of the users who signed up in the range, those who went on to each step in turn: signup, upload (a file), \
         extraction (a completed interpretation), entity, timeline event; the value is the last step's share",
        None, true),
    metric("weekly_cohorts", Cohort,
        "Users by signup week: each cohort's size, or with `cohort` (its Monday) the share of it active in each week since",
        None, true),
];

/// The metric a request names: its type's default without a name;
/// METRIC_NOT_FOUND for a name that is not a metric of that type, or that
/// this server does not record.
pub fn resolve(metric_type: MetricType, name: Option<&str>) -> Result<&'static Metric> {
    let of_type = || METRICS.iter().filter(move |m| m.metric_type == metric_type);
    let found = match name {
        None => of_type().next(),
        Some(n) => of_type().find(|m| m.name == n),
    };
    let names = || {
        of_type()
            .filter(|m| m.recorded)
            .map(|m| m.name)
            .collect::<Vec<_>>()
    };
    match found {
        Some(m) if m.recorded => Ok(m),
        Some(m) => Err(NeotomaError::new(
            ErrorCode::MetricNotFound,
            format!("`{}`: {}", m.name, m.description.to_lowercase()),
        )
        .with("metric_name", m.name)
        .with("available", names())),
        None => Err(NeotomaError::new(
            ErrorCode::MetricNotFound,
            format!(
                "no {} metric `{}`",
                metric_type.as_str(),
                name.unwrap_or_default()
            ),
        )
        .with("field", "metric_name")
        .with("available", names())),
    }
}

/// The range as microseconds since the epoch, start inclusive, end
/// exclusive: the one given (at most 366 days), else the 30 days before `now`.
pub fn range(range: Option<&TimeRange>, now: i64) -> Result<(i64, i64)> {
    const DAY: i64 = 86_400_000_000;
    let Some(r) = range else {
        return Ok((now - 30 * DAY, now));
    };
    let start = micros("time_range.start", &r.start)?;
    let end = micros("time_range.end", &r.end)?;
    if end <= start || end - start > 366 * DAY {
        return Err(NeotomaError::invalid_field(
            "time_range",
            "time_range.end must be after time_range.start, by at most 366 days",
        ));
    }
    Ok((start, end))
}

/// The catalog's entries of this family's actions, by name: each one's
/// title, its description for an agent and how it behaves
/// (`crate::catalog::spec`).
pub(crate) fn spec(name: &str) -> Option<crate::catalog_entry::Entry> {
    use crate::catalog_entry::Entry;
    Some(match name {
        "get_product_analytics" => Entry::new(
            "Product analytics (operators)",
            "Product metrics computed from the memory itself, across users, for operators only: \
                activation (e.g. activation_first_upload_rate), retention (day_1_retention, \
                week_1_retention, month_1_retention), usage (daily_active_users, \
                weekly_active_users, avg_uploads_per_user_per_week), the signup → upload → \
                extraction → entity → timeline funnel, and weekly cohorts, over time_range \
                (default the last 30 days). Aggregates only. Returns {metric_type, metric_name, \
                value (a number or [{date, value}]), time_range, metadata}.",
        )
        .read_only(),
        _ => return None,
    })
}

/// Two servers' counters of one metric, added up: each counter is a sum
/// over users, and a user is on one server (docs/scale-out.md), so the
/// counters of a router's partitions add up to those of one server holding
/// them all. Numbers add; objects add key by key (a date only one has counts
/// as that one's); anything else is the first's.
pub fn add_counters(a: &Value, b: &Value) -> Value {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => Value::from(x.saturating_add(y)),
            _ => Value::from(x.as_f64().unwrap_or(0.0) + y.as_f64().unwrap_or(0.0)),
        },
        (Value::Object(x), Value::Object(y)) => {
            let mut sum = x.clone();
            for (k, v) in y {
                let added = match x.get(k) {
                    Some(mine) => add_counters(mine, v),
                    None => v.clone(),
                };
                sum.insert(k.clone(), added);
            }
            Value::Object(sum)
        }
        _ => a.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_add_up_key_by_key() {
        let a =
            serde_json::json!({"users": 2, "ok": 1, "dates": {"2026-11-01": 1, "2026-11-02": 0}});
        let b =
            serde_json::json!({"users": 3, "ok": 0, "dates": {"2026-11-02": 2, "2026-11-03": 4}});
        assert_eq!(
            add_counters(&a, &b),
            serde_json::json!({"users": 5, "ok": 1, "dates": {"2026-11-01": 1, "2026-11-02": 2, "2026-11-03": 4}})
        );
        // Nothing from a server with no users changes the sum.
        let none = serde_json::json!({"users": 0, "ok": 0, "dates": {}});
        assert_eq!(add_counters(&a, &none), a);
        assert_eq!(add_counters(&none, &a), a);
    }

    #[test]
    fn names_resolve_within_their_type() {
        assert_eq!(
            resolve(Activation, None).unwrap().name,
            "activation_first_upload_rate"
        );
        assert_eq!(
            resolve(Retention, Some("week_1_retention")).unwrap().name,
            "week_1_retention"
        );
        let wrong_type = resolve(Usage, Some("day_1_retention")).unwrap_err();
        assert_eq!(wrong_type.code, ErrorCode::MetricNotFound);
        let unrecorded = resolve(Activation, Some("activation_first_search_rate")).unwrap_err();
        assert_eq!(unrecorded.code, ErrorCode::MetricNotFound);
        for t in [Activation, Retention, Usage, Funnel, Cohort] {
            assert!(resolve(t, None).is_ok(), "{t:?} has a default");
        }
    }

    #[test]
    fn ranges_are_bounded() {
        let now = 1_700_000_000_000_000;
        assert_eq!(range(None, now).unwrap().1, now);
        let r = |s: &str, e: &str| {
            range(
                Some(&TimeRange {
                    start: s.into(),
                    end: e.into(),
                }),
                now,
            )
        };
        assert!(r("2024-01-01", "2024-02-01").is_ok());
        assert!(r("2024-02-01", "2024-01-01").is_err());
        assert!(r("2024-01-01", "2025-06-01").is_err());
        assert!(r("soon", "2024-01-01").is_err());
    }
}
