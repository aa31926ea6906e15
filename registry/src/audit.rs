//! The audit log: append-only rows, each carrying a hash chained to the row before it, so that an
//! edited, deleted or inserted row breaks the chain at a place [`AuditStore::verify_audit`] names.
//!
//! Writers lock the chain's head row (`audit_head`) in the transaction that appends a batch, so
//! several replicas sharing one Postgres append one batch at a time and the chain stays linear.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use sqlx::any::AnyRow;
use sqlx::Row;

use crate::error::{RegistryError, Result};
use crate::sql::SqlRegistry;

/// What happened, as the gateway reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct AuditEntry {
    /// Milliseconds since the Unix epoch.
    pub at: i64,
    pub principal: String,
    pub token_id: Option<String>,
    pub session: Option<String>,
    /// `tools/call`, `resources/read`, `prompts/get`, or `admin.<what>.<verb>`.
    pub action: String,
    pub upstream: Option<String>,
    /// The tool or prompt name, resource URI, or admin object, as the caller named it.
    pub target: Option<String>,
    /// `ok`, `error` or `denied`.
    pub outcome: String,
    pub error_class: Option<String>,
    pub latency_ms: i64,
    /// The arguments as JSON text, secrets redacted, size-capped.
    pub arguments: Option<String>,
}

/// A stored row: the entry, its place in the chain and its hashes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditRow {
    pub seq: i64,
    #[serde(flatten)]
    pub entry: AuditEntry,
    pub prev_hash: String,
    pub hash: String,
}

/// A filter over the log; newest first.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct AuditQuery {
    pub principal: Option<String>,
    pub target: Option<String>,
    pub action: Option<String>,
    /// From this time (ms since the epoch, inclusive).
    pub since: Option<i64>,
    /// Until this time (ms since the epoch, exclusive).
    pub until: Option<i64>,
    /// Only rows older than this sequence number (paging).
    pub before_seq: Option<i64>,
    pub limit: Option<i64>,
}

/// The outcome of checking the chain.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VerifyReport {
    pub ok: bool,
    /// Rows checked.
    pub checked: u64,
    /// The last sequence number the head records.
    pub head_seq: i64,
    /// The last row removed by retention (0: none); the chain is checked from the row after.
    pub pruned_through: i64,
    /// The first row where the chain breaks, and why.
    pub first_broken: Option<BrokenLink>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BrokenLink {
    pub seq: i64,
    pub reason: String,
}

/// The hash of a row: its predecessor's hash and its own content.
pub fn chain_hash(prev_hash: &str, seq: i64, entry: &AuditEntry) -> String {
    use std::io::Write;
    let mut h = Sha256::new();
    h.update(prev_hash.as_bytes());
    // Written straight into the hasher: the same bytes as formatting them first.
    let _ = write!(h, "\n{seq}\n");
    let _ = serde_json::to_writer(&mut h, entry);
    crate::hash::to_hex(&h.finalize())
}

#[async_trait]
pub trait AuditStore: Send + Sync {
    /// Appends the entries in order, chained, in one transaction.
    async fn append_audit(&self, entries: &[AuditEntry]) -> Result<()>;
    async fn query_audit(&self, q: &AuditQuery) -> Result<Vec<AuditRow>>;
    /// Recomputes the whole chain and reports the first broken link.
    async fn verify_audit(&self) -> Result<VerifyReport>;
    /// Removes rows from the start of the chain up to the first written at or after `before`
    /// (ms), in transactions of at most [`PRUNE_CHUNK`] rows, each recording the last removed
    /// row as the chain's anchor. The rows removed.
    async fn prune_audit(&self, before: i64) -> Result<u64>;
}

/// Rows removed per transaction by [`AuditStore::prune_audit`]: each holds the anchor's lock
/// only briefly.
pub const PRUNE_CHUNK: i64 = 10_000;

const COLUMNS: &str = "seq, at, principal, token_id, session, action, upstream, target, outcome, \
                       error_class, latency_ms, arguments, prev_hash, hash";
