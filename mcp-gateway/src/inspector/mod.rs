//! The inspector (`/inspector`): web pages where a person sees and fixes
//! what their agents remember. Every page is built from the same SQL
//! actions the agents call, as the signed-in user, so it shows exactly what
//! they see, and every change (a correction) goes through an action's
//! validation, row level security and audit.
//!
//! Signing in: with `--no-auth` (loopback) the pages open directly for
//! `--user-id`; otherwise a person signs in once with an API token (a
//! `user` or `operator` one, not an OAuth token: those are bound to `/mcp`)
//! or, where OAuth logins exist, a username and password or one-time code.
//! The session is a random id in an HttpOnly, SameSite=Strict cookie; the
//! database keeps its hash (`neotoma.inspector_sessions`), so every gateway
//! process sees it, and it ends on the next request when what it was signed
//! in with ends: the token revoked or expired, the login removed or its
//! password changed, the user erased; or after 8 idle hours.

mod pages;
mod sessions;

use crate::database::Database;
use crate::identity::Caller;
use crate::limits::SlidingWindow;
use crate::metrics::Metrics;
use axum::extract::rejection::{FormRejection, QueryRejection};
use axum::extract::{ConnectInfo, Form, Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use neotoma_core::NeotomaError;
use serde::Deserialize;
use serde_json::{Value, json};
use sessions::SignedInWith;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

const COOKIE: &str = "neotoma_inspector";
/// A session unused this long ends.
const IDLE: Duration = Duration::from_secs(8 * 3600);
const FAILED_SIGN_INS_PER_MINUTE: u32 = 10;
/// Sign-ins per client address and minute, successful or not: one
/// address cannot open sessions without end.
const SIGN_INS_PER_MINUTE: u32 = 30;
const PAGE_SIZE: i64 = 25;

/// The inspector's limits on signing in (the sessions are the database's).
pub struct InspectorSessions {
    sign_ins: SlidingWindow<IpAddr>,
    failures: SlidingWindow<IpAddr>,
    /// Sessions one user keeps; one more closes the least recently used.
    per_user: usize,
}

impl InspectorSessions {
    pub fn new(per_user: usize) -> Self {
        InspectorSessions {
            sign_ins: SlidingWindow::new(SIGN_INS_PER_MINUTE, Duration::from_secs(60)),
            failures: SlidingWindow::new(FAILED_SIGN_INS_PER_MINUTE, Duration::from_secs(60)),
            per_user: per_user.max(1),
        }
    }
}

/// What the inspector's pages need.
pub struct InspectorState {
    pub db: Database,
    /// Who the pages act for when tokens are not required (--no-auth).
    pub default_user: uuid::Uuid,
    pub require_tokens: bool,
    /// API tokens sign in as their user.
    pub tokens: Arc<crate::auth::TokenCache>,
    /// Who each inspector session acts for.
    pub inspector: InspectorSessions,
    pub metrics: Arc<Metrics>,
    /// The users' logins are served (with OAuth): the sign-in page offers
    /// them.
    pub logins: bool,
    /// The gateway is reached over https (OAuth's issuer says so): cookies
    /// are sent over https only.
    pub secure_cookies: bool,
}

pub fn routes() -> axum::Router<Arc<InspectorState>> {
    axum::Router::new()
        .route(
            "/inspector",
            get(|| async { Redirect::to("/inspector/overview") }),
        )
        .route("/inspector/overview", get(overview))
        .route("/inspector/schema", get(schema))
        .route("/inspector/schema/promote", post(promote))
        .route("/inspector/entities/{id}/merge", post(merge))
        .route("/inspector/entities/{id}/delete", post(delete))
        .route("/inspector/entities/{id}/restore", post(restore))
        .route("/inspector/login", get(login_page).post(login))
        .route("/inspector/logout", post(logout))
        .route("/inspector/entities", get(entities))
        .route("/inspector/entities/{id}", get(entity))
        .route("/inspector/entities/{id}/correct", post(correct))
        .route("/inspector/graph/{id}", get(graph))
        .route("/inspector/timeline", get(timeline))
        .route("/inspector/sources", get(sources))
        .route("/inspector/sources/{id}", get(source))
        .route("/inspector/static/{file}", get(asset))
}

fn cookie(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == COOKIE)
        .map(|(_, v)| v)
}

