//! The `[auth]` section: who may call, which issuers' tokens are accepted, and how claims map to
//! roles.

use std::time::Duration;

use serde::Deserialize;

use super::env::Overrides;
use super::error::{positive, KeyError};

/// Who may call: `none` (local development: everyone may do everything) or `required` (a bearer
/// token on every request: an OAuth access token or a personal access token).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AuthMode {
    #[default]
    None,
    Required,
}

/// An OAuth authorization server whose access tokens the gateway accepts.
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RoleMapping {
    pub claim: String,
    pub value: String,
    pub role: String,
}

/// Requests per second per principal, with bursts up to `burst`.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RateLimit {
    pub per_second: u32,
    pub burst: u32,
}

// Defaults, as the generated schema shows them.
pub const DEFAULT_LEEWAY_SECS: u64 = 30;
pub const DEFAULT_JWKS_TTL_SECS: u64 = 300;
pub const DEFAULT_JWKS_MIN_REFRESH_SECS: u64 = 10;

// The variables that override keys of `[auth]`.
pub const MODE_VAR: &str = "MCP_GATEWAY_AUTH_MODE";
pub const RESOURCE_VAR: &str = "MCP_GATEWAY_AUTH_RESOURCE";

#[derive(Debug, Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawAuth {
    #[schemars(extend("default" = "none", "x-env" = MODE_VAR))]
    mode: Option<AuthMode>,
    /// The gateway's public URL (`https://mcp.example.com/mcp`): the audience of access tokens.
    #[schemars(extend("x-env" = RESOURCE_VAR))]
    resource: Option<String>,
    #[serde(default)]
    issuers: Vec<IssuerConfig>,
    #[serde(default)]
    required_scopes: Vec<String>,
    #[serde(default)]
    role_mappings: Vec<RoleMapping>,
    #[schemars(extend("default" = DEFAULT_LEEWAY_SECS))]
    leeway_secs: Option<u64>,
    #[schemars(extend("default" = DEFAULT_JWKS_TTL_SECS))]
    jwks_ttl_secs: Option<u64>,
    #[schemars(extend("default" = DEFAULT_JWKS_MIN_REFRESH_SECS))]
    jwks_min_refresh_secs: Option<u64>,
    rate_limit: Option<RateLimit>,
    server: Option<super::auth_server::RawAuthServer>,
    /// `mode = "none"` together with `server.allowed_hosts = ["*"]` lets anyone who reaches the
    /// port call every tool and (from loopback) the admin API; the gateway refuses to start so
    /// unless this says it is meant (a demo on a closed network).
    #[serde(default)]
    allow_none_on_any_host: bool,
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
    /// `mode = "none"` on any host name is meant (see the raw key).
    pub allow_none_on_any_host: bool,
    /// The gateway's own authorization server, when on.
    pub server: Option<super::auth_server::AuthServerConfig>,
}

impl AuthConfig {
    pub(super) fn from_raw(raw: RawAuth, vars: Overrides) -> Result<Self, KeyError> {
        positive("auth.jwks_ttl_secs", raw.jwks_ttl_secs)?;
        let mode = match vars.get(MODE_VAR).as_deref() {
            None => raw.mode.unwrap_or_default(),
            Some("none") => AuthMode::None,
            Some("required") => AuthMode::Required,
            Some(other) => {
                return Err(KeyError::new(
                    MODE_VAR,
                    format!("must be none or required (got {other:?})"),
                ))
            }
        };
        let resource = vars
            .get(RESOURCE_VAR)
            .or(raw.resource)
            .filter(|r| !r.is_empty());
        if !raw.issuers.is_empty() && resource.is_none() {
            return Err(KeyError::new(
                "auth.resource",
                "the gateway's public URL (e.g. https://mcp.example.com/mcp) is required with \
                 auth.issuers: access tokens must name it as their audience",
            ));
        }
        if let Some(l) = raw.rate_limit {
            if l.per_second == 0 || l.burst == 0 {
                return Err(KeyError::new(
                    "auth.rate_limit",
                    "per_second and burst must be > 0",
                ));
            }
        }
        let server = super::auth_server::AuthServerConfig::from_raw(
            raw.server,
            resource.as_deref(),
            mode == AuthMode::Required,
            vars,
        )?;
        Ok(AuthConfig {
            server,
            mode,
            resource,
            issuers: raw.issuers,
            required_scopes: raw.required_scopes,
            role_mappings: raw.role_mappings,
            leeway: Duration::from_secs(raw.leeway_secs.unwrap_or(DEFAULT_LEEWAY_SECS)),
            jwks_ttl: Duration::from_secs(raw.jwks_ttl_secs.unwrap_or(DEFAULT_JWKS_TTL_SECS)),
            jwks_min_refresh: Duration::from_secs(
                raw.jwks_min_refresh_secs
                    .unwrap_or(DEFAULT_JWKS_MIN_REFRESH_SECS),
            ),
            rate_limit: raw.rate_limit,
            allow_none_on_any_host: raw.allow_none_on_any_host,
        })
    }
}
