//! Admin API of the authorization server (`[auth.server]`): its clients (list, register
//! beforehand, block, delete) and the grants users gave them (list, revoke one, revoke all of a
//! user's). Every change is audited; a revocation takes effect at once on every replica.

use std::sync::Arc;

use axum::extract::{Extension, Path, Query, State};
use axum::http::StatusCode;
use axum::Json;
use registry::{ClientRecord, GrantRecord, GrantsOf};
use serde::Deserialize;
use serde_json::{json, Value};

use super::error::AdminError;
use super::trail::audited;
use crate::auth::server::clients;
use crate::auth::Principal;
use crate::state::AppState;

fn server_on(state: &AppState) -> Result<(), AdminError> {
    match state.auth.server {
        Some(_) => Ok(()),
        None => Err(AdminError::NotFound(
            "the authorization server is off (auth.server)".into(),
        )),
    }
}

/// Registered clients (never their secrets).
#[utoipa::path(get, path = "/admin/v1/oauth/clients", responses((status = 200), (status = 404)))]
pub async fn list_clients(
    State(state): State<AppState>,
) -> Result<Json<Vec<ClientRecord>>, AdminError> {
    server_on(&state)?;
    Ok(Json(state.registry.list_clients().await?))
}

/// A client registered beforehand: `{"client_name", "redirect_uris", "confidential"}`. A
/// confidential client's secret is in the answer, once.
#[utoipa::path(post, path = "/admin/v1/oauth/clients", responses((status = 201), (status = 400)))]
pub async fn create_client(
    State(state): State<AppState>,
    Extension(p): Extension<Arc<Principal>>,
    super::body::Body(body): super::body::Body,
) -> Result<(StatusCode, Json<Value>), AdminError> {
    server_on(&state)?;
    let scopes = state
        .auth
        .server
        .as_ref()
        .map(|s| s.config.scopes.clone())
        .unwrap_or_default();
    let mut req = body.clone();
    let confidential = req
        .as_object_mut()
        .and_then(|o| o.remove("confidential"))
        .and_then(|c| c.as_bool())
        .unwrap_or(false);
    if confidential {
        req["token_endpoint_auth_method"] = json!("client_secret_basic");
    }
    let id = clients::new_client_id();
    let change = async {
        let (metadata, _) =
            clients::registered_metadata(&req, &scopes).map_err(AdminError::BadRequest)?;
        let (rec, secret) = clients::new_client(id.clone(), metadata.clone(), confidential, "api");
        state.registry.create_client(&rec).await?;
        let mut out = metadata;
        out["client_id"] = json!(id);
        if let Some(s) = secret {
            out["client_secret"] = json!(s);
        }
        Ok(out)
    };
    let out = audited(
        &state,
        &p,
        "admin.oauth_client.create",
        &id,
        Some(&body),
        change,
    )
    .await?;
    Ok((StatusCode::CREATED, Json(out)))
}

#[derive(Deserialize)]
pub struct Blocked {
    blocked: bool,
}

/// Block (revoking every grant of the client) or unblock a client.
#[utoipa::path(put, path = "/admin/v1/oauth/clients/{id}/blocked", responses((status = 200), (status = 404)))]
pub async fn block_client(
    State(state): State<AppState>,
    Extension(p): Extension<Arc<Principal>>,
    Path(id): Path<String>,
    super::body::Body(body): super::body::Body,
) -> Result<Json<ClientRecord>, AdminError> {
    server_on(&state)?;
    let b: Blocked = serde_json::from_value(body.clone())
        .map_err(|e| AdminError::BadRequest(format!("expected {{\"blocked\": bool}}: {e}")))?;
    let change = async {
        let rec = state.registry.block_client(&id, b.blocked).await?;
        distrust_grants(&state);
        Ok(rec)
    };
    let action = if b.blocked {
        "admin.oauth_client.block"
    } else {
        "admin.oauth_client.unblock"
    };
    Ok(Json(
        audited(&state, &p, action, &id, Some(&body), change).await?,
    ))
}

/// Delete a client; its grants are revoked.
#[utoipa::path(delete, path = "/admin/v1/oauth/clients/{id}", responses((status = 204), (status = 404)))]
pub async fn delete_client(
    State(state): State<AppState>,
    Extension(p): Extension<Arc<Principal>>,
    Path(id): Path<String>,
) -> Result<StatusCode, AdminError> {
    server_on(&state)?;
    let change = async {
        state.registry.delete_client(&id).await?;
        distrust_grants(&state);
        Ok(())
    };
    audited(&state, &p, "admin.oauth_client.delete", &id, None, change).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Deserialize, utoipa::IntoParams)]
pub struct GrantQuery {
    /// Only this user's grants.
    subject: Option<String>,
}

/// Grants, newest first (of one user with `?subject=`).
#[utoipa::path(get, path = "/admin/v1/oauth/grants", params(GrantQuery), responses((status = 200)))]
pub async fn list_grants(
    State(state): State<AppState>,
    Query(q): Query<GrantQuery>,
) -> Result<Json<Vec<GrantRecord>>, AdminError> {
    server_on(&state)?;
    Ok(Json(
        state.registry.list_grants(q.subject.as_deref()).await?,
    ))
}

/// Revoke a grant: its access and refresh tokens are refused at once, on every replica.
#[utoipa::path(delete, path = "/admin/v1/oauth/grants/{id}", responses((status = 204), (status = 404)))]
pub async fn revoke_grant(
    State(state): State<AppState>,
    Extension(p): Extension<Arc<Principal>>,
    Path(id): Path<String>,
) -> Result<StatusCode, AdminError> {
    server_on(&state)?;
    let change = async {
        if state.registry.get_grant(&id).await?.is_none() {
            return Err(AdminError::NotFound(format!("grant {id:?} not found")));
        }
        forget_grants_of(&state, GrantsOf::Id(&id)).await
    };
    audited(&state, &p, "admin.oauth_grant.revoke", &id, None, change).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Revoke every grant of a user.
#[utoipa::path(delete, path = "/admin/v1/oauth/users/{subject}/grants", responses((status = 204)))]
pub async fn revoke_user(
    State(state): State<AppState>,
    Extension(p): Extension<Arc<Principal>>,
    Path(subject): Path<String>,
) -> Result<StatusCode, AdminError> {
    server_on(&state)?;
    let change = async { forget_grants_of(&state, GrantsOf::Subject(&subject)).await };
    audited(
        &state,
        &p,
        "admin.oauth_user.revoke",
        &subject,
        None,
        change,
    )
    .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Revokes grants in the store (which tells the other replicas) and forgets them here at once.
async fn forget_grants_of(state: &AppState, which: GrantsOf<'_>) -> Result<(), AdminError> {
    crate::auth::server::revoke_grants(state, which).await?;
    Ok(())
}

/// After the store revoked a client's grants: none is trusted from memory here (the other
/// replicas were told grant by grant).
fn distrust_grants(state: &AppState) {
    if let Some(s) = &state.auth.server {
        s.grants.distrust_all();
    }
}
