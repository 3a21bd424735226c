//! OAuth 2.1 for remote agents (docs/oauth.md): over HTTP the gateway is
//! its own authorization server, as the MCP authorization specification
//! describes. Protected resource metadata (RFC 9728), authorization server
//! metadata (RFC 8414), dynamic client registration (RFC 7591) and client ID
//! metadata documents, the authorization code grant with PKCE S256 and
//! audience-bound tokens (RFC 8707), refresh with rotation, revocation
//! (RFC 7009). Access tokens are API tokens bound to this gateway's
//! resource, so `/mcp` authenticates them as it does static ones.

pub mod clients;
pub mod consent;
pub mod logins;
mod store;

use crate::database::Database;
use crate::identity::{hash_token, random_hex};
use crate::limits::{SlidingWindow, retry_after_seconds};
use crate::metrics::Metrics;
use axum::Json;
use axum::extract::rejection::{FormRejection, QueryRejection};
use axum::extract::{ConnectInfo, Form, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use base64::Engine;
use clients::Client;
use consent::{AuthorizeParams, ConsentForm};
use neotoma_core::NeotomaError;
use neotoma_core::token_limits::TokenLimits;
use neotoma_core::workspace::WorkspaceName;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// How the gateway serves OAuth (from the command line).
pub struct OAuthOptions {
    /// The gateway's public URL: the issuer; `/mcp` under it is the resource.
    pub public_url: String,
    pub access_token_secs: u64,
    pub refresh_token_secs: u64,
    /// Client metadata documents may be fetched from private addresses.
    pub allow_private_hosts: bool,
}

pub struct OAuth {
    pub issuer: String,
    /// What every access token is bound to: `<issuer>/mcp`.
    pub resource: String,
    access_token_secs: u64,
    refresh_token_secs: u64,
    allow_private_hosts: bool,
    login_failures: SlidingWindow<IpAddr>,
    registrations: SlidingWindow<IpAddr>,
}

/// The scopes a client may ask for: its user's memory (`memory:read`: to
/// read it only), and refresh tokens.
const SCOPES: [&str; 3] = ["memory", "memory:read", "offline_access"];
/// The scope of a read-only grant: its tokens are read-only
/// (docs/security.md, limited tokens).
const READ_ONLY: &str = "memory:read";
/// A scope limiting the grant's tokens to one workspace
/// (`workspace:team`; several such scopes: several workspaces).
const WORKSPACE: &str = "workspace:";
const LOGIN_FAILURES_PER_MINUTE: u32 = 10;
const REGISTRATIONS_PER_HOUR: u32 = 20;
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

impl OAuth {
    pub fn new(opts: &OAuthOptions) -> OAuth {
        let issuer = opts.public_url.trim_end_matches('/').to_string();
        OAuth {
            resource: format!("{issuer}/mcp"),
            issuer,
            access_token_secs: opts.access_token_secs.max(1),
            refresh_token_secs: opts.refresh_token_secs.max(1),
            allow_private_hosts: opts.allow_private_hosts,
            login_failures: SlidingWindow::new(LOGIN_FAILURES_PER_MINUTE, Duration::from_secs(60)),
            registrations: SlidingWindow::new(REGISTRATIONS_PER_HOUR, Duration::from_secs(3600)),
        }
    }

    /// Where a client learns how to get a token for `/mcp` (401 answers
    /// point there).
    pub fn resource_metadata_url(&self) -> String {
        format!("{}/.well-known/oauth-protected-resource/mcp", self.issuer)
    }
}

/// What the authorization server's pages need.
pub struct OAuthState {
    pub db: Database,
    pub metrics: Arc<Metrics>,
    pub oauth: Option<Arc<OAuth>>,
}

/// The routes of the authorization server (served when tokens are required).
pub fn routes() -> axum::Router<Arc<OAuthState>> {
    axum::Router::new()
        .route(
            "/.well-known/oauth-protected-resource",
            get(protected_resource),
        )
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(protected_resource),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            get(authorization_server),
        )
        .route("/register", post(register))
        .route("/authorize", get(authorize_page).post(authorize_decision))
        .route("/token", post(token))
        .route("/revoke", post(revoke))
        .layer(axum::extract::DefaultBodyLimit::max(
            clients::MAX_METADATA_BYTES,
        ))
}

