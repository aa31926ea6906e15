//! The hub: all downstream sessions, and the routing of what upstreams send on their own
//! (requests to the host, progress, logs, updates, list changes) to the right session.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use registry::EntryKind;
use serde_json::{json, Value};

use super::flight::Flight;
use super::listener::Listener;
use super::session::{Ask, PendingClient, Session};

use super::session_id::{id_hash, SessionCodec, SessionState};
use crate::auth::Principal;
use crate::protocol::method::{
    NOTIFY_CANCELLED, NOTIFY_MESSAGE, NOTIFY_PROGRESS, NOTIFY_PROMPTS_LIST_CHANGED,
    NOTIFY_RESOURCES_LIST_CHANGED, NOTIFY_RESOURCES_UPDATED, NOTIFY_TASKS_STATUS,
    NOTIFY_TOOLS_LIST_CHANGED, PING, ROOTS_LIST,
};
use crate::protocol::{jsonrpc, Revision};
use crate::upstream::{Attribution, Connection, InboundSink, Upstreams};
use registry::Registry;

/// A session refused: its principal holds this many already (`server.max_sessions_per_principal`).
#[derive(Debug)]
pub struct SessionCap(pub usize);

pub struct Hub {
    sessions: RwLock<HashMap<String, Arc<Session>>>,
    /// Tasks this replica saw created (see [`super::tasks`]).
    pub tasks: super::tasks::TaskIndex,
    /// Open sessions by owner, for the per-principal cap.
    owned: Mutex<HashMap<String, usize>>,
    /// `server.max_sessions_per_principal`.
    max_per_principal: usize,
    /// 2026-07-28 requests in flight (and parked between rounds), for routing what upstreams
    /// send during them. Never reachable as a session.
    requests: RwLock<HashMap<String, Arc<Session>>>,
    /// Calls waiting for a 2026-07-28 host's retry with its answers, by call id.
    parked: Mutex<HashMap<String, (Flight, Instant)>>,
    /// Open `subscriptions/listen` streams.
    listeners: Mutex<Vec<Listener>>,
    pub upstreams: Arc<Upstreams>,
    pub codec: SessionCodec,
    registry: Arc<dyn Registry>,
}

impl Hub {
    pub fn new(
        upstreams: Arc<Upstreams>,
        registry: Arc<dyn Registry>,
        codec: SessionCodec,
        max_per_principal: usize,
    ) -> Arc<Self> {
        let hub = Arc::new(Self {
            sessions: RwLock::default(),
            tasks: Default::default(),
            owned: Mutex::default(),
            max_per_principal,
            requests: RwLock::default(),
            parked: Mutex::default(),
            listeners: Mutex::default(),
            upstreams: upstreams.clone(),
            codec,
            registry,
        });
        let sink: Arc<dyn InboundSink> = hub.clone();
        upstreams.set_sink(Arc::downgrade(&sink));
        let weak = Arc::downgrade(&hub);
        let mut changes = upstreams.subscribe_changes();
        tokio::spawn(async move {
            while let Some(kinds) = changed_kinds(changes.recv().await) {
                let Some(hub) = weak.upgrade() else { break };
                for &kind in kinds {
                    hub.announce_list_changed(kind);
                }
            }
        });
        hub
    }

    /// Creates a session; its id carries its state, encrypted. Refused when its principal holds
    /// `server.max_sessions_per_principal` already.
    pub fn create(
        &self,
        protocol_version: Revision,
        client_caps: serde_json::Value,
        principal: Arc<Principal>,
        scope: Option<String>,
    ) -> Result<Arc<Session>, SessionCap> {
        {
            let mut owned = self.owned.lock().unwrap();
            let n = owned.entry(principal.key().to_string()).or_default();
            if *n >= self.max_per_principal {
                return Err(SessionCap(self.max_per_principal));
            }
            // Counted before the session exists, so that concurrent creates cannot pass the cap.
            *n += 1;
        }
        let state = SessionState {
            protocol_version: protocol_version.as_str().into(),
            client_caps,
            owner: principal.key().to_string(),
            scope,
            issued_at: registry::now_ms() / 1000,
        };
        let id = self.codec.issue(&state);
        let s = Arc::new(
            Session::owned(id.clone(), protocol_version, state.client_caps, principal)
                .scoped(state.scope),
        );
        self.sessions.write().unwrap().insert(id, s.clone());
        Ok(s)
    }

