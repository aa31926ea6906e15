//! The fixture upstream for the official conformance suite: a Streamable HTTP MCP server that
//! implements the tools, resources and prompts the suite's server scenarios call, under their
//! original names. It passes the suite on its own, so a failure through the gateway points at the
//! gateway. Raw JSON on purpose, like the gateway: nothing is normalised on the way.
//!
//! Usage: `conformance-fixture [ADDR]` (default 127.0.0.1:0); prints `listening on URL`.

use std::collections::{HashMap, HashSet};
use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::serve::ListenerExt;
use axum::{Json, Router};
use futures::StreamExt;
use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot};
use tokio_stream::wrappers::UnboundedReceiverStream;

/// A 1x1 red PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
/// A minimal WAV header with no samples.
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";

#[derive(Default)]
struct Session {
    caps: Value,
    get_tx: Option<mpsc::UnboundedSender<Value>>,
    pending: HashMap<String, oneshot::Sender<Value>>,
    subscriptions: HashSet<String>,
    /// Responses of calls whose stream was closed on purpose, by the priming event id.
    parked: HashMap<String, oneshot::Receiver<Value>>,
}

mod modern;

/// An open `subscriptions/listen` stream (2026-07-28).
struct Listener {
    id: Value,
    filter: Value,
    tx: mpsc::UnboundedSender<Value>,
}

#[derive(Clone, Default)]
struct App {
    sessions: Arc<Mutex<HashMap<String, Session>>>,
    seq: Arc<AtomicU64>,
    listeners: Arc<Mutex<Vec<Listener>>>,
    /// Toggled by the list-change trigger tools.
    extra_tool: Arc<AtomicBool>,
    extra_prompt: Arc<AtomicBool>,
    /// Signs `requestState`; new on every start.
    state_key: Arc<[u8; 32]>,
}

/// A channel to the host for one call: the POST's SSE stream.
struct Out {
    tx: mpsc::UnboundedSender<Value>,
    app: App,
    session: String,
}

impl Out {
    fn send(&self, msg: Value) {
        let _ = self.tx.send(msg);
    }

