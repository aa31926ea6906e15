//! Keeping the stored tool vectors (`tool_embeddings`) to what is in use. A vector is stored
//! per (model, text) so that restarts and other replicas do not embed again; every text a tool
//! ever had would otherwise stay for good (a description edited, an upstream upgraded or
//! removed, another model chosen). Each replica marks the vectors of its index as in use (each
//! row at most daily) and forgets those no replica has marked for [`KEPT_FOR`].

use std::sync::Arc;
use std::time::Duration;

use super::ToolRouter;

/// How long a vector no replica uses is kept: long enough for an upstream that is down for a
/// while, or a model switched back, to find its vectors again.
const KEPT_FOR: Duration = Duration::from_secs(30 * 24 * 3600);
/// A row marked this recently is not marked again.
const MARK_EVERY: Duration = Duration::from_secs(24 * 3600);
/// How often each replica marks and forgets.
const EVERY: Duration = Duration::from_secs(3600);

impl ToolRouter {
    /// Marks and forgets once the catalog is loaded and embedded (before, the index lacks tools
    /// whose old vectors must stay), then hourly.
    pub(super) fn keep_stored_vectors(self: &Arc<Self>) {
        if self.embedder.is_none() {
            // Without a model nothing is marked: forgetting would take every vector.
            return;
        }
        let me = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut ready = tokio::time::interval(Duration::from_secs(1));
            loop {
                ready.tick().await;
                let Some(router) = me.upgrade() else { return };
                let st = router.status();
                if router.upstreams.loading().is_empty() && st.embedded == st.tools {
                    break;
                }
            }
            if let Some(router) = me.upgrade() {
                crate::periodic::every(
                    EVERY,
                    &router,
                    |r| async move { r.mark_and_forget().await },
                );
            }
        });
    }

    async fn mark_and_forget(&self) {
        let Some(embedder) = &self.embedder else {
            return;
        };
        let hashes = self.index.read().unwrap().vector_hashes();
        let now = registry::now_ms();
        let ms = |d: Duration| d.as_millis() as i64;
        if let Err(e) = self
            .registry
            .touch_embeddings(embedder.model_id(), &hashes, now, now - ms(MARK_EVERY))
            .await
        {
            // Unmarked, this replica's vectors might look unused: forget nothing this time.
            tracing::warn!(error = %e, "cannot mark the stored tool vectors in use");
            return;
        }
        match self.registry.forget_embeddings(now - ms(KEPT_FOR)).await {
            Ok(0) => {}
            Ok(forgotten) => tracing::info!(
                forgotten,
                in_use = hashes.len(),
                "forgot stored tool vectors no tool has used for 30 days"
            ),
            Err(e) => tracing::warn!(error = %e, "cannot forget unused tool vectors"),
        }
    }
}
