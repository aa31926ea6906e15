//! Using a user's stored upstream tokens: the access token for a call, a refresh when it is
//! about to expire or the upstream refused it (one at a time per connection, across replicas
//! too: a replica waits for the one whose turn it is and takes its tokens, since a provider that
//! rotates refresh tokens revokes the grant when a spent one is used again), a new grant at an
//! enterprise-managed upstream, and never a token issued for another server than the upstream's
//! URL now, or by another authorization server than the one its config pins.

use registry::{now_ms, ConnectionRecord};

use super::discovery;
use super::flow;
use super::managed::Managed;
use super::vault::{Access, Tokens, Vault};
use crate::upstream::dpop;
use crate::upstream::UpstreamError;

/// How long a replica's turn to refresh a connection lasts at most: a crashed replica's lapses.
const TURN_MS: i64 = 30_000;
/// How long a replica waits for another's refresh, and how often it looks.
const TURN_WAIT: std::time::Duration = std::time::Duration::from_secs(10);
const TURN_POLL: std::time::Duration = std::time::Duration::from_millis(100);

/// Who refreshes a connection's tokens.
pub(super) enum Turn {
    /// This replica, with the tokens stored now.
    Mine(Box<(ConnectionRecord, Tokens)>),
    /// Another replica did while this one waited: its access token.
    Theirs(Access),
}

impl Vault {
    /// The stored tokens of `holder`'s connection to `upstream`, if they are for the server it
    /// is at now (`server`) and from its pinned authorization server. A connection made for
    /// another server (the upstream was removed and registered again under its name, or its URL
    /// changed) is forgotten: its tokens are that server's, and sending them here would hand them
    /// to a server they were not issued for. So is one from another authorization server than
    /// the one the config now pins: refreshing it would send the client's secret there.
    async fn stored_for(
        &self,
        upstream: &str,
        holder: &str,
        server: &discovery::Server,
    ) -> Result<Option<(ConnectionRecord, Tokens, bool)>, UpstreamError> {
        match self.stored(upstream, holder).await? {
            Some((rec, t, _)) if !server.accepts(&t.resource, &t.issuer) => {
                tracing::warn!(
                    upstream,
                    resource = %t.resource,
                    issuer = %t.issuer,
                    server = %server.url,
                    pinned = server.issuer.as_deref().unwrap_or(""),
                    "a stored upstream connection is for another server or authorization server; it is forgotten and the user connects again"
                );
                let _ = self.registry.delete_connection(upstream, holder).await;
                self.audit(&rec.connected_by, "upstream.disconnect", upstream, "moved")
                    .await;
                Ok(None)
            }
            found => Ok(found),
        }
    }

    /// A valid access token of `holder` at `upstream` (now `server`), refreshed if it is
    /// about to expire, and how long it lasts; at an enterprise-managed upstream (`managed`),
    /// one from the holder's company sign-in when there is none yet.
    pub async fn token(
        &self,
        upstream: &str,
        holder: &str,
        server: &discovery::Server,
        managed: Option<&Managed>,
    ) -> Result<Access, UpstreamError> {
        let now = now_ms();
        match self.stored_for(upstream, holder, server).await? {
            // One grant at a time per connection: through `renew`'s gate, which takes a
            // connection another call made meanwhile.
            None if managed.is_some() => self.renew(upstream, holder, server, "", managed).await,
            None => Err(Self::needs_connect(upstream, holder)),
            Some((rec, t, current)) if t.fresh(now) => {
                if !current {
                    // Sealed with a previous key (rotation): sealed again with the current one.
                    self.save(upstream, holder, &rec.connected_by, &rec.scope, &t)
                        .await?;
                }
                Ok(t.access(now))
            }
            Some((_, t, _)) => {
                self.renew(upstream, holder, server, &t.access_token, managed)
                    .await
            }
        }
    }

    /// A new access token in place of `stale` (about to expire, or refused by the upstream): a
    /// refresh, unless another call (or replica) already replaced it.
    pub async fn renew(
        &self,
        upstream: &str,
        holder: &str,
        server: &discovery::Server,
        stale: &str,
        managed: Option<&Managed>,
    ) -> Result<Access, UpstreamError> {
        let gate = self
            .refreshing
            .lock()
            .unwrap()
            .entry(format!("{upstream}/{holder}"))
            .or_default()
            .clone();
        let _one = gate.lock().await;
        let now = now_ms();
        let Some((rec, t, _)) = self.stored_for(upstream, holder, server).await? else {
            return match managed {
                Some(m) => self.managed_token(upstream, holder, m).await,
                None => Err(Self::needs_connect(upstream, holder)),
            };
        };
        if t.access_token != stale && t.fresh(now) {
            // Refreshed meanwhile, here or on another replica.
            return Ok(t.access(now));
        }
        if t.refresh_token.is_none() {
            return self.refresh(upstream, holder, rec, t, managed).await;
        }
        // One refresh between the replicas too: a provider that rotates refresh tokens takes
        // the spent one used again for a theft and revokes the user's grant.
        let (rec, t) = match self.refresh_turn(upstream, holder, &t.access_token).await? {
            Turn::Theirs(access) => return Ok(access),
            Turn::Mine(mine) => *mine,
        };
        let refreshed = self.refresh(upstream, holder, rec, t, managed).await;
        if let Err(e) = self.registry.release_connection(upstream, holder).await {
            tracing::warn!(upstream, error = %e, "cannot give back the turn to refresh a connection; it lapses");
        }
        refreshed
    }

