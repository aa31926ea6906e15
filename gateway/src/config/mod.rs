//! Configuration: a raw serde form per section (`deny_unknown_fields`, so a typo is an error, not
//! a silent default), each validated into its own settings by its `from_raw`, and put together
//! in [`Config`]. Environment overrides use the `MCP_GATEWAY_` prefix and are passed in as a
//! map, so tests never touch the process environment.
//!
//! | module | holds |
//! |---|---|
//! | [`server`] | `[server]`: listening, limits, timeouts |
//! | [`database`] | `[database]` |
//! | [`auth`] | `[auth]`: issuers, role mappings, rate limits |
//! | [`auth_server`] | `[auth.server]`: the gateway as the authorization server of its hosts |
//! | [`audit`] | `[audit]` |
//! | [`routing`] | `[routing]`: the model, how rankings are fused, how `/mcp` exposes tools |
//! | [`upstream`] | `[[upstreams]]`: the flat form and the typed [`UpstreamSpec`] |
//! | [`user_credentials`] | `[user_credentials]`: the key sealing users' upstream tokens |
//! | [`curation`] | an upstream's `tools`: which tools hosts see, and what they see of them |
//! | [`mcp_servers`] | `{"mcpServers": ...}` files read into upstream specs |
//! | [`secret`] | secrets that never print, references to them, URL redaction |
//! | [`env`] | the `MCP_GATEWAY_` overrides and what children inherit |
//!
//! `[[roles]]` is validated by `auth::rbac`.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;

pub mod audit;
pub mod auth;
pub mod auth_server;
pub mod check;
pub mod curation;
pub mod database;
pub mod env;
pub mod error;
pub mod log;
pub mod mcp_servers;
pub mod routing;
pub mod secret;
pub mod server;
pub mod upstream;
pub mod user_credentials;

pub use audit::{AuditConfig, WhenUnwritable};
pub use auth::{AuthConfig, AuthMode, IssuerConfig, RateLimit, RoleMapping};
pub use curation::{Curation, ToolCuration, ToolOverride};
pub use database::DatabaseConfig;
pub use env::{env_name_matches, Overrides, ENV_PREFIX, INHERITED_ENV};
pub use error::KeyError;
pub use secret::{looks_secret, redact_userinfo, Secret, ValueSource};
pub use server::ServerConfig;
pub use upstream::{
    CatalogReader, Endpoint, Launch, Pinning, Sharing, Transport, TransportKind, UpstreamOAuth,
    UpstreamSpec, UpstreamWire, UserOAuth,
};
pub use user_credentials::UserCredentialsConfig;

/// The example configuration shipped with the gateway; used when no file is given and
/// `config/gateway.toml` is not in the working directory.
pub const EXAMPLE_CONFIG: &str = include_str!("../../../config/gateway.toml");

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
    /// One key's problem: `key: why`.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// Problems of several sections, each on a line.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Several(Vec<ConfigError>),
}

impl ConfigError {
    /// Each problem on its own.
    pub fn each(self) -> Vec<ConfigError> {
        match self {
            ConfigError::Several(all) => all.into_iter().flat_map(ConfigError::each).collect(),
            one => vec![one],
        }
    }
}

/// Collects the problems of independent sections, so that one start-up (or `check-config`)
/// names all of them.
#[derive(Default)]
struct Problems(Vec<ConfigError>);

impl Problems {
    fn take<T, E: Into<ConfigError>>(&mut self, r: Result<T, E>) -> Option<T> {
        r.map_err(|e| self.0.push(e.into())).ok()
    }

