//! An upstream as configured. The config file, the admin API and the registry keep the flat form
//! ([`UpstreamWire`]: `transport = "stdio"` beside `command`, `url`, ...); it is read into
//! [`UpstreamSpec`], whose [`Transport`] holds only what its kind uses. A stdio upstream cannot
//! carry a URL, and the code that connects matches on the kind instead of unwrapping options.
//! What belongs to which kind is decided once, when the flat form is read; the checks that do
//! not depend on the shape (names, secrets in clear text, zero limits) are
//! [`UpstreamSpec::validate`], run wherever a spec enters the gateway.

use std::collections::BTreeMap;

use registry::PrefixMode;
use serde::{Deserialize, Serialize};

use super::curation::ToolCuration;
use super::env::ENV_PREFIX;
use super::error::KeyError;
use super::secret::{looks_secret, ValueSource};

/// How an upstream is reached.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Deserialize,
    Serialize,
    utoipa::ToSchema,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TransportKind {
    /// A child process speaking newline-delimited JSON-RPC on stdin/stdout.
    Stdio,
    /// Streamable HTTP (MCP 2025-03-26 and later).
    Http,
    /// The legacy HTTP+SSE transport (MCP 2024-11-05).
    Sse,
}

impl TransportKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TransportKind::Stdio => "stdio",
            TransportKind::Http => "http",
            TransportKind::Sse => "sse",
        }
    }
}

/// Whether callers share one upstream connection or each session gets its own.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    Deserialize,
    Serialize,
    utoipa::ToSchema,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Sharing {
    /// One connection multiplexed for all callers (stateless servers).
    #[default]
    Shared,
    /// One upstream session per downstream session (stateful servers, per-user state).
    PerSession,
}

/// An upstream: how it is reached and how the gateway treats it.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(try_from = "UpstreamWire", into = "UpstreamWire")]
pub struct UpstreamSpec {
    pub name: String,
    pub transport: Transport,
    pub sharing: Sharing,
    /// When the upstream's name goes in front of its tools' and prompts' names.
    pub prefix: PrefixMode,
    /// Per-request timeout in seconds (default: the server's `request_timeout_secs`).
    pub timeout_secs: Option<u64>,
    /// Longest text a tool result's text item may carry through the gateway (bytes).
    pub max_result_text_bytes: Option<usize>,
    /// Which tools hosts see and what they see of them.
    pub tools: ToolCuration,
    /// What happens when a tool's definition changes after it was approved.
    pub pinning: Pinning,
    pub enabled: bool,
}

/// Tool pinning (rug-pull defence): what the gateway does when an upstream changes a tool's
/// definition (name, title, description, input or output schema, annotations) from the one
/// approved, or lists a new tool. The first definitions seen are approved on first use.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    Deserialize,
    Serialize,
    utoipa::ToSchema,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Pinning {
    /// Definitions are served as the upstream lists them.
    #[default]
    Off,
    /// A changed or new definition is served, flagged (in its `_meta`, the log, the console
    /// and the `tools_pending_approval` metric) until an admin approves or rejects it.
    Warn,
    /// The approved definition keeps being served and calls are checked against its input
    /// schema; a new tool stays hidden until an admin approves it.
    Hold,
}

impl Pinning {
    pub fn is_off(&self) -> bool {
        *self == Self::Off
    }
}

/// How an upstream is reached, with what only that way needs.
#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    Stdio(Launch),
    /// Streamable HTTP.
    Http(Endpoint),
    /// The legacy HTTP+SSE transport.
    Sse(Endpoint),
}

impl Transport {
    pub fn kind(&self) -> TransportKind {
        match self {
            Transport::Stdio(_) => TransportKind::Stdio,
            Transport::Http(_) => TransportKind::Http,
            Transport::Sse(_) => TransportKind::Sse,
        }
    }

