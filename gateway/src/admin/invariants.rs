//! What no admin change may do: change what the config file defines (the file is where those
//! live: the next start would put them back, and until then replicas and the file disagree), or
//! leave the gateway with nobody holding the admin right (the admin token then got 403
//! everywhere until a restart).

use std::collections::HashSet;

use super::error::AdminError;
use crate::auth::RoleSpec;
use crate::config::AuthMode;
use crate::state::AppState;

/// Refuses a change to `kind` `name` when the config file defines it (`source` "config").
pub(crate) fn not_from_file(
    state: &AppState,
    kind: &str,
    name: &str,
    source: &str,
) -> Result<(), AdminError> {
    if source != "config" {
        return Ok(());
    }
    let file = match &state.config.file {
        Some(f) => format!("the config file {}", f.display()),
        None => "the bundled example config".to_string(),
    };
    Err(AdminError::Conflict(format!(
        "{kind} {name:?} is defined in {file}; change or remove it there"
    )))
}

/// Refuses to replace role `name` with `with` (`None`: delete it) when no principal would then
/// hold a role with the admin right: a live token's roles, a claim mapping's or an issuer's.
/// Token revocation is not checked: taking a leaked token away must never be refused, and the
/// host's `mcp-gateway token create` mints a new admin token.
pub(crate) async fn keeps_an_admin(
    state: &AppState,
    name: &str,
    with: Option<&RoleSpec>,
) -> Result<(), AdminError> {
    if state.config.auth.mode != AuthMode::Required {
        return Ok(());
    }
    let mut admin_roles: HashSet<String> = HashSet::new();
    for rec in state.registry.list_roles().await? {
        if rec.name == name {
            continue;
        }
        if rec.spec.get("admin").and_then(serde_json::Value::as_bool) == Some(true) {
            admin_roles.insert(rec.name);
        }
    }
    if let Some(spec) = with.filter(|s| s.admin) {
        admin_roles.insert(spec.name.clone());
    }
    let auth = &state.config.auth;
    let by_config = auth
        .role_mappings
        .iter()
        .map(|m| &m.role)
        .chain(auth.issuers.iter().flat_map(|i| &i.roles))
        .any(|r| admin_roles.contains(r));
    if by_config {
        return Ok(());
    }
    let now = registry::now_ms();
    let by_token = state.registry.list_tokens().await?.iter().any(|t| {
        t.revoked_at.is_none()
            && t.expires_at.is_none_or(|e| e > now)
            && t.roles.iter().any(|r| admin_roles.contains(r))
    });
    if by_token {
        return Ok(());
    }
    Err(AdminError::Conflict(format!(
        "this change to role {name:?} would leave no token or claim mapping with the admin right"
    )))
}
