//! The fixture's 2026-07-28 (stateless) side: each POST carries its own `_meta` envelope; no
//! session. Implements what the suite's 2026-07-28 scenarios call: `server/discover`, cache hints
//! on lists, `subscriptions/listen`, the input-required (multi round-trip) tools and prompt with an
//! HMAC-signed `requestState`, and the diagnostic tools of `server-stateless`.

use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine;
use hmac::{Hmac, Mac};
use serde_json::{json, Map, Value};
use sha2::Sha256;
use tokio::sync::mpsc;

use super::{App, Listener, Out};

pub const VERSION: &str = "2026-07-28";
const PV: &str = "io.modelcontextprotocol/protocolVersion";
const CAPS: &str = "io.modelcontextprotocol/clientCapabilities";
const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
const SUB_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// Whether a POST is a 2026-07-28 request: no session, and not a 2025 `initialize`.
pub fn is_modern(headers: &HeaderMap, msg: &Value) -> bool {
    if headers.contains_key("mcp-session-id") {
        return false;
    }
    let header = headers
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok());
    msg.get("method").and_then(Value::as_str) != Some("initialize")
        || header.is_some_and(|v| !v.starts_with("2025-") && v != "2024-11-05")
}

fn status_of(code: i64) -> StatusCode {
    match code {
        -32601 => StatusCode::NOT_FOUND,
        -32700 | -32600 | -32602 | -32020 | -32021 | -32022 => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

fn error(id: &Value, code: i64, message: &str, data: Option<Value>) -> Response {
    let mut e = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    if let Some(d) = data {
        e["error"]["data"] = d;
    }
    (status_of(code), Json(e)).into_response()
}

/// `=?base64?...?=` header values carry what plain ASCII cannot.
fn decode_header(v: &str) -> Option<String> {
    match v
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    {
        Some(p) => base64::engine::general_purpose::STANDARD
            .decode(p)
            .ok()
            .and_then(|b| String::from_utf8(b).ok()),
        None => Some(v.to_string()),
    }
}

fn sign(app: &App, payload: &Value) -> String {
    let body = B64.encode(payload.to_string());
    let mut mac = Hmac::<Sha256>::new_from_slice(app.state_key.as_slice()).expect("any key size");
    mac.update(body.as_bytes());
    format!("fx1.{body}.{}", B64.encode(mac.finalize().into_bytes()))
}

fn verify(app: &App, state: &str) -> Option<Value> {
    let (body, tag) = state.strip_prefix("fx1.")?.split_once('.')?;
    let mut mac = Hmac::<Sha256>::new_from_slice(app.state_key.as_slice()).expect("any key size");
    mac.update(body.as_bytes());
    mac.verify_slice(&B64.decode(tag).ok()?).ok()?;
    serde_json::from_slice(&B64.decode(body).ok()?).ok()
}

fn complete(mut r: Value) -> Value {
    r["resultType"] = json!("complete");
    r
}

fn cacheable(r: Value) -> Value {
    let mut r = complete(r);
    r["ttlMs"] = json!(60_000);
    r["cacheScope"] = json!("public");
    r
}

fn elicit(message: &str, field: &str, kind: &str) -> Value {
    json!({"method": "elicitation/create", "params": {"message": message, "requestedSchema": {
        "type": "object", "properties": {field: {"type": kind}}, "required": [field]}}})
}

fn sample(text: &str, max: u32) -> Value {
    json!({"method": "sampling/createMessage", "params": {"messages": [
        {"role": "user", "content": {"type": "text", "text": text}}], "maxTokens": max}})
}

fn roots() -> Value {
    json!({"method": "roots/list", "params": {}})
}

fn input_required(requests: Value, state: Option<String>) -> Value {
    let mut r = json!({"resultType": "input_required", "inputRequests": requests});
    if let Some(s) = state {
        r["requestState"] = json!(s);
    }
    r
}

fn text(t: &str) -> Value {
    complete(super::text(t))
}

/// An answer from `inputResponses` that has the shape of a client result (an object).
fn answer<'a>(params: &'a Value, key: &str) -> Option<&'a Map<String, Value>> {
    params
        .pointer(&format!("/inputResponses/{key}"))?
        .as_object()
}

