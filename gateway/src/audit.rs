//! The audit trail: every `tools/call`, `resources/read`, `prompts/get` and admin change becomes
//! an [`AuditEntry`], logged as a structured line (target `audit`) and written to the registry's
//! hash-chained log in batches by one background writer.
//!
//! Nothing is dropped: the queue is bounded and a full queue makes callers wait (backpressure);
//! a failed write is retried until it succeeds; shutdown waits for the queue to drain (up to
//! `audit.shutdown_flush_secs`, after which the unwritten entries exist only in the log lines).
//!
//! While writes fail (a full disk, a database gone), the log counts as unwritable: `/readyz`
//! fails, and calls that must be audited are refused before they are served
//! ([`Auditor::admit`]; `audit.when_unwritable` may let them fill the queue first). The first
//! write that succeeds makes it writable again. Rows past `audit.retention_days`, if set, are
//! removed from the start of the chain (`retention`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use registry::{AuditEntry, Registry};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::config::{AuditConfig, WhenUnwritable};
use crate::metrics::Metrics;
use crate::protocol::McpError;

mod retention;

pub struct Auditor {
    tx: RwLock<Option<mpsc::Sender<AuditEntry>>>,
    writer: Mutex<Option<tokio::task::JoinHandle<()>>>,
    config: AuditConfig,
    /// Whether the last write succeeded.
    writable: Arc<AtomicBool>,
    metrics: Arc<Metrics>,
}

const REDACTED: &str = "[REDACTED]";
/// How long the writer waits for a batch to fill before writing what it has. Longer batches
/// mean fewer transactions, syncs and round trips to SQLite's thread per row: 25 ms against 5
/// ms took 1.3 µs per call off SQLite's thread under load (docs/benchmarks.md, "The audit
/// writer lingers 25 ms"); a row is in the log 25 ms later at most, and shutdown still waits for every one.
const LINGER: Duration = Duration::from_millis(25);

impl Auditor {
    pub fn start(registry: Arc<dyn Registry>, config: AuditConfig, metrics: Arc<Metrics>) -> Self {
        if let Some(kept) = config.retention {
            retention::start(&registry, kept);
        }
        let (tx, mut rx) = mpsc::channel::<AuditEntry>(config.queue);
        let batch = config.batch;
        let writable = Arc::new(AtomicBool::new(true));
        metrics.audit_writable.set(1);
        let state = writable.clone();
        let counters = metrics.clone();
        let writer = tokio::spawn(async move {
            let metrics = counters;
            let mut buf = Vec::with_capacity(batch);
            while rx.recv_many(&mut buf, batch).await > 0 {
                // Under load entries arrive one by one: a moment's wait fills the batch, and one
                // transaction (one commit, one sync) carries hundreds instead of a few.
                if buf.len() < batch {
                    tokio::time::sleep(LINGER).await;
                    while buf.len() < batch {
                        match rx.try_recv() {
                            Ok(e) => buf.push(e),
                            Err(_) => break,
                        }
                    }
                }
                metrics.audit_queue.set(rx.len() as i64);
                // At most a second between tries: while the log is unwritable, audited calls are
                // refused (by default), so it must notice at once that it can write again.
                let mut backoff = registry::backoff::Backoff::new(
                    Duration::from_millis(100),
                    Duration::from_secs(1),
                );
                loop {
                    match registry.append_audit(&buf).await {
                        Ok(()) => {
                            metrics.audit_written.inc_by(buf.len() as u64);
                            if !state.swap(true, Ordering::AcqRel) {
                                metrics.audit_writable.set(1);
                                tracing::info!("audit log writable again");
                            }
                            break;
                        }
                        Err(e) => {
                            metrics.audit_write_errors.inc();
                            if state.swap(false, Ordering::AcqRel) {
                                metrics.audit_writable.set(0);
                                tracing::error!(error = %e, "audit log unwritable: audited calls are refused (audit.when_unwritable) and /readyz fails until a write succeeds");
                            }
                            let delay = backoff.next_delay();
                            tracing::warn!(error = %e, entries = buf.len(), retry_in = ?delay, "audit write failed; retrying");
                            tokio::time::sleep(delay).await;
                        }
                    }
                }
                buf.clear();
            }
            metrics.audit_queue.set(0);
        });
        Self {
            tx: RwLock::new(Some(tx)),
            writer: Mutex::new(Some(writer)),
            config,
            writable,
            metrics,
        }
    }