/// The authorization server's settings (the routes exist only with them).
fn oauth(state: &OAuthState) -> Option<&OAuth> {
    state.oauth.as_deref()
}

/// An OAuth error answer (`{error, error_description}`), never cached.
fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response {
    no_store(
        (
            status,
            Json(json!({"error": error, "error_description": description})),
        )
            .into_response(),
    )
}

/// A token or revocation request that is not a form of strings.
fn unreadable_form() -> Response {
    oauth_error(
        StatusCode::BAD_REQUEST,
        "invalid_request",
        "the body must be application/x-www-form-urlencoded parameters, each given once",
    )
}

fn no_store(mut r: Response) -> Response {
    let h = r.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    r
}

fn unavailable(e: NeotomaError) -> Response {
    tracing::warn!(error = %e, "OAuth: the database failed");
    oauth_error(
        StatusCode::SERVICE_UNAVAILABLE,
        "temporarily_unavailable",
        "the database is unavailable; try again",
    )
}

async fn protected_resource(State(state): State<Arc<OAuthState>>) -> Response {
    let Some(o) = oauth(&state) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    Json(json!({
        "resource": o.resource,
        "authorization_servers": [o.issuer],
        "scopes_supported": ["memory", READ_ONLY],
        "bearer_methods_supported": ["header"],
        "resource_name": "Neotoma",
    }))
    .into_response()
}

async fn authorization_server(State(state): State<Arc<OAuthState>>) -> Response {
    let Some(o) = oauth(&state) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let at = |path: &str| format!("{}{path}", o.issuer);
    Json(json!({
        "issuer": o.issuer,
        "authorization_endpoint": at("/authorize"),
        "token_endpoint": at("/token"),
        "registration_endpoint": at("/register"),
        "revocation_endpoint": at("/revoke"),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": clients::AUTH_METHODS,
        "revocation_endpoint_auth_methods_supported": clients::AUTH_METHODS,
        "scopes_supported": SCOPES,
        "client_id_metadata_document_supported": true,
        "authorization_response_iss_parameter_supported": true,
    }))
    .into_response()
}

/// Dynamic client registration (RFC 7591).
async fn register(
    State(state): State<Arc<OAuthState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    body: axum::body::Bytes,
) -> Response {
    let Some(o) = oauth(&state) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    if let Err(wait) = o.registrations.try_acquire(&peer.ip()) {
        let mut r = oauth_error(
            StatusCode::TOO_MANY_REQUESTS,
            "too_many_requests",
            &format!(
                "this address registered {REGISTRATIONS_PER_HOUR} clients in the last hour; retry later"
            ),
        );
        r.headers_mut().insert(
            header::RETRY_AFTER,
            HeaderValue::from(retry_after_seconds(wait)),
        );
        return r;
    }
    let request: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_client_metadata",
                &format!("the body is not JSON: {e}"),
            );
        }
    };
    let metadata = match clients::register(&request) {
        Ok(m) => m,
        Err(refused) => {
            return oauth_error(StatusCode::BAD_REQUEST, refused.error, &refused.description);
        }
    };
    let (Ok(client_id), Ok(secret)) = (random_hex(16), random_hex(32)) else {
        return oauth_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            "no randomness",
        );
    };
    let client_id = format!("ntc_{client_id}");
    let secret =
        (metadata["token_endpoint_auth_method"] != "none").then(|| format!("nts_{secret}"));
    let secret_hash = secret.as_deref().map(hash_token);
    if let Err(e) =
        store::register_client(&state.db, &client_id, &metadata, secret_hash.as_deref()).await
    {
        return unavailable(e);
    }
    let mut answer = metadata;
    answer["client_id"] = json!(client_id);
    answer["client_id_issued_at"] = json!(unix_now());
    if let Some(secret) = secret {
        answer["client_secret"] = json!(secret);
        answer["client_secret_expires_at"] = json!(0);
    }
    no_store((StatusCode::CREATED, Json(answer)).into_response())
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The client a `client_id` names: registered, or its metadata document.
async fn find_client(state: &OAuthState, o: &OAuth, client_id: &str) -> Result<Client, String> {
    if clients::is_metadata_url(client_id) {
        let document =
            clients::fetch_document(client_id, o.allow_private_hosts, FETCH_TIMEOUT).await?;
        return clients::from_document(client_id, &document).map_err(|r| r.description);
    }
    let stored = store::client(&state.db, client_id)
        .await
        .map_err(|e| format!("the database is unavailable: {e}"))?;
    if stored.is_null() {
        return Err(format!("unknown client_id {client_id:?}"));
    }
    Ok(clients::from_registration(client_id, &stored))
}

