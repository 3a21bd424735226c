//! OAuth clients: what a dynamic registration (RFC 7591) may say, and
//! client ID metadata documents (a `client_id` that is an `https` URL naming
//! the client's own metadata), fetched with the care a URL from a stranger
//! needs.

use serde_json::{Value, json};
use std::net::SocketAddr;
use std::time::Duration;
use url::Url;

/// A client as the authorization endpoint needs it.
#[derive(Clone, Debug, PartialEq)]
pub struct Client {
    pub client_id: String,
    pub name: Option<String>,
    pub redirect_uris: Vec<String>,
    /// SHA-256 of its secret, for confidential clients.
    pub secret_hash: Option<String>,
}

impl Client {
    /// How the consent page names it.
    pub fn display_name(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.client_id)
    }
}

/// Largest client metadata: a registration body or a metadata document.
pub const MAX_METADATA_BYTES: usize = 64 * 1024;
const MAX_REDIRECT_URIS: usize = 10;
const MAX_NAME_CHARS: usize = 200;

/// A registration refused, in RFC 7591's terms.
#[derive(Debug, PartialEq)]
pub struct Refused {
    pub error: &'static str,
    pub description: String,
}

fn refused(error: &'static str, description: impl Into<String>) -> Refused {
    Refused {
        error,
        description: description.into(),
    }
}

/// Whether `host` is a loopback host, where a native client listens for
/// its redirect over plain http (RFC 8252 7.3).
fn loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(a)) => a.is_loopback(),
        Some(url::Host::Ipv6(a)) => a.is_loopback(),
        None => false,
    }
}

/// A redirect URI a client may register: absolute, no fragment, `https`,
/// `http` on a loopback host, or a private-use scheme of a native app
/// (`com.example.app:/callback`); never `javascript:` or `data:`.
pub fn valid_redirect_uri(uri: &str) -> bool {
    let Ok(url) = Url::parse(uri) else {
        return false;
    };
    if url.fragment().is_some() {
        return false;
    }
    match url.scheme() {
        "https" => url.host().is_some(),
        "http" => loopback(&url),
        "javascript" | "data" | "file" | "vbscript" | "blob" | "about" | "ftp" | "ws" | "wss" => {
            false
        }
        // Private-use schemes name an app: they contain a dot (RFC 8252 7.1).
        scheme => scheme.contains('.'),
    }
}

fn string_list(metadata: &Value, key: &str) -> Result<Option<Vec<String>>, Refused> {
    match metadata.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str().map(str::to_string).ok_or_else(|| {
                    refused("invalid_client_metadata", format!("{key} must be strings"))
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(_) => Err(refused(
            "invalid_client_metadata",
            format!("{key} must be an array"),
        )),
    }
}

fn redirect_uris(metadata: &Value) -> Result<Vec<String>, Refused> {
    let uris = string_list(metadata, "redirect_uris")?.unwrap_or_default();
    if uris.is_empty() || uris.len() > MAX_REDIRECT_URIS {
        return Err(refused(
            "invalid_redirect_uri",
            format!("redirect_uris must list 1 to {MAX_REDIRECT_URIS} URIs"),
        ));
    }
    if let Some(bad) = uris.iter().find(|u| !valid_redirect_uri(u)) {
        return Err(refused(
            "invalid_redirect_uri",
            format!(
                "{bad:?} is not a redirect URI this server accepts (https, http on a loopback host, or an app's own scheme; no fragment)"
            ),
        ));
    }
    Ok(uris)
}

fn client_name(metadata: &Value) -> Result<Option<String>, Refused> {
    match metadata.get("client_name") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.chars().count() <= MAX_NAME_CHARS => Ok(Some(s.clone())),
        Some(_) => Err(refused(
            "invalid_client_metadata",
            format!("client_name must be a string of at most {MAX_NAME_CHARS} characters"),
        )),
    }
}

/// How a client authenticates at the token endpoint.
pub const AUTH_METHODS: [&str; 3] = ["none", "client_secret_post", "client_secret_basic"];

