//! Plaid's HTTP API for the plaid_* actions: Link tokens, public token
//! exchange, accounts and institution, `/transactions/sync` pages. What an
//! item's sync read is recorded by one SQL call (`record_plaid_sync`), so a
//! failure on any page records nothing of that sync.

use super::Context;
use neotoma_core::{ErrorCode, NeotomaError};
use serde_json::{Value, json};

/// Most pages one sync of an item reads (a page holds up to 500): what a
/// sync records is held in memory and written in one transaction; the rest
/// comes with the next sync.
const MAX_PAGES: usize = 50;
/// Restarts of a sync when Plaid says the item changed during pagination.
const MAX_RESTARTS: usize = 3;
/// The purpose access tokens are sealed for.
const PURPOSE: &str = "plaid";

pub struct PlaidOptions {
    pub url: String,
    pub client_id: Option<String>,
    pub secret: Option<String>,
    /// Transactions per `/transactions/sync` page.
    pub page_size: u32,
}

pub struct Plaid {
    base: String,
    client_id: String,
    secret: String,
    page_size: u32,
    http: reqwest::Client,
}

/// What Plaid answered instead of a result.
#[derive(Debug)]
struct Failure {
    status: Option<u16>,
    error_type: String,
    error_code: String,
    message: String,
    request_id: Value,
}

impl Failure {
    fn error(&self, code: ErrorCode) -> NeotomaError {
        NeotomaError::new(code, format!("Plaid: {}", self.message))
            .with("plaid_error_type", self.error_type.as_str())
            .with("plaid_error_code", self.error_code.as_str())
            .with("plaid_request_id", self.request_id.clone())
            .with("http_status", json!(self.status))
    }

    fn api_error(&self) -> NeotomaError {
        self.error(ErrorCode::PlaidApiError)
    }
}

impl Plaid {
    /// None without credentials: the actions then answer PLAID_NOT_CONFIGURED.
    pub fn new(opts: &PlaidOptions, http: reqwest::Client) -> Option<Plaid> {
        Some(Plaid {
            base: opts.url.trim_end_matches('/').to_string(),
            client_id: opts.client_id.clone().filter(|s| !s.is_empty())?,
            secret: opts.secret.clone().filter(|s| !s.is_empty())?,
            page_size: opts.page_size.clamp(1, 500),
            http,
        })
    }

    async fn post(&self, path: &str, mut body: Value) -> Result<Value, Failure> {
        body["client_id"] = json!(self.client_id);
        body["secret"] = json!(self.secret);
        let response = self
            .http
            .post(format!("{}{path}", self.base))
            .json(&body)
            .send()
            .await
            .map_err(|e| Failure {
                status: None,
                error_type: "API_ERROR".into(),
                error_code: "UNREACHABLE".into(),
                message: format!("cannot reach {}: {e}", self.base),
                request_id: Value::Null,
            })?;
        let status = response.status();
        let answer: Value = response.json().await.unwrap_or(Value::Null);
        if status.is_success() {
            return Ok(answer);
        }
        Err(Failure {
            status: Some(status.as_u16()),
            error_type: answer["error_type"].as_str().unwrap_or("API_ERROR").into(),
            error_code: answer["error_code"].as_str().unwrap_or("UNKNOWN").into(),
            message: answer["error_message"]
                .as_str()
                .map_or_else(|| format!("{path} answered {status}"), str::to_string),
            request_id: answer["request_id"].clone(),
        })
    }

    async fn create_link_token(&self, work: &Value) -> Result<Value, NeotomaError> {
        let mut body = json!({
            "client_name": work["client_name"], "language": "en", "country_codes": ["US"],
            "user": {"client_user_id": work["client_user_id"]},
        });
        if work["access_token"].is_string() {
            body["access_token"] = work["access_token"].clone();
        } else {
            body["products"] = work["products"].clone();
        }
        if work["redirect_uri"].is_string() {
            body["redirect_uri"] = work["redirect_uri"].clone();
        }
        let answer = self
            .post("/link/token/create", body)
            .await
            .map_err(|f| f.api_error())?;
        Ok(json!({"link_token": answer["link_token"], "expiration": answer["expiration"]}))
    }

    /// Exchanges the public token, reads the item's accounts and
    /// institution, records the item (its token sealed).
    async fn exchange(&self, ctx: &Context<'_>, work: &Value) -> Result<Value, NeotomaError> {
        let exchanged = self
            .post(
                "/item/public_token/exchange",
                json!({"public_token": work["public_token"]}),
            )
            .await
            .map_err(|f| {
                let refused = f.error_code == "INVALID_PUBLIC_TOKEN"
                    || (f.error_type == "INVALID_INPUT" && f.error_code.contains("PUBLIC_TOKEN"));
                if refused {
                    f.error(ErrorCode::PlaidInvalidToken)
                } else {
                    f.api_error()
                }
            })?;
        let access_token = exchanged["access_token"].as_str().unwrap_or_default();
        let accounts = self
            .post("/accounts/get", json!({"access_token": access_token}))
            .await
            .map_err(|f| f.api_error())?;
        let institution_id = accounts["item"]["institution_id"].as_str();
        let institution_name = match institution_id {
            Some(id) => self
                .post(
                    "/institutions/get_by_id",
                    json!({"institution_id": id, "country_codes": ["US"]}),
                )
                .await
                .map_err(|f| f.api_error())?["institution"]["name"]
                .clone(),
            None => Value::Null,
        };
        let products = [
            &accounts["item"]["products"],
            &accounts["item"]["billed_products"],
        ]
        .into_iter()
        .find(|p| p.as_array().is_some_and(|a| !a.is_empty()))
        .cloned()
        .unwrap_or_else(|| json!(["transactions"]));
        let record = json!({
            "item_id": exchanged["item_id"], "institution_id": institution_id,
            "institution_name": institution_name, "products": products,
            // Where the action was asked to connect it (its syncs store there).
            "workspace": work["workspace"],
            "accounts": accounts["accounts"],
            "access_token_ciphertext": ctx.secrets.seal(ctx.caller.user, PURPOSE, access_token)?,
        });
        let mut answer = ctx
            .db
            .call("neotoma.record_plaid_item", ctx.caller, &record, true)
            .await?;
        if work["trigger_initial_sync"] == true {
            // The item is connected whatever the first sync does (the public
            // token is spent): a failed sync is said in sync_summary.
            answer["sync_summary"] = match self.initial_sync(ctx, &answer["plaid_item"]["id"]).await
            {
                Ok(summary) => summary,
                Err(e) => json!({"added": 0, "modified": 0, "removed": 0, "error": e.to_json()}),
            };
        }
        Ok(answer)
    }

