//! What OAuth keeps in the database (sql/oauth.sql): each call is
//! one statement, one transaction. Only hashes of secrets pass.

use crate::database::Database;
use neotoma_core::NeotomaError;
use serde_json::Value;
use uuid::Uuid;

/// A registered client (`{metadata, secret_hash}`), or Null.
pub async fn client(db: &Database, client_id: &str) -> Result<Value, NeotomaError> {
    db.query_json_with(
        "SELECT coalesce(neotoma_private.oauth_client($1), 'null')",
        &[&client_id],
    )
    .await
}

pub async fn register_client(
    db: &Database,
    client_id: &str,
    metadata: &Value,
    secret_hash: Option<&str>,
) -> Result<(), NeotomaError> {
    db.query_json_with(
        "SELECT 'null'::jsonb FROM (SELECT neotoma_private.oauth_register_client($1, $2, $3)) r",
        &[&client_id, metadata, &secret_hash],
    )
    .await
    .map(drop)
}

/// The user and Argon2 hash of a username's login, if there is one.
pub async fn login(db: &Database, username: &str) -> Result<Option<(Uuid, String)>, NeotomaError> {
    let found = db
        .query_json_with(
            "SELECT coalesce((SELECT to_jsonb(l) FROM neotoma_private.oauth_login($1) l), 'null')",
            &[&username],
        )
        .await?;
    Ok(found["user_id"]
        .as_str()
        .and_then(|u| u.parse().ok())
        .zip(found["password_hash"].as_str().map(str::to_string)))
}

/// Spends a one-time code (by its hash): the user it was for.
pub async fn use_login_code(db: &Database, code_hash: &str) -> Result<Option<Uuid>, NeotomaError> {
    let user = db
        .query_json_with(
            "SELECT coalesce(to_jsonb(neotoma_private.oauth_use_login_code($1)), 'null')",
            &[&code_hash],
        )
        .await?;
    Ok(user.as_str().and_then(|u| u.parse().ok()))
}

/// What an authorization grant is made of.
pub struct Authorization<'a> {
    pub user: Uuid,
    pub client_id: &'a str,
    pub redirect_uri: &'a str,
    pub code_challenge: &'a str,
    pub resource: &'a str,
    pub scope: &'a str,
    pub code_hash: &'a str,
}

pub async fn authorize(db: &Database, a: &Authorization<'_>) -> Result<(), NeotomaError> {
    db.query_json_with(
        "SELECT to_jsonb(neotoma_private.oauth_authorize($1, $2, $3, $4, $5, $6, $7))",
        &[
            &a.user,
            &a.client_id,
            &a.redirect_uri,
            &a.code_challenge,
            &a.resource,
            &a.scope,
            &a.code_hash,
        ],
    )
    .await
    .map(drop)
}

/// The tokens to issue (their hashes) and how long they live.
pub struct Issue<'a> {
    pub access_hash: &'a str,
    pub access_seconds: f64,
    pub refresh_hash: &'a str,
    pub refresh_seconds: f64,
    /// How `token list` names the access token.
    pub name: &'a str,
}

/// Exchanges a code: `{user_id, scope, resource}` or `{error, error_description}`.
pub async fn exchange_code(
    db: &Database,
    code_hash: &str,
    client_id: &str,
    redirect_uri: &str,
    verifier_challenge: &str,
    resource: &str,
    issue: &Issue<'_>,
) -> Result<Value, NeotomaError> {
    db.query_json_with(
        "SELECT neotoma_private.oauth_exchange_code($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        &[
            &code_hash,
            &client_id,
            &redirect_uri,
            &verifier_challenge,
            &resource,
            &issue.access_hash,
            &issue.access_seconds,
            &issue.refresh_hash,
            &issue.refresh_seconds,
            &issue.name,
        ],
    )
    .await
}

/// Rotates a refresh token: `{user_id, scope, resource}` or `{error, …}`.
pub async fn refresh(
    db: &Database,
    refresh_hash: &str,
    client_id: &str,
    resource: &str,
    issue: &Issue<'_>,
) -> Result<Value, NeotomaError> {
    db.query_json_with(
        "SELECT neotoma_private.oauth_refresh($1, $2, $3, $4, $5, $6, $7, $8)",
        &[
            &refresh_hash,
            &client_id,
            &resource,
            &issue.access_hash,
            &issue.access_seconds,
            &issue.refresh_hash,
            &issue.refresh_seconds,
            &issue.name,
        ],
    )
    .await
}

/// Revokes the grant of a token issued to `client_id`.
pub async fn revoke(db: &Database, token_hash: &str, client_id: &str) -> Result<(), NeotomaError> {
    db.query_json_with(
        "SELECT to_jsonb(neotoma_private.oauth_revoke($1, $2))",
        &[&token_hash, &client_id],
    )
    .await
    .map(drop)
}
