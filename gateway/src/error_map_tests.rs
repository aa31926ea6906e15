//! The MCP edge's error map, in process: every kind of refusal a host can meet, sent through the
//! whole router (layers included) with `oneshot`, and the status and JSON-RPC body it gets, for
//! the session revisions and for 2026-07-28. The integration suite covers the same paths through
//! the binary and real clients; this one pins the map itself, case by case.

use std::collections::HashMap;

use axum::body::Body;
use axum::http::{header, HeaderMap, Request, StatusCode};
use serde_json::{json, Value};
use tower::util::BoxCloneSyncService;
use tower::ServiceExt;

use crate::protocol::jsonrpc::*;
use crate::{app, Application, Config};

/// The gateway's whole HTTP service, as the server runs it.
type Router =
    BoxCloneSyncService<Request<Body>, axum::response::Response, std::convert::Infallible>;

/// A gateway with no upstreams on a throwaway SQLite file, lexical routing (no model), and the
/// folder that holds the file (removed when dropped).
async fn gateway(auth: &str) -> (Router, tempfile::TempDir) {
    let dir = tempfile::TempDir::new().unwrap();
    let db = dir.path().join("gateway.db");
    let toml = format!(
        r#"
        [server]
        listen = "127.0.0.1:0"
        max_body_bytes = 4096
        [database]
        url = "sqlite://{}?mode=rwc"
        [routing]
        enabled = false
        [auth]
        mode = "{auth}"
        "#,
        db.display()
    );
    let config = Config::parse(&toml, None, HashMap::new()).expect("config");
    let built = Application::build(config).await.expect("gateway");
    let router = BoxCloneSyncService::new(app::service(built.state().clone()));
    (router, dir)
}

struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: Value,
}

impl Answer {
    fn code(&self) -> i64 {
        self.body["error"]["code"].as_i64().unwrap_or_default()
    }
}

async fn send(router: &Router, req: Request<Body>) -> Answer {
    let resp = router.clone().oneshot(req).await.expect("infallible");
    let status = resp.status();
    let headers = resp.headers().clone();
    let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20)
        .await
        .expect("body");
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    Answer {
        status,
        headers,
        body,
    }
}

fn post(path: &str, headers: &[(&str, &str)], body: impl Into<Body>) -> Request<Body> {
    let mut b = Request::post(path)
        .header(header::HOST, "127.0.0.1")
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream");
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    b.body(body.into()).expect("request")
}

fn rpc(id: i64, method: &str, params: Value) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string()
}

/// A 2025-11-25 session's id.
async fn session(router: &Router) -> String {
    let init = rpc(
        1,
        "initialize",
        json!({ "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": { "name": "t", "version": "1" } }),
    );
    let a = send(router, post("/mcp", &[], init)).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    a.headers["mcp-session-id"].to_str().unwrap().to_string()
}

/// A 2026-07-28 request with a complete envelope and matching headers.
fn stateless(method: &str, mut params: Value) -> Request<Body> {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let mut headers = vec![
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", method),
    ];
    if !name.is_empty() {
        headers.push(("mcp-name", name.as_str()));
    }
    post("/mcp", &headers, rpc(7, method, params))
}

