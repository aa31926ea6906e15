//! Streamable HTTP for hosts: `POST /mcp` (JSON or SSE answers), `GET /mcp` (the session's
//! stream, and resumption with `Last-Event-ID`), `DELETE /mcp` (end the session).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Extension, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Map, Value};
use tokio_stream::wrappers::UnboundedReceiverStream;

use super::reply::{
    answer_in_place, count, server_info, session_capabilities, sse_response, INSTRUCTIONS,
};
use super::session::Session;
use crate::auth::Principal;
use crate::protocol::envelope::{LAST_EVENT_ID_HEADER, SESSION_HEADER, VERSION_HEADER};
use crate::protocol::method::{INITIALIZE, NOTIFY_CANCELLED, NOTIFY_ROOTS_LIST_CHANGED};
use crate::protocol::{jsonrpc, Answer, McpError, Method, Reply, Revision};
use crate::routing::Endpoint;
use crate::state::AppState;

fn accepts_sse(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.contains("text/event-stream"))
}

/// Finds the session a request names, after checking its protocol version header: 400 without the
/// session header or with an unsupported version, 404 for an unknown session.
/// Another principal's session is "not found" too: its existence is not revealed.
async fn session_of(
    state: &AppState,
    headers: &HeaderMap,
    principal: Arc<Principal>,
    endpoint: &Endpoint,
) -> Result<Arc<Session>, McpError> {
    check_version(headers)?;
    let Some(id) = headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok()) else {
        return Err(McpError::invalid_request(
            "missing Mcp-Session-Id header: send initialize first",
        ));
    };
    match state
        .hub
        .find(id, principal, endpoint.scope.as_deref())
        .await
    {
        Some(s) => {
            s.touch();
            Ok(s)
        }
        None => Err(
            McpError::invalid_request("session not found: initialize a new session")
                .with_status(StatusCode::NOT_FOUND),
        ),
    }
}

fn check_version(headers: &HeaderMap) -> Result<(), McpError> {
    match headers
        .get(VERSION_HEADER)
        .map(|v| v.to_str().unwrap_or(""))
    {
        Some(v) if Revision::sessionful(v).is_none() => Err(McpError::invalid_request(format!(
            "unsupported MCP-Protocol-Version {v:?}; supported: {}",
            Revision::sessionful_list()
        ))),
        _ => Ok(()),
    }
}

