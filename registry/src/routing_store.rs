//! Storage for semantic routing: tool embeddings keyed by (model id, text hash), so that a
//! restart or another replica does not embed again; and virtual servers (opaque JSON specs the
//! gateway validates).

use std::collections::HashMap;

use async_trait::async_trait;
use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::Row;

use crate::change::Change;
use crate::error::{RegistryError, Result};
use crate::sql::{now_ms, SqlRegistry};

/// A named endpoint with its own tools and routing mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VirtualServerRecord {
    pub name: String,
    pub spec: Value,
    pub created_at: i64,
    pub updated_at: i64,
}

#[async_trait]
pub trait RoutingStore: Send + Sync {
    /// The stored vectors of these texts under this model (absent ones are left out).
    async fn embeddings(&self, model: &str, hashes: &[String])
        -> Result<HashMap<String, Vec<f32>>>;
    /// Stores vectors (an existing one for the same model and hash is kept).
    async fn put_embeddings(&self, model: &str, vectors: &[(String, Vec<f32>)]) -> Result<()>;
    /// Marks the stored vectors of these texts as in use at `at`: those last marked (or, never
    /// marked, stored) before `unless_since` only, so a replica rewrites each row seldom. The
    /// rows marked.
    async fn touch_embeddings(
        &self,
        model: &str,
        hashes: &[String],
        at: i64,
        unless_since: i64,
    ) -> Result<u64>;
    /// Deletes the vectors of every model last marked in use (or, never marked, stored) before
    /// `before`: the rows deleted.
    async fn forget_embeddings(&self, before: i64) -> Result<u64>;

    async fn list_virtual_servers(&self) -> Result<Vec<VirtualServerRecord>>;
    /// Creates (`create`: `AlreadyExists` when taken) or replaces (`NotFound` when absent).
    async fn put_virtual_server(
        &self,
        name: &str,
        spec: &Value,
        create: bool,
    ) -> Result<VirtualServerRecord>;
    /// `NotFound` when absent.
    async fn delete_virtual_server(&self, name: &str) -> Result<()>;
}

fn encode(v: &[f32]) -> String {
    let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    base64::engine::general_purpose::STANDARD_NO_PAD.encode(bytes)
}

fn decode(s: &str) -> Option<Vec<f32>> {
    let bytes = base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(s)
        .ok()?;
    (bytes.len() % 4 == 0).then(|| {
        bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    })
}

/// Hashes per query: well under both backends' bind-parameter limits.
const CHUNK: usize = 500;

#[async_trait]
impl RoutingStore for SqlRegistry {
    async fn embeddings(
        &self,
        model: &str,
        hashes: &[String],
    ) -> Result<HashMap<String, Vec<f32>>> {
        let mut out = HashMap::new();
        for chunk in hashes.chunks(CHUNK) {
            let marks: Vec<String> = (0..chunk.len()).map(|i| format!("${}", i + 2)).collect();
            let sql = format!(
                "SELECT text_hash, vector FROM tool_embeddings WHERE model = $1 AND text_hash IN ({})",
                marks.join(", ")
            );
            let mut q = sqlx::query(&sql).bind(model);
            for h in chunk {
                q = q.bind(h);
            }
            let rows = q
                .fetch_all(self.pool())
                .await
                .map_err(|e| RegistryError::from_sqlx(e, "embeddings"))?;
            for row in rows {
                let hash: String = row.try_get("text_hash").map_err(RegistryError::Database)?;
                let vector: String = row.try_get("vector").map_err(RegistryError::Database)?;
                // A row that does not decode is embedded again rather than trusted.
                if let Some(v) = decode(&vector) {
                    out.insert(hash, v);
                }
            }
        }
        Ok(out)
    }

    async fn put_embeddings(&self, model: &str, vectors: &[(String, Vec<f32>)]) -> Result<()> {
        let now = now_ms();
        let mut tx = self
            .begin()
            .await
            .map_err(|e| RegistryError::from_sqlx(e, "embeddings"))?;
        for (hash, v) in vectors {
            sqlx::query(
                "INSERT INTO tool_embeddings (model, text_hash, vector, created_at) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT (model, text_hash) DO NOTHING",
            )
            .bind(model)
            .bind(hash)
            .bind(encode(v))
            .bind(now)
            .execute(&mut *tx)
            .await
            .map_err(|e| RegistryError::from_sqlx(e, "embeddings"))?;
        }
        tx.commit()
            .await
            .map_err(|e| RegistryError::from_sqlx(e, "embeddings"))
    }

