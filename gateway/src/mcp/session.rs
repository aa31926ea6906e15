//! Downstream sessions (2025 revisions): what the host negotiated, and its SSE streams with the
//! buffers that let a host resume a dropped stream with `Last-Event-ID`.
//!
//! Stream 0 is the session's GET stream; each POST answered with SSE gets its own number. Event
//! ids are `{stream}_{seq}`, so a resume names both the stream and the position in it.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Serialize;
use serde_json::{Map, Value};
use tokio::sync::mpsc;

use crate::auth::Principal;
use crate::protocol::{Reply, Revision};
use crate::upstream::Connection;

/// Events kept per stream for resumption.
const BUFFER_EVENTS: usize = 512;

/// Whether a serialised message is a `notifications/*/list_changed` without params.
fn is_list_changed(data: &str) -> bool {
    data.len() < 96 && data.contains("/list_changed\"") && !data.contains("\"params\"")
}
/// Finished POST streams kept for resumption.
const KEEP_FINISHED_STREAMS: usize = 32;

/// The syslog severities MCP's `logging/setLevel` takes (RFC 5424), lowest first.
pub const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// One SSE event: its id and JSON text.
#[derive(Debug, Clone)]
pub struct StreamEvent {
    pub id: String,
    pub data: Arc<str>,
    /// The final response of a POST stream.
    pub last: bool,
}

#[derive(Default)]
struct StreamBuf {
    events: VecDeque<(u64, Arc<str>)>,
    next_seq: u64,
    live: Option<mpsc::UnboundedSender<StreamEvent>>,
    done: bool,
}

#[derive(Default)]
struct Streams {
    next: u64,
    bufs: HashMap<u64, StreamBuf>,
    by_request: HashMap<IdKey, u64>,
    finished: VecDeque<u64>,
}

/// A request an upstream made of the host during a 2026-07-28 host's call: the host answers it
/// in the `inputResponses` of its retry.
pub struct Ask {
    pub conn: Arc<Connection>,
    /// The upstream's id for its request.
    pub upstream_id: Value,
    /// `{method, params}` as the host will see it in `inputRequests`.
    pub request: Value,
}

/// Who waits for the host's answer to a request the gateway sent it.
pub enum PendingClient {
    /// An upstream's own request, relayed: the answer goes back to it under its id.
    Upstream(Arc<Connection>, Value),
    /// The gateway's own request (a 2026-07-28 upstream's input request, bridged).
    Gateway(tokio::sync::oneshot::Sender<Value>),
}

/// A host's session, or (2026-07-28) the context of one stateless request.
pub struct Session {
    pub id: String,
    pub protocol_version: Revision,
    pub client_caps: Value,
    log_level: Mutex<Option<String>>,
    /// The `_meta` envelope its requests to 2026-07-28 upstreams carry, built at the first such
    /// request and again after the log level changes (see [`Session::envelope`]).
    envelope: Mutex<Option<Arc<Map<String, Value>>>>,
    /// A 2026-07-28 request: no session, no stream of its own beyond the POST, input requests
    /// go back in the result.
    pub modern: bool,
    /// The key of this host's per-session upstream connections.
    pub conn_key: String,
    /// The key of the principal that opened the session: no one else may use it.
    pub owner: String,
    /// The virtual server the session belongs to (`/mcp/v/{name}`); none for `/mcp`.
    pub scope: Option<String>,
    /// Tools its searches found, and its latest search.
    pub routing: crate::routing::feedback::SessionRouting,
    /// Who calls now (re-authenticated on every request: roles may have changed).
    principal: std::sync::RwLock<Arc<Principal>>,
    /// Where an upstream's requests go for a 2026-07-28 request (see [`Ask`]).
    pub asks: Option<mpsc::UnboundedSender<Ask>>,
    streams: Mutex<Streams>,
    /// Requests the gateway sent to the host, by the host-side id.
    pending_client: Mutex<HashMap<IdKey, PendingClient>>,
    /// The host's requests in flight upstream: host id → (connection, upstream id).
    inflight: Mutex<HashMap<IdKey, (Arc<Connection>, i64)>>,
    /// Exposed resource URIs the host subscribed to.
    subscriptions: Mutex<HashSet<String>>,
    next_id: AtomicU64,
    last_seen: Mutex<Instant>,
    /// How the audit log and traces name this session, worked out at its first call.
    reference: std::sync::OnceLock<String>,
}

