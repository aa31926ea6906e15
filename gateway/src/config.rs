//! Configuration: a raw serde form (`deny_unknown_fields`, so a typo is an error, not a silent
//! default) validated into [`Config`]. Environment overrides use the `MCP_GATEWAY_` prefix and
//! are passed in as a map, so tests never touch the process environment.

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use registry::PrefixMode;
use serde::{Deserialize, Serialize};

/// The example configuration shipped with the gateway; used when no file is given and
/// `config/gateway.toml` is not in the working directory.
pub const EXAMPLE_CONFIG: &str = include_str!("../../config/gateway.toml");
pub const ENV_PREFIX: &str = "MCP_GATEWAY_";

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Parse(String),
    #[error("{0}")]
    Invalid(String),
}

/// A string that never prints (logs, debug output, API responses).
#[derive(Clone, Deserialize, Serialize, PartialEq)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    pub fn new(s: impl Into<String>) -> Self {
        Self(s.into())
    }
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// A value that is either given literally (only for what is not secret) or referenced: read from
/// an environment variable or a file when the upstream is started.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(untagged)]
pub enum ValueSource {
    Literal(String),
    Env { env: String },
    File { file: String },
}

impl ValueSource {
    pub fn resolve(&self, env: &HashMap<String, String>) -> Result<Secret, String> {
        match self {
            ValueSource::Literal(s) => Ok(Secret::new(s.clone())),
            ValueSource::Env { env: var } => env
                .get(var)
                .map(|v| Secret::new(v.clone()))
                .ok_or_else(|| format!("environment variable {var} is not set")),
            ValueSource::File { file } => std::fs::read_to_string(file)
                .map(|s| Secret::new(s.trim_end().to_string()))
                .map_err(|e| format!("cannot read secret file {file}: {e}")),
        }
    }
}

/// How an upstream is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TransportKind {
    /// A child process speaking newline-delimited JSON-RPC on stdin/stdout.
    Stdio,
    /// Streamable HTTP (MCP 2025-03-26 and later).
    Http,
    /// The legacy HTTP+SSE transport (MCP 2024-11-05).
    Sse,
}

/// Whether callers share one upstream connection or each session gets its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Sharing {
    /// One connection multiplexed for all callers (stateless servers).
    #[default]
    Shared,
    /// One upstream session per downstream session (stateful servers, per-user state).
    PerSession,
}

/// An upstream as written in the config file and the admin API; stored as JSON in the registry.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpstreamSpec {
    pub name: String,
    pub transport: TransportKind,
    /// stdio: the program to run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// stdio: environment of the child (values may be references: `{ env = "VAR" }`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schema(value_type = Object)]
    pub env: BTreeMap<String, ValueSource>,
    /// stdio: variables of the gateway's environment the child may see besides
    /// [`INHERITED_ENV`] (names; a trailing `*` matches a prefix: `AWS_*`). Nothing else of the
    /// gateway's environment reaches a child: other upstreams' secrets live there.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inherit_env: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// http / sse: the endpoint URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// http / sse: extra request headers (secrets as references).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schema(value_type = Object)]
    pub headers: BTreeMap<String, ValueSource>,
    /// http / sse: OAuth client credentials for the upstream's authorization server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth: Option<UpstreamOAuth>,
    #[serde(default)]
    pub sharing: Sharing,
    /// When the upstream's name goes in front of its tools' and prompts' names.
    #[serde(default)]
    #[schema(value_type = String, example = "always")]
    pub prefix: PrefixMode,
    /// Per-request timeout in seconds (default: the server's `request_timeout_secs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<u64>,
    /// Longest text a tool result's text item may carry through the gateway (bytes); longer
    /// ones are cut with a marker saying so. Unset: no limit (beyond `max_upstream_message_bytes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_result_text_bytes: Option<usize>,
    #[serde(default = "yes")]
    pub enabled: bool,
}

