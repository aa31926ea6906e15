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
    #[error("the audit log cannot be written; changes are refused until it can, try again later")]
    AuditUnavailable,
    #[error("internal error")]
    Internal,
}

/// What a lookup found, or 404 naming what was looked for: `upstream "x" not found`.
pub(crate) trait OrNotFound<T> {
    fn or_not_found(self, kind: &str, name: &str) -> Result<T, AdminError>;
}

impl<T> OrNotFound<T> for Option<T> {
    fn or_not_found(self, kind: &str, name: &str) -> Result<T, AdminError> {
        self.ok_or_else(|| AdminError::NotFound(format!("{kind} {name:?} not found")))
    }
}

impl From<RegistryError> for AdminError {
    fn from(e: RegistryError) -> Self {
        match e {
            RegistryError::NotFound(w) => AdminError::NotFound(format!("{w} not found")),
            RegistryError::AlreadyExists(w) => AdminError::Conflict(format!("{w} already exists")),
            RegistryError::Invalid(m) => AdminError::BadRequest(m),
            e if e.is_transient() => {
                tracing::warn!(error = %e, "registry unavailable");
                AdminError::Unavailable
            }
            e => {
                tracing::error!(error = %e, "registry error");
                AdminError::Internal
            }
        }
    }
}

impl AdminError {
    /// The error's kind: the body's `code`, and the audit log's error class.
    pub fn code(&self) -> &'static str {
        match self {
            AdminError::BadRequest(_) => "bad_request",
            AdminError::NotFound(_) => "not_found",
            AdminError::Conflict(_) => "conflict",
            AdminError::Unavailable => "unavailable",
            AdminError::AuditUnavailable => "audit_unavailable",
            AdminError::Internal => "internal",
        }
    }
}

impl IntoResponse for AdminError {
    fn into_response(self) -> Response {
        let status = match &self {
            AdminError::BadRequest(_) => StatusCode::BAD_REQUEST,
            AdminError::NotFound(_) => StatusCode::NOT_FOUND,
            AdminError::Conflict(_) => StatusCode::CONFLICT,
            AdminError::Unavailable | AdminError::AuditUnavailable => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            AdminError::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        };
        let code = self.code();
        (
            status,
            Json(json!({ "error": { "code": code, "message": self.to_string() } })),
        )
            .into_response()
    }
}