/// The caller of a request: the session's, or `--user-id` without auth;
/// else what to answer (the sign-in page, or that the database is down).
async fn signed_in(state: &InspectorState, headers: &HeaderMap) -> Result<Caller, Response> {
    if !state.require_tokens {
        return Ok(Caller {
            user: state.default_user,
            operator: false,
            remote: true,
            token: None,
        });
    }
    let Some(id) = cookie(headers) else {
        return Err(to_login());
    };
    match sessions::find(&state.db, id, IDLE).await {
        Ok(Some(caller)) => Ok(caller),
        Ok(None) => Err(to_login()),
        Err(e) => Err(unavailable(&e)),
    }
}

/// The database cannot be reached: a page saying so.
fn unavailable(e: &NeotomaError) -> Response {
    tracing::warn!(error = %e, "inspector: the database failed");
    page(
        StatusCode::SERVICE_UNAVAILABLE,
        pages::error_page("The database cannot be reached: try again shortly.", None),
    )
}

fn who(state: &InspectorState, caller: &Caller) -> Option<String> {
    state.require_tokens.then(|| caller.user.to_string())
}

/// The inspector's policy: scripts only from this server.
const INSPECTOR_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
     img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

fn page(status: StatusCode, html: String) -> Response {
    crate::html::page(status, html, INSPECTOR_CSP)
}

fn to_login() -> Response {
    Redirect::to("/inspector/login").into_response()
}

/// Runs an action as `caller`: one SQL function call, one transaction.
async fn act(
    state: &InspectorState,
    caller: &Caller,
    action: &str,
    args: Value,
    write: bool,
) -> Result<Value, NeotomaError> {
    state
        .db
        .call(&format!("neotoma.{action}"), caller, &args, write)
        .await
}

/// An action's refusal as a page: what the request asked for is not there
/// (404), not the caller's (403) or not right (400); the database failed
/// (503). Never a 500: the inspector passes only what the person typed.
fn failed(state: &InspectorState, caller: &Caller, e: &NeotomaError) -> Response {
    let status = match e.code.http_status() {
        404 => StatusCode::NOT_FOUND,
        401 | 403 => StatusCode::FORBIDDEN,
        429 => StatusCode::TOO_MANY_REQUESTS,
        400..=499 => StatusCode::BAD_REQUEST,
        _ => StatusCode::SERVICE_UNAVAILABLE,
    };
    page(
        status,
        pages::error_page(
            &format!("{}: {}", e.code.as_str(), e.message),
            who(state, caller).as_deref(),
        ),
    )
}

async fn login_page(State(state): State<Arc<InspectorState>>, headers: HeaderMap) -> Response {
    if signed_in(&state, &headers).await.is_ok() {
        return Redirect::to("/inspector/overview").into_response();
    }
    page(StatusCode::OK, pages::login_page(None, state.logins))
}

#[derive(Deserialize, Default)]
struct LoginForm {
    token: Option<String>,
    username: Option<String>,
    password: Option<String>,
    /// A one-time code from an operator (`neotoma-mcp login code`).
    code: Option<String>,
}