pub async fn handle_post(
    State(state): State<AppState>,
    Extension(principal): Extension<Arc<Principal>>,
    Extension(endpoint): Extension<Endpoint>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, McpError> {
    if let Some(call) = SessionRequest::read(&headers, &body) {
        let session = session_of(&state, &headers, principal, &endpoint).await?;
        let method = Method::parse(call.method);
        let sse = accepts_sse(&headers);
        return Ok(request(state, session, call.id, call.params, method, sse).await);
    }
    let msg: Value = serde_json::from_slice(&body)
        .map_err(|_| McpError::new(jsonrpc::PARSE_ERROR, "parse error: body is not JSON"))?;
    if msg.is_array() {
        return Err(McpError::invalid_request(
            "batch requests are not supported",
        ));
    }
    let kind = jsonrpc::kind(&msg);
    if kind == jsonrpc::Kind::Invalid {
        return Ok(McpError::invalid_request("invalid JSON-RPC 2.0 message")
            .reply(jsonrpc::id(&msg), Revision::Stateless));
    }
    if super::modern::is_modern(&headers, &msg) {
        return Ok(super::modern::handle_stateless_post(
            state,
            principal,
            headers,
            body,
            msg,
            endpoint.scope,
        )
        .await);
    }
    let method = Method::parse(jsonrpc::method(&msg).unwrap_or_default());
    if kind == jsonrpc::Kind::Request && method == Method::Initialize {
        return Ok(initialize(&state, &msg, principal, endpoint.scope));
    }
    let session = session_of(&state, &headers, principal, &endpoint).await?;
    Ok(match kind {
        jsonrpc::Kind::Notification => {
            on_host_notification(&state, &session, &msg);
            StatusCode::ACCEPTED.into_response()
        }
        jsonrpc::Kind::Response => {
            state.hub.on_host_response(&session, msg);
            StatusCode::ACCEPTED.into_response()
        }
        _ => {
            let id = jsonrpc::id(&msg);
            let params = match jsonrpc::take_params(msg) {
                None => None,
                Some(Value::Object(p)) => Some(p),
                Some(_) => return Ok(params_not_object(&state, &session, &method, id)),
            };
            request(state, session, id, params, method, accepts_sse(&headers)).await
        }
    })
}

/// What nearly every request of a 2025 host is: a request with a session header, read into
/// this form instead of a `Value` tree (the tree's top-level map hashed and allocated four keys
/// and two values per call; docs/benchmarks.md, "`POST /mcp` in front of the router").
/// Anything it does not read plainly (another member, a duplicate, an escaped method name,
/// params that are not an object, an id that is neither a string nor an integer,
/// `initialize`) goes the tree's way, which decides as before.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SessionRequest<'a> {
    jsonrpc: &'a str,
    id: Value,
    method: &'a str,
    /// Absent is none; `null` is no object, so it goes the tree's way to its error.
    #[serde(default, deserialize_with = "present")]
    params: Option<Map<String, Value>>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Map<String, Value>>, D::Error> {
    serde::Deserialize::deserialize(d).map(Some)
}

impl<'a> SessionRequest<'a> {
    fn read(headers: &HeaderMap, body: &'a [u8]) -> Option<Self> {
        // Without a session header the request may be a 2026-07-28 one (`modern::is_modern`).
        if !headers.contains_key(SESSION_HEADER) {
            return None;
        }
        let r: Self = jsonrpc::read_object(body)?;
        (r.jsonrpc == "2.0" && jsonrpc::is_valid_id(&r.id) && r.method != INITIALIZE).then_some(r)
    }
}

/// The answer to a request whose params are not an object, counted like any other.
fn params_not_object(state: &AppState, session: &Session, method: &Method, id: Value) -> Response {
    let out = Err(McpError::params_not_object());
    log_call(
        &state.dispatcher.metrics,
        session,
        method,
        &out,
        std::time::Instant::now(),
    );
    Json(Reply::new(id, out)).into_response()
}

fn initialize(
    state: &AppState,
    msg: &Value,
    principal: Arc<Principal>,
    scope: Option<String>,
) -> Response {
    let id = jsonrpc::id(msg);
    let params = msg.get("params");
    let Some(requested) = params
        .and_then(|p| p.get("protocolVersion"))
        .and_then(Value::as_str)
    else {
        return McpError::invalid_params("initialize needs params.protocolVersion")
            .reply(id, Revision::Stateless);
    };
    let version = Revision::sessionful(requested).unwrap_or(Revision::SESSIONFUL[0]);
    let caps = params
        .and_then(|p| p.get("capabilities"))
        .cloned()
        .unwrap_or_else(|| json!({}));
    let sid = match state.hub.create(version, caps, principal, scope) {
        Ok(s) => s.id.clone(),
        Err(super::hub::SessionCap(max)) => {
            return McpError::invalid_request(format!(
                "too many open sessions: this principal holds {max} \
                 (server.max_sessions_per_principal); end one with DELETE /mcp or let idle ones \
                 expire (server.session_idle_secs)"
            ))
            .with_status(axum::http::StatusCode::TOO_MANY_REQUESTS)
            .reply(id, Revision::Stateless);
        }
    };
    tracing::info!(session = %super::hub::short(&sid), %version, "session initialized");
    let result = json!({
        "protocolVersion": version.as_str(),
        "capabilities": session_capabilities(version),
        "serverInfo": server_info(),
        "instructions": INSTRUCTIONS,
    });
    let mut resp = Json(jsonrpc::result(id, result)).into_response();
    resp.headers_mut().insert(
        SESSION_HEADER,
        HeaderValue::from_str(&sid).expect("base64url id"),
    );
    resp
}

fn on_host_notification(state: &AppState, session: &Session, msg: &Value) {
    match jsonrpc::method(msg).unwrap_or_default() {
        NOTIFY_CANCELLED => {
            let Some(rid) = msg.pointer("/params/requestId") else {
                return;
            };
            let found = session.take_inflight(rid);
            if let Some((conn, uid)) = found {
                let reason = msg
                    .pointer("/params/reason")
                    .and_then(Value::as_str)
                    .unwrap_or("cancelled by client");
                conn.cancel(uid, reason);
            }
        }
        NOTIFY_ROOTS_LIST_CHANGED => {
            for conn in state.hub.upstreams.session_connections(&session.id) {
                conn.notify(NOTIFY_ROOTS_LIST_CHANGED, None);
            }
        }
        _ => {}
    }
}

async fn request(
    state: AppState,
    session: Arc<Session>,
    id: Value,
    params: Option<Map<String, Value>>,
    method: Method,
    sse: bool,
) -> Response {
    let started = std::time::Instant::now();
    // Calls may bring progress, logs or requests for the host along: those answer with a stream.
    if !(sse && method.reaches_upstream()) {
        let out = state
            .dispatcher
            .dispatch(&session, &id, &method, params.as_ref())
            .await;
        log_call(&state.dispatcher.metrics, &session, &method, &out, started);
        return Json(Reply::new(id, out)).into_response();
    }
    let work_session = session.clone();
    let work_id = id.clone();
    let work = Box::pin(async move {
        let out = state
            .dispatcher
            .dispatch(&work_session, &work_id, &method, params.as_ref())
            .await;
        log_call(
            &state.dispatcher.metrics,
            &work_session,
            &method,
            &out,
            started,
        );
        Reply::new(work_id, out)
    });
    let revision = session.protocol_version;
    answer_in_place(session, id, work, revision).await
}

fn log_call(
    metrics: &crate::metrics::Metrics,
    session: &Session,
    method: &Method,
    out: &Result<Answer, McpError>,
    started: std::time::Instant,
) {
    count(metrics, method, out);
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    match out {
        Ok(_) => tracing::debug!(session = %session.id, %method, ms, "request ok"),
        Err(e) => {
            tracing::info!(session = %session.id, %method, ms, code = e.code, error = %e.message, "request failed")
        }
    }
}

pub async fn get(
    State(state): State<AppState>,
    Extension(principal): Extension<Arc<Principal>>,
    Extension(endpoint): Extension<Endpoint>,
    headers: HeaderMap,
) -> Result<Response, McpError> {
    if !accepts_sse(&headers) {
        return Err(
            McpError::invalid_request("GET /mcp needs Accept: text/event-stream")
                .with_status(StatusCode::NOT_ACCEPTABLE),
        );
    }
    let session = session_of(&state, &headers, principal, &endpoint).await?;
    let last = headers
        .get(LAST_EVENT_ID_HEADER)
        .and_then(|v| v.to_str().ok());
    let rx = session
        .attach(last)
        .ok_or_else(|| McpError::invalid_request("Last-Event-ID is not one this server issued"))?;
    Ok(sse_response(UnboundedReceiverStream::new(rx)))
}

pub async fn delete(
    State(state): State<AppState>,
    Extension(principal): Extension<Arc<Principal>>,
    Extension(endpoint): Extension<Endpoint>,
    headers: HeaderMap,
) -> Result<StatusCode, McpError> {
    let session = session_of(&state, &headers, principal, &endpoint).await?;
    state.hub.terminate(&session.id).await;
    tracing::info!(session = %session.id, "session ended by client");
    Ok(StatusCode::OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session's request is read without a tree only when the tree would read it the same
    /// way; everything else is left to the tree.
    #[test]
    fn a_session_request_is_read_plainly_or_left_to_the_tree() {
        let mut session = HeaderMap::new();
        session.insert(SESSION_HEADER, HeaderValue::from_static("s"));
        let read = |body: &str| {
            SessionRequest::read(&session, body.as_bytes())
                .map(|r| (r.id, r.method.to_string(), r.params.map(Value::Object)))
        };
        let call = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a__b","arguments":{"x":[1]}}}"#;
        let (id, method, params) = read(call).expect("a plain request");
        let tree: Value = serde_json::from_str(call).unwrap();
        assert_eq!(id, tree["id"]);
        assert_eq!(method, "tools/call");
        assert_eq!(params.as_ref(), Some(&tree["params"]));
        assert_eq!(
            read(r#" {"method":"ping","id":"x","jsonrpc":"2.0"}"#),
            Some((json!("x"), "ping".to_string(), None))
        );
        for other in [
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":null}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":[1]}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","extra":1}"#,
            r#"{"jsonrpc":"2.0","id":7,"id":8,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":7.5,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"1.0","id":7,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools\/list"}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{}}"#,
            r#"["2.0",7,"tools/list"]"#,
            r#"[{"jsonrpc":"2.0","id":7,"method":"tools/list"}]"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/list"} x"#,
        ] {
            assert!(read(other).is_none(), "{other}");
        }
        // Without a session header it may be a 2026-07-28 request.
        assert!(SessionRequest::read(&HeaderMap::new(), call.as_bytes()).is_none());
    }
}
