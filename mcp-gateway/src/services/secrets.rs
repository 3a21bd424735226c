//! Connector secrets (Plaid access tokens, IMAP passwords) are encrypted
//! here, before they reach the database, with AES-256-GCM under a key kept
//! in a file the database never sees (--secrets-key-file; made on first
//! use, mode 0600). The user and the purpose are authenticated with the
//! ciphertext, so one user's secret cannot be replayed as another's.

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use base64::Engine;
use neotoma_core::{ErrorCode, NeotomaError};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;
use uuid::Uuid;

/// Marks the format (and key scheme) of a stored secret.
const VERSION: &[u8] = b"NT1";
const NONCE_BYTES: usize = 12;

pub struct Secrets {
    key_file: PathBuf,
    key: Mutex<Option<[u8; 32]>>,
}

/// The key cannot be used: the details (paths) go to the log, not to the
/// caller.
fn failed(detail: String) -> NeotomaError {
    tracing::error!(%detail, "connector secrets key");
    NeotomaError::new(
        ErrorCode::ServiceUnavailable,
        "this server cannot seal or open connector secrets (see its log)",
    )
}

fn b64() -> base64::engine::GeneralPurpose {
    base64::engine::general_purpose::STANDARD
}

impl Secrets {
    pub fn new(key_file: PathBuf) -> Secrets {
        Secrets {
            key_file,
            key: Mutex::new(None),
        }
    }

    /// The key: read from its file, which is made (32 random bytes, base64)
    /// when there is none.
    fn key(&self) -> Result<[u8; 32], NeotomaError> {
        let mut slot = self
            .key
            .lock()
            .map_err(|_| failed("key lock poisoned".into()))?;
        if let Some(k) = *slot {
            return Ok(k);
        }
        let path = &self.key_file;
        if !path.exists() {
            let mut key = [0u8; 32];
            getrandom::fill(&mut key).map_err(|e| failed(format!("no random bytes: {e}")))?;
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)
                    .map_err(|e| failed(format!("cannot create {}: {e}", dir.display())))?;
            }
            use std::os::unix::fs::OpenOptionsExt;
            // Another process may make it at the same moment: then its key is read.
            if let Ok(mut f) = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(path)
            {
                f.write_all(b64().encode(key).as_bytes())
                    .and_then(|_| f.sync_all())
                    .map_err(|e| failed(format!("cannot write {}: {e}", path.display())))?;
                tracing::info!(path = %path.display(), "made the key that encrypts connector secrets");
            }
        }
        let text = std::fs::read_to_string(path).map_err(|e| {
            failed(format!(
                "cannot read the secrets key {}: {e}",
                path.display()
            ))
        })?;
        let bytes = b64()
            .decode(text.trim())
            .ok()
            .filter(|b| b.len() == 32)
            .ok_or_else(|| {
                failed(format!(
                    "{} is not a base64 key of 32 bytes",
                    path.display()
                ))
            })?;
        let mut key = [0u8; 32];
        key.copy_from_slice(&bytes);
        *slot = Some(key);
        Ok(key)
    }

    fn cipher(&self) -> Result<Aes256Gcm, NeotomaError> {
        Ok(Aes256Gcm::new(&self.key()?.into()))
    }

    /// `plaintext`, encrypted for `user` and `purpose`, as base64.
    pub fn seal(&self, user: Uuid, purpose: &str, plaintext: &str) -> Result<String, NeotomaError> {
        let mut nonce = [0u8; NONCE_BYTES];
        getrandom::fill(&mut nonce).map_err(|e| failed(format!("no random bytes: {e}")))?;
        let aad = format!("neotoma:{user}:{purpose}");
        let sealed = self
            .cipher()?
            .encrypt(
                Nonce::from_slice(&nonce),
                Payload {
                    msg: plaintext.as_bytes(),
                    aad: aad.as_bytes(),
                },
            )
            .map_err(|_| failed("encryption failed".into()))?;
        Ok(b64().encode([VERSION, &nonce, &sealed].concat()))
    }

    /// The plaintext of a secret [`Secrets::seal`] made for `user` and `purpose`.
    pub fn open(&self, user: Uuid, purpose: &str, sealed: &str) -> Result<String, NeotomaError> {
        let unusable = || {
            NeotomaError::new(
                ErrorCode::SyncFailed,
                "the stored secret cannot be decrypted (another secrets key?); connect again",
            )
        };
        let bytes = b64().decode(sealed).map_err(|_| unusable())?;
        let rest = bytes.strip_prefix(VERSION).ok_or_else(unusable)?;
        if rest.len() < NONCE_BYTES {
            return Err(unusable());
        }
        let (nonce, sealed) = rest.split_at(NONCE_BYTES);
        let aad = format!("neotoma:{user}:{purpose}");
        let plain = self
            .cipher()?
            .decrypt(
                Nonce::from_slice(nonce),
                Payload {
                    msg: sealed,
                    aad: aad.as_bytes(),
                },
            )
            .map_err(|_| unusable())?;
        String::from_utf8(plain).map_err(|_| unusable())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seals_for_one_user_and_purpose() {
        let dir = std::env::temp_dir().join(format!("neotoma-secrets-{}", Uuid::new_v4()));
        let s = Secrets::new(dir.join("secrets.key"));
        let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
        let sealed = s.seal(a, "plaid", "access-sandbox-1").unwrap();
        assert!(!sealed.contains("access"));
        assert_eq!(s.open(a, "plaid", &sealed).unwrap(), "access-sandbox-1");
        assert_eq!(
            s.open(b, "plaid", &sealed).unwrap_err().code,
            ErrorCode::SyncFailed
        );
        assert!(s.open(a, "imap", &sealed).is_err());
        assert_ne!(sealed, s.seal(a, "plaid", "access-sandbox-1").unwrap());
        // The key survives the process: a new reader of the file opens it.
        let again = Secrets::new(dir.join("secrets.key"));
        assert_eq!(again.open(a, "plaid", &sealed).unwrap(), "access-sandbox-1");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join("secrets.key"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
