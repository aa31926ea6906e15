//! The `[server]` section: where the gateway listens, what it accepts, and its time and size
//! limits.

use std::net::SocketAddr;
use std::time::Duration;

use serde::Deserialize;

use super::env::{Overrides, ENV_PREFIX};
use super::secret::{Secret, ValueSource};

#[derive(Debug, Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawServer {
    listen: Option<String>,
    #[serde(default)]
    allowed_origins: Vec<String>,
    #[serde(default)]
    allowed_hosts: Vec<String>,
    max_body_bytes: Option<usize>,
    request_timeout_secs: Option<u64>,
    session_idle_secs: Option<u64>,
    /// Sessions one principal may hold open at once; more are refused (HTTP 429).
    max_sessions_per_principal: Option<usize>,
    list_page_size: Option<usize>,
    admin_remote: Option<bool>,
    shutdown_grace_secs: Option<u64>,
    /// Key shared by replicas to encrypt session ids (a reference: `{ env = "..." }`).
    session_key: Option<ValueSource>,
    /// When set, `/metrics` answers only `Authorization: Bearer <this>` (a reference:
    /// `{ env = "..." }` or `{ file = "..." }`).
    metrics_token: Option<ValueSource>,
    /// This replica's own URL as other replicas reach it (`http://10.0.0.7:8080`).
    advertise_url: Option<String>,
    /// How long hosts may cache list results (2026-07-28 `ttlMs`).
    list_ttl_ms: Option<u64>,
    max_connections: Option<usize>,
    header_read_timeout_secs: Option<u64>,
    body_read_timeout_secs: Option<u64>,
    max_upstream_message_bytes: Option<usize>,
    upstream_ping_secs: Option<u64>,
    /// A second address for `/metrics`, `/healthz` and `/readyz` alone.
    ops_listen: Option<String>,
    /// Threads serving client connections (default: one per core).
    workers: Option<usize>,
}

/// The validated `[server]` section.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub listen: SocketAddr,
    /// Origins accepted besides loopback ones (`*` accepts any).
    pub allowed_origins: Vec<String>,
    /// Host header values accepted besides loopback ones (`*` accepts any).
    pub allowed_hosts: Vec<String>,
    pub max_body_bytes: usize,
    pub request_timeout: Duration,
    pub session_idle: Duration,
    /// Sessions one principal may hold open at once: a token cannot fill the gateway's memory.
    pub max_sessions_per_principal: usize,
    pub list_page_size: usize,
    /// Serve the admin API to non-loopback peers (off until the admin API has authentication).
    pub admin_remote: bool,
    /// How long in-flight requests may take to finish after SIGTERM.
    pub shutdown_grace: Duration,
    /// Shared by replicas so that any of them can serve any session; `None`: a random key.
    pub session_key: Option<Secret>,
    /// The bearer token `/metrics` asks for, when set.
    pub metrics_token: Option<Secret>,
    /// This replica's URL for other replicas (where a pending multi round-trip call lives);
    /// `None`: retries must come back to this replica.
    pub advertise_url: Option<String>,
    /// `ttlMs` on list results of the 2026-07-28 revision.
    pub list_ttl_ms: u64,
    /// Open client connections at most (lowered to fit the open-file limit).
    pub max_connections: usize,
    /// A request's headers must arrive within this; also how long a keep-alive connection may
    /// sit idle between requests.
    pub header_read_timeout: Duration,
    /// A request's body must arrive within this.
    pub body_read_timeout: Duration,
    /// The largest message read from an upstream (an HTTP answer, an SSE event, a stdio line).
    pub max_upstream_message_bytes: usize,
    /// Upstreams no call touched for this long are pinged (hung or restarted ones are found);
    /// `None`: never.
    pub upstream_ping: Option<Duration>,
    /// Where `/metrics`, `/healthz` and `/readyz` are served instead of `listen`, so that
    /// scrapers and probes use a port that is not exposed to hosts; `None`: on `listen`.
    pub ops_listen: Option<SocketAddr>,
    /// Threads serving client connections, each with its own connections
    /// ([`crate::workers`]).
    pub workers: usize,
}

/// Zero would be a panic (an interval of 0), a server that accepts nothing or a limit that
/// refuses everything: each is refused with the setting's name.
pub(super) fn positive(name: &str, v: Option<u64>) -> Result<(), String> {
    match v {
        Some(0) => Err(format!("{name} must be > 0")),
        _ => Ok(()),
    }
}

/// A number from the environment that must be > 0 if set, refused with the variable's name.
fn positive_var(vars: &Overrides, key: &str) -> Result<Option<u64>, String> {
    let v = vars.number(key)?;
    positive(&format!("{ENV_PREFIX}{key}"), v)?;
    Ok(v)
}