/// Whether `given` is one of the client's redirect URIs: exactly, except
/// that a loopback one may use any port (RFC 8252 7.3).
fn registered_redirect(client: &Client, given: &str) -> bool {
    let without_port = |u: &str| {
        let mut url = url::Url::parse(u).ok()?;
        let loopback =
            url.scheme() == "http" && matches!(url.host_str(), Some("127.0.0.1" | "[::1]"));
        (loopback && url.set_port(None).is_ok()).then_some(url)
    };
    client
        .redirect_uris
        .iter()
        .any(|r| r == given || without_port(r).is_some_and(|a| Some(a) == without_port(given)))
}

/// A checked authorization request.
struct Request {
    client: Client,
    redirect_uri: String,
    state: Option<String>,
    code_challenge: String,
    scope: String,
}

/// Back to the client with `pairs` (and `state`, `iss`).
fn back_to_client(
    o: &OAuth,
    redirect_uri: &str,
    state: Option<&str>,
    pairs: &[(&str, &str)],
) -> Response {
    let Ok(mut url) = url::Url::parse(redirect_uri) else {
        return consent_error(StatusCode::BAD_REQUEST, "the redirect URI is not a URL");
    };
    {
        let mut q = url.query_pairs_mut();
        for (k, v) in pairs {
            q.append_pair(k, v);
        }
        if let Some(s) = state {
            q.append_pair("state", s);
        }
        q.append_pair("iss", &o.issuer);
    }
    no_store(Redirect::to(url.as_str()).into_response())
}

/// The consent page's policy. No `form-action`: browsers apply it to the
/// redirect that follows the form too, which goes to the client.
const CONSENT_CSP: &str =
    "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'";

fn page(status: StatusCode, html: String) -> Response {
    no_store(crate::html::page(status, html, CONSENT_CSP))
}

fn consent_error(status: StatusCode, message: &str) -> Response {
    page(status, consent::error_page(message))
}

