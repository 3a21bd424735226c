//! Which user an action acts for, and whether the session is trusted.
//!
//! The user is *established* by the session: the setting `neotoma.user_id`
//! (which only roles granted SET on it may set: superusers, `neotoma_service`
//! and Supabase's `service_role`; the MCP gateway sets it per transaction), else the `sub` of the request's JWT
//! claims (`request.jwt.claims`, as PostgREST and Supabase set them for
//! `authenticated`). A `user_id` argument that differs is refused.
//!
//! With no established user, a *trusted* session (one that may set
//! `neotoma.user_id`, see [`settings::trusted`]) may name the user with the `user_id` argument; the
//! action then sets `neotoma.user_id` for its own duration so that row level
//! security applies to everything it reads and writes. Any other session is
//! refused: it is never trusted to say whom it acts for.
//!
//! Nothing here runs code a caller could have defined: the JWT claims are
//! read as settings, as Supabase's `auth.uid()` reads them, not through it.

use crate::call_local;
use crate::db;
use crate::settings;
use neotoma_core::catalog::ActionId;
use neotoma_core::token_limits::TokenLimits;
use neotoma_core::{ErrorCode, NeotomaError};
use pgrx::prelude::*;
use std::cell::RefCell;
use std::rc::Rc;
use uuid::Uuid;

fn parse_user(value: &str, field: &str) -> Result<Uuid, NeotomaError> {
    Uuid::parse_str(value.trim())
        .map_err(|_| NeotomaError::invalid_field(field, format!("`{field}` must be a UUID")))
}

/// The `sub` of the request's JWT claims, if any.
fn jwt_subject() -> Option<String> {
    if let Some(sub) = settings::named(c"request.jwt.claim.sub") {
        return Some(sub);
    }
    let claims = settings::named(c"request.jwt.claims")?;
    let claims: serde_json::Value = serde_json::from_str(&claims).ok()?;
    claims.get("sub")?.as_str().map(str::to_string)
}

/// The user established by the session, if any.
pub fn established_user() -> Result<Option<Uuid>, NeotomaError> {
    if let Some(v) = settings::text(&settings::USER_ID) {
        return parse_user(&v, "neotoma.user_id").map(Some);
    }
    match jwt_subject() {
        // A JWT whose subject is not a UUID (e.g. a service key) names no user.
        Some(sub) => Ok(Uuid::parse_str(sub.trim()).ok()),
        None => Ok(None),
    }
}

/// The user this session acts for: `neotoma.user_id`, else the JWT
/// subject, else NULL. Row level security compares `user_id` with it.
#[pg_extern(stable, parallel_safe)]
pub fn current_user_id() -> Option<pgrx::datum::Uuid> {
    match established_user() {
        Ok(user) => user.map(|u| pgrx::datum::Uuid::from_bytes(*u.as_bytes())),
        Err(e) => crate::error::raise(&e),
    }
}

/// The token the call came with (`neotoma.token_id`, which only the
/// gateway's role sets; a call with one was checked to be the user's token
/// before it ran), else NULL (SQL, stdio): each observation keeps it (its
/// column's default), so provenance says which agent wrote it.
#[pg_extern(stable, parallel_safe, name = "_calling_token")]
pub fn calling_token() -> Option<pgrx::datum::Uuid> {
    let token = Uuid::parse_str(settings::token_id()?.trim()).ok()?;
    Some(pgrx::datum::Uuid::from_bytes(*token.as_bytes()))
}

/// Whether this session acts as an operator (may change global schemas and
/// other shared settings): `neotoma.operator` when set, else membership of
/// `neotoma_operator`.
#[pg_extern(stable, parallel_safe)]
pub(crate) fn session_is_operator() -> bool {
    settings::operator(false)
}

/// Runs `body` as the user the session establishes or `user_arg` names.
pub fn with_user<T>(
    user_arg: Option<&str>,
    body: impl FnOnce(Uuid) -> Result<T, NeotomaError>,
) -> Result<T, NeotomaError> {
    let requested = user_arg.map(|s| parse_user(s, "user_id")).transpose()?;
    match (established_user()?, requested) {
        (Some(session), Some(arg)) if session != arg => Err(NeotomaError::new(
            ErrorCode::Forbidden,
            "user_id differs from the authenticated user; an action can only act for the session's user",
        )
        .with("field", "user_id")),
        (Some(session), _) => body(session),
        (None, Some(arg)) if settings::trusted() => {
            set_session_user(Some(arg))?;
            let result = body(arg);
            set_session_user(None)?;
            result
        }
        (None, _) => require_user(None).and_then(body),
    }
}

/// The refusal of a session that establishes no user and may not name one.
fn untrusted() -> NeotomaError {
    NeotomaError::new(
        ErrorCode::Forbidden,
        "this session has no authenticated user, and its role may not name one: sign in (JWT \
         claims), or connect as a role granted neotoma_service",
    )
    .with("field", "user_id")
}

fn set_session_user(user: Option<Uuid>) -> Result<(), NeotomaError> {
    let value = user.map(|u| u.to_string()).unwrap_or_default();
    db::run(
        "SELECT set_config('neotoma.user_id', $1, true)",
        &[db::Arg::Text(&value)],
    )
}