    /// Whether the audit log takes rows (its last write succeeded).
    pub fn writable(&self) -> bool {
        self.writable.load(Ordering::Acquire)
    }

    /// Whether a call that must be audited may be served now: always while the log is
    /// writable; while it is not, never (`refuse`, the default) or while the queue has room
    /// (`buffer`).
    pub fn admit(&self) -> Result<(), McpError> {
        if self.writable() {
            return Ok(());
        }
        let room = match self.config.when_unwritable {
            WhenUnwritable::Refuse => false,
            WhenUnwritable::Buffer => self
                .tx
                .read()
                .unwrap()
                .as_ref()
                .is_some_and(|tx| tx.capacity() > 0),
        };
        if room {
            return Ok(());
        }
        self.metrics.audit_refused.inc();
        Err(McpError::audit_unavailable())
    }

    /// Records an entry; waits while the queue is full.
    /// A row for an event that is not a call: who, what, on what, how it went.
    pub async fn record_event(&self, principal: &str, action: &str, target: &str, outcome: &str) {
        self.record(AuditEntry {
            at: registry::now_ms(),
            principal: principal.to_string(),
            action: action.into(),
            target: Some(target.into()),
            outcome: outcome.into(),
            ..Default::default()
        })
        .await;
    }

    pub async fn record(&self, e: AuditEntry) {
        // Text fields as `&str` (recorded as they are, not through `Display`).
        tracing::info!(
            target: "audit",
            principal = e.principal.as_str(),
            token_id = e.token_id.as_deref().unwrap_or(""),
            session = e.session.as_deref().unwrap_or(""),
            action = e.action.as_str(),
            upstream = e.upstream.as_deref().unwrap_or(""),
            target_name = e.target.as_deref().unwrap_or(""),
            outcome = e.outcome.as_str(),
            error_class = e.error_class.as_deref().unwrap_or(""),
            latency_ms = e.latency_ms,
            arguments = e.arguments.as_deref().unwrap_or(""),
            "audit"
        );
        let tx = self.tx.read().unwrap().clone();
        match tx {
            Some(tx) => {
                if tx.send(e).await.is_err() {
                    tracing::error!("audit writer is gone; entry only in the log");
                }
            }
            None => tracing::error!("audit entry after shutdown; entry only in the log"),
        }
    }

    /// Arguments as stored: secrets redacted by key, cut to `max_argument_bytes`.
    pub fn arguments(&self, v: Option<&Value>) -> Option<String> {
        let redacted = Redacted {
            value: v?,
            keys: &self.config.redact_keys,
        };
        let text = serde_json::to_string(&redacted).unwrap_or_default();
        Some(cap(text, self.config.max_argument_bytes))
    }

    /// Stops taking entries and waits until every queued one is written.
    pub async fn close(&self) {
        self.tx.write().unwrap().take();
        let writer = self.writer.lock().unwrap().take();
        if let Some(w) = writer {
            let abort = w.abort_handle();
            match tokio::time::timeout(self.config.shutdown_flush, w).await {
                Ok(_) => tracing::info!("audit log flushed"),
                Err(_) => {
                    abort.abort();
                    tracing::error!(
                        waited = ?self.config.shutdown_flush,
                        "audit entries could not be written before shutdown; they are in the audit log lines only"
                    );
                }
            }
        }
    }
}

/// `text` cut to at most `max` bytes (on a character boundary), saying how long it was.
fn cap(text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}…[truncated, {} bytes in all]", &text[..cut], text.len())
}

/// A value written with the values of secret-looking keys replaced, at any depth: serialised
/// straight from the caller's arguments (every audited call used to clone them first).
struct Redacted<'a> {
    value: &'a Value,
    /// Lowercase fragments of secret key names.
    keys: &'a [String],
}

/// Whether `key` contains one of `fragments` (lowercase), ignoring ASCII case, without
/// allocating.
fn is_secret(key: &str, fragments: &[String]) -> bool {
    fragments.iter().any(|f| {
        !f.is_empty()
            && key
                .as_bytes()
                .windows(f.len())
                .any(|w| w.eq_ignore_ascii_case(f.as_bytes()))
    })
}

