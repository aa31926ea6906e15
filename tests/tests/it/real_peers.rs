//! Real upstream servers from npm and PyPI behind the gateway at once, driven by real clients:
//! server-everything over stdio, Streamable HTTP and legacy SSE; mcp-server-time and
//! server-memory over stdio; the Python SDK client (default and legacy mode) and the Inspector CLI.

use gateway_tests::{everything, free_port, peers, wait_port, Gateway};
use serde_json::json;

#[tokio::test]
async fn real_servers_and_real_clients_through_the_gateway() {
    let p = peers();
    let (http_port, sse_port) = (free_port(), free_port());
    let _http = everything("streamableHttp", http_port);
    let _sse = everything("sse", sse_port);
    wait_port(http_port).await;
    wait_port(sse_port).await;
    let dir = gateway_tests::scratch();
    let bin = p.join("node_modules/.bin");
    let config = format!(
        r#"
[database]
url = "{db}"

[[upstreams]]
name = "every"
transport = "stdio"
command = "{bin}/mcp-server-everything"

[[upstreams]]
name = "everyhttp"
transport = "http"
url = "http://127.0.0.1:{http_port}/mcp"

[[upstreams]]
name = "everysse"
transport = "sse"
url = "http://127.0.0.1:{sse_port}/sse"

[[upstreams]]
name = "time"
transport = "stdio"
command = "{venv}/bin/mcp-server-time"
args = ["--local-timezone", "UTC"]

[[upstreams]]
name = "memory"
transport = "stdio"
command = "{bin}/mcp-server-memory"
sharing = "per_session"
env = {{ MEMORY_FILE_PATH = "{dir}/memory.jsonl" }}
"#,
        db = super::sqlite_url(&dir),
        bin = bin.display(),
        venv = p.join("venv").display(),
        dir = dir.display(),
    );
    let gw = Gateway::start(&config).await;
    let all = ["every", "everyhttp", "everysse", "time", "memory"];
    gw.wait_up(&all).await;

    for mode in ["legacy", "default"] {
        let entity = format!("gw-{mode}");
        let calls = json!([
        ["every__echo", {"message": "via stdio"}],
        ["everyhttp__echo", {"message": "via http"}],
        ["everysse__echo", {"message": "via sse"}],
        ["time__get_current_time", {"timezone": "UTC"}],
        ["memory__create_entities", {"entities": [{"name": entity, "entityType": "thing", "observations": ["works"]}]}],
        ]);
        let v = gateway_tests::python_client(&gw.mcp, mode, &calls, &gw.log()).await;
        // The SDK's default mode speaks 2026-07-28 with the gateway, whatever its upstreams speak.
        let revision = if mode == "default" {
            "2026-07-28"
        } else {
            "2025-11-25"
        };
        assert_eq!(v["version"], revision, "{mode}");
        let tools: Vec<&str> = v["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        for u in all {
            assert!(
                tools.iter().any(|t| t.starts_with(&format!("{u}__"))),
                "{mode}: no tool of {u} in {tools:?}"
            );
        }
        assert!(tools.iter().all(|t| t.len() <= 64
            && t.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')));
        let results = v["results"].as_array().unwrap();
        assert_eq!(results[0], "Echo: via stdio");
        assert_eq!(results[1], "Echo: via http");
        assert_eq!(results[2], "Echo: via sse");
        assert!(
            results[3].as_str().unwrap().contains("UTC"),
            "{}",
            results[3]
        );
        assert!(
            results[4].as_str().unwrap().contains(&entity),
            "{}",
            results[4]
        );
    }

    let inspector = |args: Vec<String>| {
        let url = gw.mcp.clone();
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            gateway_tests::inspector(&url, &args).await
        }
    };
    let listed = inspector(vec!["--method".into(), "tools/list".into()]).await;
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for u in all {
        assert!(
            names.iter().any(|t| t.starts_with(&format!("{u}__"))),
            "inspector: no tool of {u}"
        );
    }
    for (tool, args) in [
        ("every__get-sum", vec!["a=1", "b=2"]),
        ("everyhttp__get-sum", vec!["a=2", "b=3"]),
        ("everysse__get-sum", vec!["a=3", "b=4"]),
        ("time__get_current_time", vec!["timezone=UTC"]),
        ("memory__read_graph", vec![]),
    ] {
        let mut a = vec![
            "--method".to_string(),
            "tools/call".into(),
            "--tool-name".into(),
            tool.into(),
        ];
        for kv in args {
            a.push("--tool-arg".into());
            a.push(kv.into());
        }
        let r = inspector(a).await;
        assert!(
            r["content"].is_array() && r.get("isError") != Some(&json!(true)),
            "{tool}: {r}"
        );
    }
    let r = inspector(vec![
        "--method".into(),
        "tools/call".into(),
        "--tool-name".into(),
        "everyhttp__get-sum".into(),
        "--tool-arg".into(),
        "a=2".into(),
        "--tool-arg".into(),
        "b=3".into(),
    ])
    .await;
    assert!(
        r["content"][0]["text"].as_str().unwrap().contains('5'),
        "{r}"
    );
}

/// An upstream registered with a URL its server redirects (the Python SDK's servers answer a
/// POST to `/mcp/` with 307 to `/mcp`): the gateway follows, lists its tools and calls them,
/// also after the first call has found the redirect.
#[tokio::test]
async fn an_upstream_whose_url_redirects_is_followed() {
    let port = free_port();
    let _server = python_server("sdk_server.py", port, &[]).await;
    let upstream = format!(
        r#"name = "py"
transport = "http"
url = "http://127.0.0.1:{port}/mcp/""#
    );
    let gw = Gateway::start(&with_one_upstream(&upstream)).await;
    gw.wait_up(&["py"]).await;
    let mut host = gateway_tests::RawClient::initialize(&gw.mcp, json!({})).await;
    let tools = host.request("tools/list", json!({})).await;
    assert!(
        tools["result"]["tools"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["name"] == "py__shout")),
        "{tools}\n{}",
        gw.log()
    );
    for word in ["first", "second"] {
        let r = host
            .request(
                "tools/call",
                json!({"name": "py__shout", "arguments": {"text": word}}),
            )
            .await;
        assert_eq!(
            r["result"]["content"][0]["text"],
            word.to_uppercase(),
            "{r}\n{}",
            gw.log()
        );
    }
    // The SDK answers each call over SSE, here through the client that follows redirects:
    // its connections are kept as well (5 of them for these 22 calls before the drain of
    // `upstream::h1`, 4 after: this server ends its streams with the answer).
    shout_many(&mut host, "py__shout", 20, &gw).await;
    let used = gateway_tests::connections_to(port);
    assert!(
        used <= reused_bound(22),
        "{used} connections to the upstream for 22 calls"
    );
}