    fn end(self) -> Result<(), ConfigError> {
        match self.0.len() {
            0 => Ok(()),
            1 => Err(self.0.into_iter().next().expect("one")),
            _ => Err(ConfigError::Several(self.0)),
        }
    }
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    server: server::RawServer,
    #[serde(default)]
    database: database::RawDatabase,
    /// A Claude Desktop / Cursor style `{"mcpServers": {...}}` file whose servers are added.
    #[serde(default)]
    mcp_servers_file: Option<PathBuf>,
    #[serde(default)]
    #[schemars(with = "Vec<UpstreamWire>")]
    upstreams: Vec<UpstreamSpec>,
    #[serde(default)]
    auth: auth::RawAuth,
    #[serde(default)]
    audit: audit::RawAudit,
    /// Roles seeded into the registry at start-up (the admin API manages more).
    #[serde(default)]
    roles: Vec<crate::auth::rbac::RoleSpec>,
    #[serde(default)]
    routing: crate::config::routing::RawRouting,
    #[serde(default)]
    user_credentials: user_credentials::RawUserCredentials,
    #[serde(default)]
    log: log::RawLog,
}

/// The validated configuration.
#[derive(Debug, Clone)]
pub struct Config {
    pub server: ServerConfig,
    pub database: DatabaseConfig,
    pub upstreams: Vec<UpstreamSpec>,
    pub auth: AuthConfig,
    pub audit: AuditConfig,
    pub roles: Vec<crate::auth::rbac::RoleSpec>,
    pub routing: crate::config::routing::RoutingConfig,
    pub user_credentials: UserCredentialsConfig,
    pub log: log::LogConfig,
    /// The process environment (or a test's), used to resolve secret references.
    pub env: HashMap<String, String>,
    /// The file this was read from (`None`: the bundled example), named where the API refuses
    /// to change what the file defines.
    pub file: Option<PathBuf>,
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
                let mut config = if p.extension().is_some_and(|e| e == "json") {
                    // Helm renders JSON faithfully (its TOML output turns integers into floats).
                    let raw = serde_json::from_str(&text)
                        .map_err(|e| ConfigError::Parse(format!("config: {e}")))?;
                    Self::from_raw(raw, p.parent(), env)?
                } else {
                    Self::parse(&text, p.parent(), env)?
                };
                config.file = Some(p.to_path_buf());
                Ok(config)
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
        Self::from_raw(raw, base, env)
    }

    fn from_raw(
        raw: RawConfig,
        base: Option<&Path>,
        env: HashMap<String, String>,
    ) -> Result<Self, ConfigError> {
        let vars = Overrides(&env);
        let mut p = Problems::default();
        let server = p.take(ServerConfig::from_raw(raw.server, vars));
        let database = p.take(DatabaseConfig::from_raw(raw.database, vars));
        let upstreams = p.take(upstreams(raw.upstreams, raw.mcp_servers_file, base));
        let auth = p.take(AuthConfig::from_raw(raw.auth, vars));
        let audit = p.take(AuditConfig::from_raw(raw.audit));
        let roles = p.take(roles(raw.roles).map_err(ConfigError::Invalid));
        let routing = p.take(crate::config::routing::RoutingConfig::from_raw(
            raw.routing,
            &|k| vars.get(k),
        ));
        let user_credentials = p.take(UserCredentialsConfig::from_raw(
            raw.user_credentials,
            vars,
            &env,
        ));
        let log = p.take(log::LogConfig::from_raw(raw.log, vars));
        let (
            Some(server),
            Some(database),
            Some(upstreams),
            Some(auth),
            Some(audit),
            Some(roles),
            Some(routing),
            Some(user_credentials),
            Some(log),
        ) = (
            server,
            database,
            upstreams,
            auth,
            audit,
            roles,
            routing,
            user_credentials,
            log,
        )
        else {
            return Err(p.end().expect_err("a section failed"));
        };
        if auth.mode == AuthMode::None
            && server.allowed_hosts.iter().any(|h| h == "*")
            && !auth.allow_none_on_any_host
        {
            return Err(KeyError::new(
                "auth.mode",
                "\"none\" with server.allowed_hosts = [\"*\"] lets anyone who reaches the port \
                 call every tool: set auth.mode = \"required\", or list the host names in \
                 server.allowed_hosts, or set auth.allow_none_on_any_host = true if that is meant",
            )
            .into());
        }
        for u in &upstreams {
            upstream_fits(u, &user_credentials, &auth)?;
        }
        // A machine client's roles must be roles: a typo would give it no tools, silently.
        let clients = auth
            .server
            .iter()
            .flat_map(|s| s.clients.iter().enumerate());
        for (i, (c, _)) in clients {
            if let Some(r) = c
                .roles
                .iter()
                .find(|r| !roles.iter().any(|d| &d.name == *r))
            {
                return Err(KeyError::new(
                    format!("auth.server.clients[{i}].roles"),
                    format!("{r:?} is not a role of [[roles]]"),
                )
                .into());
            }
        }
        Ok(Config {
            server,
            database,
            upstreams,
            auth,
            audit,
            roles,
            routing,
            user_credentials,
            log,
            env,
            file: None,
        })
    }
}