/// Checks an authorization request. Every error is told to the person on
/// a page: only a request that shows the consent page ever goes back to
/// the client (with a code, or `access_denied` when the owner denies).
async fn check_request(
    state: &OAuthState,
    o: &OAuth,
    p: &AuthorizeParams,
) -> Result<Request, Response> {
    let Some(client_id) = p.client_id.as_deref().filter(|c| !c.is_empty()) else {
        return Err(consent_error(
            StatusCode::BAD_REQUEST,
            "client_id is missing",
        ));
    };
    let client = find_client(state, o, client_id)
        .await
        .map_err(|e| consent_error(StatusCode::BAD_REQUEST, &e))?;
    let redirect_uri = match (&p.redirect_uri, client.redirect_uris.as_slice()) {
        (Some(given), _) if registered_redirect(&client, given) => given.clone(),
        (None, [only]) => only.clone(),
        (Some(given), _) => {
            return Err(consent_error(
                StatusCode::BAD_REQUEST,
                &format!("{given:?} is not a redirect URI this client registered"),
            ));
        }
        (None, _) => {
            return Err(consent_error(
                StatusCode::BAD_REQUEST,
                "redirect_uri is missing and the client registered several",
            ));
        }
    };
    // The other errors are shown on a page too, never sent to the
    // redirect URI: a request nobody has seen a consent page for does not
    // redirect anywhere, or any registered client would make this server
    // an open redirector (OAuth 2.0 Security BCP, 4.11.2).
    let back = |error: &str, description: &str| {
        consent_error(StatusCode::BAD_REQUEST, &format!("{error}: {description}"))
    };
    if p.response_type.as_deref() != Some("code") {
        return Err(back(
            "unsupported_response_type",
            "response_type must be \"code\"",
        ));
    }
    let Some(challenge) = p.code_challenge.as_deref() else {
        return Err(back(
            "invalid_request",
            "code_challenge is required (PKCE with S256)",
        ));
    };
    if p.code_challenge_method.as_deref() != Some("S256") {
        return Err(back(
            "invalid_request",
            "code_challenge_method must be S256",
        ));
    }
    if !pkce_value(challenge) {
        return Err(back(
            "invalid_request",
            "code_challenge must be 43 to 128 characters of base64url",
        ));
    }
    if p.resource.as_deref().is_some_and(|r| r != o.resource) {
        return Err(back(
            "invalid_target",
            &format!("this server issues tokens for {} only", o.resource),
        ));
    }
    let scope = granted_scope(p.scope.as_deref())
        .map_err(|s| back("invalid_scope", &format!("unknown scope {s:?}")))?;
    Ok(Request {
        client,
        redirect_uri,
        state: p.state.clone(),
        code_challenge: challenge.to_string(),
        scope,
    })
}

/// The scope granted for a requested one: `memory` (or `memory:read` when
/// that alone is asked), plus `offline_access` when asked, plus the
/// `workspace:<name>` scopes asked (sorted); an unknown scope is refused
/// (its name).
fn granted_scope(requested: Option<&str>) -> Result<String, String> {
    let asked: Vec<&str> = requested.unwrap_or_default().split_whitespace().collect();
    let workspace = |s: &str| {
        s.strip_prefix(WORKSPACE)
            .is_some_and(|n| WorkspaceName::parse("scope", n).is_ok())
    };
    if let Some(unknown) = asked.iter().find(|s| !SCOPES.contains(s) && !workspace(s)) {
        return Err(unknown.to_string());
    }
    let memory = if asked.contains(&READ_ONLY) && !asked.contains(&"memory") {
        READ_ONLY
    } else {
        "memory"
    };
    let mut granted = vec![memory.to_string()];
    if asked.contains(&"offline_access") {
        granted.push("offline_access".into());
    }
    let names: BTreeSet<&str> = asked
        .iter()
        .filter_map(|s| s.strip_prefix(WORKSPACE))
        .collect();
    granted.extend(names.iter().map(|n| format!("{WORKSPACE}{n}")));
    Ok(granted.join(" "))
}

/// The workspaces a granted scope limits its tokens to (none: all).
fn scope_workspaces(scope: &str) -> Vec<String> {
    scope
        .split_whitespace()
        .filter_map(|s| s.strip_prefix(WORKSPACE))
        .map(str::to_string)
        .collect()
}

/// Whether a granted scope reads only.
fn reads_only(scope: &str) -> bool {
    scope.split_whitespace().any(|s| s == READ_ONLY)
}

/// The scope the owner allowed: the one granted, read-only when they
/// chose so on the consent page, in the workspaces they named (among those
/// asked, if any): they can narrow it, never widen it. A workspace list
/// that does not read, or names one not asked, is refused (why).
fn allowed_scope(
    granted: &str,
    read_only_chosen: bool,
    workspaces_chosen: Option<&str>,
) -> Result<String, String> {
    let read_only = read_only_chosen && !reads_only(granted);
    let mut scope: Vec<String> = granted
        .split_whitespace()
        .map(|s| {
            if read_only && s == "memory" {
                READ_ONLY
            } else {
                s
            }
        })
        .map(str::to_string)
        .collect();
    let Some(chosen) = workspaces_chosen.filter(|w| !w.trim().is_empty()) else {
        return Ok(scope.join(" "));
    };
    let chosen = TokenLimits::parse_workspaces(chosen).map_err(|e| e.message)?;
    let asked = scope_workspaces(granted);
    if let Some(other) = chosen
        .iter()
        .find(|w| !asked.is_empty() && !asked.contains(w))
    {
        return Err(format!(
            "`{other}` was not asked for: choose among {}",
            asked.join(", ")
        ));
    }
    scope.retain(|s| !s.starts_with(WORKSPACE));
    scope.extend(chosen.iter().map(|n| format!("{WORKSPACE}{n}")));
    Ok(scope.join(" "))
}