/// The most rows one INSERT statement takes (14 parameters each; well under every backend's
/// limit). A batch goes out in statements of a power of two rows each (at most this many), so
/// that a handful of statement texts cover every batch size and each is compiled once per
/// connection and then reused from sqlx's statement cache: batches of every size from 1 to 500
/// made SQLite parse and compile a new statement of up to 2,800 parameters for nearly every
/// batch.
const ROWS_PER_INSERT: usize = 256;

/// The row counts of the statements a batch of `n` rows goes out in: `n`'s binary digits,
/// largest first (`ROWS_PER_INSERT` as often as it fits).
fn statement_sizes(n: usize) -> impl Iterator<Item = usize> {
    let full = n / ROWS_PER_INSERT;
    let rest = n % ROWS_PER_INSERT;
    std::iter::repeat_n(ROWS_PER_INSERT, full).chain(
        (0..usize::BITS)
            .rev()
            .map(|b| 1usize << b)
            .filter(move |size| rest & size != 0),
    )
}
const VERIFY_PAGE: i64 = 2000;

/// `INSERT … VALUES (…), …` for `rows` rows: `?` for SQLite, numbered for Postgres.
fn insert_sql(rows: usize, sqlite: bool) -> String {
    use std::fmt::Write;
    // `OR FAIL` on SQLite: a multi-row INSERT that may abort keeps a statement journal of every
    // page it changes, to undo itself alone. A failed batch is undone whole (its transaction is
    // rolled back), so the journal only cost time: 1.3% of a call's instructions.
    let verb = if sqlite { "INSERT OR FAIL" } else { "INSERT" };
    let mut sql = format!("{verb} INTO audit_log ({COLUMNS}) VALUES ");
    for i in 0..rows {
        sql.push_str(if i == 0 { "(" } else { ",(" });
        for k in 1..=14 {
            if k > 1 {
                sql.push(',');
            }
            if sqlite {
                sql.push('?');
            } else {
                let _ = write!(sql, "${}", i * 14 + k);
            }
        }
        sql.push(')');
    }
    sql
}

fn row_of(row: &AnyRow) -> Result<AuditRow> {
    let get_s = |c: &str| row.try_get::<String, _>(c).map_err(RegistryError::Database);
    let get_o = |c: &str| {
        row.try_get::<Option<String>, _>(c)
            .map_err(RegistryError::Database)
    };
    Ok(AuditRow {
        seq: row.try_get("seq").map_err(RegistryError::Database)?,
        entry: AuditEntry {
            at: row.try_get("at").map_err(RegistryError::Database)?,
            principal: get_s("principal")?,
            token_id: get_o("token_id")?,
            session: get_o("session")?,
            action: get_s("action")?,
            upstream: get_o("upstream")?,
            target: get_o("target")?,
            outcome: get_s("outcome")?,
            error_class: get_o("error_class")?,
            latency_ms: row.try_get("latency_ms").map_err(RegistryError::Database)?,
            arguments: get_o("arguments")?,
        },
        prev_hash: get_s("prev_hash")?,
        hash: get_s("hash")?,
    })
}