/// The gateway's own credentials for an upstream's authorization server (client credentials
/// grant); the token it gets is sent to the upstream as `Authorization: Bearer`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpstreamOAuth {
    pub token_url: String,
    pub client_id: String,
    /// A reference (`{ env = "VAR" }` or `{ file = "/path" }`), never clear text.
    #[schema(value_type = Object)]
    pub client_secret: ValueSource,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// The upstream's resource URL (RFC 8707), the audience of the token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
}

/// What every stdio child gets of the gateway's environment: enough to find programs, a home,
/// a locale, a time zone, a temporary folder, proxies and CA certificates.
pub const INHERITED_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "TMPDIR",
    "TERM",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
];

/// Whether an environment variable name is matched by a list of names and `PREFIX*` patterns.
pub fn env_name_matches<S: AsRef<str>>(patterns: &[S], name: &str) -> bool {
    patterns.iter().any(|p| {
        let p = p.as_ref();
        match p.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => p == name,
        }
    })
}

fn yes() -> bool {
    true
}

/// `text` with the user information of every URL in it (`https://user:pass@host`) replaced by
/// `***`: upstream URLs are shown by the admin API, the audit log, health and logs.
pub fn redact_userinfo(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('@') {
        return text.into();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        let end = tail
            .find(|c: char| {
                matches!(c, '/' | '?' | '#' | '"' | '\'' | ' ' | ')' | '>') || c.is_whitespace()
            })
            .unwrap_or(tail.len());
        match tail[..end].rfind('@') {
            Some(at) => {
                out.push_str("***");
                out.push_str(&tail[at..end]);
            }
            None => out.push_str(&tail[..end]),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out.into()
}

/// Whether an env var or header name suggests its value is a credential.
pub(crate) fn looks_secret(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    [
        "authorization",
        "cookie",
        "token",
        "secret",
        "password",
        "api-key",
        "api_key",
        "apikey",
    ]
    .iter()
    .any(|s| k.contains(s))
}

impl UpstreamSpec {
    /// The spec stored in a registry record; the record's own `enabled` flag can switch it off.
    pub fn from_record(rec: registry::UpstreamRecord) -> Result<Self, serde_json::Error> {
        let mut spec: UpstreamSpec = serde_json::from_value(rec.spec)?;
        spec.enabled = spec.enabled && rec.enabled;
        Ok(spec)
    }

    /// Checks the spec; the message says what to fix.
    pub fn validate(&self) -> Result<(), String> {
        crate::names::Name::parse(crate::names::NameKind::Upstream, &self.name)?;
        match self.transport {
            TransportKind::Stdio => {
                if self.command.as_deref().unwrap_or("").is_empty() {
                    return Err(format!("upstream {:?}: stdio needs a `command`", self.name));
                }
                if let Some(bad) = self.inherit_env.iter().find(|n| {
                    let n = n.strip_suffix('*').unwrap_or(n);
                    n.is_empty() || n.starts_with(ENV_PREFIX) || n.contains(['=', '*'])
                }) {
                    return Err(format!(
                        "upstream {:?}: inherit_env entry {bad:?} must be a variable name or \
                         PREFIX* (not empty, not {ENV_PREFIX}...)",
                        self.name
                    ));
                }
                if self.url.is_some() || !self.headers.is_empty() {
                    return Err(format!(
                        "upstream {:?}: `url` and `headers` are for http/sse upstreams",
                        self.name
                    ));
                }
            }
            TransportKind::Http | TransportKind::Sse => {
                let url = self.url.as_deref().unwrap_or("");
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(format!(
                        "upstream {:?}: {} needs a `url` starting with http:// or https://",
                        self.name,
                        if self.transport == TransportKind::Http {
                            "http"
                        } else {
                            "sse"
                        }
                    ));
                }
                if self.command.is_some()
                    || !self.args.is_empty()
                    || !self.env.is_empty()
                    || !self.inherit_env.is_empty()
                {
                    return Err(format!(
                        "upstream {:?}: `command`, `args`, `env` and `inherit_env` are for stdio \
                         upstreams",
                        self.name
                    ));
                }
            }
        }
        for (key, value) in self.env.iter().chain(self.headers.iter()) {
            if looks_secret(key) && matches!(value, ValueSource::Literal(_)) {
                return Err(format!(
                    "upstream {:?}: {key:?} looks like a secret; give it as a reference \
                     ({{ env = \"VAR\" }} or {{ file = \"/path\" }}), not in clear text",
                    self.name
                ));
            }
        }
        if let Some(o) = &self.oauth {
            if self.transport == TransportKind::Stdio {
                return Err(format!(
                    "upstream {:?}: `oauth` is for http/sse upstreams",
                    self.name
                ));
            }
            if matches!(o.client_secret, ValueSource::Literal(_)) {
                return Err(format!(
                    "upstream {:?}: oauth.client_secret must be a reference ({{ env = \"VAR\" }} \
                     or {{ file = \"/path\" }}), not clear text",
                    self.name
                ));
            }
            if !(o.token_url.starts_with("https://") || o.token_url.starts_with("http://")) {
                return Err(format!(
                    "upstream {:?}: oauth.token_url must be an http(s) URL",
                    self.name
                ));
            }
        }
        if self.timeout_secs == Some(0) {
            return Err(format!(
                "upstream {:?}: timeout_secs must be > 0",
                self.name
            ));
        }
        if self.max_result_text_bytes == Some(0) {
            return Err(format!(
                "upstream {:?}: max_result_text_bytes must be > 0 (leave it out for no limit)",
                self.name
            ));
        }
        Ok(())
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    server: RawServer,
    #[serde(default)]
    database: RawDatabase,
    /// A Claude Desktop / Cursor style `{"mcpServers": {...}}` file whose servers are added.
    #[serde(default)]
    mcp_servers_file: Option<PathBuf>,
    #[serde(default)]
    upstreams: Vec<UpstreamSpec>,
    #[serde(default)]
    auth: RawAuth,
    #[serde(default)]
    audit: RawAudit,
    /// Roles seeded into the registry at start-up (the admin API manages more).
    #[serde(default)]
    roles: Vec<crate::auth::rbac::RoleSpec>,
    #[serde(default)]
    routing: crate::routing::config::RawRouting,
}

/// Who may call: `none` (local development: everyone may do everything) or `required` (a bearer
/// token on every request: an OAuth access token or a personal access token).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuthMode {
    #[default]
    None,
    Required,
}

/// An OAuth authorization server whose access tokens the gateway accepts.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IssuerConfig {
    /// Its `iss` value (and where its metadata is found).
    pub issuer: String,
    /// Where its keys are; default: `jwks_uri` of its metadata.
    pub jwks_url: Option<String>,
    /// Roles every principal of this issuer gets.
    #[serde(default)]
    pub roles: Vec<String>,
}

