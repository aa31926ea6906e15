//! The SQL implementation of [`Registry`] over sqlx's `Any` driver, so that Postgres (production)
//! and an embedded SQLite file (zero-setup default) share one set of queries. Queries use only
//! portable SQL; JSON is stored as text, times as epoch milliseconds.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use serde_json::Value;
use sqlx::any::{AnyPoolOptions, AnyRow};
use sqlx::{AnyPool, Row};

use crate::error::{RegistryError, Result};
use crate::hash::content_hash;
use crate::model::{CatalogEntry, EntryKind, SyncReport, UpstreamRecord};
use crate::store::{Change, Registry};

static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/sqlite");
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/postgres");

/// The Postgres channel on which replicas announce upstream changes.
const CHANNEL: &str = "mcp_gateway_upstreams";

/// Registry stored in Postgres or SQLite.
pub struct SqlRegistry {
    pool: AnyPool,
    backend: &'static str,
    /// Identifies this process's own notifications, which it has already acted on.
    origin: String,
    /// What other replicas changed.
    changes: tokio::sync::broadcast::Sender<Change>,
    listener: Option<tokio::task::JoinHandle<()>>,
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
            let mut listener = sqlx::postgres::PgListener::connect(url)
                .await
                .map_err(|e| RegistryError::from_sqlx(e, "listener"))?;
            listener
                .listen(CHANNEL)
                .await
                .map_err(|e| RegistryError::from_sqlx(e, "listener"))?;
            let tx = changes.clone();
            let me = origin.clone();
            Some(tokio::spawn(async move {
                // `recv` reconnects by itself after a lost connection; notifications sent while
                // it was away are lost, which the periodic resync of the caller covers.
                let mut backoff = crate::backoff::Backoff::new(
                    Duration::from_millis(250),
                    Duration::from_secs(30),
                );
                loop {
                    match listener.recv().await {
                        Ok(n) => {
                            backoff.reset();
                            let Some((from, what)) = n.payload().split_once(' ') else {
                                continue;
                            };
                            if from == me {
                                continue;
                            }
                            match Change::from_wire(what) {
                                Some(change) => {
                                    let _ = tx.send(change);
                                }
                                None => tracing::debug!(what, "unknown change announced"),
                            }
                        }
                        Err(e) => {
                            let _ = tx.send(Change::Lost);
                            let delay = backoff.next_delay();
                            tracing::warn!(error = %e, retry_in = ?delay, "registry listener lost; retrying");
                            tokio::time::sleep(delay).await;
                        }
                    }
                }
            }))
        } else {
            None
        };
        Ok(Self {
            pool,
            backend,
            origin,
            changes,
            listener,
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

    pub(crate) fn backend_name(&self) -> &'static str {
        self.backend
    }

    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }
}

fn upstream_from_row(row: &AnyRow) -> Result<UpstreamRecord> {
    let spec: String = row.try_get("spec").map_err(RegistryError::Database)?;
    Ok(UpstreamRecord {
        name: row.try_get("name").map_err(RegistryError::Database)?,
        spec: serde_json::from_str(&spec)
            .map_err(|e| RegistryError::Invalid(format!("stored spec is not json: {e}")))?,
        enabled: row
            .try_get::<i64, _>("enabled")
            .map_err(RegistryError::Database)?
            != 0,
        source: row.try_get("source").map_err(RegistryError::Database)?,
        created_at: row.try_get("created_at").map_err(RegistryError::Database)?,
        updated_at: row.try_get("updated_at").map_err(RegistryError::Database)?,
    })
}

const UPSTREAM_COLUMNS: &str = "name, spec, enabled, source, created_at, updated_at";

