//! Streamable HTTP transport (`/mcp`, behind bearer-token authentication and
//! per-user sessions) plus `/healthz`, `/readyz`, `/metrics` and signed file
//! URLs, with graceful shutdown on SIGINT/SIGTERM.
//!
//! Memory is bounded for a hostile client: a request body may be as large as
//! the largest file needs (base64) and no larger, requests with large bodies
//! are let in a few at a time, and memory they used is handed back to the
//! system when they finish.

use crate::auth;
use crate::limits::release_memory;
use crate::server::{AppState, Gateway};
use crate::sessions::{self, Sessions};
use crate::web::refuse;
use axum::Json;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::serve::ListenerExt;
use neotoma_core::{ErrorCode, NeotomaError};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

pub struct HttpOptions {
    pub addr: SocketAddr,
    /// Extra `Host` values to accept besides loopback (DNS-rebinding guard).
    pub allowed_hosts: Vec<String>,
    /// Extra browser origins to accept besides loopback ones.
    pub allowed_origins: Vec<String>,
    /// Requests with large bodies handled at once.
    pub max_large_requests: usize,
    /// Sessions one user may keep, and the process in all.
    pub sessions_per_user: usize,
    pub max_sessions: usize,
    /// A session unused this long is closed.
    pub session_idle: Duration,
}

const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];
const LOOPBACK_ORIGINS: [&str; 3] = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

/// A body above this size is "large": it waits for one of the few large
/// request slots.
const LARGE_BODY_BYTES: u64 = 1024 * 1024;
/// Longest a large request waits for a slot before it is told to retry.
const LARGE_BODY_WAIT: Duration = Duration::from_secs(30);

/// The largest body a request may have: a file of `max_file_bytes`,
/// base64-encoded, plus room for the rest of the request.
pub fn max_body_bytes(max_file_bytes: u64) -> usize {
    (max_file_bytes.div_ceil(3) * 4 + LARGE_BODY_BYTES) as usize
}

struct Guards {
    hosts: Vec<String>,
    large: Arc<Semaphore>,
    max_body: u64,
}

/// What only the HTTP surface has, beside the MCP gateway's state.
pub struct Web {
    /// Requests must carry a bearer token (not --no-auth).
    pub require_tokens: bool,
    pub tokens: Arc<auth::TokenCache>,
    /// The OAuth authorization server, over HTTP with tokens required.
    pub oauth: Option<Arc<crate::oauth::OAuth>>,
    /// Who each inspector session (`/inspector`) acts for.
    pub inspector: crate::inspector::InspectorSessions,
}

