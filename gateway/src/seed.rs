//! The config file's upstreams and roles in the registry: written at start-up with source
//! `config`, and those the file no longer defines removed, so that deleting one from the file
//! deletes it (what was registered through the API, source `api`, is never touched).

use std::collections::HashSet;

use registry::Registry;

use crate::config::Config;

/// Writes the file's upstreams and roles, then removes config-sourced ones it no longer has.
pub async fn seed(registry: &dyn Registry, config: &Config) -> anyhow::Result<()> {
    for spec in &config.upstreams {
        registry
            .put_upstream(&spec.name, &serde_json::to_value(spec)?, "config")
            .await?;
    }
    for role in &config.roles {
        registry
            .put_role(&role.name, &serde_json::to_value(role)?, "config")
            .await?;
    }
    let upstreams: HashSet<&str> = config.upstreams.iter().map(|u| u.name.as_str()).collect();
    for rec in registry.list_upstreams().await? {
        if rec.source == "config" && !upstreams.contains(rec.name.as_str()) {
            registry.delete_upstream(&rec.name).await?;
            tracing::info!(upstream = %rec.name, "removed: no longer in the config file");
        }
    }
    let roles: HashSet<&str> = config.roles.iter().map(|r| r.name.as_str()).collect();
    for rec in registry.list_roles().await? {
        if rec.source == "config" && !roles.contains(rec.name.as_str()) {
            registry.delete_role(&rec.name).await?;
            tracing::info!(role = %rec.name, "removed: no longer in the config file");
        }
    }
    Ok(())
}
