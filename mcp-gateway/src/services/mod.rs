//! The outside services some actions need (Prometheus, Plaid, IMAP). No
//! network call runs inside Postgres: an action's SQL function checks the
//! request and answers the work to do under `external` (`service` names
//! it); the gateway does it here and, for work that changes the memory,
//! hands what it got to one SQL function that records it in one
//! transaction.

pub mod plaid;
pub mod prometheus;
pub mod secrets;

use crate::auth::Caller;
use crate::database::Database;
use neotoma_core::NeotomaError;
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;

/// How the services are reached (from the command line).
pub struct ServiceOptions {
    pub prometheus_url: Option<String>,
    pub plaid: plaid::PlaidOptions,
    pub secrets_key_file: PathBuf,
    pub timeout: Duration,
}

pub struct Services {
    prometheus: Option<prometheus::Prometheus>,
    plaid: Option<plaid::Plaid>,
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
        match work["service"].as_str() {
            Some("prometheus") => {
                prometheus::complete(self.prometheus.as_ref(), &work, answer).await
            }
            Some("plaid") => {
                let ctx = plaid::Context {
                    caller,
                    db,
                    secrets: &self.secrets,
                };
                plaid::complete(self.plaid.as_ref(), &ctx, &work).await
            }
            other => Err(NeotomaError::new(
                neotoma_core::ErrorCode::ServiceUnavailable,
                format!(
                    "this gateway cannot reach the service {other:?} the action needs; update neotoma-mcp"
                ),
            )),
        }
    }
}
