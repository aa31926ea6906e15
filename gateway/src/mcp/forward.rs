//! The upstream half of a host's call: the connection it goes on (the session's own or a shared
//! one), the gateway's progress token, the request written or built and sent, the wait for its
//! answer; a replay after a lost upstream session; the rounds of questions a 2026-07-28
//! upstream asks a 2025 host; and the call's metrics.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::dispatch::Dispatcher;
use super::outgoing::{Changes, Outgoing};
use super::session::{PendingClient, Session};
use crate::metrics;
use crate::protocol::{jsonrpc, Answer, McpError, Member, Method};
use crate::upstream::connection::{Answered, Routing, WriteParams};
use crate::upstream::credentials::vault::user_holder;
use crate::upstream::{CallCtx, Caller, Connection, ProgressRoute, UpstreamError};

/// The gateway's progress tokens: unique within the process.
static PROGRESS_SEQ: AtomicU64 = AtomicU64::new(1);

impl Dispatcher {
    /// Sends a request to an upstream on behalf of the session and waits for its result.
    ///
    /// `outgoing` makes the upstream's params from the host's; they are written where the
    /// request goes out (see [`super::outgoing`]). A replay after a lost upstream session, or
    /// another round of a 2025 host's answers to a 2026-07-28 upstream's questions, writes them
    /// again: the params (whose arguments may be large) are never copied.
    pub(super) async fn forward(
        &self,
        session: &Arc<Session>,
        id: &Value,
        upstream: &str,
        method: &Method,
        outgoing: Outgoing<'_>,
    ) -> Result<Answer, McpError> {
        let ups = &self.hub.upstreams;
        // A 2026-07-28 host declares capabilities per request; its shared per-session
        // connections are opened with everything the gateway can relay.
        let host_caps = (!session.modern).then_some(&session.client_caps);
        let principal = session.principal();
        let caller = Caller {
            key: principal.key(),
            bearer: principal.bearer.as_ref(),
        };
        let mut conn = match ups
            .connection_for(upstream, &session.conn_key, host_caps, caller)
            .await
        {
            Ok(c) => c,
            Err(UpstreamError::NeedsConnect { holder, .. }) => {
                return self.connect_needed(session, upstream, method, &holder)
            }
            Err(e) => return Err(McpError::upstream_unavailable(upstream, &e.to_string())),
        };
        let progress_key = progress_route(&conn, session, id, &outgoing);
        // What a round of questions adds to the host's params (`None`: takes away).
        let mut answered: Vec<(&str, Option<Value>)> = Vec::new();
        let call = Forwarded {
            session,
            id,
            upstream,
            method,
            outgoing: &outgoing,
            progress: progress_key.as_deref(),
        };
        let started = std::time::Instant::now();
        let tool = (*method == Method::ToolsCall)
            .then(|| outgoing.replace.1.as_str())
            .flatten();
        let again = conn.may_lose_session() || (!session.modern && conn.is_modern());
        let mut result = self.call_upstream(&call, &conn, &answered).await;
        // The upstream lost our session before it processed the call (it restarted): once the
        // connection is re-initialised the call goes again, once, never twice.
        if let Err(e) = &mut result {
            if take_replayable(e)
                && again
                && ups
                    .reconnected(upstream, &conn, ups.timeout_of(upstream).min(REPLAY_WAIT))
                    .await
            {
                if let Ok(fresh) = ups
                    .connection_for(upstream, &session.conn_key, host_caps, caller)
                    .await
                {
                    tracing::info!(
                        upstream,
                        method = method.as_str(),
                        "call replayed after the upstream session was lost"
                    );
                    conn = fresh;
                    result = self.call_upstream(&call, &conn, &answered).await;
                    if let Err(e) = &mut result {
                        take_replayable(e);
                    }
                }
            }
        }
        // The upstream refused the user's own token and it could not be renewed, or it wants
        // more scope: the user connects (again), and their next call opens a new connection.
        if let Err(e) = &mut result {
            if take_marker(e, crate::upstream::http::NEEDS_CONNECT) {
                ups.drop_session_connection(upstream, &session.conn_key);
                let holder = user_holder(principal.key());
                return self.connect_needed(session, upstream, method, &holder);
            }
        }
        // Whatever made the upstream unavailable, the host learns which one, and that a retry
        // may help.
        if let Err(e) = &mut result {
            if e.code == jsonrpc::UPSTREAM_UNAVAILABLE && e.data.is_none() {
                e.data = Some(json!({ "upstream": upstream, "retry": true }));
            }
        }
        // A 2026-07-28 upstream asks its questions in the result; a 2025 host is asked them on
        // its session, and the call is retried with the answers.
        let mut rounds = 0;
        while again && !session.modern && is_input_required(&result) && rounds < MAX_INPUT_ROUNDS {
            rounds += 1;
            let r = result.expect("input required is a result").into_value()?;
            let answers = self.ask_host(session, id, &r).await?;
            answered = vec![
                ("inputResponses", Some(Value::Object(answers))),
                ("requestState", r.get("requestState").cloned()),
            ];
            result = self.call_upstream(&call, &conn, &answered).await;
        }
        if !session.modern && is_input_required(&result) {
            result = Err(McpError::new(
                jsonrpc::INTERNAL_ERROR,
                format!(
                    "upstream {upstream} still asked for input after {MAX_INPUT_ROUNDS} rounds"
                ),
            ));
        }
        if let Some(k) = &progress_key {
            conn.progress.lock().unwrap().remove(k);
        }
        self.count_call(upstream, method, tool, started, &result);
        result
    }

