//! JSON-RPC 2.0 on raw `serde_json::Value`s, and the error codes of JSON-RPC and MCP. The gateway
//! forwards messages byte-faithfully and rewrites only the fields it must, so it never
//! round-trips them through a typed model.

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

/// A message's id, or null (an error answering a message whose id cannot be read).
pub fn id(msg: &Value) -> Value {
    msg.get("id").cloned().unwrap_or(Value::Null)
}

pub fn method(msg: &Value) -> Option<&str> {
    msg.get("method").and_then(Value::as_str)
}

pub fn params(msg: &Value) -> Option<&Map<String, Value>> {
    msg.get("params").and_then(Value::as_object)
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