/// A PKCE code verifier or challenge: 43 to 128 unreserved characters.
fn pkce_value(s: &str) -> bool {
    (43..=128).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// The S256 challenge of a verifier: BASE64URL(SHA256(verifier)).
fn s256(verifier: &str) -> String {
    use sha2::Digest;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(sha2::Sha256::digest(verifier.as_bytes()))
}

async fn authorize_page(
    State(state): State<Arc<OAuthState>>,
    params: Result<Query<AuthorizeParams>, QueryRejection>,
) -> Response {
    let Ok(Query(params)) = params else {
        return consent_error(
            StatusCode::BAD_REQUEST,
            "the request's parameters cannot be read",
        );
    };
    let Some(o) = oauth(&state) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    match check_request(&state, o, &params).await {
        Ok(req) => page(
            StatusCode::OK,
            consent::consent_page(&params, req.client.display_name(), &req.scope, None),
        ),
        Err(r) => r,
    }
}

/// Who credentials log in: a one-time code, else a username and password
/// (the consent page; the inspector's sign-in).
pub(crate) async fn log_in(
    db: &Database,
    code: Option<&str>,
    username: Option<&str>,
    password: Option<&str>,
) -> Result<Option<uuid::Uuid>, NeotomaError> {
    if let Some(code) = code.map(str::trim).filter(|c| !c.is_empty()) {
        return store::use_login_code(db, &hash_token(code)).await;
    }
    let (Some(username), Some(password)) = (username, password) else {
        return Ok(None);
    };
    let login = store::login(db, username.trim()).await?;
    let password = password.to_string();
    // Argon2 takes tens of milliseconds of CPU: off the async threads. An
    // unknown name is checked against a decoy so it takes as long.
    let (user, hash) = match login {
        Some((user, hash)) => (Some(user), hash),
        None => (None, logins::decoy_hash().to_string()),
    };
    let matches = tokio::task::spawn_blocking(move || logins::verify_password(&password, &hash))
        .await
        .unwrap_or(false);
    Ok(user.filter(|_| matches))
}

async fn authorize_decision(
    State(state): State<Arc<OAuthState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    form: Result<Form<ConsentForm>, FormRejection>,
) -> Response {
    let Ok(Form(form)) = form else {
        return consent_error(StatusCode::BAD_REQUEST, "the form cannot be read");
    };
    // Only this page's own form: no site may log a person in for a client.
    if !crate::web::same_origin(&headers) {
        return consent_error(StatusCode::FORBIDDEN, "log in on this server's own page");
    }
    let Some(o) = oauth(&state) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let req = match check_request(&state, o, &form.params).await {
        Ok(req) => req,
        Err(r) => return r,
    };
    if form.decision.as_deref() != Some("allow") {
        return back_to_client(
            o,
            &req.redirect_uri,
            req.state.as_deref(),
            &[
                ("error", "access_denied"),
                ("error_description", "the owner denied access"),
            ],
        );
    }
    let address = peer.ip();
    // The attempt holds a place among the failures until it is known to
    // have succeeded, so concurrent guesses cannot all pass the limit.
    let attempt = o.login_failures.reserve(&address);
    if let Err(wait) = attempt {
        let page_html = consent::consent_page(
            &form.params,
            req.client.display_name(),
            &req.scope,
            Some(&format!(
                "Too many failed logins from this address: try again in {} seconds.",
                retry_after_seconds(wait)
            )),
        );
        return page(StatusCode::TOO_MANY_REQUESTS, page_html);
    }
    let user = match log_in(
        &state.db,
        form.code.as_deref(),
        form.username.as_deref(),
        form.password.as_deref(),
    )
    .await
    {
        Ok(Some(user)) => user,
        Ok(None) => {
            state.metrics.unauthorized.inc();
            return page(
                StatusCode::UNAUTHORIZED,
                consent::consent_page(
                    &form.params,
                    req.client.display_name(),
                    &req.scope,
                    Some("The username and password, or the one-time code, are not right."),
                ),
            );
        }
        Err(e) => {
            if let Ok(at) = attempt {
                o.login_failures.forgive(&address, at);
            }
            return unavailable(e);
        }
    };
    if let Ok(at) = attempt {
        o.login_failures.forgive(&address, at);
    }
    let Ok(code) = random_hex(32) else {
        return consent_error(StatusCode::INTERNAL_SERVER_ERROR, "no randomness");
    };
    let code_hash = hash_token(&code);
    let scope = match allowed_scope(
        &req.scope,
        form.read_only.as_deref() == Some("on"),
        form.workspaces.as_deref(),
    ) {
        Ok(scope) => scope,
        Err(why) => {
            return page(
                StatusCode::BAD_REQUEST,
                consent::consent_page(
                    &form.params,
                    req.client.display_name(),
                    &req.scope,
                    Some(&why),
                ),
            );
        }
    };
    let authorization = store::Authorization {
        user,
        client_id: &req.client.client_id,
        redirect_uri: &req.redirect_uri,
        code_challenge: &req.code_challenge,
        resource: &o.resource,
        scope: &scope,
        code_hash: &code_hash,
    };
    if let Err(e) = store::authorize(&state.db, &authorization).await {
        return unavailable(e);
    }
    tracing::info!(%user, client = %req.client.client_id, "OAuth: the owner allowed a client");
    back_to_client(
        o,
        &req.redirect_uri,
        req.state.as_deref(),
        &[("code", &code)],
    )
}

/// A token or revocation request (form-encoded).
#[derive(Debug, Default, Deserialize)]
struct TokenRequest {
    grant_type: Option<String>,
    code: Option<String>,
    redirect_uri: Option<String>,
    code_verifier: Option<String>,
    refresh_token: Option<String>,
    resource: Option<String>,
    client_id: Option<String>,
    client_secret: Option<String>,
    /// (revocation) the token to revoke.
    token: Option<String>,
}

/// The client a token request authenticates as: its id from HTTP Basic or
/// the form, its secret checked when it has one.
async fn authenticate_client(
    state: &OAuthState,
    headers: &HeaderMap,
    form: &TokenRequest,
) -> Result<Client, Response> {
    let basic = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Basic ")
                .or_else(|| v.strip_prefix("basic "))
        })
        .and_then(|b| {
            base64::engine::general_purpose::STANDARD
                .decode(b.trim())
                .ok()
        })
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|s| {
            let (id, secret) = s.split_once(':')?;
            let decode = |x: &str| {
                url::form_urlencoded::parse(format!("x={x}").as_bytes())
                    .next()
                    .map(|(_, v)| v.into_owned())
            };
            Some((decode(id)?, decode(secret)?))
        });
    let invalid = |description: &str| {
        let mut r = oauth_error(StatusCode::UNAUTHORIZED, "invalid_client", description);
        if basic.is_some() {
            r.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Basic realm=\"neotoma\""),
            );
        }
        r
    };
    let (client_id, secret) = match (&basic, &form.client_id) {
        (Some((id, secret)), _) => (id.clone(), Some(secret.clone())),
        (None, Some(id)) => (id.clone(), form.client_secret.clone()),
        (None, None) => return Err(invalid("the client is not identified (client_id)")),
    };
    if clients::is_metadata_url(&client_id) {
        // A metadata document's client is public: its grant names it.
        return Ok(Client {
            client_id,
            name: None,
            redirect_uris: Vec::new(),
            secret_hash: None,
        });
    }
    let stored = store::client(&state.db, &client_id)
        .await
        .map_err(unavailable)?;
    if stored.is_null() {
        return Err(invalid("unknown client"));
    }
    let client = clients::from_registration(&client_id, &stored);
    if let Some(expected) = &client.secret_hash
        && secret.as_deref().map(hash_token).as_ref() != Some(expected)
    {
        return Err(invalid("the client secret is missing or wrong"));
    }
    Ok(client)
}