    /// The answer to a call to a `user_oauth` upstream whose caller has not connected their
    /// account there: a URL elicitation (2025-11-25) for hosts that declared them, else the
    /// link in words (a tool error for a tool call, an error otherwise).
    fn connect_needed(
        &self,
        session: &Arc<Session>,
        upstream: &str,
        method: &Method,
        holder: &str,
    ) -> Result<Answer, McpError> {
        let principal = session.principal();
        let by = principal.key();
        let vault = &self.hub.upstreams.vault;
        let unavailable =
            |e: UpstreamError| McpError::upstream_unavailable(upstream, &e.to_string());
        if session.client_caps.pointer("/elicitation/url").is_some() {
            let id = uuid::Uuid::new_v4().to_string();
            let link = vault
                .link(upstream, holder, by, Some(&id))
                .map_err(unavailable)?;
            let message = connect_message(upstream, &link);
            let elicitation = json!({"mode": "url", "elicitationId": id, "url": link,
                                     "message": message});
            return Err(McpError::new(jsonrpc::URL_ELICITATION_REQUIRED, message)
                .with_data(json!({ "elicitations": [elicitation] })));
        }
        let link = vault
            .link(upstream, holder, by, None)
            .map_err(unavailable)?;
        let message = connect_message(upstream, &link);
        if *method == Method::ToolsCall {
            return Ok(Answer::Built(json!({
                "content": [{ "type": "text", "text": message }],
                "isError": true,
            })));
        }
        Err(McpError::new(jsonrpc::UPSTREAM_UNAVAILABLE, message)
            .with_data(json!({ "upstream": upstream, "connect": link })))
    }

    /// The call's duration by upstream, method and outcome; a tool call's count by tool name.
    fn count_call(
        &self,
        upstream: &str,
        method: &Method,
        tool: Option<&str>,
        started: std::time::Instant,
        result: &Result<Answer, McpError>,
    ) {
        let outcome = metrics::outcome(result);
        self.metrics
            .tool_calls
            .with_label_values(&[upstream, method.as_str(), outcome])
            .observe(started.elapsed().as_secs_f64());
        if let Some(tool) = tool {
            self.metrics
                .tool_calls_by_name
                .with_label_values(&[upstream, tool, outcome])
                .inc();
        }
    }

