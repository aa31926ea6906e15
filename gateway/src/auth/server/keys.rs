//! The authorization server's signing keys: Ed25519, kept in the store so that every replica
//! signs and verifies with the same ones, published at `jwks_uri`, and rotated: after
//! `key_rotation` a new key signs, and the old one verifies until the tokens it signed have
//! expired. The same keys sign the forms of the sign-in and consent pages. With
//! `user_credentials.key` set, a key's private half is sealed in the store under it (whoever
//! reads the database cannot sign tokens), a key stored before that too, at the next start.

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine;
use chacha20poly1305::aead::rand_core::RngCore;
use chacha20poly1305::aead::OsRng;
use hmac::{Hmac, Mac};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use registry::{now_ms, Registry, SigningKeyRecord};
use serde_json::{json, Map, Value};
use sha2::Sha256;

use crate::upstream::credentials::seal::KeyRing;

/// The PKCS#8 v1 prefix of an Ed25519 private key (RFC 8410): the 32-byte seed follows it.
const ED25519_PKCS8_PREFIX: [u8; 16] = [
    0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
];
/// A token naming an unknown key id re-reads the store at most this often (a key another
/// replica added).
const RELOAD_AT_MOST_EVERY: Duration = Duration::from_secs(5);

struct Key {
    kid: String,
    public_x: String,
    encoding: EncodingKey,
    decoding: DecodingKey,
    /// The form MAC key, derived from the seed.
    mac: [u8; 32],
    created_at: i64,
}

/// The keys, newest first.
pub struct Keys {
    keys: RwLock<Arc<Vec<Key>>>,
    reloaded: std::sync::Mutex<Option<Instant>>,
    /// Seals the private halves in the store (`user_credentials.key`; empty: not sealed).
    ring: KeyRing,
}

/// Key `kid`'s seed (base64url) sealed with `ring` (`None`: an empty ring). Its key id is what
/// it is sealed for, so a sealed seed copied to another row does not open.
fn seal_seed(ring: &KeyRing, kid: &str, seed: &str) -> Option<String> {
    ring.seal(&format!("signing-key:{kid}"), &json!(seed))
}

/// What [`seal_seed`] sealed, opened.
fn open_seed(ring: &KeyRing, kid: &str, sealed: &str) -> Option<String> {
    let (seed, _) = ring.open(&format!("signing-key:{kid}"), sealed)?;
    seed.as_str().map(str::to_string)
}

/// Why a token of ours was refused.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("{0}")]
    Invalid(String),
    #[error("the signing keys cannot be read")]
    Unavailable,
}

/// The key of `rec`; its seed opened with `ring` when it is sealed (a sealed value names its
/// sealing key before a dot, which a base64url seed never holds).
fn key_of(rec: &SigningKeyRecord, ring: &KeyRing) -> Option<Key> {
    let secret = if rec.secret.contains('.') {
        let Some(seed) = open_seed(ring, &rec.kid, &rec.secret) else {
            tracing::warn!(kid = %rec.kid, "a signing key sealed under a key this gateway does not have (user_credentials.key)");
            return None;
        };
        seed
    } else {
        rec.secret.clone()
    };
    let seed: [u8; 32] = B64.decode(secret).ok()?.try_into().ok()?;
    let mut der = ED25519_PKCS8_PREFIX.to_vec();
    der.extend_from_slice(&seed);
    let mut mac = Hmac::<Sha256>::new_from_slice(&seed).ok()?;
    mac.update(b"mcp-gateway form key");
    Some(Key {
        kid: rec.kid.clone(),
        public_x: rec.public_x.clone(),
        encoding: EncodingKey::from_ed_der(&der),
        decoding: DecodingKey::from_ed_components(&rec.public_x).ok()?,
        mac: mac.finalize().into_bytes().into(),
        created_at: rec.created_at,
    })
}

/// A new key record, its seed sealed with `ring` unless that is empty.
fn generate(ring: &KeyRing) -> SigningKeyRecord {
    let mut seed = [0u8; 32];
    OsRng.fill_bytes(&mut seed);
    let public = ed25519_dalek::SigningKey::from_bytes(&seed)
        .verifying_key()
        .to_bytes();
    let kid = uuid::Uuid::new_v4().simple().to_string()[..16].to_string();
    let plain = B64.encode(seed);
    let secret = seal_seed(ring, &kid, &plain).unwrap_or(plain);
    SigningKeyRecord {
        kid,
        secret,
        public_x: B64.encode(public),
        created_at: now_ms(),
        retired_at: None,
    }
}

impl Keys {
    /// The stored keys; a new one first when there is none or the newest is older than
    /// `rotation`.
    pub async fn load(
        registry: &dyn Registry,
        rotation: Duration,
        ring: KeyRing,
    ) -> registry::Result<Self> {
        let keys = Self {
            keys: RwLock::new(Arc::new(Vec::new())),
            reloaded: std::sync::Mutex::new(None),
            ring,
        };
        keys.rotate_if_due(registry, rotation).await?;
        Ok(keys)
    }

