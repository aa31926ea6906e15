//! The gateway's own `requestState` (2026-07-28 multi round-trip requests): which parked call a
//! retry continues, which replica holds it, and until when — signed with HMAC-SHA256 under a key
//! the replicas share, so a host can neither forge nor alter it. Upstreams' own `requestState`
//! values pass through untouched; ours are told apart by their prefix.

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

const PREFIX: &str = "gw1.";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    /// The parked call.
    #[serde(rename = "c")]
    pub call: String,
    /// The advertised URL of the replica that holds it.
    #[serde(rename = "r")]
    pub replica: Option<String>,
    /// Seconds since the Unix epoch.
    #[serde(rename = "e")]
    pub expires: u64,
}

fn mac(key: &[u8], body: &str) -> Hmac<Sha256> {
    let mut m = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key size");
    m.update(body.as_bytes());
    m
}

/// `value` as `PREFIX` + its JSON in base64 + a tag over it: the gateway's tokens that hosts
/// carry and cannot forge or alter (this `requestState`, task ids).
pub(crate) fn seal_with(prefix: &str, key: &[u8], value: &impl Serialize) -> String {
    let body = B64.encode(serde_json::to_vec(value).expect("a token's value serialises"));
    let tag = B64.encode(mac(key, &body).finalize().into_bytes());
    format!("{prefix}{body}.{tag}")
}

/// The value of a token [`seal_with`] made with this prefix and key; `None` if it was altered or
/// sealed by another key.
pub(crate) fn open_with<T: serde::de::DeserializeOwned>(
    prefix: &str,
    key: &[u8],
    token: &str,
) -> Option<T> {
    let (body, tag) = token.strip_prefix(prefix)?.split_once('.')?;
    mac(key, body).verify_slice(&B64.decode(tag).ok()?).ok()?;
    serde_json::from_slice(&B64.decode(body).ok()?).ok()
}

pub fn seal(key: &[u8], claim: &Claim) -> String {
    seal_with(PREFIX, key, claim)
}

/// Whether a `requestState` is the gateway's (else an upstream's, to pass through).
pub fn is_ours(token: &str) -> bool {
    token.starts_with(PREFIX)
}

/// The claim of a token this key signed; `None` if it was altered or signed by another key.
pub fn open(key: &[u8], token: &str) -> Option<Claim> {
    open_with(PREFIX, key, token)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim() -> Claim {
        Claim {
            call: "abc".into(),
            replica: Some("http://10.0.0.7:8080".into()),
            expires: 1,
        }
    }

    #[test]
    fn a_sealed_claim_opens_with_its_key_only() {
        let t = seal(b"k1", &claim());
        assert!(is_ours(&t));
        assert_eq!(open(b"k1", &t), Some(claim()));
        assert_eq!(open(b"k2", &t), None);
    }

    #[test]
    fn any_change_to_the_token_is_refused() {
        let t = seal(b"k1", &claim());
        assert_eq!(open(b"k1", &format!("{t}-TAMPERED")), None);
        let (body, tag) = t.split_once('.').unwrap().1.split_once('.').unwrap();
        let mut forged = serde_json::to_vec(&claim()).unwrap();
        forged[7] ^= 1;
        let other = format!("{PREFIX}{}.{tag}", B64.encode(forged));
        assert_ne!(other, format!("{PREFIX}{body}.{tag}"));
        assert_eq!(open(b"k1", &other), None);
    }
}
