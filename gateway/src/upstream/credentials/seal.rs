//! Sealing with `user_credentials.key`: XChaCha20-Poly1305 (`chacha20poly1305`, RustCrypto),
//! a random 24-byte nonce per value, and associated data that names what a value is for (a
//! user's tokens at one upstream, a connect link, an authorization's state), so a value copied
//! to another row or another use does not open. The key id in front says which key sealed it:
//! after a rotation the previous keys still open what they sealed.

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine;
use chacha20poly1305::aead::{Aead, AeadCore, KeyInit, OsRng, Payload};
use chacha20poly1305::XChaCha20Poly1305;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::config::user_credentials::KEY_BYTES;

const NONCE_BYTES: usize = 24;

/// The sealing keys: the current one first.
pub struct KeyRing {
    keys: Vec<(String, XChaCha20Poly1305)>,
}

impl KeyRing {
    pub fn new(keys: &[[u8; KEY_BYTES]]) -> Self {
        Self {
            keys: keys
                .iter()
                .map(|k| (key_id(k), XChaCha20Poly1305::new(k.into())))
                .collect(),
        }
    }

    /// How many keys: the current one and the previous ones.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// `value` sealed for `purpose`: `kid.base64url(nonce || ciphertext)`.
    pub fn seal(&self, purpose: &str, value: &Value) -> Option<String> {
        let (kid, cipher) = self.keys.first()?;
        let nonce = XChaCha20Poly1305::generate_nonce(&mut OsRng);
        let body = value.to_string();
        let sealed = cipher
            .encrypt(
                &nonce,
                Payload {
                    msg: body.as_bytes(),
                    aad: purpose.as_bytes(),
                },
            )
            .ok()?;
        let mut out = nonce.to_vec();
        out.extend(sealed);
        Some(format!("{kid}.{}", B64.encode(out)))
    }

    /// What `sealed` holds, if one of the keys sealed it for `purpose` and nothing changed it;
    /// and whether it was the current key (else it should be sealed again).
    pub fn open(&self, purpose: &str, sealed: &str) -> Option<(Value, bool)> {
        let (kid, body) = sealed.split_once('.')?;
        let at = self.keys.iter().position(|(k, _)| k == kid)?;
        let bytes = B64.decode(body).ok()?;
        if bytes.len() < NONCE_BYTES {
            return None;
        }
        let (nonce, ciphertext) = bytes.split_at(NONCE_BYTES);
        let plain = self.keys[at]
            .1
            .decrypt(
                nonce.into(),
                Payload {
                    msg: ciphertext,
                    aad: purpose.as_bytes(),
                },
            )
            .ok()?;
        Some((serde_json::from_slice(&plain).ok()?, at == 0))
    }
}

/// A key's public name: the first 8 bytes of its SHA-256, hex (it says which key, not the key).
fn key_id(key: &[u8; KEY_BYTES]) -> String {
    Sha256::digest(key)[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_open_for_their_purpose_under_current_and_previous_keys_only() {
        let old = KeyRing::new(&[[1u8; 32]]);
        let sealed = old.seal("tokens:gh/user:a", &json!({"t": "x"})).unwrap();
        assert!(!sealed.contains("\"x\""), "the value is not readable");
        assert_eq!(
            old.open("tokens:gh/user:a", &sealed),
            Some((json!({"t": "x"}), true))
        );
        assert_eq!(old.open("tokens:gh/user:b", &sealed), None, "another row");
        let rotated = KeyRing::new(&[[2u8; 32], [1u8; 32]]);
        assert_eq!(
            rotated.open("tokens:gh/user:a", &sealed),
            Some((json!({"t": "x"}), false)),
            "a previous key opens what it sealed, and says so"
        );
        assert_eq!(
            KeyRing::new(&[[2u8; 32]]).open("tokens:gh/user:a", &sealed),
            None
        );
        let mut tampered = sealed.clone();
        let last = tampered.pop().unwrap();
        tampered.push(if last == 'A' { 'B' } else { 'A' });
        assert_eq!(old.open("tokens:gh/user:a", &tampered), None);
        assert!(KeyRing::new(&[]).seal("p", &json!(1)).is_none());
    }
}
