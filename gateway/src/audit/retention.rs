//! Audit rows kept for `audit.retention_days`: at start and hourly, each replica removes the
//! rows written before then from the start of the chain (`AuditStore::prune_audit`, which
//! records the last removed row as the chain's anchor, so `audit verify` still checks every
//! row that is left). Tokens that ended (revoked or expired) before then go too: no row left
//! can name them, and automation that makes a token per job grew the list for good. Without a
//! retention nothing is removed.

use std::sync::Arc;
use std::time::Duration;

use registry::Registry;

/// How often each replica removes what passed its retention.
const EVERY: Duration = Duration::from_secs(3600);

pub(super) fn start(registry: &Arc<dyn Registry>, retention: Duration) {
    crate::periodic::every(EVERY, registry, move |registry| async move {
        let before = registry::now_ms() - retention.as_millis() as i64;
        match registry.prune_audit(before).await {
            Ok(0) => {}
            Ok(rows) => tracing::info!(
                rows,
                retention_days = retention.as_secs() / 86_400,
                "audit rows past their retention removed"
            ),
            Err(e) => tracing::warn!(error = %e, "cannot remove audit rows past their retention"),
        }
        match registry.forget_ended_tokens(before).await {
            Ok(0) => {}
            Ok(tokens) => tracing::info!(
                tokens,
                "tokens that ended before the audit's retention forgotten"
            ),
            Err(e) => tracing::warn!(error = %e, "cannot forget tokens that ended long ago"),
        }
    });
}
