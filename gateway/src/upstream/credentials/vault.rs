//! Users' own tokens at `user_oauth` upstreams: sealed in the store and handed to that user's
//! connections only. Using and refreshing them is `super::renewal`'s; a connection whose
//! tokens the upstream's authorization server no longer honours is dropped there, so that the
//! user is asked to connect again.
//!
//! Connecting: a link names the upstream and the user, sealed (10 minutes). Opening it
//! discovers the upstream's authorization server, becomes its client (a client registered
//! beforehand, a client ID metadata document, else RFC 7591), and sends the browser there with
//! PKCE and `resource`. The authorization's `state` is sealed too, so the answer can come back
//! to any replica; a cookie set with the link must come back with it (a stranger's answer
//! cannot be planted in another browser).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine;
use chacha20poly1305::aead::rand_core::RngCore;
use chacha20poly1305::aead::OsRng;
use registry::{now_ms, ConnectionRecord, Registry};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::discovery::{self, Discovered};
use super::flow::{self, Client};
use super::seal::KeyRing;
use crate::audit::Auditor;
use crate::config::{Config, Secret, UpstreamSpec};
use crate::upstream::dpop::{self, DpopKey};
use crate::upstream::UpstreamError;

/// The holder whose connection the catalog is read with.
pub const CATALOG: &str = "catalog";
/// Where the authorization servers send users back.
pub const CALLBACK_PATH: &str = "/oauth/upstream/callback";
/// Where connect links lead.
pub const CONNECT_PATH: &str = "/oauth/upstream/connect";
/// The cookie that binds an authorization to the browser that started it.
pub const COOKIE: &str = "mcpgw_upstream_connect";
/// How long a connect link and an authorization in progress stay good.
pub(super) const LINK_LIFETIME_MS: i64 = 10 * 60 * 1000;
/// A token with less than this left is refreshed before use.
const REFRESH_BEFORE_MS: i64 = 60 * 1000;
/// Lifetime assumed when the server does not say (`expires_in` is optional).
const DEFAULT_LIFETIME: Duration = Duration::from_secs(3600);

/// The holder of a user's connection.
pub fn user_holder(principal_key: &str) -> String {
    format!("user:{principal_key}")
}

/// The principal key of a `user:` holder (the holder itself otherwise): whom its connection
/// was made by.
pub fn principal_of(holder: &str) -> &str {
    holder.strip_prefix("user:").unwrap_or(holder)
}

/// What is sealed for one connection (for a company sign-in, [`super::enterprise::COMPANY`]:
/// the provider's ID token in place of the access token).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Tokens {
    pub(super) access_token: String,
    pub(super) refresh_token: Option<String>,
    /// ms; `None`: the server did not say.
    pub(super) expires_at: Option<i64>,
    pub(super) issuer: String,
    pub(super) token_endpoint: String,
    pub(super) resource: String,
    pub(super) client_id: String,
    pub(super) client_secret: Option<String>,
    pub(super) auth_method: String,
    /// The key the token is bound to (DPoP), when the server bound it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) dpop_key: Option<String>,
    /// A company sign-in kept for each of its user's principal keys: the holders that keep
    /// this same sign-in (its refresh token), the first of them the one refreshed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) siblings: Vec<String>,
}

/// A holder's token as requests use it.
pub struct Access {
    pub token: Secret,
    pub lifetime: Duration,
    /// The key the token is bound to (DPoP): requests carry proofs signed with it.
    pub dpop: Option<Arc<DpopKey>>,
}

impl Tokens {
    pub(super) fn access(&self, now: i64) -> Access {
        Access {
            token: Secret::new(self.access_token.clone()),
            lifetime: self.lifetime(now),
            dpop: self.dpop(),
        }
    }

    fn dpop(&self) -> Option<Arc<DpopKey>> {
        dpop_key(self.dpop_key.as_deref())
    }

    pub(super) fn fresh(&self, now: i64) -> bool {
        self.expires_at.is_none_or(|e| e - now > REFRESH_BEFORE_MS)
    }

    fn lifetime(&self, now: i64) -> Duration {
        self.expires_at
            .map(|e| Duration::from_millis((e - now).max(0) as u64))
            .unwrap_or(DEFAULT_LIFETIME)
    }

