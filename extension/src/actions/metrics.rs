//! `get_technical_metrics`: checks the request and builds its Prometheus
//! query; the gateway runs it (no network inside Postgres) and fills in the
//! values. Server-wide operational data: operators only.

use crate::{db, settings};
use neotoma_core::actions::metrics::{self, GetTechnicalMetricsRequest};
use neotoma_core::{ErrorCode, NeotomaError};
use serde_json::Value;
use uuid::Uuid;

pub fn get_technical_metrics(
    _user: Option<Uuid>,
    req: GetTechnicalMetricsRequest,
) -> Result<Value, NeotomaError> {
    if !settings::operator(false) {
        return Err(NeotomaError::new(
            ErrorCode::Forbidden,
            "technical metrics describe the whole server and need an operator (the role \
             neotoma_operator in SQL; a token made with --scope operator over MCP)",
        ));
    }
    let query = metrics::plan(&req, db::transaction_start_micros())?;
    let mut answer = query.response();
    // What the gateway asks Prometheus; it replaces this by the values.
    answer["external"] = query.external();
    Ok(answer)
}