    /// The session with this id: one this replica holds, or one another replica created that is
    /// rebuilt from its id (unless its host ended it). Per-session upstream connections are
    /// reopened on first use. A session is found only for the principal it belongs to.
    /// A session opened on one endpoint is not found on another (`scope`: the virtual server).
    pub async fn find(
        &self,
        id: &str,
        principal: Arc<Principal>,
        scope: Option<&str>,
    ) -> Option<Arc<Session>> {
        if let Some(s) = self.get(id) {
            if s.owner != principal.key() || s.scope.as_deref() != scope {
                return None;
            }
            s.set_principal(principal);
            return Some(s);
        }
        let state = self.codec.open(id)?;
        if state.owner != principal.key() || state.scope.as_deref() != scope {
            return None;
        }
        // Past this, the record of its end may be forgotten: an old id starts no session.
        if state.expired(registry::now_ms() / 1000) {
            return None;
        }
        match self.registry.is_session_terminated(&id_hash(id)).await {
            Ok(true) => return None,
            Ok(false) => {}
            // Availability over strictness: a session that cannot be checked is served.
            Err(e) => tracing::warn!(error = %e, "cannot check whether a session was ended"),
        }
        let s = Arc::new(
            Session::owned(
                id.to_string(),
                Revision::sessionful(&state.protocol_version).unwrap_or(Revision::SESSIONFUL[0]),
                state.client_caps,
                principal,
            )
            .scoped(state.scope),
        );
        tracing::info!(session = %short(id), "session restored from its id");
        let mut sessions = self.sessions.write().unwrap();
        let entry = sessions.entry(id.to_string());
        if matches!(entry, std::collections::hash_map::Entry::Vacant(_)) {
            // A session another replica opened counts, but is never refused: it exists already.
            *self
                .owned
                .lock()
                .unwrap()
                .entry(s.owner.clone())
                .or_default() += 1;
        }
        Some(entry.or_insert(s).clone())
    }

    /// The context of one 2026-07-28 request (see [`Session::stateless`]). Its per-session
    /// upstream connections are shared by all requests of the same principal: they have no
    /// session to own one.
    pub fn open_request(
        &self,
        caps: Value,
        log_level: Option<String>,
        principal: Arc<Principal>,
        scope: Option<String>,
    ) -> (Arc<Session>, tokio::sync::mpsc::UnboundedReceiver<Ask>) {
        let id = format!("req-{}", uuid::Uuid::new_v4().simple());
        let key = format!("principal:{}", principal.key());
        let (s, asks) = Session::stateless(id.clone(), caps, log_level, key, principal);
        let s = Arc::new(s.scoped(scope));
        self.requests.write().unwrap().insert(id, s.clone());
        (s, asks)
    }

    pub fn close_request(&self, id: &str) {
        self.requests.write().unwrap().remove(id);
    }

    /// Keeps a call until its host retries (or `for_` passes).
    pub fn park(&self, call: String, flight: Flight, for_: Duration) {
        self.parked
            .lock()
            .unwrap()
            .insert(call, (flight, Instant::now() + for_));
    }

    pub fn unpark(&self, call: &str) -> Option<Flight> {
        self.parked.lock().unwrap().remove(call).map(|(f, _)| f)
    }

