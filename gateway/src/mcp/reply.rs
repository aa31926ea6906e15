//! How answers go out to hosts of either revision: plain JSON when the result comes soon,
//! else an SSE stream; what the gateway says of itself; each request counted by method.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use axum::http::{header, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::stream::{self, Stream, StreamExt};
use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio_stream::wrappers::UnboundedReceiverStream;
use tracing::Instrument;

use super::session::{Session, StreamEvent};
use crate::protocol::{McpError, Method, Reply, Revision};

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

/// What a 2025 session is told the gateway serves: from 2025-11-25 on, the tasks utility too
/// (relayed to the upstreams that run tasks; see [`super::tasks`]).
pub fn session_capabilities(revision: Revision) -> Value {
    let mut caps = capabilities();
    if revision == Revision::V2025_11_25 {
        caps["tasks"] =
            json!({ "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } });
    }
    caps
}

pub fn server_info() -> Value {
    json!({ "name": "mcp-gateway", "title": "MCP Gateway", "version": env!("CARGO_PKG_VERSION") })
}

/// Answers a request of a host that takes SSE: `work` (which yields the final response) runs in
/// the request's own task while the answer can still be plain JSON, which spares a task, a
/// channel and a copy of the response per call. It moves to a task of its own, and the answer
/// becomes an SSE stream, when a message for the host comes first, when the JSON window passes,
/// or when the host's request goes away (a disconnect does not cancel a call: a 2025 host may
/// resume the stream). `revision` is the request's: it decides the JSON answer's status (an
/// error's own in 2026-07-28, 200 in the 2025 revisions; see [`McpError::http_status`]) and
/// whether the stream has a priming event.
///
/// `work` comes boxed: boxed where it is made, a call's future (several kilobytes) is copied
/// once, where taking it by value copied it into this future, into its span's wrapper and into
/// the box, and made every future holding this one that much larger (docs/benchmarks.md,
/// "`POST /mcp` in front of the router").
pub async fn answer_in_place(
    session: Arc<Session>,
    request_id: Value,
    work: Pending,
    revision: Revision,
) -> Response {
    let modern = revision.is_stateless();
    let (stream_no, mut rx) = session.open_stream(&request_id);
    // Declared before `work`, so dropped after it: the call is detached, then cancelled.
    let mut gone = CancelOnDrop(modern.then(|| session.clone()));
    let mut work = Work {
        future: Some(work.in_current_span()),
        session: session.clone(),
        stream_no,
        request_id,
    };
    enum First {
        Done(Reply),
        /// Not done: a message for the host came first (`Some`), or the window passed.
        Stream(Option<StreamEvent>),
    }
    let first = {
        let future = work.future.as_mut().expect("set above");
        tokio::select! {
            biased;
            response = future => First::Done(response),
            event = rx.recv() => First::Stream(event),
            _ = tokio::time::sleep(JSON_WINDOW) => First::Stream(None),
        }
    };
    match first {
        First::Done(response) => {
            work.future = None;
            gone.disarm();
            if session.discard_unused_stream(stream_no, &work.request_id) {
                let status = status_of(&response, revision);
                let body = response.to_json();
                return json_answer(status, body);
            }
            // Messages for the host went out first: the response follows them on the stream.
            session.finish_stream(stream_no, &work.request_id, &response);
            stream_answer(&session, stream_no, None, rx, modern, CancelOnDrop(None))
        }
        First::Stream(event) => {
            work.detach();
            stream_answer(&session, stream_no, event, rx, modern, gone)
        }
    }
}

/// A request's work, boxed where it is made (see [`answer_in_place`]).
pub type Pending = Pin<Box<dyn Future<Output = Reply> + Send>>;

/// A request's work while the request's task runs it; dropped unfinished, it finishes in a task
/// of its own and closes its stream with the response.
struct Work {
    future: Option<tracing::instrument::Instrumented<Pending>>,
    session: Arc<Session>,
    stream_no: u64,
    request_id: Value,
}

impl Work {
    fn detach(&mut self) {
        let Some(future) = self.future.take() else {
            return;
        };
        // Outside a runtime (its shutdown) there is nothing left to answer.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let session = self.session.clone();
        let (stream_no, id) = (self.stream_no, self.request_id.clone());
        runtime.spawn(async move {
            let response = future.await;
            session.finish_stream(stream_no, &id, &response);
        });
    }
}

impl Drop for Work {
    fn drop(&mut self) {
        self.detach();
    }
}

/// The HTTP status of an answer in `revision`.
fn status_of(reply: &Reply, revision: Revision) -> StatusCode {
    reply
        .error()
        .map_or(StatusCode::OK, |e| e.http_status(revision))
}

fn json_answer(status: StatusCode, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// The SSE answer of stream `stream_no`: a priming event where the revision has them, `first`
/// if already received, then what comes.
fn stream_answer(
    session: &Session,
    stream_no: u64,
    first: Option<StreamEvent>,
    rx: mpsc::UnboundedReceiver<StreamEvent>,
    modern: bool,
    mut gone: CancelOnDrop,
) -> Response {
    // 2026-07-28 has no resumption: no priming event.
    let priming = (!modern && session.protocol_version.primes_streams())
        .then(|| session.priming_event(stream_no));
    let events = stream::iter(priming.into_iter().chain(first))
        .chain(UnboundedReceiverStream::new(rx))
        .map(move |e| {
            if e.last {
                gone.disarm();
            }
            e
        });
    sse_response(events)
}

/// A 2026-07-28 host cancels a call by going away: it has no session on which to send
/// `notifications/cancelled`. Dropped while armed (the host closed the request before its
/// answer), this cancels the upstream calls that request made, as a 2025 host's
/// `notifications/cancelled` would. A 2025 host's disconnect is not a cancellation: it may
/// resume the stream.
struct CancelOnDrop(Option<Arc<Session>>);

impl CancelOnDrop {
    fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(session) = self.0.take() else {
            return;
        };
        for (conn, uid) in session.drain_inflight() {
            tracing::info!(upstream = %conn.upstream, "the client closed its request: call cancelled");
            conn.cancel(uid, "the client closed the request");
        }
    }
}

/// An SSE stream of JSON-RPC messages without event ids (2026-07-28 `subscriptions/listen`).
pub fn sse_of_messages(messages: impl Stream<Item = Value> + Send + 'static) -> Response {
    Sse::new(messages.map(|m| Ok::<_, Infallible>(Event::default().data(m.to_string()))))
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
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

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::sync::oneshot;

    fn session() -> Arc<Session> {
        Arc::new(Session::new("s".into(), Revision::V2025_11_25, json!({})))
    }

    fn content_type(r: &Response) -> &str {
        r.headers()[header::CONTENT_TYPE].to_str().unwrap()
    }

    #[tokio::test]
    async fn a_quick_answer_is_plain_json_and_leaves_no_stream_behind() {
        let s = session();
        let r = answer_in_place(
            s.clone(),
            json!(1),
            Box::pin(async { Reply::from(json!({"id": 1, "result": {}})) }),
            Revision::V2025_11_25,
        )
        .await;
        assert_eq!(content_type(&r), "application/json");
        // The stream was forgotten: a resume names nothing.
        assert!(s.attach(Some("1_0")).is_none());
    }

    /// A 2026-07-28 error answered in place carries the error's HTTP status.
    #[tokio::test]
    async fn a_quick_2026_error_keeps_its_status() {
        let missing = Reply::from(McpError::method_not_found("x/y").to_message(json!(1)));
        let expected = status_of(&missing, Revision::Stateless);
        assert_ne!(expected, StatusCode::OK);
        // The same error answers a 2025 request with 200.
        assert_eq!(status_of(&missing, Revision::V2025_11_25), StatusCode::OK);
        let r = answer_in_place(
            session(),
            json!(1),
            Box::pin(async move { missing }),
            Revision::Stateless,
        )
        .await;
        assert_eq!(content_type(&r), "application/json");
        assert_eq!(r.status(), expected);
    }

    #[tokio::test]
    async fn a_message_before_the_answer_makes_it_a_stream() {
        let s = session();
        let work_s = s.clone();
        let work = async move {
            work_s.send_related(
                Some(&json!(1)),
                &json!({"method": "notifications/progress"}),
            );
            Reply::from(json!({"id": 1, "result": {}}))
        };
        let r = answer_in_place(s, json!(1), Box::pin(work), Revision::V2025_11_25).await;
        assert!(content_type(&r).starts_with("text/event-stream"));
    }

    #[tokio::test]
    async fn work_whose_request_goes_away_finishes_in_a_task_of_its_own() {
        let (go, wait) = oneshot::channel::<()>();
        let (done, finished) = oneshot::channel::<()>();
        let work = async move {
            let _ = wait.await;
            let _ = done.send(());
            Reply::from(json!({"id": 1, "result": {}}))
        };
        let mut answer = Box::pin(answer_in_place(
            session(),
            json!(1),
            Box::pin(work),
            Revision::V2025_11_25,
        ));
        assert!(futures::poll!(&mut answer).is_pending(), "running in place");
        drop(answer);
        go.send(()).unwrap();
        tokio::time::timeout(Duration::from_secs(5), finished)
            .await
            .expect("the work went on after its request was dropped")
            .unwrap();
    }
}