    /// Re-reads the keys from the store (another replica added one).
    pub async fn reload(&self, registry: &dyn Registry) -> registry::Result<()> {
        let recs = registry.signing_keys().await?;
        let keys: Vec<Key> = recs.iter().filter_map(|r| key_of(r, &self.ring)).collect();
        *self.keys.write().unwrap() = Arc::new(keys);
        Ok(())
    }

    /// Adds a key when the newest is older than `rotation` (or there is none). With a sealing
    /// key, a seed stored unsealed (before `user_credentials.key` was set) is sealed first.
    pub async fn rotate_if_due(
        &self,
        registry: &dyn Registry,
        rotation: Duration,
    ) -> registry::Result<()> {
        self.seal_stored(registry).await?;
        self.reload(registry).await?;
        let newest = self.current().first().map(|k| k.created_at);
        let due = newest.is_none_or(|at| now_ms() - at >= rotation.as_millis() as i64);
        if due {
            registry.add_signing_key(&generate(&self.ring)).await?;
            self.reload(registry).await?;
        }
        Ok(())
    }

    /// Seals the stored seeds that are not (a replica that sealed one first wins; the seed is
    /// the same either way).
    async fn seal_stored(&self, registry: &dyn Registry) -> registry::Result<()> {
        if self.ring.is_empty() {
            return Ok(());
        }
        for rec in registry.signing_keys().await? {
            if rec.secret.contains('.') {
                continue;
            }
            if let Some(sealed) = seal_seed(&self.ring, &rec.kid, &rec.secret) {
                if registry
                    .reseal_signing_key(&rec.kid, &rec.secret, &sealed)
                    .await?
                {
                    tracing::info!(kid = %rec.kid, "a stored signing key is sealed now");
                }
            }
        }
        Ok(())
    }

    fn current(&self) -> Arc<Vec<Key>> {
        self.keys.read().unwrap().clone()
    }

    /// Signs `claims` as an access token (RFC 9068 `at+jwt`) with the newest key.
    pub fn sign(&self, claims: &Value) -> Result<String, KeyError> {
        let keys = self.current();
        let key = keys.first().ok_or(KeyError::Unavailable)?;
        let mut header = Header::new(Algorithm::EdDSA);
        header.typ = Some("at+jwt".into());
        header.kid = Some(key.kid.clone());
        jsonwebtoken::encode(&header, claims, &key.encoding)
            .map_err(|e| KeyError::Invalid(format!("cannot sign: {e}")))
    }

    /// Whether `token` claims to be `issuer`'s (unverified: it decides only which verifier
    /// checks it; a token of another issuer goes to the issuers' verifier).
    pub fn claims_issuer(token: &str, issuer: &str) -> bool {
        let Some(payload) = token.split('.').nth(1) else {
            return false;
        };
        B64.decode(payload)
            .ok()
            .and_then(|p| serde_json::from_slice::<Value>(&p).ok())
            .is_some_and(|c| c.get("iss").and_then(Value::as_str) == Some(issuer))
    }

    /// The claims of a token this server signed, checked: signature, `typ`, `iss`, `exp`.
    /// The audience is the caller's to check (it may be any of the gateway's resources).
    pub async fn verify(
        &self,
        token: &str,
        issuer: &str,
        registry: &dyn Registry,
    ) -> Result<Map<String, Value>, KeyError> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|e| KeyError::Invalid(format!("malformed token: {e}")))?;
        if header.alg != Algorithm::EdDSA || header.typ.as_deref() != Some("at+jwt") {
            return Err(KeyError::Invalid(
                "not an access token of this server".into(),
            ));
        }
        let kid = header
            .kid
            .ok_or_else(|| KeyError::Invalid("the token names no key".into()))?;
        if !self.current().iter().any(|k| k.kid == kid) {
            self.reload_for_unknown_kid(registry).await?;
        }
        let keys = self.current();
        let key = keys
            .iter()
            .find(|k| k.kid == kid)
            .ok_or_else(|| KeyError::Invalid("the token's key is unknown or retired".into()))?;
        let mut v = Validation::new(Algorithm::EdDSA);
        v.set_issuer(&[issuer]);
        v.validate_aud = false;
        v.leeway = 0;
        v.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        jsonwebtoken::decode::<Map<String, Value>>(token, &key.decoding, &v)
            .map(|d| d.claims)
            .map_err(|e| KeyError::Invalid(format!("invalid token: {e}")))
    }

    async fn reload_for_unknown_kid(&self, registry: &dyn Registry) -> Result<(), KeyError> {
        {
            let mut last = self.reloaded.lock().unwrap();
            if last.is_some_and(|t| t.elapsed() < RELOAD_AT_MOST_EVERY) {
                return Ok(());
            }
            *last = Some(Instant::now());
        }
        self.reload(registry)
            .await
            .map_err(|_| KeyError::Unavailable)
    }

    /// The public keys, as `jwks_uri` serves them.
    pub fn jwks(&self) -> Value {
        let keys: Vec<Value> = self
            .current()
            .iter()
            .map(|k| {
                json!({"kty": "OKP", "crv": "Ed25519", "x": k.public_x, "kid": k.kid,
                       "use": "sig", "alg": "EdDSA"})
            })
            .collect();
        json!({ "keys": keys })
    }

    /// `payload` signed for a form: `payload.mac` (base64url both).
    pub fn seal(&self, payload: &Value) -> Result<String, KeyError> {
        let keys = self.current();
        let key = keys.first().ok_or(KeyError::Unavailable)?;
        let body = B64.encode(payload.to_string());
        let mac = B64.encode(form_mac(&key.mac, &key.kid, &body));
        Ok(format!("{}.{body}.{mac}", key.kid))
    }

    /// The payload of a sealed form value, if one of the keys sealed it.
    pub fn open(&self, sealed: &str) -> Option<Value> {
        let mut parts = sealed.splitn(3, '.');
        let (kid, body, mac) = (parts.next()?, parts.next()?, parts.next()?);
        let keys = self.current();
        let key = keys.iter().find(|k| k.kid == kid)?;
        let want = form_mac(&key.mac, kid, body);
        let got = B64.decode(mac).ok()?;
        if !crate::auth::pat::same_bytes(&want, &got) {
            return None;
        }
        serde_json::from_slice(&B64.decode(body).ok()?).ok()
    }
}

