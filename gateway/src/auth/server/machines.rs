//! Machine clients at the gateway's own authorization server: the client credentials grant
//! (RFC 6749 §4.4; the MCP extension `io.modelcontextprotocol/oauth-client-credentials`) for an
//! agent that acts as itself, not for a user. Only clients of the config file that name their
//! `roles` use it, and they authenticate with their secret or an assertion they sign. The
//! token's principal is the client (`client:{client_id}`, apart from every user's subject) with
//! those roles; no refresh token (the client asks again), and the grant shows and is revoked
//! like any other.

use std::collections::HashMap;

use axum::http::StatusCode;
use axum::response::Response;
use registry::{now_ms, ClientRecord, GrantRecord};

use super::id_jag::narrowed;
use super::{oauth_error, server, unavailable, unserved};
use crate::state::AppState;

pub const CLIENT_CREDENTIALS: &str = "client_credentials";

/// The grant a machine client's token request comes to: stored.
pub(super) async fn grant(
    state: &AppState,
    client: &ClientRecord,
    proven: bool,
    form: &HashMap<String, String>,
) -> Result<GrantRecord, Response> {
    let s = server(state);
    let refused = |m: &str| oauth_error(StatusCode::BAD_REQUEST, "unauthorized_client", m);
    // The roles come from the config, never from what a client registered.
    let configured = s
        .config
        .clients
        .iter()
        .find(|(c, _)| c.client_id == client.client_id && client.source == "config");
    let roles =
        match configured {
            Some((c, _)) if !c.roles.is_empty() => c.roles.clone(),
            _ => return Err(refused(
                "the client credentials grant is for clients of the gateway's config that name \
                 their roles",
            )),
        };
    if !proven {
        return Err(refused(
            "the client credentials grant needs a client that authenticates (a secret or a \
             signed assertion)",
        ));
    }
    let resource = form
        .get("resource")
        .cloned()
        .unwrap_or_else(|| s.resource.clone());
    if let Some(refused) = unserved(s, &resource) {
        return Err(refused);
    }
    // What the client asks among the server's scopes; nothing asked: the first.
    let scope = match form.get("scope") {
        None => s.config.scopes[0].clone(),
        Some(asked) => {
            let every = s.config.scopes.join(" ");
            narrowed(s, Some(&every), Some(asked)).ok_or_else(|| {
                oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_scope",
                    &format!("scopes offered: {every}"),
                )
            })?
        }
    };
    let grant = GrantRecord {
        id: uuid::Uuid::new_v4().simple().to_string(),
        subject: format!("client:{}", client.client_id),
        client_id: client.client_id.clone(),
        roles,
        scope,
        resource,
        signed_in_with: CLIENT_CREDENTIALS.into(),
        created_at: now_ms(),
        revoked_at: None,
    };
    if state.registry.create_grant(&grant).await.is_err() {
        return Err(unavailable());
    }
    Ok(grant)
}
