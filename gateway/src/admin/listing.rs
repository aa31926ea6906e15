//! What the console shows beside the settings: an upstream's tools as it lists them, each with
//! the name hosts see now (none when curation or pinning hides it), its last hour of calls and
//! its health changes, and who the signed-in caller is (`/v1/me`, for users too).

use std::sync::Arc;

use axum::extract::{Extension, Path, State};
use axum::Json;
use registry::EntryKind;
use serde_json::{json, Value};

use super::error::{AdminError, OrNotFound};
use crate::auth::Principal;
use crate::state::AppState;

/// An upstream's tools as it lists them: `name`, `title`, `description`, `inputSchema`, and
/// `exposed`, the name hosts see (null: hidden by curation or pinning).
#[utoipa::path(get, path = "/admin/v1/upstreams/{name}/tools/listed", responses((status = 200), (status = 404)))]
pub async fn listed_tools(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<Vec<Value>>, AdminError> {
    let ups = &state.hub.upstreams;
    let listed = ups.listed_tools(&name).or_not_found("upstream", &name)?;
    let view = ups.view();
    Ok(Json(
        listed
            .into_iter()
            .map(|t| {
                let own = t.get("name").and_then(Value::as_str).unwrap_or_default();
                let exposed = view
                    .find(EntryKind::Tool, &name, own)
                    .map(|e| e.exposed.clone());
                json!({
                    "name": own,
                    "title": t.get("title"),
                    "description": t.get("description"),
                    "inputSchema": t.get("inputSchema"),
                    "exposed": exposed,
                })
            })
            .collect(),
    ))
}

/// Who the caller is: the principal as the audit log names it, its roles, whether it has the
/// admin right.
pub async fn me(Extension(p): Extension<Arc<Principal>>) -> Json<Value> {
    Json(json!({
        "principal": p.key(),
        "subject": p.subject,
        "kind": p.kind,
        "roles": p.roles,
        "admin": p.access.admin(),
    }))
}

/// An upstream's last hour: its calls minute by minute (the minute under way last), and its
/// health changes.
#[utoipa::path(get, path = "/admin/v1/upstreams/{name}/history", responses((status = 200), (status = 404)))]
pub async fn history(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<Value>, AdminError> {
    let ups = &state.hub.upstreams;
    ups.spec(&name).or_not_found("upstream", &name)?;
    let m = &state.dispatcher.metrics;
    Ok(Json(json!({
        "minutes": m.history.minutes(&name, &m.tool_calls, registry::now_ms()),
        "health": ups.transitions(&name),
    })))
}