fn given(value: &Option<String>) -> Option<&str> {
    value.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

/// Who the form signs in, and with what: an API token not bound to a
/// resource, else a one-time code, else a username and password.
async fn sign_in(
    state: &InspectorState,
    form: &LoginForm,
) -> Result<Option<(uuid::Uuid, SignedInWith)>, NeotomaError> {
    if let Some(token) = given(&form.token) {
        return Ok(state
            .tokens
            .identity(&state.db, token)
            .await?
            .filter(|i| i.resource.is_none())
            .and_then(|i| Some((i.user, SignedInWith::Token(i.id?)))));
    }
    if !state.logins {
        return Ok(None);
    }
    if let Some(code) = given(&form.code) {
        let user = crate::oauth::log_in(&state.db, Some(code), None, None).await?;
        return Ok(user.map(|u| (u, SignedInWith::Code)));
    }
    let (Some(username), Some(password)) = (given(&form.username), form.password.as_deref()) else {
        return Ok(None);
    };
    let user = crate::oauth::log_in(&state.db, None, Some(username), Some(password)).await?;
    Ok(user.map(|u| (u, SignedInWith::Login)))
}

async fn login(
    State(state): State<Arc<InspectorState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    form: Result<Form<LoginForm>, FormRejection>,
) -> Response {
    let logins = state.logins;
    let refused =
        |status: StatusCode, why: &str| page(status, pages::login_page(Some(why), logins));
    let Ok(Form(form)) = form else {
        return refused(StatusCode::BAD_REQUEST, "The form cannot be read.");
    };
    if !crate::web::same_origin(&headers) {
        return refused(
            StatusCode::FORBIDDEN,
            "Sign in from this server's own page.",
        );
    }
    let address = peer.ip();
    // Every sign-in counts, whether it succeeds or not; a failure, or an
    // attempt still being checked, counts against the failure limit too
    // (its place is held before the check, so concurrent guesses cannot
    // all pass it).
    let too_many = || {
        refused(
            StatusCode::TOO_MANY_REQUESTS,
            "Too many sign-ins from this address: wait a minute.",
        )
    };
    if state.inspector.failures.blocked(&address).is_some()
        || state.inspector.sign_ins.try_acquire(&address).is_err()
    {
        return too_many();
    }
    let Ok(attempt) = state.inspector.failures.reserve(&address) else {
        return too_many();
    };
    let (user, with) = match sign_in(&state, &form).await {
        Ok(Some(found)) => found,
        Ok(None) => {
            state.metrics.unauthorized.inc();
            return refused(
                StatusCode::UNAUTHORIZED,
                "That token, username and password, or one-time code is not right.",
            );
        }
        Err(e) => {
            state.inspector.failures.forgive(&address, attempt);
            return unavailable(&e);
        }
    };
    state.inspector.failures.forgive(&address, attempt);
    let id = match sessions::open(&state.db, user, with, state.inspector.per_user, IDLE).await {
        Ok(Some(id)) => id,
        Ok(None) => {
            return refused(
                StatusCode::UNAUTHORIZED,
                "That token or login has just ended: sign in again.",
            );
        }
        Err(e) => return unavailable(&e),
    };
    let secure = state.secure_cookies;
    let cookie = format!(
        "{COOKIE}={id}; Path=/inspector; HttpOnly; SameSite=Strict; Max-Age={}{}",
        IDLE.as_secs(),
        if secure { "; Secure" } else { "" }
    );
    let mut r = Redirect::to("/inspector/overview").into_response();
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    r
}

async fn logout(State(state): State<Arc<InspectorState>>, headers: HeaderMap) -> Response {
    if let Some(id) = cookie(&headers)
        && let Err(e) = sessions::close(&state.db, id).await
    {
        return unavailable(&e);
    }
    let mut r = Redirect::to("/inspector/login").into_response();
    r.headers_mut().insert(
        header::SET_COOKIE,
        HeaderValue::from_static(
            "neotoma_inspector=; Path=/inspector; HttpOnly; SameSite=Strict; Max-Age=0",
        ),
    );
    r
}

#[derive(Deserialize, Default)]
struct EntitiesQuery {
    search: Option<String>,
    #[serde(rename = "type")]
    entity_type: Option<String>,
    /// A workspace of the user's (empty: the one in context).
    workspace: Option<String>,
    offset: Option<i64>,
}

/// The user's entity types with how many entities each has (those with
/// any: the resources list them).
async fn type_counts(
    state: &InspectorState,
    caller: &Caller,
    workspace: &str,
) -> Result<Vec<(String, i64)>, NeotomaError> {
    let in_workspace = |mut args: Value| {
        if !workspace.is_empty() {
            args["workspace"] = json!(workspace);
        }
        args
    };
    let resources = act(
        state,
        caller,
        "list_resources",
        in_workspace(json!({})),
        false,
    )
    .await?;
    let mut counts = Vec::new();
    for r in resources["resources"].as_array().into_iter().flatten() {
        let Some(t) = r["uri"]
            .as_str()
            .and_then(|u| u.strip_prefix("neotoma://entities/"))
        else {
            continue;
        };
        let page = act(
            state,
            caller,
            "retrieve_entities",
            in_workspace(json!({"entity_type": t, "limit": 1})),
            false,
        )
        .await?;
        counts.push((t.to_string(), page["total"].as_i64().unwrap_or(0)));
    }
    Ok(counts)
}

async fn entities(
    State(state): State<Arc<InspectorState>>,
    headers: HeaderMap,
    query: Result<Query<EntitiesQuery>, QueryRejection>,
) -> Response {
    let caller = match signed_in(&state, &headers).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let Query(q) = query.unwrap_or_default();
    let search = q.search.unwrap_or_default();
    let entity_type = q.entity_type.unwrap_or_default();
    let workspace = q.workspace.unwrap_or_default();
    let offset = q.offset.unwrap_or(0).max(0);
    let mut args = json!({"limit": PAGE_SIZE, "offset": offset});
    if !workspace.is_empty() {
        args["workspace"] = json!(workspace);
    }
    if !search.trim().is_empty() {
        args["search"] = json!(search);
    }
    if !entity_type.is_empty() {
        args["entity_type"] = json!(entity_type);
    }
    let list = match act(&state, &caller, "retrieve_entities", args, false).await {
        Ok(v) => v,
        Err(e) => return failed(&state, &caller, &e),
    };
    let (types, spaces) = match (
        type_counts(&state, &caller, &workspace).await,
        act(&state, &caller, "list_workspaces", json!({}), false).await,
    ) {
        (Ok(t), Ok(w)) => (t, w),
        (Err(e), _) | (_, Err(e)) => return failed(&state, &caller, &e),
    };
    let workspaces: Vec<String> = spaces["workspaces"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|w| w["name"].as_str().map(str::to_string))
        .collect();
    let view = pages::EntitiesView {
        types: &types,
        list: &list,
        search: &search,
        entity_type: &entity_type,
        workspaces: &workspaces,
        workspace: &workspace,
        offset,
        limit: PAGE_SIZE,
    };
    page(
        StatusCode::OK,
        pages::entities_page(&view, who(&state, &caller).as_deref()),
    )
}

#[derive(Deserialize, Default)]
struct EntityQuery {
    at: Option<String>,
    /// Valid time: the snapshot as true in the world then.
    valid_at: Option<String>,
    corrected: Option<String>,
}

/// A `datetime-local` value has no offset: it is read as UTC.
fn instant(at: &str) -> String {
    let has_offset = at.ends_with('Z') || at.get(16..).is_some_and(|t| t.contains(['+', '-']));
    match at.len() {
        16 if !has_offset => format!("{at}:00Z"),
        n if n > 16 && !has_offset => format!("{at}Z"),
        _ => at.to_string(),
    }
}

async fn render_entity(
    state: &InspectorState,
    caller: &Caller,
    id: &str,
    at: Option<&str>,
    valid_at: Option<&str>,
    notice: Option<&str>,
    error: Option<&str>,
) -> Response {
    // Deleted entities are shown too (marked), so they can be restored.
    let mut args =
        json!({"entity_id": id, "include_contradictions": true, "include_deleted": true});
    if let Some(at) = at {
        args["at"] = json!(instant(at));
    }
    if let Some(valid_at) = valid_at {
        args["valid_at"] = json!(instant(valid_at));
    }
    let snapshot = match act(state, caller, "retrieve_entity_snapshot", args, false).await {
        Ok(v) => v,
        Err(e) => return failed(state, caller, &e),
    };
    // A deleted entity's history and links are not read (the actions
    // refuse it) until it is restored.
    let (observations, relationships) = if snapshot["deleted_at"].is_string() {
        (json!({"observations": []}), json!({"relationships": []}))
    } else {
        let one = json!({"entity_id": id});
        // The relationships holding at the valid time shown (default now).
        let mut related = one.clone();
        if let Some(valid_at) = valid_at {
            related["valid_at"] = json!(instant(valid_at));
        }
        match (
            act(state, caller, "list_observations", one, false).await,
            act(state, caller, "list_relationships", related, false).await,
        ) {
            (Ok(o), Ok(r)) => (o, r),
            (Err(e), _) | (_, Err(e)) => return failed(state, caller, &e),
        }
    };
    // The names of the entities it is related to (one hop).
    let neighbors = json!({"entity_id": id, "max_hops": 1, "direction": "both"});
    let related = if snapshot["deleted_at"].is_string() {
        json!({})
    } else {
        act(state, caller, "retrieve_related_entities", neighbors, false)
            .await
            .unwrap_or_default()
    };
    let view = pages::EntityView {
        snapshot: &snapshot,
        observations: &observations,
        relationships: &relationships,
        related: &related,
        at,
        valid_at,
        notice,
        error,
    };
    page(
        if error.is_some() {
            StatusCode::BAD_REQUEST
        } else {
            StatusCode::OK
        },
        pages::entity_page(&view, who(state, caller).as_deref()),
    )
}

async fn entity(
    State(state): State<Arc<InspectorState>>,
    headers: HeaderMap,
    Path(id): Path<String>,
    query: Result<Query<EntityQuery>, QueryRejection>,
) -> Response {
    let caller = match signed_in(&state, &headers).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let Query(q) = query.unwrap_or_default();
    let notice = q.corrected.map(|f| format!("Corrected {f}."));
    let at = q.at.filter(|a| !a.is_empty());
    let valid_at = q.valid_at.filter(|a| !a.is_empty());
    render_entity(
        &state,
        &caller,
        &id,
        at.as_deref(),
        valid_at.as_deref(),
        notice.as_deref(),
        None,
    )
    .await
}

#[derive(Deserialize, Default)]
struct CorrectForm {
    entity_type: Option<String>,
    field: Option<String>,
    value: Option<String>,
}

/// A typed value: JSON when it reads as JSON (a number, true, an array…),
/// else the text itself.
fn typed(value: &str) -> Value {
    serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.to_string()))
}

