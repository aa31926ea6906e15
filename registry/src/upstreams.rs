//! [`Registry`] on the SQL registry: upstreams, their catalog, and ended sessions.

use async_trait::async_trait;
use serde_json::Value;
use sqlx::any::AnyRow;
use sqlx::Row;

use crate::change::Change;
use crate::error::{RegistryError, Result};
use crate::hash::content_hash;
use crate::model::{CatalogEntry, EntryKind, SyncReport, UpstreamRecord};
use crate::sql::{now_ms, SqlRegistry};
use crate::store::Registry;

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
            .begin()
            .await
            .map_err(|e| RegistryError::from_sqlx(e, "upstream"))?;
        sqlx::query("DELETE FROM catalog_entries WHERE upstream = $1")
            .bind(name)
            .execute(&mut *tx)
            .await
            .map_err(|e| RegistryError::from_sqlx(e, "catalog"))?;
        // Its users' tokens and the gateway's registrations at its authorization server go
        // with it: nothing of a removed upstream is kept, and an upstream registered later
        // under its name (perhaps another server) starts with none.
        for table in ["upstream_connections", "upstream_clients"] {
            sqlx::query(&format!("DELETE FROM {table} WHERE upstream = $1"))
                .bind(name)
                .execute(&mut *tx)
                .await
                .map_err(|e| RegistryError::from_sqlx(e, "connection"))?;
        }
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
        self.announce(&Change::SessionEnded(id_hash.to_string()))
            .await
    }

    async fn is_session_terminated(&self, id_hash: &str) -> Result<bool> {
        let row = sqlx::query("SELECT 1 FROM terminated_sessions WHERE id_hash = $1")
            .bind(id_hash)
            .fetch_optional(&self.pool)
            .await
            .map_err(|e| RegistryError::from_sqlx(e, "session"))?;
        Ok(row.is_some())
    }

    async fn sessions_terminated_since(&self, since: i64) -> Result<Vec<String>> {
        sqlx::query_scalar("SELECT id_hash FROM terminated_sessions WHERE terminated_at >= $1")
            .bind(since)
            .fetch_all(&self.pool)
            .await
            .map_err(|e| RegistryError::from_sqlx(e, "session"))
    }

    async fn forget_terminated_sessions(&self, before: i64) -> Result<u64> {
        sqlx::query("DELETE FROM terminated_sessions WHERE terminated_at < $1")
            .bind(before)
            .execute(&self.pool)
            .await
            .map(|done| done.rows_affected())
            .map_err(|e| RegistryError::from_sqlx(e, "session"))
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
                    definition: serde_json::from_str::<Value>(&def)
                        .map_err(|e| {
                            RegistryError::Invalid(format!("stored definition is not json: {e}"))
                        })?
                        .into(),
                    content_hash: row
                        .try_get("content_hash")
                        .map_err(RegistryError::Database)?,
                })
            })
            .collect()
    }
}
