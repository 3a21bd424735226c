//! Prometheus metrics, served at `/metrics` over HTTP.

use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGaugeVec, Opts, Registry,
    TextEncoder,
};

pub struct Metrics {
    registry: Registry,
    pub calls: IntCounterVec,
    pub errors: IntCounterVec,
    pub latency: HistogramVec,
    pub resource_reads: IntCounterVec,
    pub unauthorized: IntCounter,
    pub pool: IntGaugeVec,
}

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
        for c in [
            Box::new(calls.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(errors.clone()),
            Box::new(latency.clone()),
            Box::new(resource_reads.clone()),
            Box::new(unauthorized.clone()),
            Box::new(pool.clone()),
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
        }
    }

    /// The text exposition format.
    pub fn render(&self, pool_in_use: usize, pool_idle: usize) -> String {
        self.pool
            .with_label_values(&["in_use"])
            .set(pool_in_use as i64);
        self.pool.with_label_values(&["idle"]).set(pool_idle as i64);
        let mut out = Vec::new();
        let _ = TextEncoder::new().encode(&self.registry.gather(), &mut out);
        String::from_utf8(out).unwrap_or_default()
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
        let text = m.render(2, 6);
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
    }
}
