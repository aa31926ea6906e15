//! Tool pinning (rug-pull defence): per upstream and tool, the definition an admin approved (or
//! that was trusted the first time the upstream was seen), identified by its pin hash, and the
//! changed definition an admin last rejected. Every change is announced, so that every replica
//! serves the same approved definitions.

use async_trait::async_trait;
use serde::Serialize;
use sqlx::any::AnyRow;
use sqlx::Row;

use crate::change::Change;
use crate::error::{RegistryError, Result};
use crate::sql::SqlRegistry;

/// One tool's pin.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PinRecord {
    pub upstream: String,
    /// The upstream's own name of the tool.
    pub tool: String,
    /// The approved definition's pin hash; `None` while none was approved.
    pub hash: Option<String>,
    /// The approved definition (JSON text).
    #[serde(skip)]
    pub definition: Option<String>,
    /// Who approved it (a principal key, or `first use`).
    pub approved_by: String,
    pub approved_at: i64,
    /// The pin hash of the changed definition an admin last rejected.
    pub rejected_hash: Option<String>,
}

/// Storage of tool pins.
#[async_trait]
pub trait PinStore: Send + Sync {
    /// One upstream's pins, by tool.
    async fn list_pins(&self, upstream: &str) -> Result<Vec<PinRecord>>;
    /// Approves a definition (replacing what was approved, forgetting a rejection).
    async fn approve_pin(&self, pin: &PinRecord) -> Result<()>;
    /// Records that `hash` was rejected for `tool`, keeping what was approved.
    async fn reject_pin(&self, upstream: &str, tool: &str, hash: &str, by: &str) -> Result<()>;
    /// Pins the first definitions seen of an upstream that has none yet (trust on first use);
    /// pins that exist are kept (another replica may have been first). How many were added.
    async fn pin_first_use(&self, pins: &[PinRecord]) -> Result<usize>;
}

const COLUMNS: &str = "upstream, tool, hash, definition, approved_by, approved_at, rejected_hash";

fn from_row(row: &AnyRow) -> Result<PinRecord> {
    let text = |c: &str| -> Result<String> { row.try_get(c).map_err(RegistryError::Database) };
    let opt =
        |c: &str| -> Result<Option<String>> { row.try_get(c).map_err(RegistryError::Database) };
    Ok(PinRecord {
        upstream: text("upstream")?,
        tool: text("tool")?,
        hash: opt("hash")?,
        definition: opt("definition")?,
        approved_by: text("approved_by")?,
        approved_at: row
            .try_get("approved_at")
            .map_err(RegistryError::Database)?,
        rejected_hash: opt("rejected_hash")?,
    })
}

fn db(e: sqlx::Error) -> RegistryError {
    RegistryError::from_sqlx(e, "tool pin")
}

impl SqlRegistry {
    /// Inserts an approved pin; `on_conflict` says what becomes of one already there. Rows added.
    async fn insert_pin(&self, p: &PinRecord, on_conflict: &str) -> Result<usize> {
        let done = sqlx::query(&format!(
            "INSERT INTO tool_pins ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, NULL) \
             ON CONFLICT (upstream, tool) {on_conflict}"
        ))
        .bind(&p.upstream)
        .bind(&p.tool)
        .bind(&p.hash)
        .bind(&p.definition)
        .bind(&p.approved_by)
        .bind(p.approved_at)
        .execute(self.pool())
        .await
        .map_err(db)?;
        Ok(done.rows_affected() as usize)
    }
}

#[async_trait]
impl PinStore for SqlRegistry {
    async fn list_pins(&self, upstream: &str) -> Result<Vec<PinRecord>> {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM tool_pins WHERE upstream = $1 ORDER BY tool"
        ))
        .bind(upstream)
        .fetch_all(self.pool())
        .await
        .map_err(db)?;
        rows.iter().map(from_row).collect()
    }

    async fn approve_pin(&self, p: &PinRecord) -> Result<()> {
        self.insert_pin(
            p,
            "DO UPDATE SET hash = excluded.hash, definition = excluded.definition, \
             approved_by = excluded.approved_by, approved_at = excluded.approved_at, \
             rejected_hash = NULL",
        )
        .await?;
        self.announce(&Change::Pins(p.upstream.clone())).await
    }

    async fn reject_pin(&self, upstream: &str, tool: &str, hash: &str, by: &str) -> Result<()> {
        sqlx::query(&format!(
            "INSERT INTO tool_pins ({COLUMNS}) VALUES ($1, $2, NULL, NULL, $3, $4, $5) \
             ON CONFLICT (upstream, tool) DO UPDATE SET rejected_hash = excluded.rejected_hash"
        ))
        .bind(upstream)
        .bind(tool)
        .bind(by)
        .bind(crate::now_ms())
        .bind(hash)
        .execute(self.pool())
        .await
        .map_err(db)?;
        self.announce(&Change::Pins(upstream.into())).await
    }

    async fn pin_first_use(&self, pins: &[PinRecord]) -> Result<usize> {
        let Some(first) = pins.first() else {
            return Ok(0);
        };
        let mut added = 0;
        for p in pins {
            added += self.insert_pin(p, "DO NOTHING").await?;
        }
        if added > 0 {
            self.announce(&Change::Pins(first.upstream.clone())).await?;
        }
        Ok(added)
    }
}
