//! DPoP (RFC 9449, MCP SEP-1932): an access token bound to a key of the gateway's, so that a
//! token copied off the wire is no good without the key. Where an upstream's authorization
//! server advertises ES256 in `dpop_signing_alg_values_supported`, a user's connection gets a
//! P-256 key of its own (sealed with the tokens); every token request and every request to the
//! upstream carries a fresh proof signed with it (`htm`, `htu`, `iat`, a unique `jti`; `ath`,
//! the token's hash, at the upstream), and the token goes as `Authorization: DPoP …`. A server
//! that asks for a nonce (`use_dpop_nonce`, with `DPoP-Nonce`) gets the request once more with
//! it in the proof.

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine;
use chacha20poly1305::aead::OsRng;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// The only algorithm the gateway signs proofs with.
pub const ALGORITHM: &str = "ES256";

/// Whether an authorization server's metadata takes ES256 proofs.
pub fn supported(metadata: &Value) -> bool {
    metadata["dpop_signing_alg_values_supported"]
        .as_array()
        .is_some_and(|a| a.iter().any(|v| v == ALGORITHM))
}

/// Whether a token answer's `token_type` says the token is bound to the proof's key.
pub fn bound(token_type: Option<&str>) -> bool {
    token_type.is_some_and(|t| t.eq_ignore_ascii_case("DPoP"))
}

/// The `htu` of a request to `url`: without its query and fragment (RFC 9449 §4.2).
pub fn htu(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            u.set_query(None);
            u.set_fragment(None);
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.to_string()
        }
        Err(_) => url.split(['?', '#']).next().unwrap_or(url).to_string(),
    }
}

/// One connection's key.
pub struct DpopKey {
    key: SigningKey,
    /// The proofs' header up to its end, encoded once: `typ`, `alg` and the public `jwk`.
    header: String,
}

impl std::fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DpopKey(..)")
    }
}

impl DpopKey {
    pub fn generate() -> Self {
        Self::of(SigningKey::random(&mut OsRng))
    }

    /// The key kept as [`secret`](Self::secret) gave it.
    pub fn from_secret(secret: &str) -> Option<Self> {
        let bytes = B64.decode(secret).ok()?;
        SigningKey::from_slice(&bytes).ok().map(Self::of)
    }

    /// The private scalar, base64url: kept only sealed.
    pub fn secret(&self) -> String {
        B64.encode(self.key.to_bytes())
    }

    fn of(key: SigningKey) -> Self {
        let point = key.verifying_key().to_encoded_point(false);
        let jwk = json!({
            "kty": "EC",
            "crv": "P-256",
            "x": B64.encode(point.x().expect("an uncompressed point")),
            "y": B64.encode(point.y().expect("an uncompressed point")),
        });
        let header = json!({"typ": "dpop+jwt", "alg": ALGORITHM, "jwk": jwk});
        Self {
            key,
            header: B64.encode(header.to_string()),
        }
    }

    /// A proof for one request: `htm` and `htu` name it, `token` is the access token it
    /// carries (at a resource server), `nonce` the server's last one.
    pub fn proof(&self, htm: &str, htu: &str, token: Option<&str>, nonce: Option<&str>) -> String {
        let mut claims = json!({
            "jti": uuid::Uuid::new_v4().to_string(),
            "htm": htm,
            "htu": htu,
            "iat": std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        });
        if let Some(t) = token {
            claims["ath"] = json!(B64.encode(Sha256::digest(t.as_bytes())));
        }
        if let Some(n) = nonce {
            claims["nonce"] = json!(n);
        }
        let input = format!("{}.{}", self.header, B64.encode(claims.to_string()));
        let signature: Signature = self.key.sign(input.as_bytes());
        format!("{input}.{}", B64.encode(signature.to_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::ecdsa::signature::Verifier;
    use p256::ecdsa::VerifyingKey;

    #[test]
    fn a_proof_is_signed_by_the_key_it_names_and_binds_the_token() {
        let key = DpopKey::generate();
        let again = DpopKey::from_secret(&key.secret()).unwrap();
        let proof = again.proof("POST", "https://up.example/mcp", Some("tok"), Some("n1"));
        let parts: Vec<&str> = proof.split('.').collect();
        assert_eq!(parts.len(), 3);
        let header: Value = serde_json::from_slice(&B64.decode(parts[0]).unwrap()).unwrap();
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(header["alg"], "ES256");
        assert!(header["jwk"].get("d").is_none(), "no private part");
        let claims: Value = serde_json::from_slice(&B64.decode(parts[1]).unwrap()).unwrap();
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "https://up.example/mcp");
        assert_eq!(claims["nonce"], "n1");
        assert_eq!(
            claims["ath"],
            B64.encode(Sha256::digest(b"tok")),
            "the hash of the token it goes with"
        );
        // The header's public key verifies the signature.
        let x = B64.decode(header["jwk"]["x"].as_str().unwrap()).unwrap();
        let y = B64.decode(header["jwk"]["y"].as_str().unwrap()).unwrap();
        let point = p256::EncodedPoint::from_affine_coordinates(
            x.as_slice().into(),
            y.as_slice().into(),
            false,
        );
        let public = VerifyingKey::from_encoded_point(&point).unwrap();
        let signature = Signature::from_slice(&B64.decode(parts[2]).unwrap()).unwrap();
        let input = format!("{}.{}", parts[0], parts[1]);
        public.verify(input.as_bytes(), &signature).unwrap();
        // Every proof is new.
        let other = again.proof("POST", "https://up.example/mcp", Some("tok"), None);
        let other: Value =
            serde_json::from_slice(&B64.decode(other.split('.').nth(1).unwrap()).unwrap()).unwrap();
        assert_ne!(other["jti"], claims["jti"]);
        assert_eq!(
            htu("https://u:p@up.example/mcp?x=1#f"),
            "https://up.example/mcp"
        );
        assert!(supported(
            &json!({"dpop_signing_alg_values_supported": ["RS256", "ES256"]})
        ));
        assert!(!supported(&json!({})));
        assert!(bound(Some("dpop")) && !bound(Some("Bearer")) && !bound(None));
    }
}
