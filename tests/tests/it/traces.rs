//! OpenTelemetry traces through the binary: the gateway exports OTLP/HTTP protobuf to a receiver
//! in this test (decoded with the OpenTelemetry protobuf types) when the standard `OTEL_*`
//! variables say so. Checked: span names and attributes per the MCP semantic conventions, the
//! host's context taken from `_meta` and from the `traceparent` header, the context given to a
//! real upstream (server-everything) and to an HTTP upstream as header and `_meta` (a small peer
//! in this test reports what it received: no published server does), `error.type` for tool
//! errors and JSON-RPC errors, and the trace id in the gateway's log lines.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::post;
use axum::{Json, Router};
use gateway_tests::{peers, Gateway, RawClient};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use serde_json::{json, Value};

use super::{fixture_config, sqlite_url};

/// A span as received, with its resource's service name.
#[derive(Clone, Debug)]
struct Seen {
    service: String,
    version: String,
    span: Span,
}

impl Seen {
    fn attr(&self, key: &str) -> Option<String> {
        self.span
            .attributes
            .iter()
            .find(|a| a.key == key)
            .and_then(|a| match a.value.as_ref()?.value.as_ref()? {
                Any::StringValue(s) => Some(s.clone()),
                Any::IntValue(i) => Some(i.to_string()),
                Any::BoolValue(b) => Some(b.to_string()),
                other => Some(format!("{other:?}")),
            })
    }
    fn trace_id(&self) -> String {
        hex(&self.span.trace_id)
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

async fn serve(router: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    format!("http://{addr}")
}

/// An OTLP/HTTP receiver: `POST /v1/traces` with a protobuf body.
async fn receiver() -> (String, Arc<Mutex<Vec<Seen>>>) {
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let store = seen.clone();
    let router = Router::new().route(
        "/v1/traces",
        post(move |body: Bytes| {
            let store = store.clone();
            async move {
                let req = ExportTraceServiceRequest::decode(body).expect("OTLP protobuf");
                let mut s = store.lock().unwrap();
                for rs in req.resource_spans {
                    let resource = |key: &str| {
                        rs.resource
                            .iter()
                            .flat_map(|r| r.attributes.iter())
                            .find(|a| a.key == key)
                            .and_then(|a| match a.value.as_ref()?.value.as_ref()? {
                                Any::StringValue(v) => Some(v.clone()),
                                _ => None,
                            })
                            .unwrap_or_default()
                    };
                    let (service, version) =
                        (resource("service.name"), resource("service.version"));
                    for ss in rs.scope_spans {
                        for span in ss.spans {
                            s.push(Seen {
                                service: service.clone(),
                                version: version.clone(),
                                span,
                            });
                        }
                    }
                }
                StatusCode::OK
            }
        }),
    );
    (serve(router).await, seen)
}

/// A Streamable HTTP MCP server whose one tool answers the trace context it was sent.
async fn context_peer() -> String {
    let router = Router::new().route(
        "/mcp",
        post(|headers: HeaderMap, Json(msg): Json<Value>| async move {
            let id = msg.get("id").cloned();
            let result = match msg["method"].as_str().unwrap_or("") {
                "initialize" => json!({"protocolVersion": "2025-06-18",
                    "capabilities": {"tools": {}}, "serverInfo": {"name": "context", "version": "1"}}),
                "tools/list" => json!({"tools": [{"name": "context",
                    "description": "Answers the trace context it received", "inputSchema": {"type": "object"}}]}),
                "tools/call" => json!({"content": [{"type": "text", "text": json!({
                    "header": headers.get("traceparent").and_then(|v| v.to_str().ok()),
                    "meta": msg.pointer("/params/_meta/traceparent"),
                }).to_string()}]}),
                _ if id.is_none() => return StatusCode::ACCEPTED.into_response(),
                other => {
                    return Json(json!({"jsonrpc": "2.0", "id": id,
                        "error": {"code": -32601, "message": format!("no {other}")}}))
                    .into_response()
                }
            };
            Json(json!({"jsonrpc": "2.0", "id": id, "result": result})).into_response()
        }),
    );
    format!("{}/mcp", serve(router).await)
}

fn spans_named(seen: &Arc<Mutex<Vec<Seen>>>, name: &str) -> Vec<Seen> {
    seen.lock()
        .unwrap()
        .iter()
        .filter(|s| s.span.name == name)
        .cloned()
        .collect()
}

#[tokio::test]
async fn requests_and_upstream_calls_are_traced_with_the_mcp_conventions() {
    let (otlp, seen) = receiver().await;
    let peer = context_peer().await;
    let dir = gateway_tests::scratch();
    let bin = peers().join("node_modules/.bin/mcp-server-everything");
    let config = format!(
        "{}\n[[upstreams]]\nname = \"every\"\ntransport = \"stdio\"\ncommand = \"{}\"\n\n\
         [[upstreams]]\nname = \"peer\"\ntransport = \"http\"\nurl = \"{peer}\"\n",
        fixture_config(&sqlite_url(&dir), ""),
        bin.display()
    );
    let gw = Gateway::start_with_env(
        &config,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &otlp),
            ("OTEL_BSP_SCHEDULE_DELAY", "100"),
        ],
    )
    .await;
    gw.wait_up(&["fx", "every", "peer"]).await;
    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;

