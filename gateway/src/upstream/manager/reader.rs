//! Whose account a `user_oauth` upstream's catalog is read with: the designated catalog account,
//! or under `catalog = "first_user"` that account when connected, else the user who connected
//! first. And what a change of one of its connections (connected, refreshed or revoked, here or
//! on another replica) does to the catalog connection and to the holder's sessions; forgetting
//! one, and forgetting those no upstream takes now (company sign-ins without an
//! enterprise-managed upstream, connections from another authorization server than the pinned
//! one).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::{Entry, Upstreams};
use crate::config::CatalogReader;
use crate::upstream::credentials::enterprise::COMPANY;
use crate::upstream::credentials::managed::Managed;
use crate::upstream::credentials::vault::CATALOG;
use crate::upstream::oauth::TokenSource;
use crate::upstream::UpstreamError;

impl Upstreams {
    /// The tokens a `user_oauth` upstream's catalog connection is opened with (`None` for other
    /// upstreams); remembers whose they are.
    pub(super) async fn catalog_reader(
        &self,
        entry: &Entry,
    ) -> Result<Option<Arc<TokenSource>>, UpstreamError> {
        let name = &entry.spec.name;
        let Some(mode) = Self::reader_mode(entry) else {
            return Ok(None);
        };
        let holder = match mode {
            CatalogReader::Account => CATALOG.to_string(),
            CatalogReader::FirstUser => {
                let managed = super::super::credentials::managed::Managed::of(&entry.spec);
                self.first_reader(name, managed.is_some()).await?
            }
        };
        *entry.reader.lock().unwrap() = Some(holder.clone());
        Ok(Some(TokenSource::of_holder(
            self.vault.clone(),
            &entry.spec,
            &holder,
        )))
    }

    fn reader_mode(entry: &Entry) -> Option<CatalogReader> {
        let endpoint = entry.spec.transport.endpoint()?;
        endpoint.user_oauth.as_ref().map(|u| u.catalog)
    }

    /// The catalog account if connected, else the user who connected first; at an
    /// enterprise-managed upstream (`managed`) with no connection yet, the user who signed in
    /// at the company first (their token there comes from that sign-in).
    async fn first_reader(&self, upstream: &str, managed: bool) -> Result<String, UpstreamError> {
        let all = self
            .registry
            .list_connections(None)
            .await
            .map_err(|e| UpstreamError::Connect(format!("the credential store: {e}")))?;
        let first = |name: &str| {
            all.iter()
                .filter(|c| c.upstream == name)
                .min_by_key(|c| (c.holder != CATALOG, c.created_at, c.holder.clone()))
                .map(|c| c.holder.clone())
        };
        first(upstream)
            .or_else(|| {
                managed
                    .then(|| first(super::super::credentials::enterprise::COMPANY))
                    .flatten()
            })
            .ok_or_else(|| {
                UpstreamError::Connect(format!(
                    "no account to read the catalog with yet (catalog = \"first_user\"): a user \
                     connects theirs in the console's Connections tab or with POST \
                     /v1/connections/{upstream}, or an admin connects a catalog account"
                ))
            })
    }

    /// The health message of a catalog whose reader was refused while listing.
    pub(super) fn stale_catalog(entry: &Entry) -> String {
        let name = &entry.spec.name;
        match entry.reader.lock().unwrap().as_deref() {
            Some(CATALOG) | None => format!(
                "the upstream refused the catalog account's token or asks for more scope: an \
                 admin connects it again (POST /admin/v1/upstreams/{name}/connection)"
            ),
            Some(user) => format!(
                "the upstream refused the token of the account the catalog is read with \
                 ({user}) or asks it for more scope: that user connects again, or an admin \
                 connects a catalog account"
            ),
        }
    }

    /// A user signed in at the company: the enterprise-managed upstreams that are not up (their
    /// catalog may have had no account to be read with) are started again.
    pub fn company_signed_in(self: &Arc<Self>) {
        let down: Vec<_> = self
            .entries
            .lock()
            .unwrap()
            .values()
            .filter(|e| e.spec.enabled)
            .filter(|e| super::super::credentials::managed::Managed::of(&e.spec).is_some())
            .filter(|e| e.health.lock().unwrap().status != "up")
            .map(|e| e.spec.clone())
            .collect();
        for spec in down {
            self.start(spec);
        }
    }