async fn correct(
    State(state): State<Arc<InspectorState>>,
    headers: HeaderMap,
    Path(id): Path<String>,
    form: Result<Form<CorrectForm>, FormRejection>,
) -> Response {
    let caller = match signed_in(&state, &headers).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    if !crate::web::same_origin(&headers) {
        return cross_origin();
    }
    let form = form.map(|Form(f)| f).unwrap_or_default();
    let field = form.field.unwrap_or_default();
    let args = json!({
        "entity_id": id,
        "entity_type": form.entity_type.unwrap_or_default(),
        "field": field,
        "value": typed(&form.value.unwrap_or_default()),
    });
    match act(&state, &caller, "correct", args, true).await {
        Ok(_) => Redirect::to(&format!(
            "/inspector/entities/{}?corrected={}",
            crate::html::url_component(&id),
            crate::html::url_component(&field)
        ))
        .into_response(),
        Err(e) => {
            let why = format!("{}: {}", e.code.as_str(), e.message);
            render_entity(&state, &caller, &id, None, None, None, Some(&why)).await
        }
    }
}

#[derive(Deserialize, Default)]
struct GraphQuery {
    hops: Option<u8>,
    #[serde(rename = "type")]
    relationship_type: Option<String>,
}

async fn graph(
    State(state): State<Arc<InspectorState>>,
    headers: HeaderMap,
    Path(id): Path<String>,
    query: Result<Query<GraphQuery>, QueryRejection>,
) -> Response {
    let caller = match signed_in(&state, &headers).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let Query(q) = query.unwrap_or_default();
    let mut args =
        json!({"entity_id": id, "max_hops": q.hops.unwrap_or(2).clamp(1, 5), "direction": "both"});
    if let Some(t) = q.relationship_type.as_deref().filter(|t| !t.is_empty()) {
        args["relationship_types"] = json!([t]);
    }
    let (center, related) = match (
        act(
            &state,
            &caller,
            "retrieve_entity_snapshot",
            json!({"entity_id": id}),
            false,
        )
        .await,
        act(&state, &caller, "retrieve_related_entities", args, false).await,
    ) {
        (Ok(c), Ok(r)) => (c, r),
        (Err(e), _) | (_, Err(e)) => return failed(&state, &caller, &e),
    };
    let node = |id: &Value, label: &Value, class: &str| json!({"data": {"id": id, "label": label}, "classes": class});
    let mut elements = vec![node(
        &center["entity_id"],
        &center["canonical_name"],
        "center",
    )];
    for e in related["entities"].as_array().into_iter().flatten() {
        elements.push(node(&e["id"], &e["canonical_name"], ""));
    }
    for r in related["relationships"].as_array().into_iter().flatten() {
        elements.push(json!({"data": {"id": r["id"], "source": r["source_entity_id"],
                                      "target": r["target_entity_id"], "label": r["relationship_type"]}}));
    }
    page(
        StatusCode::OK,
        pages::graph_page(
            &id,
            pages::display_name(&center, &id),
            q.relationship_type.as_deref().unwrap_or_default(),
            &Value::Array(elements),
            who(&state, &caller).as_deref(),
        ),
    )
}