/// The JSON Schema of the configuration file, generated from the types that read it (their doc
/// comments are its descriptions), so it cannot drift from what the gateway accepts.
pub fn json_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(RawConfig)).expect("a schema is JSON")
}

/// The chart's `values.schema.json`: the chart's own values are left open, its `config` value
/// must be a configuration file (the definitions move to the root, where `$ref`s point).
pub fn chart_values_schema() -> serde_json::Value {
    let mut config = json_schema();
    let obj = config.as_object_mut().expect("a schema object");
    let dialect = obj.remove("$schema");
    let defs = obj.remove("$defs");
    obj.remove("title");
    serde_json::json!({
        "$schema": dialect,
        "title": "mcp-gateway chart values",
        "type": "object",
        "properties": { "config": config },
        "$defs": defs,
    })
}

/// The file's upstreams and those of its `mcp_servers_file`, each checked, no name twice.
fn upstreams(
    mut upstreams: Vec<UpstreamSpec>,
    mcp_servers_file: Option<PathBuf>,
    base: Option<&Path>,
) -> Result<Vec<UpstreamSpec>, ConfigError> {
    if let Some(file) = mcp_servers_file {
        let file = match base {
            Some(b) if file.is_relative() => b.join(file),
            _ => file,
        };
        let text = std::fs::read_to_string(&file).map_err(|source| ConfigError::Read {
            path: file.clone(),
            source,
        })?;
        upstreams.extend(mcp_servers::parse(&text, file.parent()).map_err(ConfigError::Invalid)?);
    }
    let mut seen = HashSet::new();
    for u in &upstreams {
        u.validate()?;
        if !seen.insert(u.name.clone()) {
            return Err(KeyError::new(format!("upstreams[{}]", u.name), "is defined twice").into());
        }
    }
    Ok(upstreams)
}

/// The seeded roles, each checked, no name twice.
fn roles(
    roles: Vec<crate::auth::rbac::RoleSpec>,
) -> Result<Vec<crate::auth::rbac::RoleSpec>, String> {
    let mut seen = HashSet::new();
    for r in &roles {
        r.validate()?;
        if !seen.insert(r.name.clone()) {
            return Err(format!("role {:?} is defined twice", r.name));
        }
    }
    Ok(roles)
}

