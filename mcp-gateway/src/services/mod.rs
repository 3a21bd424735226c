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

use crate::auth::Caller;
use crate::database::Database;
use neotoma_core::NeotomaError;
use serde_json::Value;
use std::net::IpAddr;
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

/// Addresses a stranger may not make the gateway connect to: private,
/// loopback, link-local, shared (CGNAT), benchmarking, multicast and
/// unspecified ones, and IPv6 forms that carry such an IPv4 address
/// (mapped, NAT64 64:ff9b::/96, 6to4 2002::/16).
pub fn private_address(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            v4.is_private()
                || v4.is_loopback()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || (a == 100 && (b & 0xc0) == 64)
                || (a == 198 && (b & 0xfe) == 18)
        }
        IpAddr::V6(v6) => {
            let s = v6.segments();
            let embedded = |hi: u16, lo: u16| {
                let [a, b] = hi.to_be_bytes();
                let [c, d] = lo.to_be_bytes();
                private_address(IpAddr::V4(std::net::Ipv4Addr::new(a, b, c, d)))
            };
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00
                || (s[0] & 0xffc0) == 0xfe80
                || v6
                    .to_ipv4_mapped()
                    .is_some_and(|v4| private_address(IpAddr::V4(v4)))
                || (s[0] == 0x64
                    && s[1] == 0xff9b
                    && s[2..6] == [0, 0, 0, 0]
                    && embedded(s[6], s[7]))
                || (s[0] == 0x2002 && embedded(s[1], s[2]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_addresses_are_recognised() {
        for p in [
            "127.0.0.1",
            "10.1.2.3",
            "192.168.0.1",
            "172.16.0.1",
            "169.254.1.1",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "198.18.0.1",
            "224.0.0.1",
            "ff02::1",
            "64:ff9b::7f00:1",
            "2002:c0a8:1::1",
        ] {
            assert!(private_address(p.parse().unwrap()), "{p}");
        }
        for p in [
            "93.184.216.34",
            "142.250.74.109",
            "2a00:1450:4001::6d",
            "64:ff9b::5db8:d822",
            "2002:5db8:d822::1",
        ] {
            assert!(!private_address(p.parse().unwrap()), "{p}");
        }
    }
}
