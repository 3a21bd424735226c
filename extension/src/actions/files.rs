//! `retrieve_file_url`: a signed, expiring URL to download a stored file
//! from the gateway.

use crate::db::{self, Arg};
use crate::settings;
use neotoma_core::actions::store::*;
use neotoma_core::{ErrorCode, NeotomaError};
use uuid::Uuid;

pub fn retrieve_file_url(
    user: Uuid,
    req: RetrieveFileUrlRequest,
) -> Result<RetrieveFileUrlResponse, NeotomaError> {
    let id = req.file_path.trim().trim_start_matches("sources/");
    let source = Uuid::parse_str(id).map_err(|_| {
        NeotomaError::new(
            ErrorCode::FileNotFound,
            format!("no file at `{}`", req.file_path),
        )
        .with("file_path", req.file_path.clone())
    })?;
    // A file of a source outside the action's workspaces is not found.
    let workspace = db::json(
        "SELECT to_jsonb(s.workspace) FROM neotoma.sources s WHERE s.user_id = $1::uuid AND s.id = $2::uuid",
        &[Arg::uuid(user), Arg::uuid(source)],
    )?;
    if let Some(w) = workspace.as_str() {
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
