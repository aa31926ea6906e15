//! The error shape of the gateway's REST endpoints (the admin API and `/v1/route`):
//! `{"error": {"code": "bad_request", "message": "..."}}` with the matching status.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use registry::RegistryError;
use serde_json::json;

/// An admin API error: one status and one message that says what to fix.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    #[error("database unavailable, try again later")]
    Unavailable,
    #[error("internal error")]
    Internal,
}

impl From<RegistryError> for AdminError {
    fn from(e: RegistryError) -> Self {
        match e {
            RegistryError::NotFound(w) => AdminError::NotFound(format!("{w} not found")),
            RegistryError::AlreadyExists(w) => AdminError::Conflict(format!("{w} already exists")),
            RegistryError::Invalid(m) => AdminError::BadRequest(m),
            e if e.is_transient() => {
                tracing::warn!(error = ?e, "registry unavailable");
                AdminError::Unavailable
            }
            e => {
                tracing::error!(error = ?e, "registry error");
                AdminError::Internal
            }
        }
    }
}

impl IntoResponse for AdminError {
    fn into_response(self) -> Response {
        let (status, code) = match &self {
            AdminError::BadRequest(_) => (StatusCode::BAD_REQUEST, "bad_request"),
            AdminError::NotFound(_) => (StatusCode::NOT_FOUND, "not_found"),
            AdminError::Conflict(_) => (StatusCode::CONFLICT, "conflict"),
            AdminError::Unavailable => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
            AdminError::Internal => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        };
        (
            status,
            Json(json!({ "error": { "code": code, "message": self.to_string() } })),
        )
            .into_response()
    }
}
