//! `get_technical_metrics` (seed 001 §3.28): the operational metrics the
//! gateway exports at `/metrics`, queried back from the Prometheus that
//! scrapes them. Which metrics exist, how a request becomes one PromQL
//! range query, and how Prometheus' answer becomes the response. The query
//! itself is run by the gateway (no network inside Postgres).

use super::analytics::TimeRange;
use super::common::micros;
use crate::error::{ErrorCode, NeotomaError, Result};
use crate::time::format_micros;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Aggregation {
    Avg,
    P50,
    P95,
    P99,
    Sum,
    Count,
    Max,
    Min,
}

impl Aggregation {
    pub fn as_str(self) -> &'static str {
        match self {
            Aggregation::Avg => "avg",
            Aggregation::P50 => "p50",
            Aggregation::P95 => "p95",
            Aggregation::P99 => "p99",
            Aggregation::Sum => "sum",
            Aggregation::Count => "count",
            Aggregation::Max => "max",
            Aggregation::Min => "min",
        }
    }

    /// The quantile a percentile names.
    fn quantile(self) -> Option<&'static str> {
        match self {
            Aggregation::P50 => Some("0.5"),
            Aggregation::P95 => Some("0.95"),
            Aggregation::P99 => Some("0.99"),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetTechnicalMetricsRequest {
    /// One of the metrics the gateway exports, e.g.
    /// neotoma_record_upload_duration_ms.
    pub metric_name: String,
    /// Default: the hour before now.
    pub time_range: Option<TimeRange>,
    /// Default avg. Percentiles need a histogram or gauge.
    pub aggregation: Option<Aggregation>,
    /// Label filters, e.g. {"status": "success"}.
    pub labels: Option<BTreeMap<String, String>>,
    /// Resolution, e.g. 30s, 1m, 5m, 1h (default: the range in 60 steps).
    pub step: Option<String>,
    pub user_id: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Histogram,
    Counter,
    Gauge,
}

/// One exported metric.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Metric {
    pub name: &'static str,
    pub kind: Kind,
    pub unit: &'static str,
    pub description: &'static str,
    /// Its labels (filters may only name these).
    pub labels: &'static [&'static str],
}

use Kind::*;

/// Every metric the seed lists, as the gateway exports it.
pub const METRICS: &[Metric] = &[
    Metric {
        name: "neotoma_record_upload_duration_ms",
        kind: Histogram,
        unit: "ms",
        description: "Duration of the calls that store source material (store and its earlier names), in milliseconds",
        labels: &["action"],
    },
    Metric {
        name: "neotoma_record_upload_total",
        kind: Counter,
        unit: "count",
        description: "Calls that store source material, by status (success or failure)",
        labels: &["action", "status"],
    },
    Metric {
        name: "neotoma_search_duration_ms",
        kind: Histogram,
        unit: "ms",
        description: "Duration of the calls that search or list the memory (retrieve_entities, lookups by identifier, timelines, traversals), in milliseconds",
        labels: &["action"],
    },
    Metric {
        name: "neotoma_extraction_errors_total",
        kind: Counter,
        unit: "count",
        description: "Interpretations of stored material that failed, by error code",
        labels: &["error_code"],
    },
    Metric {
        name: "neotoma_mcp_error_rate",
        kind: Gauge,
        unit: "ratio",
        description: "Share of the MCP tool calls of the last five minutes that failed (0 to 1)",
        labels: &[],
    },
    Metric {
        name: "neotoma_graph_orphan_nodes_total",
        kind: Gauge,
        unit: "count",
        description: "Entities (not merged away) that no relationship links to another entity, across the memory",
        labels: &[],
    },
    Metric {
        name: "neotoma_db_connection_pool_usage",
        kind: Gauge,
        unit: "ratio",
        description: "Share of the gateway's database connection pool in use (0 to 1)",
        labels: &[],
    },
];

/// The metric called `name`.
pub fn metric(name: &str) -> Result<&'static Metric> {
    if !is_metric_name(name) {
        return Err(NeotomaError::invalid_field(
            "metric_name",
            "metric_name must be a Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)",
        ));
    }
    METRICS.iter().find(|m| m.name == name).ok_or_else(|| {
        NeotomaError::new(
            ErrorCode::MetricNotFound,
            format!("no metric {name:?} is exported by this server"),
        )
        .with(
            "available",
            METRICS.iter().map(|m| m.name).collect::<Vec<_>>(),
        )
    })
}

fn is_metric_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 200
        && !s.starts_with(|c: char| c.is_ascii_digit())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

