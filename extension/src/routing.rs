//! Users spread over several servers (docs/scale-out.md). A *router* is a
//! database with the `neotoma_router` extension beside this one: it keeps
//! what all partitions share (tokens, OAuth, logins) and none of the users'
//! data, and each action called there runs on the partition of the user it
//! acts for, through PL/Proxy (`neotoma_router.call`), which calls
//! `neotoma.routed` there. Both sides are here: what the router sends, and
//! what the partition takes on from it.

use crate::db::{self, Arg};
use crate::settings::{self, ReplicaReads};
use crate::tenancy;
use neotoma_core::routing::{self, Placement, FORWARDED_SETTINGS};
use neotoma_core::token_limits::TokenLimits;
use neotoma_core::{catalog, ErrorCode, NeotomaError};
use pgrx::pg_sys;
use serde_json::{json, Map, Value};
use std::ffi::CString;
use uuid::Uuid;

/// Whether this database is a router (has the `neotoma_router` extension).
pub fn is_router() -> bool {
    // SAFETY: a catalog lookup by name; a missing extension is InvalidOid.
    unsafe { pg_sys::get_extension_oid(c"neotoma_router".as_ptr(), true) != pg_sys::InvalidOid }
}

/// Runs `action` with the request text `args` where it belongs: on the
/// partition of the user it acts for, or on every partition. Answers the
/// envelope, `{"ok": …}` or `{"error": …}`.
pub fn forward(action: &str, args: &str) -> String {
    send(action, args).unwrap_or_else(|e| crate::error::envelope(&e))
}

fn send(action: &str, args: &str) -> Result<String, NeotomaError> {
    let request = neotoma_core::limits::parse_input(args)?;
    let id = catalog::action_named(action)?;
    // The router's role acts for any user on the partitions: only a role
    // that may do so here (the gateway's) calls through it.
    if !settings::trusted() {
        return Err(NeotomaError::new(
            ErrorCode::Forbidden,
            "this database is a router: call its actions as a role granted neotoma_service \
             (the gateway's), which names the user (neotoma.user_id)",
        ));
    }
    let acting = acting_for(&request)?;
    // The partitions keep no tokens: the token a call came with is checked
    // here to be the user's, and trusted there (a context is kept per token).
    let mut forwarded = forwarded_settings();
    if let (Some(user), Some(token)) = (&acting, settings::token_id()) {
        let limits = tenancy::check_token(user, &token)?;
        limits.permit(id)?;
        // A workspace limit bounds the scope the partition establishes.
        if let Some(names) = &limits.workspaces {
            forwarded.insert(TOKEN_WORKSPACES.to_string(), json!(names));
        }
    }
    let user = acting.map(|u| u.to_string());
    let forwarded = Value::Object(forwarded);
    let replica = settings::REPLICA_READS.get();
    let call = match routing::placement(id, &request) {
        // The caller accepts a replica's answer (as of the call's start, or
        // as it is) for what only reads.
        // (Not the change feed: its reader waits for the partition's
        // horizon, and a replica behind it would skip changes for good.)
        Placement::User
            if replica != ReplicaReads::Off
                && catalog::spec(id).read_only
                && id != catalog::ActionId::ListRecentChanges =>
        {
            return on_replica(user.as_deref(), &forwarded, action, args, replica);
        }
        Placement::User => "SELECT neotoma_router.call($1::uuid, $2, $3, $4)",
        Placement::Everywhere => return everywhere(user.as_deref(), &forwarded, action, args),
        Placement::Combined => return combined(user.as_deref(), &forwarded, action, &request),
    };
    // (Whether the caller acts as an operator, the router asks itself.)
    db::text(
        call,
        &[
            Arg::OptText(user.as_deref()),
            Arg::Json(&forwarded),
            Arg::Text(action),
            Arg::Text(args),
        ],
    )?
    .ok_or_else(|| NeotomaError::new(ErrorCode::DbQueryFailed, "the partition gave no answer"))
}

/// An operator's change of a global schema, on every partition in turn:
/// their answer when they agree (routing::agreed_answer: the counts of
/// each one's own data added up); otherwise SERVICE_UNAVAILABLE, partially
/// applied, with what each answered, so that the operator sees where it
/// applied and retries once every partition is reachable.
fn everywhere(
    user: Option<&str>,
    forwarded: &Value,
    action: &str,
    args: &str,
) -> Result<String, NeotomaError> {
    let answers = on_all(user, forwarded, action, args)?;
    let each: Vec<Value> = (answers.as_array().into_iter().flatten())
        .map(|a| a["answer"].clone())
        .collect();
    match routing::agreed_answer(&each) {
        Some(answer) => Ok(answer.to_string()),
        None => Err(NeotomaError::new(
            ErrorCode::ServiceUnavailable,
            "partially applied: the partitions answered differently (one unreachable, or already \
             changed): see details.partitions, and retry once they are all reachable",
        )
        .with("partitions", answers)
        .with("retryable", true)),
    }
}

/// What every partition answered to the action, in partition order
/// (`neotoma_router.call_on_all`: [{partition, answer}]).
fn on_all(
    user: Option<&str>,
    forwarded: &Value,
    action: &str,
    args: &str,
) -> Result<Value, NeotomaError> {
    db::json(
        "SELECT neotoma_router.call_on_all($1::uuid, $2, $3, $4)",
        &[
            Arg::OptText(user),
            Arg::Json(forwarded),
            Arg::Text(action),
            Arg::Text(args),
        ],
    )
}

