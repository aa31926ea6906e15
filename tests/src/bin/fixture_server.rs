//! A small stdio MCP server for failure tests: `echo`, `hang` (never answers), `crash` (exits
//! mid-call), `sleep`, `pid`, `add_tool` (adds a tool, or changes its description, and sends `tools/list_changed`),
//! `cancellations` (the request ids the client cancelled so far), `ask_name` (asks the client
//! with `elicitation/create` mid-call, the 2025 way, and greets whom it names), `not_an_object`
//! (a defective result: a string, not an object), and a tool definition with fields the typed SDKs drop (`execution`, `_meta`), so
//! byte-faithful passthrough can be checked. Raw JSON on purpose: it must not normalise anything.

use std::io::{BufRead, Write};

use serde_json::{json, Value};

fn tools() -> Value {
    json!([
        {
            "name": "echo",
            "description": "Echoes its message back",
            "inputSchema": { "type": "object", "properties": { "message": { "type": "string" } }, "required": ["message"] },
            "execution": { "taskSupport": "optional" },
            "annotations": { "readOnlyHint": true },
            "_meta": { "fixture/custom": [1, 2, 3] },
            "x-unknown-field": { "kept": true }
        },
        { "name": "hang", "description": "Never answers", "inputSchema": { "type": "object" } },
        { "name": "crash", "description": "Exits while the call is in flight", "inputSchema": { "type": "object" } },
        { "name": "pid", "description": "Returns the server's process id", "inputSchema": { "type": "object" } },
        { "name": "sleep", "description": "Answers after `ms` milliseconds", "inputSchema": { "type": "object", "properties": { "ms": { "type": "integer" } } } },
        { "name": "add_tool", "description": "Adds a tool named `name` (or replaces its description)", "inputSchema": { "type": "object", "properties": { "name": { "type": "string" }, "description": { "type": "string" } } } },
        { "name": "cancellations", "description": "Request ids cancelled so far", "inputSchema": { "type": "object" } },
        { "name": "ask_name", "description": "Asks the user's name, then greets them", "inputSchema": { "type": "object" } },
        { "name": "not_an_object", "description": "Answers a result that is not an object", "inputSchema": { "type": "object" } }
    ])
}

fn main() {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout();
    let mut added: Vec<Value> = Vec::new();
    let mut cancelled: Vec<Value> = Vec::new();
    // Our elicitation requests → the call waiting for their answer.
    let mut asking: std::collections::HashMap<String, Value> = Default::default();
    let mut asked = 0u64;
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(msg) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if msg["method"] == "notifications/cancelled" {
            cancelled.push(msg["params"]["requestId"].clone());
        }
        let Some(id) = msg.get("id").cloned() else {
            continue;
        };
        if msg.get("method").is_none() {
            // The client's answer to an `ask_name` question.
            if let Some(call) = id.as_str().and_then(|k| asking.remove(k)) {
                let name = msg
                    .pointer("/result/content/name")
                    .and_then(Value::as_str)
                    .unwrap_or("nobody");
                let r = json!({ "jsonrpc": "2.0", "id": call, "result": { "content": [{ "type": "text", "text": format!("Hello, {name}!") }] } });
                let _ = writeln!(out, "{r}");
                let _ = out.flush();
            }
            continue;
        }
        let method = msg
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let result = match method {
            "initialize" => json!({
                "protocolVersion": msg["params"]["protocolVersion"].as_str().unwrap_or("2025-11-25"),
                "capabilities": { "tools": { "listChanged": true } },
                "serverInfo": { "name": "fixture", "version": "1.0.0" }
            }),
            "ping" => json!({}),
            "tools/list" => {
                let mut all = tools().as_array().cloned().unwrap_or_default();
                all.extend(added.iter().cloned());
                json!({ "tools": all })
            }
            "tools/call" => match msg["params"]["name"].as_str().unwrap_or_default() {
                "echo" => json!({
                    "content": [{ "type": "text", "text": msg["params"]["arguments"]["message"].as_str().unwrap_or_default() }],
                    "structuredContent": { "echoed": msg["params"]["arguments"]["message"] },
                    "_meta": { "fixture/result": true }
                }),
                "hang" => continue,
                "add_tool" => {
                    let name = msg["params"]["arguments"]["name"]
                        .as_str()
                        .unwrap_or("added");
                    let description = msg["params"]["arguments"]["description"]
                        .as_str()
                        .unwrap_or("Added at run time");
                    added.retain(|t| t["name"] != name);
                    added.push(json!({ "name": name, "description": description, "inputSchema": { "type": "object" } }));
                    let _ = writeln!(
                        out,
                        "{}",
                        json!({ "jsonrpc": "2.0", "method": "notifications/tools/list_changed" })
                    );
                    json!({ "content": [{ "type": "text", "text": "added" }] })
                }
                "cancellations" => {
                    json!({ "content": [{ "type": "text", "text": Value::Array(cancelled.clone()).to_string() }] })
                }
                "ask_name" => {
                    asked += 1;
                    let key = format!("ask-{asked}");
                    asking.insert(key.clone(), id.clone());
                    let q = json!({ "jsonrpc": "2.0", "id": key, "method": "elicitation/create", "params": {
                        "message": "What is your name?",
                        "requestedSchema": { "type": "object", "properties": { "name": { "type": "string" } }, "required": ["name"] } } });
                    let _ = writeln!(out, "{q}");
                    let _ = out.flush();
                    continue;
                }
                "crash" => std::process::exit(3),
                "sleep" => {
                    // Answer from a thread, so other calls are not held up meanwhile.
                    let ms = msg["params"]["arguments"]["ms"].as_u64().unwrap_or(100);
                    std::thread::spawn(move || {
                        std::thread::sleep(std::time::Duration::from_millis(ms));
                        let r = json!({ "jsonrpc": "2.0", "id": id, "result": { "content": [{ "type": "text", "text": "slept" }] } });
                        let mut out = std::io::stdout();
                        let _ = writeln!(out, "{r}");
                        let _ = out.flush();
                    });
                    continue;
                }
                "pid" => {
                    json!({ "content": [{ "type": "text", "text": std::process::id().to_string() }] })
                }
                "not_an_object" => json!("just text"),
                other => {
                    let e = json!({ "jsonrpc": "2.0", "id": id, "error": { "code": -32602, "message": format!("unknown tool {other}") } });
                    let _ = writeln!(out, "{e}");
                    let _ = out.flush();
                    continue;
                }
            },
            _ => {
                let e = json!({ "jsonrpc": "2.0", "id": id, "error": { "code": -32601, "message": "method not found" } });
                let _ = writeln!(out, "{e}");
                let _ = out.flush();
                continue;
            }
        };
        let _ = writeln!(
            out,
            "{}",
            json!({ "jsonrpc": "2.0", "id": id, "result": result })
        );
        let _ = out.flush();
    }
}
