//! Stored files and sources: `retrieve_file_url` (a signed, expiring URL to
//! download a stored file from the gateway), and `reinterpret` and
//! `record_interpretation`, whose reading of a source is the ingest
//! pipeline's (`crate::ingest::files`): their handlers here check the
//! request's ids and hand the pipeline typed values.

use crate::db::{self, Arg};
use crate::{ingest, settings};
use neotoma_core::actions::common;
use neotoma_core::actions::files::*;
use neotoma_core::{ErrorCode, NeotomaError};
use serde_json::Value;
use uuid::Uuid;

/// `reinterpret`: a stored source read again with another config, as a new
/// run (the earlier runs' observations stay).
pub fn reinterpret(
    user: Uuid,
    req: ReinterpretRequest,
) -> Result<ReinterpretResponse, NeotomaError> {
    let source = common::uuid("source_id", &req.source_id)?;
    let outcome = ingest::files::reinterpret(user, source, &req.interpretation_config)?;
    Ok(ReinterpretResponse {
        run_id: outcome.summary.run_id,
        entities_created: outcome.summary.entities_created,
        observations_created: outcome.summary.observations_created,
        source_id: source.to_string(),
        status: outcome.summary.status,
        reason: outcome.summary.reason,
        external_interpretation: outcome.external,
    })
}

/// `record_interpretation`: what the gateway's model read from a file,
/// for the pending run it was asked to make (with an `error` the run fails,
/// whatever `entities` says).
pub fn record_interpretation(
    user: Uuid,
    req: RecordInterpretationRequest,
) -> Result<Value, NeotomaError> {
    let run = common::uuid("run_id", &req.run_id)?;
    let read = match &req.error {
        Some(message) => Err(message.as_str()),
        None => Ok(req.entities.as_deref().unwrap_or_default()),
    };
    ingest::files::record_interpretation(user, run, read, req.details.as_ref())
}

/// `retrieve_file_url`: a signed URL for a stored file of the action's
/// workspaces.
pub fn retrieve_file_url(
    user: Uuid,
    req: RetrieveFileUrlRequest,
) -> Result<RetrieveFileUrlResponse, NeotomaError> {
    let id = req.file_path.trim().trim_start_matches("sources/");
    let no_file = || {
        NeotomaError::new(
            ErrorCode::FileNotFound,
            format!("no file at `{}`", req.file_path),
        )
        .with("file_path", req.file_path.clone())
    };
    let source = Uuid::parse_str(id).map_err(|_| no_file())?;
    // A file of a source outside the action's workspaces is not found.
    let workspace = db::json(
        "SELECT to_jsonb(s.workspace) FROM neotoma.sources s WHERE s.user_id = $1::uuid AND s.id = $2::uuid",
        &[Arg::uuid(user), Arg::uuid(source)],
    )?;
    if let Some(w) = workspace.as_str() {
        // Beyond a token's workspaces: as for a path that names no source.
        if crate::scope::current().hides(w) {
            return Err(no_file());
        }
        crate::scope::current().check("source", ErrorCode::FileNotFound, &source.to_string(), w)?;
    }
    let expires_in = req.expires_in.unwrap_or(3600);
    if !(1..=7 * 24 * 3600).contains(&expires_in) {
        return Err(NeotomaError::invalid_field(
            "expires_in",
            "expires_in must be between 1 and 604800 seconds",
        ));
    }
    // The expiry is computed once: the URL carries exactly what was signed.
    let signed = db::json(
        &crate::installed::adapt(
            "SELECT neotoma_private._sign_file($1::uuid, e.expires)
               || jsonb_build_object('expires', e.expires)
         FROM (SELECT $2::bigint + floor(extract(epoch FROM clock_timestamp()))::bigint AS expires) e",
        )?,
        &[Arg::uuid(source), Arg::Int(expires_in)],
    )?;
    let (Some(user), Some(kid), Some(sig), Some(expires)) = (
        signed["user_id"].as_str(),
        signed["kid"].as_str(),
        signed["sig"].as_str(),
        signed["expires"].as_i64(),
    ) else {
        return Err(NeotomaError::new(
            ErrorCode::FileNotFound,
            format!("no file at `{}`", req.file_path),
        )
        .with("file_path", req.file_path.clone()));
    };
    let base = settings::text(&settings::PUBLIC_URL).unwrap_or_default();
    let base = base.trim_end_matches('/');
    Ok(RetrieveFileUrlResponse {
        signed_url: format!("{base}/files/{user}/{source}?expires={expires}&kid={kid}&sig={sig}"),
        expires_at: neotoma_core::time::format_micros(expires * 1_000_000),
    })
}
