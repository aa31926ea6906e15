//! Tokens for upstreams behind an authorization server: the gateway's own (client credentials),
//! one issued for the upstream in exchange for a session user's access token (RFC 8693), or the
//! user's own token at the upstream (`user_oauth`, from the credential vault). The gateway's
//! client finds the token endpoint the MCP authorization spec's way when the config names none,
//! and authenticates with a secret or a signed assertion (`private_key_jwt`), or presents its
//! platform's workload token as the grant (RFC 7523 JWT bearer). Each token is
//! fetched before connecting, cached, refreshed in the background before it expires, and renewed
//! when the upstream refuses it. A token bound to a key (DPoP, [`super::dpop`]) goes with a fresh
//! proof on every request. The host's token itself never goes upstream.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use serde_json::json;

use super::assertion::SigningKey;
use super::credentials::discovery::{self, Discovered};
use super::credentials::flow::{self, ACCESS_TOKEN_TYPE, JWT_BEARER, TOKEN_EXCHANGE};
use super::credentials::managed::Managed;
use super::credentials::vault::{Access, Vault};
use super::dpop::{self, DpopKey};
use super::UpstreamError;
use crate::config::{Secret, UpstreamOAuth, UpstreamSpec, ValueSource};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, AUTHORIZATION};

/// Refresh when less than this is left of a token's life.
const REFRESH_BEFORE: Duration = Duration::from_secs(60);
/// Lifetime assumed when the server does not say (`expires_in` is optional).
const DEFAULT_LIFETIME: Duration = Duration::from_secs(300);

/// How the gateway's client proves itself at the token endpoint.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientAuth {
    /// `oauth.client_secret`: `client_secret_basic`, or `client_secret_post` where the server
    /// supports only that.
    Secret(Secret),
    /// `oauth.private_key`: `private_key_jwt`. Boxed: a parsed key is large.
    Key(Box<SigningKey>),
    /// `oauth.workload_token`: the platform's JWT is the grant (RFC 7523 §2.1); the client
    /// authenticates with nothing else.
    Workload(WorkloadToken),
}

impl ClientAuth {
    /// How the client of `o` authenticates, its references resolved in `env`: a private key is
    /// read, and checked against its algorithm, here; a workload token file at each request.
    pub fn of(o: &UpstreamOAuth, env: &HashMap<String, String>) -> Result<Self, UpstreamError> {
        let config = |field: &str, e: String| UpstreamError::Config(format!("oauth.{field}: {e}"));
        match (&o.workload_token, &o.client_secret, &o.private_key) {
            (Some(ValueSource::File { file }), ..) => {
                Ok(Self::Workload(WorkloadToken::File(file.clone())))
            }
            (Some(t), ..) => t
                .resolve(env)
                .map(|t| Self::Workload(WorkloadToken::Fixed(t)))
                .map_err(|e| config("workload_token", e)),
            (None, Some(s), _) => s
                .resolve(env)
                .map(Self::Secret)
                .map_err(|e| config("client_secret", e)),
            (None, None, Some(k)) => {
                let pem = k.resolve(env).map_err(|e| config("private_key", e))?;
                SigningKey::from_pem(pem.expose(), o.private_key_algorithm.as_deref())
                    .map(|k| Self::Key(Box::new(k)))
                    .map_err(|e| config("private_key", e))
            }
            (None, None, None) => Err(UpstreamError::Config(
                "oauth needs a client_secret, a private_key or a workload_token".into(),
            )),
        }
    }
}

/// Where the workload's JWT is.
#[derive(Debug, Clone, PartialEq)]
pub enum WorkloadToken {
    /// Given once (an environment variable).
    Fixed(Secret),
    /// A file the platform rewrites as the token rotates: read at each token request.
    File(String),
}

impl WorkloadToken {
    fn read(&self) -> Result<String, UpstreamError> {
        match self {
            WorkloadToken::Fixed(t) => Ok(t.expose().to_string()),
            WorkloadToken::File(path) => std::fs::read_to_string(path)
                .map(|t| t.trim().to_string())
                .map_err(|e| {
                    UpstreamError::Config(format!("oauth.workload_token: cannot read {path}: {e}"))
                }),
        }
    }
}

