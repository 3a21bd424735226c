//! Plaid (seed 001 §3.22–3.25): the requests of the four actions, the two
//! the gateway records their results with, and how what Plaid answers
//! becomes entities of the truth model (transactions, accounts, the
//! institution). Pure: the gateway talks to Plaid, the extension records.

use super::common::uuid;
use crate::error::{NeotomaError, Result};
use crate::workspace::WorkspaceName;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Map, Value};

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlaidCreateLinkTokenRequest {
    /// The user Link is for (default: the caller).
    pub user_id: Option<String>,
    /// The name Link shows (default Neotoma).
    pub client_name: Option<String>,
    /// An item's access token, for Link's update mode.
    pub access_token: Option<String>,
    /// Plaid products (default ["transactions"]).
    pub products: Option<Vec<String>>,
    /// OAuth redirect URI registered with Plaid.
    pub redirect_uri: Option<String>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlaidExchangePublicTokenRequest {
    /// The public token Plaid Link gave.
    pub public_token: String,
    /// Sync the item's transactions at once (default false).
    pub trigger_initial_sync: Option<bool>,
    pub user_id: Option<String>,
    /// The workspace to write in; the context (set_context), else `default`,
    /// when absent.
    pub workspace: Option<WorkspaceName>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlaidSyncRequest {
    /// The item's id in Neotoma.
    pub plaid_item_id: Option<String>,
    /// The item's id at Plaid.
    pub item_id: Option<String>,
    /// Sync every item of the user (default false).
    pub sync_all: Option<bool>,
    /// Ignore the stored cursor: read every transaction again (default false).
    pub force_full_sync: Option<bool>,
    pub user_id: Option<String>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlaidListItemsRequest {
    pub plaid_item_id: Option<String>,
    pub item_id: Option<String>,
    pub user_id: Option<String>,
}

/// What the gateway learnt linking an item (internal: the gateway's call).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordPlaidItemRequest {
    pub item_id: String,
    pub institution_id: Option<String>,
    pub institution_name: Option<String>,
    #[serde(default)]
    pub products: Vec<String>,
    /// Plaid account objects (`/accounts/get`).
    #[serde(default)]
    pub accounts: Vec<Value>,
    /// The access token, encrypted by the gateway (base64); never answered.
    pub access_token_ciphertext: String,
    pub user_id: Option<String>,
    /// The workspace to write in; the context (set_context), else `default`,
    /// when absent.
    pub workspace: Option<WorkspaceName>,
}

/// One `/transactions/sync` page.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct SyncPage {
    #[serde(default)]
    pub added: Vec<Value>,
    #[serde(default)]
    pub modified: Vec<Value>,
    #[serde(default)]
    pub removed: Vec<Value>,
}

/// What a sync of one item read (internal: the gateway's call).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordPlaidSyncRequest {
    pub plaid_item_id: String,
    /// The cursor the sync started from (null: from the beginning); the
    /// item's must still be this one, else another sync ran meanwhile.
    pub cursor_before: Option<String>,
    pub next_cursor: Option<String>,
    #[serde(default)]
    pub pages: Vec<SyncPage>,
    /// Plaid account objects, as the sync answered them.
    #[serde(default)]
    pub accounts: Vec<Value>,
    /// Why the sync failed (Plaid's error), instead of pages.
    pub error: Option<Value>,
    pub user_id: Option<String>,
}

/// Checks the item ids a request names.
pub fn check_item_ids(plaid_item_id: Option<&str>, item_id: Option<&str>) -> Result<()> {
    if let Some(id) = plaid_item_id {
        uuid("plaid_item_id", id)?;
    }
    if item_id.is_some_and(|i| i.trim().is_empty() || i.len() > 200) {
        return Err(NeotomaError::invalid_field(
            "item_id",
            "item_id must be a Plaid item id",
        ));
    }
    Ok(())
}

/// Plaid products a link token may ask for.
const PRODUCTS: &[&str] = &[
    "transactions",
    "auth",
    "identity",
    "assets",
    "investments",
    "liabilities",
    "balance",
];

pub fn check_link_token(req: &PlaidCreateLinkTokenRequest) -> Result<()> {
    if let Some(p) = &req.products {
        if p.is_empty() || p.iter().any(|x| !PRODUCTS.contains(&x.as_str())) {
            return Err(NeotomaError::invalid_field(
                "products",
                format!(
                    "products must be a non-empty list of {}",
                    PRODUCTS.join(", ")
                ),
            ));
        }
    }
    if let Some(u) = &req.redirect_uri {
        if !u.starts_with("https://") && !u.starts_with("http://localhost") {
            return Err(NeotomaError::invalid_field(
                "redirect_uri",
                "redirect_uri must be an https:// URI (http://localhost for development)",
            ));
        }
    }
    if req
        .client_name
        .as_ref()
        .is_some_and(|n| n.trim().is_empty() || n.chars().count() > 30)
    {
        return Err(NeotomaError::invalid_field(
            "client_name",
            "client_name must be 1 to 30 characters",
        ));
    }
    Ok(())
}

