//! The holes an outside security and failure test found (issue 12), each shown through the real
//! binary with real peers: dot segments past a role's resource patterns, stalled connections,
//! secrets in stdio children's environment, token checks during a database outage, and the
//! smaller protocol and HTTP details.

use std::time::{Duration, Instant};

use gateway_tests::{peers, Gateway, Idp, PgCluster, RawClient};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::{fixture_config, sqlite_url, ADMIN_ROLE};

fn everything_bin() -> String {
    peers()
        .join("node_modules/.bin/mcp-server-everything")
        .display()
        .to_string()
}

#[tokio::test]
async fn dot_segments_do_not_carry_a_uri_past_a_role() {
    let dir = gateway_tests::scratch();
    let bin = everything_bin();
    let config = format!(
        "[auth]\nmode = \"required\"\n\n[database]\nurl = \"{}\"\n\n\
         [[upstreams]]\nname = \"ev1\"\ntransport = \"stdio\"\ncommand = \"{bin}\"\n\n\
         [[upstreams]]\nname = \"ev2\"\ntransport = \"stdio\"\ncommand = \"{bin}\"\n\n\
         {ADMIN_ROLE}\n[[roles]]\nname = \"texts\"\nresources = [\"*/dynamic/text/*\"]\n",
        sqlite_url(&dir)
    );
    let gw = Gateway::start_secured(&config, &[]).await;
    gw.wait_up(&["ev1", "ev2"]).await;
    let token = gw.token_for("user", &["texts"]).await;
    let mut c = RawClient::initialize_as(&gw.mcp, json!({}), Some(&token)).await;

    let read = |uri: &str| json!({ "uri": uri });
    // Two upstreams with the same URIs: the gateway exposes them as mcpgw://UPSTREAM/URI.
    let allowed = "mcpgw://ev1/demo://resource/dynamic/text/1";
    let r = c.request("resources/read", read(allowed)).await;
    assert!(
        r["result"]["contents"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("Resource 1")),
        "the role reads what it is granted: {r}"
    );
    for attempt in [
        "mcpgw://ev1/demo://resource/dynamic/text/../../static/document/architecture.md",
        "mcpgw://ev1/demo://resource/dynamic/text/%2e%2e/%2E%2E/static/document/architecture.md",
        "mcpgw://ev1/demo://resource/dynamic/text/./../../static/document/architecture.md",
        "mcpgw://ev2/demo://resource/dynamic/text/..%2F..%2Fstatic/document/architecture.md",
        "mcpgw://ev2/demo://resource/dynamic/text/..\\..\\static/document/architecture.md",
        // WHATWG parsers (the TypeScript upstream's) strip tab, LF and CR: `.\t.` is `..`.
        "mcpgw://ev1/demo://resource/dynamic/text/.\t./.\t./static/document/architecture.md",
        "mcpgw://ev1/demo://resource/dynamic/text/.\n./.\r./static/document/architecture.md",
        "mcpgw://ev1/demo://resource/dynamic/text/%2e\t%2e/..\n/static/document/architecture.md",
    ] {
        let r = c.request("resources/read", read(attempt)).await;
        assert!(
            r.get("result").is_none() && r["error"]["code"] == -32602,
            "{attempt:?} must not reach a static resource: {r}"
        );
    }
    // A dot segment is refused even inside the grant, naming the URI to send instead: the
    // gateway forwards only URIs that every parser reads as it does.
    let r = c
        .request(
            "resources/read",
            read("mcpgw://ev2/demo://resource/dynamic/text/9/../2"),
        )
        .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(
        r["error"]["data"]["normal"], "mcpgw://ev2/demo://resource/dynamic/text/2",
        "{r}"
    );
    let want = [
        "mcpgw://ev1/demo://resource/dynamic/text/1",
        // The refused read is audited as what it would have reached.
        "mcpgw://ev1/demo://resource/static/document/architecture.md",
    ];
    let mut targets = Vec::new();
    for _ in 0..40 {
        let audit = gw.get_json("/admin/v1/audit?action=resources/read").await;
        targets = audit
            .as_array()
            .unwrap_or_else(|| panic!("{audit}"))
            .iter()
            .map(|e| {
                format!(
                    "{} {}",
                    e["outcome"].as_str().unwrap_or(""),
                    e["target"].as_str().unwrap_or("")
                )
            })
            .collect::<Vec<_>>();
        if want.iter().all(|w| targets.iter().any(|t| t.ends_with(w))) && targets.len() >= 10 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(targets.contains(&format!("ok {}", want[0])), "{targets:?}");
    assert!(
        targets.contains(&format!("error {}", want[1])),
        "{targets:?}"
    );
    // One read succeeded: every other row says it did not.
    assert_eq!(
        targets.iter().filter(|t| t.starts_with("ok ")).count(),
        1,
        "{targets:?}"
    );
}

/// Issue 37's example: a role granted the static resources reads a dynamic one through `.\t.`.
#[tokio::test]
async fn a_control_character_inside_dot_dot_does_not_escape_a_grant() {
    let dir = gateway_tests::scratch();
    let config = format!(
        "[auth]\nmode = \"required\"\n\n[database]\nurl = \"{}\"\n\n\
         [[upstreams]]\nname = \"everything\"\ntransport = \"stdio\"\ncommand = \"{}\"\n\n\
         {ADMIN_ROLE}\n[[roles]]\nname = \"static\"\n\
         resources = [\"mcpgw://everything/demo://resource/static/*\"]\n",
        sqlite_url(&dir),
        everything_bin()
    );
    let gw = Gateway::start_secured(&config, &[]).await;
    gw.wait_up(&["everything"]).await;
    let token = gw.token_for("user", &["static"]).await;
    let mut c = RawClient::initialize_as(&gw.mcp, json!({}), Some(&token)).await;
    let r = c
        .request(
            "resources/read",
            json!({ "uri": "mcpgw://everything/demo://resource/static/document/architecture.md" }),
        )
        .await;
    assert!(
        r["result"]["contents"][0].is_object(),
        "the grant holds: {r}"
    );
    for sep in ["\t", "\n", "\r", "\t\n", " "] {
        let uri = format!("mcpgw://everything/demo://resource/static/.{sep}./dynamic/text/1");
        let r = c.request("resources/read", json!({ "uri": uri })).await;
        assert!(
            r.get("result").is_none() && r["error"]["code"] == -32602,
            "{uri:?} must be refused: {r}"
        );
        assert!(
            r["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("control character or whitespace")),
            "{r}"
        );
    }
}

#[tokio::test]
async fn stdio_children_see_no_secrets_of_the_gateway() {
    let dir = gateway_tests::scratch();
    let config = format!(
        "[database]\nurl = \"{}\"\n\n[[upstreams]]\nname = \"everything\"\ntransport = \"stdio\"\n\
         command = \"{}\"\ninherit_env = [\"KEEP_*\"]\nenv = {{ OWN = \"own-value\" }}\n\n\
         [[upstreams]]\nname = \"remote\"\ntransport = \"http\"\nurl = \"http://127.0.0.1:9/mcp\"\n\
         headers = {{ Authorization = {{ env = \"REMOTE_TOKEN\" }} }}\n",
        sqlite_url(&dir),
        everything_bin()
    );
    let gw = Gateway::start_with_env(
        &config,
        &[
            ("REMOTE_TOKEN", "Bearer top-secret-remote"),
            ("KEEP_ME", "kept-value"),
            ("TZ", "UTC"),
        ],
    )
    .await;
    gw.wait_up(&["everything"]).await;
    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;
    let r = c
        .request(
            "tools/call",
            json!({"name": "everything__get-env", "arguments": {}}),
        )
        .await;
    let text = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{r}"));
    let env: Value = serde_json::from_str(text).unwrap();
    assert!(
        !text.contains("top-secret-remote"),
        "another upstream's secret leaked: {text}"
    );
    assert!(
        env.as_object()
            .unwrap()
            .keys()
            .all(|k| !k.starts_with("MCP_GATEWAY_")),
        "{text}"
    );
    assert_eq!(
        env["KEEP_ME"], "kept-value",
        "inherit_env passes what it names"
    );
    assert_eq!(env["OWN"], "own-value", "the upstream's own env");
    assert_eq!(env["TZ"], "UTC", "the allowlist");
    assert!(env["PATH"].is_string());
}

/// Opens a connection and sends `bytes`, then leaves it as it is.
async fn stall(addr: &str, bytes: &[u8]) -> TcpStream {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(bytes).await.unwrap();
    s
}

/// Whether the server has closed the connection (EOF or reset) within `within`; what a
/// completed response sent earlier is skipped.
async fn closed_by_server(s: &mut TcpStream, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    let mut buf = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, s.read(&mut buf)).await {
            Err(_) => return false,
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) => continue,
        }
    }
}

fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0)
}

#[tokio::test]
async fn stalled_connections_do_not_stop_a_real_client() {
    let dir = gateway_tests::scratch();
    let gw = Gateway::start(&fixture_config(
        &sqlite_url(&dir),
        "\n[server]\nheader_read_timeout_secs = 2\nbody_read_timeout_secs = 2\n",
    ))
    .await;
    gw.wait_up(&["fx"]).await;
    let addr = gw.base.trim_start_matches("http://").to_string();
    let mut stalled = Vec::new();
    for i in 0..300 {
        let s = match i % 3 {
            // Half-sent headers.
            0 => stall(&addr, b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n").await,
            // Headers, then half a body.
            1 => {
                stall(
                    &addr,
                    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                      Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\"",
                )
                .await
            }
            // A finished request, then an idle keep-alive connection.
            _ => stall(&addr, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").await,
        };
        stalled.push(s);
    }
    // A real client is served while they sit there.
    let health = reqwest::get(format!("{}/healthz", gw.base)).await.unwrap();
    assert_eq!(health.status(), 200);
    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;
    let r = c
        .request(
            "tools/call",
            json!({"name": "fx__echo", "arguments": {"message": "through"}}),
        )
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "through", "{r}");
    // The gateway closes every stalled connection once its timeout has passed.
    for (i, s) in stalled.iter_mut().enumerate() {
        assert!(
            closed_by_server(s, Duration::from_secs(15)).await,
            "stalled connection {i} (kind {}) is still open",
            i % 3
        );
    }
}

#[tokio::test]
async fn the_connection_cap_bounds_descriptors_and_clients_get_through() {
    let dir = gateway_tests::scratch();
    let gw = Gateway::start(&fixture_config(
        &sqlite_url(&dir),
        "\n[server]\nmax_connections = 20\nheader_read_timeout_secs = 2\n",
    ))
    .await;
    gw.wait_up(&["fx"]).await;
    let before = open_fds(gw.pid());
    let addr = gw.base.trim_start_matches("http://").to_string();
    let mut stalled = Vec::new();
    for _ in 0..200 {
        stalled.push(stall(&addr, b"GET /healthz HTTP/1.1\r\n").await);
    }
    // The descriptors held while the stalled clients wait, sampled over a second (stalled
    // connections time out after 2 s and others come in from the backlog): the most at any
    // moment is bounded by the cap, and the gateway did take connections.
    let mut during = 0;
    for _ in 0..50 {
        during = during.max(open_fds(gw.pid()));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        during > before + 10,
        "the gateway took connections: {before} → {during}"
    );
    assert!(
        during <= before + 20 + 4,
        "at most max_connections client sockets: {before} fds before, {during} with 200 stalled"
    );
    // Past the cap a new client waits in the backlog until stalled ones time out.
    let health = tokio::time::timeout(
        Duration::from_secs(30),
        reqwest::get(format!("{}/healthz", gw.base)),
    )
    .await
    .expect("served once the stalled connections time out")
    .unwrap();
    assert_eq!(health.status(), 200);
}

#[tokio::test]
async fn tokens_seen_before_are_decided_at_once_while_postgres_is_down() {
    let pg = PgCluster::start();
    // Calls are served while their audit rows wait in the queue ("buffer"); the default refuses
    // them while the audit log cannot be written (full_disk.rs).
    let config = format!(
        "[audit]\nwhen_unwritable = \"buffer\"\n\n[auth]\nmode = \"required\"\n\n{ADMIN_ROLE}\n[[roles]]\nname = \"user\"\nupstreams = [\"fx\"]\n\n{}",
        fixture_config(&pg.url, "")
    );
    let gw = Gateway::start_secured(&config, &[]).await;
    gw.wait_up(&["fx"]).await;
    let token = gw.token_for("user", &["user"]).await;
    let unseen = gw.token_for("user", &["user"]).await;
    let mut c = RawClient::initialize_as(&gw.mcp, json!({}), Some(&token)).await;
    let call = json!({"name": "fx__echo", "arguments": {"message": "m"}});
    assert_eq!(
        c.request("tools/call", call.clone()).await["result"]["content"][0]["text"],
        "m"
    );
    pg.stop();
    let started = Instant::now();
    for _ in 0..10 {
        assert_eq!(
            c.request("tools/call", call.clone()).await["result"]["content"][0]["text"],
            "m"
        );
    }
    let ten_calls = started.elapsed();
    // Each check used to wait for the pool's ~3 s timeout: 10 calls took over 30 s.
    assert!(
        ten_calls < Duration::from_secs(6),
        "10 calls with a known token took {ten_calls:?} while the database was down"
    );
    // A token never seen cannot be decided from memory: it waits and is refused.
    let mut fresh = RawClient::new(&gw.mcp);
    fresh.token = Some(unseen);
    let r = fresh
        .post(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}}),
        )
        .await;
    assert_eq!(r.status(), 503);
    pg.restart();
}

