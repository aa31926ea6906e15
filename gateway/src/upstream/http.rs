//! Streamable HTTP upstreams (MCP 2025-03-26 and later): each message is a POST whose answer is
//! JSON or an SSE stream; a GET stream carries what the server sends on its own. SSE is parsed
//! by the `sse-stream` crate; a POST stream that ends before its response is resumed with
//! `Last-Event-ID`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use reqwest::StatusCode;
use serde_json::Value;
use sse_stream::SseStream;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::connection::{
    Answered, DirectPost, DirectSend, Inbound, Outbound, Routing, TransportParts,
};
use super::oauth::Refusal;
use super::{limits, post, UpstreamError};
use crate::protocol::answer::Passed;
use crate::protocol::envelope::{
    encode_header, METHOD_HEADER, NAME_HEADER, PROTOCOL_VERSION, SESSION_HEADER, VERSION_HEADER,
};
use crate::protocol::method::{
    INITIALIZE, NOTIFY_INITIALIZED, NOTIFY_SUBSCRIPTIONS_ACKNOWLEDGED, SUBSCRIPTIONS_LISTEN,
};
use crate::protocol::{jsonrpc, Member};
use registry::backoff::Backoff;

/// Told to the connection's owner when the GET stream (re)opens: list again.
pub const LISTENING: &str = "$/gateway/listening";

/// How many times a dropped stream is resumed before the request counts as failed.
const MAX_RESUMES: usize = 5;
/// In an error's `data`: the upstream never processed the request (its session was gone), so
/// it may be sent again, once, on a new connection. The dispatcher removes it before a host
/// sees the error.
pub const REPLAYABLE: &str = "gatewayReplayable";
/// Marks the error of a call whose user must connect their account (again) first: the
/// upstream refused their token and it could not be renewed, or it asked for more scope.
pub const NEEDS_CONNECT: &str = "gatewayNeedsConnect";

struct Shared {
    /// As configured, for log lines (redacted there).
    url: String,
    /// Sends the POSTs; its client and parsed URL serve the other requests.
    poster: post::Poster,
    headers: HeaderMap,
    /// The gateway's own OAuth token for the upstream, current at each request.
    auth: Option<Arc<super::oauth::TokenSource>>,
    session: Mutex<Option<String>>,
    version: Mutex<Option<String>>,
    inbound: mpsc::UnboundedSender<Inbound>,
    /// The largest answer or SSE event read.
    max_message: usize,
}

/// What headers repeat of `msg` (see [`Routing`]).
fn routing_of(msg: &Value) -> Routing<'_> {
    let params = msg.member("params");
    let meta = params.and_then(|p| p.member("_meta"));
    let text = |k: &str| meta.and_then(|m| m.member(k)).and_then(Value::as_str);
    let method = jsonrpc::method(msg).unwrap_or_default();
    let name = Routing::name_member(method).and_then(|k| params?.member(k));
    Routing {
        method,
        version: text(PROTOCOL_VERSION),
        name: name.and_then(Value::as_str),
        traceparent: text("traceparent"),
        tracestate: text("tracestate"),
    }
}

/// A request's own headers, made once per request (a second try reuses them).
struct Head {
    /// 2026-07-28: the version, method and name headers; `None` for a 2025 request.
    modern: Option<[(HeaderName, Option<HeaderValue>); 3]>,
    trace: [Option<HeaderValue>; 2],
}

impl Head {
    /// Known versions and methods are static values: no copy per request.
    fn of(r: &Routing) -> Head {
        let modern = || {
            let version = match crate::protocol::Revision::parse(r.version?) {
                Some(v) => HeaderValue::from_static(v.as_str()),
                None => HeaderValue::from_str(r.version?).ok()?,
            };
            let method = match crate::protocol::method::known(r.method) {
                Some(m) => HeaderValue::from_static(m),
                None => HeaderValue::from_str(r.method).ok()?,
            };
            let name = match r.name {
                Some(n) => Some(HeaderValue::from_str(&encode_header(n)).ok()?),
                None => None,
            };
            Some([
                (VERSION_NAME, Some(version)),
                (METHOD_NAME, Some(method)),
                (NAME_NAME, name),
            ])
        };
        let trace = |v: Option<&str>| v.and_then(|v| HeaderValue::from_str(v).ok());
        Head {
            modern: modern(),
            trace: [trace(r.traceparent), trace(r.tracestate)],
        }
    }
}

