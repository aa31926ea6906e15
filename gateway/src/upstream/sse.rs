//! Legacy HTTP+SSE upstreams (MCP 2024-11-05; rmcp has no client for it): a GET stream whose
//! first `endpoint` event names the URL to POST messages to; every answer comes on the stream.

use std::time::Duration;

use futures::StreamExt;
use reqwest::header::{HeaderMap, ACCEPT};
use serde_json::Value;
use sse_stream::SseStream;
use tokio::sync::{mpsc, oneshot};

use super::connection::{Inbound, Outbound, TransportParts};
use super::UpstreamError;
use crate::protocol::jsonrpc;

/// How long the server may take to name its message endpoint.
const ENDPOINT_TIMEOUT: Duration = Duration::from_secs(10);

pub async fn connect(
    client: reqwest::Client,
    url: &str,
    headers: HeaderMap,
    max_message: usize,
) -> Result<TransportParts, UpstreamError> {
    let resp = client
        .get(url)
        .headers(headers.clone())
        .header(ACCEPT, "text/event-stream")
        .send()
        .await
        .map_err(|e| UpstreamError::Connect(format!("sse stream: {e}")))?;
    if !resp.status().is_success() {
        return Err(UpstreamError::Connect(format!(
            "sse stream: HTTP {}",
            resp.status()
        )));
    }
    let base = resp.url().clone();
    let (in_tx, in_rx) = mpsc::unbounded_channel::<Inbound>();
    let (endpoint_tx, endpoint_rx) = oneshot::channel::<Result<String, String>>();
    // The writer reports failed posts through a weak sender, so the stream's end still ends the
    // connection.
    let fail_tx = in_tx.downgrade();
    let reader = tokio::spawn(read_events(resp, base, in_tx, endpoint_tx, max_message));
    let endpoint = match tokio::time::timeout(ENDPOINT_TIMEOUT, endpoint_rx).await {
        Ok(Ok(Ok(e))) => e,
        Ok(Ok(Err(e))) => {
            reader.abort();
            return Err(UpstreamError::Connect(e));
        }
        _ => {
            reader.abort();
            return Err(UpstreamError::Connect(
                "sse server sent no endpoint event".into(),
            ));
        }
    };
    let (out_tx, out_rx) = mpsc::unbounded_channel::<Outbound>();
    let writer = tokio::spawn(post_messages(client, endpoint, headers, out_rx, fail_tx));
    let close = Box::new(move || {
        reader.abort();
        writer.abort();
    });
    Ok(TransportParts {
        tx: out_tx,
        rx: in_rx,
        close,
        direct: None,
    })
}

/// Reads the upstream's event stream: its `endpoint` (where messages are posted) once, then
/// its messages, until it ends.
async fn read_events(
    resp: reqwest::Response,
    base: url::Url,
    in_tx: mpsc::UnboundedSender<Inbound>,
    endpoint_tx: oneshot::Sender<Result<String, String>>,
    max_message: usize,
) {
    let mut endpoint_tx = Some(endpoint_tx);
    // An event over the limit ends the stream: the connection restarts (the legacy
    // transport does not say which call an event answers before it is parsed).
    let over = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let bytes = super::limits::limit_events(resp.bytes_stream(), max_message, over.clone());
    let mut events = SseStream::from_bytes_stream(bytes);
    while let Some(Ok(ev)) = events.next().await {
        let Some(data) = ev.data else { continue };
        match ev.event.as_deref() {
            Some("endpoint") => {
                if let (Some(tx), Ok(u)) = (endpoint_tx.take(), base.join(data.trim())) {
                    // Messages carry the upstream's credentials: they go to its own origin only
                    // (as the SDKs' clients insist too).
                    let _ = tx.send(match u.origin() == base.origin() {
                        true => Ok(u.to_string()),
                        false => Err(format!(
                            "the sse server names a message endpoint on another origin ({}), \
                             where its credentials are not sent",
                            u.origin().ascii_serialization()
                        )),
                    });
                }
            }
            None | Some("message") => match serde_json::from_str::<Value>(&data) {
                Ok(msg) => {
                    if in_tx.send(Inbound { msg, related: None }).is_err() {
                        break;
                    }
                }
                Err(_) => tracing::warn!("non-JSON SSE message ignored"),
            },
            Some(_) => {}
        }
    }
    if over.load(std::sync::atomic::Ordering::Relaxed) {
        tracing::warn!(
            "{}; the SSE upstream is reconnected",
            super::limits::too_large(max_message)
        );
    }
}

/// Posts each outbound message to the endpoint; a request whose post fails is answered with
/// an error through `fail_tx` (weak, so the stream's end still ends the connection).
async fn post_messages(
    client: reqwest::Client,
    endpoint: String,
    headers: HeaderMap,
    mut out_rx: mpsc::UnboundedReceiver<Outbound>,
    fail_tx: mpsc::WeakUnboundedSender<Inbound>,
) {
    while let Some(Outbound { msg }) = out_rx.recv().await {
        let req = client.post(&endpoint).headers(headers.clone()).json(&msg);
        let why = match req.send().await {
            Ok(r) if r.status().is_success() => continue,
            Ok(r) => format!("upstream answered HTTP {}", r.status()),
            Err(e) => format!("upstream unreachable: {}", super::post::chain(&e)),
        };
        let id = (jsonrpc::kind(&msg) == jsonrpc::Kind::Request)
            .then(|| msg.get("id").cloned())
            .flatten();
        match (id, fail_tx.upgrade()) {
            (Some(id), Some(tx)) => {
                let msg = jsonrpc::error(id, jsonrpc::UPSTREAM_UNAVAILABLE, why);
                let _ = tx.send(Inbound { msg, related: None });
            }
            _ => tracing::warn!(%why, "sse upstream refused a message"),
        }
    }
}