#[tokio::test]
async fn jwt_crit_headers_and_resource_metadata() {
    const RESOURCE: &str = "https://gateway.test/mcp";
    let idp = Idp::start(json!([])).await;
    let dir = gateway_tests::scratch();
    let config = format!(
        "[auth]\nmode = \"required\"\nresource = \"{RESOURCE}\"\n\n[[auth.issuers]]\nissuer = \"{}\"\n\
         roles = [\"user\"]\n\n{ADMIN_ROLE}\n[[roles]]\nname = \"user\"\nupstreams = [\"fx\"]\n\n{}",
        idp.issuer,
        fixture_config(&sqlite_url(&dir), "")
    );
    let gw = Gateway::start_secured(&config, &[]).await;
    gw.wait_up(&["fx"]).await;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let claims = json!({"iss": idp.issuer, "aud": RESOURCE, "sub": "ada", "exp": now + 300,
                        "iat": now, "scope": "mcp"});
    let status = |token: String| {
        let url = gw.mcp.clone();
        async move {
            reqwest::Client::new()
                .post(url)
                .bearer_auth(token)
                .header("accept", "application/json, text/event-stream")
                .json(
                    &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "t", "version": "0"}}}),
                )
                .send()
                .await
                .unwrap()
        }
    };
    let good = idp.sign(json!({"typ": "at+jwt"}), claims.clone()).await;
    assert_eq!(
        status(good).await.status(),
        200,
        "the same token without crit"
    );
    let crit = idp
        .sign(
            json!({"typ": "at+jwt", "crit": ["x-unknown-ext"], "x-unknown-ext": true}),
            claims,
        )
        .await;
    let r = status(crit).await;
    assert_eq!(r.status(), 401);
    let challenge = r.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(challenge.contains("critical"), "{challenge}");

    // RFC 9728 §3.3: each document names the resource its URL was made from.
    let root = gw.get_json("/.well-known/oauth-protected-resource").await;
    assert_eq!(root["resource"], "https://gateway.test", "{root}");
    let mcp = gw
        .get_json("/.well-known/oauth-protected-resource/mcp")
        .await;
    assert_eq!(mcp["resource"], RESOURCE, "{mcp}");
}