    /// Sends a request to the host and waits for its answer.
    async fn ask(&self, method: &str, params: Value) -> Result<Value, String> {
        let id = format!("fx-{}", self.app.seq.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        {
            let mut sessions = self.app.sessions.lock().unwrap();
            let s = sessions.get_mut(&self.session).ok_or("no session")?;
            // sampling/createMessage needs `sampling`, elicitation/create needs `elicitation`.
            let cap = method.split('/').next().unwrap_or_default();
            if s.caps.get(cap).is_none() {
                return Err(format!("the client does not support {cap}"));
            }
            s.pending.insert(id.clone(), tx);
        }
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let resp = tokio::time::timeout(Duration::from_secs(30), rx)
            .await
            .map_err(|_| "client did not answer")?
            .map_err(|_| "session ended")?;
        match resp.get("error") {
            Some(e) => Err(format!("client error: {e}")),
            None => Ok(resp["result"].clone()),
        }
    }
}

fn text(t: &str) -> Value {
    json!({"content": [{"type": "text", "text": t}]})
}

fn tools() -> Value {
    let none = json!({"type": "object", "properties": {}});
    let t = |name: &str, description: &str, schema: &Value| json!({"name": name, "description": description, "inputSchema": schema});
    json!([
        t("test_simple_text", "Returns simple text", &none),
        t("test_image_content", "Returns an image", &none),
        t("test_audio_content", "Returns audio", &none),
        t("test_embedded_resource", "Returns an embedded resource", &none),
        t("test_multiple_content_types", "Returns text, image and resource", &none),
        t("test_tool_with_logging", "Sends log messages while running", &none),
        t("test_tool_with_progress", "Sends progress while running", &none),
        t("test_error_handling", "Always fails", &none),
        t("test_sampling", "Asks the client's LLM", &json!({"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]})),
        t("test_elicitation", "Asks the user", &json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]})),
        t("test_elicitation_sep1034_defaults", "Elicitation with defaults", &none),
        t("test_elicitation_sep1330_enums", "Elicitation with enums", &none),
        t("test_reconnection", "Closes its stream mid-call (SSE polling)", &none),
        {
            "name": "json_schema_2020_12_tool",
            "description": "Tool with JSON Schema 2020-12 features",
            "inputSchema": {
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
                "properties": {
                    "name": {"type": "string"},
                    "address": {"$ref": "#/$defs/address"},
                    "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                    "phone": {"type": "string"},
                    "email": {"type": "string"}
                },
                "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
                "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
                "then": {"required": ["phone"]},
                "else": {"required": ["email"]},
                "additionalProperties": false
            }
        }
    ])
}

/// What the elicitation fixtures ask: (message, requested schema).
fn elicitation_of(tool: &str, params: &Value) -> (String, Value) {
    match tool {
        "test_elicitation_sep1034_defaults" => (
            "Please review your information".into(),
            json!({"type": "object", "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "score": {"type": "number", "default": 95.5},
                "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
                "verified": {"type": "boolean", "default": true}}}),
        ),
        "test_elicitation_sep1330_enums" => (
            "Please choose options".into(),
            json!({"type": "object", "properties": {
                "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                "titledSingle": {"type": "string", "oneOf": [{"const": "value1", "title": "First Option"}, {"const": "value2", "title": "Second Option"}, {"const": "value3", "title": "Third Option"}]},
                "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
                "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                "titledMulti": {"type": "array", "items": {"anyOf": [{"const": "value1", "title": "First Choice"}, {"const": "value2", "title": "Second Choice"}, {"const": "value3", "title": "Third Choice"}]}}}}),
        ),
        _ => (
            params
                .pointer("/arguments/message")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            json!({"type": "object", "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"}}, "required": ["username", "email"]}),
        ),
    }
}

async fn call_tool(out: &Out, params: &Value) -> Result<Value, (i64, String)> {
    let name = params["name"].as_str().unwrap_or_default();
    let args = &params["arguments"];
    let log = |msg: &str| json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "logger": "fixture", "data": msg}});
    Ok(match name {
        "test_simple_text" => text("This is a simple text response for testing."),
        "test_image_content" => {
            json!({"content": [{"type": "image", "data": PNG, "mimeType": "image/png"}]})
        }
        "test_audio_content" => {
            json!({"content": [{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]})
        }
        "test_embedded_resource" => {
            json!({"content": [{"type": "resource", "resource": {"uri": "test://embedded-resource", "mimeType": "text/plain", "text": "This is an embedded resource content."}}]})
        }
        "test_multiple_content_types" => json!({"content": [
            {"type": "text", "text": "Multiple content types test:"},
            {"type": "image", "data": PNG, "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "test://mixed-content-resource", "mimeType": "application/json", "text": "{\"test\":\"data\",\"value\":123}"}}
        ]}),
        "test_tool_with_logging" => {
            out.send(log("Tool execution started"));
            tokio::time::sleep(Duration::from_millis(50)).await;
            out.send(log("Tool processing data"));
            tokio::time::sleep(Duration::from_millis(50)).await;
            out.send(log("Tool execution completed"));
            text("Tool with logging executed successfully")
        }
        "test_tool_with_progress" => {
            let token = params.pointer("/_meta/progressToken").cloned();
            for (i, p) in [0, 50, 100].into_iter().enumerate() {
                if i > 0 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                if let Some(t) = &token {
                    out.send(json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": t, "progress": p, "total": 100}}));
                }
            }
            text("Tool with progress executed successfully")
        }
        "test_error_handling" => {
            json!({"isError": true, "content": [{"type": "text", "text": "This tool intentionally returns an error for testing"}]})
        }
        "test_sampling" => {
            let prompt = args["prompt"].as_str().unwrap_or_default();
            let r = out
                .ask("sampling/createMessage", json!({"messages": [{"role": "user", "content": {"type": "text", "text": prompt}}], "maxTokens": 100}))
                .await
                .map_err(|e| (-32603, e))?;
            let answer = r
                .pointer("/content/text")
                .and_then(Value::as_str)
                .unwrap_or_default();
            text(&format!("LLM response: {answer}"))
        }
        "test_elicitation"
        | "test_elicitation_sep1034_defaults"
        | "test_elicitation_sep1330_enums" => {
            let (message, schema) = elicitation_of(name, params);
            let r = out
                .ask(
                    "elicitation/create",
                    json!({"message": message, "requestedSchema": schema}),
                )
                .await
                .map_err(|e| (-32603, e))?;
            let (action, content) = (r["action"].as_str().unwrap_or_default(), &r["content"]);
            text(&if name == "test_elicitation" {
                format!("User response: <action: {action}, content: {content}>")
            } else {
                format!("Elicitation completed: action={action}, content={content}")
            })
        }
        "json_schema_2020_12_tool" => text("ok"),
        "test_reconnection" => text("Reconnection test completed"),
        other => return Err((-32602, format!("unknown tool: {other}"))),
    })
}

fn resources() -> Value {
    json!([
        {"uri": "test://static-text", "name": "static-text", "description": "A static text resource", "mimeType": "text/plain"},
        {"uri": "test://static-binary", "name": "static-binary", "description": "A static binary resource", "mimeType": "image/png"},
        {"uri": "test://watched-resource", "name": "watched-resource", "description": "A resource to subscribe to", "mimeType": "text/plain"}
    ])
}

fn read_resource(uri: &str) -> Result<Value, (i64, String, Value)> {
    if uri == "test://static-text" {
        return Ok(
            json!({"contents": [{"uri": uri, "mimeType": "text/plain", "text": "This is the content of the static text resource."}]}),
        );
    }
    if uri == "test://static-binary" {
        return Ok(json!({"contents": [{"uri": uri, "mimeType": "image/png", "blob": PNG}]}));
    }
    if uri == "test://watched-resource" {
        return Ok(
            json!({"contents": [{"uri": uri, "mimeType": "text/plain", "text": "Watched resource content."}]}),
        );
    }
    if let Some(id) = uri
        .strip_prefix("test://template/")
        .and_then(|r| r.strip_suffix("/data"))
        .filter(|id| !id.contains('/'))
    {
        let data = json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
        return Ok(
            json!({"contents": [{"uri": uri, "mimeType": "application/json", "text": data.to_string()}]}),
        );
    }
    Err((-32602, "Resource not found".into(), json!({"uri": uri})))
}

fn prompts() -> Value {
    json!([
        {"name": "test_simple_prompt", "description": "A simple prompt"},
        {"name": "test_prompt_with_arguments", "description": "A prompt with arguments", "arguments": [
            {"name": "arg1", "description": "First test argument", "required": true},
            {"name": "arg2", "description": "Second test argument", "required": true}]},
        {"name": "test_prompt_with_embedded_resource", "description": "A prompt with an embedded resource", "arguments": [
            {"name": "resourceUri", "description": "URI of the resource to embed", "required": true}]},
        {"name": "test_prompt_with_image", "description": "A prompt with an image"}
    ])
}

fn get_prompt(params: &Value) -> Result<Value, (i64, String)> {
    let a = &params["arguments"];
    let user = |content: Value| json!({"role": "user", "content": content});
    Ok(match params["name"].as_str().unwrap_or_default() {
        "test_simple_prompt" => {
            json!({"messages": [user(json!({"type": "text", "text": "This is a simple prompt for testing."}))]})
        }
        "test_prompt_with_arguments" => {
            json!({"messages": [user(json!({"type": "text", "text": format!(
            "Prompt with arguments: arg1='{}', arg2='{}'", a["arg1"].as_str().unwrap_or_default(), a["arg2"].as_str().unwrap_or_default())}))]})
        }
        "test_prompt_with_embedded_resource" => json!({"messages": [
            user(json!({"type": "resource", "resource": {"uri": a["resourceUri"].as_str().unwrap_or("test://example-resource"), "mimeType": "text/plain", "text": "Embedded resource content for testing."}})),
            user(json!({"type": "text", "text": "Please process the embedded resource above."}))]}),
        "test_prompt_with_image" => json!({"messages": [
            user(json!({"type": "image", "data": PNG, "mimeType": "image/png"})),
            user(json!({"type": "text", "text": "Please analyze the image above."}))]}),
        other => return Err((-32602, format!("unknown prompt: {other}"))),
    })
}

fn is_local(host: &str) -> bool {
    let h = host.rsplit_once(':').map_or(host, |(h, p)| {
        if p.chars().all(|c| c.is_ascii_digit()) {
            h
        } else {
            host
        }
    });
    matches!(h, "localhost" | "127.0.0.1" | "[::1]")
}

fn rpc_error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

fn sse(rx: mpsc::UnboundedReceiver<Value>, first: Option<Event>) -> Response {
    let events = futures::stream::iter(first.map(Ok::<_, Infallible>))
        .chain(UnboundedReceiverStream::new(rx).map(|m| Ok(Event::default().data(m.to_string()))));
    Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response()
}

async fn handle_post(State(app): State<App>, headers: HeaderMap, body: Bytes) -> Response {
    if let Some(h) = headers.get("host").and_then(|v| v.to_str().ok()) {
        if !is_local(h) {
            return (StatusCode::FORBIDDEN, "host not allowed").into_response();
        }
    }
    if let Some(o) = headers.get("origin").and_then(|v| v.to_str().ok()) {
        if !is_local(o.split("://").nth(1).unwrap_or("")) {
            return (StatusCode::FORBIDDEN, "origin not allowed").into_response();
        }
    }
    let Ok(msg) = serde_json::from_slice::<Value>(&body) else {
        return (
            StatusCode::BAD_REQUEST,
            Json(rpc_error(&Value::Null, -32700, "parse error")),
        )
            .into_response();
    };
    if modern::is_modern(&headers, &msg) {
        return modern::handle(&app, &headers, msg).await;
    }
    let id = msg.get("id").cloned().unwrap_or(Value::Null);
    let method = msg
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if method == "initialize" {
        let sid = uuid::Uuid::new_v4().simple().to_string();
        let caps = msg
            .pointer("/params/capabilities")
            .cloned()
            .unwrap_or(json!({}));
        app.sessions.lock().unwrap().insert(
            sid.clone(),
            Session {
                caps,
                ..Default::default()
            },
        );
        let version = msg
            .pointer("/params/protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or("2025-11-25");
        let version = if ["2025-11-25", "2025-06-18", "2025-03-26"].contains(&version) {
            version
        } else {
            "2025-11-25"
        };
        let result = json!({"protocolVersion": version, "capabilities": {
            "tools": {"listChanged": true}, "resources": {"subscribe": true, "listChanged": true},
            "prompts": {"listChanged": true}, "logging": {}, "completions": {}},
            "serverInfo": {"name": "conformance-fixture", "version": "1.0.0"}});
        let mut r = Json(json!({"jsonrpc": "2.0", "id": id, "result": result})).into_response();
        r.headers_mut()
            .insert("mcp-session-id", HeaderValue::from_str(&sid).unwrap());
        return r;
    }
    let Some(sid) = headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
    else {
        return (
            StatusCode::BAD_REQUEST,
            Json(rpc_error(&id, -32600, "missing session")),
        )
            .into_response();
    };
    if !app.sessions.lock().unwrap().contains_key(&sid) {
        return (
            StatusCode::NOT_FOUND,
            Json(rpc_error(&id, -32600, "unknown session")),
        )
            .into_response();
    }
    if msg.get("method").is_none() {
        // A response to one of our requests.
        let key = id
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| id.to_string());
        if let Some(tx) = app
            .sessions
            .lock()
            .unwrap()
            .get_mut(&sid)
            .and_then(|s| s.pending.remove(&key))
        {
            let _ = tx.send(msg);
        }
        return StatusCode::ACCEPTED.into_response();
    }
    if msg.get("id").is_none() {
        return StatusCode::ACCEPTED.into_response();
    }
    let params = msg.get("params").cloned().unwrap_or(json!({}));
    let result: Result<Value, (i64, String, Option<Value>)> = match method.as_str() {
        "ping" | "logging/setLevel" => Ok(json!({})),
        "tools/list" => Ok(json!({"tools": tools()})),
        "resources/list" => Ok(json!({"resources": resources()})),
        "resources/templates/list" => Ok(json!({"resourceTemplates": [
            {"uriTemplate": "test://template/{id}/data", "name": "template", "description": "A templated resource", "mimeType": "application/json"}]})),
        "resources/read" => read_resource(params["uri"].as_str().unwrap_or_default())
            .map_err(|(c, m, d)| (c, m, Some(d))),
        "resources/subscribe" | "resources/unsubscribe" => {
            let uri = params["uri"].as_str().unwrap_or_default().to_string();
            let mut sessions = app.sessions.lock().unwrap();
            let s = sessions.get_mut(&sid).unwrap();
            if method == "resources/subscribe" {
                s.subscriptions.insert(uri);
            } else {
                s.subscriptions.remove(&uri);
            }
            Ok(json!({}))
        }
        "prompts/list" => Ok(json!({"prompts": prompts()})),
        "prompts/get" => get_prompt(&params).map_err(|(c, m)| (c, m, None)),
        "completion/complete" => Ok(
            json!({"completion": {"values": ["paris", "park", "party"], "total": 3, "hasMore": false}}),
        ),
        "tools/call" => {
            let (tx, rx) = mpsc::unbounded_channel();
            let out = Out {
                tx: tx.clone(),
                app: app.clone(),
                session: sid.clone(),
            };
            if params["name"] == "test_reconnection" {
                // SSE polling (SEP-1699): prime, close the stream, answer on the resumed one.
                let eid = format!("r-{}", app.seq.fetch_add(1, Ordering::Relaxed));
                let (done_tx, done_rx) = oneshot::channel();
                app.sessions
                    .lock()
                    .unwrap()
                    .get_mut(&sid)
                    .unwrap()
                    .parked
                    .insert(eid.clone(), done_rx);
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    let _ = done_tx.send(json!({"jsonrpc": "2.0", "id": id, "result": text("Reconnection test completed")}));
                });
                let first = Event::default()
                    .id(eid)
                    .retry(Duration::from_millis(200))
                    .data("");
                let (_keep, closed) = mpsc::unbounded_channel();
                drop(_keep);
                return sse(closed, Some(first));
            }
            tokio::spawn(async move {
                let r = call_tool(&out, &params).await;
                out.send(match r {
                    Ok(v) => json!({"jsonrpc": "2.0", "id": id, "result": v}),
                    Err((c, m)) => rpc_error(&id, c, &m),
                });
            });
            drop(tx);
            return sse(rx, None);
        }
        _ => Err((-32601, format!("method not found: {method}"), None)),
    };
    let body = match result {
        Ok(r) => json!({"jsonrpc": "2.0", "id": id, "result": r}),
        Err((c, m, d)) => {
            let mut e = rpc_error(&id, c, &m);
            if let Some(d) = d {
                e["error"]["data"] = d;
            }
            e
        }
    };
    Json(body).into_response()
}

