//! Provider imports (seed 001 §3.26–3.27): the catalog of providers, the
//! connectors a user makes to them, and the requests of syncs. An IMAP
//! connector reads any e-mail account (Gmail with an app password); Plaid
//! items are connectors too. Pure: the gateway talks to the providers.

use super::common::uuid;
use crate::error::{ErrorCode, NeotomaError, Result};
use crate::workspace::WorkspaceName;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Map, Value};

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListProviderCatalogRequest {
    pub user_id: Option<String>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConnectProviderRequest {
    /// A provider of list_provider_catalog that is available: imap, gmail.
    pub provider: String,
    /// imap: {host, port?, tls?, username, password, mailbox?}; gmail:
    /// {username, password (an app password), mailbox?}.
    pub settings: Option<Map<String, Value>>,
    pub user_id: Option<String>,
    /// The workspace to write in; the context (set_context), else `default`,
    /// when absent.
    pub workspace: Option<WorkspaceName>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListConnectorsRequest {
    pub provider: Option<String>,
    pub user_id: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SyncType {
    /// Everything again, from the first message.
    Initial,
    /// What is new since the last sync (the default).
    Incremental,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SyncProviderImportsRequest {
    pub provider: String,
    /// One connector (default: every connector of the provider).
    pub connector_id: Option<String>,
    pub sync_type: Option<SyncType>,
    /// Records per page (default 50, at most 500).
    pub limit: Option<i64>,
    /// Pages per sync (default 10, at most 100); the rest waits for the next.
    pub max_pages: Option<i64>,
    pub user_id: Option<String>,
}

/// A connector the gateway checked (internal: the gateway's call).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordConnectorRequest {
    pub provider: String,
    pub external_id: String,
    pub settings: Map<String, Value>,
    /// The password, sealed by the gateway (base64).
    pub secret_ciphertext: String,
    pub user_id: Option<String>,
    /// The workspace to write in; the context (set_context), else `default`,
    /// when absent.
    pub workspace: Option<WorkspaceName>,
}

/// One fetched message.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FetchedMessage {
    pub uid: u32,
    /// The raw RFC 5322 message, base64.
    pub content: String,
}

/// What a sync read from one connector.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConnectorSync {
    pub connector_id: String,
    /// The connector's cursor when the sync began (must still be it).
    pub cursor_before: Option<String>,
    pub cursor_after: Option<String>,
    #[serde(default)]
    pub messages: Vec<FetchedMessage>,
    /// Messages passed over (too large); counted as errors.
    #[serde(default)]
    pub skipped: u32,
    /// Why reading this connector failed.
    pub error: Option<String>,
}

/// A sync run (internal: the gateway's call): what it read from each
/// connector, or (plaid) its counts.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordProviderSyncRequest {
    pub provider: String,
    pub started_at: String,
    #[serde(default)]
    pub connectors: Vec<ConnectorSync>,
    /// Counts of a sync done elsewhere (plaid_sync): records_added,
    /// records_updated, errors.
    pub stats: Option<Map<String, Value>>,
    pub error: Option<String>,
    pub user_id: Option<String>,
}

/// One provider of the catalog.
#[derive(Debug)]
pub struct Provider {
    pub id: &'static str,
    pub name: &'static str,
    pub description: &'static str,
    pub capabilities: &'static [&'static str],
    pub auth_type: &'static str,
    pub oauth_scopes: &'static [&'static str],
    pub popularity_score: u8,
    pub status: &'static str,
}

#[allow(clippy::too_many_arguments)] // one row of the catalog
const fn provider(
    id: &'static str,
    name: &'static str,
    description: &'static str,
    capabilities: &'static [&'static str],
    auth_type: &'static str,
    oauth_scopes: &'static [&'static str],
    popularity_score: u8,
    status: &'static str,
) -> Provider {
    Provider {
        id,
        name,
        description,
        capabilities,
        auth_type,
        oauth_scopes,
        popularity_score,
        status,
    }
}

