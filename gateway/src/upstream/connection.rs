//! One live connection to an upstream MCP server, independent of the transport: request ids
//! allocated by the gateway (so ids from many hosts never collide), pending calls, and the
//! bookkeeping that routes the upstream's own requests and notifications to the right host.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{mpsc, oneshot, watch};

use crate::protocol::answer::Passed;
use crate::protocol::method::{
    INITIALIZE, NOTIFY_CANCELLED, PROMPTS_GET, RESOURCES_READ, SUBSCRIPTIONS_LISTEN, TOOLS_CALL,
};
use crate::protocol::{jsonrpc, McpError};

/// A message to send upstream.
#[derive(Debug)]
pub struct Outbound {
    pub msg: Value,
}

/// A message received from upstream; `related` is the id of the gateway's request on whose
/// response stream it arrived (Streamable HTTP only).
#[derive(Debug)]
pub struct Inbound {
    pub msg: Value,
    pub related: Option<i64>,
}

/// The two ends a transport hands over, and what closes it.
pub struct TransportParts {
    pub tx: mpsc::UnboundedSender<Outbound>,
    pub rx: mpsc::UnboundedReceiver<Inbound>,
    /// Called once when the connection closes (kill the child, end the HTTP session).
    pub close: Box<dyn FnOnce() + Send>,
    /// A transport whose requests are independent of each other (Streamable HTTP: one POST
    /// each) sends an ordinary request from the caller's own task, without passing through `tx`
    /// and its writer task.
    pub direct: Option<Arc<dyn DirectSend>>,
}

/// Sending one request on its own (see [`TransportParts::direct`]): it resolves to the answer
/// when that came straight back, else `None` and the answer arrives on the transport's `rx`.
pub type DirectPost = Pin<Box<dyn Future<Output = Option<Answered>> + Send>>;

/// The answer to a request sent upstream: its response message, or, straight from the POST of
/// a written request, its result passed through as the upstream's text.
#[derive(Debug)]
pub enum Answered {
    Message(Value),
    Result(Passed),
}

impl Answered {
    /// The answer as a response message to request `id`.
    pub fn into_message(self, id: i64) -> Value {
        match self {
            Self::Message(m) => m,
            Self::Result(p) => match p.to_value() {
                Ok(r) => jsonrpc::result(Value::from(id), r),
                Err(e) => e.to_message(Value::from(id)),
            },
        }
    }
}

/// Sends one request on its own (see [`TransportParts::direct`]).
pub trait DirectSend: Send + Sync {
    fn send(&self, msg: Value) -> DirectPost;
    /// Sends request `id`, written whole by its sender; `routing` is what headers repeat of it.
    fn send_written(&self, id: i64, routing: Routing<'_>, body: Vec<u8>) -> DirectPost;
}

/// What a transport may repeat of a request outside its body (Streamable HTTP's headers).
#[derive(Debug, Default, PartialEq)]
pub struct Routing<'a> {
    pub method: &'a str,
    /// `_meta`'s protocol version (2026-07-28 only).
    pub version: Option<&'a str>,
    /// `name` or `uri`, for the methods that have one.
    pub name: Option<&'a str>,
    /// `_meta`'s W3C trace context.
    pub traceparent: Option<&'a str>,
    pub tracestate: Option<&'a str>,
}

impl Routing<'_> {
    /// The params member a `method` request names its target by, which a header repeats.
    pub fn name_member(method: &str) -> Option<&'static str> {
        match method {
            TOOLS_CALL | PROMPTS_GET => Some("name"),
            RESOURCES_READ => Some("uri"),
            _ => None,
        }
    }
}

/// Params that their sender writes as JSON where the request goes out, instead of handing over
/// a `Value` built for it (see `mcp::outgoing`).
pub trait WriteParams {
    /// Appends the params' JSON to `out`.
    fn write(&self, out: &mut Vec<u8>);
    /// The same params as a value, for a transport that takes one.
    fn build(&self) -> Value;
    /// What headers repeat of the written request.
    fn routing(&self) -> Routing<'_>;
}

/// How the answer to a sent request comes: through the connection's router, and for a request
/// sent directly, perhaps straight from its POST, which the waiter drives. Dropped before the
/// POST finished (nobody waits, or the waiter went away), the POST goes on in a task of its own.
pub struct Waiter {
    rx: oneshot::Receiver<Value>,
    post: Option<DirectPost>,
}

