//! The workspaces an action answers from or writes to
//! (docs/design/workspaces.md). The dispatcher establishes them once per
//! action, from its `workspace` argument, else the caller's context, else
//! `default`; handlers read them here, so every read path filters the same
//! way and every response says where it answered from.

use crate::call_local;
use crate::db::{self, Arg};
use neotoma_core::workspace::{
    self, Origin, Requested, Selection, WorkspaceContext, WorkspaceName, DEFAULT,
};
use neotoma_core::{ErrorCode, NeotomaError};
use serde::Deserialize;
use std::borrow::Cow;
use std::cell::RefCell;
use std::rc::Rc;
use uuid::Uuid;

/// What an action answers from (reads) or writes to (writes).
#[derive(Debug, Clone, PartialEq)]
pub struct Scope {
    /// The selected workspaces, sorted (`*` expanded to the user's).
    names: Vec<String>,
    all: bool,
    /// Whether the selection holds every workspace of the user (then a
    /// filter by workspace filters nothing).
    covers_all: bool,
    origin: Origin,
    /// A write's scope: what lies elsewhere is a mismatch, not unfound.
    write: bool,
}

impl Scope {
    /// Before any action established one (internal work such as
    /// recomputations, verify(); actions that take no workspace): an entity
    /// found by id is admitted wherever it is, and what such an action lists
    /// or writes is in `default`, as before workspaces.
    fn unrestricted() -> Self {
        Scope {
            names: vec![],
            all: true,
            covers_all: true,
            origin: Origin::Default,
            write: false,
        }
    }

    /// Whether a row of `workspace` is answered.
    pub fn admits(&self, workspace: &str) -> bool {
        (self.all && self.names.is_empty()) || self.names.iter().any(|n| n == workspace)
    }

    /// Whether every workspace of the user is selected (a filter by
    /// workspace then filters nothing).
    pub fn covers_all(&self) -> bool {
        self.covers_all
    }

    /// The selected workspaces, for `= ANY($n::text[])`.
    pub fn names(&self) -> Vec<String> {
        if self.names.is_empty() {
            vec![DEFAULT.to_string()]
        } else {
            self.names.clone()
        }
    }

    /// The one workspace a write writes to (the first selected).
    pub fn write_workspace(&self) -> String {
        self.names().swap_remove(0)
    }

    /// The selection as a query's `$n::text[]`: `= ANY($n::text[])`, or
    /// `= ($n::text[])[1]` on the lines marked `-- ws:one`.
    pub fn arg(&self) -> Arg<'static> {
        Arg::Texts(self.names())
    }

    /// `query` for this selection: lines ending `-- ws:one` (a filter by
    /// equality, which keeps an index's order) stay when one workspace is
    /// selected, lines ending `-- ws:many` (`= ANY`, which does not) when
    /// several are, lines marked `-- ws:some` (a filter that costs) only
    /// when not every workspace of the user is; then as the installed SQL
    /// can run it ([`crate::installed::adapt`]).
    pub fn adapt<'q>(&self, query: &'q str) -> Result<Cow<'q, str>, NeotomaError> {
        let other = if self.names().len() == 1 {
            "-- ws:many"
        } else {
            "-- ws:one"
        };
        let gone = |l: &str| l.contains(other) || (self.covers_all && l.contains("-- ws:some"));
        if !query.lines().any(gone) {
            return crate::installed::adapt(query);
        }
        let kept = crate::installed::without_lines(query, gone);
        Ok(Cow::Owned(crate::installed::adapt(&kept)?.into_owned()))
    }

    /// What the response says about where it answered from.
    pub fn context(&self) -> WorkspaceContext {
        WorkspaceContext {
            workspaces: self.names(),
            all: self.all,
            from: self.origin,
        }
    }

    /// `code` for something that exists in `workspace`, outside the
    /// selection: says where it is, so the caller can ask there.
    fn outside(&self, code: ErrorCode, what: &str, id: &str, workspace: &str) -> NeotomaError {
        NeotomaError::new(
            code,
            format!(
                "{what} {id} is in workspace `{workspace}`, not in {}",
                self.described()
            ),
        )
        .with(&format!("{what}_id"), id)
        .with("workspace", workspace)
    }

    /// Checks that what was found by id (`what`: entity, source) lies in
    /// the selection: a read does not find it elsewhere (`not_found`); a
    /// write refuses it (WORKSPACE_MISMATCH).
    pub fn check(
        &self,
        what: &str,
        not_found: ErrorCode,
        id: &str,
        workspace: &str,
    ) -> Result<(), NeotomaError> {
        if self.admits(workspace) {
            return Ok(());
        }
        if self.hides(workspace) {
            return Err(absent(not_found, what, id));
        }
        let code = if self.write {
            ErrorCode::WorkspaceMismatch
        } else {
            not_found
        };
        Err(self.outside(code, what, id, workspace))
    }

    /// Whether the call's token is limited to some workspaces.
    pub fn limited(&self) -> bool {
        crate::tenancy::call_limits().workspaces.is_some()
    }

    /// Whether a row of `workspace` lies beyond the workspaces the call's
    /// token is limited to: then it is answered as absent, before any other
    /// check could tell of it.
    pub fn hides(&self, workspace: &str) -> bool {
        !crate::tenancy::call_limits().admits_workspace(workspace)
    }

    /// [`Scope::check`] of an entity.
    pub fn check_entity(&self, id: &str, workspace: &str) -> Result<(), NeotomaError> {
        self.check("entity", ErrorCode::EntityNotFound, id, workspace)
    }

    fn described(&self) -> String {
        let names = self.names();
        match names.as_slice() {
            [one] => format!("`{one}`"),
            _ => format!("the workspaces {}", names.join(", ")),
        }
    }
}