/// Header names checked once, at compile time: `HeaderName::from_static` validates its text
/// on every call when called at run time (five times per call here, about 550 instructions),
/// and inserting by `&str` copies a name that is not a standard one.
const VERSION_NAME: HeaderName = HeaderName::from_static(VERSION_HEADER);
const METHOD_NAME: HeaderName = HeaderName::from_static(METHOD_HEADER);
const NAME_NAME: HeaderName = HeaderName::from_static(NAME_HEADER);
const SESSION_NAME: HeaderName = HeaderName::from_static(SESSION_HEADER);
const TRACE_CONTEXT: [HeaderName; 2] = [
    HeaderName::from_static("traceparent"),
    HeaderName::from_static("tracestate"),
];

impl Shared {
    /// A POST's headers: a 2026-07-28 one gets its routing headers and no session.
    fn headers_for(&self, head: &Head) -> HeaderMap {
        let mut h = match &head.modern {
            Some(routing) => {
                let mut h = self.base_headers("POST");
                for (k, v) in routing {
                    if let Some(v) = v {
                        h.insert(k.clone(), v.clone());
                    }
                }
                h
            }
            None => self.request_headers("POST"),
        };
        // A traced call's context, which the gateway wrote into `_meta`, as the W3C header too.
        for (k, v) in TRACE_CONTEXT.iter().zip(&head.trace) {
            if let Some(v) = v {
                h.insert(k.clone(), v.clone());
            }
        }
        h
    }

    /// The headers of every request with method `htm` (a DPoP proof names it).
    fn base_headers(&self, htm: &str) -> HeaderMap {
        // Room for what every request adds (routing or session headers, Accept, Content-Type,
        // trace context, a DPoP proof), so that the map never grows on the way.
        let mut h = HeaderMap::with_capacity(self.headers.len() + 9);
        h.extend(self.headers.iter().map(|(k, v)| (k.clone(), v.clone())));
        if let Some(auth) = &self.auth {
            auth.authorize(&mut h, htm, self.poster.url().as_str());
        }
        h
    }

    fn request_headers(&self, htm: &str) -> HeaderMap {
        let mut h = self.base_headers(htm);
        if let Some(s) = self.session.lock().unwrap().as_deref() {
            if let Ok(v) = HeaderValue::from_str(s) {
                h.insert(SESSION_NAME, v);
            }
        }
        if let Some(v) = self.version.lock().unwrap().as_deref() {
            if let Ok(v) = HeaderValue::from_str(v) {
                h.insert(VERSION_NAME, v);
            }
        }
        h
    }

    fn deliver(&self, msg: Value, related: Option<i64>) {
        let _ = self.inbound.send(Inbound { msg, related });
    }

    /// The upstream no longer knows our session (it restarted, or expired it): the request was
    /// not processed, so the caller may replay it once on a new connection; this connection is
    /// over and the supervisor re-initialises.
    fn session_lost(&self, id: Option<i64>, why: String) {
        tracing::warn!(url = %crate::config::redact_userinfo(&self.url), %why, "upstream session lost");
        if let Some(id) = id {
            self.deliver(
                crate::protocol::McpError::new(
                    jsonrpc::UPSTREAM_UNAVAILABLE,
                    format!("upstream session lost: {why}"),
                )
                .with_data(serde_json::json!({ REPLAYABLE: true }))
                .to_message(Value::from(id)),
                Some(id),
            );
        }
        let _ = self.inbound.send(Inbound {
            msg: jsonrpc::notification(
                "$/gateway/session-expired",
                Some(serde_json::json!({ "reason": why })),
            ),
            related: None,
        });
    }

