//! Connections to upstreams that act as each user (an upstream's `user_oauth`): one row per
//! upstream and holder (a user, or the designated account the catalog is read with). The tokens
//! are sealed by the gateway before they get here: the store holds ciphertext it cannot open,
//! and what admins and users may see (who, when, which scope, until when).

use async_trait::async_trait;
use serde::Serialize;
use sqlx::any::AnyRow;
use sqlx::Row;

use crate::change::Change;
use crate::error::{RegistryError, Result};
use crate::sql::SqlRegistry;

/// One holder's connection to one upstream.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConnectionRecord {
    pub upstream: String,
    /// `user:<principal key>` or `catalog`.
    pub holder: String,
    /// The principal key of who connected it.
    pub connected_by: String,
    /// The tokens and their client, sealed by the gateway; never shown.
    #[serde(skip_serializing)]
    pub sealed: String,
    /// The upstream's authorization server.
    pub issuer: String,
    pub scope: String,
    pub created_at: i64,
    pub updated_at: i64,
    /// When the access token expires (ms), if the server said.
    pub expires_at: Option<i64>,
}

/// Storage of upstream connections.
#[async_trait]
pub trait ConnectionStore: Send + Sync {
    /// Creates or replaces (a new sign-in, a refresh), keeping `created_at`; every replica is told.
    async fn put_connection(&self, c: &ConnectionRecord) -> Result<()>;
    async fn get_connection(
        &self,
        upstream: &str,
        holder: &str,
    ) -> Result<Option<ConnectionRecord>>;
    /// Every connection (of one holder when `holder` is given), by upstream then holder.
    async fn list_connections(&self, holder: Option<&str>) -> Result<Vec<ConnectionRecord>>;
    /// Deletes one; whether it existed. Every replica is told.
    async fn delete_connection(&self, upstream: &str, holder: &str) -> Result<bool>;
    /// Takes the turn to refresh a connection's tokens until `until` (ms), unless another
    /// replica holds an unexpired one at `at`: whether this one has it. None when there is no
    /// such connection.
    async fn lease_connection(
        &self,
        upstream: &str,
        holder: &str,
        at: i64,
        until: i64,
    ) -> Result<Option<bool>>;
    /// Gives the turn back.
    async fn release_connection(&self, upstream: &str, holder: &str) -> Result<()>;
    /// Tells every other replica that `holder` completed the URL elicitation `id` (stores
    /// nothing; a single-process store has nobody to tell).
    async fn announce_elicitation_complete(&self, holder: &str, id: &str) -> Result<()>;

    /// The gateway's registration (RFC 7591, sealed) at `issuer` for `upstream`.
    async fn get_upstream_client(&self, upstream: &str, issuer: &str) -> Result<Option<String>>;
    /// Keeps a registration unless one is kept already (another replica registered at the
    /// same time): the one kept, which every replica then uses.
    async fn keep_upstream_client(
        &self,
        upstream: &str,
        issuer: &str,
        sealed: &str,
        at: i64,
    ) -> Result<String>;
    /// Forgets a registration (the server no longer knows it, or it cannot be opened): the
    /// next connect registers again.
    async fn forget_upstream_client(&self, upstream: &str, issuer: &str) -> Result<()>;
}

const COLUMNS: &str =
    "upstream, holder, connected_by, sealed, issuer, scope, created_at, updated_at, expires_at";

fn from_row(row: &AnyRow) -> Result<ConnectionRecord> {
    let get = |c: &str| -> Result<String> { row.try_get(c).map_err(RegistryError::Database) };
    let num = |c: &str| -> Result<i64> { row.try_get(c).map_err(RegistryError::Database) };
    Ok(ConnectionRecord {
        upstream: get("upstream")?,
        holder: get("holder")?,
        connected_by: get("connected_by")?,
        sealed: get("sealed")?,
        issuer: get("issuer")?,
        scope: get("scope")?,
        created_at: num("created_at")?,
        updated_at: num("updated_at")?,
        expires_at: row.try_get("expires_at").map_err(RegistryError::Database)?,
    })
}