    /// The HTTP endpoint of an http or sse upstream.
    pub fn endpoint(&self) -> Option<&Endpoint> {
        match self {
            Transport::Stdio(_) => None,
            Transport::Http(e) | Transport::Sse(e) => Some(e),
        }
    }
}

/// A stdio upstream's child process.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    pub command: String,
    pub args: Vec<String>,
    /// The child's environment (values may be references).
    pub env: BTreeMap<String, ValueSource>,
    /// Variables of the gateway's environment the child may see besides
    /// [`INHERITED_ENV`](super::env::INHERITED_ENV).
    pub inherit_env: Vec<String>,
    pub cwd: Option<String>,
}

/// An http or sse upstream's endpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct Endpoint {
    pub url: String,
    /// Extra request headers (secrets as references).
    pub headers: BTreeMap<String, ValueSource>,
    /// OAuth client credentials for the upstream's authorization server.
    pub oauth: Option<UpstreamOAuth>,
    /// Each user signs in at the upstream's own authorization server; calls carry their token.
    pub user_oauth: Option<UserOAuth>,
}

/// An upstream whose calls act as each user with the user's own account there: the gateway is
/// an OAuth client of the upstream's authorization server (found from the upstream's protected
/// resource metadata), each user connects once in the browser, and the user's tokens (sealed
/// with `user_credentials.key`) go with that user's calls only. The catalog is read with a
/// designated account an admin connects (`POST /admin/v1/upstreams/{name}/connection`), or,
/// with `catalog = "first_user"`, with the account of the first user who connects.
#[derive(
    Debug, Clone, PartialEq, Default, Deserialize, Serialize, utoipa::ToSchema, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct UserOAuth {
    /// A client registered beforehand at the upstream's authorization server. Without it the
    /// gateway names itself by `client_metadata_url` where the server supports such documents,
    /// else registers itself (RFC 7591).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// That client's secret: a reference (`{ env = "VAR" }` or `{ file = "/path" }`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Object)]
    pub client_secret: Option<ValueSource>,
    /// The https URL of the gateway's client ID metadata document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_metadata_url: Option<String>,
    /// The authorization server (its issuer URL) the upstream's metadata must name. Set, users'
    /// browsers, the client's secret and users' tokens go to that server only: an upstream whose
    /// metadata names another (a compromised or impostor upstream) gets no sign-in link, and a
    /// stored connection from another server is forgotten. Left out, the gateway takes the
    /// server the metadata names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    /// The scopes to ask for (default: what the upstream's challenge or metadata names).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// Whose account lists the upstream's tools for everyone.
    #[serde(default, skip_serializing_if = "CatalogReader::is_account")]
    pub catalog: CatalogReader,
    /// Enterprise-managed authorization (the MCP extension, SEP-990): users' tokens come from
    /// their company sign-in (`[auth.server.oidc]`) with no consent page at the upstream. The
    /// gateway exchanges the user's ID token at the company's provider for an identity
    /// assertion grant (ID-JAG) naming the upstream's authorization server, and redeems it
    /// there (RFC 7523) as `client_id`, a client the company's provider knows.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub enterprise_managed: bool,
}

/// Whose account a `user_oauth` upstream's catalog (its tools, resources and prompts, listed
/// once for everyone) is read with. Calls always go with the caller's own account.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    Deserialize,
    Serialize,
    utoipa::ToSchema,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum CatalogReader {
    /// A designated account that an admin connects (a service or bot account): no user's
    /// token ever reads for others.
    #[default]
    Account,
    /// That account when an admin has connected one; until then the account of the user who
    /// connected first (the next one when that user disconnects). For installs without a
    /// service account: a user's token then lists the tools everyone sees, and nothing else.
    FirstUser,
}

impl CatalogReader {
    fn is_account(&self) -> bool {
        *self == Self::Account
    }
}