/// `claim` contains `value` (or equals it; `*`: the claim is present) → the principal gets `role`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoleMapping {
    pub claim: String,
    pub value: String,
    pub role: String,
}

/// Requests per second per principal, with bursts up to `burst`.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateLimit {
    pub per_second: u32,
    pub burst: u32,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawAuth {
    mode: Option<AuthMode>,
    resource: Option<String>,
    #[serde(default)]
    issuers: Vec<IssuerConfig>,
    #[serde(default)]
    required_scopes: Vec<String>,
    #[serde(default)]
    role_mappings: Vec<RoleMapping>,
    leeway_secs: Option<u64>,
    jwks_ttl_secs: Option<u64>,
    jwks_min_refresh_secs: Option<u64>,
    rate_limit: Option<RateLimit>,
}

/// Authentication and authorization settings.
#[derive(Debug, Clone)]
pub struct AuthConfig {
    pub mode: AuthMode,
    /// The gateway's resource URL (RFC 8707): the audience its access tokens must name.
    pub resource: Option<String>,
    pub issuers: Vec<IssuerConfig>,
    pub required_scopes: Vec<String>,
    pub role_mappings: Vec<RoleMapping>,
    /// Clock skew allowed on `exp` / `nbf`.
    pub leeway: Duration,
    /// Keys are re-read after this long.
    pub jwks_ttl: Duration,
    /// A token with an unknown key id refreshes the keys at most this often per issuer.
    pub jwks_min_refresh: Duration,
    pub rate_limit: Option<RateLimit>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawAudit {
    redact_keys: Option<Vec<String>>,
    max_argument_bytes: Option<usize>,
    queue: Option<usize>,
    batch: Option<usize>,
    shutdown_flush_secs: Option<u64>,
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

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawServer {
    listen: Option<String>,
    #[serde(default)]
    allowed_origins: Vec<String>,
    #[serde(default)]
    allowed_hosts: Vec<String>,
    max_body_bytes: Option<usize>,
    request_timeout_secs: Option<u64>,
    session_idle_secs: Option<u64>,
    list_page_size: Option<usize>,
    admin_remote: Option<bool>,
    shutdown_grace_secs: Option<u64>,
    /// Key shared by replicas to encrypt session ids (a reference: `{ env = "..." }`).
    session_key: Option<ValueSource>,
    /// This replica's own URL as other replicas reach it (`http://10.0.0.7:8080`).
    advertise_url: Option<String>,
    /// How long hosts may cache list results (2026-07-28 `ttlMs`).
    list_ttl_ms: Option<u64>,
    max_connections: Option<usize>,
    header_read_timeout_secs: Option<u64>,
    body_read_timeout_secs: Option<u64>,
    max_upstream_message_bytes: Option<usize>,
    upstream_ping_secs: Option<u64>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawDatabase {
    url: Option<String>,
    max_connections: Option<u32>,
}

/// The validated configuration.
#[derive(Debug, Clone)]
pub struct Config {
    pub listen: SocketAddr,
    /// Origins accepted besides loopback ones (`*` accepts any).
    pub allowed_origins: Vec<String>,
    /// Host header values accepted besides loopback ones (`*` accepts any).
    pub allowed_hosts: Vec<String>,
    pub max_body_bytes: usize,
    pub request_timeout: Duration,
    pub session_idle: Duration,
    pub list_page_size: usize,
    /// Serve the admin API to non-loopback peers (off until the admin API has authentication).
    pub admin_remote: bool,
    /// How long in-flight requests may take to finish after SIGTERM.
    pub shutdown_grace: Duration,
    /// Shared by replicas so that any of them can serve any session; `None`: a random key.
    pub session_key: Option<Secret>,
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
    pub database_url: Secret,
    pub database_max_connections: u32,
    pub upstreams: Vec<UpstreamSpec>,
    pub auth: AuthConfig,
    pub audit: AuditConfig,
    pub roles: Vec<crate::auth::rbac::RoleSpec>,
    pub routing: crate::routing::config::RoutingConfig,
    /// The process environment (or a test's), used to resolve secret references.
    pub env: HashMap<String, String>,
}

impl Config {
    /// Reads `path` (TOML, or JSON when its name ends in `.json`), or the example config when
    /// `path` is `None`.
    pub fn load(path: Option<&Path>, env: HashMap<String, String>) -> Result<Self, ConfigError> {
        match path {
            Some(p) => {
                let text = std::fs::read_to_string(p).map_err(|source| ConfigError::Read {
                    path: p.to_path_buf(),
                    source,
                })?;
                if p.extension().is_some_and(|e| e == "json") {
                    // Helm renders JSON faithfully (its TOML output turns integers into floats).
                    let raw = serde_json::from_str(&text)
                        .map_err(|e| ConfigError::Parse(format!("config: {e}")))?;
                    Self::validate(raw, p.parent(), env)
                } else {
                    Self::parse(&text, p.parent(), env)
                }
            }
            None => Self::parse(EXAMPLE_CONFIG, None, env),
        }
    }

    /// Parses TOML text; relative paths inside it are taken from `base`.
    pub fn parse(
        text: &str,
        base: Option<&Path>,
        env: HashMap<String, String>,
    ) -> Result<Self, ConfigError> {
        let raw: RawConfig =
            toml::from_str(text).map_err(|e| ConfigError::Parse(format!("config: {e}")))?;
        Self::validate(raw, base, env)
    }

    fn validate(
        raw: RawConfig,
        base: Option<&Path>,
        env: HashMap<String, String>,
    ) -> Result<Self, ConfigError> {
        let var = |k: &str| env.get(&format!("{ENV_PREFIX}{k}")).cloned();
        let listen = var("LISTEN")
            .or(raw.server.listen.clone())
            .unwrap_or_else(|| "127.0.0.1:8080".into());
        let listen: SocketAddr = listen.parse().map_err(|_| {
            ConfigError::Invalid(format!(
                "server.listen {listen:?} is not an address like 127.0.0.1:8080"
            ))
        })?;
        let database_url = var("DATABASE_URL")
            .or(raw.database.url)
            .unwrap_or_else(|| "sqlite://mcp-gateway.db?mode=rwc".into());
        let mut upstreams = raw.upstreams;
        if let Some(file) = raw.mcp_servers_file {
            let file = match base {
                Some(b) if file.is_relative() => b.join(file),
                _ => file,
            };
            let text = std::fs::read_to_string(&file).map_err(|source| ConfigError::Read {
                path: file.clone(),
                source,
            })?;
            upstreams.extend(crate::mcp_servers::parse(&text).map_err(ConfigError::Invalid)?);
        }
        let mut seen = std::collections::HashSet::new();
        for u in &upstreams {
            u.validate().map_err(ConfigError::Invalid)?;
            if !seen.insert(u.name.clone()) {
                return Err(ConfigError::Invalid(format!(
                    "upstream {:?} is defined twice",
                    u.name
                )));
            }
        }
        let parse_num = |k: &str| -> Result<Option<u64>, ConfigError> {
            var(k)
                .map(|v| {
                    v.parse::<u64>().map_err(|_| {
                        ConfigError::Invalid(format!("{ENV_PREFIX}{k} must be a number"))
                    })
                })
                .transpose()
        };
        let page = raw.server.list_page_size.unwrap_or(1000);
        // Zero would be a panic (an interval of 0), a server that accepts nothing or a limit that
        // refuses everything: each is refused here with the setting's name.
        let positive = |name: &str, v: Option<u64>| -> Result<(), ConfigError> {
            match v {
                Some(0) => Err(ConfigError::Invalid(format!("{name} must be > 0"))),
                _ => Ok(()),
            }
        };
        let s = &raw.server;
        for (name, v) in [
            ("server.list_page_size", s.list_page_size.map(|v| v as u64)),
            ("server.max_body_bytes", s.max_body_bytes.map(|v| v as u64)),
            ("server.request_timeout_secs", s.request_timeout_secs),
            ("server.session_idle_secs", s.session_idle_secs),
            (
                "server.max_connections",
                s.max_connections.map(|v| v as u64),
            ),
            (
                "server.header_read_timeout_secs",
                s.header_read_timeout_secs,
            ),
            ("server.body_read_timeout_secs", s.body_read_timeout_secs),
            (
                "server.max_upstream_message_bytes",
                s.max_upstream_message_bytes.map(|v| v as u64),
            ),
            ("audit.queue", raw.audit.queue.map(|v| v as u64)),
            ("audit.batch", raw.audit.batch.map(|v| v as u64)),
            ("auth.jwks_ttl_secs", raw.auth.jwks_ttl_secs),
            (
                "database.max_connections",
                raw.database.max_connections.map(u64::from),
            ),
        ] {
            positive(name, v)?;
        }
        for k in ["MAX_BODY_BYTES", "REQUEST_TIMEOUT_SECS"] {
            positive(&format!("{ENV_PREFIX}{k}"), parse_num(k)?)?;
        }
        let auth_mode = match var("AUTH_MODE").as_deref() {
            None => raw.auth.mode.unwrap_or_default(),
            Some("none") => AuthMode::None,
            Some("required") => AuthMode::Required,
            Some(other) => {
                return Err(ConfigError::Invalid(format!(
                    "{ENV_PREFIX}AUTH_MODE must be none or required (got {other:?})"
                )))
            }
        };
        let resource = var("AUTH_RESOURCE")
            .or(raw.auth.resource)
            .filter(|r| !r.is_empty());
        if !raw.auth.issuers.is_empty() && resource.is_none() {
            return Err(ConfigError::Invalid(
                "auth.resource (the gateway's public URL, e.g. https://mcp.example.com/mcp) is \
                 required with auth.issuers: access tokens must name it as their audience"
                    .into(),
            ));
        }
        let mut role_names = std::collections::HashSet::new();
        for r in &raw.roles {
            r.validate().map_err(ConfigError::Invalid)?;
            if !role_names.insert(r.name.clone()) {
                return Err(ConfigError::Invalid(format!(
                    "role {:?} is defined twice",
                    r.name
                )));
            }
        }
        if let Some(l) = raw.auth.rate_limit {
            if l.per_second == 0 || l.burst == 0 {
                return Err(ConfigError::Invalid(
                    "auth.rate_limit: per_second and burst must be > 0".into(),
                ));
            }
        }
        let auth = AuthConfig {
            mode: auth_mode,
            resource,
            issuers: raw.auth.issuers,
            required_scopes: raw.auth.required_scopes,
            role_mappings: raw.auth.role_mappings,
            leeway: Duration::from_secs(raw.auth.leeway_secs.unwrap_or(30)),
            jwks_ttl: Duration::from_secs(raw.auth.jwks_ttl_secs.unwrap_or(300)),
            jwks_min_refresh: Duration::from_secs(raw.auth.jwks_min_refresh_secs.unwrap_or(10)),
            rate_limit: raw.auth.rate_limit,
        };
        let audit = AuditConfig {
            redact_keys: raw
                .audit
                .redact_keys
                .unwrap_or_else(|| DEFAULT_REDACT.iter().map(|s| s.to_string()).collect())
                .into_iter()
                .map(|k| k.to_ascii_lowercase())
                .collect(),
            max_argument_bytes: raw.audit.max_argument_bytes.unwrap_or(4096),
            queue: raw.audit.queue.unwrap_or(65_536),
            batch: raw.audit.batch.unwrap_or(500),
            shutdown_flush: Duration::from_secs(raw.audit.shutdown_flush_secs.unwrap_or(30)),
        };
        let routing = crate::routing::config::RoutingConfig::from_raw(raw.routing, &var)
            .map_err(ConfigError::Invalid)?;
        Ok(Config {
            routing,
            listen,
            allowed_origins: raw.server.allowed_origins,
            allowed_hosts: raw.server.allowed_hosts,
            max_body_bytes: parse_num("MAX_BODY_BYTES")?
                .map(|n| n as usize)
                .or(raw.server.max_body_bytes)
                .unwrap_or(4 * 1024 * 1024),
            request_timeout: Duration::from_secs(
                parse_num("REQUEST_TIMEOUT_SECS")?
                    .or(raw.server.request_timeout_secs)
                    .unwrap_or(120),
            ),
            session_idle: Duration::from_secs(raw.server.session_idle_secs.unwrap_or(1800)),
            list_page_size: page,
            admin_remote: raw.server.admin_remote.unwrap_or(false),
            shutdown_grace: Duration::from_secs(raw.server.shutdown_grace_secs.unwrap_or(20)),
            session_key: match var("SESSION_KEY") {
                Some(k) => Some(Secret::new(k)),
                None => raw
                    .server
                    .session_key
                    .map(|k| {
                        if matches!(k, ValueSource::Literal(_)) {
                            return Err(ConfigError::Invalid(
                                "server.session_key must be a reference ({ env = \"VAR\" } or \
                                 { file = \"/path\" }), not clear text"
                                    .into(),
                            ));
                        }
                        k.resolve(&env)
                            .map_err(|e| ConfigError::Invalid(format!("server.session_key: {e}")))
                    })
                    .transpose()?,
            },
            advertise_url: var("ADVERTISE_URL")
                .or(raw.server.advertise_url)
                .map(|u| u.trim_end_matches('/').to_string())
                .filter(|u| !u.is_empty()),
            list_ttl_ms: raw.server.list_ttl_ms.unwrap_or(60_000),
            max_connections: raw.server.max_connections.unwrap_or(10_000),
            header_read_timeout: Duration::from_secs(
                raw.server.header_read_timeout_secs.unwrap_or(10),
            ),
            body_read_timeout: Duration::from_secs(raw.server.body_read_timeout_secs.unwrap_or(30)),
            max_upstream_message_bytes: raw
                .server
                .max_upstream_message_bytes
                .unwrap_or(16 * 1024 * 1024),
            // 0 switches the ping off.
            upstream_ping: match raw.server.upstream_ping_secs.unwrap_or(30) {
                0 => None,
                n => Some(Duration::from_secs(n)),
            },
            database_url: Secret::new(database_url),
            database_max_connections: raw.database.max_connections.unwrap_or(10),
            upstreams,
            auth,
            audit,
            roles: raw.roles,
            env,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_config_parses() {
        let c = Config::parse(EXAMPLE_CONFIG, None, HashMap::new()).unwrap();
        assert!(!c.upstreams.is_empty());
        assert!(c.database_url.expose().starts_with("sqlite:"));
    }

    #[test]
    fn env_overrides_file() {
        let env = HashMap::from([
            ("MCP_GATEWAY_LISTEN".to_string(), "127.0.0.1:0".to_string()),
            (
                "MCP_GATEWAY_DATABASE_URL".to_string(),
                "postgres://x/y".to_string(),
            ),
        ]);
        let c = Config::parse("[server]\nlisten = \"0.0.0.0:1\"\n", None, env).unwrap();
        assert_eq!(c.listen.port(), 0);
        assert_eq!(c.database_url.expose(), "postgres://x/y");
    }

    #[test]
    fn unknown_fields_and_clear_secrets_are_refused() {
        let e = Config::parse("[server]\nlisen = \"x\"\n", None, HashMap::new()).unwrap_err();
        assert!(e.to_string().contains("lisen"), "{e}");
        let e = Config::parse(
            "[[upstreams]]\nname = \"gh\"\ntransport = \"http\"\nurl = \"https://x\"\n\
             headers = { Authorization = \"Bearer abc\" }\n",
            None,
            HashMap::new(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("looks like a secret"), "{e}");
        Config::parse(
            "[[upstreams]]\nname = \"gh\"\ntransport = \"http\"\nurl = \"https://x\"\n\
             headers = { Authorization = { env = \"GH\" } }\n",
            None,
            HashMap::new(),
        )
        .unwrap();
    }

    #[test]
    fn url_credentials_are_redacted() {
        assert_eq!(
            redact_userinfo(
                "error for url (http://ada:hunter2@up.example:8/mcp) and https://x/y@z"
            ),
            "error for url (http://***@up.example:8/mcp) and https://x/y@z"
        );
        assert_eq!(
            redact_userinfo("{\"url\":\"https://u@h\"}"),
            "{\"url\":\"https://***@h\"}"
        );
        assert_eq!(redact_userinfo("plain"), "plain");
    }

    #[test]
    fn secrets_do_not_print() {
        assert_eq!(format!("{:?}", Secret::new("hunter2")), "Secret(***)");
    }
}
