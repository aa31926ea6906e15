//! MCP 2026-07-28 next to 2025 sessions, and the bridges between them: the Python SDK client in
//! its default (2026-first) and legacy modes against a 2025 stdio upstream that elicits mid-call
//! and a 2026-07-28 upstream that answers "input required"; a raw 2026 host's tampered
//! `requestState` refused; a retry that lands on another replica continues the call there.

use gateway_tests::Gateway;
use serde_json::{json, Value};
use tokio::process::Command;

/// A gateway in front of the fixture over stdio (`fx`, 2025) and the conformance fixture over
/// HTTP (`conf`, 2026-07-28), both up; the conformance fixture's process lives as long as the
/// first of the pair.
async fn fixture_and_conformance() -> (tokio::process::Child, Gateway) {
    let (fixture, fixture_url) = gateway_tests::spawn_reporting_url(&mut Command::new(env!(
        "CARGO_BIN_EXE_conformance-fixture"
    )))
    .await;
    let config = format!(
        "{}\n[[upstreams]]\nname = \"conf\"\ntransport = \"http\"\nurl = \"{fixture_url}\"\n",
        super::fixture_config(super::SQLITE_IN_ITS_FOLDER, "")
    );
    let gw = Gateway::start(&config).await;
    gw.wait_up(&["fx", "conf"]).await;
    (fixture, gw)
}

#[tokio::test]
async fn python_client_in_both_modes_gets_input_requests_bridged_both_ways() {
    let (_fixture, gw) = fixture_and_conformance().await;
    let health = gw.get_json("/admin/v1/health").await;
    let version = |name: &str| {
        health
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["name"] == name)
            .map(|h| h["protocol_version"].clone())
    };
    assert_eq!(version("fx"), Some(json!("2025-11-25")), "stdio stays 2025");
    assert_eq!(version("conf"), Some(json!("2026-07-28")), "discovered");

    let calls = json!([
        ["fx__ask_name", {}],
        ["conf__test_input_required_result_elicitation", {}],
        ["fx__echo", {"message": "plain"}],
    ]);
    for (mode, revision) in [("default", "2026-07-28"), ("legacy", "2025-11-25")] {
        let v = gateway_tests::python_client(&gw.mcp, mode, &calls, "").await;
        assert_eq!(v["version"], revision, "{mode}: {v}\n{}", gw.log());
        // A 2025 upstream's elicitation/create reaches a 2026 host as an InputRequiredResult,
        // and a 2026 upstream's InputRequiredResult reaches a 2025 host as elicitation/create:
        // either way the host's answer ends the call.
        assert_eq!(
            v["results"],
            json!(["Hello, Ada!", "Hello, Ada!", "plain"]),
            "{mode}: {v}\n{}",
            gw.log()
        );
        assert_eq!(v["elicitations"], 2, "{mode}: one question per call");
    }
}

/// A 2026-07-28 host without an SDK: one POST per request.
struct Host {
    http: reqwest::Client,
}

impl Host {
    async fn call(&self, url: &str, tool: &str, extra: Value) -> (u16, Value) {
        let mut params = json!({
            "name": tool,
            "arguments": {},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {}},
            },
        });
        for (k, v) in extra.as_object().unwrap() {
            params[k] = v.clone();
        }
        let r = self
            .http
            .post(url)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", tool)
            .json(&json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}))
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        (
            status,
            gateway_tests::response_json(&r.text().await.unwrap()),
        )
    }
}

#[tokio::test]
async fn request_state_is_tamper_proof_and_a_retry_continues_on_another_replica() {
    let db = gateway_tests::postgres_database().await;
    let config = super::fixture_config(&db, "");
    let ports = [gateway_tests::free_port(), gateway_tests::free_port()];
    let mut replicas = Vec::new();
    for port in ports {
        let listen = format!("127.0.0.1:{port}");
        let advertise = format!("http://127.0.0.1:{port}");
        let env = [
            ("MCP_GATEWAY_LISTEN", listen.as_str()),
            ("MCP_GATEWAY_ADVERTISE_URL", advertise.as_str()),
            ("MCP_GATEWAY_SESSION_KEY", "replicas-share-this-secret"),
        ];
        let gw = Gateway::start_with_env(&config, &env).await;
        gw.wait_up(&["fx"]).await;
        replicas.push(gw);
    }
    let (a, b) = (&replicas[0], &replicas[1]);
    let host = Host {
        http: reqwest::Client::new(),
    };

    // Round 1 on replica a: the stdio upstream asks the host's name mid-call.
    let (status, first) = host.call(&a.mcp, "fx__ask_name", json!({})).await;
    assert_eq!(status, 200, "{first}");
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    let (key, request) = result["inputRequests"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "What is your name?");
    let state = result["requestState"].as_str().unwrap().to_string();
    let answers = json!({key.clone(): {"action": "accept", "content": {"name": "Bob"}}});

    // Altered state: refused, and the parked call is not touched.
    let (status, refused) = host
        .call(
            &b.mcp,
            "fx__ask_name",
            json!({"inputResponses": answers, "requestState": format!("{state}-TAMPERED")}),
        )
        .await;
    assert_eq!(status, 400, "{refused}");
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("integrity"),
        "{refused}"
    );

    // Round 2 on replica b: relayed to a, which holds the upstream call, and answered.
    let (status, done) = host
        .call(
            &b.mcp,
            "fx__ask_name",
            json!({"inputResponses": answers, "requestState": state}),
        )
        .await;
    assert_eq!(status, 200, "{done}\n{}\n{}", a.log(), b.log());
    assert_eq!(
        done["result"]["content"][0]["text"], "Hello, Bob!",
        "{done}"
    );
    assert_eq!(done["result"]["resultType"], "complete");

    // The call is over: the same state again finds nothing pending.
    let (status, again) = host
        .call(
            &a.mcp,
            "fx__ask_name",
            json!({"inputResponses": answers, "requestState": state}),
        )
        .await;
    assert_eq!(status, 400, "{again}");
    assert!(
        again["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no longer pending"),
        "{again}"
    );
}