async fn token(
    State(state): State<Arc<OAuthState>>,
    headers: HeaderMap,
    form: Result<Form<TokenRequest>, FormRejection>,
) -> Response {
    let Ok(Form(form)) = form else {
        return unreadable_form();
    };
    let Some(o) = oauth(&state) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let client = match authenticate_client(&state, &headers, &form).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    if form.resource.as_deref().is_some_and(|r| r != o.resource) {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_target",
            &format!("this server issues tokens for {} only", o.resource),
        );
    }
    let (Ok(access), Ok(refresh)) = (random_hex(32), random_hex(32)) else {
        return oauth_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            "no randomness",
        );
    };
    let (access, refresh) = (format!("nta_{access}"), format!("ntr_{refresh}"));
    let (access_hash, refresh_hash) = (hash_token(&access), hash_token(&refresh));
    let name: String = format!("OAuth: {}", client.display_name())
        .chars()
        .take(200)
        .collect();
    let issue = store::Issue {
        access_hash: &access_hash,
        access_seconds: o.access_token_secs as f64,
        refresh_hash: &refresh_hash,
        refresh_seconds: o.refresh_token_secs as f64,
        name: &name,
    };
    let missing = |what: &str| {
        oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            &format!("{what} is required"),
        )
    };
    let outcome = match form.grant_type.as_deref() {
        Some("authorization_code") => {
            let Some(code) = form.code.as_deref() else {
                return missing("code");
            };
            let Some(verifier) = form.code_verifier.as_deref() else {
                return missing("code_verifier (PKCE)");
            };
            if !pkce_value(verifier) {
                return oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_grant",
                    "code_verifier must be 43 to 128 unreserved characters",
                );
            }
            let Some(redirect_uri) = form.redirect_uri.as_deref() else {
                return missing("redirect_uri");
            };
            store::exchange_code(
                &state.db,
                &hash_token(code),
                &client.client_id,
                redirect_uri,
                &s256(verifier),
                &o.resource,
                &issue,
            )
            .await
        }
        Some("refresh_token") => {
            let Some(old) = form.refresh_token.as_deref() else {
                return missing("refresh_token");
            };
            store::refresh(
                &state.db,
                &hash_token(old),
                &client.client_id,
                &o.resource,
                &issue,
            )
            .await
        }
        Some(other) => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "unsupported_grant_type",
                &format!(
                    "grant_type {other:?} is not supported (authorization_code, refresh_token)"
                ),
            );
        }
        None => return missing("grant_type"),
    };
    let granted = match outcome {
        Ok(v) => v,
        Err(e) => return unavailable(e),
    };
    if let Some(error) = granted["error"].as_str() {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            error,
            granted["error_description"].as_str().unwrap_or_default(),
        );
    }
    no_store(
        Json(json!({
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": o.access_token_secs,
            "refresh_token": refresh,
            "scope": granted["scope"],
        }))
        .into_response(),
    )
}

