//! Plaid (seed 001 §3.22–3.25). The actions check the request and answer
//! the work for the gateway (`external`), which talks to Plaid and records
//! what it got with `record_plaid_item` / `record_plaid_sync`, each one
//! transaction: the item (its access token encrypted by the gateway), and
//! what Plaid said as entities through the store pipeline — each sync page
//! a source, a transaction's identity Plaid's transaction_id.

use super::providers::{gateway_only, save_connector, sealed, sealed_secrets, sync_item};
use super::relationships::create_relationship;
use crate::db::{self, Arg};
use crate::{ingest, lifecycle};
use neotoma_core::actions::plaid::*;
use neotoma_core::actions::relationships::CreateRelationshipRequest;
use neotoma_core::actions::store::{StoreProvenance, StoreRequest, StoredEntity};
use neotoma_core::time::format_micros;
use neotoma_core::{ErrorCode, NeotomaError};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use uuid::Uuid;

pub fn plaid_create_link_token(
    user: Uuid,
    req: PlaidCreateLinkTokenRequest,
) -> Result<Value, NeotomaError> {
    check_link_token(&req)?;
    Ok(json!({"external": {
        "service": "plaid", "operation": "create_link_token",
        "client_user_id": user.to_string(),
        "client_name": req.client_name.unwrap_or_else(|| "Neotoma".into()),
        "products": req.products.unwrap_or_else(|| vec!["transactions".into()]),
        "redirect_uri": req.redirect_uri, "access_token": req.access_token,
    }}))
}

pub fn plaid_exchange_public_token(
    _user: Uuid,
    req: PlaidExchangePublicTokenRequest,
) -> Result<Value, NeotomaError> {
    let token = req.public_token.trim();
    if token.is_empty() || token.len() > 500 {
        return Err(NeotomaError::invalid_field(
            "public_token",
            "public_token must be the token Plaid Link gave",
        ));
    }
    Ok(json!({"external": {
        "service": "plaid", "operation": "exchange_public_token", "public_token": token,
        "trigger_initial_sync": req.trigger_initial_sync.unwrap_or(false),
        "workspace": crate::scope::current().write_workspace(),
    }}))
}

/// The items of `user` a request names (all of them with `all`).
fn items(
    user: &Uuid,
    plaid_item_id: Option<&str>,
    item_id: Option<&str>,
    all: bool,
) -> Result<Vec<Value>, NeotomaError> {
    check_item_ids(plaid_item_id, item_id)?;
    let v = db::json(
        "SELECT coalesce(jsonb_agg(jsonb_build_object(
                   'id', c.id, 'item_id', c.external_id,
                   'institution_id', c.settings->'institution_id',
                   'institution_name', c.settings->'institution_name',
                   'products', coalesce(c.settings->'products', '[]'),
                   'last_successful_sync', neotoma._iso(c.last_successful_sync),
                   'status', c.status, 'cursor', c.cursor) ORDER BY c.created_at, c.id), '[]')
         FROM neotoma.connectors c
         WHERE c.user_id = $1::uuid AND c.provider = 'plaid'
           AND ($4 OR ($2::uuid IS NULL OR c.id = $2::uuid) AND ($3::text IS NULL OR c.external_id = $3))",
        &[
            Arg::uuid(user),
            Arg::OptText(plaid_item_id),
            Arg::OptText(item_id),
            Arg::Bool(all),
        ],
    )?;
    Ok(v.as_array().cloned().unwrap_or_default())
}

pub fn plaid_list_items(user: Uuid, req: PlaidListItemsRequest) -> Result<Value, NeotomaError> {
    let mut items = items(
        &user,
        req.plaid_item_id.as_deref(),
        req.item_id.as_deref(),
        false,
    )?;
    for item in &mut items {
        if let Some(o) = item.as_object_mut() {
            o.remove("cursor");
        }
    }
    Ok(json!({ "items": items }))
}

pub fn plaid_sync(user: Uuid, req: PlaidSyncRequest) -> Result<Value, NeotomaError> {
    let all = req.sync_all.unwrap_or(false);
    if !all && req.plaid_item_id.is_none() && req.item_id.is_none() {
        return Err(NeotomaError::validation(
            "name the item to sync (plaid_item_id or item_id), or set sync_all",
        )
        .with("field", "plaid_item_id"));
    }
    let found = items(
        &user,
        req.plaid_item_id.as_deref(),
        req.item_id.as_deref(),
        all,
    )?;
    let found: Vec<Value> = found
        .into_iter()
        .filter(|i| i["status"] != "revoked")
        .collect();
    if found.is_empty() && !all {
        return Err(NeotomaError::new(
            ErrorCode::PlaidItemNotFound,
            "no such Plaid item of this user (plaid_list_items lists them)",
        ));
    }
    let ids: Vec<String> = found
        .iter()
        .filter_map(|i| i["id"].as_str().map(str::to_string))
        .collect();
    // The sealed tokens go to the gateway's role only.
    let secrets = sealed_secrets(&user, ids)?;
    let force = req.force_full_sync.unwrap_or(false);
    let work: Vec<Value> = found
        .iter()
        .map(|i| {
            sync_item(
                i["id"].as_str().unwrap_or_default(),
                &i["item_id"],
                &i["cursor"],
                force,
                &secrets,
            )
        })
        .collect();
    Ok(json!({
        "syncs": [], "total_synced_items": 0,
        "external": {"service": "plaid", "operation": "sync", "sync_all": all, "items": work},
    }))
}

