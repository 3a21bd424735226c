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
use crate::http::refuse;
use crate::limits::{SlidingWindow, retry_after_seconds};
use crate::server::AppState;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use neotoma_core::canonical::sha256_hex;
use neotoma_core::{ErrorCode, NeotomaError};
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};
use uuid::Uuid;

/// Who a call acts for, and how far it is trusted (an HTTP request
/// extension; stdio calls get [`Caller::local`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Caller {
    pub user: Uuid,
    /// May change what all users share (global schemas).
    pub operator: bool,
    /// Came over the network: reads server files only under --file-root.
    pub remote: bool,
    /// The API token it came with: whose context (set_context) applies.
    pub token: Option<Uuid>,
}

impl Caller {
    /// The machine's owner, over stdio.
    pub fn local(user: Uuid) -> Caller {
        Caller {
            user,
            operator: true,
            remote: false,
            token: None,
        }
    }
}

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

/// A new random token: `ntm_` and 64 hex digits (256 bits from the
/// operating system's generator).
pub fn new_token() -> anyhow::Result<String> {
    Ok(format!("ntm_{}", random_hex(32)?))
}

/// `bytes` random bytes from the operating system's generator, in hex.
pub fn random_hex(bytes: usize) -> anyhow::Result<String> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).map_err(|e| anyhow::anyhow!("random generator: {e}"))?;
    Ok(neotoma_core::canonical::hex(&buf))
}

pub fn hash_token(token: &str) -> String {
    sha256_hex(token.as_bytes())
}

/// What the database says a valid token stands for.
#[derive(Clone, Debug, PartialEq)]
pub struct TokenIdentity {
    pub user: Uuid,
    pub operator: bool,
    pub expires_at: Option<SystemTime>,
    /// The token's id (None from an extension before 0.12.0).
    pub id: Option<Uuid>,
    /// The resource an OAuth access token is bound to (None: a static
    /// token, good for any gateway of the database).
    pub resource: Option<String>,
}

impl TokenIdentity {
    fn valid_now(&self) -> bool {
        self.expires_at.is_none_or(|t| t > SystemTime::now())
    }
}

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
                self.remember(hash, found.clone(), generation);
                found
            }
        };
        Ok(identity.filter(TokenIdentity::valid_now))
    }
}

/// A 401 whose challenge says, where OAuth is served, where to learn how
/// to get a token (RFC 9728 5.1).
fn unauthorized(state: &AppState, error: Option<&str>, message: &str) -> Response {
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
    State(state): State<Arc<AppState>>,
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

    #[test]
    fn tokens_are_random_and_hash_stably() {
        let a = new_token().unwrap();
        assert!(a.starts_with("ntm_") && a.len() == 68, "{a}");
        assert_ne!(a, new_token().unwrap());
        assert_eq!(hash_token(&a), hash_token(&a));
        assert_ne!(hash_token(&a), a);
        assert_eq!(hash_token(&a).len(), 64);
    }

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
        };
        assert!(!past.valid_now());
        let later = TokenIdentity {
            expires_at: Some(SystemTime::now() + Duration::from_secs(60)),
            ..past.clone()
        };
        assert!(later.valid_now());
    }
}