/// `30s`, `5m`, `1h`, `1d` (or plain seconds) → seconds.
pub fn parse_step(s: &str) -> Option<u64> {
    let s = s.trim();
    let (digits, unit) = match s.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => s.split_at(i),
        None => (s, "s"),
    };
    let n: u64 = digits.parse().ok()?;
    let per = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return None,
    };
    n.checked_mul(per).filter(|&v| v > 0)
}

/// Longest range asked for (Prometheus keeps 15 days by default).
const MAX_RANGE_SECONDS: i64 = 90 * 86_400;
/// Most points a query may answer (Prometheus refuses more than 11,000).
const MAX_POINTS: i64 = 11_000;
/// Default points in a range without a step.
const DEFAULT_POINTS: i64 = 60;

/// What to ask Prometheus, and what the answer says besides the values.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    pub metric: &'static Metric,
    pub aggregation: Aggregation,
    pub promql: String,
    /// Unix seconds.
    pub start: i64,
    pub end: i64,
    pub step: u64,
}

impl Query {
    /// The request to send: `/api/v1/query_range` parameters.
    pub fn external(&self) -> Value {
        json!({
            "service": "prometheus",
            "path": "/api/v1/query_range",
            "query": self.promql,
            "start": self.start,
            "end": self.end,
            "step": self.step,
        })
    }

    /// The response, its values still empty (filled from Prometheus' answer
    /// by [`values`]).
    pub fn response(&self) -> Value {
        json!({
            "metric_name": self.metric.name,
            "values": [],
            "aggregation": self.aggregation.as_str(),
            "time_range": {
                "start": format_micros(self.start * 1_000_000),
                "end": format_micros(self.end * 1_000_000),
            },
            "metadata": {
                "unit": self.metric.unit,
                "description": self.metric.description,
                "type": match self.metric.kind { Histogram => "histogram", Counter => "counter", Gauge => "gauge" },
                "query": self.promql,
                "step_seconds": self.step,
            },
        })
    }
}

/// A label value inside a PromQL string literal.
fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Checks a request and builds its query; `now` in microseconds.
pub fn plan(req: &GetTechnicalMetricsRequest, now: i64) -> Result<Query> {
    let metric = metric(&req.metric_name)?;
    let aggregation = req.aggregation.unwrap_or(Aggregation::Avg);
    let (start, end) = match &req.time_range {
        Some(r) => (
            micros("time_range.start", &r.start)? / 1_000_000,
            micros("time_range.end", &r.end)? / 1_000_000,
        ),
        None => (now / 1_000_000 - 3600, now / 1_000_000),
    };
    if end <= start {
        return Err(NeotomaError::invalid_field(
            "time_range",
            "time_range.end must be after time_range.start",
        ));
    }
    if end - start > MAX_RANGE_SECONDS {
        return Err(NeotomaError::invalid_field(
            "time_range",
            "time_range may span at most 90 days",
        ));
    }
    let step = match &req.step {
        Some(s) => parse_step(s).ok_or_else(|| {
            NeotomaError::invalid_field("step", "step must be a duration such as 30s, 5m, 1h or 1d")
        })?,
        None => ((end - start + DEFAULT_POINTS - 1) / DEFAULT_POINTS).max(1) as u64,
    };
    if (end - start) / step as i64 > MAX_POINTS {
        return Err(NeotomaError::invalid_field(
            "step",
            format!("the range in steps of {step}s makes more than {MAX_POINTS} points"),
        ));
    }
    let mut matchers = Vec::new();
    for (name, value) in req.labels.iter().flatten() {
        if !metric.labels.contains(&name.as_str()) {
            return Err(NeotomaError::invalid_field(
                "labels",
                format!("{} has no label {name:?}", metric.name),
            )
            .with("labels", metric.labels.to_vec()));
        }
        matchers.push(format!("{name}={}", quoted(value)));
    }
    let selector = |series: &str| format!("{series}{{{}}}", matchers.join(","));
    let window = format!("{step}s");
    let name = metric.name;
    let promql = match (metric.kind, aggregation) {
        (Histogram, a) if a.quantile().is_some() => format!(
            "histogram_quantile({}, sum by (le) (rate({}[{window}])))",
            a.quantile().unwrap_or_default(),
            selector(&format!("{name}_bucket"))
        ),
        (Histogram, Aggregation::Avg) => format!(
            "sum(rate({}[{window}])) / sum(rate({}[{window}]))",
            selector(&format!("{name}_sum")),
            selector(&format!("{name}_count"))
        ),
        (Histogram, Aggregation::Sum) => {
            format!("sum(increase({}[{window}]))", selector(&format!("{name}_sum")))
        }
        (Histogram, Aggregation::Count) => format!(
            "sum(increase({}[{window}]))",
            selector(&format!("{name}_count"))
        ),
        // The largest and smallest observations, as the histogram's buckets
        // bound them.
        (Histogram, a) => format!(
            "histogram_quantile({}, sum by (le) (rate({}[{window}])))",
            if a == Aggregation::Max { "1" } else { "0" },
            selector(&format!("{name}_bucket"))
        ),
        (Counter, a) if a.quantile().is_some() => {
            return Err(NeotomaError::invalid_field(
                "aggregation",
                format!(
                    "{name} is a counter: percentiles need a histogram or a gauge (use sum, count, avg, max or min)"
                ),
            ))
        }
        (Counter, Aggregation::Avg) => format!("sum(rate({}[{window}]))", selector(name)),
        (Counter, Aggregation::Sum | Aggregation::Count) => {
            format!("sum(increase({}[{window}]))", selector(name))
        }
        (Counter, a) => format!(
            "{}(increase({}[{window}]))",
            a.as_str(),
            selector(name)
        ),
        (Gauge, a) if a.quantile().is_some() => format!(
            "max(quantile_over_time({}, {}[{window}]))",
            a.quantile().unwrap_or_default(),
            selector(name)
        ),
        (Gauge, Aggregation::Count) => format!("count(last_over_time({}[{window}]))", selector(name)),
        (Gauge, Aggregation::Sum) => format!("sum(avg_over_time({}[{window}]))", selector(name)),
        (Gauge, a) => format!(
            "{}({}_over_time({}[{window}]))",
            a.as_str(),
            a.as_str(),
            selector(name)
        ),
    };
    Ok(Query {
        metric,
        aggregation,
        promql,
        start,
        end,
        step,
    })
}