    /// An error response for request `id`, so the waiting call fails with a clear message.
    fn fail(&self, id: Option<i64>, message: String) {
        match id {
            Some(id) => self.deliver(
                jsonrpc::error(Value::from(id), jsonrpc::UPSTREAM_UNAVAILABLE, message),
                Some(id),
            ),
            None => {
                tracing::warn!(url = %crate::config::redact_userinfo(&self.url), %message, "upstream notification failed")
            }
        }
    }
}

pub fn connect(
    client: reqwest::Client,
    plain: &post::PlainClient,
    url: &str,
    headers: HeaderMap,
    auth: Option<Arc<super::oauth::TokenSource>>,
    max_message: usize,
) -> Result<TransportParts, UpstreamError> {
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Outbound>();
    let (in_tx, in_rx) = mpsc::unbounded_channel::<Inbound>();
    let endpoint = reqwest::Url::parse(url)
        .map_err(|e| UpstreamError::Config(format!("upstream url: {e}")))?;
    let shared = Arc::new(Shared {
        poster: post::Poster::new(client, plain, endpoint),
        url: url.to_string(),
        headers,
        auth,
        session: Mutex::default(),
        version: Mutex::default(),
        inbound: in_tx,
        max_message,
    });
    let writer_shared = shared.clone();
    let writer = tokio::spawn(async move {
        let mut tasks = JoinSet::new();
        while let Some(Outbound { msg }) = out_rx.recv().await {
            let s = writer_shared.clone();
            let is_init = jsonrpc::method(&msg) == Some(INITIALIZE);
            let starts_listening = jsonrpc::method(&msg) == Some(NOTIFY_INITIALIZED);
            if jsonrpc::method(&msg) == Some(SUBSCRIPTIONS_LISTEN) {
                let s = writer_shared.clone();
                tasks.spawn(async move { subscribe(&s, msg).await });
                continue;
            }
            if is_init {
                // The session id comes with the initialize response: nothing else may go out
                // before it is known.
                post_delivering(&s, msg).await;
            } else {
                tasks.spawn(async move { post_delivering(&s, msg).await });
            }
            if starts_listening {
                let s = writer_shared.clone();
                tasks.spawn(async move { listen(&s).await });
            }
            while tasks.try_join_next().is_some() {}
        }
        tasks.shutdown().await;
    });
    let closer = shared.clone();
    let close = Box::new(move || {
        writer.abort();
        // End the upstream session politely; it is fine if this never arrives.
        let session = closer.session.lock().unwrap().clone();
        if let (Some(_), Ok(rt)) = (session, tokio::runtime::Handle::try_current()) {
            let req = closer
                .poster
                .client()
                .delete(closer.poster.url().clone())
                .headers(closer.request_headers("DELETE"))
                .timeout(Duration::from_secs(2));
            rt.spawn(async move {
                let _ = req.send().await;
            });
        }
    });
    Ok(TransportParts {
        tx: out_tx,
        rx: in_rx,
        close,
        direct: Some(Arc::new(Direct(shared))),
    })
}

/// One POST per request, driven by the caller: nothing orders ordinary requests.
struct Direct(Arc<Shared>);

impl DirectSend for Direct {
    fn send(&self, msg: Value) -> DirectPost {
        let s = self.0.clone();
        Box::pin(async move { post_message(&s, msg).await.map(Answered::Message) })
    }

    fn send_written(&self, id: i64, routing: Routing<'_>, body: Vec<u8>) -> DirectPost {
        let s = self.0.clone();
        let head = Head::of(&routing);
        let post = Post {
            id: Some(id),
            is_init: false,
            pass: true,
        };
        Box::pin(async move { post_body(&s, post, &head, body).await })
    }
}

