//! The SQL registry's connection over sqlx's `Any` driver, so that Postgres (production) and an
//! embedded SQLite file (zero-setup default) share one set of queries: opening, migrations, and
//! the change notifications between replicas. Queries use only portable SQL; JSON is stored as
//! text, times as epoch milliseconds. The stores are implemented beside it (`upstreams`,
//! `access`, `audit`, `routing_store`).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sqlx::any::AnyPoolOptions;
use sqlx::AnyPool;

use crate::change::Change;
use crate::error::{RegistryError, Result};

static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/sqlite");
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/postgres");

/// The Postgres channel on which replicas announce upstream changes.
const CHANNEL: &str = "mcp_gateway_upstreams";

/// Registry stored in Postgres or SQLite.
pub struct SqlRegistry {
    pub(crate) pool: AnyPool,
    pub(crate) backend: &'static str,
    /// Identifies this process's own notifications, which it has already acted on.
    origin: String,
    /// What other replicas changed.
    pub(crate) changes: tokio::sync::broadcast::Sender<Change>,
    listener: Option<tokio::task::JoinHandle<()>>,
    /// When (ms) spent one-time values that expired are next cleared away.
    pub(crate) next_spent_sweep: std::sync::atomic::AtomicI64,
}

impl Drop for SqlRegistry {
    fn drop(&mut self) {
        if let Some(l) = &self.listener {
            l.abort();
        }
    }
}

/// Options for opening the registry.
#[derive(Debug, Clone)]
pub struct OpenOptions {
    pub max_connections: u32,
    /// How long a query waits for a connection before the database counts as unavailable.
    pub acquire_timeout: Duration,
}

impl Default for OpenOptions {
    fn default() -> Self {
        Self {
            max_connections: 10,
            acquire_timeout: Duration::from_secs(3),
        }
    }
}

fn backend_of(url: &str) -> Result<&'static str> {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok("postgres")
    } else if url.starts_with("sqlite:") {
        Ok("sqlite")
    } else {
        Err(RegistryError::Invalid(format!(
            "database url must start with postgres:// or sqlite: (got {:?})",
            url.split(':').next().unwrap_or_default()
        )))
    }
}

/// Now, in milliseconds since the Unix epoch: how every time in the registry is kept.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default()
}

/// How often a SQLite registry looks for writes of other processes.
const SQLITE_WATCH_EVERY: Duration = Duration::from_millis(250);

/// SQLite has no notifications: another process that writes the file (`mcp-gateway token
/// revoke`, `import`) is seen by `PRAGMA data_version`, which changes when a connection other
/// than this one commits. Such a write is announced as [`Change::Lost`] (anything may have
/// changed): remembered token verdicts are distrusted and roles, upstreams and virtual servers
/// re-read, so a revocation from the command line takes effect within a quarter second where
/// it waited for the token cache to expire (10 s).
async fn watch_sqlite(pool: AnyPool, changes: tokio::sync::broadcast::Sender<Change>) {
    let mut last: Option<i64> = None;
    let mut every = tokio::time::interval(SQLITE_WATCH_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        let Ok(row) = sqlx::query("PRAGMA data_version").fetch_one(&pool).await else {
            continue;
        };
        let Ok(version) = sqlx::Row::try_get::<i64, _>(&row, 0) else {
            continue;
        };
        if last.is_some_and(|l| l != version) {
            tracing::info!("the database was written by another process: re-reading");
            let _ = changes.send(Change::Lost);
        }
        last = Some(version);
    }
}

/// How long a listener's connection must last for a drop to count as the first in a while.
const STEADY_FOR: Duration = Duration::from_secs(10);

/// A listener to the replicas' announcements.
async fn listen(url: &str) -> std::result::Result<sqlx::postgres::PgListener, sqlx::Error> {
    let mut listener = sqlx::postgres::PgListener::connect(url).await?;
    listener.listen(CHANNEL).await?;
    Ok(listener)
}