/// The gateway's own credentials for an upstream's authorization server (client credentials
/// grant); the token it gets is sent to the upstream as `Authorization: Bearer`. The client
/// authenticates with a secret or with a private key (exactly one of them).
#[derive(
    Debug, Clone, PartialEq, Deserialize, Serialize, utoipa::ToSchema, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct UpstreamOAuth {
    /// The authorization server's token endpoint. Left out: found the MCP authorization spec's
    /// way, from the upstream's protected resource metadata (RFC 9728) and its authorization
    /// server's metadata (RFC 8414), which also say how the client may authenticate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_url: Option<String>,
    /// The authorization server (its issuer URL) the upstream's metadata must name, when
    /// `token_url` is left out. Set, the client's secret or assertions go to that server only:
    /// an upstream whose metadata names another (a compromised or impostor upstream) gets
    /// nothing and is reported down. Left out, the gateway takes the server the metadata names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    pub client_id: String,
    /// A reference (`{ env = "VAR" }` or `{ file = "/path" }`), never clear text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub client_secret: Option<ValueSource>,
    /// A private key in PEM (a reference, never clear text): the client authenticates with an
    /// assertion it signs (RFC 7523 `private_key_jwt`) instead of a secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub private_key: Option<ValueSource>,
    /// The assertion's signing algorithm: `ES256` (the default), `ES384`, `RS256`, `RS384`,
    /// `RS512`, `PS256`, `PS384`, `PS512` or `EdDSA`, as the key and the server allow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private_key_algorithm: Option<String>,
    /// A JWT the gateway's platform issues it (a workload identity: a Kubernetes projected
    /// service account token, a cloud's instance identity), as a reference: `{ file = … }` is
    /// read again at each token request, as platforms rotate it. It is the grant itself (RFC 7523
    /// JWT bearer, workload identity federation): no secret or key is needed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub workload_token: Option<ValueSource>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// The upstream's resource URL (RFC 8707), the audience of the token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// Calls act as the signed-in user: each session's connection carries a token the
    /// authorization server issues for the upstream in exchange for the host's OAuth access
    /// token (RFC 8693 token exchange, with these client credentials). Needs
    /// `sharing = "per_session"` and `token_url` (users' tokens go there, never to a server the
    /// upstream's metadata names); the gateway's own connection (for the catalog) keeps the
    /// client-credentials token. Callers without an OAuth token (PATs) cannot use the upstream.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub token_exchange: bool,
}

/// An upstream as written in the config file and the admin API, and stored in the registry:
/// one flat object whose `transport` says which of the other fields apply.
#[derive(
    Debug, Clone, PartialEq, Deserialize, Serialize, utoipa::ToSchema, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
#[schema(as = UpstreamSpec)]
pub struct UpstreamWire {
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
    /// stdio: variables of the gateway's environment the child may see besides the inherited
    /// basics (names; a trailing `*` matches a prefix: `AWS_*`). Nothing else of the gateway's
    /// environment reaches a child: other upstreams' secrets live there.
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
    /// http: each user's own account at the upstream (needs `sharing = "per_session"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_oauth: Option<UserOAuth>,
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
    /// Which tools hosts see (include/exclude patterns on the upstream's own names) and what
    /// they see of each (name, description, annotations, fixed arguments).
    #[serde(default, skip_serializing_if = "ToolCuration::is_empty")]
    pub tools: ToolCuration,
    /// Tool pinning: `off` (default), `warn` or `hold` (see docs/tool-pinning.md).
    #[serde(default, skip_serializing_if = "Pinning::is_off")]
    pub pinning: Pinning,
    #[serde(default = "yes")]
    pub enabled: bool,
}

fn yes() -> bool {
    true
}

impl TryFrom<UpstreamWire> for UpstreamSpec {
    type Error = String;