/// What the actions answer for a `what` (entity, source, observation) that
/// does not exist: also what lies beyond a token's workspaces is answered
/// so, word for word.
pub fn absent(code: ErrorCode, what: &str, id: &str) -> NeotomaError {
    NeotomaError::new(code, format!("no {what} {id} (for this user)"))
        .with(&format!("{what}_id"), id)
}

thread_local! {
    /// The scope of the action running (actions nest: bulk runs others).
    static CURRENT: call_local::Slot<Scope> = const { RefCell::new(None) };
}

/// The scope of the action running; unrestricted outside any.
pub fn current() -> Rc<Scope> {
    call_local::get(&CURRENT).unwrap_or_else(|| Rc::new(Scope::unrestricted()))
}

/// Runs `f` within `scope`; the previous one comes back afterwards, also
/// when `f` fails.
pub fn within<R>(scope: Option<Scope>, f: impl FnOnce() -> R) -> R {
    call_local::with(&CURRENT, scope, f)
}

/// The caller's contexts and workspaces, as one query reads them.
#[derive(Deserialize, Default)]
struct Known {
    /// The context of the caller's token, and the user's own.
    token_context: Option<WorkspaceName>,
    user_context: Option<WorkspaceName>,
    /// The user's workspaces besides `default`, sorted.
    workspaces: Vec<String>,
}

fn known(user: &Uuid) -> Result<Known, NeotomaError> {
    let token = crate::settings::token_id();
    let v = db::json(
        "SELECT jsonb_build_object(
           'token_context', (SELECT c.workspace FROM neotoma.contexts c
                             WHERE c.user_id = $1::uuid AND c.token_id = $2::uuid),
           'user_context', (SELECT c.workspace FROM neotoma.contexts c
                            WHERE c.user_id = $1::uuid AND c.token_id IS NULL),
           'workspaces', (SELECT coalesce(jsonb_agg(w.name ORDER BY w.name), '[]') FROM neotoma.workspaces w
                          WHERE w.user_id = $1::uuid AND w.name <> 'default'))",
        &[Arg::uuid(user), Arg::OptText(token.as_deref())],
    )?;
    db::from_json(v, "workspaces")
}