fn form_mac(key: &[u8; 32], kid: &str, body: &str) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("any key length");
    mac.update(kid.as_bytes());
    mac.update(b".");
    mac.update(body.as_bytes());
    mac.finalize().into_bytes().to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys_of(recs: &[SigningKeyRecord]) -> Keys {
        let ring = KeyRing::new(&[]);
        Keys {
            keys: RwLock::new(Arc::new(
                recs.iter().filter_map(|r| key_of(r, &ring)).collect(),
            )),
            reloaded: std::sync::Mutex::new(None),
            ring,
        }
    }

    fn generate() -> SigningKeyRecord {
        super::generate(&KeyRing::new(&[]))
    }

    #[test]
    fn a_seed_is_sealed_under_the_credentials_key_and_opens_only_with_it() {
        let ring = KeyRing::new(&[[7u8; 32]]);
        let rec = super::generate(&ring);
        assert!(rec.secret.contains('.'), "sealed: {}", rec.secret);
        let key = key_of(&rec, &ring).expect("it opens with the key that sealed it");
        let plain = key_of(&rec, &KeyRing::new(&[[8u8; 32]]));
        assert!(plain.is_none(), "another key does not open it");
        assert!(key_of(&rec, &KeyRing::new(&[])).is_none(), "nor no key");
        // After a rotation of the credentials key the previous one still opens it.
        let rotated = KeyRing::new(&[[9u8; 32], [7u8; 32]]);
        assert_eq!(
            key_of(&rec, &rotated).map(|k| k.public_x),
            Some(key.public_x)
        );
        // Copied to another key id, it does not open.
        let moved = SigningKeyRecord {
            kid: "other".into(),
            ..rec.clone()
        };
        assert!(key_of(&moved, &ring).is_none());
        // A seed stored before sealing (plain base64url) is still read.
        let old = generate();
        assert!(!old.secret.contains('.'));
        assert!(key_of(&old, &ring).is_some());
    }

    #[test]
    fn sealed_values_open_only_unchanged_and_under_a_known_key() {
        let keys = keys_of(&[generate()]);
        let sealed = keys.seal(&json!({"a": 1})).unwrap();
        assert_eq!(keys.open(&sealed), Some(json!({"a": 1})));
        let (head, mac) = sealed.rsplit_once('.').unwrap();
        let (kid, _) = head.split_once('.').unwrap();
        let forged = format!("{kid}.{}.{mac}", B64.encode(r#"{"a":2}"#));
        assert_eq!(keys.open(&forged), None, "a changed payload");
        assert_eq!(keys_of(&[generate()]).open(&sealed), None, "another key");
        assert_eq!(keys.open("x"), None);
    }

    #[test]
    fn a_signed_token_verifies_with_the_published_key() {
        let rec = generate();
        let keys = keys_of(std::slice::from_ref(&rec));
        let token = keys
            .sign(
                &json!({"iss": "https://gw", "sub": "ann", "aud": "https://gw/mcp",
                          "exp": now_ms() / 1000 + 60}),
            )
            .unwrap();
        let jwk: jsonwebtoken::jwk::JwkSet =
            serde_json::from_value(keys.jwks()).expect("a JWK set");
        let key = DecodingKey::from_jwk(&jwk.keys[0]).unwrap();
        let mut v = Validation::new(Algorithm::EdDSA);
        v.set_audience(&["https://gw/mcp"]);
        let claims = jsonwebtoken::decode::<Value>(&token, &key, &v)
            .unwrap()
            .claims;
        assert_eq!(claims["sub"], "ann");
        assert_eq!(
            jsonwebtoken::decode_header(&token).unwrap().kid,
            Some(rec.kid)
        );
    }
}