/// Where a source's tokens come from.
enum Origin {
    /// The gateway's own client (credentials or exchange).
    Client {
        /// Boxed: the settings are large beside the other origin.
        config: Box<UpstreamOAuth>,
        auth: ClientAuth,
        /// The upstream's URL: its authorization server is found from it when the config
        /// names no token endpoint.
        server: String,
        /// The session user's access token to exchange (`None`: client credentials). Replaced
        /// by the newest one the host sent, so a refreshed host token keeps the exchange working.
        subject: Option<RwLock<Secret>>,
    },
    /// A holder's own connection (`user_oauth`).
    Vault {
        vault: Arc<Vault>,
        upstream: String,
        holder: String,
        /// The upstream's URL and pinned issuer: a stored token for another server, or from
        /// another authorization server than the pinned one, is not sent to it.
        server: discovery::Server,
        /// At an enterprise-managed upstream: where tokens come from when there are none.
        managed: Option<Arc<Managed>>,
    },
}

/// What an upstream's refusal (401, 403) of a token came to.
pub enum Refusal {
    /// A new token: the request may go again.
    Renewed,
    /// The holder must connect (again): why.
    NeedsConnect(&'static str),
    /// No new token: why.
    Failed(String),
    /// Not about the token: an ordinary refusal.
    NotAboutTheToken,
}

/// The token requests go with now: until when, and the key it is bound to (DPoP), kept
/// together so that a request never pairs one token with another's key.
struct Current {
    token: Secret,
    until: Instant,
    dpop: Option<Arc<DpopKey>>,
}

pub struct TokenSource {
    origin: Origin,
    http: reqwest::Client,
    current: RwLock<Option<Current>>,
    /// The upstream's last DPoP nonce.
    nonce: RwLock<Option<String>>,
    /// The upstream refused the DPoP scheme with a bearer-only challenge: it knows no DPoP
    /// (its authorization server does), and takes the bound token as a bearer token.
    bearer_only: AtomicBool,
    refreshing: tokio::sync::Mutex<()>,
    /// The gateway's client at its token endpoint, once found. A refused token request
    /// forgets a discovered one, so that an authorization server that moved is found again.
    endpoint: RwLock<Option<Arc<(Discovered, flow::Client)>>>,
}

impl TokenSource {
    /// The gateway's own client at the authorization server of the upstream at `server`.
    pub fn new(config: UpstreamOAuth, auth: ClientAuth, server: &str) -> Arc<Self> {
        Self::build(config, auth, server, None)
    }

    /// A source that exchanges `subject` (a user's access token) for the upstream's token.
    pub fn exchanging(
        config: UpstreamOAuth,
        auth: ClientAuth,
        server: &str,
        subject: Secret,
    ) -> Arc<Self> {
        Self::build(config, auth, server, Some(RwLock::new(subject)))
    }

    /// A source of `holder`'s own tokens at `upstream` (`spec`'s name): at an enterprise-managed
    /// upstream, from their company sign-in when they have none there.
    pub fn of_holder(vault: Arc<Vault>, spec: &UpstreamSpec, holder: &str) -> Arc<Self> {
        let upstream = spec.name.as_str();
        let bearer_only = vault.bearer_only(upstream);
        let source = Self::with(Origin::Vault {
            vault,
            upstream: upstream.into(),
            holder: holder.into(),
            server: spec
                .transport
                .endpoint()
                .map(|e| discovery::Server {
                    url: e.url.clone(),
                    issuer: e.user_oauth.as_ref().and_then(|u| u.issuer.clone()),
                })
                .unwrap_or_default(),
            managed: Managed::of(spec),
        });
        source.bearer_only.store(bearer_only, Relaxed);
        source
    }

    /// Keeps the newest access token of the session's user for the next exchange.
    pub fn set_subject(&self, token: &Secret) {
        if let Origin::Client {
            subject: Some(s), ..
        } = &self.origin
        {
            if s.read().unwrap().expose() != token.expose() {
                *s.write().unwrap() = token.clone();
            }
        }
    }

    /// The upstream asked for `scope` (403 `insufficient_scope`): whether the holder can be
    /// asked to connect again for it (only a holder's own tokens can).
    fn wants_scope(&self, scope: Option<String>) -> bool {
        match &self.origin {
            Origin::Vault {
                vault,
                upstream,
                holder,
                ..
            } => {
                if let Some(s) = scope {
                    vault.step_up(upstream, holder, s);
                }
                true
            }
            Origin::Client { .. } => false,
        }
    }

