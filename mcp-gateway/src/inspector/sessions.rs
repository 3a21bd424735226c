//! The inspector's sessions, kept in the database (sql/inspector.sql)
//! so that every gateway process sees them and each ends with what it was
//! signed in with. The cookie carries a random 256-bit id; only its hash
//! crosses to the database.

use crate::database::Database;
use crate::identity::{Caller, hash_token, random_hex};
use neotoma_core::{ErrorCode, NeotomaError};
use std::time::Duration;
use uuid::Uuid;

/// What a session was signed in with, and so ends with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SignedInWith {
    /// An API token: revoked or expired, the session ends.
    Token(Uuid),
    /// The user's login (username and password): removed or given a new
    /// password, the session ends.
    Login,
    /// A one-time code (spent by signing in).
    Code,
}

/// Opens a session for `user` (keeping the user's `keep` most recently
/// used): the cookie's value, or None when the token or login ended
/// meanwhile.
pub async fn open(
    db: &Database,
    user: Uuid,
    with: SignedInWith,
    keep: usize,
    idle: Duration,
) -> Result<Option<String>, NeotomaError> {
    let id = random_hex(32)
        .map_err(|e| NeotomaError::new(ErrorCode::ServiceUnavailable, e.to_string()))?;
    let token = match with {
        SignedInWith::Token(t) => Some(t),
        _ => None,
    };
    let opened = db
        .query_json_with(
            "SELECT to_jsonb(neotoma_private.inspector_open($1, $2, $3, $4, $5, $6))",
            &[
                &user,
                &hash_token(&id),
                &token,
                &(with == SignedInWith::Login),
                &(i32::try_from(keep).unwrap_or(i32::MAX)),
                &idle.as_secs_f64(),
            ],
        )
        .await?;
    Ok((opened == serde_json::Value::Bool(true)).then_some(id))
}

/// Who the session of a cookie acts for, if it is still good.
pub async fn find(
    db: &Database,
    cookie: &str,
    idle: Duration,
) -> Result<Option<Caller>, NeotomaError> {
    let found = db
        .query_json_with(
            "SELECT coalesce(neotoma_private.inspector_session($1, $2), 'null')",
            &[&hash_token(cookie), &idle.as_secs_f64()],
        )
        .await?;
    let Some(user) = found["user_id"].as_str().and_then(|u| u.parse().ok()) else {
        return Ok(None);
    };
    Ok(Some(Caller {
        user,
        operator: found["operator"].as_bool().unwrap_or(false),
        remote: true,
        token: found["token_id"].as_str().and_then(|t| t.parse().ok()),
    }))
}

/// Ends the session of a cookie.
pub async fn close(db: &Database, cookie: &str) -> Result<(), NeotomaError> {
    db.query_json_with(
        "SELECT 'null'::jsonb FROM (SELECT neotoma_private.inspector_close($1)) c",
        &[&hash_token(cookie)],
    )
    .await
    .map(drop)
}