impl serde::Serialize for Redacted<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self.value {
            Value::Object(m) => {
                let mut map = s.serialize_map(Some(m.len()))?;
                for (k, v) in m {
                    if is_secret(k, self.keys) {
                        map.serialize_entry(k, REDACTED)?;
                    } else {
                        map.serialize_entry(
                            k,
                            &Redacted {
                                value: v,
                                keys: self.keys,
                            },
                        )?;
                    }
                }
                map.end()
            }
            Value::Array(a) => {
                let mut seq = s.serialize_seq(Some(a.len()))?;
                for x in a {
                    seq.serialize_element(&Redacted {
                        value: x,
                        keys: self.keys,
                    })?;
                }
                seq.end()
            }
            other => other.serialize(s),
        }
    }
}

/// The class of a JSON-RPC error code, for the audit log and its queries.
pub fn error_class(code: i64) -> &'static str {
    use crate::protocol::jsonrpc as j;
    match code {
        j::INVALID_PARAMS => "invalid_params",
        j::METHOD_NOT_FOUND => "method_not_found",
        j::UPSTREAM_UNAVAILABLE => "upstream_unavailable",
        j::UPSTREAM_TIMEOUT => "upstream_timeout",
        j::AUDIT_UNAVAILABLE => "audit_unavailable",
        j::MISSING_CLIENT_CAPABILITY => "missing_capability",
        j::INTERNAL_ERROR => "internal",
        _ => "upstream_error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A full queue makes callers wait, and every entry is written, in a chain that verifies.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_full_queue_makes_callers_wait_and_loses_nothing() {
        use registry::{AuditQuery, AuditStore};
        let (reg, _dir) = crate::testing::sqlite_registry().await;
        let reg = Arc::new(reg);
        let config = AuditConfig {
            redact_keys: Vec::new(),
            max_argument_bytes: 4096,
            queue: 1,
            batch: 2,
            shutdown_flush: Duration::from_secs(30),
            when_unwritable: WhenUnwritable::Refuse,
            retention: None,
        };
        let auditor = Arc::new(Auditor::start(
            reg.clone(),
            config,
            Arc::new(Metrics::new()),
        ));
        let calls = (0..60).map(|i| {
            let auditor = auditor.clone();
            tokio::spawn(async move {
                auditor
                    .record(AuditEntry {
                        principal: "p".into(),
                        action: "tools/call".into(),
                        target: Some(format!("t{i}")),
                        outcome: "ok".into(),
                        ..Default::default()
                    })
                    .await
            })
        });
        for c in calls.collect::<Vec<_>>() {
            c.await.unwrap();
        }
        auditor.close().await;
        let rows = reg
            .query_audit(&AuditQuery {
                limit: Some(1000),
                ..Default::default()
            })
            .await
            .unwrap();
        let mut targets: Vec<_> = rows.iter().filter_map(|r| r.entry.target.clone()).collect();
        targets.sort();
        let mut expected: Vec<_> = (0..60).map(|i| format!("t{i}")).collect();
        expected.sort();
        assert_eq!(targets, expected);
        assert!(reg.verify_audit().await.unwrap().ok);
    }

    #[test]
    fn long_arguments_are_cut_on_a_character_boundary() {
        assert_eq!(cap("short".into(), 10), "short");
        let cut = cap("ééééé".into(), 3);
        assert_eq!(cut, "é…[truncated, 10 bytes in all]");
    }

    #[test]
    fn secrets_are_redacted_at_any_depth() {
        let v =
            serde_json::json!({"q": "x", "apiKey": "k", "nested": [{"Password": "p", "ok": 1}]});
        let keys = ["apikey".to_string(), "password".to_string()];
        let out = serde_json::to_value(Redacted {
            value: &v,
            keys: &keys,
        })
        .unwrap();
        assert_eq!(
            out,
            serde_json::json!({"q": "x", "apiKey": REDACTED, "nested": [{"Password": REDACTED, "ok": 1}]})
        );
        assert!(is_secret("X-Api-Key-apikey", &keys) && !is_secret("api", &keys));
    }
}