/// Stores entities of `user` from what Plaid said, as one source; answers
/// the stored entities in the order given. `sequence` orders the sources of
/// one recording: their observations are observed a microsecond apart, so a
/// transaction changed on a later page wins over an earlier page.
fn store(
    user: &Uuid,
    entities: Vec<Map<String, Value>>,
    sequence: i64,
) -> Result<Vec<StoredEntity>, NeotomaError> {
    if entities.is_empty() {
        return Ok(vec![]);
    }
    let entities: Vec<Value> = entities.into_iter().map(Value::Object).collect();
    let req = StoreRequest {
        entities: Some(entities.clone()),
        provenance: Some(StoreProvenance {
            source_refs: None,
            extracted_at: format_micros(db::transaction_start_micros() + sequence),
            extractor_version: "neotoma-plaid-sync".into(),
            agent_id: None,
        }),
        ..StoreRequest::default()
    };
    let out = ingest::structured::store(*user, &entities, &req)?;
    Ok(out.entities.unwrap_or_default())
}

fn part_of(user: &Uuid, part: &str, whole: &str) -> Result<(), NeotomaError> {
    create_relationship(
        *user,
        CreateRelationshipRequest {
            relationship_type: "PART_OF".into(),
            source_entity_id: part.into(),
            target_entity_id: whole.into(),
            metadata: None,
            valid_from: None,
            valid_to: None,
            user_id: None,
            workspace: None,
        },
    )
    .map(|_| ())
}

/// Accounts (and their institution) as entities, each account PART_OF the
/// institution; answers account_id → entity id.
fn store_accounts(
    user: &Uuid,
    accounts: &[Value],
    institution_id: Option<&str>,
    institution_name: Option<&str>,
) -> Result<BTreeMap<String, String>, NeotomaError> {
    let mut entities: Vec<Map<String, Value>> = accounts
        .iter()
        .map(|a| account_entity(a, institution_id, institution_name))
        .collect();
    if let Some(i) = institution_id {
        entities.push(institution_entity(i, institution_name));
    }
    let stored = store(user, entities, 0)?;
    let institution = institution_id
        .and_then(|_| stored.last())
        .map(|e| e.entity_id.clone());
    let mut ids = BTreeMap::new();
    for (a, e) in accounts.iter().zip(&stored) {
        if let Some(inst) = &institution {
            part_of(user, &e.entity_id, inst)?;
        }
        ids.insert(
            a["account_id"].as_str().unwrap_or_default().to_string(),
            e.entity_id.clone(),
        );
    }
    Ok(ids)
}

pub fn record_plaid_item(user: Uuid, req: RecordPlaidItemRequest) -> Result<Value, NeotomaError> {
    gateway_only()?;
    check_item_ids(None, Some(&req.item_id))?;
    let secret = sealed("access_token_ciphertext", &req.access_token_ciphertext)?;
    if let Some(j) = req
        .accounts
        .iter()
        .position(|a| a["account_id"].as_str().is_none_or(str::is_empty))
    {
        return Err(NeotomaError::invalid_field(
            &format!("accounts[{j}]"),
            "an account without account_id",
        ));
    }
    let accounts: Vec<Value> = req
        .accounts
        .iter()
        .map(|a| json!({"id": a["account_id"], "name": a["name"], "type": a["type"], "subtype": a["subtype"]}))
        .collect();
    let settings = json!({
        "institution_id": req.institution_id, "institution_name": req.institution_name,
        "products": req.products, "accounts": accounts,
    });
    let id = save_connector(&user, "plaid", &req.item_id, &settings, &secret)?;
    let entity_ids = store_accounts(
        &user,
        &req.accounts,
        req.institution_id.as_deref(),
        req.institution_name.as_deref(),
    )?;
    let accounts: Vec<Value> = accounts
        .into_iter()
        .map(|mut a| {
            a["entity_id"] = json!(a["id"].as_str().and_then(|i| entity_ids.get(i)));
            a
        })
        .collect();
    Ok(json!({"plaid_item": {
        "id": id, "item_id": req.item_id,
        "institution_id": req.institution_id,
        "institution_name": req.institution_name.unwrap_or_default(),
        "accounts": accounts,
    }}))
}

