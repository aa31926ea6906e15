//! Keeps every registered upstream connected: a supervisor task per upstream restarts it with
//! backoff, records its health, syncs its catalog (on connect and on `list_changed`), and opens
//! per-session connections for `per_session` upstreams. A dead upstream takes its tools out of
//! the catalog; it never takes the gateway down.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock, RwLock, Weak};
use std::time::Duration;

use registry::{CatalogView, EntryKind, Registry};
use serde::Serialize;
use serde_json::{json, Map, Value};
use tokio::sync::{broadcast, watch};

use super::connection::{Connection, InboundSink};
use super::{http, sse, stdio, UpstreamError};
use crate::config::{Config, Curation, Secret, Sharing, Transport, UpstreamSpec};
use crate::protocol::method::{
    INITIALIZE, NOTIFY_INITIALIZED, PING, SERVER_DISCOVER, SUBSCRIPTIONS_LISTEN,
};
use crate::protocol::{jsonrpc, McpError, Revision};
use registry::backoff::Backoff;

mod catalog;
mod pins;
mod reader;
mod sessions;
pub use pins::{PendingTool, ReviewError};
pub use sessions::Caller;

const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// An upstream's health as the admin API and logs show it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Health {
    pub name: String,
    /// `connecting`, `up`, `down` or `disabled`.
    pub status: String,
    pub last_error: Option<String>,
    pub restarts: u32,
    /// Why the last restart happened (a lost session, a process that exited, a failed ping).
    pub last_restart_reason: Option<String>,
    /// Milliseconds since the Unix epoch.
    pub up_since: Option<i64>,
    pub tools: usize,
    pub server_info: Option<Value>,
    pub protocol_version: Option<String>,
    /// Hosts' calls waiting for this upstream's answer now, on all its connections.
    pub calls_in_flight: usize,
    /// Tools whose changed or new definition waits for an admin (`pinning`).
    pub tools_pending_approval: usize,
}

/// A change of an upstream's health status, for its history.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Transition {
    /// Milliseconds since the Unix epoch.
    pub at: i64,
    pub status: String,
    pub reason: Option<String>,
}

/// Health changes kept per upstream.
const TRANSITIONS: usize = 100;

/// One listed definition, hashed and its key read once when it arrives (views are rebuilt on
/// every change of any upstream, and reading a large catalog each time would cost more than the
/// rebuild).
struct Definition {
    json: registry::Definition,
    hash: String,
    /// A tool's pin hash, when its upstream pins tools.
    pin: Option<String>,
    /// Its name (URI, URI template); `None` for one without, which no view shows.
    key: Option<String>,
}

struct Entry {
    spec: UpstreamSpec,
    /// `spec.tools`, compiled.
    curation: Curation,
    health: Mutex<Health>,
    shared: Mutex<Option<Arc<Connection>>>,
    sessions: Mutex<HashMap<String, Arc<Connection>>>,
    /// One opening of a session's connection at a time: concurrent first calls of a session
    /// each started a process, and all but the last were killed with their calls.
    opening: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// The token exchangers of per-session connections (`oauth.token_exchange`), by session.
    exchangers: Mutex<HashMap<String, Arc<super::oauth::TokenSource>>>,
    /// What the upstream lists, each definition with its content hash; shared with the views.
    definitions: Mutex<BTreeMap<EntryKind, Vec<Definition>>>,
    stop: watch::Sender<bool>,
    syncing: tokio::sync::Mutex<()>,
    /// A `user_oauth` upstream refused its catalog account's token (or wants more scope) while
    /// listing: the catalog is stale until an admin connects the account again.
    catalog_stale: std::sync::atomic::AtomicBool,
    /// The holder whose account a `user_oauth` upstream's catalog connection was last opened
    /// with (the catalog account, or a user's under `catalog = "first_user"`).
    reader: Mutex<Option<String>>,
    /// The approved tool definitions, by the upstream's own name (`pinning`); `None` until read.
    pins: Mutex<Option<HashMap<String, pins::Pin>>>,
    /// Tools served as approved while the upstream lists another definition: their calls are
    /// checked against the approved input schema.
    held: Mutex<std::collections::HashSet<String>>,
}