/// The providers, with honest statuses: what this server can connect and
/// test is `available`; the rest is `coming_soon`.
pub const PROVIDERS: &[Provider] = &[
    provider("plaid", "Plaid (banks)",
        "Bank and card transactions, accounts and institutions through Plaid: connect with plaid_create_link_token and plaid_exchange_public_token",
        &["transactions", "accounts"], "oauth", &[], 90, "available"),
    provider("imap", "E-mail (IMAP)",
        "Any e-mail account over IMAP: each new message becomes a source read by the e-mail interpreter (a note and its contacts)",
        &["messages"], "credentials", &[], 85, "available"),
    provider("gmail", "Gmail",
        "Gmail over IMAP (imap.gmail.com) with an app password (Google account → Security → App passwords)",
        &["messages"], "credentials", &[], 95, "available"),
    provider("outlook", "Outlook / Microsoft 365",
        "Outlook mail, calendar and contacts through Microsoft Graph", &["messages", "events", "contacts"],
        "oauth", &["Mail.Read", "Calendars.Read", "Contacts.Read"], 80, "coming_soon"),
    provider("google_calendar", "Google Calendar", "Calendar events", &["events"],
        "oauth", &["https://www.googleapis.com/auth/calendar.readonly"], 75, "coming_soon"),
    provider("x", "X (Twitter)", "Your posts, likes and bookmarks", &["posts", "likes", "bookmarks"],
        "oauth", &["tweet.read", "users.read", "bookmark.read", "like.read"], 60, "coming_soon"),
    provider("instagram", "Instagram", "Your posts and saved media", &["posts", "saved"],
        "oauth", &["instagram_basic"], 55, "coming_soon"),
    provider("notion", "Notion", "Pages and databases you share with the integration", &["pages"],
        "oauth", &[], 50, "coming_soon"),
];

/// The provider called `id`.
pub fn find(id: &str) -> Result<&'static Provider> {
    PROVIDERS.iter().find(|p| p.id == id).ok_or_else(|| {
        NeotomaError::new(ErrorCode::ProviderNotFound, format!("no provider {id:?}")).with(
            "providers",
            PROVIDERS.iter().map(|p| p.id).collect::<Vec<_>>(),
        )
    })
}

pub fn catalog() -> Value {
    let providers: Vec<Value> = PROVIDERS
        .iter()
        .map(|p| {
            let mut v = json!({
                "id": p.id, "name": p.name, "description": p.description,
                "capabilities": p.capabilities, "auth_type": p.auth_type,
                "popularity_score": p.popularity_score, "status": p.status,
            });
            if p.auth_type == "oauth" && !p.oauth_scopes.is_empty() {
                v["oauth_scopes"] = json!(p.oauth_scopes);
            }
            v
        })
        .collect();
    json!({ "providers": providers })
}

/// How the IMAP connector of a `connect_provider` reaches the mailbox: the
/// settings kept (no password) and the password.
#[derive(Debug, Clone, PartialEq)]
pub struct ImapAccount {
    pub host: String,
    pub port: u16,
    pub tls: bool,
    pub username: String,
    pub mailbox: String,
    pub password: String,
}