#[tokio::test]
async fn session_revisions_refuse_at_the_transport_with_a_status_and_answer_requests_with_200() {
    let (gw, _dir) = gateway("none").await;
    let sid = session(&gw).await;
    let s = [
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    // (what, request, status, code, id)
    let cases: Vec<(&str, Request<Body>, StatusCode, i64, Value)> = vec![
        (
            "body is not JSON",
            post("/mcp", &s, "{nope"),
            StatusCode::BAD_REQUEST,
            PARSE_ERROR,
            Value::Null,
        ),
        (
            "batch",
            post("/mcp", &s, "[]"),
            StatusCode::BAD_REQUEST,
            INVALID_REQUEST,
            Value::Null,
        ),
        (
            "not JSON-RPC 2.0",
            post("/mcp", &s, r#"{"id":3,"method":"ping"}"#),
            StatusCode::BAD_REQUEST,
            INVALID_REQUEST,
            json!(3),
        ),
        (
            "initialize without a version",
            post("/mcp", &[], rpc(4, "initialize", json!({}))),
            StatusCode::BAD_REQUEST,
            INVALID_PARAMS,
            json!(4),
        ),
        (
            // Without a session, a request is a 2026-07-28 one, where `ping` is no method.
            "no session header",
            post("/mcp", &[], rpc(5, "ping", json!({}))),
            StatusCode::NOT_FOUND,
            METHOD_NOT_FOUND,
            json!(5),
        ),
        (
            "unknown session",
            post(
                "/mcp",
                &[("mcp-session-id", "nosuchsession")],
                rpc(6, "ping", json!({})),
            ),
            StatusCode::NOT_FOUND,
            INVALID_REQUEST,
            Value::Null,
        ),
        (
            "unsupported version header",
            post(
                "/mcp",
                &[
                    ("mcp-session-id", sid.as_str()),
                    ("mcp-protocol-version", "1999-01-01"),
                ],
                rpc(7, "ping", json!({})),
            ),
            StatusCode::BAD_REQUEST,
            INVALID_REQUEST,
            Value::Null,
        ),
        (
            "unknown method",
            post("/mcp", &s, rpc(8, "tools/explode", json!({}))),
            StatusCode::OK,
            METHOD_NOT_FOUND,
            json!(8),
        ),
        (
            "a 2026-07-28 method in a session",
            post("/mcp", &s, rpc(9, "server/discover", json!({}))),
            StatusCode::OK,
            METHOD_NOT_FOUND,
            json!(9),
        ),
        (
            "params not an object",
            post("/mcp", &s, rpc(10, "tools/list", json!([1]))),
            StatusCode::OK,
            INVALID_PARAMS,
            json!(10),
        ),
        (
            "params null",
            post("/mcp", &s, rpc(10, "tools/list", Value::Null)),
            StatusCode::OK,
            INVALID_PARAMS,
            json!(10),
        ),
        (
            "unknown tool",
            post(
                "/mcp",
                &s,
                rpc(11, "tools/call", json!({ "name": "nope__x" })),
            ),
            StatusCode::OK,
            INVALID_PARAMS,
            json!(11),
        ),
        (
            "bad log level",
            post(
                "/mcp",
                &s,
                rpc(12, "logging/setLevel", json!({ "level": "loud" })),
            ),
            StatusCode::OK,
            INVALID_PARAMS,
            json!(12),
        ),
        (
            "unknown virtual server",
            post("/mcp/v/ghost", &s, rpc(14, "ping", json!({}))),
            StatusCode::NOT_FOUND,
            INVALID_REQUEST,
            Value::Null,
        ),
        (
            "foreign origin",
            post(
                "/mcp",
                &[("origin", "https://evil.example")],
                rpc(15, "ping", json!({})),
            ),
            StatusCode::FORBIDDEN,
            INVALID_REQUEST,
            Value::Null,
        ),
        (
            "body over max_body_bytes",
            post("/mcp", &[("content-length", "8192")], "x".repeat(8192)),
            StatusCode::PAYLOAD_TOO_LARGE,
            INVALID_REQUEST,
            Value::Null,
        ),
        (
            "body over max_body_bytes, sent without a length",
            post("/mcp", &s, "x".repeat(8192)),
            StatusCode::PAYLOAD_TOO_LARGE,
            INVALID_REQUEST,
            Value::Null,
        ),
    ];
    for (what, req, status, code, id) in cases {
        let a = send(&gw, req).await;
        assert_eq!(a.status, status, "{what}: {}", a.body);
        assert_eq!(a.code(), code, "{what}: {}", a.body);
        assert_eq!(a.body["jsonrpc"], "2.0", "{what}: {}", a.body);
        assert_eq!(a.body["id"], id, "{what}: {}", a.body);
        assert!(
            a.body["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{what}: a message says what is wrong: {}",
            a.body
        );
    }
    // GET's own refusals.
    let get = |headers: &[(&str, &str)]| {
        let mut b = Request::get("/mcp").header(header::HOST, "127.0.0.1");
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        b.body(Body::empty()).unwrap()
    };
    let a = send(&gw, get(&s)).await;
    assert_eq!(a.status, StatusCode::NOT_ACCEPTABLE, "{}", a.body);
    assert_eq!(a.code(), INVALID_REQUEST);
    let a = send(&gw, get(&[("accept", "text/event-stream")])).await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST, "no session: {}", a.body);
    assert_eq!(a.code(), INVALID_REQUEST);
    let mut with_sse = s.to_vec();
    with_sse.push(("accept", "text/event-stream"));
    with_sse.push(("last-event-id", "not-ours"));
    let a = send(&gw, get(&with_sse)).await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST, "{}", a.body);
    assert_eq!(a.code(), INVALID_REQUEST);
}

#[tokio::test]
async fn the_stateless_revision_gives_each_error_code_its_own_status() {
    let (gw, _dir) = gateway("none").await;
    let mut bare = stateless("tools/list", json!({}));
    bare.headers_mut().remove("mcp-method");
    let mut old = stateless("tools/list", json!({}));
    *old.body_mut() = rpc(
        7,
        "tools/list",
        json!({ "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2025-01-01",
            "io.modelcontextprotocol/clientCapabilities": {} } }),
    )
    .into();
    old.headers_mut()
        .insert("mcp-protocol-version", "2025-01-01".parse().unwrap());
    let cases: Vec<(&str, Request<Body>, StatusCode, i64)> = vec![
        (
            "unknown method",
            stateless("tools/explode", json!({})),
            StatusCode::NOT_FOUND,
            METHOD_NOT_FOUND,
        ),
        (
            "a session method",
            stateless("logging/setLevel", json!({ "level": "info" })),
            StatusCode::NOT_FOUND,
            METHOD_NOT_FOUND,
        ),
        (
            "no envelope",
            post(
                "/mcp",
                &[
                    ("mcp-protocol-version", "2026-07-28"),
                    ("mcp-method", "tools/list"),
                ],
                rpc(7, "tools/list", json!({})),
            ),
            StatusCode::BAD_REQUEST,
            INVALID_PARAMS,
        ),
        (
            "Mcp-Method header missing",
            bare,
            StatusCode::BAD_REQUEST,
            HEADER_MISMATCH,
        ),
        (
            "unsupported version",
            old,
            StatusCode::BAD_REQUEST,
            UNSUPPORTED_VERSION,
        ),
        (
            "params not an object",
            post(
                "/mcp",
                &[
                    ("mcp-protocol-version", "2026-07-28"),
                    ("mcp-method", "tools/list"),
                ],
                rpc(7, "tools/list", json!("x")),
            ),
            StatusCode::BAD_REQUEST,
            INVALID_PARAMS,
        ),
        (
            "unknown tool",
            stateless("tools/call", json!({ "name": "nope__x" })),
            StatusCode::BAD_REQUEST,
            INVALID_PARAMS,
        ),
        (
            "tampered requestState",
            stateless(
                "tools/call",
                json!({ "name": "nope__x", "requestState": "gw1.AAAA.BBBB" }),
            ),
            StatusCode::BAD_REQUEST,
            INVALID_PARAMS,
        ),
        (
            "a response instead of a request",
            post(
                "/mcp",
                &[("mcp-protocol-version", "2026-07-28")],
                r#"{"jsonrpc":"2.0","id":7,"result":{}}"#,
            ),
            StatusCode::BAD_REQUEST,
            INVALID_REQUEST,
        ),
    ];
    for (what, req, status, code) in cases {
        let a = send(&gw, req).await;
        assert_eq!(a.status, status, "{what}: {}", a.body);
        assert_eq!(a.code(), code, "{what}: {}", a.body);
        assert_eq!(a.body["id"], 7, "{what}: {}", a.body);
    }
    let a = send(
        &gw,
        post(
            "/mcp",
            &[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "tools/list"),
            ],
            rpc(
                7,
                "tools/list",
                json!({ "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2025-01-01",
                    "io.modelcontextprotocol/clientCapabilities": {} } }),
            ),
        ),
    )
    .await;
    assert_eq!(
        a.code(),
        HEADER_MISMATCH,
        "the header is checked against the body before the version: {}",
        a.body
    );
    let notification = post(
        "/mcp",
        &[("mcp-protocol-version", "2026-07-28")],
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#,
    );
    assert_eq!(send(&gw, notification).await.status, StatusCode::ACCEPTED);
    let ok = send(&gw, stateless("tools/list", json!({}))).await;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.body);
    assert_eq!(ok.body["result"]["resultType"], "complete");
}

