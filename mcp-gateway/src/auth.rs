//! Who a call acts for.
//!
//! Over stdio the user is configured (`--user-id`). Over HTTP each request
//! carries `Authorization: Bearer <token>`; tokens are made with
//! `neotoma-mcp token create` and stored hashed in the database (only their
//! SHA-256 is kept). A missing or unknown token is answered 401 with a
//! `WWW-Authenticate` header before MCP sees the request.

use crate::database::Database;
use crate::server::AppState;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use neotoma_core::canonical::sha256_hex;
use serde_json::json;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use uuid::Uuid;

/// The user an HTTP request was authenticated as (a request extension).
#[derive(Clone, Copy, Debug)]
pub struct AuthUser(pub Uuid);

/// How long a token lookup is remembered (so a revocation takes at most this
/// long to bite).
const CACHE_TTL: Duration = Duration::from_secs(10);

/// A new random token: `ntm_` and 64 hex digits (244 random bits).
pub fn new_token() -> String {
    format!("ntm_{}{}", Uuid::new_v4().simple(), Uuid::new_v4().simple())
}

pub fn hash_token(token: &str) -> String {
    sha256_hex(token.as_bytes())
}

/// Token hash → (user or none, when looked up).
#[derive(Default)]
pub struct TokenCache(Mutex<HashMap<String, (Option<Uuid>, Instant)>>);

impl TokenCache {
    async fn user_for(
        &self,
        db: &Database,
        token: &str,
    ) -> Result<Option<Uuid>, neotoma_core::NeotomaError> {
        let hash = hash_token(token);
        if let Some((user, at)) = self.0.lock().map(|m| m.get(&hash).copied()).ok().flatten()
            && at.elapsed() < CACHE_TTL
        {
            return Ok(user);
        }
        let user = db.authenticate(&hash).await?;
        if let Ok(mut m) = self.0.lock() {
            m.retain(|_, (_, at)| at.elapsed() < CACHE_TTL);
            m.insert(hash, (user, Instant::now()));
        }
        Ok(user)
    }
}

fn unauthorized(error: Option<&str>, message: &str) -> Response {
    let challenge = match error {
        Some(e) => format!("Bearer realm=\"neotoma\", error=\"{e}\""),
        None => "Bearer realm=\"neotoma\"".to_string(),
    };
    let mut r = (
        StatusCode::UNAUTHORIZED,
        axum::Json(json!({"error": {"code": "UNAUTHORIZED", "message": message, "details": {}}})),
    )
        .into_response();
    if let Ok(v) = HeaderValue::from_str(&challenge) {
        r.headers_mut().insert(header::WWW_AUTHENTICATE, v);
    }
    r
}

/// Axum middleware in front of `/mcp`.
pub async fn require_token(
    State(state): State<Arc<AppState>>,
    mut request: Request,
    next: Next,
) -> Response {
    if !state.require_tokens {
        request
            .extensions_mut()
            .insert(AuthUser(state.default_user));
        return next.run(request).await;
    }
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .map(str::trim)
        .map(str::to_string);
    let Some(token) = presented else {
        state.metrics.unauthorized.inc();
        return unauthorized(
            None,
            "a bearer token is required (neotoma-mcp token create)",
        );
    };
    match state.tokens.user_for(&state.db, &token).await {
        Ok(Some(user)) => {
            request.extensions_mut().insert(AuthUser(user));
            next.run(request).await
        }
        Ok(None) => {
            state.metrics.unauthorized.inc();
            unauthorized(
                Some("invalid_token"),
                "the bearer token is unknown or revoked",
            )
        }
        Err(e) => (
            StatusCode::SERVICE_UNAVAILABLE,
            axum::Json(e.envelope(None)),
        )
            .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_and_hash_stably() {
        let a = new_token();
        assert!(a.starts_with("ntm_") && a.len() == 68, "{a}");
        assert_ne!(a, new_token());
        assert_eq!(hash_token(&a), hash_token(&a));
        assert_ne!(hash_token(&a), a);
        assert_eq!(hash_token(&a).len(), 64);
    }
}