#[async_trait]
impl Registry for SqlRegistry {
    fn backend(&self) -> &'static str {
        self.backend
    }

    fn pool_stats(&self) -> (u32, usize) {
        (self.pool.size(), self.pool.num_idle())
    }

    async fn ping(&self) -> Result<()> {
        sqlx::query("SELECT 1")
            .execute(&self.pool)
            .await
            .map_err(|e| RegistryError::from_sqlx(e, "ping"))?;
        Ok(())
    }

    async fn list_upstreams(&self) -> Result<Vec<UpstreamRecord>> {
        let rows = sqlx::query(&format!(
            "SELECT {UPSTREAM_COLUMNS} FROM upstreams ORDER BY name"
        ))
        .fetch_all(&self.pool)
        .await
        .map_err(|e| RegistryError::from_sqlx(e, "upstreams"))?;
        rows.iter().map(upstream_from_row).collect()
    }

    async fn get_upstream(&self, name: &str) -> Result<Option<UpstreamRecord>> {
        let row = sqlx::query(&format!(
            "SELECT {UPSTREAM_COLUMNS} FROM upstreams WHERE name = $1"
        ))
        .bind(name)
        .fetch_optional(&self.pool)
        .await
        .map_err(|e| RegistryError::from_sqlx(e, "upstream"))?;
        row.as_ref().map(upstream_from_row).transpose()
    }

    async fn create_upstream(
        &self,
        name: &str,
        spec: &Value,
        source: &str,
    ) -> Result<UpstreamRecord> {
        let now = now_ms();
        sqlx::query(
            "INSERT INTO upstreams (name, spec, enabled, source, created_at, updated_at) \
             VALUES ($1, $2, 1, $3, $4, $5)",
        )
        .bind(name)
        .bind(spec.to_string())
        .bind(source)
        .bind(now)
        .bind(now)
        .execute(&self.pool)
        .await
        .map_err(|e| RegistryError::from_sqlx(e, &format!("upstream {name:?}")))?;
        self.announce(&Change::Upstream(name.to_string())).await?;
        self.get_upstream(name)
            .await?
            .ok_or_else(|| RegistryError::NotFound(format!("upstream {name:?}")))
    }

    async fn update_upstream(
        &self,
        name: &str,
        spec: &Value,
        enabled: bool,
    ) -> Result<UpstreamRecord> {
        let done = sqlx::query(
            "UPDATE upstreams SET spec = $1, enabled = $2, updated_at = $3 WHERE name = $4",
        )
        .bind(spec.to_string())
        .bind(enabled as i64)
        .bind(now_ms())
        .bind(name)
        .execute(&self.pool)
        .await
        .map_err(|e| RegistryError::from_sqlx(e, "upstream"))?;
        if done.rows_affected() == 0 {
            return Err(RegistryError::NotFound(format!("upstream {name:?}")));
        }
        self.announce(&Change::Upstream(name.to_string())).await?;
        self.get_upstream(name)
            .await?
            .ok_or_else(|| RegistryError::NotFound(format!("upstream {name:?}")))
    }

    async fn put_upstream(&self, name: &str, spec: &Value, source: &str) -> Result<UpstreamRecord> {
        let now = now_ms();
        sqlx::query(
            "INSERT INTO upstreams (name, spec, enabled, source, created_at, updated_at) \
             VALUES ($1, $2, 1, $3, $4, $5) \
             ON CONFLICT (name) DO UPDATE SET spec = excluded.spec, source = excluded.source, \
             updated_at = excluded.updated_at",
        )
        .bind(name)
        .bind(spec.to_string())
        .bind(source)
        .bind(now)
        .bind(now)
        .execute(&self.pool)
        .await
        .map_err(|e| RegistryError::from_sqlx(e, "upstream"))?;
        self.announce(&Change::Upstream(name.to_string())).await?;
        self.get_upstream(name)
            .await?
            .ok_or_else(|| RegistryError::NotFound(format!("upstream {name:?}")))
    }

    async fn delete_upstream(&self, name: &str) -> Result<()> {
        let mut tx = self
            .pool
            .begin()
            .await
            .map_err(|e| RegistryError::from_sqlx(e, "upstream"))?;
        sqlx::query("DELETE FROM catalog_entries WHERE upstream = $1")
            .bind(name)
            .execute(&mut *tx)
            .await
            .map_err(|e| RegistryError::from_sqlx(e, "catalog"))?;
        let done = sqlx::query("DELETE FROM upstreams WHERE name = $1")
            .bind(name)
            .execute(&mut *tx)
            .await
            .map_err(|e| RegistryError::from_sqlx(e, "upstream"))?;
        if done.rows_affected() == 0 {
            return Err(RegistryError::NotFound(format!("upstream {name:?}")));
        }
        tx.commit()
            .await
            .map_err(|e| RegistryError::from_sqlx(e, "upstream"))?;
        self.announce(&Change::Upstream(name.to_string())).await?;
        Ok(())
    }

    async fn sync_catalog(
        &self,
        upstream: &str,
        kind: EntryKind,
        definitions: &[Value],
    ) -> Result<SyncReport> {
        let mut wanted = std::collections::BTreeMap::new();
        for def in definitions {
            let key = def
                .get(kind.key_field())
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    RegistryError::Invalid(format!(
                        "{} without a string {:?}",
                        kind.as_str(),
                        kind.key_field()
                    ))
                })?;
            // A later duplicate of a key replaces an earlier one, as a host would see it.
            wanted.insert(key.to_string(), (def, content_hash(def)));
        }
        let mut tx = self
            .pool
            .begin()
            .await
            .map_err(|e| RegistryError::from_sqlx(e, "catalog"))?;
        let rows = sqlx::query(
            "SELECT key, content_hash FROM catalog_entries WHERE upstream = $1 AND kind = $2",
        )
        .bind(upstream)
        .bind(kind.as_str())
        .fetch_all(&mut *tx)
        .await
        .map_err(|e| RegistryError::from_sqlx(e, "catalog"))?;
        let mut existing = std::collections::BTreeMap::new();
        for row in &rows {
            let key: String = row.try_get("key").map_err(RegistryError::Database)?;
            let hash: String = row
                .try_get("content_hash")
                .map_err(RegistryError::Database)?;
            existing.insert(key, hash);
        }
        let mut report = SyncReport::default();
        let now = now_ms();
        for (key, (def, hash)) in &wanted {
            match existing.get(key) {
                Some(old) if old == hash => report.unchanged += 1,
                found => {
                    if found.is_some() {
                        report.changed += 1;
                    } else {
                        report.added += 1;
                    }
                    sqlx::query(
                        "INSERT INTO catalog_entries \
                         (upstream, kind, key, definition, content_hash, updated_at) \
                         VALUES ($1, $2, $3, $4, $5, $6) \
                         ON CONFLICT (upstream, kind, key) DO UPDATE SET \
                         definition = excluded.definition, content_hash = excluded.content_hash, \
                         updated_at = excluded.updated_at",
                    )
                    .bind(upstream)
                    .bind(kind.as_str())
                    .bind(key.as_str())
                    .bind(def.to_string())
                    .bind(hash.as_str())
                    .bind(now)
                    .execute(&mut *tx)
                    .await
                    .map_err(|e| RegistryError::from_sqlx(e, "catalog entry"))?;
                }
            }
        }
        for key in existing.keys().filter(|k| !wanted.contains_key(*k)) {
            report.removed += 1;
            sqlx::query(
                "DELETE FROM catalog_entries WHERE upstream = $1 AND kind = $2 AND key = $3",
            )
            .bind(upstream)
            .bind(kind.as_str())
            .bind(key.as_str())
            .execute(&mut *tx)
            .await
            .map_err(|e| RegistryError::from_sqlx(e, "catalog entry"))?;
        }
        tx.commit()
            .await
            .map_err(|e| RegistryError::from_sqlx(e, "catalog"))?;
        Ok(report)
    }

    async fn terminate_session(&self, id_hash: &str) -> Result<()> {
        sqlx::query(
            "INSERT INTO terminated_sessions (id_hash, terminated_at) VALUES ($1, $2) \
             ON CONFLICT (id_hash) DO NOTHING",
        )
        .bind(id_hash)
        .bind(now_ms())
        .execute(&self.pool)
        .await
        .map_err(|e| RegistryError::from_sqlx(e, "session"))?;
        Ok(())
    }

    async fn is_session_terminated(&self, id_hash: &str) -> Result<bool> {
        let row = sqlx::query("SELECT 1 FROM terminated_sessions WHERE id_hash = $1")
            .bind(id_hash)
            .fetch_optional(&self.pool)
            .await
            .map_err(|e| RegistryError::from_sqlx(e, "session"))?;
        Ok(row.is_some())
    }

    fn subscribe(&self) -> tokio::sync::broadcast::Receiver<Change> {
        self.changes.subscribe()
    }

    async fn catalog(&self) -> Result<Vec<CatalogEntry>> {
        let rows = sqlx::query(
            "SELECT upstream, kind, key, definition, content_hash FROM catalog_entries \
             ORDER BY upstream, kind, key",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(|e| RegistryError::from_sqlx(e, "catalog"))?;
        rows.iter()
            .map(|row| {
                let kind: String = row.try_get("kind").map_err(RegistryError::Database)?;
                let def: String = row.try_get("definition").map_err(RegistryError::Database)?;
                Ok(CatalogEntry {
                    upstream: row.try_get("upstream").map_err(RegistryError::Database)?,
                    kind: EntryKind::parse(&kind)
                        .ok_or_else(|| RegistryError::Invalid(format!("unknown kind {kind:?}")))?,
                    key: row.try_get("key").map_err(RegistryError::Database)?,
                    definition: serde_json::from_str(&def).map_err(|e| {
                        RegistryError::Invalid(format!("stored definition is not json: {e}"))
                    })?,
                    content_hash: row
                        .try_get("content_hash")
                        .map_err(RegistryError::Database)?,
                })
            })
            .collect()
    }
}