impl Waiter {
    /// The answer, or `None` when the connection closed first.
    async fn answer(&mut self) -> Option<Answered> {
        if let Some(post) = self.post.as_mut() {
            tokio::select! {
                biased;
                straight = post => {
                    self.post = None;
                    if straight.is_some() {
                        return straight;
                    }
                }
                routed = &mut self.rx => return routed.ok().map(Answered::Message),
            }
        }
        (&mut self.rx).await.ok().map(Answered::Message)
    }
}

impl Drop for Waiter {
    fn drop(&mut self) {
        if let (Some(post), Ok(rt)) = (self.post.take(), tokio::runtime::Handle::try_current()) {
            rt.spawn(post);
        }
    }
}

/// Requests that must go through the writer: the ones that set up or hold the session.
fn needs_writer(method: &str) -> bool {
    matches!(method, INITIALIZE | SUBSCRIPTIONS_LISTEN)
}

/// Where the upstream's requests and notifications go (implemented by the downstream hub).
pub trait InboundSink: Send + Sync {
    fn on_message(&self, conn: &Arc<Connection>, msg: Value, related: Option<i64>);
}

/// Which downstream call an upstream request was made for.
#[derive(Debug, Clone)]
pub struct CallCtx {
    pub session: String,
    /// The downstream request's id, to find the response stream it belongs to.
    pub downstream_id: Value,
}

/// Where an upstream's progress notification goes back to.
#[derive(Debug, Clone)]
pub struct ProgressRoute {
    pub session: String,
    /// The host's own progress token.
    pub token: Value,
    pub downstream_id: Value,
}

#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum CallError {
    #[error("upstream {0} closed the connection")]
    Closed(String),
    #[error("upstream {0} did not answer within {1:?}")]
    Timeout(String, Duration),
}

/// A live upstream connection.
pub struct Connection {
    pub upstream: String,
    /// The downstream session that owns this connection (`per_session` sharing).
    pub owner: Option<String>,
    tx: mpsc::UnboundedSender<Outbound>,
    direct: Option<Arc<dyn DirectSend>>,
    pending: Mutex<HashMap<i64, oneshot::Sender<Value>>>,
    next_id: AtomicI64,
    closed: watch::Sender<bool>,
    close: Mutex<Option<Box<dyn FnOnce() + Send>>>,
    /// The upstream's `initialize` result (for a 2026-07-28 upstream: its `server/discover`
    /// result, with `protocolVersion` added).
    pub init: OnceLock<Value>,
    /// Set for a 2026-07-28 upstream: the client capabilities declared on requests that do not
    /// carry a host's own.
    modern_caps: OnceLock<Value>,
    /// In-flight calls made on behalf of a downstream session, by upstream request id.
    pub calls: Mutex<HashMap<i64, CallCtx>>,
    /// The upstream's own requests waiting for a host's answer, by their id (as text), with
    /// the call each was made for: a call that waits on its host is not the one asking anew.
    asking: Mutex<HashMap<String, i64>>,
    /// Progress tokens the gateway gave upstream → (session, the host's own token).
    pub progress: Mutex<HashMap<String, ProgressRoute>>,
    /// Why the connection ended, when the gateway knows (health shows it).
    close_reason: Mutex<Option<String>>,
}

impl Connection {
    /// Wraps a transport and starts routing what it receives.
    pub fn start(
        upstream: &str,
        owner: Option<String>,
        parts: TransportParts,
        sink: Arc<dyn InboundSink>,
    ) -> Arc<Self> {
        let (closed, _) = watch::channel(false);
        let conn = Arc::new(Connection {
            upstream: upstream.to_string(),
            owner,
            tx: parts.tx,
            direct: parts.direct,
            pending: Mutex::default(),
            next_id: AtomicI64::new(1),
            closed,
            close: Mutex::new(Some(parts.close)),
            init: OnceLock::new(),
            modern_caps: OnceLock::new(),
            calls: Mutex::default(),
            asking: Mutex::default(),
            progress: Mutex::default(),
            close_reason: Mutex::default(),
        });
        let weak = Arc::downgrade(&conn);
        let mut rx = parts.rx;
        tokio::spawn(async move {
            while let Some(Inbound { msg, related }) = rx.recv().await {
                let Some(conn) = weak.upgrade() else { break };
                match jsonrpc::kind(&msg) {
                    jsonrpc::Kind::Response => {
                        let waiter = msg
                            .get("id")
                            .and_then(Value::as_i64)
                            .and_then(|id| conn.pending.lock().unwrap().remove(&id));
                        match waiter {
                            Some(w) => {
                                let _ = w.send(msg);
                            }
                            None => {
                                tracing::debug!(upstream = %conn.upstream, "response to no pending request")
                            }
                        }
                    }
                    jsonrpc::Kind::Request | jsonrpc::Kind::Notification => {
                        sink.on_message(&conn, msg, related)
                    }
                    jsonrpc::Kind::Invalid => {
                        tracing::warn!(upstream = %conn.upstream, "upstream sent an invalid message")
                    }
                }
            }
            if let Some(conn) = weak.upgrade() {
                conn.shutdown();
            }
        });
        conn
    }

