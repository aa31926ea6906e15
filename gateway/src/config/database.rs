//! The `[database]` section: where the registry lives.

use serde::Deserialize;

use super::env::Overrides;
use super::secret::Secret;
use super::server::positive;

#[derive(Debug, Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawDatabase {
    url: Option<String>,
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
    pub(super) fn from_raw(raw: RawDatabase, vars: Overrides) -> Result<Self, String> {
        positive(
            "database.max_connections",
            raw.max_connections.map(u64::from),
        )?;
        let url = vars
            .get("DATABASE_URL")
            .or(raw.url)
            .unwrap_or_else(|| "sqlite://mcp-gateway.db?mode=rwc".into());
        Ok(DatabaseConfig {
            url: Secret::new(url),
            max_connections: raw.max_connections.unwrap_or(10),
        })
    }
}
