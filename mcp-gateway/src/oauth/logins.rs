//! Who may authorize a client for a user: a password (hashed with
//! Argon2id here; the database keeps the hash) or a one-time code (its
//! SHA-256), set up by an operator with `neotoma-mcp login …`.

use crate::identity::hash_token;
use anyhow::Context;
use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use std::io::BufRead;

/// Shortest password accepted.
pub const MIN_PASSWORD_CHARS: usize = 8;

pub fn hash_password(password: &str) -> anyhow::Result<String> {
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(|e| anyhow::anyhow!("random generator: {e}"))?;
    let salt = SaltString::encode_b64(&salt).map_err(|e| anyhow::anyhow!("{e}"))?;
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| anyhow::anyhow!("could not hash the password: {e}"))
}

/// Whether `password` matches an Argon2 hash (PHC string).
pub fn verify_password(password: &str, phc: &str) -> bool {
    PasswordHash::new(phc).is_ok_and(|h| {
        Argon2::default()
            .verify_password(password.as_bytes(), &h)
            .is_ok()
    })
}

/// A hash nobody's password matches, checked when a username is unknown so
/// that an unknown name takes as long to refuse as a wrong password.
pub fn decoy_hash() -> &'static str {
    static DECOY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DECOY.get_or_init(|| hash_password("decoy").unwrap_or_default())
}

/// A new one-time code (128 bits, hex) and its hash.
pub fn new_code() -> anyhow::Result<(String, String)> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("random generator: {e}"))?;
    let code = neotoma_core::canonical::hex(&bytes);
    let hash = hash_token(&code);
    Ok((code, hash))
}

/// The password for `login set`: NEOTOMA_LOGIN_PASSWORD, else a line of
/// standard input.
fn read_password() -> anyhow::Result<String> {
    let password = match std::env::var("NEOTOMA_LOGIN_PASSWORD") {
        Ok(p) => p,
        Err(_) => {
            eprintln!("password (one line on standard input):");
            let mut line = String::new();
            std::io::stdin().lock().read_line(&mut line)?;
            line.trim_end_matches(['\r', '\n']).to_string()
        }
    };
    anyhow::ensure!(
        password.chars().count() >= MIN_PASSWORD_CHARS,
        "a password has at least {MIN_PASSWORD_CHARS} characters"
    );
    Ok(password)
}

/// `neotoma-mcp login …`, on an operator's connection.
pub async fn command(command: crate::cli::LoginCommand, url: &str) -> anyhow::Result<()> {
    use crate::cli::LoginCommand;
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .context("could not connect to the database")?;
    tokio::spawn(connection);
    const NEEDS: &str =
        "(logins need an operator's or administrator's connection, and extension 0.15.0 or newer)";
    match command {
        LoginCommand::Set { user, username, .. } => {
            let hash = hash_password(&read_password()?)?;
            client
                .execute(
                    "SELECT neotoma_private.oauth_set_login($1, $2, $3)",
                    &[&user, &username, &hash],
                )
                .await
                .with_context(|| format!("could not set the login {NEEDS}"))?;
            println!("login {username:?} set for user {user}");
        }
        LoginCommand::Code {
            user, expires_in, ..
        } => {
            let (code, hash) = new_code()?;
            let seconds = expires_in.as_secs_f64();
            let row = client
                .query_one(
                    "SELECT neotoma._iso(neotoma_private.oauth_create_login_code($1, $2, $3))",
                    &[&user, &hash, &seconds],
                )
                .await
                .with_context(|| format!("could not create the code {NEEDS}"))?;
            let expires: String = row.get(0);
            eprintln!(
                "one-time code for user {user}, good for one authorization until {expires} (shown once):"
            );
            println!("{code}");
        }
        LoginCommand::Remove { user, .. } => {
            let row = client
                .query_one("SELECT neotoma_private.oauth_remove_login($1)", &[&user])
                .await
                .with_context(|| format!("could not remove the login {NEEDS}"))?;
            let removed: bool = row.get(0);
            anyhow::ensure!(removed, "user {user} has no login");
            println!("removed the login of user {user}");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_verify_against_their_hash_only() {
        let h = hash_password("correct horse").unwrap();
        assert!(h.starts_with("$argon2id$"), "{h}");
        assert!(verify_password("correct horse", &h));
        assert!(!verify_password("correct horsE", &h));
        assert!(!verify_password("correct horse", "not a hash"));
        assert_ne!(h, hash_password("correct horse").unwrap(), "salted");
        assert!(!verify_password("decoy!", decoy_hash()));
    }

    #[test]
    fn codes_are_random_and_stored_hashed() {
        let (a, ha) = new_code().unwrap();
        let (b, _) = new_code().unwrap();
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
        assert_eq!(ha, hash_token(&a));
    }
}
