//! Prometheus metrics, served at `/metrics` over HTTP: the gateway's own
//! (`neotoma_mcp_*`) and those seed 001 §3.28 names, which
//! `get_technical_metrics` reads back from Prometheus
//! (`neotoma_core::actions::metrics` describes them).

use neotoma_core::{ErrorCode, NeotomaError};
use prometheus::{
    Encoder, Gauge, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec,
    Opts, Registry, TextEncoder,
};
use serde_json::Value;
use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The window of `neotoma_mcp_error_rate`, in minutes.
const ERROR_RATE_MINUTES: u64 = 5;

/// Tool calls and failures per minute, for the last few minutes.
#[derive(Default)]
struct CallWindow {
    /// (minute since the gateway started, calls, failed calls), oldest first.
    minutes: VecDeque<(u64, u64, u64)>,
}

// Rendered at /metrics, over HTTP: a stdio build keeps them unread.
#[cfg_attr(not(feature = "http"), allow(dead_code))]
impl CallWindow {
    fn add(&mut self, minute: u64, failed: bool) {
        match self.minutes.back_mut() {
            Some((m, calls, errors)) if *m == minute => {
                *calls += 1;
                *errors += u64::from(failed);
            }
            _ => self.minutes.push_back((minute, 1, u64::from(failed))),
        }
        self.forget_before(minute);
    }

    fn forget_before(&mut self, minute: u64) {
        while self
            .minutes
            .front()
            .is_some_and(|(m, _, _)| m + ERROR_RATE_MINUTES <= minute)
        {
            self.minutes.pop_front();
        }
    }

    /// Failed calls over calls in the window (0 without calls).
    fn rate(&mut self, minute: u64) -> f64 {
        self.forget_before(minute);
        let (calls, errors) = self
            .minutes
            .iter()
            .fold((0, 0), |(c, e), (_, calls, errors)| (c + calls, e + errors));
        if calls == 0 {
            0.0
        } else {
            errors as f64 / calls as f64
        }
    }
}

#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub struct Metrics {
    registry: Registry,
    pub calls: IntCounterVec,
    pub errors: IntCounterVec,
    pub latency: HistogramVec,
    pub resource_reads: IntCounterVec,
    pub unauthorized: IntCounter,
    pub pool: IntGaugeVec,
    upload_duration: HistogramVec,
    uploads: IntCounterVec,
    search_duration: HistogramVec,
    extraction_errors: IntCounterVec,
    error_rate: Gauge,
    pub orphan_nodes: IntGauge,
    pool_usage: Gauge,
    started: Instant,
    window: Mutex<CallWindow>,
    /// When the orphan count was last asked of the database.
    pub orphans_counted: Mutex<Option<Instant>>,
}

/// Latency buckets in milliseconds.
const MS_BUCKETS: [f64; 14] = [
    1.0, 2.5, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0, 2500.0, 5000.0, 10000.0, 30000.0,
];

fn histogram_ms(name: &str, help: &str) -> HistogramVec {
    HistogramVec::new(
        HistogramOpts::new(name, help).buckets(MS_BUCKETS.to_vec()),
        &["action"],
    )
    .expect("valid metric")
}

