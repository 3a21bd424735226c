//! IMAP for the e-mail connectors (imap, gmail): checks a login when a
//! connector is made, and fetches the messages a sync asks for (by UID,
//! from the connector's `UIDVALIDITY:UID` cursor, never marking them read).
//! What a sync read is recorded by one SQL call (`record_provider_sync`).

use super::Context;
use crate::identity::Caller;
use async_imap::Client;
use base64::Engine;
use futures_util::TryStreamExt;
use neotoma_core::actions::providers::imap_cursor;
use neotoma_core::{ErrorCode, NeotomaError};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};

/// The purpose passwords are sealed for.
const PURPOSE: &str = "imap";

pub struct Imap {
    pub timeout: Duration,
    /// HTTP callers may name hosts at private or loopback addresses.
    pub allow_private_hosts: bool,
}

/// What a connector reaches.
struct Account {
    host: String,
    port: u16,
    tls: bool,
    username: String,
    password: String,
    mailbox: String,
}

impl Account {
    fn from(settings: &Value, password: String) -> Account {
        let text = |k: &str| settings[k].as_str().unwrap_or_default().to_string();
        Account {
            host: text("host"),
            port: settings["port"]
                .as_u64()
                .and_then(|p| u16::try_from(p).ok())
                .unwrap_or(993),
            tls: settings["tls"].as_bool().unwrap_or(true),
            username: text("username"),
            password,
            mailbox: text("mailbox"),
        }
    }
}

/// Largest message a sync reads (larger ones are skipped and counted).
const MAX_MESSAGE_BYTES: usize = 25 * 1024 * 1024;
/// Most bytes of messages one sync reads; the rest waits for the next.
const MAX_SYNC_BYTES: usize = 64 * 1024 * 1024;

/// What one session read.
struct Fetched {
    uid_validity: u32,
    /// (UID, raw message), in UID order.
    messages: Vec<(u32, Vec<u8>)>,
    /// Messages passed over as too large.
    skipped: u32,
    /// The cursor after these messages.
    cursor: String,
}

impl Imap {
    /// The address to connect to: resolved once, and refused for an HTTP
    /// caller when it is private (unless the operator allows it).
    async fn address(&self, account: &Account, caller: &Caller) -> Result<SocketAddr, String> {
        let mut addrs = tokio::net::lookup_host((account.host.as_str(), account.port))
            .await
            .map_err(|e| format!("cannot resolve {}: {e}", account.host))?;
        let addr = addrs
            .next()
            .ok_or_else(|| format!("{} has no address", account.host))?;
        // Said without the address it resolved to: a remote caller learns
        // nothing of the server's network from the refusal.
        if caller.remote && !self.allow_private_hosts && crate::net::private_address(addr.ip()) {
            return Err(format!(
                "{} is a private or loopback host; this server does not connect to those for remote callers (--allow-private-hosts)",
                account.host
            ));
        }
        Ok(addr)
    }

    /// Logs in, selects the mailbox and, with `fetch`, reads the messages
    /// after the cursor (at most `max`).
    async fn session(
        &self,
        account: &Account,
        caller: &Caller,
        fetch: Option<(Option<&str>, usize, usize)>,
    ) -> Result<Fetched, String> {
        let work = async {
            let addr = self.address(account, caller).await?;
            let tcp = tokio::net::TcpStream::connect(addr)
                .await
                .map_err(|e| format!("cannot connect to {}:{}: {e}", account.host, account.port))?;
            if account.tls {
                let connector = tokio_native_tls::native_tls::TlsConnector::new()
                    .map_err(|e| format!("TLS: {e}"))?;
                let tls = tokio_native_tls::TlsConnector::from(connector)
                    .connect(&account.host, tcp)
                    .await
                    .map_err(|e| format!("TLS with {}: {e}", account.host))?;
                run(tls, account, fetch).await
            } else {
                run(tcp, account, fetch).await
            }
        };
        tokio::time::timeout(self.timeout, work)
            .await
            .map_err(|_| format!("{} did not answer within {:?}", account.host, self.timeout))?
    }
}

