//! Who a call acts for.
//!
//! Over stdio the user is configured (`--user-id`) and is the machine's
//! owner: an operator. Over HTTP each request carries `Authorization: Bearer
//! <token>`; tokens are made with `neotoma-mcp token create` and stored
//! hashed in the database (only their SHA-256 is kept), each with a scope
//! (`user` or `operator`) and an optional expiry. A missing, unknown, expired
//! or revoked token is answered 401 with a `WWW-Authenticate` header before
//! MCP sees the request.
//!
//! Lookups are cached, and the cache is only trusted while this gateway
//! listens to the database's token notifications: creating or revoking a
//! token notifies every gateway, which forgets that token at once. Without
//! the notification channel (not yet connected, or lost) nothing is cached.

use crate::database::Database;
use crate::identity::{Caller, TokenIdentity, hash_token};
use crate::limits::{SlidingWindow, retry_after_seconds};
use crate::metrics::Metrics;
use crate::oauth::OAuth;
use crate::web::refuse;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use neotoma_core::{ErrorCode, NeotomaError};
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use uuid::Uuid;

/// The Postgres channel token changes are announced on.
pub const TOKEN_CHANNEL: &str = "neotoma_tokens";

/// How long a known token is remembered (revocations arrive by notification).
const KNOWN_TTL: Duration = Duration::from_secs(60);
/// How long an unknown token is remembered, so a flood of random tokens does
/// not become a flood of database lookups.
const UNKNOWN_TTL: Duration = Duration::from_secs(5);
/// Most tokens remembered.
const CACHE_CAPACITY: usize = 10_000;
/// Failed authentications per client address and minute before it is told
/// to wait (429) without a lookup.
const FAILURES_PER_MINUTE: u32 = 30;

#[derive(Clone)]
struct Cached {
    identity: Option<TokenIdentity>,
    at: Instant,
}

impl Cached {
    fn fresh(&self) -> bool {
        let ttl = if self.identity.is_some() {
            KNOWN_TTL
        } else {
            UNKNOWN_TTL
        };
        self.at.elapsed() < ttl
    }
}

/// Token hash → what it stands for, while the notification channel is up.
pub struct TokenCache {
    entries: Mutex<HashMap<String, Cached>>,
    listening: AtomicBool,
    /// Bumped by every change: a lookup that started before a change does
    /// not cache its (possibly stale) answer.
    generation: AtomicU64,
    failures: SlidingWindow<IpAddr>,
}

impl Default for TokenCache {
    fn default() -> Self {
        TokenCache {
            entries: Mutex::default(),
            listening: AtomicBool::new(false),
            generation: AtomicU64::new(0),
            failures: SlidingWindow::new(FAILURES_PER_MINUTE, Duration::from_secs(60)),
        }
    }
}

impl crate::database::Listener for TokenCache {
    fn listening(&self, up: bool) {
        self.set_listening(up);
    }

    /// A token changed (created, revoked): its hash.
    fn notified(&self, hash: &str) {
        self.forget(hash);
    }
}

impl TokenCache {
    /// The notification channel is up (true) or lost (false: forget all).
    pub fn set_listening(&self, up: bool) {
        self.generation.fetch_add(1, Ordering::SeqCst);
        if !up && let Ok(mut m) = self.entries.lock() {
            m.clear();
        }
        self.listening.store(up, Ordering::SeqCst);
    }

    /// A token changed (created, revoked): forget what was known of it.
    pub fn forget(&self, hash: &str) {
        self.generation.fetch_add(1, Ordering::SeqCst);
        if let Ok(mut m) = self.entries.lock() {
            m.remove(hash);
        }
    }

    fn cached(&self, hash: &str) -> Option<Option<TokenIdentity>> {
        if !self.listening.load(Ordering::SeqCst) {
            return None;
        }
        let m = self.entries.lock().ok()?;
        m.get(hash)
            .filter(|c| c.fresh())
            .map(|c| c.identity.clone())
    }

    /// Caches what a lookup begun at `generation` found, unless something
    /// changed since.
    fn remember(&self, hash: String, identity: Option<TokenIdentity>, generation: u64) {
        if !self.listening.load(Ordering::SeqCst) {
            return;
        }
        if let Ok(mut m) = self.entries.lock() {
            if self.generation.load(Ordering::SeqCst) != generation {
                return;
            }
            if m.len() >= CACHE_CAPACITY {
                m.retain(|_, c| c.fresh());
            }
            if m.len() < CACHE_CAPACITY {
                m.insert(
                    hash,
                    Cached {
                        identity,
                        at: Instant::now(),
                    },
                );
            }
        }
    }

    pub(crate) async fn identity(
        &self,
        db: &Database,
        token: &str,
    ) -> Result<Option<TokenIdentity>, NeotomaError> {
        let hash = hash_token(token);
        let identity = match self.cached(&hash) {
            Some(known) => known,
            None => {
                let generation = self.generation.load(Ordering::SeqCst);
                let found = db.authenticate(&hash).await?;
                // Looked up at most once a minute while cached: when it was
                // last used, noted beside the call, not before it.
                if found.is_some() {
                    let (db, hash) = (db.clone(), hash.clone());
                    tokio::spawn(async move { db.touch_token(&hash).await });
                }
                self.remember(hash, found.clone(), generation);
                found
            }
        };
        Ok(identity.filter(TokenIdentity::valid_now))
    }
}

/// What the token check in front of `/mcp` needs.
pub struct TokenGate {
    pub db: Database,
    /// Who requests act for when tokens are not required (--no-auth).
    pub default_user: Uuid,
    /// HTTP requests must carry a bearer token.
    pub require_tokens: bool,
    pub tokens: Arc<TokenCache>,
    pub metrics: Arc<Metrics>,
    /// Where OAuth is served: its tokens are good for its resource only.
    pub oauth: Option<Arc<OAuth>>,
}