    /// The upstream refused the current token (`forbidden`: 403, else 401) with `challenge`
    /// (its `WWW-Authenticate`). A 401: a new token. A 403 `insufficient_scope` of a holder's
    /// own token: they connect again for the scope asked for.
    pub async fn refused(&self, forbidden: bool, challenge: &str, nonce: Option<&str>) -> Refusal {
        let bound = self
            .current
            .read()
            .unwrap()
            .as_ref()
            .is_some_and(|c| c.dpop.is_some());
        // A server that wants its nonce in the proofs (RFC 9449 §9): the same token, once more.
        if let Some(n) =
            nonce.filter(|_| !forbidden && bound && challenge.contains("use_dpop_nonce"))
        {
            *self.nonce.write().unwrap() = Some(n.to_string());
            return Refusal::Renewed;
        }
        // A server that knows only bearer tokens, behind an authorization server that binds
        // them: the same token, once more, as a bearer token (from now on, for every
        // connection to it); and back to DPoP when it asks for DPoP after all.
        let wants_dpop = challenge.to_ascii_lowercase().contains("dpop");
        let bearer_challenge = !challenge.is_empty() && !wants_dpop;
        let switch =
            bearer_challenge != self.bearer_only.load(Relaxed) && (bearer_challenge || wants_dpop);
        if !forbidden && bound && switch {
            self.bearer_only.store(bearer_challenge, Relaxed);
            if let Origin::Vault {
                vault, upstream, ..
            } = &self.origin
            {
                vault.set_bearer_only(upstream, bearer_challenge);
            }
            match bearer_challenge {
                true => tracing::info!(
                    "the upstream takes no DPoP proofs; its token goes as a bearer token"
                ),
                false => tracing::info!("the upstream asks for DPoP proofs again"),
            }
            return Refusal::Renewed;
        }
        if forbidden {
            let scope = super::credentials::discovery::challenge_param(challenge, "scope");
            return match challenge.contains("insufficient_scope") && self.wants_scope(scope) {
                true => Refusal::NeedsConnect("the upstream asks for more scope"),
                false => Refusal::NotAboutTheToken,
            };
        }
        match self.rejected().await {
            Ok(()) => Refusal::Renewed,
            Err(UpstreamError::NeedsConnect { .. }) => {
                Refusal::NeedsConnect("the upstream refused the user's token")
            }
            Err(e) => Refusal::Failed(format!(
                "the upstream refused its token, and no new one: {e}"
            )),
        }
    }

    /// The holder whose own tokens these are (`user_oauth`).
    pub fn holder(&self) -> Option<&str> {
        match &self.origin {
            Origin::Vault { holder, .. } => Some(holder),
            Origin::Client { .. } => None,
        }
    }

    fn build(
        config: UpstreamOAuth,
        auth: ClientAuth,
        server: &str,
        subject: Option<RwLock<Secret>>,
    ) -> Arc<Self> {
        Self::with(Origin::Client {
            config: Box::new(config),
            auth,
            server: server.to_string(),
            subject,
        })
    }

    fn with(origin: Origin) -> Arc<Self> {
        Arc::new(Self {
            origin,
            http: flow::token_endpoint_client(),
            current: RwLock::default(),
            nonce: RwLock::default(),
            bearer_only: AtomicBool::new(false),
            refreshing: tokio::sync::Mutex::new(()),
            endpoint: RwLock::default(),
        })
    }

    /// Whether this is the gateway's client with the settings `config` for the upstream at
    /// `url` (else a new source replaces it: the endpoint it found may be another's).
    pub fn serves(&self, config: &UpstreamOAuth, url: &str) -> bool {
        match &self.origin {
            Origin::Client {
                config: c, server, ..
            } => **c == *config && server == url,
            Origin::Vault { .. } => false,
        }
    }

