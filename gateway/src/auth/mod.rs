//! Who is calling and what they may do. Every request to `/mcp` (and, with authentication on,
//! to the admin API) carries a bearer token: an OAuth access token from a trusted issuer
//! ([`jwt`]) or a personal access token ([`pat`]). The token becomes a [`Principal`] with the
//! [`Access`] of its roles ([`rbac`]); per-principal rate limits apply ([`limits`]).
//!
//! | module | holds |
//! |---|---|
//! | [`dpop`] | DPoP proofs of hosts whose tokens are bound to a key |
//! | [`jwt`] | JWT validation against issuers' JWKS |
//! | [`issuer_keys`] | issuers' public keys: fetched, kept, fetched again, kept while unreachable |
//! | [`pat`] | personal access tokens: format, hash, checks |
//! | [`rbac`] | roles, their patterns, the role book |
//! | [`limits`] | per-principal rate limits |
//! | [`server`] | the gateway as the OAuth authorization server of its hosts (`[auth.server]`) |
//! | [`middleware`] | the HTTP side: 401/403/429 answers, protected resource metadata |

pub mod dpop;
pub mod issuer_keys;
pub mod jwt;
pub mod limits;
pub mod middleware;
pub mod pat;
pub mod rbac;
pub mod server;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

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
    /// The resource an access token of the gateway's own authorization server is for: one
    /// virtual server's (only there), or the gateway's (everywhere). `None` for other tokens.
    pub audience: Option<String>,
    /// The key an access token is bound to (DPoP, its `cnf.jkt`): requests must prove it.
    pub bound_to: Option<String>,
    /// [`Principal::key`], built once: a request reads it three times (rate limit, session
    /// owner, audit entry).
    key: OnceLock<String>,
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
            audience: None,
            bound_to: None,
            key: OnceLock::new(),
        }
    }

    /// One string per principal: sessions belong to it, rate limits and per-session upstream
    /// connections are keyed by it, the audit log names it.
    pub fn key(&self) -> &str {
        self.key
            .get_or_init(|| Self::key_of(self.kind, self.issuer.as_deref(), &self.subject))
    }

    /// The key of a principal of `kind` (`pat`, `oauth` with its `issuer`, `anonymous`) named
    /// `subject`: what [`key`](Self::key) gives, for callers that know who without a token
    /// (the connect pages, which compare a browser's sign-in with a link's principal).
    pub fn key_of(kind: &str, issuer: Option<&str>, subject: &str) -> String {
        match (kind, issuer) {
            ("oauth", Some(iss)) => format!("oauth:{iss}#{subject}"),
            ("anonymous", _) => "anonymous".into(),
            (kind, _) => format!("{kind}:{subject}"),
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
    /// The DPoP proofs seen (each is good once).
    pub proofs: dpop::Proofs,
    registry: Arc<dyn Registry>,
    /// The principal each recently checked PAT stands for, kept while its record and the roles
    /// are the ones it was built from: building it per request (copies of the record, the
    /// roles' access, the key) cost more than checking the token.
    pat_principals: Mutex<HashMap<String, Built>>,
    /// The gateway's own authorization server, when `[auth.server]` is on.
    pub server: Option<Arc<server::AuthServer>>,
}

/// A principal and what it was built from.
struct Built {
    record: Arc<registry::TokenRecord>,
    roles_generation: u64,
    principal: Arc<Principal>,
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
        server: Option<Arc<server::AuthServer>>,
    ) -> Self {
        Self {
            server,
            anonymous: Arc::new(Principal::anonymous()),
            verifier: jwt::Verifier::new(&config, http),
            limits: limits::Limits::new(config.rate_limit),
            proofs: dpop::Proofs::default(),
            tokens: pat::TokenChecker::default(),
            config,
            roles,
            registry,
            pat_principals: Mutex::default(),
        }
    }

    pub fn required(&self) -> bool {
        self.config.mode == AuthMode::Required
    }

    /// Drops what is remembered of a token (revoked here or on another replica): its verdict
    /// and the principal built from it.
    pub fn forget_token(&self, id: &str) {
        self.tokens.forget(id);
        self.pat_principals.lock().unwrap().remove(id);
    }

    /// Drops what is remembered of a grant of the authorization server (revoked here or on
    /// another replica).
    pub fn forget_grant(&self, id: &str) {
        if let Some(s) = &self.server {
            s.grants.forget(id);
        }
    }

    /// `auth.required_scopes` are all among the token's.
    fn check_scopes(&self, claims: &Map<String, Value>) -> Result<(), AuthError> {
        let granted = jwt::scopes(claims);
        match self
            .config
            .required_scopes
            .iter()
            .all(|s| granted.contains(s))
        {
            true => Ok(()),
            false => Err(AuthError::InsufficientScope),
        }
    }

    /// The roles `auth.role_mappings` give someone with these claims (the company provider's
    /// ID token, for a federated sign-in).
    pub fn roles_for_claims(&self, claims: &Map<String, Value>) -> Vec<String> {
        let mut roles: Vec<String> = Vec::new();
        for m in &self.config.role_mappings {
            if claim_has(claims, m) && !roles.contains(&m.role) {
                roles.push(m.role.clone());
            }
        }
        roles
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
        if let Some(server) = self
            .server
            .as_ref()
            .filter(|s| server::keys::Keys::claims_issuer(token, &s.config.issuer))
        {
            // Boxed: inline, its futures (key reload, grant read) made every request's future
            // larger, with or without the authorization server.
            return Box::pin(self.principal_of_grant(server, token)).await;
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
        self.check_scopes(&claims)?;
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
            audience: None,
            bound_to: claims
                .get("cnf")
                .and_then(|c| c.get("jkt"))
                .and_then(Value::as_str)
                .map(str::to_string),
            key: OnceLock::new(),
        }))
    }

    /// The principal of an access token this gateway's authorization server issued: its
    /// signature, issuer, expiry and audience, then its grant, which must still stand.
    async fn principal_of_grant(
        &self,
        server: &server::AuthServer,
        token: &str,
    ) -> Result<Arc<Principal>, AuthError> {
        let claims = server
            .keys
            .verify(token, &server.config.issuer, self.registry.as_ref())
            .await
            .map_err(|e| match e {
                server::keys::KeyError::Invalid(m) => AuthError::InvalidToken(m),
                server::keys::KeyError::Unavailable => AuthError::Unavailable,
            })?;
        let audience = claims.get("aud").and_then(Value::as_str).unwrap_or("");
        if !server.serves(audience) {
            return Err(AuthError::InvalidToken(format!(
                "the token is for another resource ({audience})"
            )));
        }
        let gid = claims.get("gid").and_then(Value::as_str).unwrap_or("");
        let grant = server
            .grants
            .check(self.registry.as_ref(), gid)
            .await
            .map_err(|r| match r {
                server::grants::GrantRefusal::Unavailable => AuthError::Unavailable,
                server::grants::GrantRefusal::Revoked => {
                    AuthError::InvalidToken("the token's grant was revoked".into())
                }
                server::grants::GrantRefusal::Unknown => {
                    AuthError::InvalidToken("the token's grant is unknown".into())
                }
            })?;
        self.check_scopes(&claims)?;
        Ok(Arc::new(Principal {
            subject: grant.subject.clone(),
            kind: "oauth",
            issuer: Some(server.config.issuer.clone()),
            token_id: claims
                .get("jti")
                .and_then(Value::as_str)
                .map(str::to_string),
            access: self.roles.access(&grant.roles),
            roles: grant.roles.clone(),
            bearer: Some(crate::config::Secret::new(token)),
            audience: Some(audience.to_string()),
            bound_to: claims
                .get("cnf")
                .and_then(|c| c.get("jkt"))
                .and_then(Value::as_str)
                .map(str::to_string),
            key: OnceLock::new(),
        }))
    }

    async fn principal_of_pat(&self, token: &str) -> Result<Arc<Principal>, AuthError> {
        let rec = self
            .tokens
            .check(&self.registry, token)
            .await
            .map_err(|r| {
                // A token refused for good (tokens are never deleted, only revoked or expired)
                // leaves nothing behind: its verdict and principal go now, not at restart. A
                // revocation announced by the registry is forgotten before it is seen here.
                if matches!(r, pat::Refusal::Revoked | pat::Refusal::Expired) {
                    if let Some(id) = pat::id_of(token) {
                        self.forget_token(id);
                    }
                }
                match r {
                    pat::Refusal::Unknown => AuthError::InvalidToken("unknown token".into()),
                    pat::Refusal::Revoked => {
                        AuthError::InvalidToken("the token was revoked".into())
                    }
                    pat::Refusal::Expired => {
                        AuthError::InvalidToken("the token has expired".into())
                    }
                    pat::Refusal::Unavailable => AuthError::Unavailable,
                }
            })?;
        // Read before the roles are: see `RoleBook::generation`.
        let generation = self.roles.generation();
        let mut built = self.pat_principals.lock().unwrap();
        if let Some(b) = built.get(&rec.id) {
            if Arc::ptr_eq(&b.record, &rec) && b.roles_generation == generation {
                return Ok(b.principal.clone());
            }
        }
        let principal = Arc::new(Principal {
            subject: rec.owner.clone(),
            kind: "pat",
            issuer: None,
            token_id: Some(rec.id.clone()),
            access: self.roles.access(&rec.roles),
            roles: rec.roles.clone(),
            bearer: None,
            audience: None,
            bound_to: None,
            key: OnceLock::new(),
        });
        built.insert(
            rec.id.clone(),
            Built {
                record: rec,
                roles_generation: generation,
                principal: principal.clone(),
            },
        );
        Ok(principal)
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

    /// A PAT's principal is built once and shared while the token's record and the roles stay
    /// the same; a roles reload or a revocation is seen by the next request.
    #[tokio::test]
    async fn a_pat_principal_is_shared_until_its_roles_or_record_change() {
        use registry::EntryKind;
        let (auth, registry, roles, _dir) = pat_auth().await;
        let spec = |tools: &[&str]| serde_json::json!({"name": "r", "tools": tools});
        let request = pat::NewToken {
            name: "t".into(),
            owner: "ann".into(),
            roles: vec!["r".into()],
            expires_in_days: None,
        };
        let (token, rec) = pat::issue(registry.as_ref(), &request).await.unwrap();
        let allows = |p: &Principal, tool| p.access.allows(EntryKind::Tool, "up", tool);

        let first = auth.authenticate(Some(&token)).await.unwrap();
        let again = auth.authenticate(Some(&token)).await.unwrap();
        assert!(
            Arc::ptr_eq(&first, &again),
            "built once while nothing changed"
        );
        assert_eq!(first.key(), "pat:ann");
        assert!(allows(&first, "a") && !allows(&first, "b"));

        registry.put_role("r", &spec(&["b"]), "test").await.unwrap();
        roles.reload(registry.as_ref()).await.unwrap();
        let after = auth.authenticate(Some(&token)).await.unwrap();
        assert!(!Arc::ptr_eq(&first, &after), "the roles changed");
        assert!(allows(&after, "b") && !allows(&after, "a"));

        let wrong = format!("{}x", &token[..token.len() - 1]);
        assert!(auth.authenticate(Some(&wrong)).await.is_err());
        registry.revoke_token(&rec.id).await.unwrap();
        auth.forget_token(&rec.id);
        assert!(auth.pat_principals.lock().unwrap().is_empty());
        assert!(auth.authenticate(Some(&token)).await.is_err());
    }

    /// An authenticator that requires a token, with role `r` (tool `a`) in its registry; the
    /// registry and the role book behind it.
    async fn pat_auth() -> (
        Authenticator,
        Arc<dyn Registry>,
        Arc<RoleBook>,
        tempfile::TempDir,
    ) {
        let (reg, dir) = crate::testing::sqlite_registry().await;
        let registry: Arc<dyn Registry> = Arc::new(reg);
        let role = serde_json::json!({"name": "r", "tools": ["a"]});
        registry.put_role("r", &role, "test").await.unwrap();
        let roles = Arc::new(RoleBook::new());
        roles.reload(registry.as_ref()).await.unwrap();
        let auth = Authenticator::new(
            required(),
            roles.clone(),
            registry.clone(),
            reqwest::Client::new(),
            None,
        );
        (auth, registry, roles, dir)
    }

    /// Authentication required, PATs only.
    fn required() -> AuthConfig {
        AuthConfig {
            mode: AuthMode::Required,
            resource: None,
            server: None,
            issuers: Vec::new(),
            required_scopes: Vec::new(),
            role_mappings: Vec::new(),
            leeway: std::time::Duration::from_secs(30),
            jwks_ttl: std::time::Duration::from_secs(300),
            jwks_min_refresh: std::time::Duration::from_secs(10),
            rate_limit: None,
            allow_none_on_any_host: false,
        }
    }

    /// A token refused for good, expired or revoked (here seen in the database, as after
    /// missed notifications), leaves no principal behind: not kept until restart.
    #[tokio::test]
    async fn a_token_refused_for_good_leaves_no_principal_behind() {
        let (auth, registry, _roles, _dir) = pat_auth().await;
        // One that lives for half a second, one that is revoked.
        let soon = Some(registry::now_ms() + 500);
        let (expiring, expiring_id) =
            crate::testing::stored_token(registry.as_ref(), &["r"], soon).await;
        let (revoked, revoked_id) =
            crate::testing::stored_token(registry.as_ref(), &["r"], None).await;
        auth.authenticate(Some(&expiring)).await.unwrap();
        auth.authenticate(Some(&revoked)).await.unwrap();
        let kept = auth.pat_principals.lock().unwrap().len();
        assert_eq!(kept, 2, "both principals are built and kept");

        tokio::time::sleep(std::time::Duration::from_millis(600)).await;
        refused_and_forgotten(&auth, &expiring, &expiring_id, "expired").await;

        registry.revoke_token(&revoked_id).await.unwrap();
        auth.tokens.distrust_all();
        refused_and_forgotten(&auth, &revoked, &revoked_id, "revoked").await;
    }

    /// `token` is refused, saying `why`, and its principal is no longer kept.
    async fn refused_and_forgotten(auth: &Authenticator, token: &str, id: &str, why: &str) {
        let refused = auth.authenticate(Some(token)).await;
        assert!(
            matches!(&refused, Err(AuthError::InvalidToken(m)) if m.contains(why)),
            "{refused:?}"
        );
        assert!(
            !auth.pat_principals.lock().unwrap().contains_key(id),
            "the {why} token's principal is still kept"
        );
    }

    #[test]
    fn principal_keys_differ_by_kind_and_issuer() {
        assert_eq!(Principal::anonymous().key(), "anonymous");
        let of = |kind, issuer: Option<&str>| Principal {
            subject: "s".into(),
            kind,
            issuer: issuer.map(str::to_string),
            token_id: None,
            roles: Vec::new(),
            access: RoleBook::new().access(&[]),
            bearer: None,
            audience: None,
            bound_to: None,
            key: OnceLock::new(),
        };
        assert_eq!(of("oauth", Some("https://i")).key(), "oauth:https://i#s");
        assert_eq!(of("pat", None).key(), "pat:s");
    }
}