    fn try_from(w: UpstreamWire) -> Result<Self, String> {
        let name = w.name;
        let transport = match w.transport {
            TransportKind::Stdio => {
                if w.url.is_some()
                    || !w.headers.is_empty()
                    || w.oauth.is_some()
                    || w.user_oauth.is_some()
                {
                    return Err(format!(
                        "upstream {name:?}: `url`, `headers`, `oauth` and `user_oauth` are for \
                         http/sse upstreams"
                    ));
                }
                let command = w
                    .command
                    .filter(|c| !c.is_empty())
                    .ok_or_else(|| format!("upstream {name:?}: stdio needs a `command`"))?;
                Transport::Stdio(Launch {
                    command,
                    args: w.args,
                    env: w.env,
                    inherit_env: w.inherit_env,
                    cwd: w.cwd,
                })
            }
            kind @ (TransportKind::Http | TransportKind::Sse) => {
                if w.command.is_some()
                    || !w.args.is_empty()
                    || !w.env.is_empty()
                    || !w.inherit_env.is_empty()
                    || w.cwd.is_some()
                {
                    return Err(format!(
                        "upstream {name:?}: `command`, `args`, `env`, `inherit_env` and `cwd` are \
                         for stdio upstreams"
                    ));
                }
                let url = w
                    .url
                    .filter(|u| u.starts_with("http://") || u.starts_with("https://"))
                    .ok_or_else(|| {
                        format!(
                            "upstream {name:?}: {} needs a `url` starting with http:// or https://",
                            kind.as_str()
                        )
                    })?;
                let endpoint = Endpoint {
                    url,
                    headers: w.headers,
                    oauth: w.oauth,
                    user_oauth: w.user_oauth,
                };
                if kind == TransportKind::Http {
                    Transport::Http(endpoint)
                } else {
                    Transport::Sse(endpoint)
                }
            }
        };
        Ok(UpstreamSpec {
            name,
            transport,
            sharing: w.sharing,
            prefix: w.prefix,
            timeout_secs: w.timeout_secs,
            max_result_text_bytes: w.max_result_text_bytes,
            tools: w.tools,
            pinning: w.pinning,
            enabled: w.enabled,
        })
    }
}

impl From<UpstreamSpec> for UpstreamWire {
    fn from(s: UpstreamSpec) -> Self {
        let mut w = UpstreamWire {
            name: s.name,
            transport: s.transport.kind(),
            command: None,
            args: Vec::new(),
            env: BTreeMap::new(),
            inherit_env: Vec::new(),
            cwd: None,
            url: None,
            headers: BTreeMap::new(),
            oauth: None,
            user_oauth: None,
            sharing: s.sharing,
            prefix: s.prefix,
            timeout_secs: s.timeout_secs,
            max_result_text_bytes: s.max_result_text_bytes,
            tools: s.tools,
            pinning: s.pinning,
            enabled: s.enabled,
        };
        match s.transport {
            Transport::Stdio(l) => {
                w.command = Some(l.command);
                w.args = l.args;
                w.env = l.env;
                w.inherit_env = l.inherit_env;
                w.cwd = l.cwd;
            }
            Transport::Http(e) | Transport::Sse(e) => {
                w.url = Some(e.url);
                w.headers = e.headers;
                w.oauth = e.oauth;
                w.user_oauth = e.user_oauth;
            }
        }
        w
    }
}

impl UpstreamSpec {
    /// The spec stored in a registry record; the record's own `enabled` flag can switch it off.
    pub fn from_record(rec: registry::UpstreamRecord) -> Result<Self, serde_json::Error> {
        let mut spec: UpstreamSpec = serde_json::from_value(rec.spec)?;
        spec.enabled = spec.enabled && rec.enabled;
        Ok(spec)
    }