/// Posts one message. The response to it comes back as the result when it is the POST's own
/// answer and nothing else came before it (the caller takes it without a hop through the
/// connection's router); everything else, errors included, is delivered on `inbound`.
async fn post_message(s: &Shared, msg: Value) -> Option<Value> {
    let id = if jsonrpc::kind(&msg) == jsonrpc::Kind::Request {
        msg.member("id").and_then(Value::as_i64)
    } else {
        None
    };
    let is_init = jsonrpc::method(&msg) == Some(INITIALIZE);
    let head = Head::of(&routing_of(&msg));
    let body = serde_json::to_vec(&msg).unwrap_or_default();
    drop(msg);
    let post = Post {
        id,
        is_init,
        pass: false,
    };
    match post_body(s, post, &head, body).await? {
        Answered::Message(m) => Some(m),
        // Not asked for (`pass: false`); as a message all the same.
        passed => id.map(|id| passed.into_message(id)),
    }
}

/// What a POST carries: request `id` (`None`: a notification or an answer), perhaps the
/// `initialize` request; `pass`: its result may come back passed (see [`Passed`]).
#[derive(Clone, Copy)]
struct Post {
    id: Option<i64>,
    is_init: bool,
    pass: bool,
}

/// Posts one message, written. An upstream behind an authorization server that refuses the
/// token gets the message once more with a renewed one.
async fn post_body(s: &Shared, post: Post, head: &Head, body: Vec<u8>) -> Option<Answered> {
    post_attempt(s, post, head, body, s.auth.is_some()).await
}

async fn post_attempt(
    s: &Shared,
    post: Post,
    head: &Head,
    body: Vec<u8>,
    may_renew: bool,
) -> Option<Answered> {
    let Post { id, is_init, pass } = post;
    // Kept for the one repeat with a renewed token (only upstreams with a token have one).
    let again = may_renew.then(|| body.clone());
    let headers = || {
        let mut h = s.headers_for(head);
        h.insert(
            ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        h
    };
    let resp = s.poster.post_json(headers, body).await;
    // A session that worked and now fails to be used: the upstream restarted or forgot it.
    let had_session = !is_init && s.session.lock().unwrap().is_some();
    let resp = match resp {
        Ok(r) => r,
        Err(e) if had_session && e.connect => {
            s.session_lost(id, format!("upstream unreachable: {e}"));
            return None;
        }
        Err(e) => {
            s.fail(id, format!("upstream unreachable: {e}"));
            return None;
        }
    };
    let status = resp.status();
    if !status.is_success() {
        if let (Some(auth), Some(body)) = (&s.auth, again) {
            if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
                let challenge = resp
                    .headers()
                    .get(reqwest::header::WWW_AUTHENTICATE)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_string();
                let forbidden = status == StatusCode::FORBIDDEN;
                // Boxed: renewing a token is rare, and its future (a token request) is large;
                // inline it would grow every POST's state, which is moved on each spawn.
                let nonce = resp
                    .headers()
                    .get("dpop-nonce")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string);
                match Box::pin(auth.refused(forbidden, &challenge, nonce.as_deref())).await {
                    Refusal::Renewed => {
                        return Box::pin(post_attempt(s, post, head, body, false)).await
                    }
                    Refusal::NeedsConnect(why) => {
                        if let Some(id) = id {
                            let e =
                                crate::protocol::McpError::new(jsonrpc::UPSTREAM_UNAVAILABLE, why)
                                    .with_data(serde_json::json!({ NEEDS_CONNECT: true }));
                            s.deliver(e.to_message(Value::from(id)), Some(id));
                        }
                        return None;
                    }
                    Refusal::Failed(why) => {
                        s.fail(id, why);
                        return None;
                    }
                    Refusal::NotAboutTheToken => {}
                }
            }
        }
        refused(s, id, had_session, resp).await;
        return None;
    }
    if is_init {
        if let Some(sid) = resp
            .headers()
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
        {
            *s.session.lock().unwrap() = Some(sid.to_string());
        }
    }
    if status == StatusCode::ACCEPTED || id.is_none() {
        return None;
    }
    let ctype = resp
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    if ctype.starts_with("text/event-stream") {
        answer_of_stream(s, resp, id, pass).await
    } else {
        answer_of_json(s, resp, id, pass, is_init).await
    }
}