#[cfg_attr(not(feature = "http"), allow(dead_code))]
impl Metrics {
    pub fn new() -> Metrics {
        let registry = Registry::new();
        let calls = IntCounterVec::new(
            Opts::new(
                "neotoma_mcp_tool_calls_total",
                "Tool calls, by tool and outcome (ok or error).",
            ),
            &["tool", "outcome"],
        )
        .expect("valid metric");
        let errors = IntCounterVec::new(
            Opts::new(
                "neotoma_mcp_tool_errors_total",
                "Failed tool calls, by tool and error code.",
            ),
            &["tool", "code"],
        )
        .expect("valid metric");
        let latency = HistogramVec::new(
            HistogramOpts::new(
                "neotoma_mcp_tool_duration_seconds",
                "Tool call latency, by tool.",
            )
            .buckets(vec![
                0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
            ]),
            &["tool"],
        )
        .expect("valid metric");
        let resource_reads = IntCounterVec::new(
            Opts::new(
                "neotoma_mcp_resource_reads_total",
                "Resource reads, by outcome.",
            ),
            &["outcome"],
        )
        .expect("valid metric");
        let unauthorized = IntCounter::new(
            "neotoma_mcp_http_unauthorized_total",
            "HTTP requests refused for a missing or bad bearer token.",
        )
        .expect("valid metric");
        let pool = IntGaugeVec::new(
            Opts::new(
                "neotoma_mcp_db_pool_connections",
                "Database connections of the pool, by state.",
            ),
            &["state"],
        )
        .expect("valid metric");
        let upload_duration = histogram_ms(
            "neotoma_record_upload_duration_ms",
            "Duration of the calls that store source material, in milliseconds, by action.",
        );
        let uploads = IntCounterVec::new(
            Opts::new(
                "neotoma_record_upload_total",
                "Calls that store source material, by action and status (success or failure).",
            ),
            &["action", "status"],
        )
        .expect("valid metric");
        let search_duration = histogram_ms(
            "neotoma_search_duration_ms",
            "Duration of the calls that search or list the memory, in milliseconds, by action.",
        );
        let extraction_errors = IntCounterVec::new(
            Opts::new(
                "neotoma_extraction_errors_total",
                "Interpretations of stored material that failed, by error code.",
            ),
            &["error_code"],
        )
        .expect("valid metric");
        // Exported from the start (at 0), not only after a first failure.
        extraction_errors.with_label_values(&[ErrorCode::AnalysisFailed.as_str()]);
        let error_rate = Gauge::new(
            "neotoma_mcp_error_rate",
            "Share of the tool calls of the last five minutes that failed (0 to 1).",
        )
        .expect("valid metric");
        let orphan_nodes = IntGauge::new(
            "neotoma_graph_orphan_nodes_total",
            "Entities that no relationship links to another entity, across the memory.",
        )
        .expect("valid metric");
        let pool_usage = Gauge::new(
            "neotoma_db_connection_pool_usage",
            "Share of the database connection pool in use (0 to 1).",
        )
        .expect("valid metric");
        for c in [
            Box::new(calls.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(errors.clone()),
            Box::new(latency.clone()),
            Box::new(resource_reads.clone()),
            Box::new(unauthorized.clone()),
            Box::new(pool.clone()),
            Box::new(upload_duration.clone()),
            Box::new(uploads.clone()),
            Box::new(search_duration.clone()),
            Box::new(extraction_errors.clone()),
            Box::new(error_rate.clone()),
            Box::new(orphan_nodes.clone()),
            Box::new(pool_usage.clone()),
        ] {
            registry.register(c).expect("metrics are registered once");
        }
        Metrics {
            registry,
            calls,
            errors,
            latency,
            resource_reads,
            unauthorized,
            pool,
            upload_duration,
            uploads,
            search_duration,
            extraction_errors,
            error_rate,
            orphan_nodes,
            pool_usage,
            started: Instant::now(),
            window: Mutex::default(),
            orphans_counted: Mutex::default(),
        }
    }

    fn minute(&self) -> u64 {
        self.started.elapsed().as_secs() / 60
    }

    /// Counts one tool call: its latency and outcome, and the seed's series
    /// for the actions the catalog measures (`measured_as`).
    pub fn observe_call(
        &self,
        tool: &str,
        measured_as: Option<&str>,
        elapsed: Duration,
        outcome: &Result<Value, NeotomaError>,
    ) {
        self.latency
            .with_label_values(&[tool])
            .observe(elapsed.as_secs_f64());
        let ms = elapsed.as_secs_f64() * 1000.0;
        match outcome {
            Ok(_) => self.calls.with_label_values(&[tool, "ok"]).inc(),
            Err(e) => {
                self.calls.with_label_values(&[tool, "error"]).inc();
                self.errors
                    .with_label_values(&[tool, e.code.as_str()])
                    .inc();
            }
        }
        if let Ok(mut w) = self.window.lock() {
            w.add(self.minute(), outcome.is_err());
        }
        match measured_as {
            Some("record_upload") => {
                self.upload_duration.with_label_values(&[tool]).observe(ms);
                let status = if outcome.is_ok() {
                    "success"
                } else {
                    "failure"
                };
                self.uploads.with_label_values(&[tool, status]).inc();
            }
            Some("search") => self.search_duration.with_label_values(&[tool]).observe(ms),
            _ => {}
        }
        if let Some(code) = extraction_error(outcome) {
            self.extraction_errors.with_label_values(&[code]).inc();
        }
    }

    /// The text exposition format.
    pub fn render(&self, pool_in_use: usize, pool_idle: usize, pool_max: usize) -> String {
        self.pool
            .with_label_values(&["in_use"])
            .set(pool_in_use as i64);
        self.pool.with_label_values(&["idle"]).set(pool_idle as i64);
        self.pool_usage
            .set(pool_in_use as f64 / pool_max.max(1) as f64);
        if let Ok(mut w) = self.window.lock() {
            self.error_rate.set(w.rate(self.minute()));
        }
        let mut out = Vec::new();
        let _ = TextEncoder::new().encode(&self.registry.gather(), &mut out);
        String::from_utf8(out).unwrap_or_default()
    }
}

/// The error code of an interpretation that failed in this call: a stored
/// file whose reading failed (the answer's `interpretation.status`), or a
/// call refused because the file could not be read.
fn extraction_error(outcome: &Result<Value, NeotomaError>) -> Option<&'static str> {
    match outcome {
        Ok(v) => (v["interpretation"]["status"] == "failed" || v["status"] == "failed")
            .then_some(ErrorCode::AnalysisFailed.as_str()),
        Err(e) => matches!(
            e.code,
            ErrorCode::AnalysisFailed | ErrorCode::UnsupportedFileType
        )
        .then(|| e.code.as_str()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_the_series() {
        let m = Metrics::new();
        m.calls.with_label_values(&["store", "ok"]).inc();
        m.errors
            .with_label_values(&["store", "VALIDATION_ERROR"])
            .inc();
        m.latency.with_label_values(&["store"]).observe(0.003);
        let text = m.render(2, 6, 8);
        assert!(
            text.contains("neotoma_mcp_tool_calls_total{outcome=\"ok\",tool=\"store\"} 1"),
            "{text}"
        );
        assert!(
            text.contains(
                "neotoma_mcp_tool_errors_total{code=\"VALIDATION_ERROR\",tool=\"store\"} 1"
            )
        );
        assert!(
            text.contains(
                "neotoma_mcp_tool_duration_seconds_bucket{tool=\"store\",le=\"0.005\"} 1"
            )
        );
        assert!(text.contains("neotoma_mcp_db_pool_connections{state=\"idle\"} 6"));
        assert!(
            text.contains("neotoma_db_connection_pool_usage 0.25"),
            "{text}"
        );
    }

    #[test]
    fn seed_series_follow_the_calls() {
        let m = Metrics::new();
        let ok = Ok(serde_json::json!({"interpretation": {"status": "failed"}}));
        let failed = Err(NeotomaError::new(ErrorCode::UnsupportedFileType, "no"));
        let ms = Duration::from_millis(12);
        m.observe_call("store", Some("record_upload"), ms, &ok);
        m.observe_call("store", Some("record_upload"), ms, &failed);
        m.observe_call("retrieve_entities", Some("search"), ms, &Ok(Value::Null));
        m.observe_call("get_version", None, ms, &Ok(Value::Null));
        let text = m.render(0, 1, 1);
        for line in [
            "neotoma_record_upload_total{action=\"store\",status=\"success\"} 1",
            "neotoma_record_upload_total{action=\"store\",status=\"failure\"} 1",
            "neotoma_record_upload_duration_ms_bucket{action=\"store\",le=\"25\"} 2",
            "neotoma_search_duration_ms_count{action=\"retrieve_entities\"} 1",
            "neotoma_extraction_errors_total{error_code=\"ANALYSIS_FAILED\"} 1",
            "neotoma_extraction_errors_total{error_code=\"UNSUPPORTED_FILE_TYPE\"} 1",
            "neotoma_mcp_error_rate 0.25",
            "neotoma_graph_orphan_nodes_total 0",
        ] {
            assert!(text.contains(line), "{line} missing from\n{text}");
        }
    }

    #[test]
    fn the_error_rate_forgets_old_minutes() {
        let mut w = CallWindow::default();
        w.add(0, true);
        w.add(0, false);
        assert_eq!(w.rate(0), 0.5);
        w.add(3, false);
        assert_eq!(w.rate(4), 1.0 / 3.0);
        assert_eq!(w.rate(5), 0.0);
        assert_eq!(w.rate(9), 0.0);
    }
}