fn text(v: &Value) -> Option<Value> {
    v.as_str()
        .filter(|s| !s.trim().is_empty())
        .map(|s| json!(s))
}

/// A Plaid transaction as a `transaction` entity: its transaction_id is
/// its identity; Plaid's other fields are kept as they are.
pub fn transaction_entity(t: &Value, institution_name: Option<&str>) -> Map<String, Value> {
    let mut e = Map::new();
    e.insert("entity_type".into(), json!("transaction"));
    e.insert("transaction_id".into(), t["transaction_id"].clone());
    for (to, from) in [
        ("amount", "amount"),
        ("date", "date"),
        ("account_id", "account_id"),
    ] {
        if !t[from].is_null() {
            e.insert(to.into(), t[from].clone());
        }
    }
    if let Some(c) = text(&t["iso_currency_code"]).or_else(|| text(&t["unofficial_currency_code"]))
    {
        e.insert("currency".into(), c);
    }
    if let Some(m) = text(&t["merchant_name"]).or_else(|| text(&t["name"])) {
        e.insert("merchant_name".into(), m);
    }
    if let Some(d) = text(&t["name"]) {
        e.insert("description".into(), d);
    }
    if let Some(c) = text(&t["personal_finance_category"]["primary"]) {
        e.insert("category".into(), c);
    }
    if let Some(d) = text(&t["authorized_date"]) {
        e.insert("authorized_date".into(), d);
    }
    if let Some(p) = text(&t["payment_channel"]) {
        e.insert("payment_channel".into(), p);
    }
    let status = if t["pending"].as_bool() == Some(true) {
        "pending"
    } else {
        "posted"
    };
    e.insert("status".into(), json!(status));
    e.insert("bank_provider".into(), json!("plaid"));
    if let Some(i) = institution_name {
        e.insert("institution_name".into(), json!(i));
    }
    e
}

/// A transaction Plaid removed: an observation that says so (its history
/// stays).
pub fn removed_transaction_entity(r: &Value) -> Map<String, Value> {
    let mut e = Map::new();
    e.insert("entity_type".into(), json!("transaction"));
    e.insert("transaction_id".into(), r["transaction_id"].clone());
    e.insert("status".into(), json!("removed"));
    e.insert("bank_provider".into(), json!("plaid"));
    e
}

/// A Plaid account as an `account` entity.
pub fn account_entity(
    a: &Value,
    institution_id: Option<&str>,
    institution_name: Option<&str>,
) -> Map<String, Value> {
    let mut e = Map::new();
    e.insert("entity_type".into(), json!("account"));
    e.insert("account_id".into(), a["account_id"].clone());
    for f in ["name", "official_name", "type", "subtype", "mask"] {
        if let Some(v) = text(&a[f]) {
            e.insert(f.into(), v);
        }
    }
    let b = &a["balances"];
    if let Some(c) = text(&b["iso_currency_code"]).or_else(|| text(&b["unofficial_currency_code"]))
    {
        e.insert("currency".into(), c);
    }
    for (to, from) in [
        ("current_balance", "current"),
        ("available_balance", "available"),
    ] {
        if b[from].is_number() {
            e.insert(to.into(), b[from].clone());
        }
    }
    if let Some(i) = institution_id {
        e.insert("institution_id".into(), json!(i));
    }
    if let Some(n) = institution_name {
        e.insert("institution_name".into(), json!(n));
    }
    e.insert("bank_provider".into(), json!("plaid"));
    e
}

/// The institution as a `company` entity, identified by Plaid's id.
pub fn institution_entity(institution_id: &str, name: Option<&str>) -> Map<String, Value> {
    let mut e = Map::new();
    e.insert("entity_type".into(), json!("company"));
    e.insert(
        "external_id".into(),
        json!(format!("plaid:{institution_id}")),
    );
    e.insert("name".into(), json!(name.unwrap_or(institution_id)));
    e.insert("type".into(), json!("financial_institution"));
    e
}

/// Checks what Plaid answered before anything is stored: every
/// transaction and account has its id.
pub fn check_sync(req: &RecordPlaidSyncRequest) -> Result<()> {
    uuid("plaid_item_id", &req.plaid_item_id)?;
    for (i, page) in req.pages.iter().enumerate() {
        for (kind, list) in [
            ("added", &page.added),
            ("modified", &page.modified),
            ("removed", &page.removed),
        ] {
            if let Some(j) = list
                .iter()
                .position(|t| t["transaction_id"].as_str().is_none_or(str::is_empty))
            {
                return Err(NeotomaError::invalid_field(
                    &format!("pages[{i}].{kind}[{j}]"),
                    "a transaction without transaction_id",
                ));
            }
        }
    }
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
    Ok(())
}

