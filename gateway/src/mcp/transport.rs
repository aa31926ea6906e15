//! Streamable HTTP for hosts: `POST /mcp` (JSON or SSE answers), `GET /mcp` (the session's
//! stream, and resumption with `Last-Event-ID`), `DELETE /mcp` (end the session).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Extension, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Json;
use futures::stream::{self, Stream, StreamExt};
use serde_json::{json, Value};
use tokio_stream::wrappers::UnboundedReceiverStream;

use super::session::{Session, StreamEvent};
use crate::app::AppState;
use crate::auth::Principal;
use crate::jsonrpc::{self, RpcError};
use crate::routing::Endpoint;

pub const SESSION_HEADER: &str = "mcp-session-id";
pub const VERSION_HEADER: &str = "mcp-protocol-version";
/// How long a call may take before its answer becomes an SSE stream with keep-alives.
const JSON_WINDOW: Duration = Duration::from_secs(1);
/// Revisions hosts may use, newest first.
pub const SUPPORTED_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// A transport-level failure: the one place that pairs an HTTP status with a JSON-RPC error.
#[derive(Debug)]
pub struct TransportError {
    status: StatusCode,
    code: i64,
    message: String,
}

impl IntoResponse for TransportError {
    fn into_response(self) -> Response {
        (
            self.status,
            Json(jsonrpc::error(Value::Null, self.code, self.message)),
        )
            .into_response()
    }
}

fn rpc_error(status: StatusCode, code: i64, message: &str) -> TransportError {
    TransportError {
        status,
        code,
        message: message.to_string(),
    }
}

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
) -> Result<Arc<Session>, TransportError> {
    check_version(headers)?;
    let Some(id) = headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok()) else {
        return Err(rpc_error(
            StatusCode::BAD_REQUEST,
            jsonrpc::INVALID_REQUEST,
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
        None => Err(rpc_error(
            StatusCode::NOT_FOUND,
            jsonrpc::INVALID_REQUEST,
            "session not found: initialize a new session",
        )),
    }
}

fn check_version(headers: &HeaderMap) -> Result<(), TransportError> {
    match headers
        .get(VERSION_HEADER)
        .map(|v| v.to_str().unwrap_or(""))
    {
        Some(v) if !SUPPORTED_VERSIONS.contains(&v) => Err(rpc_error(
            StatusCode::BAD_REQUEST,
            jsonrpc::INVALID_REQUEST,
            &format!(
                "unsupported MCP-Protocol-Version {v:?}; supported: {}",
                SUPPORTED_VERSIONS.join(", ")
            ),
        )),
        _ => Ok(()),
    }
}

fn to_event(e: StreamEvent) -> Result<Event, Infallible> {
    Ok(Event::default().id(e.id).data(e.data.as_ref()))
}

fn sse_response(events: impl Stream<Item = StreamEvent> + Send + 'static) -> Response {
    Sse::new(events.map(to_event))
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
}

pub async fn post(
    State(state): State<AppState>,
    Extension(principal): Extension<Arc<Principal>>,
    Extension(endpoint): Extension<Endpoint>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let msg: Value = match serde_json::from_slice(&body) {
        Ok(m) => m,
        Err(_) => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                jsonrpc::PARSE_ERROR,
                "parse error: body is not JSON",
            )
            .into_response()
        }
    };
    if msg.is_array() {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            jsonrpc::INVALID_REQUEST,
            "batch requests are not supported",
        )
        .into_response();
    }
    let kind = jsonrpc::kind(&msg);
    if kind == jsonrpc::Kind::Invalid {
        let id = msg.get("id").cloned().unwrap_or(Value::Null);
        return (
            StatusCode::BAD_REQUEST,
            Json(jsonrpc::error(
                id,
                jsonrpc::INVALID_REQUEST,
                "invalid JSON-RPC 2.0 message",
            )),
        )
            .into_response();
    }
    if super::modern::is_modern(&headers, &msg) {
        return super::modern::post(state, principal, headers, body, msg, endpoint.scope).await;
    }
    let method = jsonrpc::method(&msg).unwrap_or_default();
    if kind == jsonrpc::Kind::Request && method == "initialize" {
        return initialize(&state, &msg, principal, endpoint.scope);
    }
    let session = match session_of(&state, &headers, principal, &endpoint).await {
        Ok(s) => s,
        Err(r) => return r.into_response(),
    };
    match kind {
        jsonrpc::Kind::Notification => {
            on_host_notification(&state, &session, &msg);
            StatusCode::ACCEPTED.into_response()
        }
        jsonrpc::Kind::Response => {
            state.hub.on_host_response(&session, msg);
            StatusCode::ACCEPTED.into_response()
        }
        _ => request(state, session, msg, accepts_sse(&headers)).await,
    }
}