/// Issue 37, item 6: a `per_session` upstream's question reaches a 2026-07-28 host (the host's
/// requests share one upstream connection per principal, which has no session to ask on).
#[tokio::test]
async fn a_per_session_upstream_asks_a_2026_host_and_gets_its_answer() {
    let dir = gateway_tests::scratch();
    let everything = gateway_tests::peers().join("node_modules/.bin/mcp-server-everything");
    let port = gateway_tests::free_port();
    let _http = gateway_tests::everything("streamableHttp", port);
    gateway_tests::wait_port(port).await;
    let gw = Gateway::start(&format!(
        "{}\n[[upstreams]]\nname = \"ev\"\ntransport = \"stdio\"\ncommand = \"{}\"\n\
         sharing = \"per_session\"\n\n[[upstreams]]\nname = \"evh\"\ntransport = \"http\"\n\
         url = \"http://127.0.0.1:{port}/mcp\"\nsharing = \"per_session\"\n",
        super::fixture_config(&super::sqlite_url(&dir), "sharing = \"per_session\""),
        everything.display()
    ))
    .await;
    gw.wait_up(&["fx", "ev", "evh"]).await;
    let host = Host {
        http: reqwest::Client::new(),
    };
    // server-everything asks with its own SDK (TypeScript), over stdio and Streamable HTTP.
    for (tool, args) in [
        ("ev__trigger-elicitation-request", json!({})),
        ("evh__trigger-elicitation-request", json!({})),
        ("ev__trigger-sampling-request", json!({"prompt": "hi"})),
        ("evh__trigger-sampling-request", json!({"prompt": "hi"})),
    ] {
        // server-everything registers this tool once its client has said `initialized`: the
        // first call on a new upstream session can come before it.
        let mut first = Value::Null;
        for _ in 0..50 {
            let (status, r) = host.call(&gw.mcp, tool, json!({ "arguments": args })).await;
            assert_eq!(status, 200, "{r}");
            first = r;
            if !first.to_string().contains("not found") {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        assert_eq!(
            first["result"]["resultType"],
            "input_required",
            "{tool}: {first}\n{}",
            gw.log()
        );
    }
    for round in 0..2 {
        let (status, first) = host.call(&gw.mcp, "fx__ask_name", json!({})).await;
        assert_eq!(status, 200, "{first}");
        let result = &first["result"];
        assert_eq!(
            result["resultType"],
            "input_required",
            "round {round}: {first}\n{}",
            gw.log()
        );
        let (key, request) = result["inputRequests"]
            .as_object()
            .unwrap()
            .iter()
            .next()
            .unwrap();
        assert_eq!(request["method"], "elicitation/create");
        let state = result["requestState"].as_str().unwrap().to_string();
        let answers = json!({key.clone(): {"action": "accept", "content": {"name": "Bob"}}});
        let (status, done) = host
            .call(
                &gw.mcp,
                "fx__ask_name",
                json!({"inputResponses": answers, "requestState": state}),
            )
            .await;
        assert_eq!(status, 200, "{done}");
        assert_eq!(
            done["result"]["content"][0]["text"], "Hello, Bob!",
            "{done}"
        );
    }
    // Stopped, not killed: server-everything waits on its unanswered questions and outlives a
    // killed gateway.
    gw.stop().await;
}

/// Issue 37, item 15: a 2025 host gets a 2026-07-28 upstream's results in its own revision's
/// shape: no `resultType` (nor the upstream's `_meta` serverInfo).
#[tokio::test]
async fn a_2025_host_gets_a_2026_upstreams_results_without_2026_members() {
    let (_fixture, gw) = fixture_and_conformance().await;
    let mut c = gateway_tests::RawClient::initialize(&gw.mcp, json!({})).await;
    for (method, params) in [
        (
            "tools/call",
            json!({"name": "conf__test_simple_text", "arguments": {}}),
        ),
        ("tools/list", json!({})),
        ("prompts/list", json!({})),
    ] {
        let r = c.request(method, params).await;
        let result = &r["result"];
        assert!(result.is_object(), "{method}: {r}");
        assert!(result.get("resultType").is_none(), "{method}: {r}");
        assert!(
            !r.to_string().contains("io.modelcontextprotocol/serverInfo"),
            "{method}: {r}"
        );
    }
}