/// All upstreams.
pub struct Upstreams {
    config: Arc<Config>,
    registry: Arc<dyn Registry>,
    /// For what is not an upstream's request (keys of token issuers, a replica's relay).
    client: reqwest::Client,
    /// Upstreams' requests that do not go over `plain` (see [`super::post::upstream_client`]).
    upstream_client: reqwest::Client,
    /// Plain `http://` upstreams' POSTs (see [`super::post`]).
    plain: super::post::PlainClient,
    sink: OnceLock<Weak<dyn InboundSink>>,
    entries: Mutex<BTreeMap<String, Arc<Entry>>>,
    /// The gateway's own OAuth tokens, per upstream (shared by its connections).
    tokens: Mutex<HashMap<String, Arc<super::oauth::TokenSource>>>,
    /// Users' own tokens at `user_oauth` upstreams.
    pub vault: Arc<super::credentials::vault::Vault>,
    view: RwLock<Arc<CatalogView>>,
    /// What upstreams that are restarting or unreachable served when last up: not listed, but a
    /// call to it is told to retry rather than that it does not exist.
    offline: RwLock<Arc<CatalogView>>,
    /// Each upstream's health changes (kept across restarts and new specs), newest last.
    transitions: Mutex<HashMap<String, std::collections::VecDeque<Transition>>>,
    /// Kinds whose exposed list changed; the hub turns them into `list_changed` notifications.
    changes: broadcast::Sender<EntryKind>,
    /// Held while a view is built and published: two upstreams that connect together each
    /// rebuild, and without it the one that read the entries first could publish last, a view
    /// without the other's catalog ("unknown tool" until the next change).
    rebuilding: Mutex<()>,
}

impl Upstreams {
    pub fn new(config: Arc<Config>, registry: Arc<dyn Registry>) -> Arc<Self> {
        Arc::new(Self {
            vault: super::credentials::vault::Vault::new(&config, registry.clone()),
            config,
            registry,
            client: reqwest::Client::builder()
                .connect_timeout(Duration::from_secs(10))
                .build()
                .expect("http client"),
            upstream_client: super::post::upstream_client(),
            plain: super::post::plain_client(),
            sink: OnceLock::new(),
            entries: Mutex::default(),
            tokens: Mutex::default(),
            view: RwLock::new(Arc::new(CatalogView::default())),
            offline: RwLock::new(Arc::new(CatalogView::default())),
            transitions: Mutex::default(),
            changes: broadcast::channel(64).0,
            rebuilding: Mutex::default(),
        })
    }

    /// Sets where upstream requests and notifications go (the hub); once, before any start.
    pub fn set_sink(&self, sink: Weak<dyn InboundSink>) {
        let _ = self.sink.set(sink);
    }

    pub fn subscribe_changes(&self) -> broadcast::Receiver<EntryKind> {
        self.changes.subscribe()
    }

    /// The upstream that served `name` (a tool or prompt; for resources, a URI) when it was
    /// last up and is now restarting or unreachable.
    pub fn offline_upstream(&self, kind: EntryKind, name: &str) -> Option<String> {
        let view = self.offline.read().unwrap().clone();
        if kind == EntryKind::Resource {
            return view.resolve_resource_uri(name).map(|(u, _)| u);
        }
        view.resolve(kind, name).map(|e| e.entry.upstream.clone())
    }

