//! Streamable HTTP transport (`/mcp`) plus health endpoints, with graceful
//! shutdown on SIGINT/SIGTERM.

use crate::server::{AppState, Gateway};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
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
}

pub async fn serve(
    state: Arc<AppState>,
    opts: HttpOptions,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let mut config =
        StreamableHttpServerConfig::default().with_cancellation_token(shutdown.child_token());
    if !opts.allowed_hosts.is_empty() {
        let mut hosts = vec![
            "localhost".to_string(),
            "127.0.0.1".to_string(),
            "::1".to_string(),
        ];
        hosts.extend(opts.allowed_hosts.iter().cloned());
        config = config.with_allowed_hosts(hosts);
    }
    let factory_state = state.clone();
    let mcp = StreamableHttpService::new(
        move || Ok(Gateway::new(factory_state.clone())),
        LocalSessionManager::default().into(),
        config,
    );
    let app = axum::Router::new()
        .nest_service("/mcp", mcp)
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
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