pub async fn serve(
    state: Arc<AppState>,
    web: Web,
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
    let max_body = max_body_bytes(state.max_file_bytes);
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(shutdown.child_token())
        .with_max_request_body_bytes(max_body)
        .with_allowed_hosts(hosts.clone())
        .with_allowed_origins(origins);
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = Some(opts.session_idle);
    let manager = Arc::new(manager);
    let sessions = Arc::new(Sessions::new(
        manager.clone(),
        opts.sessions_per_user,
        opts.max_sessions,
    ));
    let guards = Arc::new(Guards {
        hosts,
        large: Arc::new(Semaphore::new(opts.max_large_requests.max(1))),
        max_body: max_body as u64,
    });
    let factory_state = state.clone();
    let mcp = StreamableHttpService::new(
        move || Ok(Gateway::new(factory_state.clone())),
        manager,
        config,
    );
    // The last layer added runs first: the token, then body limits, then
    // the session's owner, then the answer to a session's end.
    let mcp = axum::Router::new()
        .nest_service("/mcp", mcp)
        .layer(axum::middleware::from_fn(session_deleted))
        .layer(axum::middleware::from_fn_with_state(
            sessions,
            sessions::bind_sessions,
        ))
        .layer(axum::middleware::from_fn_with_state(
            guards.clone(),
            limit_bodies,
        ))
        .layer(axum::middleware::from_fn_with_state(
            Arc::new(auth::TokenGate {
                db: state.db.clone(),
                default_user: state.default_user,
                require_tokens: web.require_tokens,
                tokens: web.tokens.clone(),
                metrics: state.metrics.clone(),
                oauth: web.oauth.clone(),
            }),
            auth::require_token,
        ));
    let metrics_route = axum::Router::new()
        .route("/metrics", get(metrics))
        .layer(axum::middleware::from_fn_with_state(
            guards.clone(),
            guard_host,
        ))
        .with_state(state.clone());
    // The authorization server, where OAuth is served (docs/oauth.md).
    let logins = web.oauth.is_some();
    let secure_cookies = web
        .oauth
        .as_ref()
        .is_some_and(|o| o.issuer.starts_with("https://"));
    let tokens = web.tokens.clone();
    let oauth_routes = match web.oauth {
        Some(oauth) => crate::oauth::routes()
            .layer(axum::middleware::from_fn_with_state(
                guards.clone(),
                guard_host,
            ))
            .with_state(Arc::new(crate::oauth::OAuthState {
                db: state.db.clone(),
                metrics: state.metrics.clone(),
                oauth: Some(oauth),
            })),
        None => axum::Router::new(),
    };
    // The inspector's pages (docs/inspector.md).
    let inspector_routes = crate::inspector::routes()
        .layer(axum::middleware::from_fn_with_state(guards, guard_host))
        .with_state(Arc::new(crate::inspector::InspectorState {
            db: state.db.clone(),
            default_user: state.default_user,
            require_tokens: web.require_tokens,
            tokens,
            inspector: web.inspector,
            metrics: state.metrics.clone(),
            logins,
            secure_cookies,
        }));
    let app = axum::Router::new()
        .merge(mcp)
        .merge(metrics_route)
        .merge(oauth_routes)
        .merge(inspector_routes)
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        // The workspace graph server's names for them (seed 003).
        .route("/api/health", get(healthz))
        .route("/api/ready", get(readyz))
        .route("/files/{user}/{source}", get(signed_file))
        .with_state(state);
    let listener = tokio::net::TcpListener::bind(opts.addr).await?;
    tracing::info!(addr = %listener.local_addr()?, "serving MCP over Streamable HTTP at /mcp");
    // No Nagle delay: an answer goes out in more than one write (an SSE
    // event, then the message), and a client that acknowledges late would
    // wait ~40 ms for the rest of every answer.
    let listener = listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::warn!(error = %e, "could not set TCP_NODELAY");
        }
    });
    axum::serve(
        listener,
        app.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(async move { shutdown.cancelled().await })
    .await?;
    Ok(())
}

/// A session ended by DELETE is answered 200, as the MCP SDKs' own servers
/// answer it (rmcp answers 202 Accepted, which their clients report as a
/// failed termination).
async fn session_deleted(request: Request, next: Next) -> Response {
    let delete = request.method() == axum::http::Method::DELETE;
    let response = next.run(request).await;
    if !delete || response.status() != StatusCode::ACCEPTED {
        return response;
    }
    let (mut parts, _) = response.into_parts();
    parts.status = StatusCode::OK;
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, axum::body::Body::empty())
}

/// Refuses bodies larger than any request needs before reading them, and
/// lets large ones in a few at a time.
async fn limit_bodies(State(guards): State<Arc<Guards>>, request: Request, next: Next) -> Response {
    let length = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if length.is_some_and(|n| n > guards.max_body) {
        return refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            NeotomaError::new(
                ErrorCode::FileTooLarge,
                format!(
                    "the request body is larger than {} bytes (the file limit, base64-encoded)",
                    guards.max_body
                ),
            ),
        );
    }
    // A body without a length (chunked) may be large too.
    let large =
        request.method() == axum::http::Method::POST && length.is_none_or(|n| n > LARGE_BODY_BYTES);
    if !large {
        return next.run(request).await;
    }
    let permit =
        match tokio::time::timeout(LARGE_BODY_WAIT, guards.large.clone().acquire_owned()).await {
            Ok(Ok(permit)) => permit,
            _ => {
                let mut r = refuse(
                    StatusCode::SERVICE_UNAVAILABLE,
                    NeotomaError::new(
                        ErrorCode::ServiceUnavailable,
                        "too many large requests at once; retry shortly",
                    ),
                );
                r.headers_mut()
                    .insert(header::RETRY_AFTER, header::HeaderValue::from_static("5"));
                return r;
            }
        };
    // The slot is held until the answer has been sent: the call runs while
    // its (streamed) response is open, not only while the body is read.
    let (parts, body) = next.run(request).await.into_parts();
    let guarded = futures_util::stream::unfold(
        (body.into_data_stream(), Some(permit)),
        |(mut stream, permit)| async move {
            use futures_util::StreamExt;
            match stream.next().await {
                Some(item) => Some((item, (stream, permit))),
                None => {
                    drop(permit);
                    release_memory();
                    None
                }
            }
        },
    );
    Response::from_parts(parts, axum::body::Body::from_stream(guarded))
}