/// A read-only action on the replica of the user's partition
/// (`neotoma_router.call_replica`; the partition when it has none).
fn on_replica(
    user: Option<&str>,
    forwarded: &Value,
    action: &str,
    args: &str,
    mode: ReplicaReads,
) -> Result<String, NeotomaError> {
    db::text(
        "SELECT neotoma_router.call_replica($1::uuid, $2, $3, $4, $5)",
        &[
            Arg::OptText(user),
            Arg::Json(forwarded),
            Arg::Text(action),
            Arg::Text(args),
            Arg::Bool(mode == ReplicaReads::Fresh),
        ],
    )?
    .ok_or_else(|| NeotomaError::new(ErrorCode::DbQueryFailed, "the replica gave no answer"))
}

/// An operator's read over every user (product analytics): the request, its
/// range made explicit, runs on every partition; their counters are added
/// up and the value made of them here. Any partition's error is the
/// answer's (the same error from all: that one), never a sum of the others.
fn combined(
    user: Option<&str>,
    forwarded: &Value,
    action: &str,
    request: &Value,
) -> Result<String, NeotomaError> {
    let (asked, sent) = crate::actions::analytics::for_partitions(request)?;
    let answers = on_all(user, forwarded, action, &sent.to_string())?;
    let answers = answers.as_array().cloned().unwrap_or_default();
    let oks: Vec<Value> = answers
        .iter()
        .filter_map(|a| a["answer"].get("ok").cloned())
        .collect();
    if oks.is_empty() || oks.len() < answers.len() {
        let errors: Vec<&Value> = answers
            .iter()
            .filter_map(|a| a["answer"].get("error"))
            .collect();
        if oks.is_empty() && errors.windows(2).all(|w| w[0] == w[1]) {
            if let Some(e) = errors.first() {
                return Ok(serde_json::json!({ "error": e }).to_string());
            }
        }
        return Err(NeotomaError::new(
            ErrorCode::ServiceUnavailable,
            "not every partition answered: see details.partitions, and retry once they are all \
             reachable",
        )
        .with("partitions", Value::Array(answers))
        .with("retryable", true));
    }
    let answer = crate::actions::analytics::combined(&asked, &oks)?;
    Ok(crate::error::result_envelope(Ok(answer.to_string())))
}

/// The user the call acts for, as a single server establishes it: the
/// session's, else the `user_id` the (trusted) session names.
fn acting_for(request: &Value) -> Result<Option<Uuid>, NeotomaError> {
    if let Some(user) = tenancy::established_user()? {
        return Ok(Some(user));
    }
    request
        .get("user_id")
        .and_then(Value::as_str)
        .map(|named| {
            Uuid::parse_str(named.trim())
                .map_err(|_| NeotomaError::invalid_field("user_id", "`user_id` must be a UUID"))
        })
        .transpose()
}

/// What a routed call's settings carry besides `neotoma.*` settings: the
/// workspaces the call's token is limited to.
const TOKEN_WORKSPACES: &str = "token_workspaces";

fn forwarded_settings() -> Map<String, Value> {
    FORWARDED_SETTINGS
        .iter()
        .filter_map(|name| Some((name.to_string(), Value::String(setting(name)?))))
        .collect()
}

/// A `neotoma.*` setting's value by name, None when unset or empty.
fn setting(name: &str) -> Option<String> {
    settings::named(&CString::new(name).ok()?)
}

/// On a partition: runs `work` as the router's call for `user`, as an
/// operator or not, with the `neotoma.*` settings it forwarded; the
/// settings it had come back after. Refused unless the session's role is a
/// router's.
pub fn taken_on<T>(
    user: Option<Uuid>,
    operator: bool,
    forwarded: &Value,
    work: impl FnOnce() -> Result<T, NeotomaError>,
) -> Result<T, NeotomaError> {
    if !settings::router() {
        return Err(NeotomaError::new(
            ErrorCode::Forbidden,
            "neotoma.routed is for a router's role (a member of neotoma_router)",
        ));
    }
    let user = user.map(|u| u.to_string()).unwrap_or_default();
    let mut call: Vec<(&str, &str)> = vec![
        ("neotoma.user_id", &user),
        ("neotoma.operator", if operator { "on" } else { "off" }),
    ];
    for name in FORWARDED_SETTINGS {
        let Some(value) = forwarded.get(*name).and_then(Value::as_str) else {
            continue;
        };
        if !routing::forwarded_value_ok(name, value) {
            return Err(NeotomaError::invalid_field(
                "settings",
                format!("`{name}` cannot be `{value}`"),
            ));
        }
        call.push((name, value));
    }
    let before: Vec<(&str, String)> = call
        .iter()
        .map(|(name, _)| (*name, setting(name).unwrap_or_default()))
        .collect();
    let limits = match forwarded.get(TOKEN_WORKSPACES) {
        None => None,
        Some(names) => Some(TokenLimits::default().in_workspaces(Some(
            serde_json::from_value(names.clone()).map_err(|_| {
                NeotomaError::invalid_field(
                    "settings",
                    format!("`{TOKEN_WORKSPACES}` is a list of names"),
                )
            })?,
        ))),
    };
    set_all(call.iter().map(|(n, v)| (*n, *v)))?;
    let result = tenancy::within_limits(limits, || settings::as_routed_call(work));
    set_all(before.iter().map(|(n, v)| (*n, v.as_str())))?;
    result
}

/// Sets each `neotoma.*` setting for the rest of the transaction.
fn set_all<'a>(values: impl Iterator<Item = (&'a str, &'a str)>) -> Result<(), NeotomaError> {
    for (name, value) in values {
        db::run(
            "SELECT set_config($1, $2, true)",
            &[Arg::Text(name), Arg::Text(value)],
        )?;
    }
    Ok(())
}