    /// The turn to refresh `holder`'s connection to `upstream` (whose stored access token was
    /// `had`) with the tokens stored now, or the tokens another replica got while this one
    /// waited for it.
    pub(super) async fn refresh_turn(
        &self,
        upstream: &str,
        holder: &str,
        had: &str,
    ) -> Result<Turn, UpstreamError> {
        let store = |e: registry::RegistryError| {
            UpstreamError::Connect(format!("the credential store: {e}"))
        };
        let waited_until = tokio::time::Instant::now() + TURN_WAIT;
        loop {
            let now = now_ms();
            let taken = self
                .registry
                .lease_connection(upstream, holder, now, now + TURN_MS)
                .await
                .map_err(store)?;
            let Some((rec, t, _)) = self.stored(upstream, holder).await? else {
                return Err(Self::needs_connect(upstream, holder));
            };
            if t.access_token != had && t.fresh(now) {
                if taken == Some(true) {
                    let _ = self.registry.release_connection(upstream, holder).await;
                }
                return Ok(Turn::Theirs(t.access(now)));
            }
            match taken {
                Some(true) => return Ok(Turn::Mine(Box::new((rec, t)))),
                None => return Err(Self::needs_connect(upstream, holder)),
                Some(false) if tokio::time::Instant::now() >= waited_until => {
                    return Err(UpstreamError::Unavailable(format!(
                        "{upstream} (another replica is refreshing the caller's token; try again \
                         shortly)"
                    )))
                }
                Some(false) => tokio::time::sleep(TURN_POLL).await,
            }
        }
    }

    /// New tokens for the connection `rec` (tokens `t`): a refresh, or at an enterprise-managed
    /// upstream with no refresh token a new grant; a refused refresh forgets the connection.
    async fn refresh(
        &self,
        upstream: &str,
        holder: &str,
        rec: ConnectionRecord,
        t: Tokens,
        managed: Option<&Managed>,
    ) -> Result<Access, UpstreamError> {
        let now = now_ms();
        let answer = match (&t.refresh_token, managed) {
            (Some(rt), _) => flow::refresh(&self.http, &t.discovered(), &t.client(), rt).await,
            // A new grant from the company sign-in (grants come without refresh tokens).
            (None, Some(m)) => return self.managed_token(upstream, holder, m).await,
            (None, None) => Err(flow::TokenFailure::Refused(
                "no refresh token was issued".into(),
            )),
        };
        match answer {
            Ok(fresh) => {
                let next = Tokens {
                    access_token: fresh.access_token,
                    refresh_token: fresh.refresh_token.or(t.refresh_token.clone()),
                    expires_at: fresh.expires_in.map(|s| now + s as i64 * 1000),
                    dpop_key: t
                        .dpop_key
                        .clone()
                        .filter(|_| dpop::bound(fresh.token_type.as_deref())),
                    ..t
                };
                self.save(
                    &rec.upstream,
                    &rec.holder,
                    &rec.connected_by,
                    &rec.scope,
                    &next,
                )
                .await?;
                tracing::info!(upstream, "a user's upstream token was refreshed");
                Ok(next.access(now))
            }
            Err(why) => {
                // Another replica may have spent the refresh token a moment ago.
                if let Some((_, other, _)) = self.stored(upstream, holder).await? {
                    if other.access_token != t.access_token && other.fresh(now) {
                        return Ok(other.access(now));
                    }
                }
                if let Some(m) = managed {
                    return self.managed_token(upstream, holder, m).await;
                }
                if let flow::TokenFailure::Unavailable(why) = why {
                    // Its provider is away for now: the connection still works once it is back.
                    tracing::warn!(upstream, error = %why, "a user's upstream token cannot be refreshed right now");
                    return Err(UpstreamError::Unavailable(format!(
                        "{upstream} (its authorization server cannot refresh the caller's \
                         token right now; try again shortly)"
                    )));
                }
                tracing::warn!(upstream, error = %why, "a user's upstream token could not be refreshed; they are asked to connect again");
                let _ = self.registry.delete_connection(upstream, holder).await;
                self.audit(&rec.connected_by, "upstream.refresh", upstream, "error")
                    .await;
                Err(Self::needs_connect(upstream, holder))
            }
        }
    }

    /// Forgets every connection among `all` (the stored connections) to one of `pinned`'s
    /// upstreams (name, pinned issuer) that another authorization server issued, as a call would
    /// before using it: at start and after an upstream changes, so that none is left behind
    /// unused. How many.
    pub async fn forget_connections_from_other_servers(
        &self,
        all: &[ConnectionRecord],
        pinned: &[(String, String)],
    ) -> usize {
        let mut forgotten = 0;
        for c in all {
            let Some((_, pin)) = pinned.iter().find(|(u, _)| *u == c.upstream) else {
                continue;
            };
            if discovery::same_issuer(pin, &c.issuer) {
                continue;
            }
            if let Ok(true) = self
                .registry
                .delete_connection(&c.upstream, &c.holder)
                .await
            {
                tracing::warn!(
                    upstream = %c.upstream,
                    issuer = %c.issuer,
                    pinned = %pin,
                    "a stored upstream connection is from another authorization server than the pinned one; it is forgotten and the user connects again"
                );
                self.audit(&c.connected_by, "upstream.disconnect", &c.upstream, "moved")
                    .await;
                forgotten += 1;
            }
        }
        forgotten
    }
}