/// The metadata a registration stores and answers: what was asked for,
/// checked, with defaults filled in. Whether the client gets a secret
/// follows from `token_endpoint_auth_method`.
pub fn register(request: &Value) -> Result<Value, Refused> {
    if !request.is_object() {
        return Err(refused(
            "invalid_client_metadata",
            "the body must be a JSON object of client metadata",
        ));
    }
    let uris = redirect_uris(request)?;
    let name = client_name(request)?;
    let grant_types = string_list(request, "grant_types")?
        .unwrap_or_else(|| vec!["authorization_code".into(), "refresh_token".into()]);
    if let Some(g) = grant_types
        .iter()
        .find(|g| !["authorization_code", "refresh_token"].contains(&g.as_str()))
    {
        return Err(refused(
            "invalid_client_metadata",
            format!("grant type {g:?} is not supported (authorization_code, refresh_token)"),
        ));
    }
    let response_types =
        string_list(request, "response_types")?.unwrap_or_else(|| vec!["code".into()]);
    if response_types.iter().any(|r| r != "code") {
        return Err(refused(
            "invalid_client_metadata",
            "only the response type \"code\" is supported",
        ));
    }
    let method = match request.get("token_endpoint_auth_method") {
        None | Some(Value::Null) => "none",
        Some(Value::String(m)) if AUTH_METHODS.contains(&m.as_str()) => m.as_str(),
        Some(other) => {
            return Err(refused(
                "invalid_client_metadata",
                format!(
                    "token_endpoint_auth_method {other} is not supported ({})",
                    AUTH_METHODS.join(", ")
                ),
            ));
        }
    };
    let mut stored = json!({
        "redirect_uris": uris,
        "grant_types": grant_types,
        "response_types": response_types,
        "token_endpoint_auth_method": method,
    });
    if let Some(name) = name {
        stored["client_name"] = json!(name);
    }
    // Informational fields are kept when they are short strings.
    for key in [
        "client_uri",
        "logo_uri",
        "scope",
        "software_id",
        "software_version",
    ] {
        if let Some(Value::String(s)) = request.get(key)
            && s.len() <= 2000
        {
            stored[key] = json!(s);
        }
    }
    Ok(stored)
}

