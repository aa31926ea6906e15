//! Who is calling and what they may do. Every request to `/mcp` (and, with authentication on,
//! to the admin API) carries a bearer token: an OAuth access token from a trusted issuer
//! ([`jwt`]) or a personal access token ([`pat`]). The token becomes a [`Principal`] with the
//! [`Access`] of its roles ([`rbac`]); per-principal rate limits apply ([`limits`]).
//!
//! | module | holds |
//! |---|---|
//! | [`jwt`] | JWT validation against issuers' JWKS |
//! | [`pat`] | personal access tokens: format, hash, checks |
//! | [`rbac`] | roles, their patterns, the role book |
//! | [`limits`] | per-principal rate limits |
//! | [`middleware`] | the HTTP side: 401/403/429 answers, protected resource metadata |

pub mod jwt;
pub mod limits;
pub mod middleware;
pub mod pat;
pub mod rbac;

use std::borrow::Cow;
use std::sync::Arc;

use registry::Registry;
use serde_json::{Map, Value};

pub use rbac::{Access, RoleBook, RoleSpec};

use crate::config::{AuthConfig, AuthMode, RoleMapping};

/// Who is calling.
#[derive(Debug, Clone)]
pub struct Principal {
    /// `anonymous`, the token's owner (PAT) or the token's `sub` (OAuth).
    pub subject: String,
    /// `anonymous`, `pat` or `oauth`.
    pub kind: &'static str,
    /// The issuer of an OAuth principal.
    pub issuer: Option<String>,
    /// The PAT's id, or the access token's `jti`.
    pub token_id: Option<String>,
    pub roles: Vec<String>,
    pub access: Access,
    /// An OAuth principal's access token, for upstreams that exchange it for one of their own
    /// (RFC 8693); never sent anywhere as it is.
    pub bearer: Option<crate::config::Secret>,
}

impl Principal {
    /// Everyone, with every right (`auth.mode = none`).
    pub fn anonymous() -> Self {
        Self {
            subject: "anonymous".into(),
            kind: "anonymous",
            issuer: None,
            token_id: None,
            roles: Vec::new(),
            access: Access::everything(),
            bearer: None,
        }
    }

    /// One string per principal: sessions belong to it, rate limits and per-session upstream
    /// connections are keyed by it, the audit log names it.
    pub fn key(&self) -> Cow<'_, str> {
        match (self.kind, &self.issuer) {
            ("oauth", Some(iss)) => format!("oauth:{iss}#{}", self.subject).into(),
            ("anonymous", _) => "anonymous".into(),
            (kind, _) => format!("{kind}:{}", self.subject).into(),
        }
    }
}

/// Why a request was not let in.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("authorization required: send Authorization: Bearer <token>")]
    Missing,
    #[error("{0}")]
    InvalidToken(String),
    #[error("the token lacks the scope this resource requires")]
    InsufficientScope,
    #[error("this needs the admin right")]
    Forbidden,
    #[error("the token cannot be checked right now; try again later")]
    Unavailable,
    #[error("rate limit exceeded; retry after {0} s")]
    RateLimited(u64),
}

/// Authenticates requests: tokens to principals.
pub struct Authenticator {
    /// Shared by every request when authentication is off: nothing to build per request.
    anonymous: Arc<Principal>,
    pub config: AuthConfig,
    pub roles: Arc<RoleBook>,
    pub tokens: pat::TokenChecker,
    verifier: jwt::Verifier,
    pub limits: limits::Limits,
    registry: Arc<dyn Registry>,
}

/// Whether a claim holds a value: equal to it, or a list containing it; `*`: present at all.
fn claim_has(claims: &Map<String, Value>, m: &RoleMapping) -> bool {
    let Some(v) = claims.get(&m.claim) else {
        return false;
    };
    if m.value == "*" {
        return true;
    }
    match v {
        Value::String(s) => {
            s == &m.value || (m.claim == "scope" && s.split(' ').any(|p| p == m.value))
        }
        Value::Array(a) => a.iter().any(|x| x.as_str() == Some(m.value.as_str())),
        // Numbers and booleans: the mapping's value read as JSON.
        other => serde_json::from_str::<Value>(&m.value).ok().as_ref() == Some(other),
    }
}

