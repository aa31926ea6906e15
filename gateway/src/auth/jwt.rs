//! OAuth access tokens (JWTs) checked against their issuer's keys: the issuer must be one the
//! config trusts, the key comes from its JWKS (fetched, cached for `jwks_ttl`, re-fetched when a
//! token names an unknown key id, at most once per `jwks_min_refresh`), the algorithm must be the
//! key's own (never `none`, never HMAC with a public key), and `iss`, `aud` (the gateway's
//! resource URL, RFC 8707), `exp` and `nbf` are checked with a small leeway.

use std::collections::HashMap;
use std::time::Duration;

use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};

use super::issuer_keys::{read_jwks, IssuerKeys, Key, KeyError, KeyRules};
use crate::config::{AuthConfig, IssuerConfig};

/// Why a token was refused (the message goes to the client in `error_description`).
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum TokenError {
    #[error("{0}")]
    Invalid(String),
    /// The issuer's keys cannot be fetched right now.
    #[error("the token's issuer cannot be reached to check the token")]
    KeysUnavailable,
}

fn invalid(m: impl Into<String>) -> TokenError {
    TokenError::Invalid(m.into())
}

struct Issuer {
    config: IssuerConfig,
    keys: IssuerKeys,
}

pub struct Verifier {
    issuers: Vec<Issuer>,
    audience: Option<String>,
    leeway: Duration,
    ttl: Duration,
    min_refresh: Duration,
    http: reqwest::Client,
}

