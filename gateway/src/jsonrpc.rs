//! JSON-RPC 2.0 on raw `serde_json::Value`s. The gateway forwards messages byte-faithfully and
//! rewrites only the fields it must, so it never round-trips them through a typed model.

use serde_json::{json, Map, Value};

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
/// 2026-07-28: an HTTP header disagrees with the body (or is missing).
pub const HEADER_MISMATCH: i64 = -32020;
/// 2026-07-28: the request needs a client capability the client did not declare.
pub const MISSING_CLIENT_CAPABILITY: i64 = -32021;
/// 2026-07-28: the requested protocol version is not served.
pub const UNSUPPORTED_VERSION: i64 = -32022;
/// An upstream is down, closed the connection or cannot be reached.
pub const UPSTREAM_UNAVAILABLE: i64 = -32000;
/// An upstream did not answer within the request timeout.
pub const UPSTREAM_TIMEOUT: i64 = -32001;

/// The request carries no valid credentials (HTTP 401/403 carry the detail).
pub const UNAUTHORIZED: i64 = -32040;
/// The caller is over its rate limit (HTTP 429 with Retry-After).
pub const RATE_LIMITED: i64 = -32029;

/// What a message is, by its shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Request,
    Notification,
    Response,
    Invalid,
}

pub fn kind(msg: &Value) -> Kind {
    let Some(obj) = msg.as_object() else {
        return Kind::Invalid;
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Kind::Invalid;
    }
    match (obj.get("method"), obj.get("id")) {
        (Some(Value::String(_)), Some(id)) if is_valid_id(id) => Kind::Request,
        (Some(Value::String(_)), None) => Kind::Notification,
        (None, Some(_)) if obj.contains_key("result") || obj.contains_key("error") => {
            Kind::Response
        }
        _ => Kind::Invalid,
    }
}

fn is_valid_id(id: &Value) -> bool {
    id.is_string() || id.is_i64() || id.is_u64()
}

pub fn method(msg: &Value) -> Option<&str> {
    msg.get("method").and_then(Value::as_str)
}

pub fn params(msg: &Value) -> Option<&Map<String, Value>> {
    msg.get("params").and_then(Value::as_object)
}

/// MCP's params are always an object (JSON-RPC's by-position arrays are not used).
pub fn params_not_object() -> RpcError {
    RpcError::invalid_params("params must be an object")
}

pub fn request(id: Value, method: &str, params: Option<Value>) -> Value {
    let mut m = json!({ "jsonrpc": "2.0", "id": id, "method": method });
    if let Some(p) = params {
        m["params"] = p;
    }
    m
}

pub fn notification(method: &str, params: Option<Value>) -> Value {
    let mut m = json!({ "jsonrpc": "2.0", "method": method });
    if let Some(p) = params {
        m["params"] = p;
    }
    m
}

pub fn result(id: Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

pub fn error(id: Value, code: i64, message: impl Into<String>) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message.into() } })
}

/// A JSON-RPC error as a value the dispatcher can return.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(INVALID_PARAMS, message)
    }

    pub fn to_message(&self, id: Value) -> Value {
        let mut m = error(id, self.code, self.message.clone());
        if let Some(d) = &self.data {
            m["error"]["data"] = d.clone();
        }
        m
    }

    /// The error of an upstream's error response, passed through unchanged.
    pub fn from_response(resp: &Value) -> Option<Self> {
        let e = resp.get("error")?;
        Some(Self {
            code: e
                .get("code")
                .and_then(Value::as_i64)
                .unwrap_or(INTERNAL_ERROR),
            message: e
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("upstream error")
                .to_string(),
            data: e.get("data").cloned(),
        })
    }
}

impl std::fmt::Display for RpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for RpcError {}

/// The HTTP status of a 2026-07-28 answer carrying this error code (the revision's table);
/// other errors travel with 200.
pub fn http_status(code: i64) -> axum::http::StatusCode {
    use axum::http::StatusCode;
    match code {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_messages() {
        assert_eq!(
            kind(&json!({"jsonrpc":"2.0","id":1,"method":"ping"})),
            Kind::Request
        );
        assert_eq!(
            kind(&json!({"jsonrpc":"2.0","method":"x"})),
            Kind::Notification
        );
        assert_eq!(
            kind(&json!({"jsonrpc":"2.0","id":"a","result":{}})),
            Kind::Response
        );
        assert_eq!(
            kind(&json!({"jsonrpc":"2.0","id":null,"method":"ping"})),
            Kind::Invalid
        );
        assert_eq!(kind(&json!({"id":1,"method":"ping"})), Kind::Invalid);
        assert_eq!(kind(&json!([1])), Kind::Invalid);
    }
}
