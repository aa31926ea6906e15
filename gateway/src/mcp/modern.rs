//! MCP 2026-07-28 for hosts: stateless requests on the same `/mcp` endpoint as 2025 sessions.
//! Each POST carries its own `_meta` envelope (protocol version, client capabilities); the
//! answer is plain JSON with the revision's HTTP status, or an SSE stream when notifications come
//! along. `server/discover`, cache hints on lists, `subscriptions/listen` streams, and the bridge
//! for 2025 upstreams that ask the host something mid-call: their requests come back to the host
//! as an `InputRequiredResult` with a signed `requestState`, and the retry's `inputResponses`
//! answer the upstream call that is still waiting (see [`Flight`]).

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Map, Value};
use tokio::sync::mpsc;
use tokio_stream::wrappers::UnboundedReceiverStream;
use tracing::Instrument;

use super::flight::{Flight, Running};
use super::listener::Listener;
use super::reply;
use super::request_state::{self, Claim};
use crate::auth::Principal;
use crate::protocol::envelope::{
    decode_header, CLIENT_CAPS, LOG_LEVEL, METHOD_HEADER, NAME_HEADER, PROTOCOL_VERSION,
    SERVER_INFO, SESSION_HEADER, VERSION_HEADER,
};
use crate::protocol::method::{INITIALIZE, NOTIFY_SUBSCRIPTIONS_ACKNOWLEDGED};
use crate::protocol::{jsonrpc, Answer, McpError, Member, Method, Reply, Revision};
use crate::state::AppState;
/// How long a call waits for the host's retry with the answers before it is given up.
const PARK_FOR: Duration = Duration::from_secs(300);
/// Requests an upstream makes of the host in quick succession go out in one result.
const ASK_GATHER: Duration = Duration::from_millis(30);

/// Whether a POST is a 2026-07-28 request: it names no session, and it is not a 2025
/// `initialize` (one without a version header, or with a 2025 one).
pub fn is_modern(headers: &HeaderMap, msg: &Value) -> bool {
    if headers.contains_key(SESSION_HEADER) {
        return false;
    }
    let header = headers.get(VERSION_HEADER).and_then(|v| v.to_str().ok());
    jsonrpc::method(msg) != Some(INITIALIZE)
        || header.is_some_and(|v| Revision::sessionful(v).is_none())
}

/// The checks of the revision, in the SDKs' order: the `_meta` envelope (-32602), the routing
/// headers against the body (-32020), then the version (-32022).
fn check_envelope(headers: &HeaderMap, method: &Method, params: &Value) -> Result<(), McpError> {
    let Some(meta) = params.member("_meta").and_then(Value::as_object) else {
        return Err(McpError::invalid_params(format!(
            "params._meta must carry {PROTOCOL_VERSION} and {CLIENT_CAPS} (2026-07-28); \
             for a 2025 revision, send initialize first and then the Mcp-Session-Id header"
        )));
    };
    for key in [PROTOCOL_VERSION, CLIENT_CAPS] {
        if meta.member(key).is_none() {
            return Err(McpError::invalid_params(format!(
                "params._meta is missing {key}"
            )));
        }
    }
    let header = |n: &str| headers.get(n).and_then(|v| v.to_str().ok());
    let mismatch = |what: &str| McpError::new(jsonrpc::HEADER_MISMATCH, what.to_string());
    let Some(version) = meta.member(PROTOCOL_VERSION).and_then(Value::as_str) else {
        return Err(McpError::invalid_params(format!(
            "{PROTOCOL_VERSION} must be a string"
        )));
    };
    if header(VERSION_HEADER) != Some(version) {
        return Err(mismatch(
            "the MCP-Protocol-Version header is missing or differs from _meta's protocol version",
        ));
    }
    if header(METHOD_HEADER) != Some(method.as_str()) {
        return Err(mismatch(
            "the Mcp-Method header is missing or differs from the method",
        ));
    }
    let name_key = match method {
        Method::ToolsCall | Method::PromptsGet => Some("name"),
        Method::ResourcesRead => Some("uri"),
        _ => None,
    };
    if let Some(body) = name_key
        .and_then(|k| params.member(k))
        .and_then(Value::as_str)
    {
        if header(NAME_HEADER).and_then(decode_header).as_deref() != Some(body) {
            return Err(mismatch(
                "the Mcp-Name header is missing or differs from the request's name",
            ));
        }
    }
    if Revision::parse(version) != Some(Revision::Stateless) {
        let served = Revision::Stateless.as_str();
        return Err(McpError::new(
            jsonrpc::UNSUPPORTED_VERSION,
            format!("protocol version {version} is not supported"),
        )
        .with_data(json!({ "supported": [served], "requested": version })));
    }
    Ok(())
}