    /// Asks a 2025 host the questions of an `InputRequiredResult` on its session; the answers
    /// by key, as the upstream's retry carries them.
    async fn ask_host(
        &self,
        session: &Arc<Session>,
        id: &Value,
        result: &Value,
    ) -> Result<Map<String, Value>, McpError> {
        let requests = result
            .get("inputRequests")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let mut waiting = Vec::new();
        for (key, req) in requests {
            let method = req
                .get("method")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let cap = crate::protocol::method::client_capability(method).ok_or_else(|| {
                McpError::internal(format!("the upstream asked for an unknown input: {method}"))
            })?;
            if session.client_caps.get(cap).is_none() {
                return Err(McpError::new(
                    jsonrpc::MISSING_CLIENT_CAPABILITY,
                    format!("the tool needs the client's {cap} capability"),
                )
                .with_data(json!({ "requiredCapabilities": { cap: {} } })));
            }
            let down_id = session.next_request_id();
            let (tx, rx) = tokio::sync::oneshot::channel();
            session.expect_client_answer(&down_id, PendingClient::Gateway(tx));
            let mut msg =
                jsonrpc::request(Value::from(down_id), method, req.get("params").cloned());
            if msg.get("params").is_none() {
                msg["params"] = json!({});
            }
            session.send_related(Some(id), &msg);
            waiting.push((key, rx));
        }
        let mut answers = Map::new();
        for (key, rx) in waiting {
            let resp = tokio::time::timeout(self.hub.upstreams.timeout_of_default(), rx)
                .await
                .map_err(|_| {
                    McpError::new(
                        jsonrpc::UPSTREAM_TIMEOUT,
                        "the client did not answer in time",
                    )
                })?
                .map_err(|_| McpError::new(jsonrpc::INTERNAL_ERROR, "the session ended"))?;
            if let Some(e) = McpError::from_response(&resp) {
                return Err(McpError::new(
                    jsonrpc::INTERNAL_ERROR,
                    format!("the client refused the upstream's request: {}", e.message),
                ));
            }
            answers.insert(
                key,
                resp.get("result").cloned().unwrap_or_else(|| json!({})),
            );
        }
        Ok(answers)
    }

    /// One request upstream for the host's call, in its routing context, on `conn`, with a
    /// round's `answered` questions.
    async fn call_upstream(
        &self,
        call: &Forwarded<'_>,
        conn: &Arc<Connection>,
        answered: &[(&str, Option<Value>)],
    ) -> Result<Answer, McpError> {
        let Forwarded {
            session,
            id,
            upstream,
            method,
            outgoing,
            ..
        } = *call;
        // What the connection changes in the params: the session's envelope is taken only for
        // a 2026-07-28 upstream (a replay may land on a connection of the other revision).
        let envelope = conn.is_modern().then(|| session.envelope());
        let changes = &Changes {
            progress: call.progress,
            envelope: envelope.as_deref(),
            answered,
        };
        if !crate::telemetry::enabled() {
            let written = UpstreamParams {
                outgoing,
                changes,
                method,
            };
            return self
                .send_upstream(
                    session,
                    id,
                    upstream,
                    conn,
                    method,
                    Params::Written(&written),
                )
                .await;
        }
        let mut params = outgoing.build(changes);
        let target = crate::telemetry::target(&params);
        let span = tracing::debug_span!(
            target: crate::telemetry::TARGET,
            "mcp.client",
            otel.name = crate::telemetry::span_name(method.as_str(), target),
            otel.kind = "client",
            otel.status_code = tracing::field::Empty,
            mcp.method.name = method.as_str(),
            gen_ai.tool.name = (*method == Method::ToolsCall).then_some(target).flatten(),
            mcp_gateway.upstream = upstream,
            error.type = tracing::field::Empty,
        );
        // The upstream continues the trace: in `_meta` for every transport, and HTTP upstreams
        // also get it as the `traceparent` header.
        crate::telemetry::inject_meta(&span, &mut params);
        let send = self.send_upstream(session, id, upstream, conn, method, Params::Built(params));
        crate::telemetry::traced(span, send).await
    }

