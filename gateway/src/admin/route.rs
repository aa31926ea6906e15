//! `POST /v1/route`: ranked tools for a query, for agent frameworks that build their own prompt.
//! Same rights as `/mcp`: the caller sees only tools it may call.

use std::sync::Arc;

use axum::extract::{Extension, State};
use axum::Json;
use registry::{EntryKind, Exposed};
use serde::Deserialize;
use serde_json::{json, Value};
use wildmatch::WildMatch;

use crate::admin::error::AdminError;
use crate::auth::Principal;
use crate::state::AppState;

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RouteRequest {
    pub query: String,
    /// How many tools. Without it, `routing.default_k`, or one for each step and one for the
    /// whole request when a request has more steps than that.
    pub k: Option<usize>,
    #[serde(default)]
    pub filters: RouteFilters,
}

/// Narrow the search before ranking.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RouteFilters {
    /// Only this virtual server's tools.
    pub virtual_server: Option<String>,
    /// Only these upstreams (patterns with `*` and `?`).
    #[serde(default)]
    pub upstreams: Vec<String>,
}

pub async fn route(
    State(state): State<AppState>,
    Extension(principal): Extension<Arc<Principal>>,
    body: axum::body::Bytes,
) -> Result<Json<Value>, AdminError> {
    let bad = AdminError::BadRequest;
    let req: RouteRequest =
        serde_json::from_slice(&body).map_err(|e| bad(format!("invalid route request: {e}")))?;
    let query = req.query.trim();
    if query.is_empty() {
        return Err(bad("query must not be empty".into()));
    }
    let router = &state.dispatcher.routing;
    if req.k.is_some_and(|k| k == 0 || k > router.config.max_k) {
        return Err(bad(format!(
            "k must be between 1 and {}",
            router.config.max_k
        )));
    }
    if let Some(v) = &req.filters.virtual_server {
        if router.virtual_servers.get(v).is_none() {
            return Err(bad(format!("unknown virtual server: {v}")));
        }
    }
    let lens = state.dispatcher.lens(
        &principal.access,
        req.filters.virtual_server.as_deref(),
        None,
    );
    let upstreams: Vec<WildMatch> = req
        .filters
        .upstreams
        .iter()
        .map(|p| WildMatch::new(p))
        .collect();
    let mut search = router
        .search(query, req.k, "rest", &|e: &Exposed| {
            lens.allows(EntryKind::Tool, &e.entry.upstream, &e.exposed)
                && (upstreams.is_empty() || upstreams.iter().any(|p| p.matches(&e.entry.upstream)))
        })
        .await;
    lens.show_found(&mut search.tools);
    let tools: Vec<Value> = search
        .tools
        .iter()
        .map(|f| {
            let mut t = json!({
                "name": f.name,
                "upstream": f.upstream,
                "score": f.score,
                "similarity": f.similarity,
                "description": f.definition.get("description"),
                "inputSchema": f.definition.get("inputSchema"),
            });
            if let Some(step) = &f.step {
                t["step"] = Value::from(step.clone());
            }
            t
        })
        .collect();
    let mut body = json!({
        "tools": tools,
        "mode": router.status().mode,
        "nothing_fits": search.nothing_fits,
    });
    if search.steps.len() > 1 {
        body["steps"] = json!(search.steps);
    }
    Ok(Json(body))
}
