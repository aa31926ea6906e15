//! A transaction whose connection is never used again unless it committed.
//!
//! sqlx tracks a connection's transaction depth itself and rolls back a dropped transaction on
//! the connection's next use. When a write fails for lack of disk space, SQLite may already have
//! rolled the transaction back, or refuse the `ROLLBACK` while the failed statement is open;
//! either way sqlx's count and SQLite's state part, and the next `begin` opened a nested
//! savepoint inside a transaction that never ended. Every later write then "committed" into it
//! and was lost (issue 37: 33,908 of 33,908 audit rows on a full disk, all counted as written).
//! Here the transaction is plain SQL on a pooled connection, and a connection whose transaction
//! did not commit is closed rather than returned to the pool: closing ends the transaction on
//! both backends, and the next write starts on a fresh connection.

use std::ops::{Deref, DerefMut};

use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyConnection, AnyPool};

pub(crate) struct Tx {
    conn: PoolConnection<Any>,
    committed: bool,
}

impl Tx {
    /// `sqlite`: the write lock is taken at the start (`BEGIN IMMEDIATE`), where the busy
    /// timeout applies; a deferred transaction that reads and then writes fails at once with
    /// SQLITE_BUSY when another process (the command line) wrote in between.
    pub(crate) async fn begin(pool: &AnyPool, sqlite: bool) -> Result<Self, sqlx::Error> {
        let mut tx = Tx {
            conn: pool.acquire().await?,
            committed: false,
        };
        let begin = if sqlite { "BEGIN IMMEDIATE" } else { "BEGIN" };
        sqlx::query(begin).execute(&mut *tx.conn).await?;
        Ok(tx)
    }

    pub(crate) async fn commit(mut self) -> Result<(), sqlx::Error> {
        sqlx::query("COMMIT").execute(&mut *self.conn).await?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for Tx {
    fn drop(&mut self) {
        if !self.committed {
            self.conn.close_on_drop();
        }
    }
}

impl Deref for Tx {
    type Target = AnyConnection;
    fn deref(&self) -> &AnyConnection {
        &self.conn
    }
}

impl DerefMut for Tx {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        &mut self.conn
    }
}
