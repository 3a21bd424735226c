//! Which user an action acts for.
//!
//! The user is *established* by the session (GUC `neotoma.user_id`, set by the
//! gateway per transaction, or Supabase's `auth.uid()`), and then a `user_id`
//! argument that differs is refused. In a trusted SQL session with no
//! established user, the `user_id` argument names the user; the action then
//! sets `neotoma.user_id` for its own duration so that row level security
//! applies to everything it reads and writes.

use crate::db;
use neotoma_core::{ErrorCode, NeotomaError};
use uuid::Uuid;

fn parse_user(value: &str, field: &str) -> Result<Uuid, NeotomaError> {
    Uuid::parse_str(value)
        .map_err(|_| NeotomaError::invalid_field(field, format!("`{field}` must be a UUID")))
}

/// The user established by the session, if any.
pub fn established_user() -> Result<Option<Uuid>, NeotomaError> {
    db::text("SELECT neotoma.current_user_id()::text", &[])?
        .map(|s| parse_user(&s, "neotoma.user_id"))
        .transpose()
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
        (None, Some(arg)) => {
            set_session_user(Some(arg))?;
            let result = body(arg);
            set_session_user(None)?;
            result
        }
        (None, None) => Err(NeotomaError::new(
            ErrorCode::UserIdRequired,
            "no user: pass `user_id`, or set neotoma.user_id for the session",
        )
        .with("field", "user_id")),
    }
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