    /// Gives up parked calls whose host never came back; returns how many.
    pub fn expire_parked(&self) -> usize {
        let now = Instant::now();
        let expired: Vec<Flight> = {
            let mut parked = self.parked.lock().unwrap();
            let keys: Vec<String> = parked
                .iter()
                .filter(|(_, (_, until))| *until < now)
                .map(|(k, _)| k.clone())
                .collect();
            keys.iter()
                .filter_map(|k| parked.remove(k).map(|(f, _)| f))
                .collect()
        };
        let n = expired.len();
        for f in expired {
            self.close_request(&f.session.id);
            f.abandon();
        }
        n
    }

    pub fn add_listener(&self, l: Listener) {
        self.listeners.lock().unwrap().push(l);
    }

    /// Sends a notification on the listen streams that asked for it; drops streams whose host
    /// has gone.
    fn notify_listeners(&self, wants: impl Fn(&Listener) -> bool, method: &str, params: &Value) {
        self.listeners.lock().unwrap().retain(|l| {
            if wants(l) {
                l.send(method, params.clone())
            } else {
                !l.tx.is_closed()
            }
        });
    }

    /// Ends every listen stream with its final result (shutdown).
    pub fn close_listeners(&self) {
        for l in self.listeners.lock().unwrap().drain(..) {
            let _ = l.tx.send(jsonrpc::result(
                l.id.clone(),
                json!({ "resultType": "complete", "_meta": { crate::protocol::envelope::SUBSCRIPTION_ID: l.id } }),
            ));
        }
    }

    /// A session or 2026-07-28 request by id, for routing upstream messages.
    fn lookup(&self, id: &str) -> Option<Arc<Session>> {
        self.get(id)
            .or_else(|| self.requests.read().unwrap().get(id).cloned())
    }

    /// Ends a session for good, on every replica.
    pub async fn terminate(&self, id: &str) {
        self.remove(id);
        if let Err(e) = self.registry.terminate_session(&id_hash(id)).await {
            tracing::warn!(error = %e, "session end not recorded; another replica could restore it");
        }
    }

    /// Tells every session and `subscriptions/listen` stream that a list of `kind` changed.
    fn announce_list_changed(&self, kind: EntryKind) {
        let method = match kind {
            EntryKind::Tool => NOTIFY_TOOLS_LIST_CHANGED,
            EntryKind::Prompt => NOTIFY_PROMPTS_LIST_CHANGED,
            EntryKind::Resource | EntryKind::ResourceTemplate => NOTIFY_RESOURCES_LIST_CHANGED,
        };
        let msg = jsonrpc::notification(method, None);
        for s in self.all() {
            s.send_unsolicited(&msg);
        }
        self.notify_listeners(
            |l| match kind {
                EntryKind::Tool => l.tools,
                EntryKind::Prompt => l.prompts,
                EntryKind::Resource | EntryKind::ResourceTemplate => l.resources,
            },
            method,
            &json!({}),
        );
    }

    /// Drops the sessions whose ids hash to one of `hashes` (their hosts ended them through
    /// another replica; ids are not announced, their hashes are). Each session's hash prefix is
    /// worked out once (the audit log names it so), so this costs a set lookup per session held.
    pub fn drop_ended(&self, hashes: &[String]) {
        let prefixes: std::collections::HashSet<&str> =
            hashes.iter().filter_map(|h| h.get(..16)).collect();
        let ended: Vec<String> = self
            .sessions
            .read()
            .unwrap()
            .iter()
            .filter(|(id, s)| prefixes.contains(s.hash_prefix()) && hashes.contains(&id_hash(id)))
            .map(|(id, _)| id.clone())
            .collect();
        for id in ended {
            if self.remove(&id) {
                tracing::info!(session = %short(&id), "session ended by its host on another replica");
            }
        }
    }

    pub fn get(&self, id: &str) -> Option<Arc<Session>> {
        self.sessions.read().unwrap().get(id).cloned()
    }

    pub fn all(&self) -> Vec<Arc<Session>> {
        self.sessions.read().unwrap().values().cloned().collect()
    }

