//! `get_product_analytics`: product metrics computed in the database from
//! the truth tables, across users, for operators only. The query runs as
//! the extension's owner (row level security would show an operator only
//! their own rows) and answers aggregates, never a user or a row.

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

/// What the query answers: the value, and what the metadata adds.
#[derive(Deserialize)]
struct Computed {
    value: Value,
    details: Value,
}

pub fn get_product_analytics(
    _user: Option<Uuid>,
    req: GetProductAnalyticsRequest,
) -> Result<Value, NeotomaError> {
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
    let computed: Computed = owner::as_owner(|| {
        db::parsed(
            PRODUCT_ANALYTICS,
            &[
                Arg::Text(metric.name),
                Arg::Int(start),
                Arg::Int(end),
                Arg::OptText(cohort.as_deref()),
            ],
            "product analytics",
        )
    })?;
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
    if let Some(c) = cohort {
        metadata["cohort"] = json!(c);
    }
    Ok(json!({
        "metric_type": req.metric_type.as_str(),
        "metric_name": metric.name,
        "value": computed.value,
        "time_range": {"start": format_micros(start), "end": format_micros(end)},
        "metadata": metadata,
    }))
}
