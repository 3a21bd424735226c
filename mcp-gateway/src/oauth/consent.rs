//! The consent page: the owner logs in (a password or a one-time code) and
//! allows or denies a client. Plain HTML, no script; every value written
//! into it is escaped.

use crate::html::escape;
use serde::Deserialize;

/// The parameters of an authorization request (RFC 6749 4.1.1 with PKCE
/// and RFC 8707's `resource`), carried from the query to the form.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct AuthorizeParams {
    pub response_type: Option<String>,
    pub client_id: Option<String>,
    pub redirect_uri: Option<String>,
    pub state: Option<String>,
    pub code_challenge: Option<String>,
    pub code_challenge_method: Option<String>,
    pub resource: Option<String>,
    pub scope: Option<String>,
}

/// What the owner typed and pressed (the POST of the form).
#[derive(Debug, Default, Deserialize)]
pub struct ConsentForm {
    #[serde(flatten)]
    pub params: AuthorizeParams,
    pub username: Option<String>,
    pub password: Option<String>,
    /// A one-time code instead of a username and password.
    pub code: Option<String>,
    /// `allow` or `deny`.
    pub decision: Option<String>,
    /// `on`: the owner allows reading only (the checkbox).
    pub read_only: Option<String>,
    /// The workspaces the owner allows, comma-separated (empty: as asked).
    pub workspaces: Option<String>,
}

const STYLE: &str = "body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#222}\
h1{font-size:1.4rem}fieldset{border:1px solid #ccc;border-radius:6px;margin:1rem 0;padding:.5rem 1rem 1rem}\
label{display:block;margin-top:.5rem}input[type=text],input[type=password]{width:100%;padding:.4rem;box-sizing:border-box}\
button{padding:.5rem 1.2rem;margin:1rem .5rem 0 0}.error{color:#a00;font-weight:600}.where{color:#555;word-break:break-all}";

fn page(title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>{}</title><style>{STYLE}</style></head><body>{body}</body></html>",
        escape(title)
    )
}

/// The login and consent form for `client_name`, which will be sent to
/// `redirect_uri`, for the `scope` granted (read only, some workspaces:
/// said, and the owner can narrow it); `error` says why the last attempt
/// failed.
pub fn consent_page(
    params: &AuthorizeParams,
    client_name: &str,
    scope: &str,
    error: Option<&str>,
) -> String {
    let read_only = super::reads_only(scope);
    let workspaces = super::scope_workspaces(scope);
    let hidden = [
        ("response_type", &params.response_type),
        ("client_id", &params.client_id),
        ("redirect_uri", &params.redirect_uri),
        ("state", &params.state),
        ("code_challenge", &params.code_challenge),
        ("code_challenge_method", &params.code_challenge_method),
        ("resource", &params.resource),
        ("scope", &params.scope),
    ]
    .iter()
    .filter_map(|(name, value)| {
        value.as_ref().map(|v| {
            format!(
                "<input type=\"hidden\" name=\"{name}\" value=\"{}\">",
                escape(v)
            )
        })
    })
    .collect::<String>();
    let error = error
        .map(|e| format!("<p class=\"error\" role=\"alert\">{}</p>", escape(e)))
        .unwrap_or_default();
    // What the client may do, and the owner's choice to narrow it: read
    // only, some workspaces.
    let (asks, mut narrow) = if read_only {
        (
            "to read your memory (entities, observations, relationships, files) as you, \
          not to change it"
                .to_string(),
            String::new(),
        )
    } else {
        (
            "to read and write your memory (entities, observations, relationships, files) as you"
                .to_string(),
            "<label><input type=\"checkbox\" name=\"read_only\" value=\"on\"> Read only: it may \
          read my memory, not change it</label>"
                .to_string(),
        )
    };
    let (asks, among) = if workspaces.is_empty() {
        (asks, "every workspace".to_string())
    } else {
        let names = escape(&workspaces.join(", "));
        (format!("{asks}, in the workspaces {names} only"), names)
    };
    narrow.push_str(&format!(
        "<label for=\"workspaces\">Only these workspaces (comma-separated; empty: {among})</label>\
         <input type=\"text\" id=\"workspaces\" name=\"workspaces\">"
    ));
    let body = format!(
        "<h1>Allow {client} to use your Neotoma memory?</h1>\
         <p><strong>{client}</strong> asks {asks}. It will be sent back to:</p>\
         <p class=\"where\">{redirect}</p>{error}\
         <form method=\"post\" action=\"/authorize\">{hidden}\
         <fieldset><legend>Log in with your username and password</legend>\
         <label for=\"username\">Username</label>\
         <input type=\"text\" id=\"username\" name=\"username\" autocomplete=\"username\" autofocus>\
         <label for=\"password\">Password</label>\
         <input type=\"password\" id=\"password\" name=\"password\" autocomplete=\"current-password\">\
         </fieldset>\
         <fieldset><legend>or with a one-time code from your operator</legend>\
         <label for=\"code\">One-time code</label>\
         <input type=\"text\" id=\"code\" name=\"code\" autocomplete=\"one-time-code\">\
         </fieldset>\
         {narrow}\
         <button type=\"submit\" name=\"decision\" value=\"allow\">Allow</button>\
         <button type=\"submit\" name=\"decision\" value=\"deny\">Deny</button>\
         </form>",
        client = escape(client_name),
        redirect = escape(params.redirect_uri.as_deref().unwrap_or_default()),
    );
    page("Authorize access to Neotoma", &body)
}

/// An authorization request that cannot go back to its client (unknown
/// client, unregistered redirect URI): said to the person, not redirected.
pub fn error_page(message: &str) -> String {
    page(
        "Authorization failed",
        &format!(
            "<h1>This authorization request cannot be served</h1><p class=\"error\" role=\"alert\">{}</p>",
            escape(message)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everything_written_into_the_page_is_escaped() {
        let params = AuthorizeParams {
            client_id: Some("\"><script>x</script>".into()),
            redirect_uri: Some("https://a.example/cb?x=<b>".into()),
            state: Some("s'1".into()),
            ..Default::default()
        };
        let html = consent_page(&params, "<img src=x onerror=y>", "memory", Some("<bad>"));
        assert!(!html.contains("<script>"));
        assert!(!html.contains("<img"));
        assert!(!html.contains("<bad>"));
        assert!(html.contains("value=\"s&#39;1\""));
        assert!(html.contains("&lt;img src=x onerror=y&gt;"));
        assert!(
            !html.contains("name=\"resource\""),
            "absent parameters are not carried"
        );
    }

    #[test]
    fn the_page_says_what_the_client_may_do() {
        let params = AuthorizeParams::default();
        let full = consent_page(&params, "Agent", "memory", None);
        assert!(full.contains("read and write") && full.contains("name=\"read_only\""));
        assert!(full.contains("empty: every workspace"));
        let reader = consent_page(&params, "Agent", "memory:read offline_access", None);
        assert!(reader.contains("not to change it") && !reader.contains("name=\"read_only\""));
        let team = consent_page(
            &params,
            "Agent",
            "memory workspace:notes workspace:team",
            None,
        );
        assert!(
            team.contains("in the workspaces notes, team only")
                && team.contains("name=\"workspaces\"")
        );
    }
}