/// A JWT's payload read without checking its signature: only to decide which key checks it, or
/// when to refresh a token that goes back to its own issuer; never to trust what it says.
pub fn unverified_claims(token: &str) -> Option<Value> {
    use base64::Engine;
    let payload = token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// The issuer a JWT claims, before its signature is checked: only to pick its verifier.
pub fn unverified_issuer(token: &str) -> Option<String> {
    unverified_claims(token)?
        .get("iss")?
        .as_str()
        .map(str::to_string)
}

/// The scopes a token grants (`scope`: space-separated, or `scp`: a list).
pub fn scopes(claims: &Map<String, Value>) -> Vec<String> {
    match (claims.get("scope"), claims.get("scp")) {
        (Some(Value::String(s)), _) => s.split_whitespace().map(str::to_string).collect(),
        (_, Some(Value::Array(a))) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        (_, Some(Value::String(s))) => s.split_whitespace().map(str::to_string).collect(),
        _ => Vec::new(),
    }
}

impl Verifier {
    pub fn new(config: &AuthConfig, http: reqwest::Client) -> Self {
        Self {
            issuers: config
                .issuers
                .iter()
                .map(|c| Issuer {
                    config: c.clone(),
                    keys: IssuerKeys::default(),
                })
                .collect(),
            audience: config.resource.clone(),
            leeway: config.leeway,
            ttl: config.jwks_ttl,
            min_refresh: config.jwks_min_refresh,
            http,
        }
    }

    pub fn has_issuers(&self) -> bool {
        !self.issuers.is_empty()
    }

    /// Checks a token; its claims and the issuer's config when it is good.
    pub async fn verify(
        &self,
        token: &str,
    ) -> Result<(Map<String, Value>, &IssuerConfig), TokenError> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|e| invalid(format!("not a usable JWT: {e}")))?;
        // RFC 7515 §4.1.11: extensions named critical must be understood; the gateway
        // understands none, so a token that names any is refused.
        if let Some(crit) = &header.crit {
            return Err(invalid(format!(
                "the token names critical header extensions this gateway does not understand: {}",
                crit.join(", ")
            )));
        }
        let iss = unverified_issuer(token).ok_or_else(|| invalid("the token has no issuer"))?;
        let issuer = self
            .issuers
            .iter()
            .find(|i| i.config.issuer == iss)
            .ok_or_else(|| invalid(format!("issuer {iss} is not trusted")))?;
        let kid = header.kid.clone();
        let (key, alg) = self.key(issuer, kid.as_deref()).await?;
        if header.alg != alg {
            return Err(invalid(format!(
                "the token is signed with {:?} but its key is for {alg:?}",
                header.alg
            )));
        }
        let mut v = Validation::new(alg);
        v.leeway = self.leeway.as_secs();
        v.validate_nbf = true;
        v.set_issuer(&[&issuer.config.issuer]);
        match &self.audience {
            Some(aud) => v.set_audience(&[aud]),
            None => v.validate_aud = false,
        }
        v.set_required_spec_claims(&["exp", "iss", "aud"]);
        let data = jsonwebtoken::decode::<Map<String, Value>>(token, &key, &v).map_err(|e| {
            use jsonwebtoken::errors::ErrorKind as K;
            invalid(match e.kind() {
                K::ExpiredSignature => "the token has expired".to_string(),
                K::ImmatureSignature => "the token is not valid yet (nbf)".into(),
                K::InvalidAudience => format!(
                    "the token is not for this resource (aud must be {})",
                    self.audience.as_deref().unwrap_or("")
                ),
                K::InvalidIssuer => "wrong issuer".into(),
                K::InvalidSignature => "bad signature".into(),
                K::MissingRequiredClaim(c) => format!("the token has no {c} claim"),
                other => format!("invalid token: {other:?}"),
            })
        })?;
        Ok((data.claims, &issuer.config))
    }

    /// The key a token names, from the keys at hand or a fresh fetch.
    async fn key(
        &self,
        issuer: &Issuer,
        kid: Option<&str>,
    ) -> Result<(DecodingKey, Algorithm), TokenError> {
        let rules = KeyRules {
            ttl: self.ttl,
            min_refresh: self.min_refresh,
        };
        issuer
            .keys
            .key(&issuer.config.issuer, kid, rules, || {
                self.fetch(&issuer.config)
            })
            .await
            .map_err(|e| match e {
                KeyError::Unknown => invalid("the token's key id is not one of the issuer's keys"),
                KeyError::Unavailable => TokenError::KeysUnavailable,
            })
    }

    async fn fetch(&self, issuer: &IssuerConfig) -> Result<HashMap<String, Key>, String> {
        let url = match &issuer.jwks_url {
            Some(u) => u.clone(),
            None => self.discover_jwks(&issuer.issuer).await?,
        };
        read_jwks(&self.http, &url).await
    }

    /// `jwks_uri` from the issuer's metadata (RFC 8414, then OpenID Connect discovery).
    async fn discover_jwks(&self, issuer: &str) -> Result<String, String> {
        let base = issuer.trim_end_matches('/');
        let (origin, path) = match base.find("://").map(|i| i + 3) {
            Some(i) => match base[i..].find('/') {
                Some(j) => base.split_at(i + j),
                None => (base, ""),
            },
            None => return Err(format!("issuer {issuer} is not a URL")),
        };
        let candidates = [
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{base}/.well-known/openid-configuration"),
        ];
        let mut last = String::new();
        for url in candidates {
            let got = self
                .http
                .get(&url)
                .timeout(Duration::from_secs(10))
                .send()
                .await
                .and_then(|r| r.error_for_status());
            match got {
                Ok(r) => {
                    let meta: Value = crate::json_answers::read(r)
                        .await
                        .map_err(|e| format!("{url}: {e}"))?;
                    if let Some(j) = meta.get("jwks_uri").and_then(Value::as_str) {
                        return Ok(j.to_string());
                    }
                    last = format!("{url} names no jwks_uri");
                }
                Err(e) => last = format!("{url}: {e}"),
            }
        }
        Err(last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_from_either_claim() {
        let m = |v: Value| v.as_object().unwrap().clone();
        assert_eq!(scopes(&m(serde_json::json!({"scope": "a b"}))), ["a", "b"]);
        assert_eq!(scopes(&m(serde_json::json!({"scp": ["a"]}))), ["a"]);
        assert!(scopes(&m(serde_json::json!({}))).is_empty());
    }

    #[test]
    fn issuer_is_read_before_verification_only_to_pick_keys() {
        use base64::Engine;
        let enc = |v: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v);
        let t = format!(
            "{}.{}.sig",
            enc(r#"{"alg":"none"}"#),
            enc(r#"{"iss":"https://i"}"#)
        );
        assert_eq!(unverified_issuer(&t).as_deref(), Some("https://i"));
        assert!(
            jsonwebtoken::decode_header(&t).is_err(),
            "alg none is not an algorithm"
        );
    }
}