/// One IMAP session over `stream`.
async fn run<T>(
    stream: T,
    account: &Account,
    fetch: Option<(Option<&str>, usize, usize)>,
) -> Result<Fetched, String>
where
    T: AsyncRead + AsyncWrite + Unpin + std::fmt::Debug + Send,
{
    let mut client = Client::new(stream);
    client
        .read_response()
        .await
        .map_err(|e| format!("no IMAP greeting: {e}"))?
        .ok_or("the server closed the connection before greeting")?;
    let mut session = client
        .login(&account.username, &account.password)
        .await
        .map_err(|(e, _)| format!("login refused: {e}"))?;
    let mailbox = session
        .select(&account.mailbox)
        .await
        .map_err(|e| format!("cannot open mailbox {}: {e}", account.mailbox))?;
    let uid_validity = mailbox.uid_validity.unwrap_or(0);
    let mut fetched = Fetched {
        uid_validity,
        messages: Vec::new(),
        skipped: 0,
        cursor: format!("{uid_validity}:0"),
    };
    if let Some((cursor, page, max)) = fetch {
        // A new UIDVALIDITY renumbers the mailbox: start again.
        let after = match imap_cursor(cursor) {
            Some((v, last)) if v == uid_validity => last,
            _ => 0,
        };
        fetched.cursor = format!("{uid_validity}:{after}");
        let mut uids: Vec<u32> = session
            .uid_search(format!("UID {}:*", after.saturating_add(1)))
            .await
            .map_err(|e| format!("UID SEARCH failed: {e}"))?
            .into_iter()
            // `n:*` also answers the last message when every UID is below n.
            .filter(|u| *u > after)
            .collect();
        uids.sort_unstable();
        uids.truncate(max);
        // Sizes first: a message over MAX_MESSAGE_BYTES is skipped (counted,
        // the cursor passes it), and one sync reads at most MAX_SYNC_BYTES
        // (the rest waits for the next): a server cannot fill our memory.
        let mut sizes = std::collections::BTreeMap::new();
        for chunk in uids.chunks(page.max(1)) {
            let set = chunk
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(",");
            let answers: Vec<_> = session
                .uid_fetch(&set, "(UID RFC822.SIZE)")
                .await
                .map_err(|e| format!("UID FETCH failed: {e}"))?
                .try_collect()
                .await
                .map_err(|e| format!("UID FETCH failed: {e}"))?;
            for m in &answers {
                if let (Some(uid), Some(size)) = (m.uid, m.size) {
                    sizes.insert(uid, size as usize);
                }
            }
        }
        let mut chosen = Vec::new();
        let mut total = 0usize;
        let mut passed = after;
        for uid in &uids {
            let size = sizes.get(uid).copied().unwrap_or(usize::MAX);
            if size > MAX_MESSAGE_BYTES {
                fetched.skipped += 1;
            } else if total + size > MAX_SYNC_BYTES && !chosen.is_empty() {
                break;
            } else {
                total += size;
                chosen.push(*uid);
            }
            passed = *uid;
        }
        let uids = chosen;
        for chunk in uids.chunks(page.max(1)) {
            let set = chunk
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(",");
            let messages: Vec<_> = session
                .uid_fetch(&set, "(UID BODY.PEEK[])")
                .await
                .map_err(|e| format!("UID FETCH failed: {e}"))?
                .try_collect()
                .await
                .map_err(|e| format!("UID FETCH failed: {e}"))?;
            for m in &messages {
                if let (Some(uid), Some(body)) = (m.uid, m.body()) {
                    fetched.messages.push((uid, body.to_vec()));
                }
            }
        }
        fetched.messages.sort_by_key(|(uid, _)| *uid);
        fetched.messages.dedup_by_key(|(uid, _)| *uid);
        fetched.cursor = format!("{uid_validity}:{passed}");
    }
    let _ = session.logout().await;
    Ok(fetched)
}

/// Runs the work of connect_provider and sync_provider_imports for e-mail.
pub async fn complete(imap: &Imap, ctx: &Context<'_>, work: &Value) -> Result<Value, NeotomaError> {
    match work["operation"].as_str() {
        Some("connect") => connect(imap, ctx, work).await,
        Some("sync") => sync(imap, ctx, work).await,
        other => Err(NeotomaError::new(
            ErrorCode::ServiceUnavailable,
            format!("unknown IMAP operation {other:?}; update neotoma-mcp"),
        )),
    }
}

/// Checks the login, then records the connector (its password sealed).
async fn connect(imap: &Imap, ctx: &Context<'_>, work: &Value) -> Result<Value, NeotomaError> {
    let password = work["password"].as_str().unwrap_or_default().to_string();
    let account = Account::from(&work["settings"], password.clone());
    imap.session(&account, ctx.caller, None)
        .await
        .map_err(|reason| {
            NeotomaError::new(
                ErrorCode::ValidationError,
                format!("cannot use this mailbox: {reason}"),
            )
            .with("field", "settings")
        })?;
    let record = json!({
        "provider": work["provider"], "external_id": work["external_id"], "settings": work["settings"],
        // Where the action was asked to connect it (its syncs store there).
        "workspace": work["workspace"],
        "secret_ciphertext": ctx.secrets.seal(ctx.caller.user, PURPOSE, &password)?,
    });
    ctx.db
        .call("neotoma.record_connector", ctx.caller, &record, true)
        .await
}

/// Reads each connector's new messages, then records them all at once.
async fn sync(imap: &Imap, ctx: &Context<'_>, work: &Value) -> Result<Value, NeotomaError> {
    let limit = work["limit"].as_u64().unwrap_or(50) as usize;
    let max = limit * work["max_pages"].as_u64().unwrap_or(10) as usize;
    let mut connectors = Vec::new();
    for c in work["connectors"].as_array().into_iter().flatten() {
        let Some(sealed) = c["password_ciphertext"].as_str() else {
            return Err(NeotomaError::new(
                ErrorCode::SyncFailed,
                "the connector's password was not handed to this gateway: its database role must be a member of neotoma_service",
            ));
        };
        let account = Account::from(
            &c["settings"],
            ctx.secrets.open(ctx.caller.user, PURPOSE, sealed)?,
        );
        let mut out =
            json!({"connector_id": c["connector_id"], "cursor_before": c["cursor_before"]});
        match imap
            .session(
                &account,
                ctx.caller,
                Some((c["cursor"].as_str(), limit, max)),
            )
            .await
        {
            Ok(read) => {
                out["cursor_after"] = json!(read.cursor);
                out["skipped"] = json!(read.skipped);
                out["messages"] = read
                    .messages
                    .iter()
                    .map(|(uid, raw)| {
                        json!({"uid": uid, "content": base64::engine::general_purpose::STANDARD.encode(raw)})
                    })
                    .collect();
                tracing::debug!(
                    uid_validity = read.uid_validity,
                    messages = read.messages.len(),
                    "IMAP sync read"
                );
            }
            Err(reason) => {
                tracing::warn!(%reason, "IMAP sync failed");
                out["error"] = json!(reason);
            }
        }
        connectors.push(out);
    }
    let record = json!({
        "provider": work["provider_run"]["provider"], "started_at": work["provider_run"]["started_at"],
        "connectors": connectors,
    });
    ctx.db
        .call("neotoma.record_provider_sync", ctx.caller, &record, true)
        .await
}
