//! The `[database]` section: where the registry lives.

use serde::Deserialize;

use super::env::Overrides;
use super::error::{positive, KeyError};
use super::secret::Secret;

// Defaults, as the generated schema shows them.
pub const DEFAULT_URL: &str = "sqlite://mcp-gateway.db?mode=rwc";
pub const DEFAULT_MAX_CONNECTIONS: u32 = 10;

/// The variable that overrides `database.url`.
pub const URL_VAR: &str = "MCP_GATEWAY_DATABASE_URL";

#[derive(Debug, Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawDatabase {
    /// `postgres://...` or `sqlite://...`.
    #[schemars(extend("default" = DEFAULT_URL, "x-env" = URL_VAR))]
    url: Option<String>,
    #[schemars(extend("default" = DEFAULT_MAX_CONNECTIONS))]
    max_connections: Option<u32>,
}

/// The validated `[database]` section.
#[derive(Debug, Clone)]
pub struct DatabaseConfig {
    /// `postgres://...` or `sqlite://...` (it may hold a password, so it never prints).
    pub url: Secret,
    pub max_connections: u32,
}

impl DatabaseConfig {
    pub(super) fn from_raw(raw: RawDatabase, vars: Overrides) -> Result<Self, KeyError> {
        positive(
            "database.max_connections",
            raw.max_connections.map(u64::from),
        )?;
        let url = vars
            .get(URL_VAR)
            .or(raw.url)
            .unwrap_or_else(|| DEFAULT_URL.into());
        Ok(DatabaseConfig {
            url: Secret::new(url),
            max_connections: raw.max_connections.unwrap_or(DEFAULT_MAX_CONNECTIONS),
        })
    }
}
