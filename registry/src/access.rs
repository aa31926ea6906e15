//! Roles and personal access tokens. Role specs are opaque JSON here (the gateway compiles their
//! patterns); of a token only its sha256 is stored, the token itself is shown once at creation.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::any::AnyRow;
use sqlx::Row;

use crate::change::Change;
use crate::error::{RegistryError, Result};
use crate::sql::{now_ms, SqlRegistry};

/// A role: a name and its grants as the gateway describes them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoleRecord {
    pub name: String,
    pub spec: Value,
    /// `config` (seeded at start-up) or `api`.
    pub source: String,
    pub updated_at: i64,
}

/// A personal access token, without the token.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenRecord {
    /// The public part of the token (it appears in the token itself), also its key.
    pub id: String,
    pub name: String,
    pub owner: String,
    pub roles: Vec<String>,
    /// sha256 (hex) of the whole token.
    #[serde(skip_serializing)]
    pub token_hash: String,
    pub created_at: i64,
    pub expires_at: Option<i64>,
    pub last_used_at: Option<i64>,
    pub revoked_at: Option<i64>,
}

/// Storage of roles and tokens.
#[async_trait]
pub trait AccessStore: Send + Sync {
    async fn list_roles(&self) -> Result<Vec<RoleRecord>>;
    /// Creates or replaces.
    async fn put_role(&self, name: &str, spec: &Value, source: &str) -> Result<RoleRecord>;
    /// `NotFound` when absent.
    async fn delete_role(&self, name: &str) -> Result<()>;

    /// Stores a new token (its hash); `AlreadyExists` when the id is taken.
    async fn create_token(&self, token: &TokenRecord) -> Result<()>;
    async fn get_token(&self, id: &str) -> Result<Option<TokenRecord>>;
    async fn list_tokens(&self) -> Result<Vec<TokenRecord>>;
    /// Marks the token revoked (idempotent); `NotFound` when there is no such token.
    async fn revoke_token(&self, id: &str) -> Result<TokenRecord>;
    async fn touch_token(&self, id: &str, at: i64) -> Result<()>;
    /// Removes the tokens revoked or expired before `before` (ms): the rows removed.
    async fn forget_ended_tokens(&self, before: i64) -> Result<u64>;
}

const TOKEN_COLUMNS: &str =
    "id, name, owner, roles, token_hash, created_at, expires_at, last_used_at, revoked_at";

fn token_from_row(row: &AnyRow) -> Result<TokenRecord> {
    let roles: String = row.try_get("roles").map_err(RegistryError::Database)?;
    Ok(TokenRecord {
        id: row.try_get("id").map_err(RegistryError::Database)?,
        name: row.try_get("name").map_err(RegistryError::Database)?,
        owner: row.try_get("owner").map_err(RegistryError::Database)?,
        roles: serde_json::from_str(&roles)
            .map_err(|e| RegistryError::Invalid(format!("stored roles are not json: {e}")))?,
        token_hash: row.try_get("token_hash").map_err(RegistryError::Database)?,
        created_at: row.try_get("created_at").map_err(RegistryError::Database)?,
        expires_at: row.try_get("expires_at").map_err(RegistryError::Database)?,
        last_used_at: row
            .try_get("last_used_at")
            .map_err(RegistryError::Database)?,
        revoked_at: row.try_get("revoked_at").map_err(RegistryError::Database)?,
    })
}

fn role_from_row(row: &AnyRow) -> Result<RoleRecord> {
    let spec: String = row.try_get("spec").map_err(RegistryError::Database)?;
    Ok(RoleRecord {
        name: row.try_get("name").map_err(RegistryError::Database)?,
        spec: serde_json::from_str(&spec)
            .map_err(|e| RegistryError::Invalid(format!("stored role is not json: {e}")))?,
        source: row.try_get("source").map_err(RegistryError::Database)?,
        updated_at: row.try_get("updated_at").map_err(RegistryError::Database)?,
    })
}

#[async_trait]
impl AccessStore for SqlRegistry {
    async fn list_roles(&self) -> Result<Vec<RoleRecord>> {
        let rows = sqlx::query("SELECT name, spec, source, updated_at FROM roles ORDER BY name")
            .fetch_all(self.pool())
            .await
            .map_err(|e| RegistryError::from_sqlx(e, "roles"))?;
        rows.iter().map(role_from_row).collect()
    }