/// Like [`with_user`], for actions that also work without a user (they then
/// see only what is global).
pub fn with_optional_user<T>(
    user_arg: Option<&str>,
    body: impl FnOnce(Option<Uuid>) -> Result<T, NeotomaError>,
) -> Result<T, NeotomaError> {
    if user_arg.is_none() && established_user()?.is_none() {
        return body(None);
    }
    with_user(user_arg, |u| body(Some(u)))
}

/// The user of an action that needs one, given what `with_optional_user`
/// established: refused as `with_user` refuses when there is none.
pub fn require_user(user: Option<Uuid>) -> Result<Uuid, NeotomaError> {
    match user {
        Some(user) => Ok(user),
        None if !settings::trusted() => Err(untrusted()),
        None => Err(NeotomaError::new(
            ErrorCode::UserIdRequired,
            "no user: pass `user_id`, or set neotoma.user_id for the session",
        )
        .with("field", "user_id")),
    }
}

/// Refuses a change to what all users share unless the session is an
/// operator.
pub fn require_operator(what: &str) -> Result<(), NeotomaError> {
    if settings::operator(false) {
        return Ok(());
    }
    Err(NeotomaError::new(
        ErrorCode::Forbidden,
        format!(
            "{what} changes what every user shares and needs an operator (the role \
             neotoma_operator in SQL; a token made with --scope operator over MCP); pass \
             user_specific: true to change your own variant instead"
        ),
    )
    .with("field", "user_specific"))
}

/// The token a call came with (`neotoma.token_id`, which only the gateway's
/// role may set) must be one of the user's: a context is kept per token,
/// and its limits (read-only, some tools) bound what the call may do.
/// A router's call was checked on the router, which keeps the tokens
/// (crate::routing): no limits here.
pub fn check_token(user: &Uuid, token: &str) -> Result<TokenLimits, NeotomaError> {
    if settings::routed_call() {
        return Ok(TokenLimits::default());
    }
    let unknown = || {
        NeotomaError::new(
            ErrorCode::Forbidden,
            "the token this call came with (neotoma.token_id) is not one of this user's tokens",
        )
        .with("field", "level")
    };
    if Uuid::parse_str(token).is_err() {
        return Err(unknown());
    }
    // Users cannot read tokens; the extension's owner can, for this user
    // only. (Read as jsonb: a database not yet updated to 0.24.0 has no
    // limits.) A token revoked or expired since the gateway looked it up
    // (its cache hears of a revocation a moment later) ends here, at the
    // next call after the revocation commits.
    let row = crate::owner::as_owner(|| {
        db::json(
            "SELECT jsonb_build_object('read_only', coalesce((to_jsonb(t) ->> 'read_only')::boolean, false),
                                       'tools', to_jsonb(t) ->> 'tools',
                                       'workspaces', to_jsonb(t) -> 'workspaces',
                                       'ended', t.revoked_at IS NOT NULL OR coalesce(t.expires_at <= now(), false))
             FROM neotoma.api_tokens t WHERE t.user_id = $1::uuid AND t.id = $2::uuid",
            &[db::Arg::uuid(user), db::Arg::Text(token)],
        )
    })?;
    if row.is_null() {
        return Err(unknown());
    }
    if row["ended"] == serde_json::Value::Bool(true) {
        return Err(NeotomaError::new(
            ErrorCode::Forbidden,
            "the token this call came with has been revoked or has expired",
        )
        .with("field", "token"));
    }
    let workspaces: Option<Vec<String>> =
        serde_json::from_value(row["workspaces"].clone()).unwrap_or(None);
    Ok(TokenLimits::new(
        row["read_only"].as_bool().unwrap_or(false),
        row["tools"].as_str(),
    )
    .in_workspaces(workspaces))
}

/// Whether the call of `id` this session makes is within the limits of the
/// token it came with; answers those limits, for the action's scope to
/// keep (None: no token, as over SQL and stdio, or a routed call, whose
/// limits the router checked and sent, see [`check_token`]).
pub fn permit_call(id: ActionId) -> Result<Option<TokenLimits>, NeotomaError> {
    let Some(token) = settings::token_id() else {
        return Ok(None);
    };
    if settings::routed_call() {
        return Ok(None);
    }
    // A token stands for its user: a call with one that names its user
    // only by argument would escape the token's limits.
    let Some(user) = established_user()? else {
        return Err(NeotomaError::new(
            ErrorCode::Forbidden,
            "a call that comes with a token (neotoma.token_id) establishes its user \
             (neotoma.user_id), as the gateway does",
        )
        .with("field", "user_id"));
    };
    let limits = check_token(&user, &token)?;
    limits.permit(id)?;
    Ok(Some(limits))
}

thread_local! {
    /// The limits of the token the running call came with.
    static CALL_LIMITS: call_local::Slot<TokenLimits> = const { RefCell::new(None) };
}

/// The limits of the token the running call came with (none: unlimited).
pub fn call_limits() -> Rc<TokenLimits> {
    call_local::get(&CALL_LIMITS).unwrap_or_default()
}

/// Runs `f` as a call within `limits` (None: those already in force); the
/// previous ones come back afterwards, also when `f` fails.
pub fn within_limits<R>(limits: Option<TokenLimits>, f: impl FnOnce() -> R) -> R {
    call_local::with(&CALL_LIMITS, limits, f)
}