    pub fn count(&self) -> usize {
        self.sessions.read().unwrap().len()
    }

    /// Ends a session: closes its streams and its per-session upstream connections.
    pub fn remove(&self, id: &str) -> bool {
        let Some(s) = self.sessions.write().unwrap().remove(id) else {
            return false;
        };
        {
            let mut owned = self.owned.lock().unwrap();
            if let Some(n) = owned.get_mut(&s.owner) {
                *n -= 1;
                if *n == 0 {
                    owned.remove(&s.owner);
                }
            }
        }
        s.close_streams();
        for (conn, uid) in s.drain_inflight() {
            conn.cancel(uid, "session ended");
        }
        self.upstreams.end_session(id);
        true
    }

    /// Removes sessions idle longer than `idle`; returns how many.
    pub fn reap(&self, idle: std::time::Duration) -> usize {
        let stale: Vec<String> = self
            .all()
            .into_iter()
            .filter(|s| s.is_idle(idle))
            .map(|s| s.id.clone())
            .collect();
        stale.iter().filter(|id| self.remove(id)).count()
    }

    /// The session (and host request, and the upstream call) an upstream message belongs to.
    fn route(
        &self,
        conn: &Arc<Connection>,
        related: Option<i64>,
    ) -> Option<(Arc<Session>, Option<Value>, Option<i64>)> {
        match conn.attribute(related) {
            Some(Attribution::Call(call, ctx)) => {
                return self
                    .lookup(&ctx.session)
                    .map(|s| (s, Some(ctx.downstream_id), Some(call)));
            }
            Some(Attribution::Session(session)) => {
                return self.lookup(&session).map(|s| (s, None, None));
            }
            None => {}
        }
        conn.owner
            .as_deref()
            .and_then(|o| self.get(o))
            .map(|s| (s, None, None))
    }

    fn on_request(&self, conn: &Arc<Connection>, msg: Value, related: Option<i64>) {
        let id = msg.get("id").cloned().unwrap_or(Value::Null);
        let method = jsonrpc::method(&msg).unwrap_or_default().to_string();
        if method == PING {
            return conn.send_raw(jsonrpc::result(id, json!({})));
        }
        // Roots are each host's own: one host's answer on a connection that serves several
        // would be the upstream's roots for all of them.
        if method == ROOTS_LIST && conn.owner.is_none() {
            return conn.send_raw(jsonrpc::error(
                id,
                jsonrpc::METHOD_NOT_FOUND,
                "roots are each client's own and this connection serves several: give the \
                 upstream sharing = \"per_session\" to see each client's roots",
            ));
        }
        let Some((session, request, call)) = self.route(conn, related) else {
            let (calls, sessions) = conn.calls_in_flight();
            return conn.send_raw(jsonrpc::error(
                id,
                jsonrpc::INTERNAL_ERROR,
                format!(
                    "the gateway cannot tell which client this {method} is for: {calls} calls \
                     of {sessions} clients are in flight on this connection and its transport \
                     does not say which one asks; give the upstream sharing = \"per_session\" \
                     (one connection per client) or serve it over Streamable HTTP"
                ),
            ));
        };
        if let Some(call) = call {
            conn.note_asking(&id, call);
        }
        let needed = crate::protocol::method::client_capability(&method);
        if let Some(cap) = needed {
            if session.client_caps.get(cap).is_none() {
                return conn.send_raw(jsonrpc::error(
                    id,
                    jsonrpc::METHOD_NOT_FOUND,
                    format!("the client does not support {cap}"),
                ));
            }
        }
        if let Some(asks) = &session.asks {
            // A 2026-07-28 host has no stream to be asked on: the request goes back to it in an
            // input-required result, and its retry brings the answer.
            let mut request = json!({ "method": method });
            if let Some(p) = msg.get("params") {
                request["params"] = p.clone();
            }
            let ask = Ask {
                conn: conn.clone(),
                upstream_id: id.clone(),
                request,
            };
            if asks.send(ask).is_err() {
                conn.send_raw(jsonrpc::error(
                    id,
                    jsonrpc::INTERNAL_ERROR,
                    "the request ended",
                ));
            }
            return;
        }
        let down_id = session.next_request_id();
        session.expect_client_answer(&down_id, PendingClient::Upstream(conn.clone(), id));
        let mut out = msg;
        self.expose_related_task(conn, out.get_mut("params"));
        out["id"] = Value::from(down_id);
        session.send_related(request.as_ref(), &out);
    }