    async fn touch_embeddings(
        &self,
        model: &str,
        hashes: &[String],
        at: i64,
        unless_since: i64,
    ) -> Result<u64> {
        let mut marked = 0;
        for chunk in hashes.chunks(CHUNK) {
            let marks: Vec<String> = (0..chunk.len()).map(|i| format!("${}", i + 4)).collect();
            let sql = format!(
                "UPDATE tool_embeddings SET used_at = $1 WHERE model = $2 \
                 AND COALESCE(used_at, created_at) < $3 AND text_hash IN ({})",
                marks.join(", ")
            );
            let mut q = sqlx::query(&sql).bind(at).bind(model).bind(unless_since);
            for h in chunk {
                q = q.bind(h);
            }
            marked += q
                .execute(self.pool())
                .await
                .map_err(|e| RegistryError::from_sqlx(e, "embeddings"))?
                .rows_affected();
        }
        Ok(marked)
    }

    async fn forget_embeddings(&self, before: i64) -> Result<u64> {
        sqlx::query("DELETE FROM tool_embeddings WHERE COALESCE(used_at, created_at) < $1")
            .bind(before)
            .execute(self.pool())
            .await
            .map(|done| done.rows_affected())
            .map_err(|e| RegistryError::from_sqlx(e, "embeddings"))
    }

    async fn list_virtual_servers(&self) -> Result<Vec<VirtualServerRecord>> {
        let rows = sqlx::query(
            "SELECT name, spec, created_at, updated_at FROM virtual_servers ORDER BY name",
        )
        .fetch_all(self.pool())
        .await
        .map_err(|e| RegistryError::from_sqlx(e, "virtual servers"))?;
        rows.iter()
            .map(|row| {
                let spec: String = row.try_get("spec").map_err(RegistryError::Database)?;
                Ok(VirtualServerRecord {
                    name: row.try_get("name").map_err(RegistryError::Database)?,
                    spec: serde_json::from_str(&spec).map_err(|e| {
                        RegistryError::Invalid(format!("stored virtual server is not json: {e}"))
                    })?,
                    created_at: row.try_get("created_at").map_err(RegistryError::Database)?,
                    updated_at: row.try_get("updated_at").map_err(RegistryError::Database)?,
                })
            })
            .collect()
    }

    async fn put_virtual_server(
        &self,
        name: &str,
        spec: &Value,
        create: bool,
    ) -> Result<VirtualServerRecord> {
        let now = now_ms();
        let created_at = if create {
            sqlx::query(
                "INSERT INTO virtual_servers (name, spec, created_at, updated_at) \
                 VALUES ($1, $2, $3, $3)",
            )
            .bind(name)
            .bind(spec.to_string())
            .bind(now)
            .execute(self.pool())
            .await
            .map_err(|e| RegistryError::from_sqlx(e, "virtual server"))?;
            now
        } else {
            let row = sqlx::query(
                "UPDATE virtual_servers SET spec = $1, updated_at = $2 WHERE name = $3 \
                 RETURNING created_at",
            )
            .bind(spec.to_string())
            .bind(now)
            .bind(name)
            .fetch_optional(self.pool())
            .await
            .map_err(|e| RegistryError::from_sqlx(e, "virtual server"))?
            .ok_or_else(|| RegistryError::NotFound(format!("virtual server {name}")))?;
            row.try_get("created_at").map_err(RegistryError::Database)?
        };
        self.announce(&Change::VirtualServer(name.to_string()))
            .await?;
        Ok(VirtualServerRecord {
            name: name.into(),
            spec: spec.clone(),
            created_at,
            updated_at: now,
        })
    }

    async fn delete_virtual_server(&self, name: &str) -> Result<()> {
        let done = sqlx::query("DELETE FROM virtual_servers WHERE name = $1")
            .bind(name)
            .execute(self.pool())
            .await
            .map_err(|e| RegistryError::from_sqlx(e, "virtual server"))?;
        if done.rows_affected() == 0 {
            return Err(RegistryError::NotFound(format!("virtual server {name}")));
        }
        self.announce(&Change::VirtualServer(name.to_string()))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_survive_the_text_encoding() {
        let v = vec![0.25, -1.5, f32::MIN_POSITIVE, 3.0e7];
        assert_eq!(decode(&encode(&v)).unwrap(), v);
        assert!(decode("not base64!").is_none());
    }
}
