//! Clients that authenticate at the token endpoint with assertions they sign
//! (`private_key_jwt`, RFC 7523 §2.2): a client of the config with a `public_key` sends
//! `client_assertion_type=urn:ietf:params:oauth:client-assertion-type:jwt-bearer` and a JWT it
//! signed (`iss` = `sub` = its id, `aud` = the token endpoint or the issuer, unexpired, a `jti`
//! used once). No secret is shared, so none can leak from the gateway's store or config.

use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};

/// The form value that names a signed client assertion.
pub const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// A client's public key and the one algorithm it signs with.
pub struct ClientKey {
    key: DecodingKey,
    alg: Algorithm,
}

impl ClientKey {
    /// An EC P-256 key (ES256) or an RSA key (RS256), PEM.
    pub fn from_pem(pem: &str) -> Result<Self, String> {
        if let Ok(key) = DecodingKey::from_ec_pem(pem.as_bytes()) {
            return Ok(Self {
                key,
                alg: Algorithm::ES256,
            });
        }
        DecodingKey::from_rsa_pem(pem.as_bytes())
            .map(|key| Self {
                key,
                alg: Algorithm::RS256,
            })
            .map_err(|_| "not a PEM public key (EC P-256 or RSA)".to_string())
    }

    /// The claims of `assertion` if `client_id` signed it for one of `audiences` and it has not
    /// expired; its `jti` and `exp` must be there (the caller spends the `jti`).
    pub fn verify(
        &self,
        assertion: &str,
        client_id: &str,
        audiences: &[&str],
    ) -> Result<Map<String, Value>, String> {
        let mut v = Validation::new(self.alg);
        v.set_issuer(&[client_id]);
        v.set_audience(audiences);
        v.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        v.leeway = 30;
        let claims = jsonwebtoken::decode::<Map<String, Value>>(assertion, &self.key, &v)
            .map_err(|e| format!("the client assertion: {e}"))?
            .claims;
        if claims.get("sub").and_then(Value::as_str) != Some(client_id) {
            return Err("the client assertion's sub is not the client".into());
        }
        if !claims.get("jti").is_some_and(Value::is_string) {
            return Err("the client assertion has no jti".into());
        }
        Ok(claims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{EncodingKey, Header};
    use serde_json::json;

    const PRIVATE: &str = include_str!("../../../../tests/idp/client-key.pem");
    const PUBLIC: &str = include_str!("../../../../tests/idp/client-key.pub.pem");

    fn signed(claims: Value) -> String {
        let key = EncodingKey::from_ec_pem(PRIVATE.as_bytes()).unwrap();
        jsonwebtoken::encode(&Header::new(Algorithm::ES256), &claims, &key).unwrap()
    }

    #[test]
    fn an_assertion_is_taken_from_its_client_for_this_server_only() {
        let key = ClientKey::from_pem(PUBLIC).unwrap();
        let now = registry::now_ms() / 1000;
        let claims = |iss: &str, sub: &str, aud: &str, exp: i64| json!({"iss": iss, "sub": sub, "aud": aud, "exp": exp, "jti": "j1"});
        let aud = ["https://gw.example/oauth/token", "https://gw.example"];
        let good = signed(claims("bot", "bot", aud[0], now + 60));
        assert_eq!(
            crate::auth::jwt::unverified_issuer(&good).as_deref(),
            Some("bot")
        );
        assert!(key.verify(&good, "bot", &aud).is_ok());
        let issuer_aud = signed(claims("bot", "bot", aud[1], now + 60));
        assert!(key.verify(&issuer_aud, "bot", &aud).is_ok());
        for (bad, why) in [
            (
                signed(claims("bot", "bot", "https://elsewhere", now + 60)),
                "aud",
            ),
            (signed(claims("bot", "bot", aud[0], now - 120)), "expired"),
            (
                signed(claims("eve", "eve", aud[0], now + 60)),
                "another client",
            ),
            (signed(claims("bot", "eve", aud[0], now + 60)), "sub"),
        ] {
            assert!(key.verify(&bad, "bot", &aud).is_err(), "{why}");
        }
        let without_jti =
            signed(json!({"iss": "bot", "sub": "bot", "aud": aud[0], "exp": now + 60}));
        assert!(key.verify(&without_jti, "bot", &aud).is_err());
        assert!(ClientKey::from_pem("not a key").is_err());
    }
}
