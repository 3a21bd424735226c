//! Provider imports (seed 001 §3.26–3.27): the catalog, connectors, and
//! syncs. As for Plaid, the actions answer the gateway's work (`external`)
//! and the gateway records what it read in one call: `record_connector`
//! for a connector it checked (its password sealed), `record_provider_sync`
//! for a sync run — every fetched message a `message/rfc822` source read by
//! the e-mail interpreter, the connectors' cursors, the run's row.

use crate::db::{self, Arg};
use crate::{ingest, owner, settings};
use neotoma_core::actions::common::{micros, uuid};
use neotoma_core::actions::providers::*;
use neotoma_core::actions::store::StoreRequest;
use neotoma_core::ids::derived_uuid;
use neotoma_core::time::format_micros;
use neotoma_core::{ErrorCode, NeotomaError};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use uuid::Uuid;

pub fn list_provider_catalog(
    _user: Option<Uuid>,
    _req: ListProviderCatalogRequest,
) -> Result<Value, NeotomaError> {
    Ok(catalog())
}

/// A provider a connector can be made to now.
fn available(id: &str) -> Result<&'static Provider, NeotomaError> {
    let p = find(id)?;
    if p.status != "available" {
        return Err(NeotomaError::invalid_field(
            "provider",
            format!("{} is not available yet ({})", p.name, p.status),
        )
        .with("status", p.status));
    }
    Ok(p)
}

fn mail(provider: &str) -> bool {
    matches!(provider, "imap" | "gmail")
}

pub fn connect_provider(_user: Uuid, req: ConnectProviderRequest) -> Result<Value, NeotomaError> {
    let provider = available(&req.provider)?;
    if !mail(provider.id) {
        return Err(NeotomaError::invalid_field(
            "provider",
            "connect Plaid with plaid_create_link_token, then plaid_exchange_public_token",
        ));
    }
    let account = ImapAccount::from_settings(provider.id, &req.settings.unwrap_or_default())?;
    Ok(json!({"external": {
        "service": "imap", "operation": "connect", "provider": provider.id,
        "external_id": account.external_id(), "settings": account.public_settings(),
        "password": account.password,
        "workspace": crate::scope::current().write_workspace(),
    }}))
}

pub fn list_connectors(user: Uuid, req: ListConnectorsRequest) -> Result<Value, NeotomaError> {
    if let Some(p) = &req.provider {
        find(p)?;
    }
    let connectors = db::json(
        "SELECT coalesce(jsonb_agg(jsonb_build_object(
                   'connector_id', id, 'provider', provider, 'external_id', external_id,
                   'settings', settings, 'status', status, 'last_error', last_error,
                   'last_successful_sync', neotoma._iso(last_successful_sync),
                   'created_at', neotoma._iso(created_at)
                   , 'workspace', workspace
                   ) ORDER BY created_at, id), '[]')
         FROM neotoma.connectors WHERE user_id = $1::uuid AND ($2::text IS NULL OR provider = $2)",
        &[Arg::uuid(user), Arg::OptText(req.provider.as_deref())],
    )?;
    Ok(json!({ "connectors": connectors }))
}

