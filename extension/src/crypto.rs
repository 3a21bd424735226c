//! HMAC-SHA256 and random bytes for SQL: the signing of file URLs.

use hmac::{Hmac, Mac};
use pgrx::prelude::*;
use sha2::Sha256;

fn mac(key: &[u8], message: &str) -> Hmac<Sha256> {
    let mut m = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any length");
    m.update(message.as_bytes());
    m
}

/// Hex HMAC-SHA256 of `message` under `key`.
#[pg_extern(immutable, parallel_safe, strict, name = "_hmac_sha256")]
pub(crate) fn hmac_sha256(key: &[u8], message: &str) -> String {
    neotoma_core::canonical::hex(&mac(key, message).finalize().into_bytes())
}

/// Whether `signature` (hex) is the HMAC of `message` under `key`, compared
/// in constant time.
#[pg_extern(immutable, parallel_safe, strict, name = "_hmac_sha256_verify")]
pub(crate) fn hmac_sha256_verify(key: &[u8], message: &str, signature: &str) -> bool {
    let Some(bytes) = (0..signature.len())
        .step_by(2)
        .map(|i| {
            signature
                .get(i..i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        })
        .collect::<Option<Vec<u8>>>()
    else {
        return false;
    };
    mac(key, message).verify_slice(&bytes).is_ok()
}

/// `n` random bytes from the operating system's generator (signing keys).
#[pg_extern(volatile, parallel_safe, strict, name = "_random_bytes")]
pub(crate) fn random_bytes(n: i32) -> Vec<u8> {
    let mut out = vec![0u8; n.clamp(0, 1024) as usize];
    if let Err(e) = getrandom::fill(&mut out) {
        pgrx::error!("the operating system's random generator failed: {e}");
    }
    out
}