    /// Speaks 2026-07-28 from now on: every request carries the `_meta` envelope.
    pub fn set_modern(&self, default_caps: Value) {
        let _ = self.modern_caps.set(default_caps);
    }

    pub fn is_modern(&self) -> bool {
        self.modern_caps.get().is_some()
    }

    /// Whether the upstream can lose a session of ours and refuse a call unprocessed (which the
    /// caller may replay): only a Streamable HTTP upstream that speaks 2025, where a session is
    /// the server's own; stdio and 2026-07-28 upstreams keep none.
    pub fn may_lose_session(&self) -> bool {
        self.direct.is_some() && !self.is_modern()
    }

    pub fn is_closed(&self) -> bool {
        *self.closed.borrow()
    }

    /// Resolves when the connection has closed.
    pub async fn closed(&self) {
        let mut rx = self.closed.subscribe();
        let _ = rx.wait_for(|c| *c).await;
    }

    /// Records why the connection is about to end (the first reason wins).
    pub fn set_close_reason(&self, why: String) {
        self.close_reason.lock().unwrap().get_or_insert(why);
    }

    pub fn close_reason(&self) -> Option<String> {
        self.close_reason.lock().unwrap().clone()
    }

    /// Closes the transport; pending calls fail with [`CallError::Closed`].
    pub fn shutdown(&self) {
        self.closed.send_replace(true);
        if let Some(close) = self.close.lock().unwrap().take() {
            close();
        }
        // Dropping the waiters wakes every pending call with an error.
        self.pending.lock().unwrap().clear();
        self.calls.lock().unwrap().clear();
    }

    /// Sends a request and waits for the response message (which may be an error response).
    pub async fn request(
        &self,
        method: &str,
        params: Option<Value>,
        ctx: Option<CallCtx>,
        timeout: Duration,
    ) -> Result<Value, CallError> {
        let (id, reply) = self.send_request(method, params, ctx)?;
        let answer = self.wait(id, reply, timeout).await?;
        Ok(answer.into_message(id))
    }

    /// Sends a request; returns its upstream id and how its response comes.
    pub fn send_request(
        &self,
        method: &str,
        params: Option<Value>,
        ctx: Option<CallCtx>,
    ) -> Result<(i64, Waiter), CallError> {
        let (id, rx) = self.expect_answer(ctx)?;
        let params = match self.modern_caps.get() {
            Some(caps) => Some(envelope(params, caps)),
            None => params,
        };
        let msg = jsonrpc::request(Value::from(id), method, params);
        if let Some(direct) = self.direct.as_ref().filter(|_| !needs_writer(method)) {
            let post = Some(direct.send(msg));
            return Ok((id, Waiter { rx, post }));
        }
        if self.tx.send(Outbound { msg }).is_err() {
            self.forget(id);
            return Err(CallError::Closed(self.upstream.clone()));
        }
        Ok((id, Waiter { rx, post: None }))
    }

    /// Sends a request whose params `params` writes: straight into the body of its POST where
    /// the transport sends requests on their own (no `Value` is built for it), else as
    /// [`send_request`](Self::send_request) does.
    pub fn send_written(
        &self,
        method: &str,
        params: &dyn WriteParams,
        ctx: Option<CallCtx>,
    ) -> Result<(i64, Waiter), CallError> {
        let routing = params.routing();
        // A request to a 2026-07-28 upstream must carry the envelope, which `send_request` adds
        // where it is missing: written params that do not set it go that way.
        let enveloped = !self.is_modern()
            || routing.version == Some(crate::protocol::Revision::Stateless.as_str());
        let direct = match self.direct.as_ref() {
            Some(d) if !needs_writer(method) && enveloped => d,
            _ => return self.send_request(method, Some(params.build()), ctx),
        };
        let (id, rx) = self.expect_answer(ctx)?;
        let mut body = Vec::with_capacity(256);
        body.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
        let _ = serde_json::to_writer(&mut body, &id);
        body.extend_from_slice(b",\"method\":");
        let _ = serde_json::to_writer(&mut body, method);
        body.extend_from_slice(b",\"params\":");
        params.write(&mut body);
        body.push(b'}');
        let post = Some(direct.send_written(id, routing, body));
        Ok((id, Waiter { rx, post }))
    }