async fn handle_get(State(app): State<App>, headers: HeaderMap) -> Response {
    let Some(sid) = headers.get("mcp-session-id").and_then(|v| v.to_str().ok()) else {
        return (StatusCode::BAD_REQUEST, "missing session").into_response();
    };
    let last = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let mut sessions = app.sessions.lock().unwrap();
    let Some(s) = sessions.get_mut(sid) else {
        return (StatusCode::NOT_FOUND, "unknown session").into_response();
    };
    let (tx, rx) = mpsc::unbounded_channel();
    if let Some(parked) = last.and_then(|l| s.parked.remove(&l)) {
        tokio::spawn(async move {
            if let Ok(resp) = parked.await {
                let _ = tx.send(resp);
            }
        });
        return sse(rx, None);
    }
    s.get_tx = Some(tx);
    sse(rx, None)
}

async fn handle_delete(State(app): State<App>, headers: HeaderMap) -> StatusCode {
    let sid = headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    match app.sessions.lock().unwrap().remove(sid) {
        Some(_) => StatusCode::OK,
        None => StatusCode::NOT_FOUND,
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:0".into());
    let mut key = [0u8; 32];
    key[..16].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    key[16..].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
    let app = App {
        state_key: Arc::new(key),
        ..Default::default()
    };
    let router = Router::new()
        .route(
            "/mcp",
            post(handle_post).get(handle_get).delete(handle_delete),
        )
        .with_state(app);
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    axum::serve(
        listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        }),
        router,
    )
    .await?;
    Ok(())
}
