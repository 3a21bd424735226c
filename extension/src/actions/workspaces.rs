//! `list_workspaces` and the context actions (`set_context`, `get_context`,
//! `clear_context`): which workspaces a user has, and which one actions
//! without `workspace` use (crate::scope reads it).

use super::entities::resolve_entity;
use crate::db::{self, Arg};
use crate::settings;
use neotoma_core::actions::common;
use neotoma_core::actions::workspaces::*;
use neotoma_core::workspace::{self, WorkspaceName};
use neotoma_core::{ErrorCode, NeotomaError};
use serde::Deserialize;
use uuid::Uuid;

/// The contexts of the caller's token (if it came with one) and of the user.
#[derive(Deserialize)]
struct Contexts {
    token: Option<ContextOut>,
    user: Option<ContextOut>,
}

fn contexts(user: &Uuid, token: Option<&str>) -> Result<Contexts, NeotomaError> {
    let v = db::json(
        "SELECT jsonb_build_object(
           'token', (SELECT jsonb_strip_nulls(jsonb_build_object('workspace', c.workspace,
                              'project_entity_id', c.project_entity_id, 'set_at', neotoma._iso(c.set_at)))
                     FROM neotoma.contexts c WHERE c.user_id = $1::uuid AND c.token_id = $2::uuid),
           'user', (SELECT jsonb_strip_nulls(jsonb_build_object('workspace', c.workspace,
                             'project_entity_id', c.project_entity_id, 'set_at', neotoma._iso(c.set_at)))
                    FROM neotoma.contexts c WHERE c.user_id = $1::uuid AND c.token_id IS NULL))",
        &[Arg::uuid(user), Arg::OptText(token)],
    )?;
    db::from_json(v, "contexts")
}

/// The workspace actions without one use (the precedence of
/// neotoma_core::workspace::effective, as crate::scope applies it).
fn effective(c: &Contexts) -> Result<EffectiveContext, NeotomaError> {
    let name = |c: &Option<ContextOut>| {
        c.as_ref()
            .map(|c| WorkspaceName::parse("workspace", &c.workspace))
            .transpose()
    };
    let (w, from) = workspace::effective(None, name(&c.token)?, name(&c.user)?);
    Ok(EffectiveContext {
        workspace: w.to_string(),
        from,
    })
}

/// The caller's contexts and the workspace actions without one use. A
/// token limited to some workspaces is not told of the others: its scope
/// ignores a context beyond them (crate::scope::establish).
fn visible_contexts(
    user: &Uuid,
    token: Option<&str>,
) -> Result<(Contexts, EffectiveContext), NeotomaError> {
    let mut c = contexts(user, token)?;
    let limits = crate::tenancy::call_limits();
    for context in [&mut c.token, &mut c.user] {
        if context
            .as_ref()
            .is_some_and(|x| !limits.admits_workspace(&x.workspace))
        {
            *context = None;
        }
    }
    let mut effective = effective(&c)?;
    if let Some(first) = limits.workspaces.as_ref().and_then(|l| l.first()) {
        if !limits.admits_workspace(&effective.workspace) {
            effective.workspace = first.clone();
            effective.from = workspace::Origin::Default;
        }
    }
    Ok((c, effective))
}

fn answer(user: &Uuid, cleared: Option<bool>) -> Result<ContextResponse, NeotomaError> {
    let token = settings::token_id();
    let (c, effective) = visible_contexts(user, token.as_deref())?;
    Ok(ContextResponse {
        effective,
        token: c.token,
        user: c.user,
        has_token: token.is_some(),
        cleared,
    })
}

pub fn list_workspaces(
    user: Uuid,
    _req: ListWorkspacesRequest,
) -> Result<ListWorkspacesResponse, NeotomaError> {
    let (_, context) = visible_contexts(&user, settings::token_id().as_deref())?;
    let mut workspaces: Vec<WorkspaceOut> = db::parsed(
        "WITH names AS (
           SELECT 'default' AS name, NULL::timestamptz AS created_at
           UNION ALL
           SELECT w.name, w.created_at FROM neotoma.workspaces w WHERE w.user_id = $1::uuid AND w.name <> 'default')
         SELECT coalesce(json_agg(json_build_object('name', n.name,
                  'entities', coalesce(c.current, 0), 'entities_including_merged', coalesce(c.total, 0),
                  'sources', (SELECT count(*) FROM neotoma.sources s WHERE s.user_id = $1::uuid AND s.workspace = n.name),
                  'created_at', neotoma._iso(n.created_at), 'in_context', false)
                ORDER BY n.name <> 'default', n.name), '[]')::text
         FROM names n
         LEFT JOIN (SELECT c.workspace, sum(c.current)::bigint AS current, sum(c.total)::bigint AS total
                    FROM neotoma.entity_counts c WHERE c.user_id = $1::uuid GROUP BY c.workspace) c
           ON c.workspace = n.name",
        &[Arg::uuid(user)],
        "workspaces",
    )?;
    let limits = crate::tenancy::call_limits();
    workspaces.retain(|w| limits.admits_workspace(&w.name));
    for w in &mut workspaces {
        w.in_context = w.name == context.workspace;
    }
    Ok(ListWorkspacesResponse {
        workspaces,
        context,
    })
}

