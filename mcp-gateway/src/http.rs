//! Streamable HTTP transport (`/mcp`, behind bearer-token authentication)
//! plus `/healthz`, `/readyz` and `/metrics`, with graceful shutdown on
//! SIGINT/SIGTERM.

use crate::auth;
use crate::server::{AppState, Gateway};
use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

pub struct HttpOptions {
    pub addr: SocketAddr,
    /// Extra `Host` values to accept besides loopback (DNS-rebinding guard).
    pub allowed_hosts: Vec<String>,
    /// Extra browser origins to accept besides loopback ones.
    pub allowed_origins: Vec<String>,
}

const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];
const LOOPBACK_ORIGINS: [&str; 3] = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

pub async fn serve(
    state: Arc<AppState>,
    opts: HttpOptions,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let hosts: Vec<String> = LOOPBACK_HOSTS
        .iter()
        .map(|h| h.to_string())
        .chain(opts.allowed_hosts)
        .collect();
    let origins: Vec<String> = LOOPBACK_ORIGINS
        .iter()
        .map(|o| o.to_string())
        .chain(opts.allowed_origins)
        .collect();
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(shutdown.child_token())
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins);
    let factory_state = state.clone();
    let mcp = StreamableHttpService::new(
        move || Ok(Gateway::new(factory_state.clone())),
        LocalSessionManager::default().into(),
        config,
    );
    let mcp =
        axum::Router::new()
            .nest_service("/mcp", mcp)
            .layer(axum::middleware::from_fn_with_state(
                state.clone(),
                auth::require_token,
            ));
    let app = axum::Router::new()
        .merge(mcp)
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .with_state(state);
    let listener = tokio::net::TcpListener::bind(opts.addr).await?;
    tracing::info!(addr = %listener.local_addr()?, "serving MCP over Streamable HTTP at /mcp");
    axum::serve(listener, app)
        .with_graceful_shutdown(async move { shutdown.cancelled().await })
        .await?;
    Ok(())
}

/// The process is up.
async fn healthz() -> impl IntoResponse {
    Json(json!({"status": "ok"}))
}

/// The database answers and its extension matches this gateway.
async fn readyz(State(state): State<Arc<AppState>>) -> impl IntoResponse {
    match crate::server::check_ready(&state).await {
        Ok(v) => (StatusCode::OK, Json(v)),
        Err(v) => (StatusCode::SERVICE_UNAVAILABLE, Json(v)),
    }
}

/// Prometheus text format.
async fn metrics(State(state): State<Arc<AppState>>) -> impl IntoResponse {
    let (in_use, idle) = state.db.pool_status();
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics.render(in_use, idle),
    )
}
