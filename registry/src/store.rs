//! The registry interface the gateway holds (`Arc<dyn Registry>`), so either side can be swapped in
//! tests.

use async_trait::async_trait;
use serde_json::Value;

use crate::access::AccessStore;
use crate::audit::AuditStore;
use crate::change::Change;
use crate::connections::ConnectionStore;
use crate::error::Result;
use crate::model::{CatalogEntry, EntryKind, SyncReport, UpstreamRecord};
use crate::oauth::OAuthStore;
use crate::pins::PinStore;
use crate::routing_store::RoutingStore;

/// Storage of upstreams and their catalog, roles and tokens, and the audit log.
#[async_trait]
pub trait Registry:
    AccessStore
    + AuditStore
    + RoutingStore
    + OAuthStore
    + ConnectionStore
    + PinStore
    + Send
    + Sync
    + 'static
{
    /// Which backend this is (`postgres` or `sqlite`), for logs and health output.
    fn backend(&self) -> &'static str;
    /// Connections in the pool: (open, idle).
    fn pool_stats(&self) -> (u32, usize);
    /// Cheap round trip to the database.
    async fn ping(&self) -> Result<()>;

    async fn list_upstreams(&self) -> Result<Vec<UpstreamRecord>>;
    async fn get_upstream(&self, name: &str) -> Result<Option<UpstreamRecord>>;
    /// Fails with `AlreadyExists` when the name is taken.
    async fn create_upstream(
        &self,
        name: &str,
        spec: &Value,
        source: &str,
    ) -> Result<UpstreamRecord>;
    /// Fails with `NotFound` when there is no such upstream.
    async fn update_upstream(
        &self,
        name: &str,
        spec: &Value,
        enabled: bool,
    ) -> Result<UpstreamRecord>;
    /// Creates or replaces, keeping `created_at` (used to seed upstreams from the config file).
    async fn put_upstream(&self, name: &str, spec: &Value, source: &str) -> Result<UpstreamRecord>;
    /// Deletes the upstream, its catalog, its users' connections and the gateway's registrations
    /// at its authorization server; `NotFound` when absent.
    async fn delete_upstream(&self, name: &str) -> Result<()>;

    /// Replaces one kind of an upstream's catalog by `definitions` in one transaction: upserts by
    /// content hash, removes what vanished.
    async fn sync_catalog(
        &self,
        upstream: &str,
        kind: EntryKind,
        definitions: &[Value],
    ) -> Result<SyncReport>;
    /// The whole catalog, ordered by upstream, kind, key.
    async fn catalog(&self) -> Result<Vec<CatalogEntry>>;

    /// Records that a host ended a session (by a hash of its id); every replica is told.
    async fn terminate_session(&self, id_hash: &str) -> Result<()>;
    /// Whether a session was ended by its host.
    async fn is_session_terminated(&self, id_hash: &str) -> Result<bool>;
    /// The hashes of the sessions ended at or after `since` (ms), for a replica that may have
    /// missed their announcements.
    async fn sessions_terminated_since(&self, since: i64) -> Result<Vec<String>>;
    /// Forgets the sessions ended before `before` (ms): the rows removed.
    async fn forget_terminated_sessions(&self, before: i64) -> Result<u64>;

    /// What other replicas changed (Postgres LISTEN/NOTIFY), and [`Change::Lost`] when the
    /// listener lost its connection. A single-process backend never sends anything.
    fn subscribe(&self) -> tokio::sync::broadcast::Receiver<Change>;
}