    /// plaid_sync of one item just connected: its summary.
    async fn initial_sync(&self, ctx: &Context<'_>, item: &Value) -> Result<Value, NeotomaError> {
        let args = json!({ "plaid_item_id": item });
        let mut sync = ctx
            .db
            .call("neotoma.plaid_sync", ctx.caller, &args, true)
            .await?;
        let work = sync
            .as_object_mut()
            .and_then(|s| s.remove("external"))
            .unwrap_or(Value::Null);
        let synced = self.sync(ctx, &work).await?;
        Ok(synced["syncs"][0]["summary"].clone())
    }

    /// Reads every page of an item's changes since its cursor.
    async fn read_changes(&self, token: &str, cursor: Option<&str>) -> Result<Value, Failure> {
        let mut restarts = 0;
        'restart: loop {
            let mut next = cursor.map(str::to_string);
            let mut pages = Vec::new();
            let mut accounts = Value::Null;
            for _ in 0..MAX_PAGES {
                let mut body = json!({"access_token": token, "count": self.page_size});
                if let Some(c) = &next {
                    body["cursor"] = json!(c);
                }
                let page = match self.post("/transactions/sync", body).await {
                    Err(f)
                        if f.error_code == "TRANSACTIONS_SYNC_MUTATION_DURING_PAGINATION"
                            && restarts < MAX_RESTARTS =>
                    {
                        restarts += 1;
                        continue 'restart;
                    }
                    r => r?,
                };
                pages.push(json!({"added": page["added"], "modified": page["modified"], "removed": page["removed"]}));
                if page["accounts"].is_array() {
                    accounts = page["accounts"].clone();
                }
                next = page["next_cursor"].as_str().map(str::to_string);
                if page["has_more"] != true {
                    break;
                }
            }
            if !accounts.is_array() {
                accounts = self
                    .post("/accounts/get", json!({"access_token": token}))
                    .await?["accounts"]
                    .clone();
            }
            return Ok(json!({"pages": pages, "accounts": accounts, "next_cursor": next}));
        }
    }

    /// Syncs the items of the work; each item's outcome recorded in one
    /// SQL call.
    async fn sync(&self, ctx: &Context<'_>, work: &Value) -> Result<Value, NeotomaError> {
        let items = work["items"].as_array().cloned().unwrap_or_default();
        let single = work["sync_all"] != true;
        let mut syncs = Vec::new();
        for item in &items {
            let Some(sealed) = item["access_token_ciphertext"].as_str() else {
                return Err(NeotomaError::new(
                    ErrorCode::SyncFailed,
                    "the item's access token was not handed to this gateway: its database role must be a member of neotoma_service",
                ));
            };
            let token = ctx.secrets.open(ctx.caller.user, PURPOSE, sealed)?;
            let cursor = item["cursor"].as_str();
            let mut record = json!({
                "plaid_item_id": item["plaid_item_id"], "cursor_before": item["cursor_before"],
            });
            let failure = match self.read_changes(&token, cursor).await {
                Ok(read) => {
                    for k in ["pages", "accounts", "next_cursor"] {
                        record[k] = read[k].clone();
                    }
                    None
                }
                Err(f) => {
                    record["error"] = json!({"code": f.error_code, "message": f.message});
                    Some(f)
                }
            };
            let recorded = ctx
                .db
                .call("neotoma.record_plaid_sync", ctx.caller, &record, true)
                .await?;
            if let Some(f) = failure
                && single
            {
                return Err(f
                    .api_error()
                    .with("plaid_item_id", item["plaid_item_id"].clone()));
            }
            syncs.push(recorded);
        }
        let total = syncs.iter().filter(|s| s["status"] == "success").count();
        Ok(json!({"syncs": syncs, "total_synced_items": total}))
    }
}

/// Runs the work of a plaid_* action.
pub async fn complete(
    plaid: Option<&Plaid>,
    ctx: &Context<'_>,
    work: &Value,
) -> Result<Value, NeotomaError> {
    let Some(plaid) = plaid else {
        return Err(NeotomaError::new(
            ErrorCode::PlaidNotConfigured,
            "Plaid is not configured: start neotoma-mcp with --plaid-client-id and --plaid-secret (NEOTOMA_PLAID_CLIENT_ID, NEOTOMA_PLAID_SECRET)",
        ));
    };
    match work["operation"].as_str() {
        Some("create_link_token") => plaid.create_link_token(work).await,
        Some("exchange_public_token") => plaid.exchange(ctx, work).await,
        Some("sync") => plaid.sync(ctx, work).await,
        other => Err(NeotomaError::new(
            ErrorCode::ServiceUnavailable,
            format!("unknown Plaid operation {other:?}; update neotoma-mcp"),
        )),
    }
}