pub fn tools() -> Value {
    let none = json!({"type": "object", "properties": {}});
    let mut all = super::tools();
    let list = all.as_array_mut().expect("array");
    for (name, description) in [
        (
            "test_input_required_result_elicitation",
            "Asks the user's name (input required)",
        ),
        (
            "test_input_required_result_sampling",
            "Asks the client's LLM (input required)",
        ),
        (
            "test_input_required_result_list_roots",
            "Asks for the client's roots (input required)",
        ),
        (
            "test_input_required_result_request_state",
            "Round-trips a signed requestState",
        ),
        (
            "test_input_required_result_multiple_inputs",
            "Asks three things at once",
        ),
        (
            "test_input_required_result_multi_round",
            "Asks in two rounds",
        ),
        (
            "test_input_required_result_tampered_state",
            "Rejects a tampered requestState",
        ),
        (
            "test_input_required_result_capabilities",
            "Asks only what the client can answer",
        ),
        (
            "test_missing_capability",
            "Needs the client's sampling capability",
        ),
        (
            "test_streaming_elicitation",
            "Asks the user while streaming",
        ),
        (
            "test_logging_tool",
            "Logs only when the request asks for logs",
        ),
        ("test_trigger_tool_change", "Adds or removes a tool"),
        ("test_trigger_prompt_change", "Adds or removes a prompt"),
    ] {
        list.push(json!({"name": name, "description": description, "inputSchema": none}));
    }
    all
}