pub fn sync_provider_imports(
    user: Uuid,
    req: SyncProviderImportsRequest,
) -> Result<Value, NeotomaError> {
    let provider = available(&req.provider)?;
    let (limit, max_pages) = paging(&req)?;
    if let Some(c) = &req.connector_id {
        uuid("connector_id", c)?;
    }
    let started_at = format_micros(db::transaction_start_micros());
    let connectors = db::json(
        "SELECT coalesce(jsonb_agg(jsonb_build_object('connector_id', id, 'item_id', external_id,
                   'settings', settings, 'cursor', cursor) ORDER BY created_at, id), '[]')
         FROM neotoma.connectors
         WHERE user_id = $1::uuid AND provider = $2 AND status <> 'revoked'
           AND ($3::uuid IS NULL OR id = $3::uuid)",
        &[
            Arg::uuid(user),
            Arg::Text(provider.id),
            Arg::OptText(req.connector_id.as_deref()),
        ],
    )?;
    let connectors = connectors.as_array().cloned().unwrap_or_default();
    if connectors.is_empty() {
        return Err(NeotomaError::new(
            ErrorCode::ConnectorNotFound,
            match &req.connector_id {
                Some(_) => {
                    "no such connector of this user for this provider (list_connectors lists them)"
                        .to_string()
                }
                None => format!(
                    "no {} connector: make one with connect_provider first",
                    provider.name
                ),
            },
        ));
    }
    let ids: Vec<String> = connectors
        .iter()
        .filter_map(|c| c["connector_id"].as_str().map(str::to_string))
        .collect();
    let secrets = sealed_secrets(&user, ids)?;
    let initial = req.sync_type == Some(SyncType::Initial);
    let run = json!({"provider": provider.id, "started_at": started_at});
    let work = if provider.id == "plaid" {
        let items: Vec<Value> = connectors
            .iter()
            .map(|c| {
                let id = c["connector_id"].as_str().unwrap_or_default();
                sync_item(id, &c["item_id"], &c["cursor"], initial, &secrets)
            })
            .collect();
        json!({"service": "plaid", "operation": "sync", "sync_all": true, "items": items,
               "provider_run": run})
    } else {
        let connectors: Vec<Value> = connectors
            .iter()
            .map(|c| {
                let id = c["connector_id"].as_str().unwrap_or_default();
                json!({"connector_id": id, "settings": c["settings"],
                       "cursor": if initial { Value::Null } else { c["cursor"].clone() },
                       "cursor_before": c["cursor"], "password_ciphertext": secrets.get(id)})
            })
            .collect();
        json!({"service": "imap", "operation": "sync", "limit": limit, "max_pages": max_pages,
               "connectors": connectors, "provider_run": run})
    };
    Ok(json!({
        "sync_run_id": Value::Null, "provider": provider.id, "status": "pending",
        "stats": {"records_added": 0, "records_updated": 0, "errors": 0},
        "started_at": started_at, "external": work,
    }))
}

/// One item of a Plaid sync's work for the gateway (plaid_sync,
/// sync_provider_imports): where to start (`from_start`:
/// the beginning), the cursor it must still have when the sync is recorded,
/// and its sealed token (for the gateway's role only).
pub fn sync_item(
    id: &str,
    item_id: &Value,
    cursor: &Value,
    from_start: bool,
    secrets: &BTreeMap<String, String>,
) -> Value {
    json!({
        "plaid_item_id": id, "item_id": item_id,
        "cursor": if from_start { &Value::Null } else { cursor },
        "cursor_before": cursor, "access_token_ciphertext": secrets.get(id),
    })
}

/// The sealed secrets of `user`'s connectors `ids`, for the gateway's role
/// only (anyone else gets none: only the gateway can use them).
pub fn sealed_secrets(
    user: &Uuid,
    ids: Vec<String>,
) -> Result<BTreeMap<String, String>, NeotomaError> {
    if !settings::gateway() {
        return Ok(BTreeMap::new());
    }
    let v = owner::as_owner(|| {
        db::json(
            "SELECT coalesce(jsonb_object_agg(id, translate(encode(secret, 'base64'), E'\\n', '')), '{}')
             FROM neotoma.connectors
             WHERE user_id = $1::uuid AND id = ANY($2) AND secret IS NOT NULL",
            &[Arg::uuid(user), Arg::uuid_texts(&ids)],
        )
    })?;
    db::from_json(v, "connector secrets")
}

/// The id of `user`'s connector to `external_id` at `provider`.
pub fn connector_id(user: &Uuid, provider: &str, external_id: &str) -> Uuid {
    derived_uuid("connector", &[&user.to_string(), provider, external_id])
}

