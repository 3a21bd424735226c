//! The outside services some actions need (Prometheus, Plaid, IMAP). No
//! network call runs inside Postgres: an action's SQL function checks the
//! request and answers the work to do under `external` (`service` names
//! it); the gateway does it here and, for work that changes the memory,
//! hands what it got to one SQL function that records it in one
//! transaction.

pub mod imap;
pub mod plaid;
pub mod prometheus;
pub mod secrets;

use crate::database::Database;
use crate::identity::Caller;
use neotoma_core::NeotomaError;
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;

/// What a service's work needs besides the service: who it is for, the
/// database that records it, and the key that seals secrets.
pub struct Context<'a> {
    pub caller: &'a Caller,
    pub db: &'a Database,
    pub secrets: &'a secrets::Secrets,
}

/// How the services are reached (from the command line).
pub struct ServiceOptions {
    pub prometheus_url: Option<String>,
    pub plaid: plaid::PlaidOptions,
    pub secrets_key_file: PathBuf,
    pub timeout: Duration,
    /// HTTP callers may connect providers at private or loopback addresses.
    pub allow_private_hosts: bool,
}

pub struct Services {
    prometheus: Option<prometheus::Prometheus>,
    plaid: Option<plaid::Plaid>,
    imap: imap::Imap,
    secrets: secrets::Secrets,
}

impl Services {
    pub fn new(opts: &ServiceOptions) -> anyhow::Result<Services> {
        let http = reqwest::Client::builder().timeout(opts.timeout).build()?;
        Ok(Services {
            prometheus: opts
                .prometheus_url
                .as_ref()
                .map(|url| prometheus::Prometheus::new(url, http.clone())),
            plaid: plaid::Plaid::new(&opts.plaid, http),
            imap: imap::Imap {
                timeout: opts.timeout,
                allow_private_hosts: opts.allow_private_hosts,
            },
            secrets: secrets::Secrets::new(opts.secrets_key_file.clone()),
        })
    }

    /// Does the work an action's answer describes (`work`, its `external`)
    /// and completes the answer with what it got.
    pub async fn complete(
        &self,
        work: Value,
        answer: Value,
        caller: &Caller,
        db: &Database,
    ) -> Result<Value, NeotomaError> {
        let ctx = Context {
            caller,
            db,
            secrets: &self.secrets,
        };
        match work["service"].as_str() {
            Some("prometheus") => {
                prometheus::complete(self.prometheus.as_ref(), &work, answer).await
            }
            Some("plaid") => {
                let done = plaid::complete(self.plaid.as_ref(), &ctx, &work).await;
                match work.get("provider_run") {
                    // sync_provider_imports for plaid: the run's row and answer.
                    Some(run) => record_plaid_run(run, done, caller, db).await,
                    None => done,
                }
            }
            Some("imap") => imap::complete(&self.imap, &ctx, &work).await,
            other => Err(NeotomaError::new(
                neotoma_core::ErrorCode::ServiceUnavailable,
                format!(
                    "this gateway cannot reach the service {other:?} the action needs; update neotoma-mcp"
                ),
            )),
        }
    }
}

/// Records a plaid sync run by sync_provider_imports: its counts, or why
/// it failed.
async fn record_plaid_run(
    run: &Value,
    done: Result<Value, NeotomaError>,
    caller: &Caller,
    db: &Database,
) -> Result<Value, NeotomaError> {
    let mut record = serde_json::json!({"provider": "plaid", "started_at": run["started_at"]});
    match done {
        Ok(synced) => {
            let syncs = synced["syncs"].as_array().cloned().unwrap_or_default();
            let sum = |k: &str| -> u64 {
                syncs
                    .iter()
                    .map(|s| s["summary"][k].as_u64().unwrap_or(0))
                    .sum()
            };
            let failed = syncs.iter().filter(|s| s["status"] != "success").count();
            record["stats"] = serde_json::json!({
                "records_added": sum("added"),
                "records_updated": sum("modified") + sum("removed"),
                "errors": failed,
            });
            if failed > 0 && failed == syncs.len() {
                record["error"] = syncs[0]["error"].clone();
            }
        }
        Err(e) if e.code == neotoma_core::ErrorCode::PlaidNotConfigured => return Err(e),
        Err(e) => {
            record["stats"] =
                serde_json::json!({"records_added": 0, "records_updated": 0, "errors": 1});
            record["error"] = serde_json::json!(e.message);
        }
    }
    db.call("neotoma.record_provider_sync", caller, &record, true)
        .await
}