    /// The flat form, as stored and shown.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(UpstreamWire::from(self.clone())).expect("a spec is JSON")
    }

    /// Checks what the shape does not: the name, that no credential is written in clear text,
    /// and that limits are not zero. The error names the key (`upstreams[fs].url`) and says
    /// what to fix.
    pub fn validate(&self) -> Result<(), KeyError> {
        let name = &self.name;
        let at = |field: &str, message: String| {
            KeyError::new(format!("upstreams[{name}].{field}"), message)
        };
        crate::names::Name::parse(crate::names::NameKind::Upstream, name)
            .map_err(|e| at("name", e))?;
        let (vars, headers) = match &self.transport {
            Transport::Stdio(l) => {
                if let Some(bad) = l.inherit_env.iter().find(|n| {
                    let n = n.strip_suffix('*').unwrap_or(n);
                    n.is_empty() || n.starts_with(ENV_PREFIX) || n.contains(['=', '*'])
                }) {
                    return Err(at(
                        "inherit_env",
                        format!(
                            "entry {bad:?} must be a variable name or PREFIX* (not empty, not \
                             {ENV_PREFIX}...)"
                        ),
                    ));
                }
                (Some(("env", &l.env)), None)
            }
            Transport::Http(e) | Transport::Sse(e) => {
                // Whatever is registered is stored and exported: a credential in the URL would
                // be kept in clear text (issue 37: `export` printed it).
                if url::Url::parse(&e.url)
                    .is_ok_and(|u| !u.username().is_empty() || u.password().is_some())
                {
                    return Err(at(
                        "url",
                        "holds credentials (user:password@); give them as a secret reference \
                         instead: headers = { Authorization = { env = \"VAR\" } }, VAR holding \
                         \"Basic <base64 of user:password>\" or \"Bearer <token>\""
                            .into(),
                    ));
                }
                if let Some(o) = &e.oauth {
                    o.validate()
                        .map_err(|(f, m)| at(&format!("oauth.{f}"), m))?;
                    if o.token_exchange && self.sharing != Sharing::PerSession {
                        return Err(at(
                            "oauth.token_exchange",
                            "gives each session its own identity, so it needs sharing = \
                             \"per_session\""
                                .into(),
                        ));
                    }
                    if o.token_exchange && matches!(self.transport, Transport::Sse(_)) {
                        return Err(at("oauth.token_exchange", "is for http upstreams".into()));
                    }
                }
                if let Some(u) = &e.user_oauth {
                    u.validate()
                        .map_err(|(f, m)| at(&format!("user_oauth.{f}"), m))?;
                    if self.sharing != Sharing::PerSession {
                        return Err(at(
                            "user_oauth",
                            "gives each user's calls their own token, so it needs sharing = \
                             \"per_session\""
                                .into(),
                        ));
                    }
                    if e.oauth.is_some() || !matches!(self.transport, Transport::Http(_)) {
                        return Err(at(
                            "user_oauth",
                            "is for http upstreams without `oauth`".into(),
                        ));
                    }
                }
                (None, Some(("headers", &e.headers)))
            }
        };
        for (field, map) in vars.into_iter().chain(headers) {
            for (key, value) in map {
                if looks_secret(key) && matches!(value, ValueSource::Literal(_)) {
                    return Err(at(
                        &format!("{field}.{key}"),
                        "looks like a secret; give it as a reference ({ env = \"VAR\" } or \
                         { file = \"/path\" }), not in clear text"
                            .into(),
                    ));
                }
            }
        }
        self.tools.validate().map_err(|e| at("tools", e))?;
        if self.timeout_secs == Some(0) {
            return Err(at("timeout_secs", "must be > 0".into()));
        }
        if self.max_result_text_bytes == Some(0) {
            return Err(at(
                "max_result_text_bytes",
                "must be > 0 (leave it out for no limit)".into(),
            ));
        }
        Ok(())
    }
}

impl UpstreamOAuth {
    /// Whether the client's secret goes to whichever authorization server the upstream's
    /// metadata names (no `token_url`, no `issuer`): a compromised upstream could collect it.
    pub fn secret_unpinned(&self) -> bool {
        self.client_secret.is_some() && self.token_url.is_none() && self.issuer.is_none()
    }