/// Token revocation (RFC 7009): the grant of the token ends, if the token
/// was issued to this client; answered 200 whatever it was.
async fn revoke(
    State(state): State<Arc<OAuthState>>,
    headers: HeaderMap,
    form: Result<Form<TokenRequest>, FormRejection>,
) -> Response {
    let Ok(Form(form)) = form else {
        return unreadable_form();
    };
    if oauth(&state).is_none() {
        return StatusCode::NOT_FOUND.into_response();
    }
    let client = match authenticate_client(&state, &headers, &form).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let Some(token) = form.token.as_deref() else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "token is required",
        );
    };
    if let Err(e) = store::revoke(&state.db, &hash_token(token), &client.client_id).await {
        return unavailable(e);
    }
    no_store(StatusCode::OK.into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s256_is_unpadded_base64url_of_sha256() {
        // As Python's hashlib and base64.urlsafe_b64encode compute it.
        assert_eq!(
            s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWjOEjXk"),
            "VYFANLqdx_HDV6BqEhluZJ63rtrIPROSSFdB3P6G83I"
        );
        assert!(pkce_value("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWjOEjXk"));
        assert!(!pkce_value("short"));
        assert!(!pkce_value(&"a b".repeat(20)));
    }

    #[test]
    fn scopes_are_memory_and_offline_access() {
        assert_eq!(granted_scope(None).unwrap(), "memory");
        assert_eq!(granted_scope(Some("memory")).unwrap(), "memory");
        assert_eq!(
            granted_scope(Some("memory offline_access")).unwrap(),
            "memory offline_access"
        );
        assert_eq!(granted_scope(Some("memory admin")).unwrap_err(), "admin");
        assert_eq!(granted_scope(Some("memory:read")).unwrap(), "memory:read");
        assert_eq!(
            granted_scope(Some("offline_access memory:read")).unwrap(),
            "memory:read offline_access"
        );
        // Asking for both is asking for all.
        assert_eq!(granted_scope(Some("memory:read memory")).unwrap(), "memory");
    }

    #[test]
    fn the_owner_may_narrow_a_grant_to_reading_never_widen_it() {
        let allowed = |g, r| allowed_scope(g, r, None).unwrap();
        assert_eq!(
            allowed("memory offline_access", true),
            "memory:read offline_access"
        );
        assert_eq!(allowed("memory", false), "memory");
        assert_eq!(allowed("memory:read", false), "memory:read");
        assert_eq!(allowed("memory:read", true), "memory:read");
        assert!(reads_only("memory:read offline_access") && !reads_only("memory"));
    }

    #[test]
    fn a_grant_can_be_limited_to_workspaces_and_narrowed_never_widened() {
        assert_eq!(
            granted_scope(Some("memory workspace:team workspace:notes workspace:team")).unwrap(),
            "memory workspace:notes workspace:team"
        );
        assert_eq!(
            granted_scope(Some("memory workspace:Bad")).unwrap_err(),
            "workspace:Bad"
        );
        assert_eq!(
            scope_workspaces("memory offline_access workspace:team"),
            vec!["team".to_string()]
        );
        // The owner names workspaces: any when none were asked ...
        assert_eq!(
            allowed_scope("memory offline_access", false, Some("team, notes")).unwrap(),
            "memory offline_access workspace:notes workspace:team"
        );
        // ... some of those asked, never another.
        let asked = "memory workspace:notes workspace:team";
        assert_eq!(
            allowed_scope(asked, true, Some("team")).unwrap(),
            "memory:read workspace:team"
        );
        assert!(allowed_scope(asked, false, Some("secret")).is_err());
        assert!(allowed_scope(asked, false, Some("Not a name")).is_err());
        assert_eq!(allowed_scope(asked, false, Some(" ")).unwrap(), asked);
    }

    #[test]
    fn loopback_redirects_may_change_port_only() {
        let c = Client {
            client_id: "c".into(),
            name: None,
            redirect_uris: vec![
                "http://127.0.0.1:3000/cb".into(),
                "https://app.example/cb".into(),
            ],
            secret_hash: None,
        };
        assert!(registered_redirect(&c, "http://127.0.0.1:3000/cb"));
        assert!(registered_redirect(&c, "http://127.0.0.1:49152/cb"));
        assert!(!registered_redirect(&c, "http://127.0.0.1:49152/other"));
        assert!(registered_redirect(&c, "https://app.example/cb"));
        assert!(!registered_redirect(&c, "https://app.example:444/cb"));
        assert!(!registered_redirect(&c, "https://app.example/cb?x=1"));
    }
}
