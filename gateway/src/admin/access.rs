//! Admin API for roles and personal access tokens. A token is shown once, in the answer that
//! creates it; lists show its id, owner, roles and times, never the token.

use std::sync::Arc;

use axum::extract::{Extension, Path, State};
use axum::http::StatusCode;
use axum::Json;
use registry::TokenRecord;
use serde::Serialize;
use serde_json::Value;

use super::error::AdminError;
use super::error::OrNotFound;
use super::invariants;
use super::trail::{audited, record};
use crate::auth::pat::{self, NewToken};
use crate::auth::{Principal, RoleSpec};
use crate::state::AppState;

/// A token as lists show it.
#[derive(Serialize, utoipa::ToSchema)]
pub struct TokenView {
    id: String,
    name: String,
    owner: String,
    roles: Vec<String>,
    /// Milliseconds since the Unix epoch.
    created_at: i64,
    expires_at: Option<i64>,
    last_used_at: Option<i64>,
    revoked_at: Option<i64>,
}

impl From<TokenRecord> for TokenView {
    fn from(t: TokenRecord) -> Self {
        Self {
            id: t.id,
            name: t.name,
            owner: t.owner,
            roles: t.roles,
            created_at: t.created_at,
            expires_at: t.expires_at,
            last_used_at: t.last_used_at,
            revoked_at: t.revoked_at,
        }
    }
}

/// A new token: the token itself appears here only.
#[derive(Serialize, utoipa::ToSchema)]
pub struct CreatedToken {
    token: String,
    #[serde(flatten)]
    view: TokenView,
}

/// List tokens (never the tokens themselves).
#[utoipa::path(get, path = "/admin/v1/tokens", responses((status = 200, body = [TokenView])))]
pub async fn list_tokens(
    State(state): State<AppState>,
) -> Result<Json<Vec<TokenView>>, AdminError> {
    Ok(Json(
        state
            .registry
            .list_tokens()
            .await?
            .into_iter()
            .map(TokenView::from)
            .collect(),
    ))
}

/// Create a personal access token; the answer shows it once.
#[utoipa::path(post, path = "/admin/v1/tokens", request_body = NewToken,
    responses((status = 201, body = CreatedToken), (status = 400)))]
pub async fn create_token(
    State(state): State<AppState>,
    Extension(p): Extension<Arc<Principal>>,
    crate::admin::body::Body(body): crate::admin::body::Body,
) -> Result<(StatusCode, Json<CreatedToken>), AdminError> {
    let started = std::time::Instant::now();
    let out = async {
        let req: NewToken = serde_json::from_value(body.clone())
            .map_err(|e| AdminError::BadRequest(format!("invalid token request: {e}")))?;
        Ok(pat::issue(state.registry.as_ref(), &req).await?)
    }
    .await;
    // The target is the new token's id, known once it is made.
    let target = out.as_ref().map(|(_, rec)| rec.id.as_str()).unwrap_or("");
    record(
        &state,
        &p,
        "admin.token.create",
        target,
        Some(&body),
        started,
        &out,
    )
    .await;
    let (token, rec) = out?;
    Ok((
        StatusCode::CREATED,
        Json(CreatedToken {
            token,
            view: rec.into(),
        }),
    ))
}

/// Revoke a token: refused at once by every replica.
#[utoipa::path(delete, path = "/admin/v1/tokens/{id}", responses((status = 200, body = TokenView), (status = 404)))]
pub async fn revoke_token(
    State(state): State<AppState>,
    Extension(p): Extension<Arc<Principal>>,
    Path(id): Path<String>,
) -> Result<Json<TokenView>, AdminError> {
    let change = async {
        let rec = state.registry.revoke_token(&id).await?;
        state.auth.forget_token(&id);
        // The grants made by signing in with it were revoked with it.
        if let Some(s) = &state.auth.server {
            s.grants.distrust_all();
        }
        Ok(rec)
    };
    let rec = audited(&state, &p, "admin.token.revoke", &id, None, change).await?;
    Ok(Json(rec.into()))
}

/// List roles.
#[utoipa::path(get, path = "/admin/v1/roles", responses((status = 200, body = [RoleSpec])))]
pub async fn list_roles(State(state): State<AppState>) -> Result<Json<Vec<Value>>, AdminError> {
    Ok(Json(
        state
            .registry
            .list_roles()
            .await?
            .into_iter()
            .map(|r| {
                // Where it is defined: `config` roles are changed in the file (the API says 409).
                let mut spec = r.spec;
                if let Some(o) = spec.as_object_mut() {
                    o.insert("source".into(), Value::from(r.source));
                }
                spec
            })
            .collect(),
    ))
}

/// Create or replace a role; every replica applies it at once.
#[utoipa::path(put, path = "/admin/v1/roles/{name}", request_body = RoleSpec,
    responses((status = 200, body = RoleSpec), (status = 400)))]
pub async fn put_role(
    State(state): State<AppState>,
    Extension(p): Extension<Arc<Principal>>,
    Path(name): Path<String>,
    crate::admin::body::Body(body): crate::admin::body::Body,
) -> Result<Json<Value>, AdminError> {
    let change = async {
        // A role read from the list and sent back carries its read-only `source`.
        let mut spec = body.clone();
        if let Some(o) = spec.as_object_mut() {
            o.remove("source");
        }
        let spec: RoleSpec = serde_json::from_value(spec)
            .map_err(|e| AdminError::BadRequest(format!("invalid role: {e}")))?;
        spec.validate().map_err(AdminError::BadRequest)?;
        if spec.name != name {
            return Err(AdminError::BadRequest(format!(
                "the body names {:?} but the path {name:?}",
                spec.name
            )));
        }
        if let Some(rec) = role_record(&state, &name).await? {
            invariants::not_from_file(&state, "role", &name, &rec.source)?;
        }
        invariants::keeps_an_admin(&state, &name, Some(&spec)).await?;
        let value = serde_json::to_value(&spec).map_err(|_| AdminError::Internal)?;
        state.registry.put_role(&name, &value, "api").await?;
        reload(&state).await;
        Ok(value)
    };
    Ok(Json(
        audited(&state, &p, "admin.role.put", &name, Some(&body), change).await?,
    ))
}

/// Delete a role; tokens and mappings naming it grant nothing through it any more.
#[utoipa::path(delete, path = "/admin/v1/roles/{name}", responses((status = 204), (status = 404)))]
pub async fn delete_role(
    State(state): State<AppState>,
    Extension(p): Extension<Arc<Principal>>,
    Path(name): Path<String>,
) -> Result<StatusCode, AdminError> {
    let change = async {
        let rec = role_record(&state, &name)
            .await?
            .or_not_found("role", &name)?;
        invariants::not_from_file(&state, "role", &name, &rec.source)?;
        invariants::keeps_an_admin(&state, &name, None).await?;
        state.registry.delete_role(&name).await?;
        reload(&state).await;
        Ok(())
    };
    audited(&state, &p, "admin.role.delete", &name, None, change).await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn role_record(
    state: &AppState,
    name: &str,
) -> Result<Option<registry::RoleRecord>, AdminError> {
    Ok(state
        .registry
        .list_roles()
        .await?
        .into_iter()
        .find(|r| r.name == name))
}

async fn reload(state: &AppState) {
    if let Err(e) = state.auth.roles.reload(state.registry.as_ref()).await {
        tracing::warn!(error = %e, "cannot re-read the roles");
    }
}
