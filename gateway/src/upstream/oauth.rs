//! OAuth client credentials for upstreams behind an authorization server (`oauth2` crate): the
//! gateway's own token for the upstream, fetched before connecting, cached, and refreshed in the
//! background before it expires. The host's token never goes upstream.

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use oauth2::basic::BasicClient;
use oauth2::{ClientId, ClientSecret, Scope, TokenResponse, TokenUrl};

use super::UpstreamError;
use crate::config::{Secret, UpstreamOAuth};

/// Refresh when less than this is left of a token's life.
const REFRESH_BEFORE: Duration = Duration::from_secs(60);
/// Lifetime assumed when the server does not say (`expires_in` is optional).
const DEFAULT_LIFETIME: Duration = Duration::from_secs(300);

pub struct TokenSource {
    config: UpstreamOAuth,
    secret: Secret,
    http: reqwest::Client,
    current: RwLock<Option<(Secret, Instant)>>,
    refreshing: tokio::sync::Mutex<()>,
}

impl TokenSource {
    pub fn new(config: UpstreamOAuth, secret: Secret) -> Arc<Self> {
        Arc::new(Self {
            config,
            secret,
            // The token endpoint must not redirect the client's credentials elsewhere.
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .connect_timeout(Duration::from_secs(10))
                .timeout(Duration::from_secs(30))
                .build()
                .expect("http client"),
            current: RwLock::default(),
            refreshing: tokio::sync::Mutex::new(()),
        })
    }

    pub fn config(&self) -> &UpstreamOAuth {
        &self.config
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
        let url = TokenUrl::new(self.config.token_url.clone())
            .map_err(|e| UpstreamError::Config(format!("oauth.token_url: {e}")))?;
        let client = BasicClient::new(ClientId::new(self.config.client_id.clone()))
            .set_client_secret(ClientSecret::new(self.secret.expose().to_string()))
            .set_token_uri(url);
        let mut req = client.exchange_client_credentials();
        for s in &self.config.scopes {
            req = req.add_scope(Scope::new(s.clone()));
        }
        if let Some(r) = &self.config.resource {
            req = req.add_extra_param("resource", r.clone());
        }
        let resp = req.request_async(&self.http).await.map_err(|e| {
            UpstreamError::Connect(format!(
                "token request to {} failed: {e}",
                self.config.token_url
            ))
        })?;
        let token = Secret::new(resp.access_token().secret().clone());
        let lifetime = resp.expires_in().unwrap_or(DEFAULT_LIFETIME);
        tracing::info!(token_url = %self.config.token_url, ?lifetime, "upstream access token obtained");
        *self.current.write().unwrap() = Some((token.clone(), Instant::now() + lifetime));
        Ok(token)
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