/// Key of a JSON-RPC id in maps. Ids are strings or integers, and `1` and `"1"` are different
/// ids. An integer is kept as it is: formatting the id as JSON text (four times per call) had
/// cost about 1,100 instructions per call (callgrind, docs/benchmarks.md).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum IdKey {
    Int(i128),
    Text(String),
    /// Any other value (not a valid id, but kept apart from the rest): its JSON text.
    Other(String),
}

impl IdKey {
    /// The id it is the key of.
    pub fn to_value(&self) -> Value {
        match self {
            Self::Int(i) => i64::try_from(*i)
                .map(Value::from)
                .or_else(|_| u64::try_from(*i).map(Value::from))
                .unwrap_or(Value::Null),
            Self::Text(s) => Value::from(s.as_str()),
            Self::Other(text) => serde_json::from_str(text).unwrap_or(Value::Null),
        }
    }
}

pub fn id_key(id: &Value) -> IdKey {
    match id {
        Value::String(s) => IdKey::Text(s.clone()),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => IdKey::Int(i.into()),
            (_, Some(u)) => IdKey::Int(u.into()),
            _ => IdKey::Other(id.to_string()),
        },
        other => IdKey::Other(other.to_string()),
    }
}

impl Session {
    pub fn new(id: String, protocol_version: Revision, client_caps: Value) -> Self {
        Self::owned(
            id,
            protocol_version,
            client_caps,
            Arc::new(Principal::anonymous()),
        )
    }

    /// A session that belongs to `principal`.
    pub fn owned(
        id: String,
        protocol_version: Revision,
        client_caps: Value,
        principal: Arc<Principal>,
    ) -> Self {
        Self {
            owner: principal.key().to_string(),
            principal: std::sync::RwLock::new(principal),
            conn_key: id.clone(),
            id,
            protocol_version,
            client_caps,
            log_level: Mutex::default(),
            envelope: Mutex::default(),
            modern: false,
            asks: None,
            streams: Mutex::new(Streams {
                next: 1,
                ..Default::default()
            }),
            pending_client: Mutex::default(),
            inflight: Mutex::default(),
            subscriptions: Mutex::default(),
            scope: None,
            routing: Default::default(),
            next_id: AtomicU64::new(1),
            last_seen: Mutex::new(Instant::now()),
            reference: std::sync::OnceLock::new(),
        }
    }

    /// The context of one 2026-07-28 request: its capabilities and log level come with it; the
    /// returned receiver gets what upstreams ask of the host meanwhile.
    pub fn stateless(
        id: String,
        client_caps: Value,
        log_level: Option<String>,
        conn_key: String,
        principal: Arc<Principal>,
    ) -> (Self, mpsc::UnboundedReceiver<Ask>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut s = Self::owned(id, Revision::Stateless, client_caps, principal);
        s.modern = true;
        s.conn_key = conn_key;
        s.asks = Some(tx);
        *s.log_level.get_mut().unwrap() = log_level;
        (s, rx)
    }

    /// The first 16 hex digits of the id's hash, worked out once: how logs, traces and the
    /// audit log name a 2025 session (its id is a credential), and how an end announced by the
    /// hash finds it.
    pub fn hash_prefix(&self) -> &str {
        self.reference
            .get_or_init(|| super::session_id::id_hash(&self.id)[..16].to_string())
    }

    /// The same session on a virtual server's endpoint.
    pub fn scoped(mut self, scope: Option<String>) -> Self {
        self.scope = scope;
        self
    }

    pub fn principal(&self) -> Arc<Principal> {
        self.principal.read().unwrap().clone()
    }

    /// The caller of the current request (same owner; its roles may have changed).
    pub fn set_principal(&self, p: Arc<Principal>) {
        *self.principal.write().unwrap() = p;
    }

    pub fn touch(&self) {
        *self.last_seen.lock().unwrap() = Instant::now();
    }

    /// Idle: no request for `idle` and no open GET stream.
    pub fn is_idle(&self, idle: std::time::Duration) -> bool {
        let listening = self
            .streams
            .lock()
            .unwrap()
            .bufs
            .get(&0)
            .is_some_and(|b| b.live.as_ref().is_some_and(|l| !l.is_closed()));
        !listening && self.last_seen.lock().unwrap().elapsed() > idle
    }