/// The scope of an action of workspaces acting for `user`, from its
/// `workspace` argument (`requested`), else the caller's context, else
/// `default`. None for an action that is not one.
pub fn establish(user: Option<&Uuid>, requested: Requested) -> Result<Option<Scope>, NeotomaError> {
    let (read, arg): (bool, Option<Selection>) = match requested {
        Requested::NotScoped => return Ok(None),
        Requested::Read(a) => (
            true,
            a.map(|a| Selection::parse("workspace", a)).transpose()?,
        ),
        Requested::Write(w) => (false, w.cloned().map(Selection::one)),
    };
    let Some(user) = user else {
        return Ok(Some(Scope {
            names: vec![DEFAULT.to_string()],
            all: false,
            covers_all: true,
            origin: Origin::Default,
            write: !read,
        }));
    };
    let known = known(user)?;
    // A token limited to some workspaces names only those; without a
    // workspace named it works in its context when that is one of them,
    // else in the first of them.
    let limits = crate::tenancy::call_limits();
    let (selection, origin) = match arg {
        Some(s) => {
            if let Selection::Some(names) = &s {
                for n in names {
                    limits.permit_workspace("workspace", n.as_str())?;
                }
            }
            (s, Origin::Argument)
        }
        None => {
            let (w, origin) = workspace::effective(
                None,
                known.token_context.clone(),
                known.user_context.clone(),
            );
            match limits.workspaces.as_ref().and_then(|l| l.first()) {
                Some(first) if !limits.admits_workspace(w.as_str()) => (
                    Selection::one(WorkspaceName::parse("workspace", first)?),
                    Origin::Default,
                ),
                _ => (Selection::one(w), origin),
            }
        }
    };
    let exists = |n: &str| n == DEFAULT || known.workspaces.iter().any(|w| w == n);
    let (names, all) = match selection {
        Selection::All => match &limits.workspaces {
            Some(allowed) => (allowed.iter().cloned().collect(), true),
            None => {
                let mut names = vec![DEFAULT.to_string()];
                names.extend(known.workspaces.iter().cloned());
                names.sort();
                (names, true)
            }
        },
        Selection::Some(set) => {
            let names: Vec<String> = set.into_iter().map(String::from).collect();
            if read {
                if let Some(unknown) = names.iter().find(|n| !exists(n)) {
                    let mut all = vec![DEFAULT.to_string()];
                    all.extend(known.workspaces.iter().cloned());
                    all.retain(|w| limits.admits_workspace(w));
                    return Err(NeotomaError::new(
                        ErrorCode::WorkspaceNotFound,
                        format!("no workspace `{unknown}`: list_workspaces lists yours"),
                    )
                    .with("workspace", unknown.as_str())
                    .with("known", all));
                }
            }
            (names, false)
        }
    };
    // (Never for a token limited to some workspaces: what it may reach is
    // its list, whatever workspaces the user has.)
    let covers_all = limits.workspaces.is_none()
        && names.iter().any(|n| n == DEFAULT)
        && known.workspaces.iter().all(|w| names.contains(w));
    if !read {
        if let Some(name) = names.first() {
            create_workspace(user, &WorkspaceName::parse("workspace", name)?)?;
        }
    }
    Ok(Some(Scope {
        names,
        all,
        covers_all,
        origin,
        write: !read,
    }))
}

/// Makes `workspace` one of the user's (nothing for `default`, which
/// every user has, nor for one that is already).
pub fn create_workspace(user: &Uuid, workspace: &WorkspaceName) -> Result<(), NeotomaError> {
    if workspace.is_default() {
        return Ok(());
    }
    db::run(
        "INSERT INTO neotoma.workspaces (user_id, name) VALUES ($1::uuid, $2) ON CONFLICT DO NOTHING",
        &[Arg::uuid(user), Arg::Text(workspace.as_str())],
    )
}

/// Runs `f` writing in `workspace` (a stored source's, read again; None:
/// `default`, as before 0.12.0), whatever the action's scope.
pub fn writing_in<R>(
    workspace: Option<&str>,
    f: impl FnOnce() -> Result<R, NeotomaError>,
) -> Result<R, NeotomaError> {
    let scope = Scope {
        names: vec![workspace.unwrap_or(DEFAULT).to_string()],
        all: false,
        covers_all: false,
        origin: Origin::Default,
        write: true,
    };
    within(Some(scope), f)
}
