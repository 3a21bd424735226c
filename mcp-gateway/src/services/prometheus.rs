//! `get_technical_metrics`: one range query to Prometheus' HTTP API.

use neotoma_core::actions::metrics;
use neotoma_core::{ErrorCode, NeotomaError};
use serde_json::{Value, json};

pub struct Prometheus {
    base: String,
    http: reqwest::Client,
}

impl Prometheus {
    pub fn new(base: &str, http: reqwest::Client) -> Prometheus {
        Prometheus {
            base: base.trim_end_matches('/').to_string(),
            http,
        }
    }

    /// `GET /api/v1/query_range` with the work's query, range and step.
    async fn query_range(&self, work: &Value) -> Result<Value, NeotomaError> {
        let unavailable = |reason: String| {
            NeotomaError::new(
                ErrorCode::MetricsServiceUnavailable,
                "Prometheus cannot be reached; retry shortly",
            )
            .with("reason", reason)
            .with("retryable", true)
        };
        let params = [
            (
                "query",
                work["query"].as_str().unwrap_or_default().to_string(),
            ),
            ("start", work["start"].to_string()),
            ("end", work["end"].to_string()),
            ("step", work["step"].to_string()),
        ];
        let response = self
            .http
            .get(format!("{}/api/v1/query_range", self.base))
            .query(&params)
            .send()
            .await
            .map_err(|e| {
                // The error names the URL, which may carry credentials: logged, not answered.
                tracing::warn!(error = %e, "Prometheus unreachable");
                unavailable("the connection failed".into())
            })?;
        let status = response.status();
        // Prometheus answers its errors as JSON (400 bad_data, 422
        // execution, 503 timeout/unavailable); anything else is not it.
        match response.json::<Value>().await {
            // Prometheus itself overloaded or timing out: unavailable, retry.
            Ok(answer)
                if answer["status"] == "error"
                    && matches!(
                        answer["errorType"].as_str(),
                        Some("unavailable" | "timeout")
                    ) =>
            {
                Err(unavailable(format!(
                    "Prometheus answered {status}: {}",
                    answer["error"].as_str().unwrap_or_default()
                )))
            }
            Ok(answer) if answer["status"].is_string() => Ok(answer),
            Ok(_) | Err(_) if status.is_server_error() => {
                Err(unavailable(format!("Prometheus answered {status}")))
            }
            _ => Err(NeotomaError::new(
                ErrorCode::PrometheusQueryFailed,
                format!("Prometheus answered {status} without a query result"),
            )),
        }
    }
}

/// Fills the answer's `values` from Prometheus.
pub async fn complete(
    prometheus: Option<&Prometheus>,
    work: &Value,
    mut answer: Value,
) -> Result<Value, NeotomaError> {
    let Some(prometheus) = prometheus else {
        return Err(NeotomaError::new(
            ErrorCode::MetricsServiceUnavailable,
            "no Prometheus is configured: start neotoma-mcp with --prometheus-url (NEOTOMA_PROMETHEUS_URL) pointing at a Prometheus that scrapes its /metrics",
        ));
    };
    let result = prometheus.query_range(work).await?;
    answer["values"] = json!(metrics::values(&result)?);
    Ok(answer)
}