impl ImapAccount {
    /// The settings of `provider` (imap, gmail), checked.
    pub fn from_settings(provider: &str, s: &Map<String, Value>) -> Result<ImapAccount> {
        let field = |name: &str| format!("settings.{name}");
        let text = |name: &str, required: bool| -> Result<Option<String>> {
            match s.get(name) {
                None | Some(Value::Null) if !required => Ok(None),
                Some(Value::String(v)) if !v.trim().is_empty() && v.len() <= 320 => {
                    Ok(Some(v.trim().to_string()))
                }
                _ => Err(NeotomaError::invalid_field(
                    &field(name),
                    format!("settings.{name} must be a non-empty string"),
                )),
            }
        };
        for k in s.keys() {
            if !["host", "port", "tls", "username", "password", "mailbox"].contains(&k.as_str()) {
                return Err(NeotomaError::invalid_field(
                    &field(k),
                    "IMAP settings are host, port, tls, username, password and mailbox",
                ));
            }
        }
        let gmail = provider == "gmail";
        let host = match text("host", !gmail)? {
            Some(h) => h,
            None => "imap.gmail.com".to_string(),
        };
        if host
            .chars()
            .any(|c| c.is_whitespace() || c == '/' || c == '@')
        {
            return Err(NeotomaError::invalid_field(
                &field("host"),
                "settings.host must be a host name or address",
            ));
        }
        let tls = match s.get("tls") {
            None | Some(Value::Null) => true,
            Some(Value::Bool(b)) => *b,
            _ => {
                return Err(NeotomaError::invalid_field(
                    &field("tls"),
                    "settings.tls must be true or false",
                ))
            }
        };
        if gmail && !tls {
            return Err(NeotomaError::invalid_field(
                &field("tls"),
                "Gmail needs TLS",
            ));
        }
        let port = match s.get("port") {
            None | Some(Value::Null) => {
                if tls {
                    993
                } else {
                    143
                }
            }
            Some(v) => v
                .as_u64()
                .and_then(|p| u16::try_from(p).ok())
                .filter(|p| *p > 0)
                .ok_or_else(|| {
                    NeotomaError::invalid_field(
                        &field("port"),
                        "settings.port must be a port number",
                    )
                })?,
        };
        let username = text("username", true)?.unwrap_or_default();
        let password = match s.get("password") {
            Some(Value::String(p)) if !p.is_empty() && p.len() <= 1024 => p.clone(),
            _ => {
                return Err(NeotomaError::invalid_field(
                    &field("password"),
                    "settings.password must be the account's (app) password",
                ))
            }
        };
        let mailbox = text("mailbox", false)?.unwrap_or_else(|| "INBOX".to_string());
        Ok(ImapAccount {
            host,
            port,
            tls,
            username,
            mailbox,
            password,
        })
    }

    /// Its settings as stored and listed: everything but the password.
    pub fn public_settings(&self) -> Value {
        json!({"host": self.host, "port": self.port, "tls": self.tls,
               "username": self.username, "mailbox": self.mailbox})
    }

    /// The connector's identity at the provider: one per account and mailbox.
    pub fn external_id(&self) -> String {
        format!(
            "{}@{}:{}/{}",
            self.username, self.host, self.port, self.mailbox
        )
    }
}

/// An IMAP cursor: `UIDVALIDITY:last UID`.
pub fn imap_cursor(cursor: Option<&str>) -> Option<(u32, u32)> {
    let (validity, uid) = cursor?.split_once(':')?;
    Some((validity.parse().ok()?, uid.parse().ok()?))
}

/// A sync's `limit` and `max_pages`, checked.
pub fn paging(req: &SyncProviderImportsRequest) -> Result<(i64, i64)> {
    let limit = req.limit.unwrap_or(50);
    let pages = req.max_pages.unwrap_or(10);
    if !(1..=500).contains(&limit) {
        return Err(NeotomaError::invalid_field(
            "limit",
            "limit must be between 1 and 500",
        ));
    }
    if !(1..=100).contains(&pages) {
        return Err(NeotomaError::invalid_field(
            "max_pages",
            "max_pages must be between 1 and 100",
        ));
    }
    Ok((limit, pages))
}

pub fn check_record_sync(req: &RecordProviderSyncRequest) -> Result<()> {
    find(&req.provider)?;
    for (i, c) in req.connectors.iter().enumerate() {
        uuid(&format!("connectors[{i}].connector_id"), &c.connector_id)?;
    }
    Ok(())
}