    /// The field that is wrong, and why.
    fn validate(&self) -> Result<(), (&'static str, String)> {
        let credentials = [
            ("client_secret", &self.client_secret),
            ("private_key", &self.private_key),
            ("workload_token", &self.workload_token),
        ];
        if let Some((field, _)) = credentials
            .iter()
            .find(|(_, v)| matches!(v, Some(ValueSource::Literal(_))))
        {
            return Err((field, CLEAR_TEXT.into()));
        }
        match credentials.iter().filter(|(_, v)| v.is_some()).count() {
            0 => {
                return Err((
                    "client_secret",
                    "needed (or a private_key to sign assertions with, or a workload_token)".into(),
                ))
            }
            1 => {}
            _ => {
                return Err((
                    "client_secret",
                    "give one of client_secret, private_key and workload_token".into(),
                ))
            }
        }
        if self.workload_token.is_some() && self.token_exchange {
            return Err((
                "token_exchange",
                "needs a client_secret or a private_key (the exchange authenticates the client)"
                    .into(),
            ));
        }
        if self.token_exchange && self.token_url.is_none() {
            return Err((
                "token_url",
                "needed with token_exchange: each user's access token is sent there to be \
                 exchanged, so the gateway names that server rather than taking the one the \
                 upstream's metadata names"
                    .into(),
            ));
        }
        if let Some(a) = &self.private_key_algorithm {
            if self.private_key.is_none() {
                return Err(("private_key_algorithm", "needs oauth.private_key".into()));
            }
            crate::upstream::assertion::algorithm(a).map_err(|e| ("private_key_algorithm", e))?;
        }
        if let Some(u) = &self.token_url {
            if !(u.starts_with("https://") || u.starts_with("http://")) {
                return Err(("token_url", "must be an http(s) URL".into()));
            }
            if self.issuer.is_some() {
                return Err((
                    "issuer",
                    "give token_url or issuer, not both: with token_url nothing is discovered"
                        .into(),
                ));
            }
        }
        issuer_is_a_url(&self.issuer)
    }
}

/// `issuer`, when given, as an http(s) URL.
fn issuer_is_a_url(issuer: &Option<String>) -> Result<(), (&'static str, String)> {
    match issuer {
        Some(u) if !(u.starts_with("https://") || u.starts_with("http://")) => Err((
            "issuer",
            "must be an http(s) URL (the server's issuer)".into(),
        )),
        _ => Ok(()),
    }
}

impl UserOAuth {
    /// Whether the preregistered client's secret goes to whichever authorization server the
    /// upstream's metadata names (no `issuer`).
    pub fn secret_unpinned(&self) -> bool {
        self.client_secret.is_some() && self.issuer.is_none()
    }

    /// The field that is wrong, and why.
    fn validate(&self) -> Result<(), (&'static str, String)> {
        if matches!(self.client_secret, Some(ValueSource::Literal(_))) {
            return Err(("client_secret", CLEAR_TEXT.into()));
        }
        if self.client_secret.is_some() && self.client_id.is_none() {
            return Err(("client_secret", "needs user_oauth.client_id".into()));
        }
        if let Some(u) = &self.client_metadata_url {
            if !u.starts_with("https://") {
                return Err(("client_metadata_url", "must be an https URL".into()));
            }
        }
        if self.enterprise_managed && self.client_id.is_none() && self.client_metadata_url.is_none()
        {
            return Err((
                "enterprise_managed",
                "needs user_oauth.client_id (or client_metadata_url): the company's provider \
                 names that client in the grants it issues, so a client the gateway registers \
                 on its own would not match"
                    .into(),
            ));
        }
        issuer_is_a_url(&self.issuer)
    }
}

const CLEAR_TEXT: &str =
    "must be a reference ({ env = \"VAR\" } or { file = \"/path\" }), not clear text";

#[cfg(test)]
mod tests;
