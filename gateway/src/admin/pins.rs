//! Admin API of tool pinning: the tool changes waiting for review (with the approved and the
//! listed definition, for a diff), and approving or rejecting one. Both are audit rows.

use std::sync::Arc;

use axum::extract::{Extension, Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;
use serde_json::json;

use super::error::AdminError;
use super::trail::audited;
use crate::auth::Principal;
use crate::state::AppState;
use crate::upstream::{PendingTool, ReviewError};

/// The tool changes waiting for an admin, over every upstream with `pinning`.
#[utoipa::path(get, path = "/admin/v1/pins/pending", responses((status = 200, body = [PendingTool])))]
pub async fn pending(State(state): State<AppState>) -> Json<Vec<PendingTool>> {
    Json(state.hub.upstreams.pending_tools())
}

/// A review names the definition reviewed by its pin hash (`hash` of the pending change).
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Review {
    hash: String,
}

/// Approves a tool's listed definition: it is served from now on (`hold`), unflagged (`warn`).
#[utoipa::path(post, path = "/admin/v1/pins/{upstream}/{tool}/approve", request_body = Review, responses((status = 204), (status = 404), (status = 409)))]
pub async fn approve(
    state: State<AppState>,
    p: Extension<Arc<Principal>>,
    path: Path<(String, String)>,
    super::body::Body(body): super::body::Body,
) -> Result<StatusCode, AdminError> {
    review(state, p, path, body, true).await
}

/// Rejects a tool's listed definition: under `hold` the approved one stays served (a new tool
/// stays hidden); either way it no longer waits for review. A later change does.
#[utoipa::path(post, path = "/admin/v1/pins/{upstream}/{tool}/reject", request_body = Review, responses((status = 204), (status = 404), (status = 409)))]
pub async fn reject(
    state: State<AppState>,
    p: Extension<Arc<Principal>>,
    path: Path<(String, String)>,
    super::body::Body(body): super::body::Body,
) -> Result<StatusCode, AdminError> {
    review(state, p, path, body, false).await
}

async fn review(
    State(state): State<AppState>,
    Extension(p): Extension<Arc<Principal>>,
    Path((upstream, tool)): Path<(String, String)>,
    body: serde_json::Value,
    approve: bool,
) -> Result<StatusCode, AdminError> {
    let r: Review = serde_json::from_value(body)
        .map_err(|e| AdminError::BadRequest(format!("invalid review: {e}")))?;
    let ups = state.hub.upstreams.clone();
    let change = async {
        ups.review_tool(&upstream, &tool, &r.hash, p.key(), approve)
            .await
            .map_err(|e| match e {
                ReviewError::NotFound(m) => AdminError::NotFound(m),
                ReviewError::Stale(m) => AdminError::Conflict(m),
                ReviewError::Store(e) => e.into(),
            })
    };
    let action = if approve {
        "admin.tool.approve"
    } else {
        "admin.tool.reject"
    };
    let args = json!({ "hash": r.hash });
    audited(
        &state,
        &p,
        action,
        &format!("{upstream}/{tool}"),
        Some(&args),
        change,
    )
    .await?;
    Ok(StatusCode::NO_CONTENT)
}