    /// Waits (at most `within`) until `upstream` has a connection other than `old`: a lost
    /// session is being re-initialised.
    pub async fn reconnected(
        &self,
        upstream: &str,
        old: &Arc<Connection>,
        within: Duration,
    ) -> bool {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let entry = self.entries.lock().unwrap().get(upstream).cloned();
            let Some(entry) = entry else { return false };
            let fresh = entry.shared.lock().unwrap().clone();
            if fresh.is_some_and(|c| !c.is_closed() && !Arc::ptr_eq(&c, old))
                && entry.health.lock().unwrap().status == "up"
            {
                return true;
            }
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The catalog as hosts see it now.
    pub fn view(&self) -> Arc<CatalogView> {
        self.view.read().unwrap().clone()
    }

    /// The tools `upstream` lists, by its own names (empty until it has been read).
    pub fn tool_names(&self, upstream: &str) -> Vec<String> {
        let Some(entry) = self.entries.lock().unwrap().get(upstream).cloned() else {
            return Vec::new();
        };
        let defs = entry.definitions.lock().unwrap();
        defs.get(&EntryKind::Tool)
            .map(|d| d.iter().filter_map(|d| d.key.clone()).collect())
            .unwrap_or_default()
    }

    /// An upstream's tools as it lists them (before curation and pinning); `None` for an
    /// unknown upstream.
    pub fn listed_tools(&self, upstream: &str) -> Option<Vec<Value>> {
        let entry = self.entries.lock().unwrap().get(upstream).cloned()?;
        let defs = entry.definitions.lock().unwrap();
        Some(
            defs.get(&EntryKind::Tool)
                .into_iter()
                .flatten()
                .map(|d| d.json.to_value())
                .collect(),
        )
    }

    pub fn spec(&self, name: &str) -> Option<UpstreamSpec> {
        self.entries
            .lock()
            .unwrap()
            .get(name)
            .map(|e| e.spec.clone())
    }

    /// An upstream's request timeout (read on every call: no copy of the spec).
    pub fn timeout_of(&self, name: &str) -> Duration {
        let secs = self
            .entries
            .lock()
            .unwrap()
            .get(name)
            .and_then(|e| e.spec.timeout_secs);
        self.timeout_from(secs)
    }

    /// An upstream's cap on a tool result's text items (read on every call: no copy of the spec).
    /// What a call of an upstream's tool `tool` (its own name) goes with: the argument values
    /// its curation fixes, and whether the tool is held (served as approved while the upstream
    /// lists a changed definition: the call is checked against the approved input schema).
    pub fn call_rules(&self, name: &str, tool: &str) -> (Option<Map<String, Value>>, bool) {
        let entries = self.entries.lock().unwrap();
        let Some(e) = entries.get(name) else {
            return (None, false);
        };
        let fixed = e.curation.fixed_arguments(tool).cloned();
        let held =
            e.spec.pinning == crate::config::Pinning::Hold && e.held.lock().unwrap().contains(tool);
        (fixed, held)
    }

    pub fn result_text_cap(&self, name: &str) -> Option<usize> {
        self.entries
            .lock()
            .unwrap()
            .get(name)
            .and_then(|e| e.spec.max_result_text_bytes)
    }

    /// The gateway's request timeout (for what no one upstream's setting covers).
    pub fn timeout_of_default(&self) -> Duration {
        self.config.server.request_timeout
    }

    /// Whether an upstream's current connection speaks 2026-07-28.
    pub fn is_modern(&self, name: &str) -> bool {
        let entry = self.entries.lock().unwrap().get(name).cloned();
        entry
            .and_then(|e| e.shared.lock().unwrap().clone())
            .is_some_and(|c| c.is_modern())
    }

    fn timeout_from(&self, timeout_secs: Option<u64>) -> Duration {
        timeout_secs
            .map(Duration::from_secs)
            .unwrap_or(self.config.server.request_timeout)
    }

    /// The upstreams still on their first connection attempt: until none is, the catalog is
    /// not loaded (`/readyz`).
    pub fn loading(&self) -> Vec<String> {
        let entries = self.entries.lock().unwrap();
        entries
            .values()
            .filter_map(|e| {
                let h = e.health.lock().unwrap();
                (h.status == "connecting").then(|| h.name.clone())
            })
            .collect()
    }

    pub fn health(&self) -> Vec<Health> {
        let entries = self.entries.lock().unwrap();
        entries
            .values()
            .map(|e| {
                let mut h = e.health.lock().unwrap().clone();
                let shared = e.shared.lock().unwrap().clone();
                let sessions: Vec<_> = e.sessions.lock().unwrap().values().cloned().collect();
                h.calls_in_flight = shared
                    .iter()
                    .chain(&sessions)
                    .map(|c| c.calls_in_flight().0)
                    .sum();
                h
            })
            .collect()
    }

    /// Starts (or restarts with a new spec) the supervisor of an upstream.
    pub fn start(self: &Arc<Self>, spec: UpstreamSpec) {
        self.stop(&spec.name);
        let (stop, stop_rx) = watch::channel(false);
        let entry = Arc::new(Entry {
            health: Mutex::new(Health {
                name: spec.name.clone(),
                status: if spec.enabled {
                    "connecting"
                } else {
                    "disabled"
                }
                .into(),
                last_error: None,
                restarts: 0,
                last_restart_reason: None,
                up_since: None,
                tools: 0,
                calls_in_flight: 0,
                tools_pending_approval: 0,
                server_info: None,
                protocol_version: None,
            }),
            curation: spec.tools.compile(),
            spec,
            shared: Mutex::default(),
            sessions: Mutex::default(),
            opening: Mutex::default(),
            exchangers: Mutex::default(),
            definitions: Mutex::default(),
            stop,
            syncing: tokio::sync::Mutex::new(()),
            catalog_stale: std::sync::atomic::AtomicBool::new(false),
            reader: Mutex::default(),
            pins: Mutex::default(),
            held: Mutex::default(),
        });
        self.entries
            .lock()
            .unwrap()
            .insert(entry.spec.name.clone(), entry.clone());
        let first = if entry.spec.enabled {
            "connecting"
        } else {
            "disabled"
        };
        self.note(&entry.spec.name, first, None);
        if entry.spec.enabled {
            let me = self.clone();
            tokio::spawn(async move { me.supervise(entry, stop_rx).await });
        }
    }

    /// Stops an upstream, closes its connections and removes its tools from the catalog.
    pub fn stop(&self, name: &str) {
        if self.close(name) {
            self.rebuild_view();
        }
    }

    /// Stops everything (graceful shutdown), with one catalog rebuild rather than one per upstream.
    pub fn stop_all(&self) {
        let names: Vec<String> = self.entries.lock().unwrap().keys().cloned().collect();
        for n in names {
            self.close(&n);
        }
        self.rebuild_view();
    }

    /// Ends an upstream's supervisor and connections; whether there was such an upstream.
    fn close(&self, name: &str) -> bool {
        let Some(entry) = self.entries.lock().unwrap().remove(name) else {
            return false;
        };
        entry.stop.send_replace(true);
        if let Some(c) = entry.shared.lock().unwrap().take() {
            c.shutdown();
        }
        entry.exchangers.lock().unwrap().clear();
        for (_, c) in entry.sessions.lock().unwrap().drain() {
            c.shutdown();
        }
        true
    }

    async fn supervise(self: Arc<Self>, entry: Arc<Entry>, mut stop: watch::Receiver<bool>) {
        let name = entry.spec.name.clone();
        let mut backoff = Backoff::new(Duration::from_millis(500), MAX_BACKOFF);
        loop {
            let attempt = async {
                let reader = self.catalog_reader(&entry).await?;
                self.connect(&entry.spec, None, None, reader).await
            };
            let result = tokio::select! {
                r = attempt => r,
                _ = stop.wait_for(|s| *s) => return,
            };
            match result {
                Ok(conn) => {
                    backoff.reset();
                    *entry.shared.lock().unwrap() = Some(conn.clone());
                    // "up" only once the catalog is known: a host that sees the upstream up
                    // also sees its tools.
                    self.sync(&entry, &conn).await;
                    self.note(&name, "up", None);
                    {
                        let mut h = entry.health.lock().unwrap();
                        h.status = "up".into();
                        h.last_error = entry
                            .catalog_stale
                            .load(std::sync::atomic::Ordering::Acquire)
                            .then(|| Self::stale_catalog(&entry));
                        h.up_since = Some(registry::now_ms());
                        h.server_info = conn.init.get().and_then(|i| i.get("serverInfo")).cloned();
                        h.protocol_version = conn
                            .init
                            .get()
                            .and_then(|i| i.get("protocolVersion"))
                            .and_then(Value::as_str)
                            .map(str::to_string);
                    }
                    self.rebuild_view();
                    tracing::info!(upstream = %name, "upstream connected");
                    tokio::select! {
                        _ = conn.closed() => {}
                        _ = self.keep_pinging(&conn) => {}
                        _ = stop.wait_for(|s| *s) => { conn.shutdown(); return; }
                    }
                    // Stopped on purpose (shutdown, removal): `close` shuts the connection after
                    // setting `stop`, and the select may see the closed connection first.
                    if *stop.borrow() {
                        conn.shutdown();
                        return;
                    }
                    let why = conn
                        .close_reason()
                        .unwrap_or_else(|| "connection closed".into());
                    tracing::warn!(upstream = %name, reason = %why, "upstream connection lost; restarting");
                    entry.shared.lock().unwrap().take();
                    self.note(&name, "restarting", Some(why.clone()));
                    {
                        // The tools stay known (not listed) while it restarts: a call to one is
                        // told to retry, not that the tool does not exist.
                        let mut h = entry.health.lock().unwrap();
                        h.status = "restarting".into();
                        h.last_error = Some(why.clone());
                        h.last_restart_reason = Some(why);
                        h.restarts += 1;
                        h.up_since = None;
                    }
                    self.rebuild_view();
                    // A restarted server is usually back at once: the first retry is quick.
                    tokio::select! {
                        _ = tokio::time::sleep(Duration::from_millis(100)) => {}
                        _ = stop.wait_for(|s| *s) => return,
                    }
                    continue;
                }
                Err(_) if *stop.borrow() => return,
                Err(e) => {
                    let e = crate::config::redact_userinfo(&e.to_string()).into_owned();
                    let delay = backoff.next_delay();
                    tracing::warn!(upstream = %name, error = %e, retry_in = ?delay, "upstream unavailable");
                    self.note(&name, "down", Some(e.clone()));
                    {
                        let mut h = entry.health.lock().unwrap();
                        h.status = "down".into();
                        h.last_error = Some(e);
                    }
                    tokio::select! {
                        _ = tokio::time::sleep(delay) => {}
                        _ = stop.wait_for(|s| *s) => return,
                    }
                }
            }
        }
    }

    /// Records a health change of `upstream` (a repeat of the last status is not one).
    fn note(&self, upstream: &str, status: &str, reason: Option<String>) {
        let mut all = self.transitions.lock().unwrap();
        let list = all.entry(upstream.to_string()).or_default();
        if list.back().is_some_and(|t| t.status == status) {
            return;
        }
        list.push_back(Transition {
            at: registry::now_ms(),
            status: status.into(),
            reason,
        });
        while list.len() > TRANSITIONS {
            list.pop_front();
        }
    }

    /// An upstream's health changes, oldest first.
    pub fn transitions(&self, upstream: &str) -> Vec<Transition> {
        let all = self.transitions.lock().unwrap();
        all.get(upstream)
            .map(|l| l.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Pings a connection every `server.upstream_ping_secs`; returns when it did not answer (a
    /// hung or restarted upstream that no call touches is found this way). Any answer, even an
    /// error, is life; a lost HTTP session ends the connection on its own.
    async fn keep_pinging(&self, conn: &Arc<Connection>) {
        let Some(every) = self.config.server.upstream_ping else {
            return std::future::pending().await;
        };
        loop {
            tokio::time::sleep(every).await;
            let timeout = every.min(Duration::from_secs(10));
            if let Err(e) = conn.request(PING, None, None, timeout).await {
                conn.set_close_reason(format!("ping failed: {e}"));
                conn.shutdown();
                return;
            }
        }
    }

    /// The token source of an upstream's OAuth client; a new one when its settings changed.
    fn token_source(
        &self,
        upstream: &str,
        server: &str,
        o: &crate::config::UpstreamOAuth,
    ) -> Result<Arc<super::oauth::TokenSource>, UpstreamError> {
        let mut tokens = self.tokens.lock().unwrap();
        if let Some(t) = tokens.get(upstream).filter(|t| t.serves(o, server)) {
            return Ok(t.clone());
        }
        let auth = super::oauth::ClientAuth::of(o, &self.config.env)?;
        let t = super::oauth::TokenSource::new(o.clone(), auth, server);
        tokens.insert(upstream.to_string(), t.clone());
        Ok(t)
    }

    /// For an upstream with `oauth.token_exchange`, the exchanger of a session's connection:
    /// it needs the caller's OAuth access token (a PAT stands for no one the IdP knows).
    fn exchanger(
        &self,
        spec: &UpstreamSpec,
        subject: Option<&Secret>,
    ) -> Result<Option<Arc<super::oauth::TokenSource>>, UpstreamError> {
        let Some((server, o)) = spec
            .transport
            .endpoint()
            .and_then(|e| Some((e.url.as_str(), e.oauth.as_ref()?)))
            .filter(|(_, o)| o.token_exchange)
        else {
            return Ok(None);
        };
        let subject = subject.ok_or_else(|| {
            UpstreamError::Config(format!(
                "upstream {} acts as the signed-in user (token exchange): call it with an OAuth \
                 access token, not a personal access token",
                spec.name
            ))
        })?;
        let auth = super::oauth::ClientAuth::of(o, &self.config.env)?;
        Ok(Some(super::oauth::TokenSource::exchanging(
            o.clone(),
            auth,
            server,
            subject.clone(),
        )))
    }

    /// Opens a connection and performs the MCP handshake. `host_caps`: the capabilities the
    /// downstream host declared (per-session connections), else everything the gateway can relay.
    /// `exchanger`: the session's token source when the upstream exchanges the user's token.
    async fn connect(
        &self,
        spec: &UpstreamSpec,
        owner: Option<String>,
        host_caps: Option<Value>,
        exchanger: Option<Arc<super::oauth::TokenSource>>,
    ) -> Result<Arc<Connection>, UpstreamError> {
        let sink = self
            .sink
            .get()
            .and_then(Weak::upgrade)
            .ok_or_else(|| UpstreamError::Unavailable(spec.name.clone()))?;
        let env = &self.config.env;
        let max_message = self.config.server.max_upstream_message_bytes;
        let parts = match &spec.transport {
            Transport::Stdio(launch) => stdio::spawn(&spec.name, launch, env, max_message)?,
            Transport::Http(endpoint) | Transport::Sse(endpoint) => {
                let mut pairs = Vec::new();
                for (k, v) in &endpoint.headers {
                    let v = v
                        .resolve(env)
                        .map_err(|e| UpstreamError::Config(format!("header {k}: {e}")))?;
                    pairs.push((k.clone(), v.expose().to_string()));
                }
                let auth = match (&endpoint.oauth, exchanger) {
                    (_, Some(x)) => Some(x),
                    (Some(o), None) => Some(self.token_source(&spec.name, &endpoint.url, o)?),
                    // Never without an account: the callers pass the session's or the
                    // catalog reader's (`catalog_reader`).
                    (None, None) if endpoint.user_oauth.is_some() => {
                        return Err(UpstreamError::NeedsConnect {
                            upstream: spec.name.clone(),
                            holder: super::credentials::vault::CATALOG.into(),
                        })
                    }
                    (None, None) => None,
                };
                let legacy = matches!(spec.transport, Transport::Sse(_));
                if let Some(a) = &auth {
                    // Fails the connection with a clear message when the token cannot be had.
                    let t = a.token().await?;
                    if legacy {
                        // The legacy transport's stream is opened once: its token is fixed then.
                        pairs.push(("authorization".into(), format!("Bearer {}", t.expose())));
                    }
                }
                let headers = http::header_map(&pairs)?;
                if legacy {
                    sse::connect(
                        self.upstream_client.clone(),
                        &endpoint.url,
                        headers,
                        max_message,
                    )
                    .await?
                } else {
                    http::connect(
                        self.upstream_client.clone(),
                        &self.plain,
                        &endpoint.url,
                        headers,
                        auth,
                        max_message,
                    )?
                }
            }
        };
        // Roots are each host's own: a shared connection that had them would keep the first
        // host's and show them to every other (issue 37). It declares none; a per-session one
        // (and the catalog connection of a per-session upstream, so that the catalog lists what
        // sessions will see) declares what the gateway can relay.
        let shared = owner.is_none() && spec.sharing == Sharing::Shared;
        let conn = Connection::start(&spec.name, owner, parts, sink);
        let caps = host_caps.unwrap_or_else(|| {
            let mut caps = json!({ "sampling": {}, "elicitation": { "form": {}, "url": {} } });
            if !shared {
                caps["roots"] = json!({ "listChanged": true });
            }
            caps
        });
        let timeout = self.timeout_from(spec.timeout_secs);
        // Streamable HTTP upstreams are asked first whether they speak 2026-07-28; stdio ones
        // are not (a 2025 server may ignore an unknown method and stall the start-up).
        if matches!(spec.transport, Transport::Http(_))
            && self.discover(&conn, &caps, timeout).await
        {
            return Ok(conn);
        }
        let params = json!({
            "protocolVersion": Revision::SESSIONFUL[0].as_str(),
            "capabilities": caps,
            "clientInfo": { "name": "mcp-gateway", "version": env!("CARGO_PKG_VERSION") },
        });
        let resp = conn
            .request(INITIALIZE, Some(params), None, timeout)
            .await
            .map_err(|e| UpstreamError::Handshake(e.to_string()))?;
        if let Some(err) = McpError::from_response(&resp) {
            conn.shutdown();
            return Err(UpstreamError::Handshake(err.to_string()));
        }
        let result = resp.get("result").cloned().unwrap_or(Value::Null);
        let version = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        if Revision::sessionful(version).is_none() {
            conn.shutdown();
            return Err(UpstreamError::Handshake(format!(
                "unsupported protocol version {version:?}"
            )));
        }
        let _ = conn.init.set(result);
        conn.notify(NOTIFY_INITIALIZED, None);
        Ok(conn)
    }

    /// Tries `server/discover`; true when the upstream speaks 2026-07-28 (the connection is then
    /// set up for it, with a `subscriptions/listen` stream for its list changes).
    async fn discover(&self, conn: &Arc<Connection>, caps: &Value, timeout: Duration) -> bool {
        let params = super::connection::envelope(None, caps);
        let Ok(resp) = conn
            .request(SERVER_DISCOVER, Some(params), None, timeout)
            .await
        else {
            return false;
        };
        let Some(mut result) = resp.get("result").cloned() else {
            return false;
        };
        let modern = result
            .get("supportedVersions")
            .and_then(Value::as_array)
            .is_some_and(|v| v.iter().any(|v| v == Revision::Stateless.as_str()));
        if !modern {
            return false;
        }
        result["protocolVersion"] = json!(Revision::Stateless.as_str());
        if let Some(info) = result
            .get("_meta")
            .and_then(|m| m.get(crate::protocol::envelope::SERVER_INFO))
        {
            result["serverInfo"] = info.clone();
        }
        let server_caps = result.get("capabilities").cloned().unwrap_or_default();
        let _ = conn.init.set(result);
        conn.set_modern(caps.clone());
        let changed =
            |k: &str| server_caps.pointer(&format!("/{k}/listChanged")) == Some(&json!(true));
        let filter = json!({
            "toolsListChanged": changed("tools"),
            "promptsListChanged": changed("prompts"),
            "resourcesListChanged": changed("resources"),
        });
        if filter
            .as_object()
            .is_some_and(|f| f.values().any(|v| v == true))
        {
            let params =
                super::connection::envelope(Some(json!({ "notifications": filter })), caps);
            conn.send_raw(jsonrpc::request(
                json!("gw-listen"),
                SUBSCRIPTIONS_LISTEN,
                Some(params),
            ));
        }
        true
    }

    /// The HTTP client upstream connections use (also for relaying between replicas).
    pub fn http_client(&self) -> &reqwest::Client {
        &self.client
    }
}