    /// A fresh id for a request the gateway sends to the host.
    pub fn next_request_id(&self) -> String {
        format!("gw-{}", self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// The level the host set with `logging/setLevel` (or its request's envelope).
    pub fn log_level(&self) -> Option<String> {
        self.log_level.lock().unwrap().clone()
    }

    pub fn set_log_level(&self, level: &str) {
        *self.log_level.lock().unwrap() = Some(level.to_string());
        self.envelope.lock().unwrap().take();
    }

    /// The 2026-07-28 envelope of this session's requests to 2026-07-28 upstreams: the
    /// revision, its capabilities, its log level (a 2025 host that set none gets every message,
    /// as in 2025) and the gateway as the client. Kept, not rebuilt per call: its keys are long
    /// and every insert hashes one.
    pub fn envelope(&self) -> Arc<Map<String, Value>> {
        use crate::protocol::envelope::{CLIENT_CAPS, CLIENT_INFO, LOG_LEVEL, PROTOCOL_VERSION};
        let mut kept = self.envelope.lock().unwrap();
        if let Some(e) = kept.as_ref() {
            return e.clone();
        }
        let mut e = Map::new();
        e.insert(
            PROTOCOL_VERSION.into(),
            Value::from(Revision::Stateless.as_str()),
        );
        e.insert(CLIENT_CAPS.into(), self.client_caps.clone());
        match (self.log_level(), self.modern) {
            (Some(l), _) => {
                e.insert(LOG_LEVEL.into(), Value::from(l));
            }
            (None, false) => {
                e.insert(LOG_LEVEL.into(), Value::from("debug"));
            }
            (None, true) => {}
        }
        e.insert(
            CLIENT_INFO.into(),
            crate::upstream::connection::client_info(),
        );
        let e = Arc::new(e);
        *kept = Some(e.clone());
        e
    }

    pub fn subscribe(&self, exposed_uri: &str) {
        self.subscriptions
            .lock()
            .unwrap()
            .insert(exposed_uri.to_string());
    }

    pub fn unsubscribe(&self, exposed_uri: &str) {
        self.subscriptions.lock().unwrap().remove(exposed_uri);
    }

    pub fn is_subscribed(&self, exposed_uri: &str) -> bool {
        self.subscriptions.lock().unwrap().contains(exposed_uri)
    }

    /// Host request `id` is now upstream as `uid` on `conn` (so that the host can cancel it).
    pub fn track_inflight(&self, id: &Value, conn: Arc<Connection>, uid: i64) {
        self.inflight
            .lock()
            .unwrap()
            .insert(id_key(id), (conn, uid));
    }

    pub fn untrack_inflight(&self, id: &Value) {
        self.inflight.lock().unwrap().remove(&id_key(id));
    }

    /// Where host request `id` is upstream, no longer tracked (the host cancelled it).
    pub fn take_inflight(&self, id: &Value) -> Option<(Arc<Connection>, i64)> {
        self.inflight.lock().unwrap().remove(&id_key(id))
    }

    /// Every request still upstream, no longer tracked (the session ends).
    pub fn drain_inflight(&self) -> Vec<(Arc<Connection>, i64)> {
        self.inflight
            .lock()
            .unwrap()
            .drain()
            .map(|(_, v)| v)
            .collect()
    }

    /// The gateway sent the host request `down_id`; its answer goes to `to`.
    pub fn expect_client_answer(&self, down_id: &str, to: PendingClient) {
        self.pending_client
            .lock()
            .unwrap()
            .insert(IdKey::Text(down_id.to_string()), to);
    }

    /// Where the host's answer with `id` goes, once.
    pub fn take_client_answer(&self, id: &Value) -> Option<PendingClient> {
        self.pending_client.lock().unwrap().remove(&id_key(id))
    }

    /// Withdraws the request an upstream's connection made of the host with `upstream_id`; the
    /// host-side id it had.
    pub fn withdraw_client_request(
        &self,
        conn: &Arc<Connection>,
        upstream_id: &Value,
    ) -> Option<Value> {
        let mut pending = self.pending_client.lock().unwrap();
        let key = pending
            .iter()
            .find(|(_, p)| {
                matches!(p, PendingClient::Upstream(c, id) if Arc::ptr_eq(c, conn) && id == upstream_id)
            })
            .map(|(k, _)| k.clone())?;
        pending.remove(&key);
        Some(key.to_value())
    }

    /// Opens the SSE stream that answers host request `request_id`.
    pub fn open_stream(&self, request_id: &Value) -> (u64, mpsc::UnboundedReceiver<StreamEvent>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut s = self.streams.lock().unwrap();
        let n = s.next;
        s.next += 1;
        s.bufs.insert(
            n,
            StreamBuf {
                live: Some(tx),
                ..Default::default()
            },
        );
        s.by_request.insert(id_key(request_id), n);
        (n, rx)
    }

    /// The event that primes a client to reconnect (SEP-1699): an id and no data.
    pub fn priming_event(&self, stream: u64) -> StreamEvent {
        let mut s = self.streams.lock().unwrap();
        let buf = s.bufs.entry(stream).or_default();
        let seq = buf.next_seq;
        buf.next_seq += 1;
        StreamEvent {
            id: format!("{stream}_{seq}"),
            data: Arc::from(""),
            last: false,
        }
    }

    fn push(s: &mut Streams, stream: u64, msg: &impl Serialize, last: bool) {
        let buf = s.bufs.entry(stream).or_default();
        let seq = buf.next_seq;
        buf.next_seq += 1;
        let data: Arc<str> = Arc::from(serde_json::to_string(msg).unwrap_or_default());
        // A list change says only "list again": one kept for replay is as good as many, and an
        // idle session under a stream of catalog changes kept 512 of them.
        if is_list_changed(&data) {
            buf.events.retain(|(_, d)| *d != data);
        }
        buf.events.push_back((seq, data.clone()));
        if buf.events.len() > BUFFER_EVENTS {
            buf.events.pop_front();
        }
        if let Some(live) = &buf.live {
            let ev = StreamEvent {
                id: format!("{stream}_{seq}"),
                data,
                last,
            };
            if live.send(ev).is_err() {
                buf.live = None;
            }
        }
    }

    /// Sends a message on the stream of host request `request_id` if it is still open, else on
    /// the GET stream.
    pub fn send_related(&self, request_id: Option<&Value>, msg: &Value) {
        let mut s = self.streams.lock().unwrap();
        let stream = request_id
            .and_then(|id| s.by_request.get(&id_key(id)).copied())
            .filter(|n| s.bufs.get(n).is_some_and(|b| !b.done))
            .unwrap_or(0);
        Self::push(&mut s, stream, msg, false);
    }

    /// Sends a message that belongs to no request (list_changed, updates) on the GET stream.
    pub fn send_unsolicited(&self, msg: &Value) {
        self.send_related(None, msg)
    }

    /// Sends the final response on a POST stream and closes it.
    pub fn finish_stream(&self, stream: u64, request_id: &Value, response: &Reply) {
        let mut s = self.streams.lock().unwrap();
        Self::push(&mut s, stream, response, true);
        if let Some(b) = s.bufs.get_mut(&stream) {
            b.done = true;
            b.live = None;
        }
        s.by_request.remove(&id_key(request_id));
        s.finished.push_back(stream);
        if s.finished.len() > KEEP_FINISHED_STREAMS {
            if let Some(old) = s.finished.pop_front() {
                s.bufs.remove(&old);
            }
        }
    }

    /// Forgets stream `stream` of host request `request_id` if nothing was ever sent on it (its
    /// answer goes out as plain JSON instead); `false`, keeping it, when something was.
    pub fn discard_unused_stream(&self, stream: u64, request_id: &Value) -> bool {
        let mut s = self.streams.lock().unwrap();
        if s.bufs.get(&stream).is_some_and(|b| b.next_seq > 0) {
            return false;
        }
        s.bufs.remove(&stream);
        s.by_request.remove(&id_key(request_id));
        true
    }

    /// Attaches a GET request: a resume after `last_event_id` (replaying what was missed, then
    /// live if that stream is still open), or the session's standalone stream.
    pub fn attach(
        &self,
        last_event_id: Option<&str>,
    ) -> Option<mpsc::UnboundedReceiver<StreamEvent>> {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut s = self.streams.lock().unwrap();
        let (stream, after) = match last_event_id {
            Some(id) => {
                let (st, seq) = id.split_once('_')?;
                (st.parse::<u64>().ok()?, Some(seq.parse::<u64>().ok()?))
            }
            None => (0, None),
        };
        // Only the GET stream comes into being by being asked for: a resume must name a stream
        // this session has (else any host could grow the table with made-up ids).
        let buf = match stream {
            0 => s.bufs.entry(0).or_default(),
            n => s.bufs.get_mut(&n)?,
        };
        if let Some(after) = after {
            for (seq, data) in buf.events.iter().filter(|(seq, _)| *seq > after) {
                let _ = tx.send(StreamEvent {
                    id: format!("{stream}_{seq}"),
                    data: data.clone(),
                    last: false,
                });
            }
        }
        if !buf.done {
            buf.live = Some(tx);
        }
        Some(rx)
    }

    /// Ends the GET stream (shutdown), leaving calls in flight to finish.
    pub fn close_get_stream(&self) {
        if let Some(b) = self.streams.lock().unwrap().bufs.get_mut(&0) {
            b.live = None;
        }
    }

    /// Closes every stream (session deleted).
    pub fn close_streams(&self) {
        let mut s = self.streams.lock().unwrap();
        for b in s.bufs.values_mut() {
            b.live = None;
            b.done = true;
        }
    }

    /// Whether a log message of `level` passes the host's `logging/setLevel`.
    pub fn wants_log(&self, level: &str) -> bool {
        let rank = |l: &str| LOG_LEVELS.iter().position(|x| *x == l).unwrap_or(0);
        match self.log_level.lock().unwrap().as_deref() {
            Some(min) => rank(level) >= rank(min),
            // 2025: no level set means every message; 2026-07-28: none unless asked for.
            None => !self.modern,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_of_different_kinds_are_different_keys() {
        assert_eq!(id_key(&json!(7)), id_key(&json!(7u64)));
        assert_ne!(id_key(&json!(1)), id_key(&json!("1")));
        assert_ne!(id_key(&json!(null)), id_key(&json!("null")));
        assert_ne!(id_key(&json!(u64::MAX)), id_key(&json!(-1)));
        assert_eq!(id_key(&json!("a")), IdKey::Text("a".into()));
        for id in [
            json!(7),
            json!(-3),
            json!(u64::MAX),
            json!("x"),
            json!(null),
        ] {
            assert_eq!(id_key(&id).to_value(), id);
        }
    }

    #[test]
    fn an_idle_session_keeps_one_list_change_of_each_kind() {
        let s = Session::new("s".into(), Revision::V2025_11_25, json!({}));
        let mut get = s.attach(None).unwrap();
        s.send_unsolicited(&json!({"a": 1}));
        let seen = get.try_recv().unwrap();
        drop(get);
        for _ in 0..1000 {
            for kind in ["tools", "prompts", "resources"] {
                s.send_unsolicited(&crate::protocol::jsonrpc::notification(
                    &format!("notifications/{kind}/list_changed"),
                    None,
                ));
            }
        }
        s.send_unsolicited(&json!({"method": "notifications/message", "params": {}}));
        let mut resumed = s.attach(Some(&seen.id)).unwrap();
        let got: Vec<_> = std::iter::from_fn(|| resumed.try_recv().ok())
            .map(|e| e.data.to_string())
            .collect();
        assert_eq!(
            got,
            [
                r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#,
                r#"{"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}"#,
                r#"{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}"#,
                r#"{"method":"notifications/message","params":{}}"#,
            ]
        );
    }

    #[test]
    fn resume_replays_missed_events_of_that_stream() {
        let s = Session::new("s".into(), Revision::V2025_11_25, json!({}));
        let (n, mut rx) = s.open_stream(&json!(1));
        s.send_related(Some(&json!(1)), &json!({"a": 1}));
        let first = rx.try_recv().unwrap();
        drop(rx);
        s.send_related(Some(&json!(1)), &json!({"a": 2}));
        s.finish_stream(n, &json!(1), &json!({"id": 1}).into());
        let mut resumed = s.attach(Some(&first.id)).unwrap();
        let got: Vec<_> = std::iter::from_fn(|| resumed.try_recv().ok())
            .map(|e| e.data.to_string())
            .collect();
        assert_eq!(got, [r#"{"a":2}"#, r#"{"id":1}"#]);
    }

    #[test]
    fn unrelated_messages_go_to_the_get_stream() {
        let s = Session::new("s".into(), Revision::V2025_11_25, json!({}));
        let mut get = s.attach(None).unwrap();
        s.send_unsolicited(&json!({"m": 1}));
        s.send_related(Some(&json!(99)), &json!({"m": 2}));
        assert_eq!(get.try_recv().unwrap().id, "0_0");
        assert_eq!(get.try_recv().unwrap().id, "0_1");
    }

    #[test]
    fn a_resume_of_a_stream_never_issued_is_refused_and_adds_nothing() {
        let s = Session::new("s".into(), Revision::V2025_11_25, json!({}));
        for n in 1..100 {
            assert!(s.attach(Some(&format!("{n}_0"))).is_none());
        }
        assert!(s.streams.lock().unwrap().bufs.is_empty());
        assert!(
            s.attach(Some("0_0")).is_some(),
            "the GET stream may be resumed"
        );
    }
}