impl Authenticator {
    pub fn new(
        config: AuthConfig,
        roles: Arc<RoleBook>,
        registry: Arc<dyn Registry>,
        http: reqwest::Client,
    ) -> Self {
        Self {
            anonymous: Arc::new(Principal::anonymous()),
            verifier: jwt::Verifier::new(&config, http),
            limits: limits::Limits::new(config.rate_limit),
            tokens: pat::TokenChecker::default(),
            config,
            roles,
            registry,
        }
    }

    pub fn required(&self) -> bool {
        self.config.mode == AuthMode::Required
    }

    /// The caller of every request when authentication is off, one for all of them.
    pub fn anonymous(&self) -> Arc<Principal> {
        self.anonymous.clone()
    }

    /// The principal a bearer token stands for (`None`: no token sent).
    pub async fn authenticate(&self, bearer: Option<&str>) -> Result<Arc<Principal>, AuthError> {
        if !self.required() {
            return Ok(self.anonymous());
        }
        let token = bearer.ok_or(AuthError::Missing)?;
        if token.starts_with(pat::PREFIX) {
            return self.principal_of_pat(token).await;
        }
        if !self.verifier.has_issuers() {
            return Err(AuthError::InvalidToken(
                "not a personal access token (no OAuth issuer is configured)".into(),
            ));
        }
        let (claims, issuer) = self.verifier.verify(token).await.map_err(|e| match e {
            jwt::TokenError::Invalid(m) => AuthError::InvalidToken(m),
            jwt::TokenError::KeysUnavailable => AuthError::Unavailable,
        })?;
        let granted = jwt::scopes(&claims);
        if !self
            .config
            .required_scopes
            .iter()
            .all(|s| granted.contains(s))
        {
            return Err(AuthError::InsufficientScope);
        }
        let mut roles = issuer.roles.clone();
        for m in &self.config.role_mappings {
            if claim_has(&claims, m) && !roles.contains(&m.role) {
                roles.push(m.role.clone());
            }
        }
        let subject = claims
            .get("sub")
            .or_else(|| claims.get("client_id"))
            .and_then(Value::as_str)
            .ok_or_else(|| AuthError::InvalidToken("the token has no sub claim".into()))?
            .to_string();
        Ok(Arc::new(Principal {
            subject,
            kind: "oauth",
            issuer: Some(issuer.issuer.clone()),
            token_id: claims
                .get("jti")
                .and_then(Value::as_str)
                .map(str::to_string),
            access: self.roles.access(&roles),
            roles,
            bearer: Some(crate::config::Secret::new(token)),
        }))
    }

    async fn principal_of_pat(&self, token: &str) -> Result<Arc<Principal>, AuthError> {
        let rec = self
            .tokens
            .check(&self.registry, token)
            .await
            .map_err(|r| match r {
                pat::Refusal::Unknown => AuthError::InvalidToken("unknown token".into()),
                pat::Refusal::Revoked => AuthError::InvalidToken("the token was revoked".into()),
                pat::Refusal::Expired => AuthError::InvalidToken("the token has expired".into()),
                pat::Refusal::Unavailable => AuthError::Unavailable,
            })?;
        Ok(Arc::new(Principal {
            subject: rec.owner,
            kind: "pat",
            issuer: None,
            token_id: Some(rec.id),
            access: self.roles.access(&rec.roles),
            roles: rec.roles,
            bearer: None,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claim_mappings() {
        let claims =
            serde_json::json!({"groups": ["eng", "ops"], "client_id": "ci", "scope": "mcp admin"});
        let claims = claims.as_object().unwrap();
        let m = |claim: &str, value: &str| RoleMapping {
            claim: claim.into(),
            value: value.into(),
            role: "r".into(),
        };
        assert!(claim_has(claims, &m("groups", "eng")));
        assert!(!claim_has(claims, &m("groups", "en")));
        assert!(claim_has(claims, &m("client_id", "ci")));
        assert!(claim_has(claims, &m("scope", "admin")));
        assert!(claim_has(claims, &m("groups", "*")));
        assert!(!claim_has(claims, &m("missing", "*")));
    }

    #[test]
    fn principal_keys_differ_by_kind_and_issuer() {
        let mut p = Principal::anonymous();
        assert_eq!(p.key(), "anonymous");
        p.kind = "oauth";
        p.subject = "s".into();
        p.issuer = Some("https://i".into());
        assert_eq!(p.key(), "oauth:https://i#s");
        p.kind = "pat";
        assert_eq!(p.key(), "pat:s");
    }
}