    pub(super) fn discovered(&self) -> Discovered {
        Discovered {
            resource: self.resource.clone(),
            issuer: self.issuer.clone(),
            metadata: json!({"issuer": self.issuer, "token_endpoint": self.token_endpoint}),
            scope: None,
        }
    }

    pub(super) fn client(&self) -> Client {
        kept_client(
            &self.client_id,
            &self.client_secret,
            &self.auth_method,
            self.dpop_key.as_deref(),
        )
    }
}

/// The key a connection's tokens are bound to, from its kept secret.
fn dpop_key(secret: Option<&str>) -> Option<Arc<DpopKey>> {
    secret.and_then(DpopKey::from_secret).map(Arc::new)
}

/// The gateway's client as a connection (or an authorization in progress) keeps it.
fn kept_client(id: &str, secret: &Option<String>, method: &str, dpop: Option<&str>) -> Client {
    Client {
        client_id: id.to_string(),
        client_secret: secret.clone(),
        auth_method: method.to_string(),
        private_key: None,
        dpop: dpop_key(dpop),
    }
}

/// An authorization in progress, sealed into its `state`.
#[derive(Debug, Serialize, Deserialize)]
struct Started {
    upstream: String,
    holder: String,
    by: String,
    verifier: String,
    /// Must equal the cookie of the browser that comes back.
    nonce: String,
    expires_at: i64,
    issuer: String,
    /// The server promised `iss` in its answer (RFC 9207).
    iss_promised: bool,
    token_endpoint: String,
    resource: String,
    scope: Option<String>,
    client_id: String,
    client_secret: Option<String>,
    auth_method: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    elicitation: Option<String>,
    /// The key the tokens will be bound to, where the server takes DPoP proofs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dpop_key: Option<String>,
}

/// Connected: who, to what, and the URL elicitation that asked for it.
#[derive(Debug, Clone)]
pub struct Connected {
    pub upstream: String,
    pub holder: String,
    pub by: String,
    pub elicitation: Option<String>,
}

/// Why a connect link could not be followed.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// The store cannot be read right now: nothing was done, and the link works once it can.
    #[error("{0}")]
    StoreAway(String),
    #[error("{0}")]
    Failed(String),
}

impl From<String> for ConnectError {
    fn from(e: String) -> Self {
        ConnectError::Failed(e)
    }
}

impl From<&str> for ConnectError {
    fn from(e: &str) -> Self {
        ConnectError::Failed(e.to_string())
    }
}

/// The users' tokens at `user_oauth` upstreams.
pub struct Vault {
    pub(super) registry: Arc<dyn Registry>,
    pub(super) ring: KeyRing,
    pub(super) http: reqwest::Client,
    /// Where browsers reach the gateway (links and redirects), and whether it was taken from
    /// the listening address (which the bound port replaces: `server.listen` may say port 0).
    public_url: std::sync::RwLock<(String, bool)>,
    pub(super) env: HashMap<String, String>,
    /// Clients the gateway registered (RFC 7591), by upstream and issuer, as kept in the store.
    pub(super) registered: Mutex<HashMap<(String, String), Client>>,
    /// Upstreams and issuers whose unpinned preregistered secret was warned about (once each).
    pub(super) warned_unpinned: Mutex<std::collections::HashSet<(String, String)>>,
    /// One refresh at a time per connection.
    pub(super) refreshing: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// A larger scope an upstream asked for (403 `insufficient_scope`), by upstream and holder:
    /// the next connect link asks for it.
    step_up: Mutex<HashMap<(String, String), String>>,
    /// Upstreams that refused the DPoP scheme (they know only bearer tokens, though their
    /// authorization server binds tokens): new connections start with bearer tokens there.
    bearer_only: Mutex<std::collections::HashSet<String>>,
    audit: OnceLock<Arc<Auditor>>,
    /// The company's provider (`[auth.server.oidc]`), whose sign-ins enterprise-managed
    /// upstreams' tokens come from.
    pub(super) company: Option<crate::config::auth_server::FederationConfig>,
}