#[derive(Deserialize, Default)]
struct TimelineQuery {
    event_type: Option<String>,
    after_date: Option<String>,
    before_date: Option<String>,
}

async fn timeline(
    State(state): State<Arc<InspectorState>>,
    headers: HeaderMap,
    query: Result<Query<TimelineQuery>, QueryRejection>,
) -> Response {
    let caller = match signed_in(&state, &headers).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let Query(q) = query.unwrap_or_default();
    let mut args = json!({"limit": 500});
    for (key, value) in [
        ("event_type", &q.event_type),
        ("after_date", &q.after_date),
        ("before_date", &q.before_date),
    ] {
        if let Some(v) = value.as_deref().filter(|v| !v.is_empty()) {
            args[key] = json!(v);
        }
    }
    match act(&state, &caller, "list_timeline_events", args, false).await {
        Ok(events) => page(
            StatusCode::OK,
            pages::timeline_page(
                &events,
                &pages::TimelineFilter {
                    event_type: q.event_type.as_deref().unwrap_or_default(),
                    after_date: q.after_date.as_deref().unwrap_or_default(),
                    before_date: q.before_date.as_deref().unwrap_or_default(),
                },
                who(&state, &caller).as_deref(),
            ),
        ),
        Err(e) => failed(&state, &caller, &e),
    }
}

