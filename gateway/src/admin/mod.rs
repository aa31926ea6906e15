//! Admin REST API under `/admin/v1`: upstreams (create, read, update, delete; changes take effect
//! at once), their health, the catalog, roles and personal access tokens ([`access`]), and the
//! audit log ([`audit`]), the authorization server's clients and grants ([`oauth`]), tool
//! pinning's reviews ([`pins`]), routing's status and virtual servers ([`routing`]); and `POST
//! /v1/route` ([`route`]), ranked tools for agent frameworks. Every change is audited. The OpenAPI document is generated from this
//! code by `utoipa` and served at `/admin/v1/openapi.json`. Bodies are read by [`body`] (no key
//! twice); what no change may do (touch what the config file defines, leave no admin) is in
//! `invariants`.

mod access;
mod audit;
pub mod body;
pub mod connections;
pub mod error;
mod invariants;
pub mod listing;
pub mod oauth;
pub mod pins;
pub mod route;
pub mod routing;
pub mod trail;

pub use error::AdminError;

use std::sync::Arc;

use axum::extract::{Extension, Path, Query, State};
use axum::http::StatusCode;

use axum::routing::get;
use axum::{Json, Router};
use registry::EntryKind;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::OpenApi;

use crate::admin::error::OrNotFound;
use crate::auth::Principal;
use crate::config::{ToolCuration, UpstreamSpec, UpstreamWire};
use crate::state::AppState;
use crate::upstream::Health;
use trail::audited;

/// An upstream with its settings and health.
#[derive(Serialize, utoipa::ToSchema)]
pub struct UpstreamView {
    #[serde(flatten)]
    spec: UpstreamWire,
    source: String,
    health: Option<Health>,
}

/// One catalog entry as hosts see it.
#[derive(Serialize, utoipa::ToSchema)]
pub struct CatalogItem {
    /// The name (or URI) hosts see.
    exposed: String,
    upstream: String,
    /// The upstream's own name (or URI).
    original: String,
    kind: String,
    content_hash: String,
    #[schema(value_type = Object)]
    definition: Value,
}

#[derive(Deserialize, utoipa::IntoParams)]
pub struct CatalogQuery {
    /// `tool` (default), `resource`, `resource_template` or `prompt`.
    kind: Option<String>,
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "MCP Gateway admin API",
        description = "Upstream MCP servers and the aggregated catalog."
    ),
    paths(
        list_upstreams,
        create_upstream,
        get_upstream,
        update_upstream,
        curate_upstream,
        delete_upstream,
        catalog,
        health,
        access::list_tokens,
        access::create_token,
        access::revoke_token,
        access::list_roles,
        access::put_role,
        access::delete_role,
        audit::query,
        audit::verify,
        crate::admin::routing::status,
        crate::admin::routing::pairs,
        crate::admin::routing::list,
        crate::admin::routing::create,
        crate::admin::routing::get,
        crate::admin::routing::update,
        crate::admin::routing::delete,
        oauth::list_clients,
        oauth::create_client,
        oauth::block_client,
        oauth::delete_client,
        oauth::list_grants,
        oauth::revoke_grant,
        oauth::revoke_user,
        connections::list,
        connections::catalog_link,
        connections::revoke,
        pins::pending,
        pins::approve,
        pins::reject,
        listing::listed_tools,
        listing::history
    )
)]
struct ApiDoc;

pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/admin/v1/upstreams",
            get(list_upstreams).post(create_upstream),
        )
        .route(
            "/admin/v1/upstreams/{name}",
            get(get_upstream)
                .put(update_upstream)
                .delete(delete_upstream),
        )
        .route(
            "/admin/v1/upstreams/{name}/tools",
            axum::routing::put(curate_upstream),
        )
        .route("/admin/v1/catalog", get(catalog))
        .route(
            "/admin/v1/tokens",
            get(access::list_tokens).post(access::create_token),
        )
        .route(
            "/admin/v1/tokens/{id}",
            axum::routing::delete(access::revoke_token),
        )
        .route("/admin/v1/roles", get(access::list_roles))
        .route(
            "/admin/v1/roles/{name}",
            axum::routing::put(access::put_role).delete(access::delete_role),
        )
        .route("/admin/v1/audit", get(audit::query))
        .route("/admin/v1/audit/verify", get(audit::verify))
        .route("/admin/v1/health", get(health))
        .route("/admin/v1/routing", get(crate::admin::routing::status))
        .route("/admin/v1/routing/pairs", get(crate::admin::routing::pairs))
        .route(
            "/admin/v1/virtual-servers",
            get(crate::admin::routing::list).post(crate::admin::routing::create),
        )
        .route(
            "/admin/v1/virtual-servers/{name}",
            get(crate::admin::routing::get)
                .put(crate::admin::routing::update)
                .delete(crate::admin::routing::delete),
        )
        .route(
            "/admin/v1/oauth/clients",
            get(oauth::list_clients).post(oauth::create_client),
        )
        .route(
            "/admin/v1/oauth/clients/{id}",
            axum::routing::delete(oauth::delete_client),
        )
        .route(
            "/admin/v1/oauth/clients/{id}/blocked",
            axum::routing::put(oauth::block_client),
        )
        .route("/admin/v1/oauth/grants", get(oauth::list_grants))
        .route(
            "/admin/v1/oauth/grants/{id}",
            axum::routing::delete(oauth::revoke_grant),
        )
        .route(
            "/admin/v1/oauth/users/{subject}/grants",
            axum::routing::delete(oauth::revoke_user),
        )
        .route("/admin/v1/connections", get(connections::list))
        .route(
            "/admin/v1/connections/{upstream}",
            axum::routing::delete(connections::revoke),
        )
        .route(
            "/admin/v1/upstreams/{name}/connection",
            axum::routing::post(connections::catalog_link),
        )
        .route(
            "/admin/v1/upstreams/{name}/tools/listed",
            get(listing::listed_tools),
        )
        .route("/admin/v1/upstreams/{name}/history", get(listing::history))
        .route("/admin/v1/pins/pending", get(pins::pending))
        .route(
            "/admin/v1/pins/{upstream}/{tool}/approve",
            axum::routing::post(pins::approve),
        )
        .route(
            "/admin/v1/pins/{upstream}/{tool}/reject",
            axum::routing::post(pins::reject),
        )
        .route(
            "/admin/v1/openapi.json",
            get(|| async { Json(ApiDoc::openapi()) }),
        )
}

/// The upstream `body` describes, held to what the config file would hold it to.
fn parse_spec(state: &AppState, body: Value) -> Result<UpstreamSpec, AdminError> {
    let spec: UpstreamSpec = serde_json::from_value(body)
        .map_err(|e| AdminError::BadRequest(format!("invalid upstream: {e}")))?;
    spec.validate()
        .map_err(|e| AdminError::BadRequest(e.to_string()))?;
    let c = &state.config;
    crate::config::upstream_fits(&spec, &c.user_credentials, &c.auth)
        .map_err(|e| AdminError::BadRequest(e.to_string()))?;
    Ok(spec)
}

fn view_of(state: &AppState, rec: registry::UpstreamRecord) -> Result<UpstreamView, AdminError> {
    let mut spec: UpstreamWire =
        serde_json::from_value(rec.spec).map_err(|_| AdminError::Internal)?;
    spec.url = spec
        .url
        .map(|u| crate::config::redact_userinfo(&u).into_owned());
    let health = state
        .hub
        .upstreams
        .health()
        .into_iter()
        .find(|h| h.name == spec.name);
    Ok(UpstreamView {
        spec,
        source: rec.source,
        health,
    })
}