    async fn send_upstream(
        &self,
        session: &Arc<Session>,
        id: &Value,
        upstream: &str,
        conn: &Arc<Connection>,
        method: &Method,
        params: Params<'_>,
    ) -> Result<Answer, McpError> {
        let ups = &self.hub.upstreams;
        let ctx = CallCtx {
            session: session.id.clone(),
            downstream_id: id.clone(),
        };
        let (uid, rx) = match params {
            Params::Built(p) => {
                conn.send_request(method.as_str(), Some(Value::Object(p)), Some(ctx))?
            }
            Params::Written(w) => conn.send_written(method.as_str(), w, Some(ctx))?,
        };
        session.track_inflight(id, conn.clone(), uid);
        let out = conn.wait(uid, rx, ups.timeout_of(upstream)).await;
        session.untrack_inflight(id);
        let resp = match out? {
            Answered::Result(passed) => return Ok(Answer::Passed(passed)),
            Answered::Message(m) => m,
        };
        match McpError::from_response(&resp) {
            Some(e) => Err(e),
            // Taken out, not copied: it is the whole tool result.
            None => Ok(Answer::Built(
                match resp {
                    Value::Object(mut m) => m.remove("result"),
                    _ => None,
                }
                .unwrap_or_else(|| json!({})),
            )),
        }
    }
}

/// The host's progress token is unique only within its session: the upstream gets one that is
/// unique within the gateway, routed back to the host's on `conn` until the call ends.
fn progress_route(
    conn: &Connection,
    session: &Session,
    id: &Value,
    outgoing: &Outgoing<'_>,
) -> Option<String> {
    let token = outgoing
        .host
        .and_then(|p| p.member("_meta"))
        .and_then(|m| m.member("progressToken"))
        .cloned()?;
    let key = format!("gwp-{}", PROGRESS_SEQ.fetch_add(1, Ordering::Relaxed));
    conn.progress.lock().unwrap().insert(
        key.clone(),
        ProgressRoute {
            session: session.id.clone(),
            token,
            downstream_id: id.clone(),
        },
    );
    Some(key)
}

/// What stays the same each time a host's call is sent upstream (again after a lost upstream
/// session, or with a round of answers).
struct Forwarded<'a> {
    session: &'a Arc<Session>,
    id: &'a Value,
    upstream: &'a str,
    method: &'a Method,
    outgoing: &'a Outgoing<'a>,
    /// The gateway's progress token for the upstream.
    progress: Option<&'a str>,
}

/// A forwarded request's params: built (a traced call adds its context to them), or written
/// where the request goes out.
enum Params<'a> {
    Built(Map<String, Value>),
    Written(&'a UpstreamParams<'a>),
}

/// The params of one request upstream, as the connection writes them.
struct UpstreamParams<'a> {
    outgoing: &'a Outgoing<'a>,
    changes: &'a Changes<'a>,
    method: &'a Method,
}

impl WriteParams for UpstreamParams<'_> {
    fn write(&self, out: &mut Vec<u8>) {
        self.outgoing.write(self.changes, out);
    }

    fn build(&self) -> Value {
        Value::Object(self.outgoing.build(self.changes))
    }

    fn routing(&self) -> Routing<'_> {
        self.outgoing.routing(self.method.as_str(), self.changes)
    }
}

/// How long a call whose upstream session was lost waits for the upstream to be back before
/// it is answered "restarting, retry".
const REPLAY_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Rounds of questions a 2025 host answers for one call before the gateway gives up.
const MAX_INPUT_ROUNDS: usize = 8;

/// Whether an error says the call may be replayed; the internal marker is removed either way.
fn take_replayable(e: &mut McpError) -> bool {
    take_marker(e, crate::upstream::http::REPLAYABLE)
}

/// What a user who must connect reads.
fn connect_message(upstream: &str, link: &str) -> String {
    format!(
        "{upstream} acts with your own account there, which is not connected (or no longer \
         works). Open this link in your browser to connect it, then call again: {link}"
    )
}

/// Whether `e` carries the connection's `marker` (taken out: the host never sees it).
fn take_marker(e: &mut McpError, marker: &str) -> bool {
    let Some(d) = e.data.as_mut().and_then(Value::as_object_mut) else {
        return false;
    };
    let found = d.remove(marker).is_some();
    if d.is_empty() {
        e.data = None;
    }
    found
}

fn is_input_required(r: &Result<Answer, McpError>) -> bool {
    matches!(r, Ok(a) if a.is_input_required())
}