/// A registered client from what the database keeps of it.
pub fn from_registration(client_id: &str, stored: &Value) -> Client {
    Client {
        client_id: client_id.to_string(),
        name: stored["metadata"]["client_name"]
            .as_str()
            .map(str::to_string),
        redirect_uris: stored["metadata"]["redirect_uris"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|u| u.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default(),
        secret_hash: stored["secret_hash"].as_str().map(str::to_string),
    }
}

/// Whether a `client_id` names a metadata document: an `https` URL with a
/// path (draft-ietf-oauth-client-id-metadata-document).
pub fn is_metadata_url(client_id: &str) -> bool {
    Url::parse(client_id).is_ok_and(|u| {
        u.scheme() == "https"
            && u.host().is_some()
            && u.fragment().is_none()
            && u.username().is_empty()
            && u.password().is_none()
            && u.path() != "/"
            && !u.path().is_empty()
    })
}

/// A client from its metadata document: the document must name itself.
pub fn from_document(client_id: &str, document: &Value) -> Result<Client, Refused> {
    if document["client_id"].as_str() != Some(client_id) {
        return Err(refused(
            "invalid_client",
            "the client's metadata document does not name itself as client_id",
        ));
    }
    if document.get("client_secret").is_some() {
        return Err(refused(
            "invalid_client",
            "a client metadata document may not carry a client_secret",
        ));
    }
    Ok(Client {
        client_id: client_id.to_string(),
        name: client_name(document)?,
        redirect_uris: redirect_uris(document)?,
        secret_hash: None,
    })
}

/// Fetches a client's metadata document. The host is resolved once and
/// refused when private (unless the operator allows it), and the fetch is
/// pinned to that address: no redirects, at most [`MAX_METADATA_BYTES`].
pub async fn fetch_document(
    client_id: &str,
    allow_private_hosts: bool,
    timeout: Duration,
) -> Result<Value, String> {
    let url = Url::parse(client_id).map_err(|e| e.to_string())?;
    let host = url.host_str().ok_or("the URL has no host")?.to_string();
    let port = url.port_or_known_default().unwrap_or(443);
    let lookup = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let address: SocketAddr =
        tokio::time::timeout(timeout, tokio::net::lookup_host((lookup, port)))
            .await
            .map_err(|_| format!("resolving {host} timed out"))?
            .map_err(|e| format!("cannot resolve {host}: {e}"))?
            .next()
            .ok_or_else(|| format!("{host} has no address"))?;
    if !allow_private_hosts && crate::net::private_address(address.ip()) {
        return Err(format!(
            "{host} is a private or loopback address; this server does not fetch from those (--allow-private-hosts)"
        ));
    }
    let http = reqwest::Client::builder()
        .timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .resolve(&host, address)
        .build()
        .map_err(|e| e.to_string())?;
    let mut response = http
        .get(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| format!("cannot fetch the client's metadata document: {e}"))?;
    if !response.status().is_success() {
        return Err(format!(
            "the client's metadata document answered HTTP {}",
            response.status()
        ));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| e.to_string())? {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_METADATA_BYTES {
            return Err(format!(
                "the client's metadata document is larger than {MAX_METADATA_BYTES} bytes"
            ));
        }
    }
    serde_json::from_slice(&body)
        .map_err(|e| format!("the client's metadata document is not JSON: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_uris_are_https_loopback_or_an_apps_scheme() {
        for ok in [
            "https://chatgpt.com/connector_platform_oauth_redirect",
            "https://claude.ai/api/mcp/auth_callback",
            "http://127.0.0.1:33418/callback",
            "http://localhost/cb",
            "http://[::1]:8080/cb",
            "com.example.app:/oauth",
        ] {
            assert!(valid_redirect_uri(ok), "{ok}");
        }
        for bad in [
            "http://evil.example/cb",
            "https://x.example/cb#frag",
            "javascript:alert(1)",
            "data:text/html,hi",
            "/relative",
            "file:///etc/passwd",
            "custom:/nodot",
        ] {
            assert!(!valid_redirect_uri(bad), "{bad}");
        }
    }

    #[test]
    fn registration_fills_defaults_and_refuses_what_it_cannot_serve() {
        let r =
            register(&json!({"redirect_uris": ["http://127.0.0.1:9/cb"], "client_name": "Agent"}))
                .unwrap();
        assert_eq!(r["token_endpoint_auth_method"], "none");
        assert_eq!(
            r["grant_types"],
            json!(["authorization_code", "refresh_token"])
        );
        assert_eq!(r["client_name"], "Agent");
        let err = |v: Value| register(&v).unwrap_err().error;
        assert_eq!(err(json!({})), "invalid_redirect_uri");
        assert_eq!(
            err(json!({"redirect_uris": ["http://evil.example/cb"]})),
            "invalid_redirect_uri"
        );
        assert_eq!(err(json!([1])), "invalid_client_metadata");
        assert_eq!(
            err(json!({"redirect_uris": ["https://a.example/cb"], "grant_types": ["password"]})),
            "invalid_client_metadata"
        );
        assert_eq!(
            err(
                json!({"redirect_uris": ["https://a.example/cb"], "token_endpoint_auth_method": "private_key_jwt"})
            ),
            "invalid_client_metadata"
        );
    }

    #[test]
    fn metadata_documents_name_themselves() {
        let id = "https://app.example/client.json";
        assert!(is_metadata_url(id));
        assert!(!is_metadata_url("https://app.example/"));
        assert!(!is_metadata_url("http://app.example/client.json"));
        assert!(!is_metadata_url("6f1c0d3e"));
        let doc = json!({"client_id": id, "client_name": "App", "redirect_uris": ["https://app.example/cb"]});
        let c = from_document(id, &doc).unwrap();
        assert_eq!(c.display_name(), "App");
        assert!(from_document("https://other.example/c.json", &doc).is_err());
        let mut secret = doc.clone();
        secret["client_secret"] = json!("s");
        assert!(from_document(id, &secret).is_err());
    }
}