#[async_trait]
impl AuditStore for SqlRegistry {
    async fn append_audit(&self, entries: &[AuditEntry]) -> Result<()> {
        if entries.is_empty() {
            return Ok(());
        }
        let err = |e| RegistryError::from_sqlx(e, "audit log");
        let mut tx = self.begin().await.map_err(err)?;
        let lock = self.row_lock();
        let head = sqlx::query(&format!(
            "SELECT seq, hash FROM audit_head WHERE id = 1{lock}"
        ))
        .fetch_one(&mut *tx)
        .await
        .map_err(err)?;
        let first: i64 = head.try_get("seq").map_err(RegistryError::Database)?;
        // The rows bind borrowed text (no copy per column and row), so the chain is computed
        // first: `hashes[i]` is the hash before entry `i`, `hashes[i + 1]` its own.
        let mut hashes: Vec<String> = Vec::with_capacity(entries.len() + 1);
        hashes.push(head.try_get("hash").map_err(RegistryError::Database)?);
        for (i, e) in entries.iter().enumerate() {
            let hash = chain_hash(&hashes[i], first + 1 + i as i64, e);
            hashes.push(hash);
        }
        // SQLite takes anonymous `?` parameters: binding finds each numbered parameter's name by
        // a linear search, which made a 200-row insert (2,800 parameters) quadratic and the audit
        // writer the gateway's hottest code under load.
        let sqlite = self.backend_name() != "postgres";
        let mut start = 0;
        for size in statement_sizes(entries.len()) {
            let chunk = &entries[start..start + size];
            let sql = insert_sql(size, sqlite);
            let q = sqlx::query(&sql);
            let q = chunk.iter().enumerate().fold(q, |q, (i, e)| {
                let i = start + i;
                q.bind(first + 1 + i as i64)
                    .bind(e.at)
                    .bind(e.principal.as_str())
                    .bind(e.token_id.as_deref())
                    .bind(e.session.as_deref())
                    .bind(e.action.as_str())
                    .bind(e.upstream.as_deref())
                    .bind(e.target.as_deref())
                    .bind(e.outcome.as_str())
                    .bind(e.error_class.as_deref())
                    .bind(e.latency_ms)
                    .bind(e.arguments.as_deref())
                    .bind(hashes[i].as_str())
                    .bind(hashes[i + 1].as_str())
            });
            q.execute(&mut *tx).await.map_err(err)?;
            start += size;
        }
        let seq = first + entries.len() as i64;
        let prev = hashes.pop().unwrap_or_default();
        sqlx::query("UPDATE audit_head SET seq = $1, hash = $2 WHERE id = 1")
            .bind(seq)
            .bind(prev)
            .execute(&mut *tx)
            .await
            .map_err(err)?;
        tx.commit().await.map_err(err)?;
        Ok(())
    }

    async fn query_audit(&self, q: &AuditQuery) -> Result<Vec<AuditRow>> {
        let mut sql = format!("SELECT {COLUMNS} FROM audit_log WHERE 1 = 1");
        let mut n = 0;
        let mut next = |col: &str, op: &str| {
            n += 1;
            format!(" AND {col} {op} ${n}")
        };
        if q.principal.is_some() {
            sql += &next("principal", "=");
        }
        if q.target.is_some() {
            sql += &next("target", "=");
        }
        if q.action.is_some() {
            sql += &next("action", "=");
        }
        if q.since.is_some() {
            sql += &next("at", ">=");
        }
        if q.until.is_some() {
            sql += &next("at", "<");
        }
        if q.before_seq.is_some() {
            sql += &next("seq", "<");
        }
        sql += &format!(" ORDER BY seq DESC LIMIT ${}", n + 1);
        let mut query = sqlx::query(&sql);
        for s in [&q.principal, &q.target, &q.action].into_iter().flatten() {
            query = query.bind(s.clone());
        }
        for v in [q.since, q.until, q.before_seq].into_iter().flatten() {
            query = query.bind(v);
        }
        query = query.bind(q.limit.unwrap_or(100).clamp(1, 10_000));
        let rows = query
            .fetch_all(self.pool())
            .await
            .map_err(|e| RegistryError::from_sqlx(e, "audit log"))?;
        rows.iter().map(row_of).collect()
    }

    async fn verify_audit(&self) -> Result<VerifyReport> {
        // Retention may remove rows while the chain is read: a row gone because the anchor
        // moved past it is checked again from the new anchor, not reported missing.
        let mut anchor = self.audit_anchor().await?;
        loop {
            let report = self.verify_from(&anchor).await?;
            let now = self.audit_anchor().await?;
            if report.ok || now == anchor {
                return Ok(report);
            }
            anchor = now;
        }
    }