/// The values of Prometheus' answer to a range query
/// (`{"status":"success","data":{"resultType":"matrix","result":[{"values":[[t,"v"],…]}]}}`),
/// as `[{timestamp, value}]`; points that are not numbers (NaN, where no
/// call was made in a step) are left out. An error answer is
/// `PROMETHEUS_QUERY_FAILED`.
pub fn values(answer: &Value) -> Result<Vec<Value>> {
    if answer["status"] != "success" {
        return Err(NeotomaError::new(
            ErrorCode::PrometheusQueryFailed,
            format!(
                "Prometheus refused the query: {}",
                answer["error"].as_str().unwrap_or("no reason given")
            ),
        )
        .with("error_type", answer["errorType"].clone()));
    }
    let series = answer["data"]["result"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut points: BTreeMap<i64, f64> = BTreeMap::new();
    // The queries aggregate to one series; should there be several, a
    // point is their sum.
    for s in &series {
        for p in s["values"].as_array().into_iter().flatten() {
            let (Some(t), Some(v)) = (
                p[0].as_f64(),
                p[1].as_str().and_then(|v| v.parse::<f64>().ok()),
            ) else {
                continue;
            };
            let ms = (t * 1000.0).round();
            // Timestamps a date can hold (years 1 to 9999).
            if v.is_finite() && (-62_135_596_800_000.0..=253_402_300_799_000.0).contains(&ms) {
                *points.entry(ms as i64).or_default() += v;
            }
        }
    }
    Ok(points
        .into_iter()
        .map(|(ms, v)| json!({"timestamp": format_micros(ms * 1000), "value": v}))
        .collect())
}

/// The catalog's entries of this family's actions, by name: each one's
/// title, its description for an agent and how it behaves
/// (`crate::catalog::spec`).
pub(crate) fn spec(name: &str) -> Option<crate::catalog_entry::Entry> {
    use crate::catalog_entry::Entry;
    Some(match name {
        "get_technical_metrics" => Entry::new(
            "Technical metrics (operators)",
            "Operational metrics of this server from its Prometheus, for operators only: \
                neotoma_record_upload_duration_ms and neotoma_search_duration_ms (histograms, \
                label action), neotoma_record_upload_total (labels action, status), \
                neotoma_extraction_errors_total (label error_code), neotoma_mcp_error_rate, \
                neotoma_graph_orphan_nodes_total, neotoma_db_connection_pool_usage. Aggregation \
                avg (default), p50, p95, p99, sum, count, max or min over time_range (default the \
                last hour) in steps of `step` (e.g. 1m, 1h). Returns {metric_name, values: \
                [{timestamp, value}], aggregation, time_range, metadata: {unit, description, \
                query}}.",
        )
        .read_only()
        .not_idempotent(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(v: Value) -> GetTechnicalMetricsRequest {
        serde_json::from_value(v).unwrap()
    }

    const NOW: i64 = 1_700_000_000_000_000;

    #[test]
    fn percentiles_of_histograms_use_histogram_quantile() {
        let q = plan(
            &req(json!({"metric_name": "neotoma_record_upload_duration_ms", "aggregation": "p95",
                        "time_range": {"start": "2024-01-15T00:00:00Z", "end": "2024-01-15T23:59:59Z"},
                        "step": "1h", "labels": {"action": "store"}})),
            NOW,
        )
        .unwrap();
        assert_eq!(
            q.promql,
            "histogram_quantile(0.95, sum by (le) (rate(neotoma_record_upload_duration_ms_bucket{action=\"store\"}[3600s])))"
        );
        assert_eq!((q.step, q.end - q.start), (3600, 86_399));
        let r = q.response();
        assert_eq!(r["time_range"]["start"], "2024-01-15T00:00:00.000000Z");
        assert_eq!(r["metadata"]["unit"], "ms");
    }

    #[test]
    fn each_kind_has_its_aggregations() {
        let p = |name: &str, agg: &str| {
            plan(
                &req(json!({"metric_name": name, "aggregation": agg, "step": "1m"})),
                NOW,
            )
            .map(|q| q.promql)
        };
        assert_eq!(
            p("neotoma_record_upload_total", "sum").unwrap(),
            "sum(increase(neotoma_record_upload_total{}[60s]))"
        );
        assert_eq!(
            p("neotoma_mcp_error_rate", "max").unwrap(),
            "max(max_over_time(neotoma_mcp_error_rate{}[60s]))"
        );
        assert!(p("neotoma_search_duration_ms", "avg")
            .unwrap()
            .contains("_sum{}[60s])) / sum(rate(neotoma_search_duration_ms_count"));
        assert_eq!(
            p("neotoma_record_upload_total", "p99").unwrap_err().details["field"],
            "aggregation"
        );
        let q = plan(&req(json!({"metric_name": "neotoma_mcp_error_rate"})), NOW).unwrap();
        assert_eq!(
            (q.aggregation, q.step, q.end - q.start),
            (Aggregation::Avg, 60, 3600)
        );
    }

    #[test]
    fn bad_requests_are_refused_with_the_seed_codes() {
        let e = |v: Value| plan(&req(v), NOW).unwrap_err();
        assert_eq!(
            e(json!({"metric_name": "nope_total"})).code,
            ErrorCode::MetricNotFound
        );
        assert_eq!(
            e(json!({"metric_name": "up{job=\"x\"}"})).code,
            ErrorCode::ValidationError
        );
        let swapped = json!({"metric_name": "neotoma_mcp_error_rate",
                             "time_range": {"start": "2024-01-02", "end": "2024-01-01"}});
        assert_eq!(e(swapped).details["field"], "time_range");
        let step = json!({"metric_name": "neotoma_mcp_error_rate", "step": "fast"});
        assert_eq!(e(step).details["field"], "step");
        let tiny = json!({"metric_name": "neotoma_mcp_error_rate", "step": "1s",
                          "time_range": {"start": "2024-01-01", "end": "2024-01-10"}});
        assert_eq!(e(tiny).details["field"], "step");
        let label = json!({"metric_name": "neotoma_record_upload_total", "labels": {"zone": "x"}});
        assert_eq!(e(label).details["field"], "labels");
    }

    #[test]
    fn label_values_cannot_break_out_of_their_string() {
        let q = plan(
            &req(
                json!({"metric_name": "neotoma_record_upload_total", "aggregation": "sum",
                        "labels": {"status": "a\"} or vector(1) #\\"}}),
            ),
            NOW,
        )
        .unwrap();
        assert!(
            q.promql.contains(r#"status="a\"} or vector(1) #\\""#),
            "{}",
            q.promql
        );
    }

    #[test]
    fn steps_parse() {
        assert_eq!(parse_step("30s"), Some(30));
        assert_eq!(parse_step("5m"), Some(300));
        assert_eq!(parse_step("1h"), Some(3600));
        assert_eq!(parse_step("2d"), Some(172_800));
        assert_eq!(parse_step("15"), Some(15));
        for bad in ["", "0s", "1w", "m", "-1s", "1.5m"] {
            assert_eq!(parse_step(bad), None, "{bad}");
        }
    }

    #[test]
    fn matrix_answers_become_values() {
        let answer = json!({"status": "success", "data": {"resultType": "matrix", "result": [
            {"metric": {}, "values": [[1705276800, "3200"], [1705280400, "NaN"], [1705284000.5, "2900.5"]]}
        ]}});
        let v = values(&answer).unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(
            v[0],
            json!({"timestamp": "2024-01-15T00:00:00.000000Z", "value": 3200.0})
        );
        assert_eq!(v[1]["timestamp"], "2024-01-15T02:00:00.500000Z");
        let err =
            values(&json!({"status": "error", "errorType": "bad_data", "error": "parse error"}))
                .unwrap_err();
        assert_eq!(err.code, ErrorCode::PrometheusQueryFailed);
    }
}
