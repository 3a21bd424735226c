//! `get_product_analytics`: product metrics computed in the database from
//! the truth tables, across users, for operators only. The counting query
//! runs as the extension's owner (row level security would show an operator
//! only their own rows) and answers counters summed over users, never a
//! user or a row; the value is made of them by a second query, so that a
//! router makes it of its partitions' counters added up.

use crate::db::{self, Arg};
use crate::{owner, settings};
use neotoma_core::actions::analytics::{self, GetProductAnalyticsRequest};
use neotoma_core::actions::common::micros;
use neotoma_core::time::format_micros;
use neotoma_core::{ErrorCode, NeotomaError};
use serde::Deserialize;
use serde_json::{json, Value};
use uuid::Uuid;

const PRODUCT_ANALYTICS: &str = include_str!("../../../sql/queries/product_analytics.sql");
const ANALYTICS_FINISH: &str = include_str!("../../../sql/queries/analytics_finish.sql");

/// What the finishing query answers: the value, and what the metadata adds.
#[derive(Deserialize)]
struct Computed {
    value: Value,
    details: Value,
}

/// A request, checked: the metric, the range (microseconds, the end
/// exclusive) and the cohort's week.
pub(crate) struct Asked {
    metric_type: analytics::MetricType,
    metric: &'static analytics::Metric,
    start: i64,
    end: i64,
    cohort: Option<String>,
}

pub fn get_product_analytics(
    _user: Option<Uuid>,
    req: GetProductAnalyticsRequest,
) -> Result<Value, NeotomaError> {
    let asked = asked(req)?;
    // Counted as the extension's owner: every user's rows, aggregated.
    let counters: Value = owner::as_owner(|| {
        db::parsed(
            PRODUCT_ANALYTICS,
            &[
                Arg::Text(asked.metric.name),
                Arg::Int(asked.start),
                Arg::Int(asked.end),
                Arg::OptText(asked.cohort.as_deref()),
            ],
            "product analytics",
        )
    })?;
    let mut answer = answer(&asked, &counters)?;
    // A router adds up its partitions' counters (crate::routing).
    if settings::routed_call() {
        answer["counters"] = counters;
    }
    Ok(answer)
}

/// The request checked, for an operator only.
fn asked(req: GetProductAnalyticsRequest) -> Result<Asked, NeotomaError> {
    if !settings::operator(false) {
        return Err(NeotomaError::new(
            ErrorCode::Forbidden,
            "product analytics aggregate every user's data and need an operator (the role \
             neotoma_operator in SQL; a token made with --scope operator over MCP)",
        ));
    }
    let metric = analytics::resolve(req.metric_type, req.metric_name.as_deref())?;
    let (start, end) = analytics::range(req.time_range.as_ref(), db::transaction_start_micros())?;
    let cohort = match (&req.cohort, req.metric_type) {
        (Some(c), analytics::MetricType::Cohort) => {
            micros("cohort", c)?;
            Some(c.trim().get(..10).unwrap_or_default().to_string())
        }
        (Some(_), _) => {
            return Err(NeotomaError::invalid_field(
                "cohort",
                "cohort applies to metric_type cohort only",
            ))
        }
        (None, _) => None,
    };
    if req.filters.as_ref().is_some_and(|f| !f.is_empty()) {
        return Err(NeotomaError::invalid_field(
            "filters",
            "no filters are supported: the metrics cover every user",
        ));
    }
    Ok(Asked {
        metric_type: req.metric_type,
        metric,
        start,
        end,
        cohort,
    })
}

/// The answer made of the metric's counters.
fn answer(asked: &Asked, counters: &Value) -> Result<Value, NeotomaError> {
    let computed: Computed = db::parsed(
        ANALYTICS_FINISH,
        &[
            Arg::Text(asked.metric.name),
            Arg::Json(counters),
            Arg::Int(asked.start),
            Arg::Int(asked.end),
            Arg::OptText(asked.cohort.as_deref()),
        ],
        "product analytics",
    )?;
    let metric = asked.metric;
    let mut metadata =
        json!({"description": metric.description, "computed_from": "the memory's own tables"});
    if let Some((required, target)) = metric.threshold {
        metadata["threshold"] = json!({"required": required, "target": target});
    }
    if let Value::Object(details) = computed.details {
        for (k, v) in details {
            metadata[k] = v;
        }
    }
    if let Some(c) = &asked.cohort {
        metadata["cohort"] = json!(c);
    }
    Ok(json!({
        "metric_type": asked.metric_type.as_str(),
        "metric_name": metric.name,
        "value": computed.value,
        "time_range": {"start": format_micros(asked.start), "end": format_micros(asked.end)},
        "metadata": metadata,
    }))
}

/// On a router: the request checked, and as every partition gets it (its
/// range made explicit, so that they all count the same days).
pub(crate) fn for_partitions(request: &Value) -> Result<(Asked, Value), NeotomaError> {
    let req: GetProductAnalyticsRequest = neotoma_core::request::parse(request)?;
    let asked = asked(req)?;
    let mut sent = request.clone();
    sent["time_range"] =
        json!({"start": format_micros(asked.start), "end": format_micros(asked.end)});
    Ok((asked, sent))
}

/// On a router: the answer made of the partitions' answers (their counters
/// added up).
pub(crate) fn combined(asked: &Asked, answers: &[Value]) -> Result<Value, NeotomaError> {
    let counters = answers
        .iter()
        .map(|a| a.get("counters").cloned().unwrap_or(Value::Null))
        .reduce(|a, b| analytics::add_counters(&a, &b))
        .unwrap_or(Value::Null);
    answer(asked, &counters)
}