/// The catalog's entries of this family's actions, by name: each one's
/// title, its description for an agent and how it behaves
/// (`crate::catalog::spec`).
pub(crate) fn spec(name: &str) -> Option<crate::catalog_entry::Entry> {
    use crate::catalog_entry::Entry;
    Some(match name {
        "list_provider_catalog" => Entry::new(
            "List providers",
            "List the outside sources this memory can import from, with their status \
                (available, beta, coming_soon), capabilities and how they authenticate: plaid \
                (banks), imap (any e-mail account), gmail (IMAP with an app password), and what \
                is coming. Returns {providers: [{id, name, description, capabilities, auth_type, \
                oauth_scopes?, popularity_score, status}]}.",
        )
        .read_only(),
        "connect_provider" => Entry::new(
            "Connect a provider",
            "Connect an e-mail account to import its messages: provider imap with settings \
                {host, port?, tls? (default true), username, password, mailbox? (default INBOX)}, or \
                gmail with {username, password: an app password}. The login is checked first; the \
                password is stored encrypted and never returned. Returns {connector_id, provider, \
                external_id, settings, status}. Then call sync_provider_imports.",
        ),
        "list_connectors" => Entry::new(
            "List connectors",
            "List your connectors (e-mail accounts, Plaid items), optionally of one provider, \
                without secrets: {connectors: [{connector_id, provider, external_id, settings, \
                status, last_error, last_successful_sync, created_at}]}.",
        )
        .read_only(),
        "sync_provider_imports" => Entry::new(
            "Sync provider imports",
            "Import what is new from a provider: for imap/gmail every message since the last \
                sync (sync_type initial: from the first) becomes a source read by the e-mail \
                interpreter (a note and its contacts), at most limit × max_pages messages per call \
                (default 50 × 10; the rest next time); for plaid, plaid_sync of every item. One \
                connector with connector_id, else all of the provider's. Returns {sync_run_id, \
                provider, status, stats: {records_added, records_updated, errors}, started_at, \
                completed_at}.",
        )
        .not_idempotent(),
        "record_connector" => Entry::new(
            "Record a connector",
            "Used by the MCP gateway: records a connector whose login it checked.",
        )
        .internal(),
        "record_provider_sync" => Entry::new(
            "Record a provider sync",
            "Used by the MCP gateway: records what a sync read from the provider.",
        )
        .internal()
        .not_idempotent(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn imap_settings_are_checked_and_the_password_kept_apart() {
        let a = ImapAccount::from_settings(
            "imap",
            &settings(json!({
            "host": "mail.example.com", "username": "ada", "password": "pw"})),
        )
        .unwrap();
        assert_eq!((a.port, a.tls, a.mailbox.as_str()), (993, true, "INBOX"));
        assert!(!a.public_settings().to_string().contains("pw"));
        assert_eq!(a.external_id(), "ada@mail.example.com:993/INBOX");
        let plain = ImapAccount::from_settings(
            "imap",
            &settings(json!({
            "host": "127.0.0.1", "port": 1143, "tls": false, "username": "ada", "password": "pw"})),
        )
        .unwrap();
        assert_eq!((plain.port, plain.tls), (1143, false));
        let gmail = ImapAccount::from_settings(
            "gmail",
            &settings(json!({"username": "a@gmail.com", "password": "app"})),
        )
        .unwrap();
        assert_eq!((gmail.host.as_str(), gmail.port), ("imap.gmail.com", 993));
        let e = |v: Value| {
            ImapAccount::from_settings("imap", &settings(v))
                .unwrap_err()
                .details["field"]
                .clone()
        };
        assert_eq!(
            e(json!({"username": "a", "password": "p"})),
            "settings.host"
        );
        assert_eq!(
            e(json!({"host": "h", "username": "a"})),
            "settings.password"
        );
        assert_eq!(
            e(json!({"host": "h", "username": "a", "password": "p", "port": 70000})),
            "settings.port"
        );
        assert_eq!(
            e(json!({"host": "h x", "username": "a", "password": "p"})),
            "settings.host"
        );
        assert_eq!(
            e(json!({"host": "h", "username": "a", "password": "p", "proxy": "x"})),
            "settings.proxy"
        );
    }

    #[test]
    fn the_catalog_is_honest() {
        let c = catalog();
        let available: Vec<&str> = c["providers"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["status"] == "available")
            .map(|p| p["id"].as_str().unwrap())
            .collect();
        assert_eq!(available, ["plaid", "imap", "gmail"]);
        assert_eq!(
            find("myspace").unwrap_err().code,
            ErrorCode::ProviderNotFound
        );
    }

    #[test]
    fn cursors_and_paging() {
        assert_eq!(imap_cursor(Some("42:7")), Some((42, 7)));
        assert_eq!(imap_cursor(Some("x")), None);
        assert_eq!(imap_cursor(None), None);
        let req: SyncProviderImportsRequest =
            serde_json::from_value(json!({"provider": "imap", "limit": 0})).unwrap();
        assert_eq!(paging(&req).unwrap_err().details["field"], "limit");
    }
}
