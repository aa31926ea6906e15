//! The gateway's own registrations (RFC 7591) at upstreams' authorization servers, for users'
//! connections: which client the gateway is at a server (one registered beforehand, its client
//! ID metadata document, else a registration), and registrations kept in the store, sealed,
//! one per upstream and issuer for every replica and restart, forgotten when the server no
//! longer knows them.

use registry::now_ms;
use serde_json::json;

use super::discovery::Discovered;
use super::flow::{self, Client};
use super::vault::{ConnectError, Vault};
use crate::config::UserOAuth;

/// What a kept registration is sealed for.
const CLIENT_PURPOSE: &str = "upstream-client";

impl Vault {
    /// The gateway as a client of the upstream's authorization server.
    pub(super) async fn client(
        &self,
        upstream: &str,
        user: &UserOAuth,
        d: &Discovered,
    ) -> Result<Client, ConnectError> {
        if let Some(id) = &user.client_id {
            let secret = match &user.client_secret {
                Some(s) => Some(
                    s.resolve(&self.env)
                        .map_err(|e| format!("user_oauth.client_secret: {e}"))?,
                ),
                None => None,
            };
            let first = || {
                let key = (upstream.to_string(), d.issuer.clone());
                self.warned_unpinned.lock().unwrap().insert(key)
            };
            if user.secret_unpinned() && first() {
                tracing::warn!(
                    upstream,
                    issuer = %d.issuer,
                    "user_oauth.client_secret goes to the authorization server the upstream's \
                     metadata names; set user_oauth.issuer so that no other server can collect it"
                );
            }
            return Ok(flow::preregistered(
                d,
                id,
                secret.as_ref().map(|s| s.expose()),
            ));
        }
        if let Some(url) = &user.client_metadata_url {
            if d.metadata["client_id_metadata_document_supported"] == true {
                return Ok(flow::preregistered(d, url, None));
            }
        }
        let key = (upstream.to_string(), d.issuer.clone());
        if let Some(c) = self.registered.lock().unwrap().get(&key) {
            return Ok(c.clone());
        }
        // A registration kept in a store that cannot be read now may well exist: registering
        // again would leave one more client at the provider, kept in this process alone.
        if let Some(c) = self
            .stored_client(upstream, &d.issuer)
            .await
            .map_err(ConnectError::StoreAway)?
        {
            self.registered.lock().unwrap().insert(key, c.clone());
            return Ok(c);
        }
        if !d.metadata["registration_endpoint"].is_string() {
            return Err(ConnectError::Failed(format!(
                "the authorization server of {upstream} offers no registration and no client \
                 is configured: set user_oauth.client_id (and client_secret)"
            )));
        }
        let mut c = flow::register(&self.http, d, &self.redirect_uri()).await?;
        tracing::info!(upstream, issuer = %d.issuer, client_id = %c.client_id, "registered at the upstream's authorization server");
        // Kept for every replica and restart; when another replica registered at the same
        // time, its registration is the one kept, and this one goes unused.
        let sealed = self.ring.seal(
            CLIENT_PURPOSE,
            &json!({"id": c.client_id, "secret": c.client_secret, "method": c.auth_method}),
        );
        if let Some(sealed) = sealed {
            match self
                .registry
                .keep_upstream_client(upstream, &d.issuer, &sealed, now_ms())
                .await
            {
                Ok(kept) => c = self.open_client(&kept).unwrap_or(c),
                Err(e) => {
                    tracing::warn!(error = %e, upstream, "cannot keep a registration; this process uses it alone")
                }
            }
        }
        self.registered.lock().unwrap().insert(key, c.clone());
        Ok(c)
    }

    /// The registration kept in the store for `upstream` at `issuer`; one that no key opens
    /// any more is forgotten (the next connect registers again). An error when the store
    /// cannot be read.
    async fn stored_client(&self, upstream: &str, issuer: &str) -> Result<Option<Client>, String> {
        let sealed = match self.registry.get_upstream_client(upstream, issuer).await {
            Ok(Some(s)) => s,
            Ok(None) => return Ok(None),
            Err(e) => {
                tracing::warn!(error = %e, upstream, "cannot read the kept registration");
                return Err(format!(
                    "the gateway cannot read its registration at the authorization server of \
                     {upstream} right now; try again shortly"
                ));
            }
        };
        let c = self.open_client(&sealed);
        if c.is_none() {
            tracing::warn!(
                upstream,
                issuer,
                "a kept registration cannot be opened with the configured keys; registering again"
            );
            let _ = self.registry.forget_upstream_client(upstream, issuer).await;
        }
        Ok(c)
    }

    fn open_client(&self, sealed: &str) -> Option<Client> {
        let (v, _) = self.ring.open(CLIENT_PURPOSE, sealed)?;
        Some(Client {
            client_id: v["id"].as_str()?.to_string(),
            client_secret: v["secret"].as_str().map(str::to_string),
            auth_method: v["method"].as_str()?.to_string(),
            private_key: None,
            dpop: None,
        })
    }

    /// Forgets the registration `client_id` at `issuer` for `upstream` once the server says it
    /// does not know it (`invalid_client`): the next connect registers again.
    pub(super) async fn forget_client(&self, upstream: &str, issuer: &str, client_id: &str) {
        let key = (upstream.to_string(), issuer.to_string());
        let in_memory = self
            .registered
            .lock()
            .unwrap()
            .get(&key)
            .is_some_and(|c| c.client_id == client_id);
        let ours = in_memory
            || self
                .stored_client(upstream, issuer)
                .await
                .is_ok_and(|c| c.is_some_and(|c| c.client_id == client_id));
        if !ours {
            return;
        }
        self.registered.lock().unwrap().remove(&key);
        tracing::warn!(upstream, issuer, client_id, "the authorization server no longer knows the gateway's registration; the next connect registers again");
        if let Err(e) = self.registry.forget_upstream_client(upstream, issuer).await {
            tracing::warn!(error = %e, upstream, "cannot forget a kept registration");
        }
    }
}