/// What the gateway tells hosts of either revision about itself.
pub const INSTRUCTIONS: &str =
    "Tools, resources and prompts of several MCP servers; names are prefixed with the server's name.";

pub fn capabilities() -> Value {
    json!({
        "tools": { "listChanged": true },
        "resources": { "subscribe": true, "listChanged": true },
        "prompts": { "listChanged": true },
        "logging": {},
        "completions": {},
    })
}

pub fn server_info() -> Value {
    json!({ "name": "mcp-gateway", "title": "MCP Gateway", "version": env!("CARGO_PKG_VERSION") })
}

fn initialize(
    state: &AppState,
    msg: &Value,
    principal: Arc<Principal>,
    scope: Option<String>,
) -> Response {
    let id = msg.get("id").cloned().unwrap_or(Value::Null);
    let params = msg.get("params");
    let Some(requested) = params
        .and_then(|p| p.get("protocolVersion"))
        .and_then(Value::as_str)
    else {
        return (
            StatusCode::BAD_REQUEST,
            Json(jsonrpc::error(
                id,
                jsonrpc::INVALID_PARAMS,
                "initialize needs params.protocolVersion",
            )),
        )
            .into_response();
    };
    let version = if SUPPORTED_VERSIONS.contains(&requested) {
        requested
    } else {
        SUPPORTED_VERSIONS[0]
    };
    let caps = params
        .and_then(|p| p.get("capabilities"))
        .cloned()
        .unwrap_or_else(|| json!({}));
    let sid = state.hub.create(version, caps, principal, scope).id.clone();
    tracing::info!(session = %super::hub::short(&sid), version, "session initialized");
    let result = json!({
        "protocolVersion": version,
        "capabilities": capabilities(),
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
        "notifications/cancelled" => {
            let Some(rid) = msg.pointer("/params/requestId") else {
                return;
            };
            let found = session
                .inflight
                .lock()
                .unwrap()
                .remove(&super::session::id_key(rid));
            if let Some((conn, uid)) = found {
                let reason = msg
                    .pointer("/params/reason")
                    .and_then(Value::as_str)
                    .unwrap_or("cancelled by client");
                conn.cancel(uid, reason);
            }
        }
        "notifications/roots/list_changed" => {
            for conn in state.hub.upstreams.session_connections(&session.id) {
                conn.notify("notifications/roots/list_changed", None);
            }
        }
        _ => {}
    }
}

async fn request(state: AppState, session: Arc<Session>, msg: Value, sse: bool) -> Response {
    let id = msg.get("id").cloned().unwrap_or(Value::Null);
    let method = jsonrpc::method(&msg).unwrap_or_default().to_string();
    if msg.get("params").is_some_and(|p| !p.is_object()) {
        let out = Err(jsonrpc::params_not_object());
        log_call(
            &state.dispatcher.metrics,
            &session,
            &method,
            &out,
            std::time::Instant::now(),
        );
        return Json(reply(id, out)).into_response();
    }
    // Calls may bring progress, logs or requests for the host along: those answer with a stream.
    let streams = sse
        && matches!(
            method.as_str(),
            "tools/call" | "prompts/get" | "resources/read" | "completion/complete"
        );
    let started = std::time::Instant::now();
    if !streams {
        let out = state
            .dispatcher
            .dispatch(&session, &id, &method, jsonrpc::params(&msg))
            .await;
        log_call(&state.dispatcher.metrics, &session, &method, &out, started);
        return Json(reply(id, out)).into_response();
    }
    let (stream_no, rx) = session.open_stream(&id);
    let task_session = session.clone();
    tokio::spawn(async move {
        let out = state
            .dispatcher
            .dispatch(&task_session, &id, &method, jsonrpc::params(&msg))
            .await;
        log_call(
            &state.dispatcher.metrics,
            &task_session,
            &method,
            &out,
            started,
        );
        let response = reply(id.clone(), out);
        task_session.finish_stream(stream_no, &id, &response);
    });
    answer(&session, stream_no, rx, false).await
}

/// Answers a request whose messages flow into stream `stream_no`: plain JSON when the final
/// response comes first and soon (cheaper for both sides; for 2026-07-28 requests also the only
/// way an error gets its HTTP status), else an SSE stream, which keep-alives hold open.
pub async fn answer(
    session: &Session,
    stream_no: u64,
    mut rx: tokio::sync::mpsc::UnboundedReceiver<StreamEvent>,
    modern: bool,
) -> Response {
    let first = tokio::time::timeout(JSON_WINDOW, rx.recv()).await;
    if let Ok(Some(ev)) = &first {
        if ev.last {
            let status = if modern {
                serde_json::from_str::<Value>(&ev.data)
                    .ok()
                    .and_then(|m| m.pointer("/error/code").and_then(Value::as_i64))
                    .map_or(StatusCode::OK, jsonrpc::http_status)
            } else {
                StatusCode::OK
            };
            return (
                status,
                [(header::CONTENT_TYPE, "application/json")],
                ev.data.to_string(),
            )
                .into_response();
        }
    }
    // 2026-07-28 has no resumption: no priming event.
    let priming = (!modern && session.protocol_version.as_str() >= "2025-11-25")
        .then(|| session.priming_event(stream_no));
    let first = first.ok().flatten();
    let events =
        stream::iter(priming.into_iter().chain(first)).chain(UnboundedReceiverStream::new(rx));
    sse_response(events)
}

/// An SSE stream of JSON-RPC messages without event ids (2026-07-28 `subscriptions/listen`).
pub fn sse_of_messages(messages: impl Stream<Item = Value> + Send + 'static) -> Response {
    Sse::new(messages.map(|m| Ok::<_, Infallible>(Event::default().data(m.to_string()))))
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
}

fn reply(id: Value, out: Result<Value, RpcError>) -> Value {
    match out {
        Ok(r) => jsonrpc::result(id, r),
        Err(e) => e.to_message(id),
    }
}

/// Methods counted under their own name; anything else a client sends is `other`, so a
/// misbehaving client cannot grow the metrics without bound.
const KNOWN_METHODS: [&str; 15] = [
    "subscriptions/listen",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "initialize",
    "server/discover",
];

/// Counts a host request by method and outcome.
pub fn count<T: crate::metrics::MaybeToolError>(
    metrics: &crate::metrics::Metrics,
    method: &str,
    out: &Result<T, RpcError>,
) {
    let label = KNOWN_METHODS
        .iter()
        .find(|m| **m == method)
        .copied()
        .unwrap_or("other");
    metrics
        .mcp_requests
        .with_label_values(&[label, crate::metrics::outcome(out)])
        .inc();
}

fn log_call(
    metrics: &crate::metrics::Metrics,
    session: &Session,
    method: &str,
    out: &Result<Value, RpcError>,
    started: std::time::Instant,
) {
    count(metrics, method, out);
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    match out {
        Ok(_) => tracing::debug!(session = %session.id, method, ms, "request ok"),
        Err(e) => {
            tracing::info!(session = %session.id, method, ms, code = e.code, error = %e.message, "request failed")
        }
    }
}

pub async fn get(
    State(state): State<AppState>,
    Extension(principal): Extension<Arc<Principal>>,
    Extension(endpoint): Extension<Endpoint>,
    headers: HeaderMap,
) -> Response {
    if !accepts_sse(&headers) {
        return rpc_error(
            StatusCode::NOT_ACCEPTABLE,
            jsonrpc::INVALID_REQUEST,
            "GET /mcp needs Accept: text/event-stream",
        )
        .into_response();
    }
    let session = match session_of(&state, &headers, principal, &endpoint).await {
        Ok(s) => s,
        Err(r) => return r.into_response(),
    };
    let last = headers.get("last-event-id").and_then(|v| v.to_str().ok());
    match session.attach(last) {
        Some(rx) => sse_response(UnboundedReceiverStream::new(rx)),
        None => rpc_error(
            StatusCode::BAD_REQUEST,
            jsonrpc::INVALID_REQUEST,
            "Last-Event-ID is not one this server issued",
        )
        .into_response(),
    }
}

pub async fn delete(
    State(state): State<AppState>,
    Extension(principal): Extension<Arc<Principal>>,
    Extension(endpoint): Extension<Endpoint>,
    headers: HeaderMap,
) -> Response {
    let session = match session_of(&state, &headers, principal, &endpoint).await {
        Ok(s) => s,
        Err(r) => return r.into_response(),
    };
    state.hub.terminate(&session.id).await;
    tracing::info!(session = %session.id, "session ended by client");
    StatusCode::OK.into_response()
}
