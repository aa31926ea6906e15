//! The one error of the MCP edge: a JSON-RPC error (code, message, data) and the HTTP status it
//! travels with per revision. What goes wrong below converts into it where it is defined
//! (`From<CallError>` in `upstream::connection`, `From<&AuthError>` in `auth`), so this module
//! depends on nothing of the gateway's.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use super::jsonrpc::{self, *};
use super::Revision;

/// A JSON-RPC error as handlers return it.
#[derive(Debug, Clone, PartialEq)]
pub struct McpError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
    /// A transport-level failure's own status (an unknown session is 404 whatever the code).
    status: Option<StatusCode>,
}

impl McpError {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
            status: None,
        }
    }

    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// The status this error travels with in every revision (a transport-level failure).
    pub fn with_status(mut self, status: StatusCode) -> Self {
        self.status = Some(status);
        self
    }

    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(INVALID_PARAMS, message)
    }

    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(INVALID_REQUEST, message)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(INTERNAL_ERROR, message)
    }

    pub fn method_not_found(method: &str) -> Self {
        Self::new(METHOD_NOT_FOUND, format!("method not found: {method}"))
    }

    /// MCP's params are always an object (JSON-RPC's by-position arrays are not used).
    pub fn params_not_object() -> Self {
        Self::invalid_params("params must be an object")
    }

    /// An upstream that is restarting or unreachable: worth a retry, and the host learns which.
    pub fn upstream_unavailable(upstream: &str, detail: &str) -> Self {
        Self::new(
            UPSTREAM_UNAVAILABLE,
            format!("upstream {upstream} is restarting or unreachable ({detail}); retry shortly"),
        )
        .with_data(json!({ "upstream": upstream, "retry": true }))
    }

    /// A call refused because the audit log cannot take its row: worth a retry.
    pub fn audit_unavailable() -> Self {
        Self::new(
            AUDIT_UNAVAILABLE,
            "the audit log cannot be written (database full or unreachable); calls are refused \
             until it can (audit.when_unwritable); retry shortly",
        )
        .with_data(json!({ "retry": true }))
    }

    /// The HTTP status of an answer carrying this error. 2026-07-28 gives errors a status by code
    /// (its table); the 2025 revisions answer a request's error with 200 inside the response.
    /// A transport-level failure has its own status in both.
    pub fn http_status(&self, revision: Revision) -> StatusCode {
        if let Some(s) = self.status {
            return s;
        }
        if !revision.is_stateless() {
            return StatusCode::OK;
        }
        match self.code {
            METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
            PARSE_ERROR
            | INVALID_REQUEST
            | INVALID_PARAMS
            | HEADER_MISMATCH
            | MISSING_CLIENT_CAPABILITY
            | UNSUPPORTED_VERSION => StatusCode::BAD_REQUEST,
            _ => StatusCode::OK,
        }
    }

    /// The error response to request `id`, as a JSON-RPC message.
    pub fn to_message(&self, id: Value) -> Value {
        let mut m = jsonrpc::error(id, self.code, self.message.clone());
        if let Some(d) = &self.data {
            m["error"]["data"] = d.clone();
        }
        m
    }

    /// The HTTP answer to request `id` of `revision`.
    pub fn reply(&self, id: Value, revision: Revision) -> Response {
        (self.http_status(revision), Json(self.to_message(id))).into_response()
    }

    /// The error of an upstream's error response, passed through unchanged.
    pub fn from_response(resp: &Value) -> Option<Self> {
        use super::Member;
        let e = resp.member("error")?;
        Some(Self {
            code: e
                .member("code")
                .and_then(Value::as_i64)
                .unwrap_or(INTERNAL_ERROR),
            message: e
                .member("message")
                .and_then(Value::as_str)
                .unwrap_or("upstream error")
                .to_string(),
            data: e.member("data").cloned(),
            status: None,
        })
    }
}

/// An error that answers no particular request (the message could not be read, or the transport
/// refused it before any request was known): id null, with the status of the stateless table
/// unless the error names its own.
impl IntoResponse for McpError {
    fn into_response(self) -> Response {
        self.reply(Value::Null, Revision::Stateless)
    }
}

impl std::fmt::Display for McpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for McpError {}
