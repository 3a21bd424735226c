//! What the gateway asks the database once when it starts (and at each
//! readiness check): `neotoma.gateway_handshake()`, the version of the
//! installed SQL and what the gateway's role may do. The gateway reads no
//! table or catalog itself: everything else is an extension function.
//!
//! A database still at the previous release (until its `ALTER EXTENSION
//! neotoma UPDATE`) is served too, as a current one (the library chooses
//! its queries): [`Handshake::awaits_update`] tells `/readyz`, which says
//! the update is due.

use serde::Deserialize;

/// This gateway's version: it serves the extension at its own major.minor
/// and at the minor before.
const GATEWAY_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The database's answer.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct Handshake {
    /// The installed SQL's version ("" without the extension); the
    /// library's, in the action catalog, is newer until the update.
    #[serde(default)]
    pub extension_version: String,
    /// The role may act as an operator (set `neotoma.operator`).
    #[serde(default)]
    pub operator: bool,
    /// The role may say which token a call came with (set
    /// `neotoma.token_id`).
    #[serde(default)]
    pub token_context: bool,
    /// The database is a router (docs/scale-out.md): the upkeep runs on
    /// its partitions.
    #[serde(default)]
    pub router: bool,
}

/// Asks the database through `run` (one query answering one JSON value,
/// as the caller bounds and maps its queries).
pub async fn ask<E, Answer>(run: impl Fn(&'static str) -> Answer) -> Result<Handshake, E>
where
    Answer: std::future::Future<Output = Result<serde_json::Value, E>>,
{
    let answer = run("SELECT neotoma.gateway_handshake()").await?;
    Ok(serde_json::from_value(answer).unwrap_or_default())
}

/// [`ask`] on a connection of its own (the command line's), unbounded.
pub async fn ask_client(
    client: &tokio_postgres::Client,
) -> Result<Handshake, tokio_postgres::Error> {
    ask(|sql| async move { client.query_one(sql, &[]).await?.try_get(0) }).await
}

fn major_minor(v: &str) -> Option<(u64, u64)> {
    let mut parts = v.split('.').map(|p| p.parse::<u64>().ok());
    Some((parts.next()??, parts.next()??))
}

/// Whether this gateway can serve a database whose extension is `installed`:
/// its own major.minor version, or the minor before it (a rolling update:
/// gateways and libraries first, then `ALTER EXTENSION neotoma UPDATE`), as
/// the extension's library serves them (docs/upgrades.md).
pub fn supports_extension(installed: &str) -> Result<(), String> {
    let refuse = |why: &str| {
        Err(format!(
            "neotoma-mcp {GATEWAY_VERSION} cannot serve this database: its neotoma extension is \
             {installed:?}, {why}"
        ))
    };
    match (major_minor(installed), major_minor(GATEWAY_VERSION)) {
        (None, _) | (_, None) => refuse("not a version this gateway can read"),
        (Some((m, _)), Some((g, _))) if m != g => refuse(&format!(
            "another major version: use the neotoma-mcp of version {m}"
        )),
        (Some((_, m)), Some((_, g))) if m > g => {
            refuse("newer than this gateway: use the neotoma-mcp of the same version (or newer)")
        }
        (Some((_, m)), Some((_, g))) if m + 1 < g => refuse(
            "older than the release before this gateway's: run ALTER EXTENSION neotoma UPDATE",
        ),
        _ => Ok(()),
    }
}

impl Handshake {
    /// Whether the database still awaits `ALTER EXTENSION neotoma UPDATE`
    /// (it has the release before this gateway's): `/readyz` says so.
    #[cfg(any(feature = "http", test))]
    pub fn awaits_update(&self) -> bool {
        major_minor(&self.extension_version) != major_minor(GATEWAY_VERSION)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serves_its_own_minor_and_the_one_before_of_its_major_only() {
        let (major, minor) = major_minor(GATEWAY_VERSION).unwrap();
        assert!(supports_extension(GATEWAY_VERSION).is_ok());
        assert!(supports_extension(&format!("{major}.{minor}.99")).is_ok());
        if minor > 0 {
            assert!(supports_extension(&format!("{major}.{}.0", minor - 1)).is_ok());
        }
        if minor > 1 {
            let older = supports_extension(&format!("{major}.{}.0", minor - 2)).unwrap_err();
            assert!(older.contains("ALTER EXTENSION neotoma UPDATE"), "{older}");
        }
        let newer = supports_extension(&format!("{major}.{}.0", minor + 1)).unwrap_err();
        assert!(newer.contains("newer than this gateway"), "{newer}");
        let other = supports_extension(&format!("{}.0.0", major + 1)).unwrap_err();
        assert!(other.contains("another major version"), "{other}");
        assert!(supports_extension("").is_err());
    }

    #[test]
    fn only_the_release_before_awaits_its_update() {
        let (major, minor) = major_minor(GATEWAY_VERSION).unwrap();
        let at = |v: String| Handshake {
            extension_version: v,
            ..Handshake::default()
        };
        assert!(!at(GATEWAY_VERSION.to_string()).awaits_update());
        assert!(!at(format!("{major}.{minor}.9")).awaits_update());
        if minor > 0 {
            assert!(at(format!("{major}.{}.0", minor - 1)).awaits_update());
        }
    }

    #[test]
    fn versions_compare_by_major_and_minor() {
        assert_eq!(major_minor("0.1.0"), Some((0, 1)));
        assert_eq!(major_minor("0.1.7"), major_minor("0.1.0"));
        assert_ne!(major_minor("0.2.0"), major_minor("0.1.0"));
        assert_eq!(major_minor(""), None);
    }
}
