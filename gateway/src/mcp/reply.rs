//! How answers go out to hosts of either revision: plain JSON when the result comes soon,
//! else an SSE stream; what the gateway says of itself; each request counted by method.

use std::convert::Infallible;
use std::time::Duration;

use axum::http::{header, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::stream::{self, Stream, StreamExt};
use serde_json::{json, Value};
use tokio_stream::wrappers::UnboundedReceiverStream;

use super::session::{Session, StreamEvent};
use crate::protocol::{jsonrpc, McpError, Method, Revision};

/// How long a call may take before its answer becomes an SSE stream with keep-alives.
const JSON_WINDOW: Duration = Duration::from_secs(1);

fn to_event(e: StreamEvent) -> Result<Event, Infallible> {
    Ok(Event::default().id(e.id).data(e.data.as_ref()))
}

pub fn sse_response(events: impl Stream<Item = StreamEvent> + Send + 'static) -> Response {
    Sse::new(events.map(to_event))
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
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
                    .and_then(|m| McpError::from_response(&m))
                    .map_or(StatusCode::OK, |e| e.http_status(Revision::Stateless))
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
    let priming = (!modern && session.protocol_version.primes_streams())
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

pub fn reply(id: Value, out: Result<Value, McpError>) -> Value {
    match out {
        Ok(r) => jsonrpc::result(id, r),
        Err(e) => e.to_message(id),
    }
}

/// Counts a host request by method and outcome.
pub fn count<T: crate::metrics::MaybeToolError>(
    metrics: &crate::metrics::Metrics,
    method: &Method,
    out: &Result<T, McpError>,
) {
    metrics
        .mcp_requests
        .with_label_values(&[method.label(), crate::metrics::outcome(out)])
        .inc();
}
