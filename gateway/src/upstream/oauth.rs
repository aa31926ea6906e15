//! Tokens for upstreams behind an authorization server: the gateway's own (client credentials,
//! `oauth2` crate), one issued for the upstream in exchange for a session user's access token
//! (RFC 8693; a form POST, which `oauth2` does not offer), or the user's own token at the
//! upstream (`user_oauth`, from the credential vault). Each is fetched before connecting,
//! cached, refreshed in the background before it expires, and renewed when the upstream refuses
//! it. The host's token itself never goes upstream.

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use oauth2::basic::BasicClient;
use oauth2::{ClientId, ClientSecret, Scope, TokenResponse, TokenUrl};

use super::credentials::vault::Vault;
use super::UpstreamError;
use crate::config::{Secret, UpstreamOAuth};

/// Refresh when less than this is left of a token's life.
const REFRESH_BEFORE: Duration = Duration::from_secs(60);
/// Lifetime assumed when the server does not say (`expires_in` is optional).
const DEFAULT_LIFETIME: Duration = Duration::from_secs(300);

const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ACCESS_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:access_token";

/// Where a source's tokens come from.
enum Origin {
    /// The gateway's own client (credentials or exchange).
    Client {
        config: UpstreamOAuth,
        secret: Secret,
        /// The session user's access token to exchange (`None`: client credentials). Replaced
        /// by the newest one the host sent, so a refreshed host token keeps the exchange working.
        subject: Option<RwLock<Secret>>,
    },
    /// A holder's own connection (`user_oauth`).
    Vault {
        vault: Arc<Vault>,
        upstream: String,
        holder: String,
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

pub struct TokenSource {
    origin: Origin,
    http: reqwest::Client,
    current: RwLock<Option<(Secret, Instant)>>,
    refreshing: tokio::sync::Mutex<()>,
}

impl TokenSource {
    pub fn new(config: UpstreamOAuth, secret: Secret) -> Arc<Self> {
        Self::build(config, secret, None)
    }

    /// A source that exchanges `subject` (a user's access token) for the upstream's token.
    pub fn exchanging(config: UpstreamOAuth, secret: Secret, subject: Secret) -> Arc<Self> {
        Self::build(config, secret, Some(RwLock::new(subject)))
    }

    /// A source of `holder`'s own tokens at `upstream`.
    pub fn of_holder(vault: Arc<Vault>, upstream: &str, holder: &str) -> Arc<Self> {
        Self::with(Origin::Vault {
            vault,
            upstream: upstream.into(),
            holder: holder.into(),
        })
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
    pub async fn refused(&self, forbidden: bool, challenge: &str) -> Refusal {
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

    fn build(config: UpstreamOAuth, secret: Secret, subject: Option<RwLock<Secret>>) -> Arc<Self> {
        Self::with(Origin::Client {
            config,
            secret,
            subject,
        })
    }

    fn with(origin: Origin) -> Arc<Self> {
        Arc::new(Self {
            origin,
            http: super::credentials::flow::token_endpoint_client(),
            current: RwLock::default(),
            refreshing: tokio::sync::Mutex::new(()),
        })
    }

    /// The gateway's client settings (`None` for a holder's own tokens).
    pub fn config(&self) -> Option<&UpstreamOAuth> {
        match &self.origin {
            Origin::Client { config, .. } => Some(config),
            Origin::Vault { .. } => None,
        }
    }

    /// The cached token if it is good for a while yet.
    fn fresh(&self) -> Option<Secret> {
        let cur = self.current.read().unwrap();
        cur.as_ref()
            .filter(|(_, until)| until.saturating_duration_since(Instant::now()) > REFRESH_BEFORE)
            .map(|(t, _)| t.clone())
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
        let (token, lifetime) = match &self.origin {
            Origin::Client {
                config,
                secret,
                subject: Some(subject),
            } => {
                let subject = subject.read().unwrap().clone();
                self.exchange(config, secret, &subject).await?
            }
            Origin::Client { config, secret, .. } => {
                self.client_credentials(config, secret).await?
            }
            // Boxed: a store read and perhaps a refresh; kept out of the connect future's size.
            Origin::Vault {
                vault,
                upstream,
                holder,
            } => Box::pin(vault.token(upstream, holder)).await?,
        };
        self.keep(&token, lifetime);
        Ok(token)
    }

    fn keep(&self, token: &Secret, lifetime: Duration) {
        tracing::debug!(?lifetime, "upstream access token obtained");
        *self.current.write().unwrap() = Some((token.clone(), Instant::now() + lifetime));
    }

    /// The upstream refused the current token (401): a new one, or why there is none.
    async fn rejected(&self) -> Result<(), UpstreamError> {
        let _one = self.refreshing.lock().await;
        let stale = self.current.write().unwrap().take();
        let (token, lifetime) = match &self.origin {
            Origin::Vault {
                vault,
                upstream,
                holder,
            } => {
                let stale = stale
                    .map(|(t, _)| t.expose().to_string())
                    .unwrap_or_default();
                Box::pin(vault.renew(upstream, holder, &stale)).await?
            }
            Origin::Client { .. } => {
                drop(_one);
                return self.token().await.map(|_| ());
            }
        };
        self.keep(&token, lifetime);
        Ok(())
    }

    async fn client_credentials(
        &self,
        config: &UpstreamOAuth,
        secret: &Secret,
    ) -> Result<(Secret, Duration), UpstreamError> {
        let url = TokenUrl::new(config.token_url.clone())
            .map_err(|e| UpstreamError::Config(format!("oauth.token_url: {e}")))?;
        let client = BasicClient::new(ClientId::new(config.client_id.clone()))
            .set_client_secret(ClientSecret::new(secret.expose().to_string()))
            .set_token_uri(url);
        let mut req = client.exchange_client_credentials();
        for s in &config.scopes {
            req = req.add_scope(Scope::new(s.clone()));
        }
        if let Some(r) = &config.resource {
            req = req.add_extra_param("resource", r.clone());
        }
        let resp = req.request_async(&self.http).await.map_err(|e| {
            UpstreamError::Connect(format!("token request to {} failed: {e}", config.token_url))
        })?;
        let token = Secret::new(resp.access_token().secret().clone());
        Ok((token, resp.expires_in().unwrap_or(DEFAULT_LIFETIME)))
    }

    /// RFC 8693: the user's access token for one whose audience is the upstream.
    async fn exchange(
        &self,
        config: &UpstreamOAuth,
        secret: &Secret,
        subject: &Secret,
    ) -> Result<(Secret, Duration), UpstreamError> {
        let mut form = vec![
            ("grant_type", TOKEN_EXCHANGE.to_string()),
            ("subject_token", subject.expose().to_string()),
            ("subject_token_type", ACCESS_TOKEN_TYPE.to_string()),
            ("requested_token_type", ACCESS_TOKEN_TYPE.to_string()),
        ];
        if let Some(r) = &config.resource {
            form.push(("resource", r.clone()));
        }
        if !config.scopes.is_empty() {
            form.push(("scope", config.scopes.join(" ")));
        }
        let refused = |why: String| {
            UpstreamError::Connect(format!(
                "token exchange at {} refused: {why}",
                config.token_url
            ))
        };
        let resp = self
            .http
            .post(&config.token_url)
            .basic_auth(&config.client_id, Some(secret.expose()))
            .form(&form)
            .send()
            .await
            .map_err(|e| refused(e.without_url().to_string()))?;
        let status = resp.status();
        let body: serde_json::Value = resp.json().await.map_err(|e| refused(e.to_string()))?;
        if !status.is_success() {
            let error = body["error"].as_str().unwrap_or("unknown error");
            let detail = body["error_description"].as_str().unwrap_or("");
            return Err(refused(
                format!("{status} {error} {detail}").trim().to_string(),
            ));
        }
        let token = body["access_token"]
            .as_str()
            .ok_or_else(|| refused("no access_token in the answer".into()))?;
        let lifetime = body["expires_in"]
            .as_u64()
            .map(Duration::from_secs)
            .unwrap_or(DEFAULT_LIFETIME);
        Ok((Secret::new(token), lifetime))
    }

    /// The token for a request being sent now; a refresh starts in the background when it is
    /// about to expire (the request goes with the current one).
    pub fn header(self: &Arc<Self>) -> Option<String> {
        let (token, stale) = {
            let cur = self.current.read().unwrap();
            let (t, until) = cur.as_ref()?;
            (
                t.expose().to_string(),
                until.saturating_duration_since(Instant::now()) <= REFRESH_BEFORE,
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
        Some(format!("Bearer {token}"))
    }
}
