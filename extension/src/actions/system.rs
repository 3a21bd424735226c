//! `get_version` and `get_current_time`.

use crate::catalog::{to_value, EXTENSION_VERSION};
use crate::db;
use crate::settings;
use crate::tenancy;
use neotoma_core::actions::system::*;
use neotoma_core::catalog::{catalog_json, API_VERSION};
use neotoma_core::request::parse;
use neotoma_core::NeotomaError;
use serde_json::Value;

pub fn get_version(args: &Value) -> Result<Value, NeotomaError> {
    let req: GetVersionRequest = parse(args)?;
    tenancy::with_optional_user(req.user_id.as_deref(), |_| Ok(()))?;
    let postgres_version =
        db::text("SELECT current_setting('server_version')", &[])?.unwrap_or_default();
    let server_version = settings::text(&settings::SERVER_VERSION);
    let catalog = catalog_json(EXTENSION_VERSION);
    to_value(&GetVersionResponse {
        extension_version: EXTENSION_VERSION.to_string(),
        catalog_version: catalog["catalog_version"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        api_version: API_VERSION.to_string(),
        server_version,
        postgres_version,
    })
}

pub fn get_current_time(args: &Value) -> Result<Value, NeotomaError> {
    let req: GetCurrentTimeRequest = parse(args)?;
    tenancy::with_optional_user(req.user_id.as_deref(), |_| Ok(()))?;
    db::json(
        "SELECT jsonb_build_object(
            'now', to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'),
            'unix_ms', (extract(epoch FROM t) * 1000)::bigint,
            'timezone', 'UTC')
         FROM clock_timestamp() AS t",
        &[],
    )
}