    /// A connection of `holder` to `upstream` changed (connected, refreshed or revoked, here or
    /// on another replica). The catalog connection starts over when its reader's connection
    /// was revoked or was refused before, when an account that may read it connected while the
    /// upstream is not up, and (under `first_user`) when the catalog account connected while a
    /// user's reads it. A revoked user's session connections close, so that their next call
    /// asks again.
    pub async fn connection_changed(self: &Arc<Self>, upstream: &str, holder: &str) {
        let Some(entry) = self.entries.lock().unwrap().get(upstream).cloned() else {
            return;
        };
        let exists = match self.registry.get_connection(upstream, holder).await {
            Ok(c) => c.is_some(),
            Err(e) => {
                tracing::warn!(upstream, error = %e, "cannot read a changed upstream connection");
                return;
            }
        };
        let first_user = Self::reader_mode(&entry) == Some(CatalogReader::FirstUser);
        let reads = entry.reader.lock().unwrap().as_deref() == Some(holder)
            || (holder == CATALOG && !first_user);
        let may_read = holder == CATALOG || first_user;
        let up = entry.health.lock().unwrap().status == "up";
        let stale = entry.catalog_stale.load(Ordering::Acquire);
        let restart = may_read
            && ((reads && (!exists || stale))
                || (exists && !up)
                || (first_user && holder == CATALOG && exists && !reads));
        if restart {
            tracing::info!(
                upstream,
                holder,
                connected = exists,
                "the account the catalog is read with changed; reconnecting"
            );
            self.start(entry.spec.clone());
            return;
        }
        if exists || holder == CATALOG {
            return;
        }
        let sessions: Vec<String> = entry
            .exchangers
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, x)| x.holder() == Some(holder))
            .map(|(s, _)| s.clone())
            .collect();
        for s in sessions {
            self.drop_session_connection(upstream, &s);
        }
    }

    /// Forgets `holder`'s connection to `upstream` (`by`'s doing: theirs or an admin's) and
    /// tells the catalog and the holder's sessions; whether there was one. A company sign-in
    /// takes with it the holder's connections to enterprise-managed upstreams, which it gave:
    /// forgetting it must end what it allowed, not leave tokens working until they expire.
    pub async fn disconnect(
        self: &Arc<Self>,
        upstream: &str,
        holder: &str,
        by: &str,
    ) -> Result<bool, registry::RegistryError> {
        let existed = self.vault.disconnect(upstream, holder, by).await?;
        if existed {
            self.connection_changed(upstream, holder).await;
        }
        if existed && upstream == COMPANY {
            let managed: Vec<String> = self
                .entries
                .lock()
                .unwrap()
                .values()
                .filter(|e| Managed::of(&e.spec).is_some())
                .map(|e| e.spec.name.clone())
                .collect();
            for name in managed {
                if self.vault.disconnect(&name, holder, by).await? {
                    self.connection_changed(&name, holder).await;
                }
            }
        }
        Ok(existed)
    }

    /// Whether an enabled upstream's users' tokens come from their company sign-in
    /// (`user_oauth.enterprise_managed`): only then are company sign-ins kept.
    pub fn any_enterprise_managed(&self) -> bool {
        let entries = self.entries.lock().unwrap();
        entries
            .values()
            .any(|e| e.spec.enabled && Managed::of(&e.spec).is_some())
    }

    /// Forgets the users' connections that no upstream takes now: the kept company sign-ins once
    /// no enabled upstream is enterprise-managed (one was removed, disabled or changed), and
    /// connections from another authorization server than the one an upstream's config pins.
    pub async fn forget_stale_connections(&self) {
        let company = !self.any_enterprise_managed();
        let pinned: Vec<(String, String)> = {
            let entries = self.entries.lock().unwrap();
            entries
                .values()
                .filter_map(|e| {
                    let issuer = e
                        .spec
                        .transport
                        .endpoint()?
                        .user_oauth
                        .as_ref()?
                        .issuer
                        .clone()?;
                    Some((e.spec.name.clone(), issuer))
                })
                .collect()
        };
        if !company && pinned.is_empty() {
            return;
        }
        // One read of the stored connections serves both sweeps.
        let all = match self.registry.list_connections(None).await {
            Ok(all) => all,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the connections to forget stale ones");
                return;
            }
        };
        if company {
            self.vault.forget_company_sign_ins(&all).await;
        }
        self.vault
            .forget_connections_from_other_servers(&all, &pinned)
            .await;
    }

    /// The enabled upstreams where each user connects their own account (`user_oauth`).
    pub fn user_oauth_upstreams(&self) -> Vec<String> {
        let entries = self.entries.lock().unwrap();
        entries
            .values()
            .filter(|e| e.spec.enabled)
            .filter(|e| {
                e.spec
                    .transport
                    .endpoint()
                    .is_some_and(|t| t.user_oauth.is_some())
            })
            .map(|e| e.spec.name.clone())
            .collect()
    }
}