/// Passes the other replicas' announcements on to the followers, and [`Change::Lost`] each time
/// the listener is listening again after its connection was lost: what was announced while it
/// was away is gone, so the followers re-read. A dropped connection is made again before
/// `try_recv` answers `None` (sqlx's eager reconnection, listening included); a listener that
/// fails is built anew, with a growing delay. (`recv` reconnects silently: until 2026-12-07 the
/// followers never heard of a loss.)
async fn relay_announcements(
    mut listener: sqlx::postgres::PgListener,
    url: String,
    changes: tokio::sync::broadcast::Sender<Change>,
    me: String,
) {
    let mut backoff =
        crate::backoff::Backoff::new(Duration::from_millis(250), Duration::from_secs(30));
    // When the connection last dropped: one that drops again at once (a proxy that closes what
    // it accepts) waits before the next try, so that the followers are not made to re-read
    // everything in a loop.
    let mut dropped: Option<std::time::Instant> = None;
    loop {
        match listener.try_recv().await {
            Ok(Some(n)) => {
                let Some((from, what)) = n.payload().split_once(' ') else {
                    continue;
                };
                if from == me {
                    continue;
                }
                match Change::from_wire(what) {
                    Some(change) => {
                        let _ = changes.send(change);
                    }
                    None => tracing::debug!(what, "unknown change announced"),
                }
            }
            Ok(None) => {
                tracing::warn!("registry listener reconnected; re-reading what may have changed");
                let _ = changes.send(Change::Lost);
                if dropped.is_some_and(|at| at.elapsed() < STEADY_FOR) {
                    tokio::time::sleep(backoff.next_delay()).await;
                } else {
                    backoff.reset();
                }
                dropped = Some(std::time::Instant::now());
            }
            Err(e) => {
                tracing::warn!(error = %e, "registry listener lost; reconnecting");
                listener = loop {
                    tokio::time::sleep(backoff.next_delay()).await;
                    match listen(&url).await {
                        Ok(l) => break l,
                        Err(e) => tracing::warn!(error = %e, "registry listener cannot reconnect"),
                    }
                };
                backoff.reset();
                tracing::info!("registry listener reconnected; re-reading what may have changed");
                let _ = changes.send(Change::Lost);
            }
        }
    }
}

impl SqlRegistry {
    /// Connects and runs the migrations (Postgres: under sqlx's advisory lock, so replicas that
    /// start together migrate once).
    pub async fn open(url: &str, opts: OpenOptions) -> Result<Self> {
        let backend = backend_of(url)?;
        sqlx::any::install_default_drivers();
        let mut pool_opts = AnyPoolOptions::new()
            .max_connections(opts.max_connections)
            .acquire_timeout(opts.acquire_timeout);
        if backend == "sqlite" {
            // One writer at a time avoids SQLITE_BUSY under concurrent admin writes.
            pool_opts = pool_opts.max_connections(1);
            pool_opts = pool_opts.after_connect(|conn, _| {
                Box::pin(async move {
                    // A write-ahead log: a commit appends to one file and syncs it, where the
                    // default rollback journal creates, syncs and deletes a file and syncs the
                    // database on every audit batch. Durability is the same (synchronous stays
                    // FULL). A database SQLite cannot switch (read-only, in memory) keeps its
                    // mode.
                    let _ = sqlx::query("PRAGMA journal_mode = WAL")
                        .execute(&mut *conn)
                        .await;
                    // Temporary files in memory: an audit batch's multi-row INSERT keeps a
                    // statement journal, which spilled past 64 KiB into a new file in /var/tmp
                    // (create, unlink, a write per page, close) on every batch under load.
                    sqlx::query("PRAGMA temp_store = MEMORY")
                        .execute(&mut *conn)
                        .await?;
                    Ok(())
                })
            });
        }
        let pool = pool_opts
            .connect(url)
            .await
            .map_err(|e| RegistryError::from_sqlx(e, "database"))?;
        let migrator = if backend == "postgres" {
            &POSTGRES_MIGRATIONS
        } else {
            &SQLITE_MIGRATIONS
        };
        migrator.run(&pool).await?;
        let origin = format!("{:x}", std::process::id() as u64 ^ now_ms() as u64);
        let (changes, _) = tokio::sync::broadcast::channel(256);
        let listener = if backend == "postgres" {
            let listener = listen(url)
                .await
                .map_err(|e| RegistryError::from_sqlx(e, "listener"))?;
            Some(tokio::spawn(relay_announcements(
                listener,
                url.to_string(),
                changes.clone(),
                origin.clone(),
            )))
        } else if !url.contains(":memory:") && !url.contains("mode=memory") {
            Some(tokio::spawn(watch_sqlite(pool.clone(), changes.clone())))
        } else {
            None
        };
        Ok(Self {
            pool,
            backend,
            origin,
            changes,
            listener,
            next_spent_sweep: std::sync::atomic::AtomicI64::new(0),
        })
    }