/// The catalog's entries of this family's actions, by name: each one's
/// title, its description for an agent and how it behaves
/// (`crate::catalog::spec`).
pub(crate) fn spec(name: &str) -> Option<crate::catalog_entry::Entry> {
    use crate::catalog_entry::Entry;
    Some(match name {
        "plaid_create_link_token" => Entry::new(
            "Plaid: create a Link token",
            "Start connecting a bank account through Plaid: returns a short-lived \
                {link_token, expiration} for Plaid Link (products default [\"transactions\"]; \
                pass access_token for Link's update mode). Then call \
                plaid_exchange_public_token with the public token Link gives. PLAID_NOT_CONFIGURED \
                when the server has no Plaid credentials.",
        )
        .not_idempotent(),
        "plaid_exchange_public_token" => Entry::new(
            "Plaid: connect an item",
            "Finish connecting a bank through Plaid: exchanges Link's public_token for an \
                access token (stored encrypted, never returned), records the item, its \
                institution and accounts (as entities), and with trigger_initial_sync also syncs \
                its transactions. Returns {plaid_item: {id, item_id, institution_name, \
                accounts}, sync_summary?}.",
        ),
        "plaid_sync" => Entry::new(
            "Plaid: sync transactions",
            "Sync the transactions of a connected Plaid item (plaid_item_id or item_id), or of \
                every item (sync_all), from where the last sync stopped (force_full_sync reads \
                everything again). New transactions become `transaction` entities (identified by \
                Plaid's transaction_id, so nothing is duplicated), changes add observations, \
                removed ones are deleted (their history stays). Returns {syncs: [{plaid_item_id, \
                item_id, status, summary: {added, modified, removed}, next_cursor, error?}], \
                total_synced_items}.",
        )
        .not_idempotent(),
        "plaid_list_items" => Entry::new(
            "Plaid: list items",
            "List the connected Plaid items (banks), without their access tokens: {items: \
                [{id, item_id, institution_id, institution_name, products, \
                last_successful_sync, status}]}.",
        )
        .read_only(),
        "record_plaid_item" => Entry::new(
            "Record a Plaid item",
            "Used by the MCP gateway: records an item it linked with Plaid.",
        )
        .internal(),
        "record_plaid_sync" => Entry::new(
            "Record a Plaid sync",
            "Used by the MCP gateway: records what a sync of an item read from Plaid.",
        )
        .internal()
        .not_idempotent(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transactions_keep_plaid_identity_and_fields() {
        let t = json!({"transaction_id": "tx1", "account_id": "acc1", "amount": 12.5,
            "iso_currency_code": "USD", "date": "2026-11-01", "authorized_date": "2026-10-31",
            "name": "STARBUCKS 123", "merchant_name": "Starbucks", "pending": false,
            "payment_channel": "in store", "personal_finance_category": {"primary": "FOOD_AND_DRINK"}});
        let e = transaction_entity(&t, Some("First Platypus Bank"));
        assert_eq!(e["transaction_id"], "tx1");
        assert_eq!(e["merchant_name"], "Starbucks");
        assert_eq!(e["description"], "STARBUCKS 123");
        assert_eq!(e["category"], "FOOD_AND_DRINK");
        assert_eq!(e["status"], "posted");
        assert_eq!(e["currency"], "USD");
        let pending = transaction_entity(
            &json!({"transaction_id": "tx2", "name": "X", "pending": true}),
            None,
        );
        assert_eq!(
            (pending["status"].clone(), pending["merchant_name"].clone()),
            (json!("pending"), json!("X"))
        );
        assert_eq!(
            removed_transaction_entity(&json!({"transaction_id": "tx1"}))["status"],
            "removed"
        );
    }

    #[test]
    fn accounts_and_institutions() {
        let a = json!({"account_id": "acc1", "name": "Checking", "mask": "0000", "type": "depository",
                       "subtype": "checking", "balances": {"current": 110.5, "available": null, "iso_currency_code": "USD"}});
        let e = account_entity(&a, Some("ins_1"), Some("Bank"));
        assert_eq!(e["current_balance"], 110.5);
        assert!(!e.contains_key("available_balance"));
        assert_eq!(
            institution_entity("ins_1", None)["external_id"],
            "plaid:ins_1"
        );
    }

    #[test]
    fn requests_are_checked() {
        let bad: PlaidCreateLinkTokenRequest =
            serde_json::from_value(json!({"products": ["coffee"]})).unwrap();
        assert_eq!(
            check_link_token(&bad).unwrap_err().details["field"],
            "products"
        );
        let sync: RecordPlaidSyncRequest = serde_json::from_value(json!({
            "plaid_item_id": "00000000-0000-0000-0000-000000000001",
            "pages": [{"added": [{"amount": 1}]}]}))
        .unwrap();
        assert_eq!(
            check_sync(&sync).unwrap_err().details["field"],
            "pages[0].added[0]"
        );
        assert!(check_item_ids(Some("nope"), None).is_err());
    }
}