    // A host that traces sends its context in `_meta`.
    let host_trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let host_parent = format!("00-{host_trace}-00f067aa0ba902b7-01");
    let r = c
        .request(
            "tools/call",
            json!({"name": "every__echo", "arguments": {"message": "traced"},
                   "_meta": {"traceparent": host_parent}}),
        )
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "Echo: traced", "{r}");

    // One that sends only the W3C header; the HTTP upstream gets the context both ways.
    let header_trace = "0af7651916cd43dd8448eb211c80319c";
    let resp = c
        .http
        .post(&gw.mcp)
        .header("mcp-session-id", c.session.clone().unwrap())
        .header("mcp-protocol-version", "2025-06-18")
        .header("accept", "application/json, text/event-stream")
        .header(
            "traceparent",
            format!("00-{header_trace}-b7ad6b7169203331-01"),
        )
        .json(&json!({"jsonrpc": "2.0", "id": 77, "method": "tools/call",
                      "params": {"name": "peer__context", "arguments": {}}}))
        .send()
        .await
        .unwrap();
    let answer = gateway_tests::response_json(&resp.text().await.unwrap());
    let received: Value =
        serde_json::from_str(answer["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    for how in ["header", "meta"] {
        let tp = received[how]
            .as_str()
            .unwrap_or_else(|| panic!("{how}: {received}"));
        assert!(
            tp.starts_with(&format!("00-{header_trace}-")),
            "{how}: {tp}"
        );
    }
    assert_eq!(received["header"], received["meta"]);

    // A tool error and a JSON-RPC error.
    let r = c
        .request(
            "tools/call",
            json!({"name": "search_tools", "arguments": {}}),
        )
        .await;
    assert_eq!(r["result"]["isError"], true);
    let r = c
        .request("tools/call", json!({"name": "fx__nope", "arguments": {}}))
        .await;
    assert!(r.get("error").is_some(), "{r}");

    let mut server = Vec::new();
    for _ in 0..100 {
        server = spans_named(&seen, "tools/call fx__nope");
        if !server.is_empty() && !spans_named(&seen, "tools/call search_tools").is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(server.len(), 1, "one MCP server span per request");
    assert_eq!(server[0].attr("error.type").as_deref(), Some("-32602"));
    assert_eq!(server[0].service, "mcp-gateway");
    let tool_error = &spans_named(&seen, "tools/call search_tools")[0];
    assert_eq!(tool_error.attr("error.type").as_deref(), Some("tool_error"));

    // The host's `_meta` context is the parent; the upstream call is a client span below it.
    let echo: Vec<Seen> = spans_named(&seen, "tools/call every__echo");
    let srv = echo
        .iter()
        .find(|s| s.span.kind == 2)
        .expect("an MCP server span (kind server)");
    assert_eq!(srv.trace_id(), host_trace);
    assert_eq!(hex(&srv.span.parent_span_id), "00f067aa0ba902b7");
    assert_eq!(srv.attr("mcp.method.name").as_deref(), Some("tools/call"));
    assert_eq!(srv.attr("gen_ai.tool.name").as_deref(), Some("every__echo"));
    assert_eq!(
        srv.attr("gen_ai.operation.name").as_deref(),
        Some("execute_tool")
    );
    assert_eq!(
        srv.attr("mcp.protocol.version").as_deref(),
        Some("2025-11-25")
    );
    assert!(srv.attr("mcp.session.id").is_some_and(|s| s.len() == 16));
    assert!(srv.attr("error.type").is_none());
    let client = spans_named(&seen, "tools/call echo");
    let client = client
        .iter()
        .find(|s| s.span.kind == 3)
        .expect("an MCP client span");
    assert_eq!(client.trace_id(), host_trace);
    assert_eq!(client.span.parent_span_id, srv.span.span_id);
    assert_eq!(
        client.attr("mcp_gateway.upstream").as_deref(),
        Some("every")
    );

    // The header's context is the HTTP span's parent, and the MCP span is below it.
    let http: Vec<Seen> = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|s| s.trace_id() == header_trace && s.span.name == "POST /mcp")
        .cloned()
        .collect();
    assert_eq!(http.len(), 1, "one HTTP server span");
    let status = http[0]
        .span
        .attributes
        .iter()
        .find(|a| a.key == "http.response.status_code")
        .and_then(|a| a.value.as_ref()?.value.clone());
    assert_eq!(
        status,
        Some(Any::IntValue(200)),
        "the status code is an integer"
    );
    assert_eq!(
        http[0].version,
        env!("CARGO_PKG_VERSION"),
        "service.version"
    );
    assert_eq!(hex(&http[0].span.parent_span_id), "b7ad6b7169203331");
    let mcp = spans_named(&seen, "tools/call peer__context");
    let mcp = mcp.iter().find(|s| s.span.kind == 2).unwrap();
    assert_eq!(mcp.span.parent_span_id, http[0].span.span_id);
    assert!(
        received["header"]
            .as_str()
            .unwrap()
            .contains(&hex(&spans_named(&seen, "tools/call context")[0]
                .span
                .span_id)),
        "the upstream's parent is the client span"
    );

    // The caller is named as the audit log names them; no span carries the tracing layer's
    // own noise (source locations, threads, busy and idle times).
    assert_eq!(mcp.attr("enduser.id").as_deref(), Some("anonymous"));
    for s in seen.lock().unwrap().iter() {
        for a in &s.span.attributes {
            assert!(
                !a.key.starts_with("code.")
                    && !a.key.starts_with("thread.")
                    && !a.key.ends_with("_ns"),
                "{} on {}",
                a.key,
                s.span.name
            );
        }
    }

    // Log lines of a traced request carry its trace id.
    assert!(
        gw.log()
            .contains(&format!("\"trace_id\":\"{header_trace}\"")),
        "trace id in the log"
    );
}
