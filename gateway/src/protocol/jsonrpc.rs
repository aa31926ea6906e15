//! JSON-RPC 2.0 on raw `serde_json::Value`s, and the error codes of JSON-RPC and MCP. The gateway
//! forwards messages byte-faithfully and rewrites only the fields it must, so it never
//! round-trips them through a typed model.

use serde_json::{Map, Value};

use super::Member;

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
/// The audit log cannot be written, so a call that must be audited is refused
/// (`audit.when_unwritable`).
pub const AUDIT_UNAVAILABLE: i64 = -32002;

/// The request carries no valid credentials (HTTP 401/403 carry the detail).
pub const UNAUTHORIZED: i64 = -32040;
/// The host must open a URL before the request can work (2025-11-25 URL elicitation).
pub const URL_ELICITATION_REQUIRED: i64 = -32042;
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
    if obj.member("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Kind::Invalid;
    }
    match (obj.member("method"), obj.member("id")) {
        (Some(Value::String(_)), Some(id)) if is_valid_id(id) => Kind::Request,
        (Some(Value::String(_)), None) => Kind::Notification,
        (None, Some(_)) if obj.member("result").is_some() || obj.member("error").is_some() => {
            Kind::Response
        }
        _ => Kind::Invalid,
    }
}

/// A request's id: a string or an integer.
pub fn is_valid_id(id: &Value) -> bool {
    id.is_string() || id.is_i64() || id.is_u64()
}

/// A message's id, or null (an error answering a message whose id cannot be read).
pub fn id(msg: &Value) -> Value {
    msg.member("id").cloned().unwrap_or(Value::Null)
}

pub fn method(msg: &Value) -> Option<&str> {
    msg.member("method").and_then(Value::as_str)
}

/// A message's params, taken out of it (nothing else of it is read after).
pub fn take_params(msg: Value) -> Option<Value> {
    match msg {
        Value::Object(mut m) => m.remove("params"),
        _ => None,
    }
}

/// `body` read as a `T` when it is a JSON object: a derived struct also reads an array, by
/// position, so a batch or a result that is no object is not mistaken for one. `None` for
/// anything `T` does not read.
pub fn read_object<'a, T: serde::Deserialize<'a>>(body: &'a [u8]) -> Option<T> {
    if body.trim_ascii_start().first() != Some(&b'{') {
        return None;
    }
    serde_json::from_slice(body).ok()
}

/// A message from its members in this order. The values are moved in: `json!` would copy each
/// one through the serializer, a whole tool result per answer.
fn message<const N: usize>(members: [(&str, Option<Value>); N]) -> Value {
    let mut m = Map::with_capacity(N + 1);
    m.insert("jsonrpc".into(), Value::from("2.0"));
    for (k, v) in members {
        if let Some(v) = v {
            m.insert(k.into(), v);
        }
    }
    Value::Object(m)
}

pub fn request(id: Value, method: &str, params: Option<Value>) -> Value {
    message([
        ("id", Some(id)),
        ("method", Some(method.into())),
        ("params", params),
    ])
}

pub fn notification(method: &str, params: Option<Value>) -> Value {
    message([("method", Some(method.into())), ("params", params)])
}

pub fn result(id: Value, result: Value) -> Value {
    message([("id", Some(id)), ("result", Some(result))])
}

pub fn error(id: Value, code: i64, message: impl Into<String>) -> Value {
    let mut e = Map::with_capacity(3);
    e.insert("code".into(), code.into());
    e.insert("message".into(), Value::from(message.into()));
    self::message([("id", Some(id)), ("error", Some(Value::Object(e)))])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Hosts and upstreams see the members in this order (`preserve_order`), as `json!` wrote them.
    #[test]
    fn messages_keep_their_members_in_order() {
        let text = |v: Value| serde_json::to_string(&v).unwrap();
        assert_eq!(
            text(request(json!(1), "tools/call", Some(json!({"name": "x"})))),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}"#
        );
        assert_eq!(
            text(request(json!("a"), "ping", None)),
            r#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#
        );
        assert_eq!(
            text(notification("notifications/initialized", None)),
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
        );
        assert_eq!(
            text(result(json!(7), json!({"content": [], "isError": false}))),
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[],"isError":false}}"#
        );
        assert_eq!(
            text(error(Value::Null, -32600, "bad")),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad"}}"#
        );
    }

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