/// List upstreams with their health.
#[utoipa::path(get, path = "/admin/v1/upstreams", responses((status = 200, body = [UpstreamView])))]
async fn list_upstreams(
    State(state): State<AppState>,
) -> Result<Json<Vec<UpstreamView>>, AdminError> {
    let recs = state.registry.list_upstreams().await?;
    recs.into_iter()
        .map(|r| view_of(&state, r))
        .collect::<Result<_, _>>()
        .map(Json)
}

/// Register an upstream; it is connected at once and its tools appear in open sessions.
#[utoipa::path(post, path = "/admin/v1/upstreams", request_body = UpstreamWire,
    responses((status = 201, body = UpstreamView), (status = 400), (status = 409)))]
async fn create_upstream(
    State(state): State<AppState>,
    Extension(p): Extension<Arc<Principal>>,
    crate::admin::body::Body(body): crate::admin::body::Body,
) -> Result<(StatusCode, Json<UpstreamView>), AdminError> {
    let name = body
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let change = async {
        let spec = parse_spec(&state, body.clone())?;
        let rec = state
            .registry
            .create_upstream(
                &spec.name,
                &serde_json::to_value(&spec).map_err(|_| AdminError::Internal)?,
                "api",
            )
            .await?;
        state.hub.upstreams.start(spec);
        view_of(&state, rec)
    };
    let view = audited(
        &state,
        &p,
        "admin.upstream.create",
        &name,
        Some(&body),
        change,
    )
    .await?;
    Ok((StatusCode::CREATED, Json(view)))
}

/// One upstream.
#[utoipa::path(get, path = "/admin/v1/upstreams/{name}", responses((status = 200, body = UpstreamView), (status = 404)))]
async fn get_upstream(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<UpstreamView>, AdminError> {
    let rec = state
        .registry
        .get_upstream(&name)
        .await?
        .or_not_found("upstream", &name)?;
    Ok(Json(view_of(&state, rec)?))
}

/// Replace an upstream's settings; it reconnects with them.
#[utoipa::path(put, path = "/admin/v1/upstreams/{name}", request_body = UpstreamWire,
    responses((status = 200, body = UpstreamView), (status = 400), (status = 404)))]
async fn update_upstream(
    State(state): State<AppState>,
    Extension(p): Extension<Arc<Principal>>,
    Path(name): Path<String>,
    crate::admin::body::Body(body): crate::admin::body::Body,
) -> Result<Json<UpstreamView>, AdminError> {
    let change = replace_upstream(&state, &name, body.clone());
    let view = audited(
        &state,
        &p,
        "admin.upstream.update",
        &name,
        Some(&body),
        change,
    )
    .await?;
    Ok(Json(view))
}

async fn replace_upstream(
    state: &AppState,
    name: &str,
    mut body: Value,
) -> Result<UpstreamView, AdminError> {
    if let Some(rec) = state.registry.get_upstream(name).await? {
        invariants::not_from_file(state, "upstream", name, &rec.source)?;
    }
    keep_redacted_url(state, name, &mut body).await?;
    let spec = parse_spec(state, body)?;
    let tools = state.hub.upstreams.tool_names(name);
    let tools: Vec<&str> = tools.iter().map(String::as_str).collect();
    spec.tools
        .check_renames(&tools)
        .map_err(AdminError::BadRequest)?;
    if spec.name != name {
        return Err(AdminError::BadRequest(format!(
            "the body names {:?} but the path {name:?}; renaming is delete + create",
            spec.name
        )));
    }
    let rec = state
        .registry
        .update_upstream(
            name,
            &serde_json::to_value(&spec).map_err(|_| AdminError::Internal)?,
            spec.enabled,
        )
        .await?;
    state.hub.upstreams.start(spec);
    view_of(state, rec)
}