    async fn prune_audit(&self, before: i64) -> Result<u64> {
        let err = |e| RegistryError::from_sqlx(e, "audit log");
        let lock = self.row_lock();
        let mut removed = 0;
        loop {
            let mut tx = self.begin().await.map_err(err)?;
            let anchor: i64 =
                sqlx::query_scalar(&format!("SELECT seq FROM audit_anchor WHERE id = 1{lock}"))
                    .fetch_one(&mut *tx)
                    .await
                    .map_err(err)?;
            // Rows are written in about the order of their time: the chain is cut before the
            // first row of the retention's edge (found by the time index, not by a scan).
            let edge: Option<i64> =
                sqlx::query_scalar("SELECT seq FROM audit_log WHERE at >= $1 ORDER BY at LIMIT 1")
                    .bind(before)
                    .fetch_optional(&mut *tx)
                    .await
                    .map_err(err)?;
            let end = match edge {
                Some(seq) => seq - 1,
                None => sqlx::query_scalar::<_, Option<i64>>("SELECT MAX(seq) FROM audit_log")
                    .fetch_one(&mut *tx)
                    .await
                    .map_err(err)?
                    .unwrap_or(anchor),
            };
            let upto = end.min(anchor + PRUNE_CHUNK);
            if upto <= anchor {
                return Ok(removed);
            }
            let Some(hash): Option<String> =
                sqlx::query_scalar("SELECT hash FROM audit_log WHERE seq = $1")
                    .bind(upto)
                    .fetch_optional(&mut *tx)
                    .await
                    .map_err(err)?
            else {
                // A row missing where the anchor would go: the chain was broken by other
                // means, and `audit verify` must still say so.
                return Err(RegistryError::Invalid(format!(
                    "audit row {upto} is missing: nothing is removed until the chain verifies"
                )));
            };
            removed += sqlx::query("DELETE FROM audit_log WHERE seq > $1 AND seq <= $2")
                .bind(anchor)
                .bind(upto)
                .execute(&mut *tx)
                .await
                .map_err(err)?
                .rows_affected();
            sqlx::query("UPDATE audit_anchor SET seq = $1, hash = $2 WHERE id = 1")
                .bind(upto)
                .bind(hash)
                .execute(&mut *tx)
                .await
                .map_err(err)?;
            tx.commit().await.map_err(err)?;
        }
    }
}