/// Writes a connector (its sealed secret too) as the extension's owner:
/// users may not touch the secret column.
pub fn save_connector(
    user: &Uuid,
    provider: &str,
    external_id: &str,
    settings: &Value,
    secret: &[u8],
) -> Result<Uuid, NeotomaError> {
    let id = connector_id(user, provider, external_id);
    // Its syncs store in the workspace it is connected in (again: the latest).
    let workspace = crate::scope::current().write_workspace();
    let query = crate::installed::adapt(
        "INSERT INTO neotoma.connectors (user_id, id, provider, external_id, settings, secret
                                         , workspace
                                         )
         VALUES ($1::uuid, $2::uuid, $3, $4, $5::jsonb, $6
                 , $7
                 )
         ON CONFLICT (user_id, provider, external_id) DO UPDATE
           SET settings = EXCLUDED.settings, secret = EXCLUDED.secret, status = 'active',
               last_error = NULL, updated_at = now()
               , workspace = EXCLUDED.workspace
               ",
    )?;
    owner::as_owner(|| {
        db::run(
            &query,
            &[
                Arg::uuid(user),
                Arg::uuid(id),
                Arg::Text(provider),
                Arg::Text(external_id),
                Arg::Json(settings),
                Arg::Bytes(secret),
                Arg::Text(&workspace),
            ],
        )
    })?;
    Ok(id)
}

/// What a provider said is recorded by the gateway only (its role,
/// neotoma_service): a user cannot skip the checks it made (the login, the
/// address) or invent what a provider answered.
pub fn gateway_only() -> Result<(), NeotomaError> {
    if settings::gateway() {
        return Ok(());
    }
    Err(NeotomaError::new(
        ErrorCode::Forbidden,
        "only the MCP gateway records what it read from a provider (the role neotoma_service)",
    ))
}

/// A sealed secret as the gateway sends it (base64).
pub fn sealed(field: &str, s: &str) -> Result<Vec<u8>, NeotomaError> {
    neotoma_core::interpret::decode_base64(s)
        .filter(|b| !b.is_empty())
        .ok_or_else(|| NeotomaError::invalid_field(field, "not base64"))
}

pub fn record_connector(user: Uuid, req: RecordConnectorRequest) -> Result<Value, NeotomaError> {
    gateway_only()?;
    let provider = available(&req.provider)?;
    if !mail(provider.id) {
        return Err(NeotomaError::invalid_field(
            "provider",
            "Plaid items are recorded by record_plaid_item",
        ));
    }
    let mut with_password = req.settings.clone();
    with_password.insert("password".into(), json!("-"));
    let account = ImapAccount::from_settings(provider.id, &with_password)?;
    if account.external_id() != req.external_id {
        return Err(NeotomaError::invalid_field(
            "external_id",
            "external_id must be the account's username@host:port/mailbox",
        ));
    }
    let secret = sealed("secret_ciphertext", &req.secret_ciphertext)?;
    let settings = account.public_settings();
    let id = save_connector(&user, provider.id, &req.external_id, &settings, &secret)?;
    Ok(
        json!({"connector_id": id, "provider": provider.id, "external_id": req.external_id,
              "settings": settings, "status": "active"}),
    )
}

/// Records what a sync read from one connector; answers (added, errors).
fn record_connector_sync(
    user: &Uuid,
    provider: &str,
    c: &ConnectorSync,
) -> Result<(u64, u64), NeotomaError> {
    let current = db::json(
        &crate::installed::adapt(
            "SELECT jsonb_build_object('cursor', cursor
                                       , 'workspace', workspace
                                       ) FROM neotoma.connectors
             WHERE user_id = $1::uuid AND id = $2::uuid AND provider = $3 FOR UPDATE",
        )?,
        &[
            Arg::uuid(user),
            Arg::Text(&c.connector_id),
            Arg::Text(provider),
        ],
    )?;
    if current.is_null() {
        return Err(NeotomaError::new(
            ErrorCode::ConnectorNotFound,
            "no such connector of this user",
        ));
    }
    if let Some(error) = &c.error {
        db::run(
            "UPDATE neotoma.connectors SET status = 'error', last_error = $3, updated_at = now()
             WHERE user_id = $1::uuid AND id = $2::uuid",
            &[
                Arg::uuid(user),
                Arg::Text(&c.connector_id),
                Arg::Text(error),
            ],
        )?;
        return Ok((0, 1));
    }
    if current["cursor"].as_str() != c.cursor_before.as_deref() {
        return Err(NeotomaError::new(
            ErrorCode::SyncFailed,
            "another sync of this connector ran at the same time; sync again",
        )
        .with("retryable", true));
    }
    let (mut added, mut errors) = (0u64, u64::from(c.skipped));
    // Into the connector's workspace.
    crate::scope::writing_in(current["workspace"].as_str(), || {
        store_messages(user, c, &mut added, &mut errors)
    })?;
    db::run(
        "UPDATE neotoma.connectors
         SET cursor = $3, last_successful_sync = now(), status = 'active', last_error = NULL, updated_at = now()
         WHERE user_id = $1::uuid AND id = $2::uuid",
        &[Arg::uuid(user), Arg::Text(&c.connector_id), Arg::OptText(c.cursor_after.as_deref())],
    )?;
    Ok((added, errors))
}

