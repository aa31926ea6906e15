//! Keeps this replica in step with what other replicas change through their admin APIs
//! (announced by the registry, Postgres LISTEN/NOTIFY): upstreams, roles and tokens, virtual
//! servers; and tells its sessions of URL elicitations completed there. Each follower also
//! re-reads everything every minute and after notifications were lost, and stops when what it
//! follows is dropped.

use std::future::Future;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use registry::{Change, Registry};
use tokio::sync::broadcast::error::RecvError;

use crate::auth::Authenticator;
use crate::config::UpstreamSpec;
use crate::mcp::hub::Hub;
use crate::routing::ToolRouter;
use crate::upstream::Upstreams;

/// How often a follower re-reads everything, for notifications lost while nobody listened.
const RECONCILE_EVERY: Duration = Duration::from_secs(60);

/// Calls `apply` with each announced change, with [`Change::Lost`] when the subscription fell
/// behind, and with `None` every [`RECONCILE_EVERY`], for as long as `target` lives.
fn follow<T, F, Fut>(registry: &Arc<dyn Registry>, target: &Arc<T>, apply: F)
where
    T: Send + Sync + 'static,
    F: Fn(Arc<T>, Option<Change>) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send,
{
    let mut changes = registry.subscribe();
    let target: Weak<T> = Arc::downgrade(target);
    tokio::spawn(async move {
        let mut every = tokio::time::interval(RECONCILE_EVERY);
        every.tick().await;
        loop {
            let change = tokio::select! {
                c = changes.recv() => match c {
                    Ok(c) => Some(c),
                    // Too many at once: as good as lost.
                    Err(RecvError::Lagged(_)) => Some(Change::Lost),
                    Err(RecvError::Closed) => break,
                },
                _ = every.tick() => None,
            };
            let Some(target) = target.upgrade() else {
                break;
            };
            apply(target, change).await;
        }
    });
}

/// A changed upstream is re-read and restarted, started or stopped; on a reconcile, every one
/// (and every catalog: a `list_changed` may have been lost too). Then, with no upstream
/// enterprise-managed any more, the kept company sign-ins are forgotten.
pub fn upstreams(registry: &Arc<dyn Registry>, upstreams: &Arc<Upstreams>) {
    let reg = registry.clone();
    follow(registry, upstreams, move |ups, change| {
        let registry = reg.clone();
        async move {
            // Not on every reconcile tick: a store read for what only a change can cause.
            let changed = matches!(change, Some(Change::Upstream(_) | Change::Lost));
            let names = match change {
                Some(Change::Upstream(name)) => vec![name],
                Some(Change::Connection(upstream, holder)) => {
                    ups.connection_changed(&upstream, &holder).await;
                    return;
                }
                Some(Change::Pins(upstream)) => {
                    ups.pins_changed(&upstream).await;
                    return;
                }
                Some(Change::Lost) | None => {
                    ups.resync_all();
                    let mut all: Vec<String> = ups.health().into_iter().map(|h| h.name).collect();
                    match registry.list_upstreams().await {
                        Ok(recs) => all.extend(recs.into_iter().map(|r| r.name)),
                        // Without the list, "absent" cannot be told from "unreadable".
                        Err(_) => return,
                    }
                    all.sort();
                    all.dedup();
                    all
                }
                Some(_) => return,
            };
            for name in names {
                apply_upstream(registry.as_ref(), &ups, &name).await;
            }
            if changed {
                ups.forget_stale_connections().await;
            }
        }
    });
}

async fn apply_upstream(registry: &dyn Registry, ups: &Arc<Upstreams>, name: &str) {
    match registry.get_upstream(name).await {
        Ok(Some(rec)) => match UpstreamSpec::from_record(rec) {
            Ok(spec) => {
                if ups.spec(name).as_ref() != Some(&spec) {
                    tracing::info!(upstream = %name, "upstream changed on another replica");
                    ups.start(spec);
                }
            }
            Err(e) => tracing::error!(upstream = %name, error = %e, "stored upstream is invalid"),
        },
        Ok(None) => ups.stop(name),
        Err(e) => tracing::warn!(upstream = %name, error = %e, "cannot read a changed upstream"),
    }
}