/// List results may be cached by the host for `list_ttl_ms`; a change of the catalog reaches
/// it as `list_changed` on its `subscriptions/listen` stream. With authentication on, lists
/// depend on who asks (roles), so a shared cache must not keep them: `private`.
fn cacheable(state: &AppState, mut r: Value) -> Value {
    r["resultType"] = json!("complete");
    r["ttlMs"] = json!(state.config.server.list_ttl_ms);
    r["cacheScope"] = json!(if state.auth.required() {
        "private"
    } else {
        "public"
    });
    r
}

fn discover(state: &AppState) -> Value {
    json!({
        "supportedVersions": [Revision::Stateless.as_str()],
        "capabilities": reply::capabilities(),
        "instructions": reply::INSTRUCTIONS,
        "resultType": "complete",
        "ttlMs": state.config.server.list_ttl_ms,
        "cacheScope": "public",
        "_meta": { SERVER_INFO: reply::server_info() },
    })
}

pub async fn handle_stateless_post(
    state: AppState,
    principal: std::sync::Arc<Principal>,
    headers: HeaderMap,
    body: Bytes,
    msg: Value,
    scope: Option<String>,
) -> Response {
    let id = jsonrpc::id(&msg);
    match jsonrpc::kind(&msg) {
        // This revision defines no client notifications; cancellation is closing the stream.
        jsonrpc::Kind::Notification => return StatusCode::ACCEPTED.into_response(),
        jsonrpc::Kind::Request => {}
        _ => {
            return McpError::invalid_request("a 2026-07-28 client sends requests only")
                .reply(id, Revision::Stateless)
        }
    }
    let method = Method::parse(jsonrpc::method(&msg).unwrap_or_default());
    let metrics = state.dispatcher.metrics.clone();
    let request = Request {
        state,
        caller: (principal, scope),
        headers,
        body,
        id: id.clone(),
    };
    match serve(request, &method, msg).await {
        Ok(r) => r,
        Err(e) => {
            reply::count(&metrics, &method, &Err::<(), _>(e.clone()));
            e.reply(id, Revision::Stateless)
        }
    }
}

/// A 2026-07-28 request as it arrived.
struct Request {
    state: AppState,
    /// Who calls, on which endpoint (virtual server).
    caller: (std::sync::Arc<Principal>, Option<String>),
    headers: HeaderMap,
    body: Bytes,
    id: Value,
}

