//! `get_version` and `get_current_time`.

use crate::db;
use crate::settings;
use neotoma_core::actions::system::*;
use neotoma_core::catalog::{catalog_json, API_VERSION};
use neotoma_core::NeotomaError;
use uuid::Uuid;

/// The version of this build of the extension.
pub const EXTENSION_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The catalog's version, a digest of the whole catalog: computed once per
/// backend (the catalog is fixed in the build), not on every `get_version`.
static CATALOG_VERSION: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    catalog_json(EXTENSION_VERSION)["catalog_version"]
        .as_str()
        .unwrap_or_default()
        .to_string()
});

pub fn get_version(
    _user: Option<Uuid>,
    _req: GetVersionRequest,
) -> Result<GetVersionResponse, NeotomaError> {
    let postgres_version = settings::named(c"server_version").unwrap_or_default();
    let server_version = settings::text(&settings::SERVER_VERSION);
    Ok(GetVersionResponse {
        extension_version: EXTENSION_VERSION.to_string(),
        catalog_version: CATALOG_VERSION.clone(),
        api_version: API_VERSION.to_string(),
        server_version,
        postgres_version,
    })
}

pub fn get_current_time(
    _user: Option<Uuid>,
    _req: GetCurrentTimeRequest,
) -> Result<GetCurrentTimeResponse, NeotomaError> {
    let v = db::json(
        "SELECT jsonb_build_object(
            'now', to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'),
            'unix_ms', (extract(epoch FROM t) * 1000)::bigint,
            'timezone', 'UTC')
         FROM clock_timestamp() AS t",
        &[],
    )?;
    db::from_json(v, "current time")
}