#[tokio::test]
async fn refusals_before_the_method_carry_their_status_and_challenge() {
    let (gw, _dir) = gateway("required").await;
    let a = send(&gw, post("/mcp", &[], rpc(1, "ping", json!({})))).await;
    assert_eq!(a.status, StatusCode::UNAUTHORIZED, "{}", a.body);
    assert_eq!(a.code(), UNAUTHORIZED);
    let challenge = a.headers[header::WWW_AUTHENTICATE].to_str().unwrap();
    assert!(
        challenge.starts_with("Bearer resource_metadata="),
        "{challenge}"
    );
    let a = send(
        &gw,
        post(
            "/mcp",
            &[("authorization", "Bearer mgw_not_a_real_token")],
            rpc(1, "ping", json!({})),
        ),
    )
    .await;
    assert_eq!(a.status, StatusCode::UNAUTHORIZED, "{}", a.body);
    assert!(a.headers[header::WWW_AUTHENTICATE]
        .to_str()
        .unwrap()
        .contains("invalid_token"));
    // /v1/route is a REST endpoint: its own errors come in the admin shape.
    let (gw, _dir) = gateway("none").await;
    let a = send(&gw, post("/v1/route", &[], r#"{"query": "  "}"#)).await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST, "{}", a.body);
    assert_eq!(a.body["error"]["code"], "bad_request", "{}", a.body);
    assert!(a.body.get("jsonrpc").is_none());
    // Two Host headers.
    let mut req = post("/mcp", &[], rpc(1, "ping", json!({})));
    req.headers_mut()
        .append(header::HOST, "evil.example".parse().unwrap());
    let a = send(&gw, req).await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST, "{}", a.body);
    assert_eq!(a.code(), INVALID_REQUEST);
}

/// Every answer names its request: the caller's own `x-request-id`, or a new one per request.
#[tokio::test]
async fn answers_carry_the_request_id() {
    let (gw, _dir) = gateway("none").await;
    let ping = || rpc(3, "ping", json!({}));
    let own = send(&gw, post("/mcp", &[("x-request-id", "mine-1")], ping())).await;
    assert_eq!(own.headers["x-request-id"], "mine-1");
    let a = send(&gw, post("/mcp", &[], ping())).await;
    let b = send(&gw, post("/mcp", &[], ping())).await;
    let (a, b) = (&a.headers["x-request-id"], &b.headers["x-request-id"]);
    assert!(!a.is_empty() && a != b, "{a:?} {b:?}");
}