    /// A new request id, with a waiter for its answer and the call it was made for; refused
    /// once the connection has closed.
    fn expect_answer(
        &self,
        ctx: Option<CallCtx>,
    ) -> Result<(i64, oneshot::Receiver<Value>), CallError> {
        if self.is_closed() {
            return Err(CallError::Closed(self.upstream.clone()));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().unwrap().insert(id, tx);
        if let Some(ctx) = ctx {
            self.calls.lock().unwrap().insert(id, ctx);
        }
        Ok((id, rx))
    }

    /// Waits for the response of a request sent with [`send_request`](Self::send_request); on
    /// timeout the upstream is told to cancel it.
    pub async fn wait(
        &self,
        id: i64,
        mut reply: Waiter,
        timeout: Duration,
    ) -> Result<Answered, CallError> {
        let out = match tokio::time::timeout(timeout, reply.answer()).await {
            Ok(Some(resp)) => Ok(resp),
            Ok(None) => Err(CallError::Closed(self.upstream.clone())),
            Err(_) => {
                self.cancel(id, "gateway timeout");
                Err(CallError::Timeout(self.upstream.clone(), timeout))
            }
        };
        self.forget(id);
        out
    }

    /// Tells the upstream to stop working on request `id`.
    pub fn cancel(&self, id: i64, reason: &str) {
        self.forget(id);
        self.notify(
            NOTIFY_CANCELLED,
            Some(serde_json::json!({ "requestId": id, "reason": reason })),
        );
    }

    fn forget(&self, id: i64) {
        self.pending.lock().unwrap().remove(&id);
        self.calls.lock().unwrap().remove(&id);
        self.asking.lock().unwrap().retain(|_, call| *call != id);
    }

    pub fn notify(&self, method: &str, params: Option<Value>) {
        let _ = self.tx.send(Outbound {
            msg: jsonrpc::notification(method, params),
        });
    }

    /// Sends a request whose answer nobody waits for (settings such as `logging/setLevel`).
    pub fn notify_request_free(&self, method: &str, params: Value) {
        if let Ok((id, _rx)) = self.send_request(method, Some(params), None) {
            // The receiver is dropped: the response is discarded when it arrives.
            self.pending.lock().unwrap().remove(&id);
        }
    }

    /// Sends a message as is (answers to the upstream's own requests).
    pub fn send_raw(&self, msg: Value) {
        // An answer to the upstream's request: the call it was made for asks no more.
        if msg.get("method").is_none() {
            if let Some(id) = msg.get("id") {
                self.asking.lock().unwrap().remove(&id.to_string());
            }
        }
        let _ = self.tx.send(Outbound { msg });
    }

    /// Notes that the upstream's request `upstream_id` was made for call `call` and waits for
    /// the host's answer.
    pub fn note_asking(&self, upstream_id: &Value, call: i64) {
        self.asking
            .lock()
            .unwrap()
            .insert(upstream_id.to_string(), call);
    }

    /// The upstream's declared capabilities.
    pub fn capabilities(&self) -> Value {
        self.init
            .get()
            .and_then(|i| i.get("capabilities"))
            .cloned()
            .unwrap_or(Value::Null)
    }

    /// Whom an upstream message belongs to: the call whose request `related` names, or else the
    /// one call in flight that is not waiting on its host (stdio and SSE give no association;
    /// a call that waits for its host's answer is not the one asking anew), or else the one
    /// session all those calls belong to.
    pub fn attribute(&self, related: Option<i64>) -> Option<Attribution> {
        let calls = self.calls.lock().unwrap();
        if let Some((id, ctx)) = related.and_then(|id| calls.get_key_value(&id)) {
            return Some(Attribution::Call(*id, ctx.clone()));
        }
        let asking = self.asking.lock().unwrap();
        let mut free = calls
            .iter()
            .filter(|(id, _)| !asking.values().any(|c| c == *id));
        let (id, first) = free.next()?;
        let mut one_session = true;
        let mut several = false;
        for (_, other) in free {
            several = true;
            one_session &= other.session == first.session;
        }
        match (several, one_session) {
            (false, _) => Some(Attribution::Call(*id, first.clone())),
            (true, true) => Some(Attribution::Session(first.session.clone())),
            (true, false) => None,
        }
    }

    /// Calls in flight and the sessions they belong to, for saying why a message could not be
    /// attributed.
    pub fn calls_in_flight(&self) -> (usize, usize) {
        let calls = self.calls.lock().unwrap();
        let sessions: std::collections::HashSet<&str> =
            calls.values().map(|c| c.session.as_str()).collect();
        (calls.len(), sessions.len())
    }
}

/// Whom an upstream request or notification belongs to.
pub enum Attribution {
    /// One call: its upstream request id and context.
    Call(i64, CallCtx),
    /// One session, but not which of its calls.
    Session(String),
}

/// Adds the 2026-07-28 `_meta` envelope to request params, keeping what the caller set.
pub fn envelope(params: Option<Value>, default_caps: &Value) -> Value {
    use crate::protocol::envelope::{CLIENT_CAPS, CLIENT_INFO, PROTOCOL_VERSION};
    let mut p = match params {
        Some(Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    };
    let meta = p
        .entry("_meta")
        .or_insert_with(|| Value::Object(Default::default()));
    if !meta.is_object() {
        *meta = Value::Object(Default::default());
    }
    let m = meta.as_object_mut().expect("object");
    // A host's call comes with the whole envelope already (the dispatcher's, per session).
    let stateless = crate::protocol::Revision::Stateless.as_str();
    if m.get(PROTOCOL_VERSION).and_then(Value::as_str) == Some(stateless)
        && m.contains_key(CLIENT_CAPS)
        && m.contains_key(CLIENT_INFO)
    {
        return Value::Object(p);
    }
    m.insert(PROTOCOL_VERSION.into(), Value::from(stateless));
    m.entry(CLIENT_CAPS).or_insert_with(|| default_caps.clone());
    m.entry(CLIENT_INFO).or_insert_with(client_info);
    Value::Object(p)
}

/// The gateway as the client of its upstreams (2026-07-28 `clientInfo`).
pub fn client_info() -> Value {
    serde_json::json!({ "name": "mcp-gateway", "version": env!("CARGO_PKG_VERSION") })
}

/// What a host hears of a call that failed on its way upstream.
impl From<CallError> for McpError {
    fn from(e: CallError) -> Self {
        match e {
            CallError::Closed(upstream) => Self::new(
                jsonrpc::UPSTREAM_UNAVAILABLE,
                format!("upstream {upstream} closed the connection before answering"),
            ),
            e @ CallError::Timeout(..) => Self::new(jsonrpc::UPSTREAM_TIMEOUT, e.to_string()),
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        if let Some(close) = self.close.get_mut().unwrap().take() {
            close();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    fn message(a: Option<Answered>) -> Option<Value> {
        match a? {
            Answered::Message(m) => Some(m),
            Answered::Result(p) => panic!("a passed result: {}", p.text()),
        }
    }

    #[tokio::test]
    async fn an_answer_straight_from_the_post_needs_no_router() {
        let (_tx, rx) = oneshot::channel();
        let post: DirectPost =
            Box::pin(async { Some(Answered::Message(serde_json::json!({"id": 1}))) });
        let mut reply = Waiter {
            rx,
            post: Some(post),
        };
        assert_eq!(
            message(reply.answer().await),
            Some(serde_json::json!({"id": 1}))
        );
    }

    #[tokio::test]
    async fn a_reply_nobody_waits_for_still_sends_its_post() {
        let sent = Arc::new(AtomicBool::new(false));
        let (tx, rx) = oneshot::channel::<Value>();
        let flag = sent.clone();
        let post: DirectPost = Box::pin(async move {
            tokio::task::yield_now().await;
            flag.store(true, Ordering::SeqCst);
            None
        });
        drop(Waiter {
            rx,
            post: Some(post),
        });
        drop(tx);
        for _ in 0..100 {
            if sent.load(Ordering::SeqCst) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the dropped reply's POST never ran");
    }

    #[tokio::test]
    async fn an_answer_through_the_router_wins_over_a_post_still_reading() {
        let (tx, rx) = oneshot::channel();
        let post: DirectPost = Box::pin(std::future::pending());
        let mut reply = Waiter {
            rx,
            post: Some(post),
        };
        tx.send(serde_json::json!({"id": 2})).unwrap();
        assert_eq!(
            message(reply.answer().await),
            Some(serde_json::json!({"id": 2}))
        );
    }
}
