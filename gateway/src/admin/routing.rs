//! Admin API for routing: virtual servers (audited changes), the routing status, and the
//! export of (query, tool called) pairs as JSON lines in the evaluation set's query format.

use std::sync::Arc;

use axum::extract::{Extension, Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use serde_json::Value;

use crate::admin::error::AdminError;
use crate::admin::error::OrNotFound;
use crate::admin::trail::audited;
use crate::auth::Principal;
use crate::routing::service::RoutingStatus;
use crate::routing::virtual_servers::{VirtualServer, VirtualServerSpec};
use crate::state::AppState;

/// A virtual server as the API shows it.
#[derive(Serialize, utoipa::ToSchema)]
pub struct VirtualServerView {
    name: String,
    /// Its MCP endpoint's path.
    path: String,
    #[serde(flatten)]
    spec: VirtualServerSpec,
}

fn view(v: &VirtualServer) -> VirtualServerView {
    VirtualServerView {
        name: v.name.clone(),
        path: format!("{}{}", crate::routing::endpoint::VIRTUAL_PREFIX, v.name),
        spec: v.spec.clone(),
    }
}

/// Routing mode (semantic or lexical), the model, and index size.
#[utoipa::path(get, path = "/admin/v1/routing", responses((status = 200, body = RoutingStatus)))]
pub async fn status(State(state): State<AppState>) -> Json<RoutingStatus> {
    Json(state.dispatcher.routing.status())
}

/// (query, tool called next) pairs, newest last, one JSON object a line.
#[utoipa::path(get, path = "/admin/v1/routing/pairs", responses((status = 200, content_type = "application/x-ndjson")))]
pub async fn pairs(State(state): State<AppState>) -> Response {
    let mut out = String::new();
    for p in state.dispatcher.routing.feedback.pairs() {
        out.push_str(&serde_json::to_string(&p).unwrap_or_default());
        out.push('\n');
    }
    ([(header::CONTENT_TYPE, "application/x-ndjson")], out).into_response()
}

#[utoipa::path(get, path = "/admin/v1/virtual-servers", responses((status = 200, body = [VirtualServerView])))]
pub async fn list(
    State(state): State<AppState>,
) -> Result<Json<Vec<VirtualServerView>>, AdminError> {
    // Read through to the registry: another replica may have changed them a moment ago.
    state.dispatcher.routing.reload_virtual_servers().await;
    Ok(Json(
        state
            .dispatcher
            .routing
            .virtual_servers
            .list()
            .iter()
            .map(|v| view(v))
            .collect(),
    ))
}

#[utoipa::path(get, path = "/admin/v1/virtual-servers/{name}", responses((status = 200, body = VirtualServerView), (status = 404)))]
pub async fn get(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<VirtualServerView>, AdminError> {
    state
        .dispatcher
        .routing
        .virtual_servers
        .get(&name)
        .map(|v| Json(view(&v)))
        .or_not_found("virtual server", &name)
}

fn parse(name: &str, body: &Value) -> Result<VirtualServer, AdminError> {
    let mut spec = body.clone();
    if let Some(o) = spec.as_object_mut() {
        // The name comes from the path (PUT) or is taken out (POST).
        o.remove("name");
        o.remove("path");
    }
    let spec: VirtualServerSpec = serde_json::from_value(spec)
        .map_err(|e| AdminError::BadRequest(format!("invalid virtual server: {e}")))?;
    VirtualServer::new(name, spec).map_err(AdminError::BadRequest)
}

async fn store(
    state: &AppState,
    p: &Principal,
    name: &str,
    body: &Value,
    create: bool,
) -> Result<VirtualServerView, AdminError> {
    let change = async {
        let v = parse(name, body)?;
        let spec = serde_json::to_value(&v.spec).map_err(|_| AdminError::Internal)?;
        state
            .registry
            .put_virtual_server(name, &spec, create)
            .await?;
        let shown = view(&v);
        state.dispatcher.routing.virtual_servers.put(v);
        Ok(shown)
    };
    let action = if create {
        "admin.virtual_server.create"
    } else {
        "admin.virtual_server.update"
    };
    audited(state, p, action, name, Some(body), change).await
}

#[utoipa::path(post, path = "/admin/v1/virtual-servers", request_body = VirtualServerSpec,
    responses((status = 201, body = VirtualServerView), (status = 400), (status = 409)))]
pub async fn create(
    State(state): State<AppState>,
    Extension(p): Extension<Arc<Principal>>,
    crate::admin::body::Body(body): crate::admin::body::Body,
) -> Result<(StatusCode, Json<VirtualServerView>), AdminError> {
    let name = body
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| AdminError::BadRequest("name is required".into()))?
        .to_string();
    let v = store(&state, &p, &name, &body, true).await?;
    Ok((StatusCode::CREATED, Json(v)))
}

#[utoipa::path(put, path = "/admin/v1/virtual-servers/{name}", request_body = VirtualServerSpec,
    responses((status = 200, body = VirtualServerView), (status = 400), (status = 404)))]
pub async fn update(
    State(state): State<AppState>,
    Extension(p): Extension<Arc<Principal>>,
    Path(name): Path<String>,
    crate::admin::body::Body(body): crate::admin::body::Body,
) -> Result<Json<VirtualServerView>, AdminError> {
    Ok(Json(store(&state, &p, &name, &body, false).await?))
}

#[utoipa::path(delete, path = "/admin/v1/virtual-servers/{name}", responses((status = 204), (status = 404)))]
pub async fn delete(
    State(state): State<AppState>,
    Extension(p): Extension<Arc<Principal>>,
    Path(name): Path<String>,
) -> Result<StatusCode, AdminError> {
    let change = async {
        state.registry.delete_virtual_server(&name).await?;
        state.dispatcher.routing.virtual_servers.remove(&name);
        Ok(())
    };
    audited(
        &state,
        &p,
        "admin.virtual_server.delete",
        &name,
        None,
        change,
    )
    .await?;
    Ok(StatusCode::NO_CONTENT)
}
