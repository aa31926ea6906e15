//! DPoP at the gateway as a resource server (RFC 9449 §4.3, §7), and at its authorization
//! server's token endpoint (§5: a proof there binds the tokens issued): a host whose access token is
//! bound to a key (its `cnf.jkt`) sends it as `Authorization: DPoP …` with a proof signed by
//! that key for this very request. A bound token sent as a bearer token is refused: whoever
//! copied it off the wire does not hold the key. ES256 proofs only (what the gateway signs with
//! as a client too); a proof is good once (its `jti`, kept as long as its `iat` is accepted):
//! once in this process, and with Postgres once among all replicas (spent in the store, as
//! sign-in forms and one-time grants are), so that a proof copied off the wire cannot be
//! replayed at another one. SQLite serves one process only, whose memory is enough; a write per
//! request there would cost more than the rest of the call (docs/benchmarks.md).

use std::collections::HashMap;
use std::sync::Mutex;

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine;
use p256::ecdsa::signature::Verifier;
use p256::ecdsa::{Signature, VerifyingKey};
use registry::Registry;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// How far a proof's `iat` may be from now, in seconds.
const IAT_WINDOW: i64 = 300;
/// Proof ids kept at most (beyond: the oldest go first).
const MAX_SEEN: usize = 100_000;

/// The algorithms proofs may be signed with, for the resource metadata.
pub const ALGORITHMS: [&str; 1] = ["ES256"];