/// A 401 whose challenge says, where OAuth is served, where to learn how
/// to get a token (RFC 9728 5.1).
fn unauthorized(state: &TokenGate, error: Option<&str>, message: &str) -> Response {
    let mut challenge = "Bearer realm=\"neotoma\"".to_string();
    if let Some(oauth) = &state.oauth {
        challenge.push_str(&format!(
            ", resource_metadata=\"{}\", scope=\"memory\"",
            oauth.resource_metadata_url()
        ));
    }
    if let Some(e) = error {
        challenge.push_str(&format!(", error=\"{e}\""));
    }
    let mut r = refuse(
        StatusCode::UNAUTHORIZED,
        NeotomaError::new(ErrorCode::Unauthorized, message),
    );
    if let Ok(v) = HeaderValue::from_str(&challenge) {
        r.headers_mut().insert(header::WWW_AUTHENTICATE, v);
    }
    r
}

/// The token of an `Authorization` header; the scheme is case-insensitive
/// (RFC 7235).
fn bearer(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(char::is_whitespace)?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// Axum middleware in front of `/mcp`: establishes the [`Caller`].
pub async fn require_token(
    State(state): State<Arc<TokenGate>>,
    mut request: Request,
    next: Next,
) -> Response {
    if !state.require_tokens {
        request.extensions_mut().insert(Caller {
            user: state.default_user,
            operator: false,
            remote: true,
            token: None,
        });
        return next.run(request).await;
    }
    let address = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(a)| a.ip());
    if let Some(wait) = address.and_then(|ip| state.tokens.failures.blocked(&ip)) {
        return too_many_failures(wait);
    }
    let failed = || {
        state.metrics.unauthorized.inc();
        if let Some(ip) = address {
            state.tokens.failures.record(&ip);
        }
    };
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer)
        .map(str::to_string);
    let Some(token) = presented else {
        failed();
        return unauthorized(
            &state,
            None,
            "a bearer token is required (neotoma-mcp token create, or OAuth: docs/oauth.md)",
        );
    };
    match state.tokens.identity(&state.db, &token).await {
        // An OAuth token is good for the resource it was issued for only.
        Ok(Some(TokenIdentity {
            resource: Some(resource),
            ..
        })) if state.oauth.as_ref().is_none_or(|o| o.resource != resource) => {
            failed();
            unauthorized(
                &state,
                Some("invalid_token"),
                "the bearer token was issued for another resource",
            )
        }
        Ok(Some(identity)) => {
            request.extensions_mut().insert(Caller {
                user: identity.user,
                operator: identity.operator,
                remote: true,
                token: identity.id,
            });
            // What tools/list shows this session.
            request.extensions_mut().insert(identity.limits);
            next.run(request).await
        }
        Ok(None) => {
            failed();
            unauthorized(
                &state,
                Some("invalid_token"),
                "the bearer token is unknown, expired or revoked",
            )
        }
        Err(e) => (
            StatusCode::SERVICE_UNAVAILABLE,
            axum::Json(e.envelope(None)),
        )
            .into_response(),
    }
}

fn too_many_failures(wait: Duration) -> Response {
    let seconds = retry_after_seconds(wait);
    let mut r = refuse(
        StatusCode::TOO_MANY_REQUESTS,
        NeotomaError::new(
            ErrorCode::RateLimitExceeded,
            format!(
                "too many failed authentications from this address; retry after {seconds} seconds"
            ),
        )
        .with("retry_after_seconds", seconds),
    );
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::SystemTime;

    #[test]
    fn bearer_scheme_is_case_insensitive() {
        assert_eq!(bearer("Bearer abc"), Some("abc"));
        assert_eq!(bearer("BEARER abc"), Some("abc"));
        assert_eq!(bearer("bearer   abc  "), Some("abc"));
        assert_eq!(bearer("Basic abc"), None);
        assert_eq!(bearer("Bearer"), None);
        assert_eq!(bearer("Bearerabc"), None);
    }

    #[test]
    fn nothing_is_cached_without_the_notification_channel() {
        let cache = TokenCache::default();
        let id = TokenIdentity {
            user: Uuid::nil(),
            operator: false,
            expires_at: None,
            id: None,
            resource: None,
            limits: Default::default(),
        };
        let generation = |c: &TokenCache| c.generation.load(Ordering::SeqCst);
        cache.remember("h".into(), Some(id.clone()), generation(&cache));
        assert_eq!(cache.cached("h"), None);
        cache.set_listening(true);
        cache.remember("h".into(), Some(id.clone()), generation(&cache));
        assert_eq!(cache.cached("h"), Some(Some(id.clone())));
        cache.forget("h");
        assert_eq!(cache.cached("h"), None);
        // A lookup that began before a change does not cache its answer.
        let before = generation(&cache);
        cache.forget("other");
        cache.remember("h".into(), Some(id.clone()), before);
        assert_eq!(cache.cached("h"), None);
        cache.remember("h".into(), Some(id), generation(&cache));
        cache.set_listening(false);
        assert_eq!(cache.cached("h"), None);
    }

    #[test]
    fn expired_tokens_are_not_valid() {
        let past = TokenIdentity {
            user: Uuid::nil(),
            operator: false,
            expires_at: Some(SystemTime::now() - Duration::from_secs(1)),
            id: None,
            resource: None,
            limits: Default::default(),
        };
        assert!(!past.valid_now());
        let later = TokenIdentity {
            expires_at: Some(SystemTime::now() + Duration::from_secs(60)),
            ..past.clone()
        };
        assert!(later.valid_now());
    }
}
