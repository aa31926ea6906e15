//! The `[server]` section: where the gateway listens, what it accepts, and its time and size
//! limits.

use std::net::SocketAddr;
use std::time::Duration;

use serde::Deserialize;

use super::env::Overrides;
use super::error::{positive, KeyError};
use super::secret::{Secret, ValueSource};

// Defaults, as the generated schema shows them.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
pub const DEFAULT_REQUEST_TIMEOUT_SECS: u64 = 120;
pub const DEFAULT_SESSION_IDLE_SECS: u64 = 1800;
pub const DEFAULT_MAX_SESSIONS_PER_PRINCIPAL: usize = 1000;
pub const DEFAULT_LIST_PAGE_SIZE: usize = 1000;
pub const DEFAULT_SHUTDOWN_GRACE_SECS: u64 = 20;
pub const DEFAULT_LIST_TTL_MS: u64 = 60_000;
pub const DEFAULT_MAX_CONNECTIONS: usize = 10_000;
pub const DEFAULT_HEADER_READ_TIMEOUT_SECS: u64 = 10;
pub const DEFAULT_BODY_READ_TIMEOUT_SECS: u64 = 30;
pub const DEFAULT_MAX_UPSTREAM_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
pub const DEFAULT_UPSTREAM_PING_SECS: u64 = 30;

// The variables that override keys of `[server]`.
pub const LISTEN_VAR: &str = "MCP_GATEWAY_LISTEN";
pub const OPS_LISTEN_VAR: &str = "MCP_GATEWAY_OPS_LISTEN";
pub const MAX_BODY_BYTES_VAR: &str = "MCP_GATEWAY_MAX_BODY_BYTES";
pub const REQUEST_TIMEOUT_VAR: &str = "MCP_GATEWAY_REQUEST_TIMEOUT_SECS";
pub const WORKERS_VAR: &str = "MCP_GATEWAY_WORKERS";
pub const METRICS_TOKEN_VAR: &str = "MCP_GATEWAY_METRICS_TOKEN";
pub const SESSION_KEY_VAR: &str = "MCP_GATEWAY_SESSION_KEY";
pub const ADVERTISE_URL_VAR: &str = "MCP_GATEWAY_ADVERTISE_URL";

#[derive(Debug, Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawServer {
    /// Where hosts connect.
    #[schemars(extend("default" = DEFAULT_LISTEN, "x-env" = LISTEN_VAR))]
    listen: Option<String>,
    #[serde(default)]
    allowed_origins: Vec<String>,
    #[serde(default)]
    allowed_hosts: Vec<String>,
    #[schemars(extend("default" = DEFAULT_MAX_BODY_BYTES, "x-env" = MAX_BODY_BYTES_VAR))]
    max_body_bytes: Option<usize>,
    #[schemars(extend("default" = DEFAULT_REQUEST_TIMEOUT_SECS, "x-env" = REQUEST_TIMEOUT_VAR))]
    request_timeout_secs: Option<u64>,
    #[schemars(extend("default" = DEFAULT_SESSION_IDLE_SECS))]
    session_idle_secs: Option<u64>,
    /// Sessions one principal may hold open at once; more are refused (HTTP 429).
    #[schemars(extend("default" = DEFAULT_MAX_SESSIONS_PER_PRINCIPAL))]
    max_sessions_per_principal: Option<usize>,
    #[schemars(extend("default" = DEFAULT_LIST_PAGE_SIZE))]
    list_page_size: Option<usize>,
    #[schemars(extend("default" = false))]
    admin_remote: Option<bool>,
    #[schemars(extend("default" = DEFAULT_SHUTDOWN_GRACE_SECS))]
    shutdown_grace_secs: Option<u64>,
    /// Key shared by replicas to encrypt session ids (a reference: `{ env = "..." }`).
    #[schemars(extend("x-env" = SESSION_KEY_VAR))]
    session_key: Option<ValueSource>,
    /// When set, `/metrics` answers only `Authorization: Bearer <this>` (a reference:
    /// `{ env = "..." }` or `{ file = "..." }`).
    #[schemars(extend("x-env" = METRICS_TOKEN_VAR))]
    metrics_token: Option<ValueSource>,
    /// This replica's own URL as other replicas reach it (`http://10.0.0.7:8080`).
    #[schemars(extend("x-env" = ADVERTISE_URL_VAR))]
    advertise_url: Option<String>,
    /// How long hosts may cache list results (2026-07-28 `ttlMs`).
    #[schemars(extend("default" = DEFAULT_LIST_TTL_MS))]
    list_ttl_ms: Option<u64>,
    #[schemars(extend("default" = DEFAULT_MAX_CONNECTIONS))]
    max_connections: Option<usize>,
    #[schemars(extend("default" = DEFAULT_HEADER_READ_TIMEOUT_SECS))]
    header_read_timeout_secs: Option<u64>,
    #[schemars(extend("default" = DEFAULT_BODY_READ_TIMEOUT_SECS))]
    body_read_timeout_secs: Option<u64>,
    #[schemars(extend("default" = DEFAULT_MAX_UPSTREAM_MESSAGE_BYTES))]
    max_upstream_message_bytes: Option<usize>,
    /// 0 switches the ping off.
    #[schemars(extend("default" = DEFAULT_UPSTREAM_PING_SECS))]
    upstream_ping_secs: Option<u64>,
    /// A second address for `/metrics`, `/healthz` and `/readyz` alone.
    #[schemars(extend("x-env" = OPS_LISTEN_VAR))]
    ops_listen: Option<String>,
    /// Threads serving client connections (default: one per core).
    #[schemars(extend("x-env" = WORKERS_VAR))]
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