/// Sends raw bytes and returns the status line and body of the answer.
async fn raw_http(addr: &str, request: &str) -> String {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(request.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut out)).await;
    String::from_utf8_lossy(&out).to_string()
}

#[tokio::test]
async fn smaller_protocol_and_http_holes() {
    let dir = gateway_tests::scratch();
    let gw = Gateway::start_with_env(
        &fixture_config(&sqlite_url(&dir), ""),
        // Dual-stack: IPv4 loopback peers arrive as ::ffff:127.0.0.1.
        &[("MCP_GATEWAY_LISTEN", "[::]:0")],
    )
    .await;
    let port = gw.base.rsplit(':').next().unwrap().to_string();
    let base = format!("http://127.0.0.1:{port}");
    let health: Value = reqwest::get(format!("{base}/admin/v1/health"))
        .await
        .unwrap()
        .json()
        .await
        .expect("the admin API answers a loopback peer of a dual-stack listener");
    assert!(health.is_array(), "{health}");

    // Two Host headers: the second could be what something downstream reads.
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let answer = raw_http(
        &format!("127.0.0.1:{port}"),
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n\
             Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");

    let mcp = format!("{base}/mcp");
    let mut c = RawClient::initialize(&mcp, json!({})).await;
    let r: Value = c
        .post(&json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": "oops"}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(r["error"]["code"], -32602, "params as a string: {r}");
    let r = c
        .request("logging/setLevel", json!({"level": "nonsense"}))
        .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = c
        .request("logging/setLevel", json!({"level": "warning"}))
        .await;
    assert!(r.get("result").is_some(), "{r}");

    // A credential in an upstream's URL is refused (it would be stored, shown and exported in
    // clear text), saying how to give it as a secret reference; it is never shown.
    let http = reqwest::Client::new();
    let r = http
        .post(format!("{base}/admin/v1/upstreams"))
        .json(&json!({"name": "creds", "transport": "http",
                      "url": "http://ada:hunter2@127.0.0.1:9/mcp"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let shown = r.text().await.unwrap();
    assert!(
        !shown.contains("hunter2") && shown.contains("secret reference"),
        "{shown}"
    );
    for path in ["/admin/v1/upstreams", "/admin/v1/audit"] {
        let text = http
            .get(format!("{base}{path}"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(!text.contains("hunter2"), "{path}: {text}");
    }
    // The way that works: the credential as a header reference, exported as the reference.
    let r = http
        .post(format!("{base}/admin/v1/upstreams"))
        .json(
            &json!({"name": "creds", "transport": "http", "url": "http://127.0.0.1:9/mcp",
                      "headers": {"Authorization": {"env": "CREDS_AUTH"}}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201, "{}", r.text().await.unwrap());
    let config = dir.join("export.toml");
    std::fs::write(&config, fixture_config(&sqlite_url(&dir), "")).unwrap();
    let out = gateway_tests::cli(&config, &["export"]).await;
    let stored = String::from_utf8_lossy(&out.stdout);
    assert!(stored.contains("\"CREDS_AUTH\""), "{stored}");
}

#[tokio::test]
async fn zero_limits_are_refused_with_the_setting_named() {
    let dir = gateway_tests::scratch();
    for (setting, name) in [
        (
            "[server]\nsession_idle_secs = 0\n",
            "server.session_idle_secs",
        ),
        ("[server]\nmax_connections = 0\n", "server.max_connections"),
        ("[server]\nworkers = 0\n", "server.workers"),
        ("[audit]\nqueue = 0\n", "audit.queue"),
    ] {
        let path = dir.join("zero.toml");
        std::fs::write(&path, setting).unwrap();
        let out = tokio::process::Command::new(gateway_tests::gateway_bin())
            .arg("--config")
            .arg(&path)
            .arg("check-config")
            .output()
            .await
            .unwrap();
        assert!(!out.status.success(), "{setting} was accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(name) && err.contains("> 0"), "{err}");
    }
}

/// Issue 37, item 10: a DNS-rebinding page (a foreign DNS name as Host) reads nothing from the
/// probes and metrics, on either port; an IP address as Host is how probes and scrapers call,
/// and stays allowed; `/metrics` can ask for a token.
#[tokio::test]
async fn probes_and_metrics_refuse_a_rebound_host_name_and_metrics_can_need_a_token() {
    let dir = gateway_tests::scratch();
    let ops = gateway_tests::free_port();
    let config = format!(
        "[server]\nops_listen = \"127.0.0.1:{ops}\"\nmetrics_token = {{ env = \"METRICS_TOKEN_FOR_TEST\" }}\n\n{}",
        fixture_config(&sqlite_url(&dir), "")
    );
    let plain_dir = gateway_tests::scratch();
    let plain = Gateway::start(&fixture_config(&sqlite_url(&plain_dir), "")).await;
    let _gw = Gateway::start_with_env(&config, &[("METRICS_TOKEN_FOR_TEST", "scrape-me")]).await;
    let http = reqwest::Client::new();
    let get = |base: String, path: &str, host: &str, token: Option<&str>| {
        let mut r = http.get(format!("{base}{path}")).header("host", host);
        if let Some(t) = token {
            r = r.bearer_auth(t);
        }
        async move { r.send().await.unwrap().status().as_u16() }
    };
    let ops_base = format!("http://127.0.0.1:{ops}");
    for path in ["/metrics", "/readyz", "/healthz"] {
        assert_eq!(
            get(plain.base.clone(), path, "rebind.attacker.example", None).await,
            403,
            "{path} on the main port"
        );
        assert_eq!(
            get(
                ops_base.clone(),
                path,
                "rebind.attacker.example:9090",
                Some("scrape-me")
            )
            .await,
            403,
            "{path} on the ops port"
        );
        // The kubelet and Prometheus address the pod by its IP.
        let want = if path == "/readyz" {
            [200, 503]
        } else {
            [200, 200]
        };
        let got = get(ops_base.clone(), path, "10.1.2.3:9090", Some("scrape-me")).await;
        assert!(want.contains(&got), "{path} by IP: {got}");
        let got = get(plain.base.clone(), path, "[fd00::7]:8080", None).await;
        assert!(
            want.contains(&got),
            "{path} by IPv6 on the main port: {got}"
        );
    }
    assert_eq!(
        get(ops_base.clone(), "/metrics", "10.1.2.3", None).await,
        401
    );
    assert_eq!(
        get(ops_base.clone(), "/metrics", "10.1.2.3", Some("wrong")).await,
        401
    );
    assert_eq!(
        get(plain.base.clone(), "/metrics", "127.0.0.1", None).await,
        200
    );
}

/// Issue 38: the operations port is served like the main one: a request whose headers never
/// finish is closed after `server.header_read_timeout_secs` (it held its socket for ever).
#[tokio::test]
async fn the_operations_port_closes_half_sent_requests() {
    let dir = gateway_tests::scratch();
    let ops = gateway_tests::free_port();
    let gw = Gateway::start(&format!(
        "[server]\nops_listen = \"127.0.0.1:{ops}\"\nheader_read_timeout_secs = 1\n\n{}",
        fixture_config(&sqlite_url(&dir), "")
    ))
    .await;
    let addr = format!("127.0.0.1:{ops}");
    let mut half = stall(&addr, b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n").await;
    assert!(
        closed_by_server(&mut half, Duration::from_secs(10)).await,
        "the half-sent request was closed"
    );
    // A whole one is still answered.
    let r = reqwest::get(format!("http://{addr}/healthz"))
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    drop(gw);
}

/// Issue 38: with authentication off, the protected resource metadata is a 404 in the REST error
/// shape every other non-MCP endpoint answers with (it was a bare `{"error": "..."}`).
#[tokio::test]
async fn resource_metadata_without_authentication_answers_the_rest_error_shape() {
    let dir = gateway_tests::scratch();
    let gw = Gateway::start(&format!("[database]\nurl = \"{}\"\n", sqlite_url(&dir))).await;
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let r = reqwest::get(format!("{}{path}", gw.base)).await.unwrap();
        assert_eq!(r.status(), 404, "{path}");
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["error"]["code"], "not_found", "{path}: {body}");
        assert!(
            body["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("auth.mode = none")),
            "{path}: {body}"
        );
    }
}

/// Reads one answer with a length (head and body) from `s`; empty if the connection closed
/// first.
async fn read_answer(s: &mut TcpStream) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = String::from_utf8_lossy(&got).to_string();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| {
                    let (name, value) = l.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse::<usize>().ok())?
                })
                .expect("an answer with a length");
            if got.len() >= end + 4 + length {
                return text;
            }
        }
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, s.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => got.extend_from_slice(&buf[..n]),
            _ => return String::from_utf8_lossy(&got).to_string(),
        }
    }
}

fn says_close(answer: &str) -> bool {
    answer.lines().any(|l| {
        l.split_once(':').is_some_and(|(name, value)| {
            name.eq_ignore_ascii_case("connection") && value.trim().eq_ignore_ascii_case("close")
        })
    })
}

/// An answer given on the headers alone (the 401 an OAuth host gets first) leaves the body in
/// the socket, and hyper closes the connection once the answer is out. The answer now says so
/// (`Connection: close`); before, it did not, and a client that pools connections sent its next
/// request on the closing socket: "Server disconnected without sending a response" (the Python
/// SDK's httpx, once in a fresh-clone CI run). An answer to a request whose body was read keeps
/// the connection for the next request.
#[tokio::test]
async fn an_answer_given_before_the_body_arrived_says_the_connection_closes() {
    let dir = gateway_tests::scratch();
    let config = format!(
        "[auth]\nmode = \"required\"\n\n{ADMIN_ROLE}\n{}",
        fixture_config(&sqlite_url(&dir), "")
    );
    let gw = Gateway::start_secured(&config, &[]).await;
    let addr = gw.base.trim_start_matches("http://").to_string();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let post = |token: Option<&str>| {
        let auth = token
            .map(|t| format!("Authorization: Bearer {t}\r\n"))
            .unwrap_or_default();
        format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\n{auth}Content-Length: {}\r\n\r\n",
            body.len()
        )
    };
    let next = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

    // The headers alone: the answer comes before the body is sent, as it may for a client whose
    // body leaves in a packet of its own.
    let mut s = TcpStream::connect(&addr).await.unwrap();
    s.write_all(post(None).as_bytes()).await.unwrap();
    let refused = read_answer(&mut s).await;
    assert!(refused.starts_with("HTTP/1.1 401"), "{refused}");
    assert!(
        says_close(&refused),
        "the 401 does not say the connection closes, and then it closes:\n{refused}"
    );
    let _ = s.write_all(format!("{body}{next}").as_bytes()).await;
    assert!(
        closed_by_server(&mut s, Duration::from_secs(5)).await,
        "the connection said to close stays open"
    );

    // A body that was read: the connection serves the next request.
    let token = gw.token_for("root", &["admin"]).await;
    let mut s = TcpStream::connect(&addr).await.unwrap();
    s.write_all(format!("{}{body}", post(Some(&token))).as_bytes())
        .await
        .unwrap();
    let answered = read_answer(&mut s).await;
    assert!(!answered.starts_with("HTTP/1.1 401"), "{answered}");
    assert!(!says_close(&answered), "{answered}");
    s.write_all(next.as_bytes()).await.unwrap();
    let health = read_answer(&mut s).await;
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
}