/// The thumbprint (RFC 7638) of a P-256 public key.
pub fn thumbprint(x: &str, y: &str) -> String {
    let canonical = format!(r#"{{"crv":"P-256","kty":"EC","x":"{x}","y":"{y}"}}"#);
    B64.encode(Sha256::digest(canonical.as_bytes()))
}

/// The proof ids seen, with when each may be forgotten.
#[derive(Default)]
pub struct Proofs {
    seen: Mutex<HashMap<String, i64>>,
}

/// Why a proof was not taken.
#[derive(Debug, PartialEq)]
pub enum Refused {
    /// The proof is not good (the reason, for the host).
    Proof(String),
    /// The store, where proofs are spent for every replica, did not answer.
    StoreUnavailable,
}

impl Proofs {
    /// Checks `proof` for a request `htm` to `htu` carrying `token` (none: a token request,
    /// which carries no access token): its key's thumbprint, or why the proof is refused. A
    /// proof is taken once in this process, and on Postgres spent in `registry` too: a proof
    /// another replica took is refused here.
    pub async fn check_everywhere(
        &self,
        registry: &dyn Registry,
        proof: &str,
        htm: &str,
        htu: &str,
        token: Option<&str>,
    ) -> Result<String, Refused> {
        let (key, jti, until) = self
            .check_here(proof, htm, htu, token)
            .map_err(Refused::Proof)?;
        if registry.backend() == "sqlite" {
            return Ok(key);
        }
        let id = registry::hash::text_hash(&format!("dpop {key} {jti}"));
        match registry
            .spend_form(&id, until * 1000, registry::now_ms())
            .await
        {
            Ok(true) => Ok(key),
            // Here before a restart, or at another replica.
            Ok(false) => Err(Refused::Proof(
                "the DPoP proof was used before (jti)".into(),
            )),
            Err(e) => {
                tracing::warn!(error = %e, "cannot spend a DPoP proof in the store");
                Err(Refused::StoreUnavailable)
            }
        }
    }

    /// [`check_here`](Self::check_here)'s key alone, for the tests.
    #[cfg(test)]
    fn check(
        &self,
        proof: &str,
        htm: &str,
        htu: &str,
        token: Option<&str>,
    ) -> Result<String, String> {
        self.check_here(proof, htm, htu, token).map(|(key, ..)| key)
    }

    /// Checks `proof` for a request `htm` to `htu` carrying `token` (none: a token request,
    /// which carries no access token), in this process only: the key's thumbprint, the proof's
    /// `jti`, and until when (s) it must be remembered; or why the proof is refused.
    fn check_here(
        &self,
        proof: &str,
        htm: &str,
        htu: &str,
        token: Option<&str>,
    ) -> Result<(String, String, i64), String> {
        let now = registry::now_ms() / 1000;
        let mut parts = proof.split('.');
        let (Some(h), Some(p), Some(s), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err("the DPoP proof is not a JWT".into());
        };
        let json = |part: &str| -> Result<Value, String> {
            let bytes = B64
                .decode(part)
                .map_err(|_| "the DPoP proof is not base64url")?;
            serde_json::from_slice(&bytes).map_err(|_| "the DPoP proof is not JSON".to_string())
        };
        let header = json(h)?;
        if header["typ"] != "dpop+jwt" {
            return Err("the DPoP proof's typ is not dpop+jwt".into());
        }
        if header["alg"] != "ES256" {
            return Err("the DPoP proof must be signed with ES256".into());
        }
        let jwk = &header["jwk"];
        let (Some(x), Some(y)) = (jwk["x"].as_str(), jwk["y"].as_str()) else {
            return Err("the DPoP proof's jwk is not a P-256 public key".into());
        };
        if jwk["kty"] != "EC" || jwk["crv"] != "P-256" || jwk.get("d").is_some() {
            return Err("the DPoP proof's jwk is not a P-256 public key".into());
        }
        let (xb, yb) = (B64.decode(x), B64.decode(y));
        let key = match (xb, yb) {
            (Ok(xb), Ok(yb)) if xb.len() == 32 && yb.len() == 32 => {
                let point = p256::EncodedPoint::from_affine_coordinates(
                    xb.as_slice().into(),
                    yb.as_slice().into(),
                    false,
                );
                VerifyingKey::from_encoded_point(&point).ok()
            }
            _ => None,
        }
        .ok_or("the DPoP proof's jwk is not a P-256 public key")?;
        let signature = B64
            .decode(s)
            .ok()
            .and_then(|b| Signature::from_slice(&b).ok())
            .ok_or("the DPoP proof's signature is malformed")?;
        key.verify(format!("{h}.{p}").as_bytes(), &signature)
            .map_err(|_| "the DPoP proof's signature does not verify")?;
        let claims = json(p)?;
        if claims["htm"].as_str() != Some(htm) {
            return Err(format!("the DPoP proof is not for {htm} (htm)"));
        }
        let same = |a: &str, b: &str| a.trim_end_matches('/') == b.trim_end_matches('/');
        match claims["htu"].as_str() {
            Some(u) if !u.contains(['?', '#']) && same(u, htu) => {}
            _ => return Err(format!("the DPoP proof is not for {htu} (htu)")),
        }
        let iat = claims["iat"].as_i64().ok_or("the DPoP proof has no iat")?;
        if (now - iat).abs() > IAT_WINDOW {
            return Err("the DPoP proof is too old or from the future (iat)".into());
        }
        if let Some(token) = token {
            let ath = B64.encode(Sha256::digest(token.as_bytes()));
            if claims["ath"].as_str() != Some(ath.as_str()) {
                return Err("the DPoP proof is not for this access token (ath)".into());
            }
        }
        let jti = claims["jti"]
            .as_str()
            .filter(|j| !j.is_empty() && j.len() <= 256);
        let jti = jti.ok_or("the DPoP proof has no jti")?;
        let mut seen = self.seen.lock().unwrap();
        if seen.len() >= MAX_SEEN {
            seen.retain(|_, until| *until > now);
        }
        if seen.len() >= MAX_SEEN {
            return Err("too many DPoP proofs at once; try again shortly".into());
        }
        if seen.insert(jti.to_string(), iat + IAT_WINDOW).is_some() {
            return Err("the DPoP proof was used before (jti)".into());
        }
        Ok((thumbprint(x, y), jti.to_string(), iat + IAT_WINDOW))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upstream::dpop::DpopKey;

    #[test]
    fn a_proof_is_taken_once_for_its_request_token_and_key() {
        let proofs = Proofs::default();
        let key = DpopKey::generate();
        let htu = "https://gw.example/mcp";
        let proof = key.proof("POST", htu, Some("tok"), None);
        let jkt = proofs.check(&proof, "POST", htu, Some("tok")).unwrap();
        let header: Value =
            serde_json::from_slice(&B64.decode(proof.split('.').next().unwrap()).unwrap()).unwrap();
        assert_eq!(
            jkt,
            thumbprint(
                header["jwk"]["x"].as_str().unwrap(),
                header["jwk"]["y"].as_str().unwrap()
            )
        );
        let again = proofs.check(&proof, "POST", htu, Some("tok")).unwrap_err();
        assert!(again.contains("jti"), "{again}");
        let other = |htm: &str, u: &str, t: &str| {
            let p = key.proof("POST", htu, Some("tok"), None);
            proofs.check(&p, htm, u, Some(t)).unwrap_err()
        };
        assert!(other("GET", htu, "tok").contains("htm"));
        assert!(other("POST", "https://gw.example/other", "tok").contains("htu"));
        assert!(other("POST", htu, "another token").contains("ath"));
        let mut tampered = key.proof("POST", htu, Some("tok"), None);
        tampered.push('A');
        assert!(proofs.check(&tampered, "POST", htu, Some("tok")).is_err());
        assert!(proofs.check("a.b", "POST", htu, Some("tok")).is_err());
        // At a token endpoint there is no access token: no `ath` to check.
        let token_endpoint = "https://gw.example/oauth/token";
        let p = key.proof("POST", token_endpoint, None, None);
        assert_eq!(proofs.check(&p, "POST", token_endpoint, None), Ok(jkt));
    }

    #[test]
    fn the_thumbprint_is_rfc_7638s() {
        // RFC 7638 §3.1's example is RSA; this P-256 key's thumbprint was computed with jose.
        let x = "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU";
        let y = "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0";
        assert_eq!(
            thumbprint(x, y),
            "oKIywvGUpTVTyxMQ3bwIIeQUudfr_CkLMjCE19ECD-U"
        );
    }
}