/// Answers a request of the revision; errors are answered (and counted) by [`post`].
async fn serve(req: Request, method: &Method, msg: Value) -> Result<Response, McpError> {
    if !method.is_stateless() {
        return Err(McpError::method_not_found(method.as_str()));
    }
    let params = jsonrpc::take_params(msg).unwrap_or_else(|| json!({}));
    if !params.is_object() {
        return Err(McpError::params_not_object());
    }
    check_envelope(&req.headers, method, &params)?;
    let state = &req.state;
    let d = &state.dispatcher;
    let ok = || reply::count(&d.metrics, method, &Ok::<_, McpError>(()));
    let lens = d.lens(&req.caller.0.access, req.caller.1.as_deref(), None);
    if let Some((kind, field)) = method.list_field() {
        let listed = d.list(kind, field, params.as_object(), &lens)?;
        ok();
        return Ok(Json(jsonrpc::result(req.id, cacheable(state, listed))).into_response());
    }
    match method {
        Method::ServerDiscover => {
            ok();
            Ok(Json(jsonrpc::result(req.id, discover(state))).into_response())
        }
        Method::SubscriptionsListen => {
            ok();
            Ok(listen(state, req.id, &params, &lens))
        }
        _ => call(req, method.clone(), params).await,
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

/// A call, or the retry of one the upstream asked the host something in.
async fn call(req: Request, method: Method, params: Value) -> Result<Response, McpError> {
    let Request {
        state,
        caller: (principal, scope),
        headers,
        body,
        id,
    } = req;
    if let Some(token) = params
        .member("requestState")
        .and_then(Value::as_str)
        .filter(|t| request_state::is_ours(t))
    {
        let claim = request_state::open(state.hub.codec.state_key(), token)
            .ok_or_else(|| McpError::invalid_params("requestState failed its integrity check"))?;
        if claim.expires < now_secs() {
            return Err(McpError::invalid_params(
                "requestState has expired: call again without it",
            ));
        }
        if let Some(flight) = state.hub.unpark(&claim.call) {
            if flight.session.owner != principal.key() {
                state.hub.park(claim.call.clone(), flight, PARK_FOR);
                return Err(McpError::invalid_params(
                    "requestState belongs to another caller",
                ));
            }
            flight.session.set_principal(principal);
            if flight.method != method {
                state.hub.park(claim.call.clone(), flight, PARK_FOR);
                return Err(McpError::invalid_params(
                    "requestState belongs to another method",
                ));
            }
            return resume(state, id, params, claim, flight).await;
        }
        if let Some(owner) = claim
            .replica
            .as_deref()
            .filter(|r| Some(*r) != state.config.server.advertise_url.as_deref())
        {
            return Ok(relay(&state, owner, &headers, body).await);
        }
        return Err(McpError::invalid_params(
            "the call this requestState belongs to is no longer pending (it expired or its \
             replica stopped): call again without requestState",
        ));
    }
    let meta = params.member("_meta");
    let caps = meta
        .and_then(|m| m.member(CLIENT_CAPS))
        .cloned()
        .unwrap_or_else(|| json!({}));
    let level = meta
        .and_then(|m| m.member(LOG_LEVEL))
        .and_then(Value::as_str)
        .map(str::to_string);
    let (session, asks) = state.hub.open_request(caps, level, principal, scope);
    let task_state = state.clone();
    let task_session = session.clone();
    let task_id = id.clone();
    let task_method = method.clone();
    let result = Running::new(
        async move {
            task_state
                .dispatcher
                .dispatch(&task_session, &task_id, &task_method, params.as_object())
                .await
        }
        .in_current_span(),
    );
    let flight = Flight {
        session,
        downstream_id: id.clone(),
        method,
        result,
        asks,
        pending: BTreeMap::new(),
    };
    Ok(drive(state, id, flight, None).await)
}

/// The retry of a parked call: the answers go to the upstream, and the call goes on.
async fn resume(
    state: AppState,
    id: Value,
    params: Value,
    claim: Claim,
    mut flight: Flight,
) -> Result<Response, McpError> {
    let answers = match params.get("inputResponses") {
        None => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => {
            state.hub.park(claim.call, flight, PARK_FOR);
            return Err(McpError::invalid_params("inputResponses must be an object"));
        }
    };
    let keys: Vec<String> = flight.pending.keys().cloned().collect();
    for key in keys {
        let Some(answer) = answers.get(&key).filter(|a| a.is_object()) else {
            continue;
        };
        let ask = flight.pending.remove(&key).expect("key listed");
        ask.conn
            .send_raw(jsonrpc::result(ask.upstream_id, answer.clone()));
    }
    Ok(drive(state, id, flight, Some(claim.call)).await)
}

/// Waits for the call's result or the upstream's next questions, and answers the host: the
/// result, or an `InputRequiredResult` (the call parked until the retry).
async fn drive(state: AppState, id: Value, mut flight: Flight, call: Option<String>) -> Response {
    let session = flight.session.clone();
    let downstream_id = flight.downstream_id.clone();
    // Runs in the request's own task while the answer can still be plain JSON (see
    // `reply::answer_in_place`).
    let work = Box::pin(async move {
        loop {
            if !flight.pending.is_empty() {
                break Reply::from(input_required(&state, &id, flight, call));
            }
            tokio::select! {
                out = &mut flight.result => {
                    state.hub.close_request(&flight.session.id);
                    reply::count(&state.dispatcher.metrics, &flight.method, &out);
                    let out = match out {
                        // Most results only lack `resultType`: it is written into the passed
                        // text instead of building the tree.
                        Ok(Answer::Passed(p)) if flight.method != Method::ResourcesRead => {
                            break Reply::new(id.clone(), Ok(Answer::Passed(p.completed())));
                        }
                        // Members are added below: a result that is no object (the
                        // upstream's defect) is an error, not a panic.
                        out => out.and_then(Answer::into_value).and_then(|r| {
                            if r.is_object() {
                                Ok(r)
                            } else {
                                Err(McpError::internal(
                                    "the upstream answered a result that is not a JSON object",
                                ))
                            }
                        }),
                    };
                    break Reply::from(match out {
                        Ok(mut r) => {
                            if r.get("resultType").is_none() {
                                r["resultType"] = json!("complete");
                            }
                            // A 2025 upstream says nothing of caching; a read result must say
                            // something (2026-07-28): not to be cached, and not to be shared.
                            if flight.method == Method::ResourcesRead && r.get("contents").is_some() {
                                if r.get("ttlMs").is_none() {
                                    r["ttlMs"] = json!(0);
                                }
                                if r.get("cacheScope").is_none() {
                                    r["cacheScope"] = json!("private");
                                }
                            }
                            jsonrpc::result(id.clone(), r)
                        }
                        Err(e) => e.to_message(id.clone()),
                    });
                }
                Some(ask) = flight.asks.recv() => {
                    // More questions may come on the upstream's answer stream, which the call
                    // reads: it goes on in a task of its own while they are gathered (and while
                    // the call is parked).
                    flight.result.detach();
                    let mut got = vec![ask];
                    let until = tokio::time::Instant::now() + ASK_GATHER;
                    while let Ok(Some(more)) = tokio::time::timeout_at(until, flight.asks.recv()).await {
                        got.push(more);
                    }
                    for ask in got {
                        flight.pending.insert(flight.session.next_request_id(), ask);
                    }
                }
            }
        }
    });
    reply::answer_in_place(session, downstream_id, work, Revision::Stateless).await
}

/// Parks the call and builds the result that asks the host its questions.
fn input_required(state: &AppState, id: &Value, mut flight: Flight, call: Option<String>) -> Value {
    let requests: Map<String, Value> = flight
        .pending
        .iter()
        .map(|(k, a)| (k.clone(), a.request.clone()))
        .collect();
    let call = call.unwrap_or_else(|| uuid::Uuid::new_v4().simple().to_string());
    let claim = Claim {
        call: call.clone(),
        replica: state.config.server.advertise_url.clone(),
        expires: now_secs() + PARK_FOR.as_secs(),
    };
    let token = request_state::seal(state.hub.codec.state_key(), &claim);
    // Parked, nobody polls the call (detached already when its questions came).
    flight.result.detach();
    state.hub.park(call, flight, PARK_FOR);
    jsonrpc::result(
        id.clone(),
        json!({ "resultType": "input_required", "inputRequests": requests, "requestState": token }),
    )
}

/// Hands a retry to the replica whose call it continues, and its answer back.
async fn relay(state: &AppState, owner: &str, headers: &HeaderMap, body: Bytes) -> Response {
    let mut req = state
        .hub
        .upstreams
        .http_client()
        .post(format!("{owner}/mcp"))
        .body(body);
    for (name, value) in headers {
        let n = name.as_str();
        if n.starts_with("mcp-") || matches!(n, "content-type" | "accept" | "authorization") {
            req = req.header(name, value);
        }
    }
    match req.send().await {
        Ok(resp) => {
            let mut out = Response::builder().status(resp.status().as_u16());
            if let Some(ct) = resp.headers().get(reqwest::header::CONTENT_TYPE) {
                out = out.header("content-type", ct.as_bytes());
            }
            out.body(Body::from_stream(resp.bytes_stream()))
                .unwrap_or_else(|_| StatusCode::BAD_GATEWAY.into_response())
        }
        Err(e) => {
            tracing::warn!(replica = owner, error = %e, "cannot reach the replica that holds a pending call");
            McpError::new(
                jsonrpc::UPSTREAM_UNAVAILABLE,
                "the replica that holds this call cannot be reached: call again without requestState",
            )
            .into_response()
        }
    }
}

fn listen(
    state: &AppState,
    id: Value,
    params: &Value,
    lens: &crate::routing::lens::Lens,
) -> Response {
    let view = state.hub.upstreams.view();
    let asked = params.get("notifications").cloned().unwrap_or_default();
    let flag = |k: &str| asked.get(k).and_then(Value::as_bool).unwrap_or(false);
    let uris: Vec<String> = asked
        .get("resourceSubscriptions")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                // Updates of what the caller may not read are not sent (nor acknowledged).
                .filter(|uri| {
                    view.resolve_resource_uri(uri)
                        .is_some_and(|(up, _)| lens.allows(registry::EntryKind::Resource, &up, uri))
                })
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    drop(view);
    let (tx, rx) = mpsc::unbounded_channel();
    let listener = Listener {
        id,
        tools: flag("toolsListChanged"),
        prompts: flag("promptsListChanged"),
        resources: flag("resourcesListChanged"),
        uris,
        tx,
    };
    let mut honoured = Map::new();
    for (key, on) in [
        ("toolsListChanged", listener.tools),
        ("promptsListChanged", listener.prompts),
        ("resourcesListChanged", listener.resources),
    ] {
        if on {
            honoured.insert(key.into(), json!(true));
        }
    }
    if !listener.uris.is_empty() {
        honoured.insert("resourceSubscriptions".into(), json!(listener.uris));
    }
    listener.send(
        NOTIFY_SUBSCRIPTIONS_ACKNOWLEDGED,
        json!({ "notifications": honoured }),
    );
    state.hub.add_listener(listener);
    let events = UnboundedReceiverStream::new(rx);
    reply::sse_of_messages(events)
}
