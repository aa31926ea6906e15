//! The `[audit]` section: what the audit log redacts and cuts, and how it is written.

use std::time::Duration;

use serde::Deserialize;

use super::error::{positive, KeyError};

// Defaults, as the generated schema shows them.
pub const DEFAULT_MAX_ARGUMENT_BYTES: usize = 4096;
pub const DEFAULT_QUEUE: usize = 65_536;
pub const DEFAULT_BATCH: usize = 500;
pub const DEFAULT_SHUTDOWN_FLUSH_SECS: u64 = 30;

#[derive(Debug, Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawAudit {
    #[schemars(extend("default" = DEFAULT_REDACT))]
    redact_keys: Option<Vec<String>>,
    #[schemars(extend("default" = DEFAULT_MAX_ARGUMENT_BYTES))]
    max_argument_bytes: Option<usize>,
    #[schemars(extend("default" = DEFAULT_QUEUE))]
    queue: Option<usize>,
    #[schemars(extend("default" = DEFAULT_BATCH))]
    batch: Option<usize>,
    #[schemars(extend("default" = DEFAULT_SHUTDOWN_FLUSH_SECS))]
    shutdown_flush_secs: Option<u64>,
    #[schemars(extend("default" = "refuse"))]
    when_unwritable: Option<WhenUnwritable>,
    /// Days rows are kept; older ones are removed from the start of the chain (hourly), and
    /// `audit verify` checks the rest from the last removed row. Personal access tokens
    /// revoked or expired longer ago go too (no row left names them). Unset: kept for good.
    retention_days: Option<u64>,
}

/// What happens to calls that must be audited while the audit log cannot be written (a full
/// disk, a database that went away).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WhenUnwritable {
    /// Refuse them at once with a JSON-RPC error (`-32002`): nothing is served unaudited.
    Refuse,
    /// Serve them while their rows fit in the queue (`audit.queue`), then refuse.
    Buffer,
}

/// Audit log settings.
#[derive(Debug, Clone)]
pub struct AuditConfig {
    /// Argument keys containing one of these (case-insensitive) have their values redacted.
    pub redact_keys: Vec<String>,
    /// Arguments longer than this (as JSON) are cut.
    pub max_argument_bytes: usize,
    /// Entries waiting to be written; when full, calls wait (backpressure, never a drop).
    pub queue: usize,
    /// Rows per write.
    pub batch: usize,
    /// How long shutdown waits for the last entries to be written.
    pub shutdown_flush: Duration,
    /// What happens to audited calls while the log cannot be written.
    pub when_unwritable: WhenUnwritable,
    /// How long rows are kept (`retention_days`); `None`: for good.
    pub retention: Option<Duration>,
}

const DEFAULT_REDACT: [&str; 9] = [
    "password",
    "passwd",
    "secret",
    "token",
    "api_key",
    "apikey",
    "authorization",
    "credential",
    "private_key",
];

impl AuditConfig {
    pub(super) fn from_raw(raw: RawAudit) -> Result<Self, KeyError> {
        positive("audit.queue", raw.queue.map(|v| v as u64))?;
        positive("audit.batch", raw.batch.map(|v| v as u64))?;
        positive("audit.retention_days", raw.retention_days)?;
        Ok(AuditConfig {
            redact_keys: raw
                .redact_keys
                .unwrap_or_else(|| DEFAULT_REDACT.iter().map(|s| s.to_string()).collect())
                .into_iter()
                .map(|k| k.to_ascii_lowercase())
                .collect(),
            max_argument_bytes: raw.max_argument_bytes.unwrap_or(DEFAULT_MAX_ARGUMENT_BYTES),
            queue: raw.queue.unwrap_or(DEFAULT_QUEUE),
            batch: raw.batch.unwrap_or(DEFAULT_BATCH),
            shutdown_flush: Duration::from_secs(
                raw.shutdown_flush_secs
                    .unwrap_or(DEFAULT_SHUTDOWN_FLUSH_SECS),
            ),
            when_unwritable: raw.when_unwritable.unwrap_or(WhenUnwritable::Refuse),
            retention: raw
                .retention_days
                .map(|d| Duration::from_secs(d.saturating_mul(86_400))),
        })
    }
}