/// A secret setting: the environment override, else the file's reference (never clear text in
/// the file).
fn secret(
    vars: &Overrides,
    var: &str,
    raw: Option<ValueSource>,
    name: &str,
) -> Result<Option<Secret>, String> {
    if let Some(v) = vars.get(var) {
        return Ok(Some(Secret::new(v)));
    }
    raw.map(|v| {
        if matches!(v, ValueSource::Literal(_)) {
            return Err(format!(
                "server.{name} must be a reference ({{ env = \"VAR\" }} or {{ file = \"/path\" }}), \
                 not clear text"
            ));
        }
        v.resolve(vars.0).map_err(|e| format!("server.{name}: {e}"))
    })
    .transpose()
}

impl ServerConfig {
    pub(super) fn from_raw(raw: RawServer, vars: Overrides) -> Result<Self, String> {
        for (name, v) in [
            ("list_page_size", raw.list_page_size.map(|v| v as u64)),
            ("max_body_bytes", raw.max_body_bytes.map(|v| v as u64)),
            ("request_timeout_secs", raw.request_timeout_secs),
            ("session_idle_secs", raw.session_idle_secs),
            (
                "max_sessions_per_principal",
                raw.max_sessions_per_principal.map(|v| v as u64),
            ),
            ("max_connections", raw.max_connections.map(|v| v as u64)),
            ("workers", raw.workers.map(|v| v as u64)),
            ("header_read_timeout_secs", raw.header_read_timeout_secs),
            ("body_read_timeout_secs", raw.body_read_timeout_secs),
            (
                "max_upstream_message_bytes",
                raw.max_upstream_message_bytes.map(|v| v as u64),
            ),
        ] {
            positive(&format!("server.{name}"), v)?;
        }
        let max_body = positive_var(&vars, "MAX_BODY_BYTES")?;
        let request_timeout = positive_var(&vars, "REQUEST_TIMEOUT_SECS")?;
        let workers = positive_var(&vars, "WORKERS")?;
        let listen = vars
            .get("LISTEN")
            .or(raw.listen)
            .unwrap_or_else(|| "127.0.0.1:8080".into());
        let listen: SocketAddr = listen.parse().map_err(|_| {
            format!("server.listen {listen:?} is not an address like 127.0.0.1:8080")
        })?;
        let ops_listen = vars
            .get("OPS_LISTEN")
            .or(raw.ops_listen)
            .filter(|a| !a.is_empty())
            .map(|a| {
                a.parse::<SocketAddr>().map_err(|_| {
                    format!("server.ops_listen {a:?} is not an address like 0.0.0.0:9090")
                })
            })
            .transpose()?;
        let metrics_token = secret(&vars, "METRICS_TOKEN", raw.metrics_token, "metrics_token")?;
        let session_key = secret(&vars, "SESSION_KEY", raw.session_key, "session_key")?;
        Ok(ServerConfig {
            listen,
            allowed_origins: raw.allowed_origins,
            allowed_hosts: raw.allowed_hosts,
            max_body_bytes: max_body
                .map(|n| n as usize)
                .or(raw.max_body_bytes)
                .unwrap_or(4 * 1024 * 1024),
            request_timeout: Duration::from_secs(
                request_timeout.or(raw.request_timeout_secs).unwrap_or(120),
            ),
            session_idle: Duration::from_secs(raw.session_idle_secs.unwrap_or(1800)),
            max_sessions_per_principal: raw.max_sessions_per_principal.unwrap_or(1000),
            list_page_size: raw.list_page_size.unwrap_or(1000),
            admin_remote: raw.admin_remote.unwrap_or(false),
            shutdown_grace: Duration::from_secs(raw.shutdown_grace_secs.unwrap_or(20)),
            session_key,
            metrics_token: metrics_token.filter(|t| !t.expose().is_empty()),
            advertise_url: vars
                .get("ADVERTISE_URL")
                .or(raw.advertise_url)
                .map(|u| u.trim_end_matches('/').to_string())
                .filter(|u| !u.is_empty()),
            list_ttl_ms: raw.list_ttl_ms.unwrap_or(60_000),
            max_connections: raw.max_connections.unwrap_or(10_000),
            header_read_timeout: Duration::from_secs(raw.header_read_timeout_secs.unwrap_or(10)),
            body_read_timeout: Duration::from_secs(raw.body_read_timeout_secs.unwrap_or(30)),
            max_upstream_message_bytes: raw.max_upstream_message_bytes.unwrap_or(16 * 1024 * 1024),
            // 0 switches the ping off.
            upstream_ping: match raw.upstream_ping_secs.unwrap_or(30) {
                0 => None,
                n => Some(Duration::from_secs(n)),
            },
            ops_listen,
            workers: workers
                .map(|n| n as usize)
                .or(raw.workers)
                .unwrap_or_else(crate::workers::cores),
        })
    }
}