/// The `Host` header's name without its port.
fn host_name(headers: &HeaderMap) -> Option<String> {
    let host = headers.get(header::HOST)?.to_str().ok()?;
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next()?,
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    Some(name.to_ascii_lowercase())
}

/// The DNS-rebinding guard of `/mcp`, for routes outside it (`/metrics`).
async fn guard_host(State(guards): State<Arc<Guards>>, request: Request, next: Next) -> Response {
    match host_name(request.headers()) {
        Some(h) if guards.hosts.iter().any(|a| a.eq_ignore_ascii_case(&h)) => {
            next.run(request).await
        }
        _ => refuse(
            StatusCode::FORBIDDEN,
            NeotomaError::new(
                ErrorCode::Forbidden,
                "this Host is not allowed (--allowed-host)",
            ),
        ),
    }
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
        refuse(
            StatusCode::FORBIDDEN,
            NeotomaError::new(ErrorCode::Forbidden, why),
        )
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

/// How long a count of orphan entities is served before it is asked again
/// (it reads every entity: not on every scrape).
const ORPHANS_EVERY: std::time::Duration = std::time::Duration::from_secs(15);

/// Prometheus text format.
async fn metrics(State(state): State<Arc<AppState>>) -> impl IntoResponse {
    refresh_orphan_count(&state).await;
    let (in_use, idle, max) = state.db.pool_status();
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics.render(in_use, idle, max),
    )
}

/// Asks the database for `neotoma_graph_orphan_nodes_total` when the last
/// answer is older than [`ORPHANS_EVERY`]; a failure keeps the last value.
async fn refresh_orphan_count(state: &AppState) {
    {
        let Ok(mut last) = state.metrics.orphans_counted.lock() else {
            return;
        };
        if last.is_some_and(|t| t.elapsed() < ORPHANS_EVERY) {
            return;
        }
        *last = Some(std::time::Instant::now());
    }
    // On a router, every partition's added up.
    let sql = match state.db.is_router() {
        true => "SELECT to_jsonb(neotoma_router.graph_orphan_count())",
        false => "SELECT to_jsonb(neotoma.graph_orphan_count())",
    };
    match state.db.query_json(sql).await {
        Ok(v) => state.metrics.orphan_nodes.set(v.as_i64().unwrap_or(0)),
        Err(e) => tracing::debug!(error = %e, "could not count orphan entities"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names_without_ports() {
        let h = |v: &str| {
            let mut m = HeaderMap::new();
            m.insert(header::HOST, v.parse().unwrap());
            host_name(&m)
        };
        assert_eq!(h("127.0.0.1:8080").as_deref(), Some("127.0.0.1"));
        assert_eq!(h("LocalHost").as_deref(), Some("localhost"));
        assert_eq!(h("[::1]:9").as_deref(), Some("::1"));
        assert_eq!(h("evil.example:80").as_deref(), Some("evil.example"));
    }

    #[test]
    fn body_limit_fits_the_largest_file() {
        let max = max_body_bytes(50 * 1024 * 1024);
        assert!(max as u64 >= 50 * 1024 * 1024 / 3 * 4);
        assert!((max as u64) < 70 * 1024 * 1024);
    }
}