async fn sources(State(state): State<Arc<InspectorState>>, headers: HeaderMap) -> Response {
    let caller = match signed_in(&state, &headers).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let all = json!({"uri": "neotoma://sources"});
    match act(&state, &caller, "read_resource", all, false).await {
        Ok(list) => page(
            StatusCode::OK,
            pages::sources_page(&list, who(&state, &caller).as_deref()),
        ),
        Err(e) => failed(&state, &caller, &e),
    }
}

async fn source(
    State(state): State<Arc<InspectorState>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let caller = match signed_in(&state, &headers).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let around = json!({"node_id": id, "node_type": "source"});
    let neighborhood = match act(
        &state,
        &caller,
        "retrieve_graph_neighborhood",
        around,
        false,
    )
    .await
    {
        Ok(n) => n,
        Err(e) => return failed(&state, &caller, &e),
    };
    // A stored file opens through its signed URL; structured sources have none.
    let file_url = act(
        &state,
        &caller,
        "retrieve_file_url",
        json!({"file_path": id}),
        false,
    )
    .await
    .ok()
    .and_then(|v| v["signed_url"].as_str().map(str::to_string));
    page(
        StatusCode::OK,
        pages::source_page(
            &neighborhood,
            file_url.as_deref(),
            who(&state, &caller).as_deref(),
        ),
    )
}