impl Vault {
    pub fn new(config: &Config, registry: Arc<dyn Registry>) -> Arc<Self> {
        Arc::new(Self {
            registry,
            ring: KeyRing::new(&config.user_credentials.keys),
            http: flow::token_endpoint_client(),
            public_url: std::sync::RwLock::new(public_url(config)),
            env: config.env.clone(),
            registered: Mutex::default(),
            warned_unpinned: Mutex::default(),
            refreshing: Mutex::default(),
            step_up: Mutex::default(),
            bearer_only: Mutex::default(),
            audit: OnceLock::new(),
            company: config
                .auth
                .server
                .as_ref()
                .and_then(|s| s.federation.clone()),
        })
    }

    /// Where browsers reach the gateway.
    pub fn public_url(&self) -> String {
        self.public_url.read().unwrap().0.clone()
    }

    /// The address the gateway listens on, once bound: the public URL when none was given.
    pub fn listening_on(&self, addr: std::net::SocketAddr) {
        let mut u = self.public_url.write().unwrap();
        if u.1 {
            u.0 = listening_url(addr);
        }
    }

    /// Where connect, refresh failure and disconnect rows go; once, at start-up.
    pub fn set_audit(&self, audit: Arc<Auditor>) {
        let _ = self.audit.set(audit);
    }

    pub(super) async fn audit(&self, principal: &str, action: &str, upstream: &str, outcome: &str) {
        if let Some(a) = self.audit.get() {
            a.record_event(principal, action, upstream, outcome).await;
        }
    }

    fn purpose(upstream: &str, holder: &str) -> String {
        format!("tokens:{upstream}/{holder}")
    }

    fn unsealed(&self, rec: &ConnectionRecord) -> Option<(Tokens, bool)> {
        let (v, current) = self
            .ring
            .open(&Self::purpose(&rec.upstream, &rec.holder), &rec.sealed)?;
        Some((serde_json::from_value(v).ok()?, current))
    }

    pub(super) fn needs_connect(upstream: &str, holder: &str) -> UpstreamError {
        UpstreamError::NeedsConnect {
            upstream: upstream.to_string(),
            holder: holder.to_string(),
        }
    }

    /// The stored tokens of a connection, `None` when there are none (or none this gateway's
    /// keys can open: the key was lost, so the user connects again).
    pub(super) async fn stored(
        &self,
        upstream: &str,
        holder: &str,
    ) -> Result<Option<(ConnectionRecord, Tokens, bool)>, UpstreamError> {
        let rec = self
            .registry
            .get_connection(upstream, holder)
            .await
            .map_err(|e| UpstreamError::Connect(format!("the credential store: {e}")))?;
        let Some(rec) = rec else { return Ok(None) };
        match self.unsealed(&rec) {
            Some((t, current)) => Ok(Some((rec, t, current))),
            None => {
                tracing::warn!(upstream, "a stored upstream connection cannot be opened with the configured keys; the user connects again");
                Ok(None)
            }
        }
    }

    pub(super) async fn save(
        &self,
        upstream: &str,
        holder: &str,
        by: &str,
        scope: &str,
        t: &Tokens,
    ) -> Result<(), UpstreamError> {
        let sealed = self
            .ring
            .seal(
                &Self::purpose(upstream, holder),
                &serde_json::to_value(t).expect("tokens are JSON"),
            )
            .ok_or_else(|| UpstreamError::Config(NO_KEY.into()))?;
        let now = now_ms();
        self.registry
            .put_connection(&ConnectionRecord {
                upstream: upstream.into(),
                holder: holder.into(),
                connected_by: by.into(),
                sealed,
                issuer: t.issuer.clone(),
                scope: scope.into(),
                created_at: now,
                updated_at: now,
                expires_at: t.expires_at,
            })
            .await
            .map_err(|e| UpstreamError::Connect(format!("the credential store: {e}")))
    }

