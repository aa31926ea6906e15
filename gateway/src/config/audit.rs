//! The `[audit]` section: what the audit log redacts and cuts, and how it is written.

use std::time::Duration;

use serde::Deserialize;

use super::server::positive;

#[derive(Debug, Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawAudit {
    redact_keys: Option<Vec<String>>,
    max_argument_bytes: Option<usize>,
    queue: Option<usize>,
    batch: Option<usize>,
    shutdown_flush_secs: Option<u64>,
    when_unwritable: Option<WhenUnwritable>,
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
    pub(super) fn from_raw(raw: RawAudit) -> Result<Self, String> {
        positive("audit.queue", raw.queue.map(|v| v as u64))?;
        positive("audit.batch", raw.batch.map(|v| v as u64))?;
        Ok(AuditConfig {
            redact_keys: raw
                .redact_keys
                .unwrap_or_else(|| DEFAULT_REDACT.iter().map(|s| s.to_string()).collect())
                .into_iter()
                .map(|k| k.to_ascii_lowercase())
                .collect(),
            max_argument_bytes: raw.max_argument_bytes.unwrap_or(4096),
            queue: raw.queue.unwrap_or(65_536),
            batch: raw.batch.unwrap_or(500),
            shutdown_flush: Duration::from_secs(raw.shutdown_flush_secs.unwrap_or(30)),
            when_unwritable: raw.when_unwritable.unwrap_or(WhenUnwritable::Refuse),
        })
    }
}
