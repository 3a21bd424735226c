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
        // Files travel base64-encoded inside tool calls.
        .with_max_request_body_bytes(96 * 1024 * 1024)
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
        .route("/files/{user}/{source}", get(signed_file))
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

#[derive(serde::Deserialize)]
struct Signature {
    expires: i64,
    kid: uuid::Uuid,
    sig: String,
}

/// A file behind a signed URL (retrieve_file_url): the URL is the
/// capability, so no bearer token; a wrong, expired or revoked signature is
/// 403.
async fn signed_file(
    State(state): State<Arc<AppState>>,
    axum::extract::Path((user, source)): axum::extract::Path<(uuid::Uuid, uuid::Uuid)>,
    query: Result<axum::extract::Query<Signature>, axum::extract::rejection::QueryRejection>,
) -> axum::response::Response {
    let forbidden = |why: &str| {
        (
            StatusCode::FORBIDDEN,
            Json(json!({"error": {"code": "FORBIDDEN", "message": why, "details": {}}})),
        )
            .into_response()
    };
    let Ok(axum::extract::Query(q)) = query else {
        return forbidden("the URL is not signed");
    };
    match state
        .db
        .signed_file(user, source, q.expires, q.kid, &q.sig)
        .await
    {
        Ok(Some((mime, name, bytes))) => {
            let mut response = (
                [(
                    header::CONTENT_TYPE,
                    mime.unwrap_or_else(|| "application/octet-stream".into()),
                )],
                bytes,
            )
                .into_response();
            if let Some(name) = name
                && let Ok(v) = axum::http::HeaderValue::from_str(&format!(
                    "inline; filename=\"{}\"",
                    name.replace(['"', '\\', '\r', '\n'], "_")
                ))
            {
                response
                    .headers_mut()
                    .insert(header::CONTENT_DISPOSITION, v);
            }
            response
        }
        Ok(None) => forbidden("the signature is wrong or expired"),
        Err(e) => (StatusCode::SERVICE_UNAVAILABLE, Json(e.envelope(None))).into_response(),
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