/// The level a context action changes: as asked, else the token's when
/// the caller came with one, else the user's.
fn level_of(
    asked: Option<ContextLevel>,
    token: Option<&str>,
) -> Result<ContextLevel, NeotomaError> {
    match (asked, token) {
        (Some(ContextLevel::Token), None) => Err(NeotomaError::invalid_field(
            "level",
            "this connection came with no token: only the user's context (level user) can be set",
        )),
        // The user's context is every token's default: a token limited to
        // some workspaces changes only its own.
        (Some(ContextLevel::User), Some(_))
            if crate::tenancy::call_limits().workspaces.is_some() =>
        {
            Err(NeotomaError::new(
                ErrorCode::Forbidden,
                "this token may use only some workspaces: it sets its own context (level token), \
                 not the user's",
            )
            .with("limit", "workspaces")
            .with("field", "level"))
        }
        (Some(level), _) => Ok(level),
        (None, Some(_)) => Ok(ContextLevel::Token),
        (None, None) => Ok(ContextLevel::User),
    }
}

pub fn set_context(user: Uuid, req: SetContextRequest) -> Result<ContextResponse, NeotomaError> {
    let token = settings::token_id();
    let level = level_of(req.level, token.as_deref())?;
    let (workspace, project) = match (req.workspace, req.project_entity_id.as_deref()) {
        (Some(w), None) => (w, None),
        (None, Some(id)) => {
            let id = common::entity_id("project_entity_id", id)?;
            super::entities::hide_beyond_limit(&user, &id, || {
                crate::scope::absent(ErrorCode::EntityNotFound, "entity", &id)
            })?;
            let (entity, _) = resolve_entity(&user, &id)?;
            let w = WorkspaceName::parse("project_entity_id", &entity.workspace)?;
            (w, Some(entity.id))
        }
        _ => {
            return Err(NeotomaError::validation(
                "give either workspace or project_entity_id",
            ))
        }
    };
    crate::tenancy::call_limits().permit_workspace("workspace", workspace.as_str())?;
    crate::scope::create_workspace(&user, &workspace)?;
    let token_id = match level {
        ContextLevel::Token => token.as_deref(),
        ContextLevel::User => None,
    };
    if let Some(t) = token_id {
        crate::tenancy::check_token(&user, t)?;
    }
    db::run(
        "INSERT INTO neotoma.contexts (user_id, token_id, workspace, project_entity_id, set_at)
         VALUES ($1::uuid, $2::uuid, $3, $4, now())
         ON CONFLICT (user_id, token_id) DO UPDATE
           SET workspace = EXCLUDED.workspace, project_entity_id = EXCLUDED.project_entity_id,
               set_at = EXCLUDED.set_at",
        &[
            Arg::uuid(user),
            Arg::OptText(token_id),
            Arg::Text(workspace.as_str()),
            Arg::OptText(project.as_deref()),
        ],
    )?;
    answer(&user, None)
}

pub fn get_context(user: Uuid, _req: GetContextRequest) -> Result<ContextResponse, NeotomaError> {
    answer(&user, None)
}

pub fn clear_context(
    user: Uuid,
    req: ClearContextRequest,
) -> Result<ContextResponse, NeotomaError> {
    let token = settings::token_id();
    let level = level_of(req.level, token.as_deref())?;
    let cleared = match level {
        ContextLevel::Token => db::affected(
            "DELETE FROM neotoma.contexts WHERE user_id = $1::uuid AND token_id = $2::uuid",
            &[Arg::uuid(user), Arg::OptText(token.as_deref())],
        )?,
        ContextLevel::User => db::affected(
            "DELETE FROM neotoma.contexts WHERE user_id = $1::uuid AND token_id IS NULL",
            &[Arg::uuid(user)],
        )?,
    };
    answer(&user, Some(cleared > 0))
}
