//! Admin API of users' own upstream connections (`user_oauth` upstreams): who connected what
//! (never a token), the link that connects the designated account the catalog is read with,
//! and revoking anyone's connection. Every change is audited.

use std::sync::Arc;

use axum::extract::{Extension, Path, Query, State};
use axum::http::StatusCode;
use axum::Json;
use registry::ConnectionRecord;
use serde::Deserialize;
use serde_json::{json, Value};

use super::error::{AdminError, OrNotFound};
use super::trail::audited;
use crate::auth::Principal;
use crate::state::AppState;
use crate::upstream::credentials::vault::CATALOG;

#[derive(Deserialize, utoipa::IntoParams)]
pub struct ConnectionQuery {
    /// Only this upstream's connections.
    upstream: Option<String>,
}

/// Every upstream connection: upstream, holder (`user:<principal>` or `catalog`), who
/// connected it, scope, when, until when.
#[utoipa::path(get, path = "/admin/v1/connections", params(ConnectionQuery), responses((status = 200)))]
pub async fn list(
    State(state): State<AppState>,
    Query(q): Query<ConnectionQuery>,
) -> Result<Json<Vec<ConnectionRecord>>, AdminError> {
    let mut all = state.registry.list_connections(None).await?;
    if let Some(u) = q.upstream {
        all.retain(|c| c.upstream == u);
    }
    Ok(Json(all))
}

/// The link that connects the account a `user_oauth` upstream's catalog is read with: open it
/// in a browser and sign in at the upstream as that account. `{"url": ...}`, good 10 minutes.
#[utoipa::path(post, path = "/admin/v1/upstreams/{name}/connection", responses((status = 200), (status = 400), (status = 404)))]
pub async fn catalog_link(
    State(state): State<AppState>,
    Extension(p): Extension<Arc<Principal>>,
    Path(name): Path<String>,
) -> Result<Json<Value>, AdminError> {
    let ups = &state.hub.upstreams;
    let spec = ups.spec(&name).or_not_found("upstream", &name)?;
    if spec
        .transport
        .endpoint()
        .and_then(|e| e.user_oauth.as_ref())
        .is_none()
    {
        return Err(AdminError::BadRequest(format!(
            "upstream {name:?} has no user_oauth: it has no accounts to connect"
        )));
    }
    let url = ups
        .vault
        .link(&name, CATALOG, p.key(), None)
        .map_err(|e| AdminError::BadRequest(e.to_string()))?;
    Ok(Json(json!({ "url": url, "expires_in": 600 })))
}

#[derive(Deserialize, utoipa::IntoParams)]
pub struct HolderQuery {
    /// `user:<principal key>` or `catalog`.
    holder: String,
}

/// Revokes one connection (the holder connects again on their next call).
#[utoipa::path(delete, path = "/admin/v1/connections/{upstream}", params(HolderQuery), responses((status = 204), (status = 404)))]
pub async fn revoke(
    State(state): State<AppState>,
    Extension(p): Extension<Arc<Principal>>,
    Path(upstream): Path<String>,
    Query(q): Query<HolderQuery>,
) -> Result<StatusCode, AdminError> {
    let ups = state.hub.upstreams.clone();
    let change = async {
        if !ups.disconnect(&upstream, &q.holder, p.key()).await? {
            return Err(AdminError::NotFound(format!(
                "no connection of {:?} to {upstream:?}",
                q.holder
            )));
        }
        Ok(())
    };
    let args = json!({ "holder": q.holder });
    let target = format!("{upstream}/{}", q.holder);
    audited(
        &state,
        &p,
        "admin.connection.revoke",
        &target,
        Some(&args),
        change,
    )
    .await?;
    Ok(StatusCode::NO_CONTENT)
}