/// A revoked token or grant is forgotten at once, a new signing key read; roles are re-read when one changed and on every
/// reconcile; after lost notifications no remembered token verdict is trusted.
pub fn access(registry: &Arc<dyn Registry>, auth: &Arc<Authenticator>) {
    let reg = registry.clone();
    follow(registry, auth, move |auth, change| {
        let registry = reg.clone();
        async move {
            match change {
                Some(Change::Token(id)) => return auth.forget_token(&id),
                Some(Change::Grant(id)) => return auth.forget_grant(&id),
                Some(Change::SigningKey(_)) => {
                    if let Some(s) = &auth.server {
                        if let Err(e) = s.keys.reload(registry.as_ref()).await {
                            tracing::warn!(error = %e, "cannot re-read the signing keys");
                        }
                    }
                    return;
                }
                Some(Change::Lost) => {
                    auth.tokens.distrust_all();
                    if let Some(s) = &auth.server {
                        s.grants.distrust_all();
                    }
                }
                Some(Change::Role(_)) | None => {}
                Some(
                    Change::Upstream(_)
                    | Change::VirtualServer(_)
                    | Change::Connection(..)
                    | Change::ElicitationComplete(..)
                    | Change::Pins(_)
                    | Change::SessionEnded(_),
                ) => return,
            }
            if let Err(e) = auth.roles.reload(registry.as_ref()).await {
                tracing::warn!(error = %e, "cannot re-read the roles; keeping the known ones");
            }
            auth.limits.trim();
        }
    });
}

/// A URL elicitation completed on another replica (the browser came back there) is told to
/// its holder's sessions here.
pub fn elicitations(registry: &Arc<dyn Registry>, hub: &Arc<Hub>) {
    follow(registry, hub, |hub, change| async move {
        if let Some(Change::ElicitationComplete(holder, id)) = change {
            crate::upstream::credentials::pages::elicitation_complete(&hub, &holder, &id);
        }
    });
}

/// A session its host ended through another replica is dropped here if this one holds it. An
/// announcement can be lost (the listener's connection dropped), so after lost notifications
/// and on every reconcile the sessions ended since the last look are read and dropped too.
pub fn ended_sessions(registry: &Arc<dyn Registry>, hub: &Arc<Hub>) {
    let reg = registry.clone();
    // Every session this replica holds began after it started, so nothing older matters.
    let looked = Arc::new(AtomicI64::new(registry::now_ms()));
    follow(registry, hub, move |hub, change| {
        let registry = reg.clone();
        let looked = looked.clone();
        async move {
            match change {
                Some(Change::SessionEnded(hash)) => hub.drop_ended(&[hash]),
                Some(Change::Lost) | None => {
                    let now = registry::now_ms();
                    // Replicas stamp an end by their own clocks: read back far enough to
                    // cover clocks a little apart (reading an end twice is harmless).
                    let since = looked.load(Ordering::Relaxed) - ENDED_CLOCK_MARGIN_MS;
                    match registry.sessions_terminated_since(since).await {
                        Ok(hashes) => {
                            looked.store(now, Ordering::Relaxed);
                            hub.drop_ended(&hashes);
                        }
                        Err(e) => {
                            tracing::warn!(error = %e, "cannot read the sessions ended lately")
                        }
                    }
                }
                Some(_) => {}
            }
        }
    });
}

/// How far before its last look a replica reads the sessions ended lately.
const ENDED_CLOCK_MARGIN_MS: i64 = 120_000;

/// The virtual servers are re-read when one changed, and on every reconcile.
pub fn virtual_servers(registry: &Arc<dyn Registry>, routing: &Arc<ToolRouter>) {
    follow(registry, routing, |routing, change| async move {
        if matches!(change, Some(Change::VirtualServer(_) | Change::Lost) | None) {
            routing.reload_virtual_servers().await;
        }
    });
}
