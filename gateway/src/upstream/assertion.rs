//! The gateway's client assertion (RFC 7523 `private_key_jwt`): a JWT the gateway signs with its
//! client's private key, good for a minute and for one authorization server, that authenticates
//! it at the token endpoint in place of a secret. No secret is shared with the server: it knows
//! only the public key.

use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::json;

/// `client_assertion_type` of a signed JWT.
pub const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/// How long an assertion is good for: it is made for one token request.
const LIFETIME_SECS: u64 = 60;
/// The algorithm when the config names none: the one the MCP client credentials extension's
/// examples use.
const DEFAULT_ALGORITHM: &str = "ES256";

/// The algorithm `name` names, if a private key signs with it (the `HS*` ones sign with a
/// shared secret: that is `client_secret_jwt`, not this).
pub fn algorithm(name: &str) -> Result<Algorithm, String> {
    use Algorithm::*;
    let alg: Algorithm = name
        .parse()
        .map_err(|_| format!("unknown signing algorithm {name:?}"))?;
    match alg {
        HS256 | HS384 | HS512 => Err(format!(
            "{name} signs with a shared secret: give oauth.client_secret instead"
        )),
        _ => Ok(alg),
    }
}

/// A client's private key and the algorithm it signs with.
#[derive(Clone)]
pub struct SigningKey {
    key: EncodingKey,
    alg: Algorithm,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SigningKey({:?}, ***)", self.alg)
    }
}

impl PartialEq for SigningKey {
    fn eq(&self, other: &Self) -> bool {
        self.alg == other.alg && self.key.as_bytes() == other.key.as_bytes()
    }
}

impl SigningKey {
    /// The key in `pem` (PKCS#8, or the key type's own PEM form) for `algorithm` (default
    /// `ES256`). A key that cannot sign with the algorithm is refused here, not at the first
    /// token request.
    pub fn from_pem(pem: &str, algorithm_name: Option<&str>) -> Result<Self, String> {
        use Algorithm::*;
        let alg = algorithm(algorithm_name.unwrap_or(DEFAULT_ALGORITHM))?;
        let bytes = pem.as_bytes();
        let key = match alg {
            ES256 | ES384 => EncodingKey::from_ec_pem(bytes),
            EdDSA => EncodingKey::from_ed_pem(bytes),
            _ => EncodingKey::from_rsa_pem(bytes),
        }
        .map_err(|e| format!("the private key is no {alg:?} key in PEM: {e}"))?;
        let me = Self { key, alg };
        me.assertion("probe", "probe")
            .map_err(|e| format!("the private key cannot sign with {alg:?}: {e}"))?;
        Ok(me)
    }

    /// An assertion that `client_id` is making a request of the authorization server whose
    /// issuer is `audience` (RFC 7523 §3: `iss` and `sub` the client, `aud` the server, a short
    /// `exp`, a `jti` never used again).
    pub fn assertion(&self, client_id: &str, audience: &str) -> Result<String, String> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        let claims = json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": now,
            "exp": now + LIFETIME_SECS,
            "jti": uuid::Uuid::new_v4().to_string(),
        });
        jsonwebtoken::encode(&Header::new(self.alg), &claims, &self.key).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{DecodingKey, Validation};

    // A P-256 key made for this test only (`openssl genpkey -algorithm EC -pkeyopt
    // ec_paramgen_curve:P-256`), and its public half.
    const EC_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQggzG3XNYQFwCQnA1P
1y+BqHmu1ww0yfY/pswh10in2FWhRANCAAQ7gKIYzIKpTmW89M1Ql4IuyppcP807
aCVQaof3pXyuNhtf5q5KqNZRv4HJGkNIBXvaE4/LSlRrhqZD3Ec1Nlfd
-----END PRIVATE KEY-----
";
    const EC_PUBLIC: &str = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEO4CiGMyCqU5lvPTNUJeCLsqaXD/N
O2glUGqH96V8rjYbX+auSqjWUb+ByRpDSAV72hOPy0pUa4amQ9xHNTZX3Q==
-----END PUBLIC KEY-----
";

    #[test]
    fn an_assertion_names_the_client_and_the_server_and_is_verified_by_the_public_key() {
        let key = SigningKey::from_pem(EC_KEY, None).unwrap();
        let jwt = key.assertion("gw-client", "https://as.example").unwrap();
        let mut v = Validation::new(Algorithm::ES256);
        v.set_audience(&["https://as.example"]);
        let public = DecodingKey::from_ec_pem(EC_PUBLIC.as_bytes()).unwrap();
        let claims = jsonwebtoken::decode::<serde_json::Value>(&jwt, &public, &v)
            .unwrap()
            .claims;
        assert_eq!(claims["iss"], "gw-client");
        assert_eq!(claims["sub"], "gw-client");
        let (iat, exp) = (claims["iat"].as_u64(), claims["exp"].as_u64());
        assert_eq!(exp.zip(iat).map(|(e, i)| e - i), Some(LIFETIME_SECS));
        let again = key.assertion("gw-client", "https://as.example").unwrap();
        let jti = |t: &str| {
            jsonwebtoken::decode::<serde_json::Value>(t, &public, &v)
                .unwrap()
                .claims["jti"]
                .clone()
        };
        assert_ne!(jti(&jwt), jti(&again), "each assertion is used once");
    }

    #[test]
    fn keys_and_algorithms_that_do_not_fit_are_refused_up_front() {
        let e = SigningKey::from_pem(EC_KEY, Some("RS256")).unwrap_err();
        assert!(e.contains("RS256"), "{e}");
        let e = SigningKey::from_pem("not a key", None).unwrap_err();
        assert!(e.contains("PEM"), "{e}");
        let e = algorithm("HS256").unwrap_err();
        assert!(e.contains("client_secret"), "{e}");
        assert!(algorithm("XY1").is_err());
        assert_eq!(
            format!("{:?}", SigningKey::from_pem(EC_KEY, None).unwrap()),
            "SigningKey(ES256, ***)"
        );
    }
}