async fn overview(State(state): State<Arc<InspectorState>>, headers: HeaderMap) -> Response {
    let caller = match signed_in(&state, &headers).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let (workspaces, recent) = match (
        act(&state, &caller, "list_workspaces", json!({}), false).await,
        act(
            &state,
            &caller,
            "retrieve_entities",
            json!({"limit": 10}),
            false,
        )
        .await,
    ) {
        (Ok(w), Ok(r)) => (w, r),
        (Err(e), _) | (_, Err(e)) => return failed(&state, &caller, &e),
    };
    // Server-wide figures are the operators' (like get_technical_metrics).
    let metrics = caller.operator.then(|| {
        let (used, idle, max) = state.db.pool_status();
        state.metrics.render(used, idle, max)
    });
    page(
        StatusCode::OK,
        pages::overview_page(
            &workspaces,
            &recent,
            metrics.as_deref(),
            who(&state, &caller).as_deref(),
        ),
    )
}

#[derive(Deserialize, Default)]
struct SchemaQuery {
    promoted: Option<String>,
}

async fn schema(
    State(state): State<Arc<InspectorState>>,
    headers: HeaderMap,
    query: Result<Query<SchemaQuery>, QueryRejection>,
) -> Response {
    let caller = match signed_in(&state, &headers).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let Query(q) = query.unwrap_or_default();
    let every = json!({"min_frequency": 1, "min_confidence": 0});
    let (types, candidates) = match (
        act(
            &state,
            &caller,
            "list_entity_types",
            json!({"detail": true}),
            false,
        )
        .await,
        act(&state, &caller, "analyze_schema_candidates", every, false).await,
    ) {
        (Ok(t), Ok(c)) => (t, c),
        (Err(e), _) | (_, Err(e)) => return failed(&state, &caller, &e),
    };
    let notice = q.promoted.map(|f| format!("Promoted {f}."));
    page(
        StatusCode::OK,
        pages::schema_page(
            &types,
            &candidates,
            notice.as_deref(),
            who(&state, &caller).as_deref(),
        ),
    )
}

#[derive(Deserialize, Default)]
struct PromoteForm {
    entity_type: Option<String>,
    field_name: Option<String>,
    field_type: Option<String>,
}

/// Promotes a waiting field into the user's own version of the type's
/// schema (operators' too: the global schema is changed deliberately, not
/// by a click), migrating what was stored of it.
async fn promote(
    State(state): State<Arc<InspectorState>>,
    headers: HeaderMap,
    form: Result<Form<PromoteForm>, FormRejection>,
) -> Response {
    let caller = match signed_in(&state, &headers).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    if !crate::web::same_origin(&headers) {
        return cross_origin();
    }
    let f = form.map(|Form(f)| f).unwrap_or_default();
    let field = f.field_name.unwrap_or_default();
    let args = json!({
        "entity_type": f.entity_type.unwrap_or_default(),
        "fields_to_add": [{"field_name": field, "field_type": f.field_type.unwrap_or_else(|| "string".into())}],
        "user_specific": true,
        "migrate_existing": true,
        "activate": true,
    });
    match act(&state, &caller, "update_schema_incremental", args, true).await {
        Ok(_) => Redirect::to(&format!(
            "/inspector/schema?promoted={}",
            crate::html::url_component(&field)
        ))
        .into_response(),
        Err(e) => failed(&state, &caller, &e),
    }
}

fn cross_origin() -> Response {
    page(
        StatusCode::FORBIDDEN,
        pages::error_page("Changes come from this server's own pages.", None),
    )
}

#[derive(Deserialize, Default)]
struct MergeForm {
    from_entity_id: Option<String>,
}