/// An upstream's refusal of a POST: a lost session, a JSON-RPC error that is the answer itself
/// (2026-07-28 gives errors statuses), or a failure of the call.
async fn refused(s: &Shared, id: Option<i64>, had_session: bool, resp: post::Response) {
    let status = resp.status();
    let body = post::read_body(resp, s.max_message.min(1 << 20))
        .await
        .unwrap_or_default();
    // The spec asks for 404; real servers (server-everything, the TypeScript SDK's
    // examples) answer 400 "No valid session ID provided".
    let names_session = String::from_utf8_lossy(&body)
        .to_ascii_lowercase()
        .contains("session");
    if had_session
        && (status == StatusCode::NOT_FOUND || (status == StatusCode::BAD_REQUEST && names_session))
    {
        s.session_lost(id, format!("it answered HTTP {status} to our session"));
        return;
    }
    if let Ok(m) = serde_json::from_slice::<Value>(&body) {
        if id.is_some() && m.get("id").and_then(Value::as_i64) == id && m.get("error").is_some() {
            s.deliver(m, id);
            return;
        }
    }
    s.fail(id, format!("upstream answered HTTP {status}"));
}

/// The answer of a POST that came as an SSE stream, resumed (bounded) when the stream ends
/// before it.
async fn answer_of_stream(
    s: &Shared,
    resp: post::Response,
    id: Option<i64>,
    pass: bool,
) -> Option<Answered> {
    let mut read = Read {
        id,
        pass,
        answered: false,
        last_event: None,
        answer: None,
        delivered: false,
    };
    read_stream(s, resp, &mut read).await;
    let mut resumes = 0;
    while !read.answered && read.last_event.is_some() && resumes < MAX_RESUMES {
        resumes += 1;
        let r = s
            .poster
            .client()
            .get(s.poster.url().clone())
            .headers(s.request_headers("GET"))
            .header(ACCEPT, "text/event-stream")
            .header("last-event-id", read.last_event.clone().unwrap_or_default())
            .send()
            .await;
        match r {
            Ok(r) if r.status().is_success() => {
                read_stream(s, post::from_reqwest(r), &mut read).await
            }
            _ => break,
        }
    }
    if !read.answered {
        s.fail(
            id,
            "upstream closed the response stream before answering".into(),
        );
    }
    read.answer
}

/// The answer of a POST that came as plain JSON: a call's result passed through as written, or
/// the message (or batch) delivered.
async fn answer_of_json(
    s: &Shared,
    resp: post::Response,
    id: Option<i64>,
    pass: bool,
    is_init: bool,
) -> Option<Answered> {
    let body = match post::read_body(resp, s.max_message).await {
        Ok(b) => b,
        Err(e) => {
            s.fail(id, e);
            return None;
        }
    };
    // The whole answer of a call, its result passed to the host as the upstream wrote it.
    if let Some(p) = id
        .filter(|_| pass)
        .and_then(|id| Passed::from_response(&body, id))
    {
        return Some(Answered::Result(p));
    }
    match serde_json::from_slice::<Value>(&body) {
        Ok(Value::Array(msgs)) => msgs.into_iter().for_each(|m| s.deliver(m, id)),
        Ok(m) => {
            if is_init {
                remember_version(s, &m);
            }
            if is_answer_to(&m, id) {
                return Some(Answered::Message(m));
            }
            s.deliver(m, id)
        }
        Err(_) => s.fail(id, "upstream sent a response that is not JSON".into()),
    }
    None
}

/// Posts for a sender that does not wait for the answer itself (the writer task): the answer
/// goes on `inbound` like everything else.
async fn post_delivering(s: &Shared, msg: Value) {
    let id = msg.get("id").and_then(Value::as_i64);
    if let Some(answer) = post_message(s, msg).await {
        s.deliver(answer, id);
    }
}

/// Whether `msg` is the response to our request `id`.
fn is_answer_to(msg: &Value, id: Option<i64>) -> bool {
    id.is_some()
        && jsonrpc::kind(msg) == jsonrpc::Kind::Response
        && msg.member("id").and_then(Value::as_i64) == id
}