    fn on_notification(&self, conn: &Arc<Connection>, mut msg: Value, related: Option<i64>) {
        let method = jsonrpc::method(&msg).unwrap_or_default().to_string();
        match method.as_str() {
            NOTIFY_PROGRESS => {
                let token = msg.pointer("/params/progressToken").cloned();
                let route = token
                    .as_ref()
                    .and_then(|t| t.as_str())
                    .and_then(|t| conn.progress.lock().unwrap().get(t).cloned());
                if let Some(r) = route {
                    if let Some(s) = self.lookup(&r.session) {
                        msg["params"]["progressToken"] = r.token;
                        s.send_related(Some(&r.downstream_id), &msg);
                    }
                }
            }
            NOTIFY_MESSAGE => {
                let level = msg
                    .pointer("/params/level")
                    .and_then(Value::as_str)
                    .unwrap_or("info")
                    .to_string();
                match self.route(conn, related) {
                    Some((s, req, _)) => {
                        if s.wants_log(&level) {
                            s.send_related(req.as_ref(), &msg);
                        }
                    }
                    // A shared upstream's log outside any call is of interest to every host.
                    None => {
                        for s in self.all().into_iter().filter(|s| s.wants_log(&level)) {
                            s.send_unsolicited(&msg);
                        }
                    }
                }
            }
            NOTIFY_TOOLS_LIST_CHANGED
            | NOTIFY_PROMPTS_LIST_CHANGED
            | NOTIFY_RESOURCES_LIST_CHANGED => self.upstreams.resync(&conn.upstream),
            NOTIFY_RESOURCES_UPDATED => {
                let Some(uri) = msg.pointer("/params/uri").and_then(Value::as_str) else {
                    return;
                };
                let exposed = self.upstreams.view().exposed_uri(&conn.upstream, uri);
                msg["params"]["uri"] = Value::from(exposed.clone());
                for s in self.all() {
                    let owned = conn.owner.as_deref().is_none_or(|o| o == s.id);
                    if owned && s.is_subscribed(&exposed) {
                        s.send_unsolicited(&msg);
                    }
                }
                self.notify_listeners(
                    |l| l.uris.contains(&exposed),
                    NOTIFY_RESOURCES_UPDATED,
                    &msg["params"],
                );
            }
            NOTIFY_TASKS_STATUS => {
                // To the session that created the task, under the id it knows.
                let Some(task) = msg.pointer("/params/taskId").and_then(Value::as_str) else {
                    return;
                };
                let Some(known) = self.tasks.get(&conn.upstream, task) else {
                    return;
                };
                let task = task.to_string();
                if let Some(s) = self.lookup(&known.session) {
                    if let Some(p) = msg.get_mut("params") {
                        super::tasks::expose_id(p, &task, &known.id);
                    }
                    s.send_unsolicited(&msg);
                }
            }
            NOTIFY_CANCELLED => {
                // The upstream withdrew one of its requests to a host.
                let Some(uid) = msg.pointer("/params/requestId").cloned() else {
                    return;
                };
                for s in self.all() {
                    if let Some(down) = s.withdraw_client_request(conn, &uid) {
                        msg["params"]["requestId"] = down;
                        s.send_unsolicited(&msg);
                    }
                }
            }
            "$/gateway/session-expired" => {
                let why = msg
                    .pointer("/params/reason")
                    .and_then(Value::as_str)
                    .unwrap_or("upstream session expired");
                conn.set_close_reason(format!("upstream session lost: {why}"));
                conn.shutdown();
            }
            crate::upstream::http::LISTENING => {
                if conn.owner.is_none() {
                    self.upstreams.resync(&conn.upstream);
                }
            }
            _ => {
                if let Some((s, req, _)) = self.route(conn, related) {
                    s.send_related(req.as_ref(), &msg);
                }
            }
        }
    }

