//! An issuer's public signing keys as the gateway keeps them: fetched from its JWKS, kept for a
//! while, fetched again when a token names a key id not among them (at most once per
//! `min_refresh`, so unknown ids cannot make every request fetch), and kept past their time
//! while the issuer cannot be reached: stale keys are better than none. Used for the OAuth
//! issuers whose access tokens the gateway accepts (`auth.issuers`) and for the company's
//! provider, whose ID tokens and identity assertion grants the gateway's own authorization
//! server checks.

use std::collections::HashMap;
use std::future::Future;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;

/// One verification key and the one algorithm it is for.
pub struct Key {
    key: DecodingKey,
    alg: Algorithm,
}

/// How long keys are kept, and how often they may be fetched again.
#[derive(Debug, Clone, Copy)]
pub struct KeyRules {
    /// Keys older than this are fetched again before use.
    pub ttl: Duration,
    /// At most one fetch per this, successful or not.
    pub min_refresh: Duration,
}

/// Why no key was found.
#[derive(Debug, PartialEq)]
pub enum KeyError {
    /// The issuer's keys were read, and the token's key is not among them.
    Unknown,
    /// The issuer's keys cannot be read right now, and none are at hand.
    Unavailable,
}

#[derive(Default)]
struct KeySet {
    keys: HashMap<String, Key>,
    fetched: Option<Instant>,
    /// The last fetch attempt, successful or not (bounds refreshes).
    attempted: Option<Instant>,
}

/// One issuer's keys.
#[derive(Default)]
pub struct IssuerKeys {
    keys: tokio::sync::RwLock<KeySet>,
    /// One fetch at a time.
    fetching: tokio::sync::Mutex<()>,
}

impl IssuerKeys {
    /// The key `kid` names (without a kid, the only key), from the keys at hand or from
    /// `fetch`, which reads the issuer's JWKS (`issuer` names it in the log).
    pub async fn key<F, Fut>(
        &self,
        issuer: &str,
        kid: Option<&str>,
        rules: KeyRules,
        fetch: F,
    ) -> Result<(DecodingKey, Algorithm), KeyError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<HashMap<String, Key>, String>>,
    {
        let pick = |set: &KeySet| -> Option<(DecodingKey, Algorithm)> {
            let k = match kid {
                Some(kid) => set.keys.get(kid),
                // Without a kid, only an unambiguous set will do.
                None if set.keys.len() == 1 => set.keys.values().next(),
                None => None,
            }?;
            Some((k.key.clone(), k.alg))
        };
        {
            let set = self.keys.read().await;
            let fresh = set.fetched.is_some_and(|t| t.elapsed() < rules.ttl);
            if fresh {
                if let Some(k) = pick(&set) {
                    return Ok(k);
                }
            }
        }
        let _one = self.fetching.lock().await;
        {
            let set = self.keys.read().await;
            let fresh = set.fetched.is_some_and(|t| t.elapsed() < rules.ttl);
            let recently = set
                .attempted
                .is_some_and(|t| t.elapsed() < rules.min_refresh);
            if let Some(k) = pick(&set).filter(|_| fresh) {
                return Ok(k);
            }
            // Neither unknown kids nor an unreachable issuer make every request fetch again:
            // within `min_refresh` of the last attempt, the keys at hand decide.
            if recently {
                return pick(&set).ok_or(if set.fetched.is_some() {
                    KeyError::Unknown
                } else {
                    KeyError::Unavailable
                });
            }
        }
        let fetched = fetch().await;
        let mut set = self.keys.write().await;
        set.attempted = Some(Instant::now());
        match fetched {
            Ok(keys) => {
                tracing::info!(issuer, keys = keys.len(), "issuer keys fetched");
                set.keys = keys;
                set.fetched = Some(Instant::now());
            }
            Err(e) => {
                tracing::warn!(issuer, error = %e, "cannot fetch the issuer's keys");
                // Stale keys are better than none while the issuer is unreachable.
                return pick(&set).ok_or(KeyError::Unavailable);
            }
        }
        pick(&set).ok_or(KeyError::Unknown)
    }
}

/// The signing keys of the JWKS document at `url`.
pub async fn read_jwks(http: &reqwest::Client, url: &str) -> Result<HashMap<String, Key>, String> {
    let answer = http
        .get(url)
        .timeout(Duration::from_secs(10))
        .send()
        .await
        .and_then(|r| r.error_for_status())
        .map_err(|e| format!("{url}: {e}"))?;
    let doc: Value = crate::json_answers::read(answer)
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    Ok(parse_jwks(&doc))
}

/// The algorithm a JWK is for: its `alg`, or the one its key type implies.
fn alg_of(jwk: &Jwk) -> Option<Algorithm> {
    if let Some(a) = jwk.common.key_algorithm {
        return Algorithm::try_from(a).ok();
    }
    match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => Some(Algorithm::RS256),
        AlgorithmParameters::EllipticCurve(p) => match p.curve {
            EllipticCurve::P256 => Some(Algorithm::ES256),
            EllipticCurve::P384 => Some(Algorithm::ES384),
            _ => None,
        },
        AlgorithmParameters::OctetKeyPair(_) => Some(Algorithm::EdDSA),
        // A shared secret is never published as a verification key; other types are unknown.
        _ => None,
    }
}

/// The keys of a JWKS document usable for signatures; others (encryption keys, unknown types)
/// are skipped rather than failing the whole set.
fn parse_jwks(doc: &Value) -> HashMap<String, Key> {
    let mut out = HashMap::new();
    let Some(keys) = doc.get("keys").and_then(Value::as_array) else {
        return out;
    };
    for (i, k) in keys.iter().enumerate() {
        if k.get("use")
            .and_then(Value::as_str)
            .is_some_and(|u| u != "sig")
        {
            continue;
        }
        let Ok(jwk) = serde_json::from_value::<Jwk>(k.clone()) else {
            continue;
        };
        let (Some(alg), Ok(key)) = (alg_of(&jwk), DecodingKey::from_jwk(&jwk)) else {
            continue;
        };
        let kid = jwk.common.key_id.clone().unwrap_or_else(|| format!("#{i}"));
        out.insert(kid, Key { key, alg });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jwks_keeps_signing_keys_only() {
        let doc = serde_json::json!({"keys": [
            {"kty": "RSA", "kid": "s", "use": "sig", "alg": "RS256", "e": "AQAB",
             "n": "uG_RU0hPkGfYINxK6Rr_MRjdYMRKpyqUAiGNRyOg11rSmDSzZPPKXcJpGPMCK_Ah74KFYflzCSOd4T2eYDo485_Pe7jv_wnAmQXYwr382_lfXhtc7C27NVCurLWQ-Cu24FivvBhDzshA5XFkZXErDnsowdfaXy3Ar-WQQLVmOh_Zwa7xn1mB-U_w2X7LlxEZ_HFa9xM9d31KNE0cJTsF6P6xTmeFj1DMpTloQXT9n4VuGqFO28v9YgX1084t5g0-ZD8AgNnjL_cWxyBnbBSDzY8Nn8-4hHh5H899g-BjTqcQPPTywRGoyISIOWpvlSNwF4n7SBNuNl8_zT4sKhPOJQ"},
            {"kty": "RSA", "kid": "e", "use": "enc", "e": "AQAB", "n": "AQAB"},
            {"kty": "oct", "kid": "h", "k": "c2VjcmV0"},
            {"kty": "weird"}
        ]});
        let keys = parse_jwks(&doc);
        assert_eq!(keys.keys().collect::<Vec<_>>(), ["s"]);
        assert_eq!(keys["s"].alg, Algorithm::RS256);
    }
}