/// Where a POST's response stream (and its resumptions) stands.
struct Read {
    id: Option<i64>,
    /// The answer's result may be passed (see [`Post`]).
    pass: bool,
    answered: bool,
    last_event: Option<String>,
    /// The answer, when it came before anything else (see [`post`]).
    answer: Option<Answered>,
    /// Whether anything was delivered on `inbound` yet: after that, the answer goes the same
    /// way, so that it never overtakes the messages that came before it.
    delivered: bool,
}

fn remember_version(s: &Shared, init_response: &Value) {
    if let Some(v) = init_response
        .pointer("/result/protocolVersion")
        .and_then(Value::as_str)
    {
        *s.version.lock().unwrap() = Some(v.to_string());
    }
}

/// Reads an SSE response; marks `answered` when the response to `id` went by.
async fn read_stream(s: &Shared, resp: post::Response, r: &mut Read) {
    let over = Arc::new(AtomicBool::new(false));
    let bytes = limits::limit_events(post::bytes_stream(resp), s.max_message, over.clone());
    let mut events = SseStream::from_bytes_stream(bytes);
    while let Some(Ok(ev)) = events.next().await {
        if let Some(eid) = ev.id {
            r.last_event = Some(eid);
        }
        let Some(data) = ev.data.filter(|d| !d.trim().is_empty()) else {
            continue;
        };
        if let Some(p) =
            r.id.filter(|_| r.pass && !r.delivered)
                .and_then(|id| Passed::from_response(data.as_bytes(), id))
        {
            r.answered = true;
            r.answer = Some(Answered::Result(p));
            return;
        }
        let Ok(msg) = serde_json::from_str::<Value>(&data) else {
            tracing::warn!(url = %crate::config::redact_userinfo(&s.url), "non-JSON SSE event ignored");
            continue;
        };
        if is_answer_to(&msg, r.id) {
            if msg.pointer("/result/protocolVersion").is_some() {
                remember_version(s, &msg);
            }
            r.answered = true;
            if !r.delivered {
                r.answer = Some(Answered::Message(msg));
                return;
            }
        }
        s.deliver(msg, r.id);
        r.delivered = true;
        if r.answered {
            return;
        }
    }
    if over.load(Ordering::Relaxed) {
        // Resuming would only send the same event again.
        r.answered = true;
        s.fail(r.id, limits::too_large(s.max_message));
    }
}

/// The GET stream for messages the server sends on its own; resumed when it drops (with the
/// gateway's backoff, without end), given up when the server offers none (405). Each time it
/// opens, the catalog is listed again: a `list_changed` sent while it was closed was lost.
async fn listen(s: &Shared) {
    let mut last_event: Option<String> = None;
    let mut backoff = Backoff::new(Duration::from_millis(250), Duration::from_secs(30));
    loop {
        let mut req = s
            .poster
            .client()
            .get(s.poster.url().clone())
            .headers(s.request_headers("GET"))
            .header(ACCEPT, "text/event-stream");
        if let Some(id) = &last_event {
            req = req.header("last-event-id", id.clone());
        }
        match req.send().await {
            Ok(r) if r.status().is_success() => {
                backoff.reset();
                s.deliver(jsonrpc::notification(LISTENING, None), None);
                let over = Arc::new(AtomicBool::new(false));
                let bytes = limits::limit_events(r.bytes_stream(), s.max_message, over.clone());
                let mut events = SseStream::from_bytes_stream(bytes);
                while let Some(Ok(ev)) = events.next().await {
                    if let Some(eid) = ev.id {
                        last_event = Some(eid);
                    }
                    if let Some(Ok(msg)) = ev.data.map(|d| serde_json::from_str::<Value>(&d)) {
                        s.deliver(msg, None);
                    }
                }
                if over.load(Ordering::Relaxed) {
                    tracing::warn!(url = %crate::config::redact_userinfo(&s.url), "oversized event on the GET stream; reopened without it");
                    last_event = None;
                }
            }
            Ok(r) if r.status() == StatusCode::METHOD_NOT_ALLOWED => return,
            Ok(r) if r.status() == StatusCode::NOT_FOUND => {
                if s.session.lock().unwrap().is_some() {
                    s.session_lost(None, "its GET stream answered HTTP 404".into());
                }
                return;
            }
            _ => {}
        }
        tokio::time::sleep(backoff.next_delay()).await;
    }
}