    async fn put_role(&self, name: &str, spec: &Value, source: &str) -> Result<RoleRecord> {
        let now = now_ms();
        sqlx::query(
            "INSERT INTO roles (name, spec, source, updated_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (name) DO UPDATE SET spec = excluded.spec, source = excluded.source, \
             updated_at = excluded.updated_at",
        )
        .bind(name)
        .bind(spec.to_string())
        .bind(source)
        .bind(now)
        .execute(self.pool())
        .await
        .map_err(|e| RegistryError::from_sqlx(e, "role"))?;
        self.announce(&Change::Role(name.to_string())).await?;
        Ok(RoleRecord {
            name: name.into(),
            spec: spec.clone(),
            source: source.into(),
            updated_at: now,
        })
    }

    async fn delete_role(&self, name: &str) -> Result<()> {
        let done = sqlx::query("DELETE FROM roles WHERE name = $1")
            .bind(name)
            .execute(self.pool())
            .await
            .map_err(|e| RegistryError::from_sqlx(e, "role"))?;
        if done.rows_affected() == 0 {
            return Err(RegistryError::NotFound(format!("role {name:?}")));
        }
        self.announce(&Change::Role(name.to_string())).await
    }

    async fn create_token(&self, t: &TokenRecord) -> Result<()> {
        sqlx::query(&format!(
            "INSERT INTO access_tokens ({TOKEN_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
        ))
        .bind(&t.id)
        .bind(&t.name)
        .bind(&t.owner)
        .bind(serde_json::to_string(&t.roles).unwrap_or_else(|_| "[]".into()))
        .bind(&t.token_hash)
        .bind(t.created_at)
        .bind(t.expires_at)
        .bind(t.last_used_at)
        .bind(t.revoked_at)
        .execute(self.pool())
        .await
        .map_err(|e| RegistryError::from_sqlx(e, &format!("token {:?}", t.id)))?;
        Ok(())
    }

    async fn get_token(&self, id: &str) -> Result<Option<TokenRecord>> {
        let row = sqlx::query(&format!(
            "SELECT {TOKEN_COLUMNS} FROM access_tokens WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(self.pool())
        .await
        .map_err(|e| RegistryError::from_sqlx(e, "token"))?;
        row.as_ref().map(token_from_row).transpose()
    }

    async fn list_tokens(&self) -> Result<Vec<TokenRecord>> {
        let rows = sqlx::query(&format!(
            "SELECT {TOKEN_COLUMNS} FROM access_tokens ORDER BY created_at, id"
        ))
        .fetch_all(self.pool())
        .await
        .map_err(|e| RegistryError::from_sqlx(e, "tokens"))?;
        rows.iter().map(token_from_row).collect()
    }

    async fn revoke_token(&self, id: &str) -> Result<TokenRecord> {
        sqlx::query(
            "UPDATE access_tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL",
        )
        .bind(now_ms())
        .bind(id)
        .execute(self.pool())
        .await
        .map_err(|e| RegistryError::from_sqlx(e, "token"))?;
        let t = self
            .get_token(id)
            .await?
            .ok_or_else(|| RegistryError::NotFound(format!("token {id:?}")))?;
        // What a user authorized by signing in with the token goes with it.
        let signed_in_with = format!("pat:{id}");
        crate::oauth::OAuthStore::revoke_grants(
            self,
            crate::oauth::GrantsOf::SignedInWith(&signed_in_with),
        )
        .await?;
        self.announce(&Change::Token(id.to_string())).await?;
        Ok(t)
    }

    async fn touch_token(&self, id: &str, at: i64) -> Result<()> {
        sqlx::query("UPDATE access_tokens SET last_used_at = $1 WHERE id = $2")
            .bind(at)
            .bind(id)
            .execute(self.pool())
            .await
            .map_err(|e| RegistryError::from_sqlx(e, "token"))?;
        Ok(())
    }

    async fn forget_ended_tokens(&self, before: i64) -> Result<u64> {
        sqlx::query("DELETE FROM access_tokens WHERE revoked_at < $1 OR expires_at < $1")
            .bind(before)
            .execute(self.pool())
            .await
            .map(|done| done.rows_affected())
            .map_err(|e| RegistryError::from_sqlx(e, "tokens"))
    }
}