impl SqlRegistry {
    /// What a `SELECT` of a one-row table ends with to lock the row until the transaction ends:
    /// `FOR UPDATE` on Postgres; SQLite's write transactions hold the whole database already.
    fn row_lock(&self) -> &'static str {
        match self.backend_name() {
            "postgres" => " FOR UPDATE",
            _ => "",
        }
    }

    /// The last row removed by retention: (seq, hash); (0, "") when none.
    async fn audit_anchor(&self) -> Result<(i64, String)> {
        let row = sqlx::query("SELECT seq, hash FROM audit_anchor WHERE id = 1")
            .fetch_one(self.pool())
            .await
            .map_err(|e| RegistryError::from_sqlx(e, "audit log"))?;
        Ok((
            row.try_get("seq").map_err(RegistryError::Database)?,
            row.try_get("hash").map_err(RegistryError::Database)?,
        ))
    }

    async fn verify_from(&self, anchor: &(i64, String)) -> Result<VerifyReport> {
        let err = |e| RegistryError::from_sqlx(e, "audit log");
        let head = sqlx::query("SELECT seq, hash FROM audit_head WHERE id = 1")
            .fetch_one(self.pool())
            .await
            .map_err(err)?;
        let head_seq: i64 = head.try_get("seq").map_err(RegistryError::Database)?;
        let head_hash: String = head.try_get("hash").map_err(RegistryError::Database)?;
        let mut report = VerifyReport {
            ok: true,
            checked: 0,
            head_seq,
            pruned_through: anchor.0,
            first_broken: None,
        };
        let broken = |seq: i64, reason: String, report: &mut VerifyReport| {
            report.ok = false;
            report.first_broken = Some(BrokenLink { seq, reason });
        };
        let (mut expect_seq, mut prev) = (anchor.0 + 1, anchor.1.clone());
        loop {
            // Up to the head as read above: rows written since are not part of this check (read
            // with it, they looked like rows beyond the head, and every check during traffic
            // failed).
            let rows = sqlx::query(&format!(
                "SELECT {COLUMNS} FROM audit_log WHERE seq >= $1 AND seq <= $2 ORDER BY seq \
                 LIMIT $3"
            ))
            .bind(expect_seq)
            .bind(head_seq)
            .bind(VERIFY_PAGE)
            .fetch_all(self.pool())
            .await
            .map_err(err)?;
            if rows.is_empty() {
                break;
            }
            for row in &rows {
                let r = row_of(row)?;
                if r.seq != expect_seq {
                    broken(
                        expect_seq,
                        format!("row {expect_seq} is missing (next row is {})", r.seq),
                        &mut report,
                    );
                    return Ok(report);
                }
                if r.prev_hash != prev {
                    broken(
                        r.seq,
                        "prev_hash does not match the previous row's hash".into(),
                        &mut report,
                    );
                    return Ok(report);
                }
                if chain_hash(&prev, r.seq, &r.entry) != r.hash {
                    broken(
                        r.seq,
                        "the row's content does not match its hash (edited)".into(),
                        &mut report,
                    );
                    return Ok(report);
                }
                report.checked += 1;
                prev = r.hash;
                expect_seq += 1;
            }
        }
        if expect_seq - 1 != head_seq || prev != head_hash {
            broken(
                expect_seq,
                format!(
                    "the chain ends at row {} but the head records row {head_seq} (rows removed \
                     from the end, or the head edited)",
                    expect_seq - 1
                ),
                &mut report,
            );
        }
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows already stored were chained with this construction: it must never change.
    #[test]
    fn the_chain_hash_is_the_hash_of_previous_sequence_and_entry() {
        let entry = AuditEntry {
            at: 1_700_000_000_000,
            principal: "alice".into(),
            action: "tools/call".into(),
            target: Some("fs__read \"x\"".into()),
            outcome: "ok".into(),
            latency_ms: 3,
            arguments: Some("{\"path\":\"/tmp\"}".into()),
            ..Default::default()
        };
        let mut bytes = b"prev\n42\n".to_vec();
        bytes.extend(serde_json::to_vec(&entry).unwrap());
        assert_eq!(
            chain_hash("prev", 42, &entry),
            hex::encode(Sha256::digest(&bytes))
        );
    }

    #[test]
    fn a_batch_goes_out_in_statements_of_a_few_sizes() {
        let sizes = |n| statement_sizes(n).collect::<Vec<_>>();
        assert_eq!(sizes(0), Vec::<usize>::new());
        assert_eq!(sizes(1), [1]);
        assert_eq!(sizes(137), [128, 8, 1]);
        assert_eq!(sizes(500), [256, 128, 64, 32, 16, 4]);
        for n in 0..2000 {
            let s = sizes(n);
            assert_eq!(s.iter().sum::<usize>(), n, "{n}");
            assert!(s
                .iter()
                .all(|k| k.is_power_of_two() && *k <= ROWS_PER_INSERT));
        }
    }

    #[test]
    fn inserts_number_postgres_parameters_and_leave_sqlite_anonymous() {
        let lite = insert_sql(2, true);
        assert!(lite.starts_with("INSERT OR FAIL INTO audit_log"), "{lite}");
        assert!(lite.ends_with(&format!("({0}),({0})", ["?"; 14].join(","))));
        let pg = insert_sql(2, false);
        assert!(pg.starts_with("INSERT INTO audit_log"), "{pg}");
        assert!(pg.contains("($1,$2,") && pg.ends_with(",$27,$28)"), "{pg}");
    }

    /// Batches longer than one INSERT, on every backend the tests have: stored in order, each
    /// field where it belongs, and the chain verifies across batches.
    #[tokio::test]
    async fn batches_are_stored_chained_and_verify() {
        let dir = tempfile::TempDir::new().unwrap();
        let file = dir.path().join("audit.db");
        let mut urls = vec![format!("sqlite://{}?mode=rwc", file.display())];
        urls.extend(std::env::var("TEST_DATABASE_URL").ok());
        for url in urls {
            let reg = SqlRegistry::open(&url, Default::default()).await.unwrap();
            let before = reg.verify_audit().await.unwrap().head_seq;
            let entry = |i: i64| AuditEntry {
                at: i,
                principal: format!("p{i}"),
                token_id: (i % 2 == 0).then(|| format!("t{i}")),
                action: "tools/call".into(),
                target: Some(format!("x__tool{i}")),
                outcome: "ok".into(),
                latency_ms: i,
                arguments: Some(format!("{{\"i\":{i}}}")),
                ..Default::default()
            };
            let first: Vec<AuditEntry> = (0..ROWS_PER_INSERT as i64 + 7).map(entry).collect();
            reg.append_audit(&first).await.unwrap();
            reg.append_audit(&[entry(1000)]).await.unwrap();
            let report = reg.verify_audit().await.unwrap();
            assert!(report.ok, "{url}: {report:?}");
            assert_eq!(
                report.head_seq,
                before + ROWS_PER_INSERT as i64 + 8,
                "{url}"
            );
            let rows = reg
                .query_audit(&AuditQuery {
                    limit: Some(3),
                    ..Default::default()
                })
                .await
                .unwrap();
            assert_eq!(rows[0].entry, entry(1000), "{url}");
            assert_eq!(rows[1].entry, first[first.len() - 1], "{url}");
            assert_eq!(rows[0].prev_hash, rows[1].hash, "{url}");
            assert_eq!(rows[1].seq, rows[0].seq - 1, "{url}");
        }
    }

    /// A batch whose INSERT fails half-way (here on a row that already holds one of its
    /// sequence numbers) leaves nothing behind: neither its first rows nor a moved head, so the
    /// writer's retry starts from the same place and the chain still verifies.
    #[tokio::test]
    async fn a_batch_that_fails_half_way_leaves_no_rows() {
        let dir = tempfile::TempDir::new().unwrap();
        let file = dir.path().join("audit.db");
        let mut urls = vec![format!("sqlite://{}?mode=rwc", file.display())];
        // A database of its own: the row put in the batch's way must not meet other tests'.
        if let Ok(base) = std::env::var("TEST_DATABASE_URL") {
            let name = format!("audit_fail_{}", uuid::Uuid::new_v4().simple());
            let admin = SqlRegistry::open(&base, Default::default()).await.unwrap();
            sqlx::query(&format!("CREATE DATABASE {name}"))
                .execute(admin.pool())
                .await
                .unwrap();
            let (server, _) = base.rsplit_once('/').expect("a database URL with a path");
            urls.push(format!("{server}/{name}"));
        }
        for url in urls {
            let reg = SqlRegistry::open(&url, Default::default()).await.unwrap();
            let entry = |i: i64| AuditEntry {
                at: i,
                principal: format!("p{i}"),
                action: "tools/call".into(),
                outcome: "ok".into(),
                ..Default::default()
            };
            reg.append_audit(&[entry(1)]).await.unwrap();
            let head = reg.verify_audit().await.unwrap().head_seq;
            // A row in the way of the batch's third entry, outside the chain.
            sqlx::query(&format!(
                "INSERT INTO audit_log ({COLUMNS}) VALUES ($1, 0, 'x', NULL, NULL, 'a', NULL, \
                 NULL, 'ok', NULL, 0, NULL, 'p', 'h')"
            ))
            .bind(head + 3)
            .execute(reg.pool())
            .await
            .unwrap();
            let count = || async {
                sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM audit_log")
                    .fetch_one(reg.pool())
                    .await
                    .unwrap()
            };
            let rows = count().await;
            let batch: Vec<AuditEntry> = (2..6).map(entry).collect();
            assert!(reg.append_audit(&batch).await.is_err(), "{url}");
            assert_eq!(count().await, rows, "{url}: the batch's first rows stayed");
            let seq: i64 = sqlx::query_scalar("SELECT seq FROM audit_head WHERE id = 1")
                .fetch_one(reg.pool())
                .await
                .unwrap();
            assert_eq!(seq, head, "{url}");
            sqlx::query("DELETE FROM audit_log WHERE seq = $1")
                .bind(head + 3)
                .execute(reg.pool())
                .await
                .unwrap();
            reg.append_audit(&batch).await.unwrap();
            let report = reg.verify_audit().await.unwrap();
            assert!(report.ok, "{url}: {report:?}");
            assert_eq!(report.head_seq, head + 4, "{url}");
        }
    }
}