/// Runs a write about entity `id` and shows the entity again: the change,
/// or the action's error.
async fn entity_write(
    state: &InspectorState,
    headers: &HeaderMap,
    id: &str,
    action: &str,
    args: Value,
    done: &str,
) -> Response {
    let caller = match signed_in(state, headers).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    if !crate::web::same_origin(headers) {
        return cross_origin();
    }
    match act(state, &caller, action, args, true).await {
        Ok(_) => render_entity(state, &caller, id, None, None, Some(done), None).await,
        Err(e) => {
            let why = format!("{}: {}", e.code.as_str(), e.message);
            render_entity(state, &caller, id, None, None, None, Some(&why)).await
        }
    }
}

async fn merge(
    State(state): State<Arc<InspectorState>>,
    headers: HeaderMap,
    Path(id): Path<String>,
    form: Result<Form<MergeForm>, FormRejection>,
) -> Response {
    let from = form
        .ok()
        .and_then(|Form(f)| f.from_entity_id)
        .unwrap_or_default();
    let args = json!({"from_entity_id": from.trim(), "to_entity_id": id, "merge_reason": "merged in the inspector"});
    entity_write(&state, &headers, &id, "merge_entities", args, "Merged.").await
}

async fn delete(
    State(state): State<Arc<InspectorState>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let args = json!({"entity_id": id, "reason": "deleted in the inspector"});
    entity_write(
        &state,
        &headers,
        &id,
        "delete_entity",
        args,
        "Deleted: restore brings it back.",
    )
    .await
}

async fn restore(
    State(state): State<Arc<InspectorState>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    entity_write(
        &state,
        &headers,
        &id,
        "restore_entity",
        json!({"entity_id": id}),
        "Restored.",
    )
    .await
}

const CYTOSCAPE: &[u8] = include_bytes!("static/cytoscape.min.js");

async fn asset(Path(file): Path<String>) -> Response {
    let (body, kind): (&'static [u8], &str) = match file.as_str() {
        "style.css" => (
            include_bytes!("static/style.css"),
            "text/css; charset=utf-8",
        ),
        "graph.js" => (
            include_bytes!("static/graph.js"),
            "text/javascript; charset=utf-8",
        ),
        "asof.js" => (
            include_bytes!("static/asof.js"),
            "text/javascript; charset=utf-8",
        ),
        "cytoscape.min.js" => (CYTOSCAPE, "text/javascript; charset=utf-8"),
        _ => return StatusCode::NOT_FOUND.into_response(),
    };
    let mut r = body.into_response();
    let h = r.headers_mut();
    if let Ok(v) = HeaderValue::from_str(kind) {
        h.insert(header::CONTENT_TYPE, v);
    }
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=3600"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::Digest;

    #[test]
    fn the_vendored_graph_library_is_the_pinned_one() {
        let hash = neotoma_core::canonical::hex(&sha2::Sha256::digest(CYTOSCAPE));
        assert_eq!(
            hash,
            "081591ab735b2b6a3b31a3c60f8f3a3e2fee8c92939e0c7820ad1208571b6cd8"
        );
    }

    #[test]
    fn values_are_typed_when_they_read_as_json() {
        assert_eq!(typed("42"), json!(42));
        assert_eq!(typed("[1,2]"), json!([1, 2]));
        assert_eq!(typed("Ada Lovelace"), json!("Ada Lovelace"));
        assert_eq!(typed("\"7\""), json!("7"));
    }

    #[test]
    fn datetime_local_values_are_read_as_utc() {
        assert_eq!(instant("2026-11-25T15:35:43"), "2026-11-25T15:35:43Z");
        assert_eq!(instant("2026-11-25T15:35"), "2026-11-25T15:35:00Z");
        assert_eq!(
            instant("2026-11-25T15:35:43.27Z"),
            "2026-11-25T15:35:43.27Z"
        );
        assert_eq!(
            instant("2026-11-25T15:35:43+02:00"),
            "2026-11-25T15:35:43+02:00"
        );
        assert_eq!(instant("2026-11-25"), "2026-11-25");
    }

    #[test]
    fn the_session_cookie_is_found_among_others() {
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; neotoma_inspector=abc; b=2"),
        );
        assert_eq!(cookie(&h), Some("abc"));
    }
}