/// A spec read from this API and sent back shows its URL with the user information redacted
/// (`https://***@host/...`): the stored URL is kept then, so a read-modify-write round trip
/// (the console's enable/disable) does not lose the credentials in it.
async fn keep_redacted_url(
    state: &AppState,
    name: &str,
    body: &mut Value,
) -> Result<(), AdminError> {
    let Some(sent) = body.get("url").and_then(Value::as_str) else {
        return Ok(());
    };
    if !sent.contains("://***@") {
        return Ok(());
    }
    let stored = state.registry.get_upstream(name).await?.and_then(|r| {
        r.spec
            .get("url")
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    if let Some(stored) = stored.filter(|s| crate::config::redact_userinfo(s) == sent) {
        body["url"] = Value::from(stored);
    }
    Ok(())
}

/// Replace an upstream's tool curation: which of its tools hosts see (include/exclude patterns
/// on its own tool names) and what they see of each (name, description, annotations, fixed
/// arguments). Open sessions are told their tool list changed.
#[utoipa::path(put, path = "/admin/v1/upstreams/{name}/tools", request_body = ToolCuration,
    responses((status = 200, body = UpstreamView), (status = 400), (status = 404)))]
async fn curate_upstream(
    State(state): State<AppState>,
    Extension(p): Extension<Arc<Principal>>,
    Path(name): Path<String>,
    crate::admin::body::Body(body): crate::admin::body::Body,
) -> Result<Json<UpstreamView>, AdminError> {
    let change = async {
        let rec = state
            .registry
            .get_upstream(&name)
            .await?
            .or_not_found("upstream", &name)?;
        let mut spec: UpstreamWire =
            serde_json::from_value(rec.spec).map_err(|_| AdminError::Internal)?;
        spec.tools = serde_json::from_value(body.clone())
            .map_err(|e| AdminError::BadRequest(format!("invalid tool curation: {e}")))?;
        let spec = serde_json::to_value(spec).map_err(|_| AdminError::Internal)?;
        replace_upstream(&state, &name, spec).await
    };
    let view = audited(
        &state,
        &p,
        "admin.upstream.tools",
        &name,
        Some(&body),
        change,
    )
    .await?;
    Ok(Json(view))
}

/// Remove an upstream; its tools disappear from open sessions.
#[utoipa::path(delete, path = "/admin/v1/upstreams/{name}", responses((status = 204), (status = 404)))]
async fn delete_upstream(
    State(state): State<AppState>,
    Extension(p): Extension<Arc<Principal>>,
    Path(name): Path<String>,
) -> Result<StatusCode, AdminError> {
    let change = async {
        if let Some(rec) = state.registry.get_upstream(&name).await? {
            invariants::not_from_file(&state, "upstream", &name, &rec.source)?;
        }
        state.registry.delete_upstream(&name).await?;
        state.hub.upstreams.stop(&name);
        Ok(())
    };
    audited(&state, &p, "admin.upstream.delete", &name, None, change).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The aggregated catalog as hosts see it.
#[utoipa::path(get, path = "/admin/v1/catalog", params(CatalogQuery), responses((status = 200, body = [CatalogItem])))]
async fn catalog(
    State(state): State<AppState>,
    Query(q): Query<CatalogQuery>,
) -> Result<Json<Vec<CatalogItem>>, AdminError> {
    let kind = match q.kind.as_deref() {
        None => EntryKind::Tool,
        Some(k) => EntryKind::parse(k).ok_or_else(|| {
            AdminError::BadRequest(format!(
                "kind must be tool, resource, resource_template or prompt (got {k:?})"
            ))
        })?,
    };
    let view = state.hub.upstreams.view();
    Ok(Json(
        view.list(kind)
            .iter()
            .map(|e| CatalogItem {
                exposed: e.exposed.clone(),
                upstream: e.entry.upstream.clone(),
                original: e.entry.key.clone(),
                kind: kind.as_str().into(),
                content_hash: e.entry.content_hash.clone(),
                definition: e.entry.definition.to_value(),
            })
            .collect(),
    ))
}

/// Health of every upstream.
#[utoipa::path(get, path = "/admin/v1/health", responses((status = 200, body = [Health])))]
async fn health(State(state): State<AppState>) -> Json<Vec<Health>> {
    Json(state.hub.upstreams.health())
}