/// What `u` needs of the rest of the config, for upstreams of the file and of the admin API
/// alike (the API must not take one the file would refuse): the key and why, when it is
/// missing.
pub fn upstream_fits(
    u: &UpstreamSpec,
    user_credentials: &UserCredentialsConfig,
    auth: &AuthConfig,
) -> Result<(), KeyError> {
    let Some(user) = u.transport.endpoint().and_then(|e| e.user_oauth.as_ref()) else {
        return Ok(());
    };
    if user_credentials.keys.is_empty() {
        return Err(KeyError::new(
            "user_credentials.key",
            format!(
                "upstream {:?} has user_oauth: its users' tokens are sealed with this key (or \
                 {}), which is not set",
                u.name,
                user_credentials::KEY_VAR
            ),
        ));
    }
    if user.enterprise_managed && auth.server.as_ref().is_none_or(|s| s.federation.is_none()) {
        return Err(KeyError::new(
            "auth.server.oidc",
            format!(
                "upstream {:?} has user_oauth.enterprise_managed: its users' tokens come from \
                 their sign-in at the company's provider, which is not configured",
                u.name
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_config_parses() {
        let c = Config::parse(EXAMPLE_CONFIG, None, HashMap::new()).unwrap();
        assert!(!c.upstreams.is_empty());
        assert!(c.database.url.expose().starts_with("sqlite:"));
    }

    /// An error names the key it is about (its path in the file, or the variable), as
    /// `check-config` prints it.
    #[test]
    fn no_authentication_on_any_host_name_is_refused_unless_meant() {
        let open = "[server]\nallowed_hosts = [\"*\"]\n[auth]\nmode = \"none\"\n";
        let e = Config::parse(open, None, HashMap::new())
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("auth.mode: \"none\" with server.allowed_hosts"),
            "{e}"
        );
        let meant = format!("{open}allow_none_on_any_host = true\n");
        assert!(Config::parse(&meant, None, HashMap::new()).is_ok());
        let required = open.replace("\"none\"", "\"required\"");
        assert!(Config::parse(&required, None, HashMap::new()).is_ok());
    }

    #[test]
    fn errors_name_their_key() {
        let key_of = |toml: &str, env: &[(&str, &str)]| {
            let env = env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            match Config::parse(toml, None, env) {
                Err(ConfigError::Key(e)) => e.key,
                other => panic!("{toml}: {other:?}"),
            }
        };
        assert_eq!(key_of("[server]\nlisten = \"x\"", &[]), "server.listen");
        assert_eq!(
            key_of("", &[("MCP_GATEWAY_REQUEST_TIMEOUT_SECS", "0")]),
            "MCP_GATEWAY_REQUEST_TIMEOUT_SECS"
        );
        assert_eq!(
            key_of("[routing]\nmax_k = 1\ndefault_k = 2", &[]),
            "routing.max_k"
        );
        assert_eq!(
            key_of(
                "[[upstreams]]\nname = \"gh\"\ntransport = \"http\"\nurl = \"https://x\"\n\
                 headers = { Authorization = \"Bearer x\" }",
                &[]
            ),
            "upstreams[gh].headers.Authorization"
        );
        assert_eq!(
            key_of("[auth.server]\n[auth]\nmode = \"required\"", &[]),
            "auth.resource"
        );
        // Enterprise-managed: a client the company's provider knows, and that provider.
        let managed = |client: &str| {
            format!(
                "[[upstreams]]\nname = \"gh\"\ntransport = \"http\"\nurl = \"https://x/mcp\"\n\
                 sharing = \"per_session\"\n[upstreams.user_oauth]\nenterprise_managed = true\n\
                 {client}\n[user_credentials]\nkey = {{ env = \"K\" }}"
            )
        };
        let key = [("K", "KioqKioqKioqKioqKioqKioqKioqKioqKioqKioqKio=")];
        assert_eq!(
            key_of(&managed(""), &key),
            "upstreams[gh].user_oauth.enterprise_managed"
        );
        assert_eq!(
            key_of(&managed("client_id = \"gw\""), &key),
            "auth.server.oidc"
        );
        // A machine client: a secret, and roles that exist.
        let machine = |extra: &str| {
            format!(
                "[auth]\nmode = \"required\"\nresource = \"https://gw.example/mcp\"\n\
                 [auth.server]\n[[auth.server.clients]]\nclient_id = \"bot\"\n\
                 redirect_uris = []\nroles = [\"readr\"]\n{extra}\n\
                 [[roles]]\nname = \"reader\""
            )
        };
        assert_eq!(key_of(&machine(""), &[]), "auth.server.clients[0].roles");
        let secret = "client_secret = { env = \"S\" }";
        assert_eq!(
            key_of(&machine(secret), &[("S", "s")]),
            "auth.server.clients[0].roles"
        );
    }

    /// Defaults and the variables that override keys are in the generated schema, from the
    /// same constants the gateway reads.
    #[test]
    fn the_schema_shows_defaults_and_overriding_variables() {
        let schema = json_schema();
        let listen = &schema["$defs"]["RawServer"]["properties"]["listen"];
        assert_eq!(listen["default"], server::DEFAULT_LISTEN);
        assert_eq!(listen["x-env"], server::LISTEN_VAR);
        let timeout = &schema["$defs"]["RawServer"]["properties"]["request_timeout_secs"];
        assert_eq!(timeout["default"], server::DEFAULT_REQUEST_TIMEOUT_SECS);
        let url = &schema["$defs"]["RawDatabase"]["properties"]["url"];
        assert_eq!(url["x-env"], database::URL_VAR);
    }

    /// `config/examples/user-oauth.toml` parses with the key and secret its header sets, and
    /// is refused without the key.
    #[test]
    fn the_user_oauth_example_parses() {
        let text = include_str!("../../../config/examples/user-oauth.toml");
        let e = Config::parse(text, None, HashMap::new()).unwrap_err();
        assert!(
            e.to_string().contains("MCP_GATEWAY_USER_CREDENTIALS_KEY"),
            "{e}"
        );
        let env = HashMap::from([(
            "MCP_GATEWAY_USER_CREDENTIALS_KEY".to_string(),
            "KioqKioqKioqKioqKioqKioqKioqKioqKioqKioqKio=".to_string(),
        )]);
        let c = Config::parse(text, None, env).unwrap();
        assert_eq!(c.user_credentials.keys.len(), 1);
        let u = c.upstreams[0].transport.endpoint().unwrap();
        assert_eq!(u.user_oauth.as_ref().unwrap().scopes, ["repo", "read:org"]);
    }

    /// `config/examples/authorization-server.toml` parses, with the provider and the resource
    /// from the environment as its header says.
    #[test]
    fn the_authorization_server_example_parses() {
        let text = include_str!("../../../config/examples/authorization-server.toml");
        let env = HashMap::from([
            ("OIDC_CLIENT_SECRET".to_string(), "s".to_string()),
            ("INTERNAL_AGENT_SECRET".to_string(), "a".to_string()),
            (
                "MCP_GATEWAY_AUTH_SERVER_OIDC_ISSUER".to_string(),
                "https://idp.example.org/".to_string(),
            ),
            (
                "MCP_GATEWAY_AUTH_RESOURCE".to_string(),
                "https://mcp.example.com/mcp".to_string(),
            ),
        ]);
        let c = Config::parse(text, None, env).unwrap();
        let s = c.auth.server.expect("the server is on");
        assert_eq!(s.issuer, "https://mcp.example.com");
        let f = s.federation.expect("federated sign-in");
        assert_eq!(f.issuer, "https://idp.example.org");
        assert_eq!(f.scopes[0], "openid");
        assert_eq!(s.clients.len(), 1);
        assert!(s.clients[0].1.is_some(), "a confidential client");
    }

    /// `config/examples/enterprise-managed.toml` parses with the secrets its header sets: a host
    /// client that redeems the company's grants, an upstream whose tokens come from them.
    #[test]
    fn the_enterprise_managed_example_parses() {
        let text = include_str!("../../../config/examples/enterprise-managed.toml");
        let env = HashMap::from(
            [
                ("OIDC_CLIENT_SECRET", "o"),
                ("AGENT_SECRET", "a"),
                ("SLACK_CLIENT_SECRET", "s"),
                (
                    "MCP_GATEWAY_USER_CREDENTIALS_KEY",
                    "KioqKioqKioqKioqKioqKioqKioqKioqKioqKioqKio=",
                ),
            ]
            .map(|(k, v)| (k.to_string(), v.to_string())),
        );
        let c = Config::parse(text, None, env).unwrap();
        let s = c.auth.server.expect("the server is on");
        assert!(s.clients[0].0.identity_assertion_grants);
        let u = c.upstreams[0].transport.endpoint().unwrap();
        assert!(u.user_oauth.as_ref().unwrap().enterprise_managed);
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
        assert_eq!(c.server.listen.port(), 0);
        assert_eq!(c.database.url.expose(), "postgres://x/y");
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