    /// Tells the other replicas what changed (Postgres only).
    pub(crate) async fn announce(&self, change: &Change) -> Result<()> {
        if self.backend == "postgres" {
            sqlx::query("SELECT pg_notify($1, $2)")
                .bind(CHANNEL)
                .bind(format!("{} {}", self.origin, change.to_wire()))
                .execute(&self.pool)
                .await
                .map_err(|e| RegistryError::from_sqlx(e, "notify"))?;
        }
        Ok(())
    }

    /// A write transaction (see [`crate::tx`]).
    pub(crate) async fn begin(&self) -> std::result::Result<crate::tx::Tx, sqlx::Error> {
        crate::tx::Tx::begin(&self.pool, self.backend == "sqlite").await
    }

    pub(crate) fn backend_name(&self) -> &'static str {
        self.backend
    }

    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn journal_mode(reg: &SqlRegistry) -> String {
        use sqlx::Row;
        sqlx::query("PRAGMA journal_mode")
            .fetch_one(reg.pool())
            .await
            .unwrap()
            .get::<String, _>(0)
    }

    /// A file database is opened with a write-ahead log and temporary files in memory; opening
    /// a database read-only (one in WAL mode, one that SQLite may not switch) or in memory still
    /// works.
    #[tokio::test]
    async fn a_sqlite_file_uses_a_write_ahead_log() {
        let dir = tempfile::TempDir::new().unwrap();
        let file = dir.path().join("wal.db");
        let url = format!("sqlite://{}?mode=rwc", file.display());
        let ro = format!("sqlite://{}?mode=ro", file.display());
        let reg = SqlRegistry::open(&url, Default::default()).await.unwrap();
        assert_eq!(journal_mode(&reg).await, "wal");
        let temp_store: i64 = {
            use sqlx::Row;
            let row = sqlx::query("PRAGMA temp_store")
                .fetch_one(reg.pool())
                .await
                .unwrap();
            row.get(0)
        };
        assert_eq!(temp_store, 2, "temporary files are kept in memory");
        let read_only = SqlRegistry::open(&ro, Default::default()).await.unwrap();
        assert_eq!(journal_mode(&read_only).await, "wal");
        // Closed, not just dropped (a dropped pool closes its connection later): leaving WAL
        // mode needs the only connection.
        read_only.pool().close().await;
        sqlx::query("PRAGMA journal_mode = DELETE")
            .execute(reg.pool())
            .await
            .unwrap();
        reg.pool().close().await;
        let read_only = SqlRegistry::open(&ro, Default::default()).await.unwrap();
        assert_eq!(journal_mode(&read_only).await, "delete");
        read_only.pool().close().await;
        let memory = SqlRegistry::open("sqlite::memory:", Default::default())
            .await
            .unwrap();
        assert_eq!(journal_mode(&memory).await, "memory");
    }
}
