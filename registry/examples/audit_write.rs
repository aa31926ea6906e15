//! What writing the audit log costs per row, on SQLite, through the registry's own
//! `append_audit`: CPU of the whole process (the caller's runtime and sqlx's SQLite thread) and
//! wall time, over batches the size the gateway's writer forms under load.
//!
//!   cargo run --release -p registry --example audit-write -- [ROWS] [BATCH] [SCHEMA]
//!
//! `SCHEMA` replaces the migrated table before the run, to compare layouts: `migrated` (the
//! default), `rowid` (`seq INTEGER PRIMARY KEY`), `no-indexes`, `rowid-no-indexes`.

use std::time::Instant;

use registry::{AuditEntry, AuditStore, SqlRegistry};

/// User plus system CPU of this process so far, in seconds (Linux).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    // The fields after the command's closing parenthesis; utime and stime are the 12th and 13th.
    let rest = &stat[stat.rfind(')').expect("a stat line") + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    ticks / 100.0
}

const COLUMNS: &str = "at BIGINT NOT NULL, principal TEXT NOT NULL, token_id TEXT, session TEXT, \
                       action TEXT NOT NULL, upstream TEXT, target TEXT, outcome TEXT NOT NULL, \
                       error_class TEXT, latency_ms BIGINT NOT NULL, arguments TEXT, \
                       prev_hash TEXT NOT NULL, hash TEXT NOT NULL";

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rows: usize = args.get(1).map_or(200_000, |a| a.parse().expect("ROWS"));
    let batch: usize = args.get(2).map_or(400, |a| a.parse().expect("BATCH"));
    let schema = args.get(3).map_or("migrated", String::as_str);
    let dir = std::env::temp_dir().join(format!("audit-write-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.join("gw.db").display());
    let reg = SqlRegistry::open(&url, Default::default()).await.unwrap();
    let rowid = schema.starts_with("rowid");
    if schema != "migrated" {
        let key = if rowid {
            "seq INTEGER PRIMARY KEY"
        } else {
            "seq BIGINT PRIMARY KEY NOT NULL"
        };
        sqlx::query("DROP TABLE audit_log")
            .execute(reg.pool())
            .await
            .unwrap();
        sqlx::query(&format!("CREATE TABLE audit_log ({key}, {COLUMNS})"))
            .execute(reg.pool())
            .await
            .unwrap();
        if !schema.ends_with("no-indexes") {
            for ix in [
                "audit_log_principal ON audit_log (principal, at)",
                "audit_log_target ON audit_log (target, at)",
                "audit_log_at ON audit_log (at)",
            ] {
                sqlx::query(&format!("CREATE INDEX {ix}"))
                    .execute(reg.pool())
                    .await
                    .unwrap();
            }
        }
    }
    let session = uuid::Uuid::new_v4().to_string();
    let mut entries: Vec<AuditEntry> = (0..batch)
        .map(|i| AuditEntry {
            at: registry::now_ms() + i as i64,
            principal: "anonymous".into(),
            session: Some(session.clone()),
            action: "tools/call".into(),
            upstream: Some("fixture".into()),
            target: Some("fixture__test_simple_text".into()),
            outcome: "ok".into(),
            latency_ms: 0,
            arguments: Some("{}".into()),
            ..Default::default()
        })
        .collect();
    // One batch first: statements prepared, the file and its WAL created.
    reg.append_audit(&entries).await.unwrap();
    let (cpu, wall) = (cpu_seconds(), Instant::now());
    let mut written = 0;
    while written < rows {
        // Times go forward, as the gateway's do: each index grows at its end.
        for (i, e) in entries.iter_mut().enumerate() {
            e.at += batch as i64 + i as i64 % 2;
        }
        reg.append_audit(&entries).await.unwrap();
        written += batch;
    }
    let (cpu, wall) = (cpu_seconds() - cpu, wall.elapsed().as_secs_f64());
    println!(
        "schema {schema}, batches of {batch}: {written} rows, CPU {:.2} µs per row, wall {:.2} µs per row",
        cpu / written as f64 * 1e6,
        wall / written as f64 * 1e6
    );
    drop(reg);
    let _ = std::fs::remove_dir_all(dir);
}