    /// Seals again with the current key every connection sealed with a previous one (after a
    /// rotation, at start-up), so that the previous keys can be dropped. How many it sealed.
    pub async fn reseal_all(&self) -> usize {
        if self.ring.len() < 2 {
            return 0;
        }
        let all = match self.registry.list_connections(None).await {
            Ok(all) => all,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the upstream connections to seal them again");
                return 0;
            }
        };
        let mut sealed = 0;
        for rec in all {
            if let Some((t, false)) = self.unsealed(&rec) {
                let saved = self
                    .save(
                        &rec.upstream,
                        &rec.holder,
                        &rec.connected_by,
                        &rec.scope,
                        &t,
                    )
                    .await;
                sealed += usize::from(saved.is_ok());
            }
        }
        if sealed > 0 {
            tracing::info!(
                connections = sealed,
                "upstream connections sealed again with the current key"
            );
        }
        sealed
    }

    /// Remembers that `upstream` asked `holder` for more scope: the next link asks for it,
    /// with what was asked before (SEP-2350: the union, so that no earlier scope is lost).
    pub fn step_up(&self, upstream: &str, holder: &str, scope: String) {
        let mut all = self.step_up.lock().unwrap();
        let entry = all.entry((upstream.into(), holder.into())).or_default();
        *entry = union(entry, &scope);
    }

    /// Whether `upstream` takes bound tokens only as bearer tokens (as far as this process saw).
    pub fn bearer_only(&self, upstream: &str) -> bool {
        self.bearer_only.lock().unwrap().contains(upstream)
    }

    /// What `upstream`'s last refusal said of the DPoP scheme: it takes only bearer tokens
    /// (`true`), or it wants DPoP after all.
    pub fn set_bearer_only(&self, upstream: &str, only: bool) {
        let mut all = self.bearer_only.lock().unwrap();
        match only {
            true => all.insert(upstream.to_string()),
            false => all.remove(upstream),
        };
    }

    /// Seals `value` for the connect pages (`purpose` keeps one kind from passing for another).
    pub fn seal(&self, purpose: &str, value: &serde_json::Value) -> Option<String> {
        self.ring.seal(purpose, value)
    }

    /// Opens what [`seal`](Self::seal) sealed for `purpose`.
    pub fn open(&self, purpose: &str, sealed: &str) -> Option<serde_json::Value> {
        self.ring.open(purpose, sealed).map(|(v, _)| v)
    }

    /// Opens a connect link: the authorization URL to send the browser to, and the cookie
    /// value that must come back with the answer.
    pub async fn begin(
        &self,
        ticket: &str,
        spec: impl Fn(&str) -> Option<UpstreamSpec>,
    ) -> Result<(String, String), ConnectError> {
        let ticket = self.ticket(ticket)?;
        let spec = spec(&ticket.upstream)
            .ok_or_else(|| format!("there is no upstream {:?} now", ticket.upstream))?;
        let endpoint = spec.transport.endpoint().ok_or("not an http upstream")?;
        let user = endpoint
            .user_oauth
            .as_ref()
            .ok_or_else(|| format!("upstream {:?} does not use user_oauth", spec.name))?;
        let challenge = self.challenge(&endpoint.url).await;
        let mut d = discovery::discover(
            &self.http,
            &endpoint.url,
            challenge.as_deref(),
            user.issuer.as_deref(),
        )
        .await?;
        let stepped = self
            .step_up
            .lock()
            .unwrap()
            .get(&(ticket.upstream.clone(), ticket.holder.clone()))
            .cloned();
        if !user.scopes.is_empty() {
            d.scope = Some(user.scopes.join(" "));
        }
        if let Some(s) = stepped {
            // What the connection had, what discovery found, and what the upstream asked for.
            let had = match self
                .registry
                .get_connection(&ticket.upstream, &ticket.holder)
                .await
            {
                Ok(Some(rec)) => rec.scope,
                _ => String::new(),
            };
            let before = union(d.scope.as_deref().unwrap_or(""), &had);
            d.scope = Some(union(&before, &s));
        }
        let client = self.client(&spec.name, user, &d).await?;
        let (verifier, code_challenge) = flow::pkce_pair();
        let nonce = random();
        let started = Started {
            upstream: ticket.upstream,
            holder: ticket.holder,
            by: ticket.by,
            verifier,
            nonce: nonce.clone(),
            expires_at: now_ms() + LINK_LIFETIME_MS,
            issuer: d.metadata["issuer"]
                .as_str()
                .unwrap_or(&d.issuer)
                .to_string(),
            iss_promised: d.metadata["authorization_response_iss_parameter_supported"] == true,
            token_endpoint: d.metadata["token_endpoint"]
                .as_str()
                .ok_or("the authorization server has no token_endpoint")?
                .to_string(),
            resource: d.resource.clone(),
            scope: d.scope.clone(),
            client_id: client.client_id.clone(),
            client_secret: client.client_secret.clone(),
            auth_method: client.auth_method.clone(),
            elicitation: ticket.elicitation,
            dpop_key: dpop::supported(&d.metadata).then(|| DpopKey::generate().secret()),
        };
        let state = self
            .ring
            .seal("state", &serde_json::to_value(&started).expect("JSON"))
            .ok_or(NO_KEY)?;
        let url =
            flow::authorization_url(&d, &client, &self.redirect_uri(), &state, &code_challenge)?;
        Ok((url, nonce))
    }

    /// The upstream's answer to requests without a token: the `WWW-Authenticate` of the first
    /// it refuses, which may name its resource metadata and the scope it wants. Some servers
    /// let `initialize` through and refuse what follows: then `tools/list` is asked too.
    pub(super) async fn challenge(&self, url: &str) -> Option<String> {
        let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}});
        let mut session: Option<String> = None;
        for msg in [super::initialize_request(), list] {
            let (status, challenge, sid, _) =
                super::mcp(&self.http, url, None, session.as_deref(), &msg, false)
                    .await
                    .ok()?;
            if challenge.is_some() {
                return challenge;
            }
            if !(200..300).contains(&status) {
                return None;
            }
            session = sid;
        }
        None
    }

    pub(super) fn redirect_uri(&self) -> String {
        format!("{}{CALLBACK_PATH}", self.public_url())
    }

    /// The answer that came back to the callback (`query`, as sent) with the browser's
    /// `cookie`: the code redeemed, the tokens stored.
    pub async fn finish(&self, query: &str, cookie: Option<&str>) -> Result<Connected, String> {
        let answer = url::Url::parse(&format!("{}?{query}", self.redirect_uri()))
            .map_err(|e| e.to_string())?;
        let state = answer
            .query_pairs()
            .find(|(k, _)| k == "state")
            .map(|(_, v)| v.to_string())
            .ok_or("the answer has no state")?;
        let (v, _) = self
            .ring
            .open("state", &state)
            .ok_or("the answer's state is not one this gateway started")?;
        let s: Started = serde_json::from_value(v).map_err(|e| e.to_string())?;
        if s.expires_at < now_ms() {
            return Err("this authorization took too long: open the link again".into());
        }
        if cookie != Some(s.nonce.as_str()) {
            return Err(
                "this answer belongs to an authorization started in another browser".into(),
            );
        }
        let mut metadata = json!({"issuer": s.issuer, "token_endpoint": s.token_endpoint});
        if s.iss_promised {
            metadata["authorization_response_iss_parameter_supported"] = json!(true);
        }
        let d = Discovered {
            resource: s.resource.clone(),
            issuer: s.issuer.clone(),
            metadata,
            scope: s.scope.clone(),
        };
        let pending = flow::Pending {
            url: String::new(),
            state,
            verifier: s.verifier.clone(),
            redirect_uri: self.redirect_uri(),
        };
        let client = kept_client(
            &s.client_id,
            &s.client_secret,
            &s.auth_method,
            s.dpop_key.as_deref(),
        );
        let outcome = async {
            let code = flow::code_of(&d, &pending, &answer)?;
            flow::redeem(&self.http, &d, &client, &pending, &code).await
        }
        .await;
        let tokens = match outcome {
            Ok(t) => t,
            Err(e) => {
                self.audit(&s.by, "upstream.connect", &s.upstream, "error")
                    .await;
                if e.contains("\"invalid_client\"") {
                    self.forget_client(&s.upstream, &s.issuer, &s.client_id)
                        .await;
                }
                return Err(e);
            }
        };
        let now = now_ms();
        let scope = tokens.scope.clone().or(s.scope.clone()).unwrap_or_default();
        let t = Tokens {
            access_token: tokens.access_token,
            refresh_token: tokens.refresh_token,
            expires_at: tokens.expires_in.map(|e| now + e as i64 * 1000),
            issuer: s.issuer,
            token_endpoint: s.token_endpoint,
            resource: s.resource,
            client_id: s.client_id,
            client_secret: s.client_secret,
            auth_method: s.auth_method,
            // A server may answer a proof with a token it did not bind (`Bearer`).
            dpop_key: s
                .dpop_key
                .filter(|_| dpop::bound(tokens.token_type.as_deref())),
            siblings: Vec::new(),
        };
        self.save(&s.upstream, &s.holder, &s.by, &scope, &t)
            .await
            .map_err(|e| e.to_string())?;
        self.step_up
            .lock()
            .unwrap()
            .remove(&(s.upstream.clone(), s.holder.clone()));
        self.audit(&s.by, "upstream.connect", &s.upstream, "ok")
            .await;
        Ok(Connected {
            upstream: s.upstream,
            holder: s.holder,
            by: s.by,
            elicitation: s.elicitation,
        })
    }

    /// Forgets a connection (the user's or an admin's doing): whether there was one.
    pub async fn disconnect(
        &self,
        upstream: &str,
        holder: &str,
        by: &str,
    ) -> Result<bool, registry::RegistryError> {
        let existed = self.registry.delete_connection(upstream, holder).await?;
        if existed {
            self.audit(by, "upstream.disconnect", upstream, "ok").await;
        }
        Ok(existed)
    }
}