async fn call_tool(
    app: &App,
    tx: &mpsc::UnboundedSender<Value>,
    params: &Value,
) -> Result<Value, (i64, String, Option<Value>)> {
    let caps = params.pointer(&format!("/_meta/{}", CAPS.replace('/', "~1")));
    let has = |c: &str| caps.and_then(|v| v.get(c)).is_some();
    let name = params["name"].as_str().unwrap_or_default();
    let state = params.get("requestState").and_then(Value::as_str);
    let bad = |m: &str| (-32602, m.to_string(), None);
    Ok(match name {
        "test_input_required_result_elicitation" => {
            if params.get("inputResponses").is_some_and(|r| !r.is_object()) {
                return Err(bad("inputResponses must be an object"));
            }
            match answer(params, "user_name") {
                Some(a) => text(&format!(
                    "Hello, {}!",
                    a.get("content")
                        .and_then(|c| c.get("name"))
                        .and_then(Value::as_str)
                        .unwrap_or("stranger")
                )),
                None => input_required(
                    json!({"user_name": elicit("What is your name?", "name", "string")}),
                    None,
                ),
            }
        }
        "test_input_required_result_sampling" => match answer(params, "capital_question") {
            Some(a) => text(&format!(
                "LLM said: {}",
                a.get("content")
                    .and_then(|c| c.get("text"))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
            )),
            None => input_required(
                json!({"capital_question": sample("What is the capital of France?", 100)}),
                None,
            ),
        },
        "test_input_required_result_list_roots" => match answer(params, "client_roots") {
            Some(a) => text(&format!(
                "Roots: {}",
                a.get("roots").unwrap_or(&Value::Null)
            )),
            None => input_required(json!({"client_roots": roots()}), None),
        },
        "test_input_required_result_request_state"
        | "test_input_required_result_tampered_state" => match state {
            Some(s) => {
                if verify(app, s).is_none_or(|p| p["tool"] != name) {
                    return Err(bad("requestState failed its integrity check"));
                }
                text("state-ok: the requestState was verified")
            }
            None => input_required(
                json!({"confirm": {"method": "elicitation/create", "params": {"message": "Please confirm", "requestedSchema": {
                        "type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}}}}),
                Some(sign(app, &json!({"tool": name}))),
            ),
        },
        "test_input_required_result_multiple_inputs" => {
            let keys = ["user_name", "greeting", "client_roots"];
            let verified = state.and_then(|s| verify(app, s));
            if state.is_some() && verified.is_none() {
                return Err(bad("requestState failed its integrity check"));
            }
            let mut missing = Map::new();
            for (k, req) in keys.iter().zip([
                elicit("What is your name?", "name", "string"),
                sample("Generate a greeting", 50),
                roots(),
            ]) {
                if answer(params, k).is_none() {
                    missing.insert(k.to_string(), req);
                }
            }
            if missing.is_empty() && verified.is_some() {
                text("All three inputs received")
            } else {
                if missing.is_empty() {
                    missing.insert(
                        "user_name".into(),
                        elicit("What is your name?", "name", "string"),
                    );
                }
                input_required(
                    Value::Object(missing),
                    Some(sign(app, &json!({"tool": name}))),
                )
            }
        }
        "test_input_required_result_multi_round" => {
            let round = match state {
                None => 1,
                Some(s) => match verify(app, s) {
                    Some(p) if p["tool"] == name => p["round"].as_u64().unwrap_or(1),
                    _ => return Err(bad("requestState failed its integrity check")),
                },
            };
            match (round, answer(params, "step1"), answer(params, "step2")) {
                (1, Some(_), _) => input_required(
                    json!({"step2": elicit("Step 2: What is your favorite color?", "color", "string")}),
                    Some(sign(app, &json!({"tool": name, "round": 2}))),
                ),
                (2, _, Some(_)) => text("Both rounds answered"),
                (2, _, None) => input_required(
                    json!({"step2": elicit("Step 2: What is your favorite color?", "color", "string")}),
                    Some(sign(app, &json!({"tool": name, "round": 2}))),
                ),
                _ => input_required(
                    json!({"step1": elicit("Step 1: What is your name?", "name", "string")}),
                    Some(sign(app, &json!({"tool": name, "round": 1}))),
                ),
            }
        }
        "test_input_required_result_capabilities" => {
            if params.get("inputResponses").is_some() {
                return Ok(text("Thanks for the answers"));
            }
            let mut requests = Map::new();
            if has("sampling") {
                requests.insert("question".into(), sample("Say hello", 20));
            }
            if has("elicitation") {
                requests.insert(
                    "name".into(),
                    elicit("What is your name?", "name", "string"),
                );
            }
            if has("roots") {
                requests.insert("roots".into(), roots());
            }
            if requests.is_empty() {
                return Err((
                    -32021,
                    "this tool needs sampling, elicitation or roots".into(),
                    Some(json!({"requiredCapabilities": {"sampling": {}}})),
                ));
            }
            input_required(Value::Object(requests), None)
        }
        "test_missing_capability" => {
            if !has("sampling") {
                return Err((
                    -32021,
                    "this tool needs the sampling capability".into(),
                    Some(json!({"requiredCapabilities": {"sampling": {}}})),
                ));
            }
            match answer(params, "llm") {
                Some(_) => text("sampled"),
                None => input_required(json!({"llm": sample("Say hello", 20)}), None),
            }
        }
        "test_streaming_elicitation" => {
            if let Some(t) = params.pointer("/_meta/progressToken") {
                let _ = tx.send(json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": t, "progress": 1}}));
            }
            match answer(params, "confirm") {
                Some(_) => text("confirmed"),
                None => input_required(
                    json!({"confirm": elicit("Continue?", "ok", "boolean")}),
                    None,
                ),
            }
        }
        // The 2025 scenarios' tools that ask the client, in this revision's way: a 2025 host
        // behind the gateway is asked on its session and the gateway retries with the answers.
        "test_sampling" => match answer(params, "llm") {
            Some(a) => text(&format!(
                "LLM response: {}",
                a.get("content")
                    .and_then(|c| c.get("text"))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
            )),
            None => input_required(
                json!({"llm": sample(params.pointer("/arguments/prompt").and_then(Value::as_str).unwrap_or_default(), 100)}),
                None,
            ),
        },
        "test_elicitation"
        | "test_elicitation_sep1034_defaults"
        | "test_elicitation_sep1330_enums" => match answer(params, "user") {
            Some(a) => {
                let action = a.get("action").and_then(Value::as_str).unwrap_or_default();
                let content = a.get("content").cloned().unwrap_or(Value::Null);
                text(&if name == "test_elicitation" {
                    format!("User response: <action: {action}, content: {content}>")
                } else {
                    format!("Elicitation completed: action={action}, content={content}")
                })
            }
            None => {
                let (message, schema) = super::elicitation_of(name, params);
                input_required(
                    json!({"user": {"method": "elicitation/create", "params": {"message": message, "requestedSchema": schema}}}),
                    None,
                )
            }
        },
        "test_tool_with_logging" => {
            if params
                .pointer(&format!("/_meta/{}", LOG_LEVEL.replace('/', "~1")))
                .is_some()
            {
                for m in [
                    "Tool execution started",
                    "Tool processing data",
                    "Tool execution completed",
                ] {
                    let _ = tx.send(json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "logger": "fixture", "data": m}}));
                }
            }
            text("Tool with logging executed successfully")
        }
        "test_logging_tool" => {
            if let Some(level) = params
                .pointer(&format!("/_meta/{}", LOG_LEVEL.replace('/', "~1")))
                .and_then(Value::as_str)
            {
                let _ = tx.send(json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": level, "logger": "fixture", "data": "logged as asked"}}));
            }
            text("logging tool done")
        }
        "test_trigger_tool_change" | "test_trigger_prompt_change" => {
            let tools = name == "test_trigger_tool_change";
            let flag = if tools {
                &app.extra_tool
            } else {
                &app.extra_prompt
            };
            flag.fetch_xor(true, Ordering::Relaxed);
            let (method, key) = if tools {
                ("notifications/tools/list_changed", "toolsListChanged")
            } else {
                ("notifications/prompts/list_changed", "promptsListChanged")
            };
            app.listeners.lock().unwrap().retain(|l| {
                if l.filter.get(key) != Some(&json!(true)) {
                    return !l.tx.is_closed();
                }
                l.tx.send(json!({"jsonrpc": "2.0", "method": method, "params": {"_meta": {SUB_ID: l.id}}}))
                    .is_ok()
            });
            text("list changed")
        }
        _ => {
            // The 2025 fixtures, answered the same way (they ask nothing of the client).
            let out = Out {
                tx: tx.clone(),
                app: app.clone(),
                session: String::new(),
            };
            complete(
                super::call_tool(&out, params)
                    .await
                    .map_err(|(c, m)| (c, m, None))?,
            )
        }
    })
}

fn prompts(app: &App) -> Value {
    let mut all = super::prompts();
    let list = all.as_array_mut().expect("array");
    list.push(json!({"name": "test_input_required_result_prompt", "description": "A prompt that asks the user for context"}));
    if app.extra_prompt.load(Ordering::Relaxed) {
        list.push(json!({"name": "test_dynamic_prompt", "description": "Appears after test_trigger_prompt_change"}));
    }
    all
}

fn get_prompt(params: &Value) -> Result<Value, (i64, String, Option<Value>)> {
    if params["name"] == "test_input_required_result_prompt" {
        return Ok(match answer(params, "user_context") {
            Some(a) => complete(
                json!({"messages": [{"role": "user", "content": {"type": "text", "text": format!(
                "Context: {}", a.get("content").and_then(|c| c.get("context")).and_then(Value::as_str).unwrap_or_default())}}]}),
            ),
            None => input_required(
                json!({"user_context": elicit("What context should the prompt use?", "context", "string")}),
                None,
            ),
        });
    }
    super::get_prompt(params)
        .map(complete)
        .map_err(|(c, m)| (c, m, None))
}

/// The validation every request passes before dispatch (the order of the SDKs' ladder): the
/// `_meta` envelope, the routing headers, then the protocol version.
fn check_envelope(
    headers: &HeaderMap,
    method: &str,
    params: &Value,
) -> Result<(), (i64, String, Option<Value>)> {
    let Some(meta) = params.get("_meta").and_then(Value::as_object) else {
        return Err((
            -32602,
            "params._meta with protocolVersion and clientCapabilities is required".into(),
            None,
        ));
    };
    for key in [PV, CAPS] {
        if !meta.contains_key(key) {
            return Err((-32602, format!("params._meta is missing {key}"), None));
        }
    }
    let h = |n: &str| headers.get(n).and_then(|v| v.to_str().ok());
    let version = meta[PV].as_str().unwrap_or_default();
    if h("mcp-protocol-version") != Some(version) {
        return Err((
            -32020,
            "MCP-Protocol-Version header does not match _meta".into(),
            None,
        ));
    }
    if h("mcp-method") != Some(method) {
        return Err((
            -32020,
            "Mcp-Method header does not match the method".into(),
            None,
        ));
    }
    let name_key = match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    };
    if let Some(body) = name_key.and_then(|k| params.get(k)).and_then(Value::as_str) {
        if h("mcp-name").and_then(decode_header).as_deref() != Some(body) {
            return Err((
                -32020,
                "Mcp-Name header does not match the request".into(),
                None,
            ));
        }
    }
    if version != VERSION {
        return Err((
            -32022,
            format!("unsupported protocol version {version}"),
            Some(json!({"supported": [VERSION], "requested": version})),
        ));
    }
    Ok(())
}

pub async fn handle(app: &App, headers: &HeaderMap, msg: Value) -> Response {
    let Some(id) = msg.get("id").cloned() else {
        return StatusCode::ACCEPTED.into_response();
    };
    let method = msg
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let params = msg.get("params").cloned().unwrap_or(json!({}));
    const METHODS: [&str; 10] = [
        "server/discover",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/read",
        "resources/templates/list",
        "prompts/list",
        "prompts/get",
        "completion/complete",
        "subscriptions/listen",
    ];
    if !METHODS.contains(&method.as_str()) {
        return error(&id, -32601, &format!("method not found: {method}"), None);
    }
    if let Err((c, m, d)) = check_envelope(headers, &method, &params) {
        return error(&id, c, &m, d);
    }
    let result = match method.as_str() {
        "server/discover" => Ok(json!({
            "supportedVersions": [VERSION],
            "capabilities": {"tools": {"listChanged": true}, "resources": {"listChanged": true},
                "prompts": {"listChanged": true}, "completions": {}, "logging": {}},
            "resultType": "complete", "ttlMs": 60_000, "cacheScope": "public",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "conformance-fixture", "version": "1.0.0"}},
        })),
        "tools/list" => {
            let mut t = tools();
            if app.extra_tool.load(Ordering::Relaxed) {
                t.as_array_mut().expect("array").push(json!({"name": "test_dynamic_tool", "description": "Appears after test_trigger_tool_change", "inputSchema": {"type": "object"}}));
            }
            Ok(cacheable(json!({"tools": t})))
        }
        "resources/list" => Ok(cacheable(json!({"resources": super::resources()}))),
        "resources/templates/list" => Ok(cacheable(json!({"resourceTemplates": [
            {"uriTemplate": "test://template/{id}/data", "name": "template", "description": "A templated resource", "mimeType": "application/json"}]}))),
        "resources/read" => super::read_resource(params["uri"].as_str().unwrap_or_default())
            .map(cacheable)
            .map_err(|(c, m, d)| (c, m, Some(d))),
        "prompts/list" => Ok(cacheable(json!({"prompts": prompts(app)}))),
        "prompts/get" => get_prompt(&params),
        "completion/complete" => Ok(complete(
            json!({"completion": {"values": ["paris", "park", "party"], "total": 3, "hasMore": false}}),
        )),
        "subscriptions/listen" => return listen(app, id, &params),
        _ => return call(app, id, params).await,
    };
    match result {
        Ok(r) => Json(json!({"jsonrpc": "2.0", "id": id, "result": r})).into_response(),
        Err((c, m, d)) => error(&id, c, &m, d),
    }
}

/// `tools/call`: plain JSON when it answers without notifications (so error statuses hold),
/// else an SSE stream.
async fn call(app: &App, id: Value, params: Value) -> Response {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (done_tx, done_rx) = tokio::sync::oneshot::channel();
    let task_app = app.clone();
    let task_tx = tx.clone();
    tokio::spawn(async move {
        let r = call_tool(&task_app, &task_tx, &params).await;
        let _ = done_tx.send(r);
    });
    drop(tx);
    let outcome = match tokio::time::timeout(Duration::from_secs(5), done_rx).await {
        Ok(Ok(r)) => r,
        _ => Err((-32603, "tool did not finish".into(), None)),
    };
    let mut notes = Vec::new();
    while let Ok(n) = rx.try_recv() {
        notes.push(n);
    }
    let final_msg = match &outcome {
        Ok(r) => json!({"jsonrpc": "2.0", "id": id, "result": r}),
        Err((c, m, d)) => {
            let mut e = json!({"jsonrpc": "2.0", "id": id, "error": {"code": c, "message": m}});
            if let Some(d) = d {
                e["error"]["data"] = d.clone();
            }
            e
        }
    };
    if notes.is_empty() {
        let status = match &outcome {
            Err((c, _, _)) => status_of(*c),
            Ok(_) => StatusCode::OK,
        };
        return (status, Json(final_msg)).into_response();
    }
    let (stx, srx) = mpsc::unbounded_channel();
    for n in notes.into_iter().chain([final_msg]) {
        let _ = stx.send(n);
    }
    super::sse(srx, None)
}

fn listen(app: &App, id: Value, params: &Value) -> Response {
    let requested = params.get("notifications").cloned().unwrap_or(json!({}));
    let mut honored = Map::new();
    for key in [
        "toolsListChanged",
        "promptsListChanged",
        "resourcesListChanged",
    ] {
        if requested.get(key) == Some(&json!(true)) {
            honored.insert(key.into(), json!(true));
        }
    }
    let (tx, rx) = mpsc::unbounded_channel();
    let _ = tx.send(
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
        "params": {"notifications": honored, "_meta": {SUB_ID: id}}}),
    );
    app.listeners.lock().unwrap().push(Listener {
        id,
        filter: Value::Object(honored),
        tx,
    });
    super::sse(rx, None)
}
