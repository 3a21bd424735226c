//! Who a call acts for, as plain values every layer passes around (the
//! HTTP middleware establishes a [`Caller`], the database layer acts for
//! it), and how tokens are made and hashed.

use neotoma_core::canonical::sha256_hex;
use uuid::Uuid;

/// Who a call acts for, and how far it is trusted (an HTTP request
/// extension; stdio calls get [`Caller::local`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Caller {
    pub user: Uuid,
    /// May change what all users share (global schemas).
    pub operator: bool,
    /// Came over the network: reads server files only under --file-root.
    pub remote: bool,
    /// The API token it came with: whose context (set_context) applies.
    pub token: Option<Uuid>,
}

impl Caller {
    /// The machine's owner, over stdio.
    pub fn local(user: Uuid) -> Caller {
        Caller {
            user,
            operator: true,
            remote: false,
            token: None,
        }
    }
}

/// A new random token: `ntm_` and 64 hex digits (256 bits from the
/// operating system's generator).
pub fn new_token() -> anyhow::Result<String> {
    Ok(format!("ntm_{}", random_hex(32)?))
}

/// `bytes` random bytes from the operating system's generator, in hex.
pub fn random_hex(bytes: usize) -> anyhow::Result<String> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).map_err(|e| anyhow::anyhow!("random generator: {e}"))?;
    Ok(neotoma_core::canonical::hex(&buf))
}

pub fn hash_token(token: &str) -> String {
    sha256_hex(token.as_bytes())
}

#[cfg(feature = "http")]
/// What the database says a valid token stands for.
#[derive(Clone, Debug, PartialEq)]
pub struct TokenIdentity {
    pub user: Uuid,
    pub operator: bool,
    pub expires_at: Option<std::time::SystemTime>,
    /// The token's id.
    pub id: Option<Uuid>,
    /// The resource an OAuth access token is bound to (None: a static
    /// token, good for any gateway of the database).
    pub resource: Option<String>,
    /// What it may call (the extension checks each call; `tools/list`
    /// shows only those).
    pub limits: neotoma_core::token_limits::TokenLimits,
}

#[cfg(feature = "http")]
impl TokenIdentity {
    pub fn valid_now(&self) -> bool {
        self.expires_at
            .is_none_or(|t| t > std::time::SystemTime::now())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_and_hash_stably() {
        let a = new_token().unwrap();
        assert!(a.starts_with("ntm_") && a.len() == 68, "{a}");
        assert_ne!(a, new_token().unwrap());
        assert_eq!(hash_token(&a), hash_token(&a));
        assert_ne!(hash_token(&a), a);
        assert_eq!(hash_token(&a).len(), 64);
    }
}