fn db(e: sqlx::Error) -> RegistryError {
    RegistryError::from_sqlx(e, "upstream connection")
}

#[async_trait]
impl ConnectionStore for SqlRegistry {
    async fn put_connection(&self, c: &ConnectionRecord) -> Result<()> {
        sqlx::query(&format!(
            "INSERT INTO upstream_connections ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
             ON CONFLICT (upstream, holder) DO UPDATE SET connected_by = excluded.connected_by, \
             sealed = excluded.sealed, issuer = excluded.issuer, scope = excluded.scope, \
             updated_at = excluded.updated_at, expires_at = excluded.expires_at"
        ))
        .bind(&c.upstream)
        .bind(&c.holder)
        .bind(&c.connected_by)
        .bind(&c.sealed)
        .bind(&c.issuer)
        .bind(&c.scope)
        .bind(c.created_at)
        .bind(c.updated_at)
        .bind(c.expires_at)
        .execute(self.pool())
        .await
        .map_err(db)?;
        self.announce(&Change::Connection(c.upstream.clone(), c.holder.clone()))
            .await
    }

    async fn get_connection(
        &self,
        upstream: &str,
        holder: &str,
    ) -> Result<Option<ConnectionRecord>> {
        let row = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM upstream_connections WHERE upstream = $1 AND holder = $2"
        ))
        .bind(upstream)
        .bind(holder)
        .fetch_optional(self.pool())
        .await
        .map_err(db)?;
        row.as_ref().map(from_row).transpose()
    }

    async fn list_connections(&self, holder: Option<&str>) -> Result<Vec<ConnectionRecord>> {
        let filter = if holder.is_some() {
            "WHERE holder = $1 "
        } else {
            ""
        };
        let sql =
            format!("SELECT {COLUMNS} FROM upstream_connections {filter}ORDER BY upstream, holder");
        let mut q = sqlx::query(&sql);
        if let Some(h) = holder {
            q = q.bind(h);
        }
        let rows = q.fetch_all(self.pool()).await.map_err(db)?;
        rows.iter().map(from_row).collect()
    }

    async fn lease_connection(
        &self,
        upstream: &str,
        holder: &str,
        at: i64,
        until: i64,
    ) -> Result<Option<bool>> {
        let taken = sqlx::query(
            "UPDATE upstream_connections SET refreshing_until = $1 WHERE upstream = $2 \
             AND holder = $3 AND (refreshing_until IS NULL OR refreshing_until < $4)",
        )
        .bind(until)
        .bind(upstream)
        .bind(holder)
        .bind(at)
        .execute(self.pool())
        .await
        .map_err(|e| RegistryError::from_sqlx(e, "connection"))?
        .rows_affected()
            == 1;
        if taken {
            return Ok(Some(true));
        }
        Ok(self.get_connection(upstream, holder).await?.map(|_| false))
    }

    async fn release_connection(&self, upstream: &str, holder: &str) -> Result<()> {
        sqlx::query(
            "UPDATE upstream_connections SET refreshing_until = NULL \
             WHERE upstream = $1 AND holder = $2",
        )
        .bind(upstream)
        .bind(holder)
        .execute(self.pool())
        .await
        .map_err(|e| RegistryError::from_sqlx(e, "connection"))?;
        Ok(())
    }

    async fn delete_connection(&self, upstream: &str, holder: &str) -> Result<bool> {
        let done =
            sqlx::query("DELETE FROM upstream_connections WHERE upstream = $1 AND holder = $2")
                .bind(upstream)
                .bind(holder)
                .execute(self.pool())
                .await
                .map_err(db)?;
        let existed = done.rows_affected() > 0;
        if existed {
            self.announce(&Change::Connection(upstream.into(), holder.into()))
                .await?;
        }
        Ok(existed)
    }

    async fn announce_elicitation_complete(&self, holder: &str, id: &str) -> Result<()> {
        self.announce(&Change::ElicitationComplete(holder.into(), id.into()))
            .await
    }

    async fn get_upstream_client(&self, upstream: &str, issuer: &str) -> Result<Option<String>> {
        let row =
            sqlx::query("SELECT sealed FROM upstream_clients WHERE upstream = $1 AND issuer = $2")
                .bind(upstream)
                .bind(issuer)
                .fetch_optional(self.pool())
                .await
                .map_err(db)?;
        row.map(|r| {
            r.try_get::<String, _>("sealed")
                .map_err(RegistryError::Database)
        })
        .transpose()
    }

    async fn keep_upstream_client(
        &self,
        upstream: &str,
        issuer: &str,
        sealed: &str,
        at: i64,
    ) -> Result<String> {
        sqlx::query(
            "INSERT INTO upstream_clients (upstream, issuer, sealed, created_at) \
             VALUES ($1, $2, $3, $4) ON CONFLICT (upstream, issuer) DO NOTHING",
        )
        .bind(upstream)
        .bind(issuer)
        .bind(sealed)
        .bind(at)
        .execute(self.pool())
        .await
        .map_err(db)?;
        Ok(self
            .get_upstream_client(upstream, issuer)
            .await?
            .unwrap_or_else(|| sealed.to_string()))
    }

    async fn forget_upstream_client(&self, upstream: &str, issuer: &str) -> Result<()> {
        sqlx::query("DELETE FROM upstream_clients WHERE upstream = $1 AND issuer = $2")
            .bind(upstream)
            .bind(issuer)
            .execute(self.pool())
            .await
            .map_err(db)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_registration_is_kept_once_per_upstream_and_issuer() {
        let dir = tempfile::TempDir::new().unwrap();
        let url = format!("sqlite://{}/c.db?mode=rwc", dir.path().display());
        let r = SqlRegistry::open(&url, Default::default()).await.unwrap();
        assert_eq!(
            r.get_upstream_client("gh", "https://as").await.unwrap(),
            None
        );
        // Two replicas registered at once: the first one kept is the one both use.
        let first = r.keep_upstream_client("gh", "https://as", "one", 1).await;
        let second = r.keep_upstream_client("gh", "https://as", "two", 2).await;
        assert_eq!(first.unwrap(), "one");
        assert_eq!(second.unwrap(), "one");
        assert_eq!(
            r.keep_upstream_client("gh", "https://other", "three", 3)
                .await
                .unwrap(),
            "three"
        );
        r.forget_upstream_client("gh", "https://as").await.unwrap();
        assert_eq!(
            r.get_upstream_client("gh", "https://as").await.unwrap(),
            None
        );
        assert_eq!(
            r.get_upstream_client("gh", "https://other").await.unwrap(),
            Some("three".into())
        );
    }

    #[tokio::test]
    async fn a_removed_upstream_takes_its_connections_and_registrations_with_it() {
        use crate::store::Registry;
        let dir = tempfile::TempDir::new().unwrap();
        let url = format!("sqlite://{}/c.db?mode=rwc", dir.path().display());
        let r = SqlRegistry::open(&url, Default::default()).await.unwrap();
        let spec = serde_json::json!({"transport": "http", "url": "https://a/mcp"});
        for name in ["gh", "other"] {
            r.create_upstream(name, &spec, "api").await.unwrap();
            r.put_connection(&ConnectionRecord {
                upstream: name.into(),
                holder: "user:alice".into(),
                connected_by: "alice".into(),
                sealed: "sealed".into(),
                issuer: "https://as".into(),
                scope: "tools".into(),
                created_at: 1,
                updated_at: 1,
                expires_at: None,
            })
            .await
            .unwrap();
            r.keep_upstream_client(name, "https://as", "reg", 1)
                .await
                .unwrap();
        }
        r.delete_upstream("gh").await.unwrap();
        let left: Vec<String> = r
            .list_connections(None)
            .await
            .unwrap()
            .into_iter()
            .map(|c| c.upstream)
            .collect();
        assert_eq!(left, ["other"]);
        assert_eq!(
            r.get_upstream_client("gh", "https://as").await.unwrap(),
            None
        );
        assert!(r
            .get_upstream_client("other", "https://as")
            .await
            .unwrap()
            .is_some());
    }
}