/// A secret setting: the environment override, else the file's reference (never clear text in
/// the file).
fn secret(
    vars: &Overrides,
    var: &str,
    raw: Option<ValueSource>,
    key: &str,
) -> Result<Option<Secret>, KeyError> {
    if let Some(v) = vars.get(var) {
        return Ok(Some(Secret::new(v)));
    }
    raw.map(|v| {
        if matches!(v, ValueSource::Literal(_)) {
            return Err(KeyError::clear_text(key));
        }
        v.resolve(vars.0).map_err(|e| KeyError::new(key, e))
    })
    .transpose()
}

impl ServerConfig {
    pub(super) fn from_raw(raw: RawServer, vars: Overrides) -> Result<Self, KeyError> {
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
        let max_body = vars.positive(MAX_BODY_BYTES_VAR)?;
        let request_timeout = vars.positive(REQUEST_TIMEOUT_VAR)?;
        let workers = vars.positive(WORKERS_VAR)?;
        let listen = vars
            .get(LISTEN_VAR)
            .or(raw.listen)
            .unwrap_or_else(|| DEFAULT_LISTEN.into());
        let listen: SocketAddr = listen.parse().map_err(|_| {
            KeyError::new(
                "server.listen",
                format!("{listen:?} is not an address like 127.0.0.1:8080"),
            )
        })?;
        let ops_listen = vars
            .get(OPS_LISTEN_VAR)
            .or(raw.ops_listen)
            .filter(|a| !a.is_empty())
            .map(|a| {
                a.parse::<SocketAddr>().map_err(|_| {
                    KeyError::new(
                        "server.ops_listen",
                        format!("{a:?} is not an address like 0.0.0.0:9090"),
                    )
                })
            })
            .transpose()?;
        let metrics_token = secret(
            &vars,
            METRICS_TOKEN_VAR,
            raw.metrics_token,
            "server.metrics_token",
        )?;
        let session_key = secret(
            &vars,
            SESSION_KEY_VAR,
            raw.session_key,
            "server.session_key",
        )?;
        Ok(ServerConfig {
            listen,
            allowed_origins: raw.allowed_origins,
            allowed_hosts: raw.allowed_hosts,
            max_body_bytes: max_body
                .map(|n| n as usize)
                .or(raw.max_body_bytes)
                .unwrap_or(DEFAULT_MAX_BODY_BYTES),
            request_timeout: Duration::from_secs(
                request_timeout
                    .or(raw.request_timeout_secs)
                    .unwrap_or(DEFAULT_REQUEST_TIMEOUT_SECS),
            ),
            session_idle: Duration::from_secs(
                raw.session_idle_secs.unwrap_or(DEFAULT_SESSION_IDLE_SECS),
            ),
            max_sessions_per_principal: raw
                .max_sessions_per_principal
                .unwrap_or(DEFAULT_MAX_SESSIONS_PER_PRINCIPAL),
            list_page_size: raw.list_page_size.unwrap_or(DEFAULT_LIST_PAGE_SIZE),
            admin_remote: raw.admin_remote.unwrap_or(false),
            shutdown_grace: Duration::from_secs(
                raw.shutdown_grace_secs
                    .unwrap_or(DEFAULT_SHUTDOWN_GRACE_SECS),
            ),
            session_key,
            metrics_token: metrics_token.filter(|t| !t.expose().is_empty()),
            advertise_url: vars
                .get(ADVERTISE_URL_VAR)
                .or(raw.advertise_url)
                .map(|u| u.trim_end_matches('/').to_string())
                .filter(|u| !u.is_empty()),
            list_ttl_ms: raw.list_ttl_ms.unwrap_or(DEFAULT_LIST_TTL_MS),
            max_connections: raw.max_connections.unwrap_or(DEFAULT_MAX_CONNECTIONS),
            header_read_timeout: Duration::from_secs(
                raw.header_read_timeout_secs
                    .unwrap_or(DEFAULT_HEADER_READ_TIMEOUT_SECS),
            ),
            body_read_timeout: Duration::from_secs(
                raw.body_read_timeout_secs
                    .unwrap_or(DEFAULT_BODY_READ_TIMEOUT_SECS),
            ),
            max_upstream_message_bytes: raw
                .max_upstream_message_bytes
                .unwrap_or(DEFAULT_MAX_UPSTREAM_MESSAGE_BYTES),
            // 0 switches the ping off.
            upstream_ping: match raw.upstream_ping_secs.unwrap_or(DEFAULT_UPSTREAM_PING_SECS) {
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
