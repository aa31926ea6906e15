//! Admin API over the audit log: queries (by principal, target, action, time range; newest
//! first, paged by sequence number) and the chain check.

use axum::extract::{Query, State};
use axum::Json;
use registry::{AuditQuery, AuditRow, VerifyReport};

use super::AdminError;
use crate::state::AppState;

/// Audit rows, newest first. Filters: `principal`, `target` (tool, prompt, URI or admin
/// object), `action`, `since`/`until` (ms since the epoch), `before_seq` (paging), `limit`
/// (default 100, at most 10000).
#[utoipa::path(get, path = "/admin/v1/audit", responses((status = 200, body = [Object])))]
pub async fn query(
    State(state): State<AppState>,
    Query(q): Query<AuditQuery>,
) -> Result<Json<Vec<AuditRow>>, AdminError> {
    Ok(Json(state.registry.query_audit(&q).await?))
}

/// Recomputes the hash chain; names the first broken row.
#[utoipa::path(get, path = "/admin/v1/audit/verify", responses((status = 200, body = Object)))]
pub async fn verify(State(state): State<AppState>) -> Result<Json<VerifyReport>, AdminError> {
    Ok(Json(state.registry.verify_audit().await?))
}