/// Two space-separated scope lists as one, each scope once, in the order first seen.
fn union(a: &str, b: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for s in a.split_whitespace().chain(b.split_whitespace()) {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out.join(" ")
}

pub(super) const NO_KEY: &str =
    "user_credentials.key is not set: users' upstream tokens cannot be sealed";

fn random() -> String {
    let mut b = [0u8; 32];
    OsRng.fill_bytes(&mut b);
    B64.encode(b)
}

/// Where browsers reach the gateway: `user_credentials.public_url`, else the authorization
/// server's issuer, else the origin of `auth.resource`, else the listening address (and
/// whether it is that).
fn public_url(config: &Config) -> (String, bool) {
    if let Some(u) = &config.user_credentials.public_url {
        return (u.clone(), false);
    }
    if let Some(s) = &config.auth.server {
        return (s.issuer.trim_end_matches('/').to_string(), false);
    }
    if let Some(origin) = config
        .auth
        .resource
        .as_deref()
        .and_then(|r| url::Url::parse(r).ok())
        .map(|u| u.origin().ascii_serialization())
    {
        return (origin, false);
    }
    (listening_url(config.server.listen), true)
}

/// `http://` and the listening address; an unspecified one is reached on loopback.
fn listening_url(listen: std::net::SocketAddr) -> String {
    let host = if listen.ip().is_unspecified() {
        "127.0.0.1".to_string()
    } else if listen.is_ipv6() {
        format!("[{}]", listen.ip())
    } else {
        listen.ip().to_string()
    };
    format!("http://{host}:{}", listen.port())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_asked_again_keep_what_was_asked_before() {
        assert_eq!(
            union("mcp:basic", "mcp:write mcp:basic"),
            "mcp:basic mcp:write"
        );
        assert_eq!(union("", "a"), "a");
        assert_eq!(union("a  b", ""), "a b");
    }

    #[test]
    fn a_bound_token_keeps_its_key_and_a_row_from_before_dpop_still_opens() {
        let key = DpopKey::generate();
        let t: Tokens = serde_json::from_value(json!({
            "access_token": "a", "refresh_token": "r", "expires_at": null,
            "issuer": "https://as", "token_endpoint": "https://as/token",
            "resource": "https://up/mcp", "client_id": "c", "client_secret": null,
            "auth_method": "none", "dpop_key": key.secret()
        }))
        .unwrap();
        let access = t.access(now_ms());
        let again = access.dpop.expect("the key");
        assert_eq!(again.secret(), key.secret());
        assert!(
            t.client().dpop.is_some(),
            "a refresh carries proofs of the same key"
        );
        // Stored before DPoP: no key, a bearer token.
        let mut old = serde_json::to_value(&t).unwrap();
        old.as_object_mut().unwrap().remove("dpop_key");
        let old: Tokens = serde_json::from_value(old).unwrap();
        assert!(old.access(now_ms()).dpop.is_none() && old.client().dpop.is_none());
    }
}