/// An `https://` upstream whose certificate a private authority signed (the Python SDK's server
/// over TLS): the gateway trusts the authorities of the system's store and of `SSL_CERT_FILE`,
/// not only the bundled public ones, so an internal server is reached and called; and its calls,
/// answered over SSE through the TLS client, keep their connections (one TLS handshake per call
/// otherwise).
#[tokio::test]
async fn an_https_upstream_signed_by_a_private_authority_is_trusted() {
    let port = free_port();
    let certs = gateway_tests::scratch();
    let _server = python_server("tls_server.py", port, &[certs.as_os_str()]).await;
    let ca = certs.join("ca.pem");
    assert!(ca.exists(), "the server wrote its authority's certificate");
    let upstream = format!(
        r#"name = "tls"
transport = "http"
url = "https://localhost:{port}/mcp""#
    );
    let gw = Gateway::start_with_env(
        &with_one_upstream(&upstream),
        &[("SSL_CERT_FILE", ca.to_str().unwrap())],
    )
    .await;
    gw.wait_up(&["tls"]).await;
    let mut host = gateway_tests::RawClient::initialize(&gw.mcp, json!({})).await;
    shout_many(&mut host, "tls__shout", 20, &gw).await;
    let used = gateway_tests::connections_to(port);
    assert!(
        used <= reused_bound(20),
        "{used} connections to the upstream for 20 calls"
    );
}

/// An upstream whose tool list comes in pages (the Python SDK's low-level server, 25 tools in
/// pages of 10, over stdio): the gateway follows `nextCursor` to the end, so every tool of
/// every page is listed and callable.
#[tokio::test]
async fn an_upstream_that_lists_its_tools_in_pages_is_read_whole() {
    let upstream = format!(
        r#"name = "paged"
transport = "stdio"
command = "{python}"
args = ["{server}", "25", "10"]"#,
        python = peers().join("venv/bin/python").display(),
        server = gateway_tests::package_dir()
            .join("clients/paged_server.py")
            .display(),
    );
    let gw = Gateway::start(&with_one_upstream(&upstream)).await;
    gw.wait_up(&["paged"]).await;
    let mut host = gateway_tests::RawClient::initialize(&gw.mcp, json!({})).await;
    let tools = host.request("tools/list", json!({})).await;
    let mut names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{tools}"))
        .iter()
        .filter_map(|t| t["name"].as_str()?.strip_prefix("paged__"))
        .collect();
    names.sort_unstable();
    let expected: Vec<String> = (0..25).map(|i| format!("t{i:02}")).collect();
    assert_eq!(names, expected, "{}", gw.log());
    let r = host
        .request("tools/call", json!({"name": "paged__t24", "arguments": {}}))
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "called t24", "{r}");
}

/// One of `tests/clients`' Python servers (the SDK's venv) on `port`, listening; stopped when
/// dropped.
async fn python_server(
    script: &str,
    port: u16,
    args: &[&std::ffi::OsStr],
) -> tokio::process::Child {
    let child = tokio::process::Command::new(peers().join("venv/bin/python"))
        .arg(gateway_tests::package_dir().join("clients").join(script))
        .arg(port.to_string())
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("start {script}: {e}"));
    wait_port(port).await;
    child
}

/// `n` calls of a `shout` tool (the Python SDK servers'), each answered with its text upper-cased.
async fn shout_many(host: &mut gateway_tests::RawClient, tool: &str, n: usize, gw: &Gateway) {
    for i in 0..n {
        let r = host
            .request(
                "tools/call",
                json!({"name": tool, "arguments": {"text": format!("w{i}")}}),
            )
            .await;
        assert_eq!(
            r["result"]["content"][0]["text"],
            format!("W{i}"),
            "{r}\n{}",
            gw.log()
        );
    }
}

/// The most connections to an upstream that `calls` calls may open when connections are kept:
/// half of them. A connection goes back to its pool when the rest of its stream has been read,
/// which `upstream::drain` does after the host has its answer, so a host's next call sometimes
/// opens another (4–5 for 22 calls on an idle machine, 10 with the evaluation sets running on
/// the same two cores); a gateway that kept none would open one per call.
fn reused_bound(calls: usize) -> usize {
    calls / 2
}

/// A gateway config on a fresh SQLite file with one upstream (its `[[upstreams]]` fields).
fn with_one_upstream(upstream: &str) -> String {
    format!(
        "[database]\nurl = \"{db}\"\n\n[[upstreams]]\n{upstream}\n",
        db = super::SQLITE_IN_ITS_FOLDER
    )
}