/// A 2026-07-28 `subscriptions/listen` stream: what the upstream announces (list changes) comes
/// in here; reopened when it drops, given up when the upstream refuses it.
async fn subscribe(s: &Shared, msg: Value) {
    let mut backoff = Backoff::new(Duration::from_millis(250), Duration::from_secs(30));
    loop {
        let r = s
            .poster
            .client()
            .post(s.poster.url().clone())
            .headers(s.headers_for(&Head::of(&routing_of(&msg))))
            .header(ACCEPT, "text/event-stream, application/json")
            .json(&msg)
            .send()
            .await;
        match r {
            Ok(r) if r.status().is_success() => {
                backoff.reset();
                let over = Arc::new(AtomicBool::new(false));
                let bytes = limits::limit_events(r.bytes_stream(), s.max_message, over);
                let mut events = SseStream::from_bytes_stream(bytes);
                while let Some(Ok(ev)) = events.next().await {
                    let Some(Ok(m)) = ev.data.map(|d| serde_json::from_str::<Value>(&d)) else {
                        continue;
                    };
                    if jsonrpc::kind(&m) == jsonrpc::Kind::Notification
                        && jsonrpc::method(&m) != Some(NOTIFY_SUBSCRIPTIONS_ACKNOWLEDGED)
                    {
                        s.deliver(m, None);
                    }
                }
            }
            Ok(r) if r.status().is_client_error() => {
                tracing::info!(url = %crate::config::redact_userinfo(&s.url), status = %r.status(), "upstream offers no subscriptions/listen");
                return;
            }
            _ => {}
        }
        tokio::time::sleep(backoff.next_delay()).await;
    }
}

/// Turns resolved header values into a header map; the message names the bad header.
pub fn header_map(pairs: &[(String, String)]) -> Result<HeaderMap, UpstreamError> {
    let mut h = HeaderMap::new();
    for (k, v) in pairs {
        let name = HeaderName::from_bytes(k.as_bytes())
            .map_err(|_| UpstreamError::Config(format!("invalid header name {k:?}")))?;
        let value = HeaderValue::from_str(v)
            .map_err(|_| UpstreamError::Config(format!("invalid value for header {k:?}")))?;
        h.insert(name, value);
    }
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn routing(msg: Value) -> Option<Vec<(String, Option<String>)>> {
        Head::of(&routing_of(&msg)).modern.map(|hs| {
            hs.into_iter()
                .map(|(k, v)| (k.to_string(), v.map(|v| v.to_str().unwrap().to_string())))
                .collect()
        })
    }

    #[test]
    fn a_2026_message_names_version_method_and_target() {
        let meta = json!({ PROTOCOL_VERSION: "2026-07-28" });
        assert_eq!(
            routing(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "get_café", "_meta": meta}})),
            Some(vec![
                (VERSION_HEADER.into(), Some("2026-07-28".into())),
                (METHOD_HEADER.into(), Some("tools/call".into())),
                (NAME_HEADER.into(), Some(encode_header("get_café"))),
            ])
        );
        assert_eq!(
            routing(json!({"jsonrpc": "2.0", "id": 2, "method": "x/unknown",
                "params": {"_meta": {PROTOCOL_VERSION: "2027-01-01"}}})),
            Some(vec![
                (VERSION_HEADER.into(), Some("2027-01-01".into())),
                (METHOD_HEADER.into(), Some("x/unknown".into())),
                (NAME_HEADER.into(), None),
            ])
        );
        assert_eq!(
            routing(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})),
            None,
            "a 2025 message has no envelope"
        );
    }
}