    /// The token endpoint and the client's authentication there: the config's `token_url`
    /// (whose URL is then the assertions' audience), else the one the upstream's resource
    /// metadata leads to, with the authentication its server supports.
    async fn endpoint(
        &self,
        config: &UpstreamOAuth,
        auth: &ClientAuth,
        server: &str,
    ) -> Result<Arc<(Discovered, flow::Client)>, UpstreamError> {
        if let Some(known) = self.endpoint.read().unwrap().clone() {
            return Ok(known);
        }
        // Callers hold `refreshing`: one discovery at a time.
        let found = Arc::new({
            let d = match &config.token_url {
                Some(url) => Discovered {
                    resource: config.resource.clone().unwrap_or_default(),
                    issuer: url.clone(),
                    metadata: json!({ "token_endpoint": url }),
                    scope: None,
                },
                None => discovery::discover(&self.http, server, None, config.issuer.as_deref())
                    .await
                    .map_err(|e| {
                        UpstreamError::Connect(format!(
                            "no token endpoint for oauth.client_id {}: {e}",
                            config.client_id
                        ))
                    })?,
            };
            if config.secret_unpinned() {
                tracing::warn!(
                    server,
                    issuer = %d.issuer,
                    "oauth.client_secret goes to the authorization server the upstream's metadata \
                     names; set oauth.issuer (or token_url) so that no other server can collect it"
                );
            }
            let mut client = match auth {
                ClientAuth::Secret(secret) => {
                    flow::preregistered(&d, &config.client_id, Some(secret.expose()))
                }
                ClientAuth::Key(key) => flow::Client {
                    auth_method: "private_key_jwt".into(),
                    private_key: Some(SigningKey::clone(key)),
                    ..flow::preregistered(&d, &config.client_id, None)
                },
                // No secret: `none` whatever the server lists; the grant is the credential.
                ClientAuth::Workload(_) => flow::preregistered(&d, &config.client_id, None),
            };
            // A server found through the upstream's metadata that takes ES256 proofs binds the
            // gateway's tokens to a key of this source's (DPoP).
            if config.token_url.is_none() && dpop::supported(&d.metadata) {
                client.dpop = Some(Arc::new(DpopKey::generate()));
            }
            (d, client)
        });
        *self.endpoint.write().unwrap() = Some(found.clone());
        Ok(found)
    }

