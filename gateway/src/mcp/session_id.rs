//! Self-describing session ids: the state a replica needs to rebuild a 2025-revision session
//! (protocol version, the host's capabilities) travels in the id itself, encrypted and
//! authenticated with a key the replicas share (XChaCha20-Poly1305). Any replica can then serve
//! any request of a session, also after the replica that created it is gone.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use chacha20poly1305::aead::{Aead, AeadCore, KeyInit, OsRng};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

const NONCE_LEN: usize = 24;

/// What a session id carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionState {
    #[serde(rename = "v")]
    pub protocol_version: String,
    #[serde(rename = "c")]
    pub client_caps: Value,
    /// The key of the principal the session belongs to (ids issued before principals existed
    /// belong to the anonymous one).
    #[serde(rename = "o", default = "anonymous")]
    pub owner: String,
    /// The virtual server the session was opened on (`/mcp/v/{name}`); none for `/mcp`.
    #[serde(rename = "s", default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// When the id was issued (seconds since the epoch). Ids issued before ids carried it
    /// count as issued on the day they started to.
    #[serde(rename = "t", default = "issued_before_ids_said")]
    pub issued_at: i64,
}

fn anonymous() -> String {
    "anonymous".into()
}

/// 2026-12-07T00:00:00Z, the day ids started to carry `t`.
fn issued_before_ids_said() -> i64 {
    1_796_601_600
}

/// How long an id is restored from itself (on another replica, after a restart): an ended
/// session's record must outlive it, and the records are forgotten once it has passed.
pub const RESTORED_FOR_SECS: i64 = 30 * 24 * 3600;

impl SessionState {
    /// Whether the id is too old to be restored at `now` (seconds since the epoch).
    pub fn expired(&self, now: i64) -> bool {
        now - self.issued_at > RESTORED_FOR_SECS
    }
}

pub struct SessionCodec {
    cipher: XChaCha20Poly1305,
    /// Signs `requestState` (HMAC-SHA256): derived from the same shared secret, for another use.
    state_key: [u8; 32],
    /// Whether the key is shared (configured) or this process's own.
    pub shared: bool,
}

impl SessionCodec {
    /// From configured key material (any string; it is hashed to 256 bits), or a random key
    /// that only this process knows.
    pub fn new(key: Option<&str>) -> Self {
        let (key, state_key, shared) = match key {
            Some(k) => (
                Sha256::digest(k.as_bytes()),
                Sha256::digest(format!("mcp-gateway request-state\0{k}").as_bytes()),
                true,
            ),
            None => (
                XChaCha20Poly1305::generate_key(&mut OsRng),
                XChaCha20Poly1305::generate_key(&mut OsRng),
                false,
            ),
        };
        Self {
            cipher: XChaCha20Poly1305::new(&key),
            state_key: state_key.into(),
            shared,
        }
    }

    pub fn state_key(&self) -> &[u8] {
        &self.state_key
    }

    pub fn issue(&self, state: &SessionState) -> String {
        let nonce = XChaCha20Poly1305::generate_nonce(&mut OsRng);
        let plain = serde_json::to_vec(state).expect("session state serialises");
        let sealed = self
            .cipher
            .encrypt(&nonce, plain.as_slice())
            .expect("encryption");
        let mut bytes = nonce.to_vec();
        bytes.extend(sealed);
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// The state in an id this key issued; `None` for anything else (forged, altered, foreign).
    pub fn open(&self, id: &str) -> Option<SessionState> {
        let bytes = URL_SAFE_NO_PAD.decode(id).ok()?;
        if bytes.len() <= NONCE_LEN {
            return None;
        }
        let (nonce, sealed) = bytes.split_at(NONCE_LEN);
        let plain = self
            .cipher
            .decrypt(XNonce::from_slice(nonce), sealed)
            .ok()?;
        serde_json::from_slice(&plain).ok()
    }
}

/// What the registry keeps of a terminated session: never the id itself.
pub fn id_hash(id: &str) -> String {
    registry::hash::text_hash(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn state() -> SessionState {
        SessionState {
            protocol_version: "2025-11-25".into(),
            client_caps: json!({"sampling": {}}),
            owner: "pat:alice".into(),
            scope: Some("dev".into()),
            issued_at: 1_800_000_000,
        }
    }

    #[test]
    fn replicas_with_the_same_key_read_each_others_ids() {
        let a = SessionCodec::new(Some("shared secret"));
        let b = SessionCodec::new(Some("shared secret"));
        let id = a.issue(&state());
        assert_eq!(b.open(&id), Some(state()));
        assert!(id
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'));
        assert_ne!(a.issue(&state()), id, "ids are unique");
    }

    #[test]
    fn ids_say_when_they_were_issued_and_are_restored_for_thirty_days() {
        let a = SessionCodec::new(Some("k"));
        let issued = state().issued_at;
        let day = 24 * 3600;
        let opened = a.open(&a.issue(&state())).unwrap();
        assert!(!opened.expired(issued + 30 * day));
        assert!(opened.expired(issued + 30 * day + 1));
        // An id issued before ids said when: as if issued the day they started to.
        let nonce = XChaCha20Poly1305::generate_nonce(&mut OsRng);
        let plain = br#"{"v":"2025-11-25","c":{},"o":"pat:alice"}"#;
        let sealed = a.cipher.encrypt(&nonce, plain.as_slice()).unwrap();
        let old = URL_SAFE_NO_PAD.encode([nonce.as_slice(), &sealed].concat());
        assert_eq!(a.open(&old).unwrap().issued_at, 1_796_601_600);
    }

    #[test]
    fn altered_forged_and_foreign_ids_are_refused() {
        let a = SessionCodec::new(Some("k1"));
        let id = a.issue(&state());
        assert_eq!(SessionCodec::new(Some("k2")).open(&id), None);
        assert_eq!(SessionCodec::new(None).open(&id), None);
        let mut bytes = URL_SAFE_NO_PAD.decode(&id).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        assert_eq!(a.open(&URL_SAFE_NO_PAD.encode(bytes)), None);
        assert_eq!(a.open("not-a-session"), None);
        assert_eq!(a.open(""), None);
    }
}