pub fn record_plaid_sync(user: Uuid, req: RecordPlaidSyncRequest) -> Result<Value, NeotomaError> {
    gateway_only()?;
    check_sync(&req)?;
    // The item, locked: one sync of an item records at a time.
    let item = db::json(
        &crate::installed::adapt(
            "SELECT jsonb_build_object('item_id', external_id, 'cursor', cursor,
                                       'institution_id', settings->'institution_id',
                                       'institution_name', settings->'institution_name'
                                       , 'workspace', workspace
                                       )
             FROM neotoma.connectors WHERE user_id = $1::uuid AND id = $2::uuid AND provider = 'plaid'
             FOR UPDATE",
        )?,
        &[Arg::uuid(user), Arg::Text(&req.plaid_item_id)],
    )?;
    if item.is_null() {
        return Err(NeotomaError::new(
            ErrorCode::PlaidItemNotFound,
            "no such Plaid item of this user",
        ));
    }
    let answer = |status: &str, summary: Value, error: Option<String>| {
        let mut a = json!({
            "plaid_item_id": req.plaid_item_id, "item_id": item["item_id"], "status": status,
            "summary": summary, "next_cursor": req.next_cursor.clone().or_else(|| item["cursor"].as_str().map(str::to_string)),
        });
        if let Some(e) = error {
            a["error"] = json!(e);
        }
        a
    };
    if let Some(error) = &req.error {
        let message = error["message"]
            .as_str()
            .unwrap_or("the sync failed")
            .to_string();
        db::run(
            "UPDATE neotoma.connectors SET status = 'error', last_error = $3, updated_at = now()
             WHERE user_id = $1::uuid AND id = $2::uuid",
            &[
                Arg::uuid(user),
                Arg::Text(&req.plaid_item_id),
                Arg::Text(&message),
            ],
        )?;
        return Ok(answer(
            "failed",
            json!({"added": 0, "modified": 0, "removed": 0}),
            Some(message),
        ));
    }
    if item["cursor"].as_str() != req.cursor_before.as_deref() {
        return Err(NeotomaError::new(
            ErrorCode::SyncFailed,
            "another sync of this item ran at the same time; sync again",
        )
        .with("retryable", true));
    }
    // Into the item's workspace.
    let (added, modified, removed) = crate::scope::writing_in(item["workspace"].as_str(), || {
        store_pages(&user, &req, &item)
    })?;
    db::run(
        "UPDATE neotoma.connectors
         SET cursor = $3, last_successful_sync = now(), status = 'active', last_error = NULL, updated_at = now()
         WHERE user_id = $1::uuid AND id = $2::uuid",
        &[Arg::uuid(user), Arg::Text(&req.plaid_item_id), Arg::OptText(req.next_cursor.as_deref())],
    )?;
    Ok(answer(
        "success",
        json!({"added": added, "modified": modified, "removed": removed}),
        None,
    ))
}

/// Stores the accounts and the pages of transactions a sync read; answers
/// how many were added, modified and removed.
fn store_pages(
    user: &Uuid,
    req: &RecordPlaidSyncRequest,
    item: &Value,
) -> Result<(u64, u64, u64), NeotomaError> {
    let user = *user;
    let institution_id = item["institution_id"].as_str();
    let institution_name = item["institution_name"].as_str();
    let accounts = store_accounts(&user, &req.accounts, institution_id, institution_name)?;
    let (mut added, mut modified, mut removed) = (0u64, 0u64, 0u64);
    for (sequence, page) in (1..).zip(&req.pages) {
        let mut entities: Vec<Map<String, Value>> = page
            .added
            .iter()
            .chain(&page.modified)
            .map(|t| transaction_entity(t, institution_name))
            .collect();
        entities.extend(page.removed.iter().map(removed_transaction_entity));
        let stored = store(&user, entities, sequence)?;
        for (t, e) in page.added.iter().zip(&stored) {
            if let Some(account) = t["account_id"].as_str().and_then(|a| accounts.get(a)) {
                part_of(&user, &e.entity_id, account)?;
            }
        }
        // Removed at the bank: deleted here (its history stays; an entity
        // deleted already stays so).
        let changed = page.added.len() + page.modified.len();
        for e in stored.iter().skip(changed) {
            lifecycle::delete_if_live(&user, &e.entity_id, "removed by Plaid")?;
        }
        added += page.added.len() as u64;
        modified += page.modified.len() as u64;
        removed += page.removed.len() as u64;
    }
    Ok((added, modified, removed))
}