/// Stores each message a sync read as a file; counts what was added and
/// what failed.
fn store_messages(
    user: &Uuid,
    c: &ConnectorSync,
    added: &mut u64,
    errors: &mut u64,
) -> Result<(), NeotomaError> {
    for m in &c.messages {
        let req = StoreRequest {
            file_content: Some(m.content.clone()),
            mime_type: Some("message/rfc822".into()),
            original_filename: Some(format!("{}.eml", m.uid)),
            ..StoreRequest::default()
        };
        match ingest::files::store(*user, &m.content, &req) {
            Ok(out) => {
                let failed = out
                    .interpretation
                    .as_ref()
                    .is_some_and(|i| i.status == "failed");
                *added += u64::from(!out.deduplicated && !failed);
                *errors += u64::from(failed);
            }
            Err(e) if e.code == ErrorCode::ValidationError || e.code == ErrorCode::FileTooLarge => {
                *errors += 1
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

pub fn record_provider_sync(
    user: Uuid,
    req: RecordProviderSyncRequest,
) -> Result<Value, NeotomaError> {
    gateway_only()?;
    check_record_sync(&req)?;
    let started = micros("started_at", &req.started_at)?;
    let mut stats: Map<String, Value> = Map::new();
    let status = if let Some(given) = &req.stats {
        for k in ["records_added", "records_updated", "errors"] {
            stats.insert(
                k.into(),
                json!(given.get(k).and_then(Value::as_u64).unwrap_or(0)),
            );
        }
        if req.error.is_some() {
            "failed"
        } else {
            "completed"
        }
    } else {
        let (mut added, mut errors) = (0, 0);
        for c in &req.connectors {
            let (a, e) = record_connector_sync(&user, &req.provider, c)?;
            added += a;
            errors += e;
        }
        stats.insert("records_added".into(), json!(added));
        stats.insert("records_updated".into(), json!(0));
        stats.insert("errors".into(), json!(errors));
        let all_failed =
            !req.connectors.is_empty() && req.connectors.iter().all(|c| c.error.is_some());
        if all_failed || req.error.is_some() {
            "failed"
        } else {
            "completed"
        }
    };
    let id = derived_uuid(
        "sync_run",
        &[&user.to_string(), &req.provider, &req.started_at],
    );
    let error = req
        .error
        .clone()
        .or_else(|| req.connectors.iter().find_map(|c| c.error.clone()));
    let row = db::json(
        "INSERT INTO neotoma.sync_runs (user_id, id, provider, status, stats, error, started_at, completed_at)
         VALUES ($1::uuid, $2::uuid, $3, $4, $5::jsonb, $6, to_timestamp($7::bigint / 1e6), clock_timestamp())
         ON CONFLICT (user_id, id) DO UPDATE SET status = EXCLUDED.status, stats = EXCLUDED.stats,
           error = EXCLUDED.error, completed_at = EXCLUDED.completed_at
         RETURNING jsonb_build_object('started_at', neotoma._iso(started_at), 'completed_at', neotoma._iso(completed_at))",
        &[
            Arg::uuid(user),
            Arg::uuid(id),
            Arg::Text(&req.provider),
            Arg::Text(status),
            Arg::Json(&Value::Object(stats.clone())),
            Arg::OptText(error.as_deref()),
            Arg::Int(started),
        ],
    )?;
    let mut answer = json!({
        "sync_run_id": id, "provider": req.provider, "status": status, "stats": stats,
        "started_at": row["started_at"], "completed_at": row["completed_at"],
    });
    if let Some(e) = error {
        answer["error"] = json!(e);
    }
    Ok(answer)
}