    /// A message made for a task (its related-task `_meta`) names it as its host knows it.
    fn expose_related_task(&self, conn: &Connection, params: Option<&mut Value>) {
        let Some(params) = params else { return };
        let Some(task) = super::tasks::related_id(params).map(str::to_string) else {
            return;
        };
        if let Some(known) = self.tasks.get(&conn.upstream, &task) {
            super::tasks::expose_id(params, &task, &known.id);
        }
    }

    /// A host's answer to a request the gateway relayed: back to the upstream that asked.
    pub fn on_host_response(&self, session: &Session, mut msg: Value) {
        let Some(id) = msg.get("id") else { return };
        let pending = session.take_client_answer(id);
        match pending {
            Some(PendingClient::Upstream(conn, upstream_id)) => {
                msg["id"] = upstream_id;
                conn.send_raw(msg);
            }
            Some(PendingClient::Gateway(waiter)) => {
                let _ = waiter.send(msg);
            }
            None => tracing::debug!(session = %session.id, "response to no pending request"),
        }
    }
}

/// A session id for logs: long ids are cut to their first characters.
pub fn short(id: &str) -> &str {
    &id[..id.len().min(12)]
}

impl InboundSink for Hub {
    fn on_message(&self, conn: &Arc<Connection>, msg: Value, related: Option<i64>) {
        match jsonrpc::kind(&msg) {
            jsonrpc::Kind::Request => self.on_request(conn, msg, related),
            jsonrpc::Kind::Notification => self.on_notification(conn, msg, related),
            _ => {}
        }
    }
}

/// The lists to announce as changed after `received` from the catalog's changes: the one that
/// changed; every list when changes came faster than they were announced (which ones is not
/// known); none once the catalog is gone. (Until 2026-12-07 a lag ended the announcing for good:
/// hosts were never told of a change again.)
fn changed_kinds(
    received: Result<EntryKind, tokio::sync::broadcast::error::RecvError>,
) -> Option<&'static [EntryKind]> {
    use tokio::sync::broadcast::error::RecvError;
    match received {
        Ok(EntryKind::Tool) => Some(&[EntryKind::Tool]),
        Ok(EntryKind::Prompt) => Some(&[EntryKind::Prompt]),
        Ok(EntryKind::Resource | EntryKind::ResourceTemplate) => Some(&[EntryKind::Resource]),
        Err(RecvError::Lagged(_)) => {
            Some(&[EntryKind::Tool, EntryKind::Prompt, EntryKind::Resource])
        }
        Err(RecvError::Closed) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::sync::broadcast;

    #[tokio::test]
    async fn changes_that_came_too_fast_announce_every_list_and_announcing_goes_on() {
        let (tx, mut rx) = broadcast::channel(4);
        for _ in 0..10 {
            tx.send(EntryKind::Prompt).unwrap();
        }
        let lagged = changed_kinds(rx.recv().await);
        assert_eq!(
            lagged,
            Some(&[EntryKind::Tool, EntryKind::Prompt, EntryKind::Resource][..])
        );
        assert_eq!(
            changed_kinds(rx.recv().await),
            Some(&[EntryKind::Prompt][..])
        );
        drop(tx);
        while rx.try_recv().is_ok() {}
        assert_eq!(changed_kinds(rx.recv().await), None);
    }
}