    /// A token request of the gateway's client: `form` with the resource (the config's, else
    /// the one the upstream's metadata names) and the scope (the config's, else the metadata's).
    async fn client_request(
        &self,
        config: &UpstreamOAuth,
        auth: &ClientAuth,
        server: &str,
        mut form: Vec<(&'static str, String)>,
    ) -> Result<Access, UpstreamError> {
        let endpoint = self.endpoint(config, auth, server).await?;
        let (d, client) = &*endpoint;
        let discovered = config.token_url.is_none();
        let resource = config
            .resource
            .clone()
            .or_else(|| discovered.then(|| d.resource.clone()));
        if let Some(r) = resource {
            form.push(("resource", r));
        }
        let scope = match config.scopes.is_empty() {
            false => Some(config.scopes.join(" ")),
            true => d.scope.clone().filter(|_| discovered),
        };
        if let Some(s) = scope {
            form.push(("scope", s));
        }
        let grant = match form[0].1.as_str() {
            TOKEN_EXCHANGE => "token exchange",
            JWT_BEARER => "workload token",
            _ => "client credentials",
        };
        let tokens = flow::token_request(&self.http, d, client, form)
            .await
            .map_err(|e| {
                if discovered {
                    *self.endpoint.write().unwrap() = None;
                }
                UpstreamError::Connect(format!(
                    "token request ({grant}) to {} refused: {e}",
                    d.metadata["token_endpoint"].as_str().unwrap_or_default()
                ))
            })?;
        let lifetime = tokens
            .expires_in
            .map(Duration::from_secs)
            .unwrap_or(DEFAULT_LIFETIME);
        Ok(Access {
            dpop: client
                .dpop
                .clone()
                .filter(|_| dpop::bound(tokens.token_type.as_deref())),
            token: Secret::new(tokens.access_token),
            lifetime,
        })
    }

    /// The cached token if it is good for a while yet.
    fn fresh(&self) -> Option<Secret> {
        let cur = self.current.read().unwrap();
        cur.as_ref()
            .filter(|c| c.until.saturating_duration_since(Instant::now()) > REFRESH_BEFORE)
            .map(|c| c.token.clone())
    }

    /// A valid token, fetched if the cached one is missing or about to expire.
    pub async fn token(&self) -> Result<Secret, UpstreamError> {
        if let Some(t) = self.fresh() {
            return Ok(t);
        }
        let _one = self.refreshing.lock().await;
        if let Some(t) = self.fresh() {
            return Ok(t);
        }
        let access = match &self.origin {
            Origin::Client {
                config,
                auth,
                server,
                subject,
            } => {
                let mut form = Vec::new();
                if let Some(subject) = subject {
                    let subject = subject.read().unwrap().expose().to_string();
                    form.push(("grant_type", TOKEN_EXCHANGE.to_string()));
                    form.push(("subject_token", subject));
                    form.push(("subject_token_type", ACCESS_TOKEN_TYPE.to_string()));
                    form.push(("requested_token_type", ACCESS_TOKEN_TYPE.to_string()));
                } else if let ClientAuth::Workload(token) = auth {
                    form.push(("grant_type", JWT_BEARER.to_string()));
                    form.push(("assertion", token.read()?));
                } else {
                    form.push(("grant_type", "client_credentials".to_string()));
                }
                self.client_request(config, auth, server, form).await?
            }
            // Boxed: a store read and perhaps a refresh; kept out of the connect future's size.
            Origin::Vault {
                vault,
                upstream,
                holder,
                server,
                managed,
            } => Box::pin(vault.token(upstream, holder, server, managed.as_deref())).await?,
        };
        let token = access.token.clone();
        self.keep(access);
        Ok(token)
    }

    fn keep(&self, access: Access) {
        tracing::debug!(lifetime = ?access.lifetime, dpop = access.dpop.is_some(), "upstream access token obtained");
        *self.current.write().unwrap() = Some(Current {
            token: access.token,
            until: Instant::now() + access.lifetime,
            dpop: access.dpop,
        });
    }

    /// The upstream refused the current token (401): a new one, or why there is none.
    async fn rejected(&self) -> Result<(), UpstreamError> {
        let _one = self.refreshing.lock().await;
        let stale = self.current.write().unwrap().take();
        let access = match &self.origin {
            Origin::Vault {
                vault,
                upstream,
                holder,
                server,
                managed,
            } => {
                let token = stale
                    .as_ref()
                    .map(|c| c.token.expose().to_string())
                    .unwrap_or_default();
                match Box::pin(vault.renew(upstream, holder, server, &token, managed.as_deref()))
                    .await
                {
                    Ok(access) => access,
                    Err(e) => {
                        // Kept, so that the next refusal names it as stale again and the
                        // renewal is tried again (the provider may be back), rather than the
                        // stored token, still unexpired, being taken as a new one.
                        let mut current = self.current.write().unwrap();
                        if current.is_none() {
                            *current = stale;
                        }
                        return Err(e);
                    }
                }
            }
            Origin::Client { .. } => {
                drop(_one);
                return self.token().await.map(|_| ());
            }
        };
        self.keep(access);
        Ok(())
    }

    /// Authorizes a request being sent now (`htm` to `url`): `Authorization: Bearer`, or for a
    /// token bound to a key, `Authorization: DPoP` with a fresh proof. A refresh starts in the
    /// background when the token is about to expire (the request goes with the current one).
    pub fn authorize(self: &Arc<Self>, h: &mut HeaderMap, htm: &str, url: &str) {
        let (token, stale, key) = {
            let cur = self.current.read().unwrap();
            let Some(c) = cur.as_ref() else {
                return;
            };
            (
                c.token.expose().to_string(),
                c.until.saturating_duration_since(Instant::now()) <= REFRESH_BEFORE,
                c.dpop.clone(),
            )
        };
        if stale {
            let me = self.clone();
            tokio::spawn(async move {
                if let Err(e) = me.token().await {
                    tracing::warn!(error = %e, "upstream token refresh failed");
                }
            });
        }
        let (scheme, proof) = match key.filter(|_| !self.bearer_only.load(Relaxed)) {
            None => ("Bearer", None),
            Some(k) => {
                let nonce = self.nonce.read().unwrap().clone();
                let proof = k.proof(htm, &dpop::htu(url), Some(&token), nonce.as_deref());
                ("DPoP", HeaderValue::from_str(&proof).ok())
            }
        };
        if let Ok(v) = HeaderValue::from_str(&format!("{scheme} {token}")) {
            h.insert(AUTHORIZATION, v);
        }
        if let Some(p) = proof {
            h.insert(HeaderName::from_static("dpop"), p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workload_token_file_is_read_again_at_each_request() {
        let dir = std::env::temp_dir().join(format!("mcpgw-wif-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("token");
        std::fs::write(&path, "first.jwt\n").unwrap();
        let token = WorkloadToken::File(path.display().to_string());
        assert_eq!(token.read().unwrap(), "first.jwt");
        // The platform rotates the token in place.
        std::fs::write(&path, "second.jwt").unwrap();
        assert_eq!(token.read().unwrap(), "second.jwt");
        std::fs::remove_file(&path).unwrap();
        let e = token.read().unwrap_err().to_string();
        assert!(e.contains("oauth.workload_token"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A stand-in for an upstream and its authorization server on one port: resource metadata
    /// naming it, its metadata (counted), and a token endpoint that refuses the first request.
    async fn moving_server() -> (String, Arc<std::sync::atomic::AtomicUsize>) {
        use axum::routing::{get, post};
        use std::sync::atomic::{AtomicUsize, Ordering};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let lookups = Arc::new(AtomicUsize::new(0));
        let tokens = Arc::new(AtomicUsize::new(0));
        let (b1, b2, seen) = (base.clone(), base.clone(), lookups.clone());
        let app = axum::Router::new()
            .route(
                "/.well-known/oauth-protected-resource/mcp",
                get(move || async move {
                    axum::Json(json!({"resource": format!("{b1}/mcp"),
                                      "authorization_servers": [b1]}))
                }),
            )
            .route(
                "/.well-known/oauth-authorization-server",
                get(move || async move {
                    seen.fetch_add(1, Ordering::SeqCst);
                    axum::Json(json!({"issuer": b2, "token_endpoint": format!("{b2}/token")}))
                }),
            )
            .route(
                "/token",
                post(move || async move {
                    match tokens.fetch_add(1, Ordering::SeqCst) {
                        0 => (
                            axum::http::StatusCode::BAD_REQUEST,
                            axum::Json(json!({"error": "invalid_client"})),
                        ),
                        _ => (
                            axum::http::StatusCode::OK,
                            axum::Json(json!({"access_token": "t", "token_type": "Bearer"})),
                        ),
                    }
                }),
            );
        tokio::spawn(async move { axum::serve(listener, app).await });
        (base, lookups)
    }

    #[tokio::test]
    async fn a_refused_token_request_forgets_the_endpoint_it_found() {
        let (base, lookups) = moving_server().await;
        let config: UpstreamOAuth =
            serde_json::from_value(json!({"client_id": "gw", "client_secret": {"env": "S"}}))
                .unwrap();
        let auth = ClientAuth::Secret(Secret::new("s"));
        let source = TokenSource::new(config, auth, &format!("{base}/mcp"));
        let e = source.token().await.unwrap_err().to_string();
        assert!(e.contains("refused") && e.contains("invalid_client"), "{e}");
        assert_eq!(source.token().await.unwrap().expose(), "t");
        // Found again after the refusal, then kept.
        assert_eq!(lookups.load(std::sync::atomic::Ordering::SeqCst), 2);
        source.rejected().await.unwrap();
        assert_eq!(lookups.load(std::sync::atomic::Ordering::SeqCst), 2);
    }

    #[test]
    fn the_credential_a_client_has_decides_how_it_authenticates() {
        let o = |v: serde_json::Value| -> UpstreamOAuth { serde_json::from_value(v).unwrap() };
        let env = HashMap::from([("T".to_string(), "tok".to_string())]);
        let auth = |v| ClientAuth::of(&o(v), &env);
        assert!(matches!(
            auth(serde_json::json!({"client_id": "c", "workload_token": {"file": "/t"}})),
            Ok(ClientAuth::Workload(WorkloadToken::File(f))) if f == "/t"
        ));
        assert!(matches!(
            auth(serde_json::json!({"client_id": "c", "workload_token": {"env": "T"}})),
            Ok(ClientAuth::Workload(WorkloadToken::Fixed(t))) if t.expose() == "tok"
        ));
        assert!(matches!(
            auth(serde_json::json!({"client_id": "c", "client_secret": {"env": "T"}})),
            Ok(ClientAuth::Secret(_))
        ));
        let e = auth(serde_json::json!({"client_id": "c", "client_secret": {"env": "NONE"}}));
        assert!(matches!(e, Err(UpstreamError::Config(m)) if m.contains("oauth.client_secret")));
    }
}
