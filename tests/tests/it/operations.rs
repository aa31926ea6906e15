//! Operations: health and readiness, Prometheus metrics, request ids, graceful shutdown.

use futures::StreamExt;
use gateway_tests::{Gateway, RawClient};
use serde_json::{json, Value};

use super::sqlite_url;

#[tokio::test]
async fn health_readiness_metrics_and_request_ids() {
    let dir = gateway_tests::scratch();
    let gw = Gateway::start(&format!(
        "{}\n[[upstreams]]\nname = \"dead\"\ntransport = \"stdio\"\ncommand = \"/nonexistent/mcp-server\"\n",
        super::fixture_config(&super::sqlite_url(&dir), "")
    ))
    .await;
    gw.wait_up(&["fx"]).await;
    let http = reqwest::Client::new();
    // The dead upstream's first attempt fails at once; until then the catalog is loading.
    for _ in 0..50 {
        let r = http
            .get(format!("{}/readyz", gw.base))
            .send()
            .await
            .unwrap();
        if r.status() == 200 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let r = http
        .get(format!("{}/healthz", gw.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = http
        .get(format!("{}/readyz", gw.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "a dead upstream does not fail readiness");
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["upstreams_down"], json!(["dead"]));
    assert_eq!(body["catalog"], "loaded");

    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;
    c.request(
        "tools/call",
        json!({"name": "fx__echo", "arguments": {"message": "x"}}),
    )
    .await;
    c.request("tools/call", json!({"name": "fx__nope", "arguments": {}}))
        .await;
    let resp = c
        .post(&json!({"jsonrpc": "2.0", "id": 99, "method": "ping"}))
        .await;
    let id = resp
        .headers()
        .get("x-request-id")
        .expect("request id header")
        .to_str()
        .unwrap()
        .to_string();
    assert!(!id.is_empty());
    let echoed = http
        .get(format!("{}/healthz", gw.base))
        .header("x-request-id", "abc-123")
        .send()
        .await
        .unwrap();
    assert_eq!(
        echoed.headers()["x-request-id"],
        "abc-123",
        "a client's request id is kept"
    );

    let text = gw.metrics().await;
    for needle in [
        r#"mcp_gateway_mcp_requests_total{method="tools/call",outcome="ok"} 1"#,
        r#"mcp_gateway_mcp_requests_total{method="tools/call",outcome="error"} 1"#,
        r#"mcp_gateway_upstream_up{upstream="fx"} 1"#,
        r#"mcp_gateway_upstream_up{upstream="dead"} 0"#,
        r#"mcp_gateway_upstream_calls_in_flight{upstream="fx"} 0"#,
        r#"mcp_gateway_upstream_request_duration_seconds_count{method="tools/call",outcome="ok",upstream="fx"} 1"#,
        "mcp_gateway_sessions_active 1",
        r#"mcp_gateway_db_pool_connections{state="open"}"#,
        r#"mcp_gateway_http_requests_total{route="/mcp",status="200"}"#,
        r#"mcp_gateway_http_request_duration_seconds_count{route="/mcp"}"#,
        r#"mcp_gateway_tool_calls_total{outcome="ok",tool="echo",upstream="fx"} 1"#,
        r#"mcp_gateway_upstream_restarts_total{upstream="fx"} 0"#,
        r#"# TYPE mcp_gateway_upstream_restarts_total counter"#,
        "mcp_gateway_build_info{version=",
        "mcp_gateway_process_resident_memory_bytes",
        "mcp_gateway_process_open_fds",
    ] {
        assert!(text.contains(needle), "missing {needle} in\n{text}");
    }
}

#[tokio::test]
async fn sigterm_lets_calls_in_flight_finish_and_ends_streams() {
    let dir = gateway_tests::scratch();
    let gw = super::fixture_gateway(&dir).await;
    let c = RawClient::initialize(&gw.mcp, json!({})).await;
    let mut listening = Box::pin(c.listen().await);
    let url = gw.mcp.clone();
    let session = c.session.clone();
    let call = tokio::spawn(async move {
        let mut c = RawClient::new(&url);
        c.session = session;
        c.request(
            "tools/call",
            json!({"name": "fx__sleep", "arguments": {"ms": 1500}}),
        )
        .await
    });
    gw.wait_in_flight("fx", 1).await;
    let status = gw.stop().await;
    assert!(status.success(), "clean exit: {status:?}");
    let r = call.await.unwrap();
    assert_eq!(
        r["result"]["content"][0]["text"], "slept",
        "the call in flight finished: {r}"
    );
    let end = tokio::time::timeout(std::time::Duration::from_secs(5), listening.next()).await;
    assert!(matches!(end, Ok(None)), "the GET stream ended");
}

/// Issue 37, item 17: upstreams closed on purpose at shutdown are not reported as lost.
#[tokio::test]
async fn sigterm_closes_upstreams_without_reporting_them_lost() {
    let dir = gateway_tests::scratch();
    let bin = gateway_tests::peers().join("node_modules/.bin/mcp-server-everything");
    let mut config = format!("[database]\nurl = \"{}\"\n", sqlite_url(&dir));
    let mut names = Vec::new();
    for i in 0..6 {
        config += &format!(
            "\n[[upstreams]]\nname = \"fx{i}\"\ntransport = \"stdio\"\ncommand = \"{}\"\n",
            super::fixture_bin()
        );
        names.push(format!("fx{i}"));
    }
    config += &format!(
        "\n[[upstreams]]\nname = \"ev\"\ntransport = \"stdio\"\ncommand = \"{}\"\n",
        bin.display()
    );
    names.push("ev".into());
    let gw = Gateway::start(&config).await;
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    gw.wait_up(&refs).await;
    let (status, dir) = gw.stop_keeping_dir().await;
    assert!(status.success(), "clean exit: {status:?}");
    let text = std::fs::read_to_string(dir.join("gateway.log")).unwrap();
    for line in text.lines().filter(|l| l.contains("\"level\":\"WARN\"")) {
        assert!(
            !line.contains("connection lost") && !line.contains("upstream unavailable"),
            "a shutdown warned: {line}"
        );
    }
}

/// `mcp-gateway import-mcp-servers` with VS Code's `servers` form: `${env:VAR}` expanded from the
/// environment, the imported upstream started by the gateway, a whole-value reference kept as one.
#[tokio::test]
async fn vs_code_servers_are_imported_with_variables_expanded() {
    let dir = gateway_tests::scratch();
    let db = sqlite_url(&dir);
    std::fs::write(
        dir.join("gateway.toml"),
        format!("[database]\nurl = \"{db}\"\n"),
    )
    .unwrap();
    let bin_dir = std::path::Path::new(super::fixture_bin()).parent().unwrap();
    std::fs::write(
        dir.join("mcp.json"),
        serde_json::json!({"servers": {"fx": {"type": "stdio",
            "command": "${env:FIXTURE_DIR}/fixture-server",
            "env": {"FIXTURE_SECRET": "${env:MY_SECRET}"}}}, "inputs": []})
        .to_string(),
    )
    .unwrap();
    let out = tokio::process::Command::new(gateway_tests::gateway_bin())
        .arg("--config")
        .arg(dir.join("gateway.toml"))
        .arg("import-mcp-servers")
        .arg(dir.join("mcp.json"))
        .env("FIXTURE_DIR", bin_dir)
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("imported fx"));
    // The reference resolves from the gateway's environment when the upstream starts.
    let gw = Gateway::start_with_env(
        &format!("[database]\nurl = \"{db}\"\n"),
        &[("MY_SECRET", "s3cret")],
    )
    .await;
    gw.wait_up(&["fx"]).await;
    let upstreams = gw.get_json("/admin/v1/upstreams").await;
    let fx = upstreams
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["name"] == "fx")
        .unwrap_or_else(|| panic!("{upstreams}"));
    let spec = if fx.get("spec").is_some() {
        &fx["spec"]
    } else {
        fx
    };
    assert_eq!(
        spec["command"],
        format!("{}/fixture-server", bin_dir.display())
    );
    assert_eq!(
        spec["env"]["FIXTURE_SECRET"],
        serde_json::json!({"env": "MY_SECRET"})
    );
}

/// VS Code's own file: JSONC (comments, trailing commas), `inputs` and an `envFile`; a server
/// the config file also defines is not imported, and the command says which file wins.
#[tokio::test]
async fn a_vs_code_jsonc_file_with_inputs_and_an_env_file_is_imported_and_the_config_file_wins() {
    let dir = gateway_tests::scratch();
    let db = sqlite_url(&dir);
    let config = super::fixture_config(&db, "");
    std::fs::write(dir.join("gateway.toml"), &config).unwrap();
    let vscode = dir.join(".vscode");
    std::fs::create_dir_all(&vscode).unwrap();
    std::fs::write(dir.join(".env"), "# settings\nLOG_MODE=quiet\n").unwrap();
    let fixture = super::fixture_bin();
    std::fs::write(
        vscode.join("mcp.json"),
        format!(
            r#"{{
  // Asked for by VS Code; a variable here.
  "inputs": [{{"type": "promptString", "id": "fixture-secret", "password": true}},],
  "servers": {{
    "tools": {{"command": "{fixture}", "env": {{"FIXTURE_SECRET": "${{input:fixture-secret}}"}},
               "envFile": "${{workspaceFolder}}/.env",}},
    /* the config file has one of this name */
    "fx": {{"command": "{fixture}"}},
  }},
}}"#
        ),
    )
    .unwrap();
    let import = |dry: bool| {
        let mut cmd = std::process::Command::new(gateway_tests::gateway_bin());
        cmd.arg("--config")
            .arg(dir.join("gateway.toml"))
            .arg("import-mcp-servers")
            .arg(vscode.join("mcp.json"));
        if dry {
            cmd.arg("--dry-run");
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let dry = import(true);
    for said in [
        "${input:fixture-secret}: VS Code asks for it; here it is the variable FIXTURE_SECRET",
        "mcpServers.tools.envFile: 1 variable(s) from",
        "would skip fx: the config file",
        "defines an upstream of this name, and it wins; rename the server in ",
        "would import tools",
        "dry run: nothing changed",
    ] {
        assert!(dry.contains(said), "{said:?} not in:\n{dry}");
    }
    let done = import(false);
    assert!(
        done.contains("imported tools") && done.contains("skipped fx"),
        "{done}"
    );

    let gw = Gateway::start_with_env(&config, &[("FIXTURE_SECRET", "s3cret")]).await;
    gw.wait_up(&["fx", "tools"]).await;
    let upstreams = gw.get_json("/admin/v1/upstreams").await;
    let by = |n: &str| {
        upstreams
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["name"] == n)
            .cloned()
            .unwrap_or_else(|| panic!("{upstreams}"))
    };
    assert_eq!(by("fx")["source"], "config");
    let tools = by("tools");
    assert_eq!(
        tools["env"]["FIXTURE_SECRET"],
        json!({"env": "FIXTURE_SECRET"}),
        "{tools}"
    );
    assert_eq!(tools["env"]["LOG_MODE"], "quiet", "{tools}");
}

/// Issue 37, item 12: `import-mcp-servers` says what it moved where, refuses what it cannot keep
/// secret, never writes a secret's value, and `--dry-run` changes nothing.
#[tokio::test]
async fn importing_mcp_servers_keeps_secrets_out_of_the_database_and_says_where_they_went() {
    let dir = gateway_tests::scratch();
    let db = sqlite_url(&dir);
    let config = dir.join("gateway.toml");
    std::fs::write(&config, format!("[database]\nurl = \"{db}\"\n")).unwrap();
    let import = |file: &str, extra: &[&str]| {
        let mut cmd = tokio::process::Command::new(gateway_tests::gateway_bin());
        cmd.arg("--config")
            .arg(&config)
            .arg("import-mcp-servers")
            .arg(dir.join(file))
            .args(extra)
            .env("API_TOKEN", "tok-live-123")
            .env("HOME", "/home/ann");
        async move { cmd.output().await.unwrap() }
    };
    std::fs::write(
        dir.join("args.json"),
        json!({"mcpServers": {"gh": {"command": "gh-mcp", "args": ["--token", "${API_TOKEN}"]}}})
            .to_string(),
    )
    .unwrap();
    let out = import("args.json", &[]).await;
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !out.status.success(),
        "a secret in a command line is refused: {said}"
    );
    assert!(
        said.contains("args[1]") && said.contains("API_TOKEN") && !said.contains("tok-live-123"),
        "{said}"
    );

    std::fs::write(
        dir.join("mcp.json"),
        json!({"mcpServers": {"remote": {"url": "http://127.0.0.1:9/mcp",
            "headers": {"Authorization": "Bearer ${API_TOKEN}"}}}})
        .to_string(),
    )
    .unwrap();
    let out = import("mcp.json", &["--dry-run"]).await;
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains(
            "headers.Authorization: moved to a reference to $REMOTE_AUTHORIZATION; set \
             REMOTE_AUTHORIZATION to \"Bearer ${API_TOKEN}\""
        ) && said.contains("dry run: nothing changed"),
        "{said}"
    );
    let out = import("mcp.json", &[]).await;
    assert!(out.status.success());
    let exported = gateway_tests::cli(&config, &["export"]).await;
    let exported = String::from_utf8_lossy(&exported.stdout);
    assert!(
        exported.contains("REMOTE_AUTHORIZATION") && !exported.contains("tok-live-123"),
        "{exported}"
    );
    let db_file = std::fs::read(dir.join("gw.db")).unwrap_or_default();
    let wal = std::fs::read(dir.join("gw.db-wal")).unwrap_or_default();
    for bytes in [db_file, wal] {
        assert!(
            !bytes.windows(12).any(|w| w == b"tok-live-123"),
            "the secret's value reached the database"
        );
    }
}

#[tokio::test]
async fn probes_and_metrics_move_to_their_own_port_when_ops_listen_is_set() {
    let dir = gateway_tests::scratch();
    let ops = format!("127.0.0.1:{}", gateway_tests::free_port());
    let gw = Gateway::start_with_env(
        &super::fixture_config(&sqlite_url(&dir), ""),
        &[("MCP_GATEWAY_OPS_LISTEN", &ops)],
    )
    .await;
    gw.wait_up(&["fx"]).await;
    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;
    let result = c
        .request(
            "tools/call",
            json!({"name": "fx__echo", "arguments": {"message": "on the main port"}}),
        )
        .await;
    assert_eq!(
        result["result"]["content"][0]["text"], "on the main port",
        "{result}"
    );
    let http = reqwest::Client::new();
    for path in ["/healthz", "/readyz", "/metrics"] {
        let on_main = http.get(format!("{}{path}", gw.base)).send().await.unwrap();
        assert_eq!(on_main.status(), 404, "{path} left the main port");
        let on_ops = http
            .get(format!("http://{ops}{path}"))
            .send()
            .await
            .unwrap();
        assert_eq!(on_ops.status(), 200, "{path} on the ops port");
        if path == "/metrics" {
            let text = on_ops.text().await.unwrap();
            assert!(
                text.contains(
                    r#"mcp_gateway_mcp_requests_total{method="tools/call",outcome="ok"} 1"#
                ),
                "the ops port shows the main port's traffic: {text}"
            );
        }
    }
    let refused = http
        .post(format!("http://{ops}/mcp"))
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 404, "no MCP on the ops port");
}

#[tokio::test]
async fn the_log_is_json_or_text_with_fields_and_a_starting_replica_logs_no_error() {
    // An upstream that never answers keeps the replica starting: /readyz answers 503.
    let config = |dir: &std::path::Path| {
        super::fixture_config(&sqlite_url(dir), "")
            + "\n[[upstreams]]\nname = \"mute\"\ntransport = \"stdio\"\ncommand = \"sleep\"\nargs = [\"30\"]\n"
    };
    let dir = gateway_tests::scratch();
    let gw = Gateway::start(&config(&dir)).await;
    gw.wait_up(&["fx"]).await;
    for _ in 0..5 {
        let r = reqwest::get(format!("{}/readyz", gw.base)).await.unwrap();
        assert_eq!(r.status(), 503);
    }
    // Not a terminal: JSON lines, with the sync's figures as fields, and no ERROR line.
    let log = gw.log();
    let lines: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("not JSON: {l}")))
        .collect();
    assert!(lines.iter().all(|l| l["level"] != "ERROR"), "{log}");
    assert!(!log.contains("/readyz"), "probes are not logged: {log}");
    let synced = lines
        .iter()
        .find(|l| l["fields"]["message"] == "catalog synced" && l["fields"]["upstream"] == "fx")
        .unwrap_or_else(|| panic!("{log}"));
    assert_eq!(synced["fields"]["added"], 9, "{synced}");
    assert!(!log.contains("SyncReport"), "{log}");
    drop(gw);

    // Asked for text: readable lines, the same fields.
    let dir = gateway_tests::scratch();
    let gw = Gateway::start_with_env(&config(&dir), &[("MCP_GATEWAY_LOG_FORMAT", "text")]).await;
    gw.wait_up(&["fx"]).await;
    let log = gw.log();
    assert!(
        log.lines()
            .all(|l| serde_json::from_str::<Value>(l).is_err()),
        "{log}"
    );
    let synced = log
        .lines()
        .find(|l| l.contains("catalog synced") && l.contains("upstream=fx"))
        .unwrap_or_else(|| panic!("{log}"));
    assert!(
        synced.contains(" INFO ") && synced.contains("added=9"),
        "{synced}"
    );
    assert!(!log.contains('\u{1b}'), "no colours off a terminal: {log}");
}

#[tokio::test]
async fn check_config_names_every_problem_at_once_and_warns_about_what_would_fail_later() {
    let dir = gateway_tests::scratch();
    let path = dir.join("gateway.toml");
    std::fs::write(
        &path,
        "[server]\nlistn = \"127.0.0.1:1\"\n[audit]\nqueue = 0\n[routing]\nenabld = false\n\
         [[upstreams]]\nname = \"local\"\ntransport = \"stdio\"\ncommand = \"no-such-mcp-server\"\n\
         [[upstreams]]\nname = \"gh\"\ntransport = \"http\"\nurl = \"http://127.0.0.1:9/mcp\"\n\
         headers = { Authorization = { env = \"GH_TOKEN_FOR_CHECK\" } }\n",
    )
    .unwrap();
    let check = |path: &std::path::Path| {
        std::process::Command::new(gateway_tests::gateway_bin())
            .arg("--config")
            .arg(path)
            .arg("check-config")
            .env_remove("GH_TOKEN_FOR_CHECK")
            .output()
            .unwrap()
    };
    let out = check(&path);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    for line in [
        "error: server.listn: unknown key (did you mean \"listen\"?)",
        "error: routing.enabld: unknown key (did you mean \"enabled\"?)",
        "error: audit.queue: must be > 0",
        "warning: upstreams[gh].headers.Authorization: the variable GH_TOKEN_FOR_CHECK is not set",
        "warning: upstreams[local].command: \"no-such-mcp-server\" is not found on PATH",
        "3 error(s), 2 warning(s): the gateway would not start",
    ] {
        assert!(err.contains(line), "{line:?} missing from:\n{err}");
    }
    // Fixed, the file is valid; the warnings stay, and the upstreams are listed.
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace("listn", "listen")
            .replace("queue = 0", "queue = 10")
            .replace("enabld", "enabled"),
    )
    .unwrap();
    let out = check(&path);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("valid, 2 warning(s)"), "{err}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "local (stdio)\ngh (http)\n"
    );

    // Routing on with a folder that holds no model: valid, but tool search would match words
    // only, and the warning names what is missing.
    let empty = dir.join("no-model");
    std::fs::create_dir(&empty).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace(
            "enabled = false",
            &format!(
                "enabled = true\nmodel_dir = {:?}",
                empty.display().to_string()
            ),
        ),
    )
    .unwrap();
    let out = std::process::Command::new(gateway_tests::gateway_bin())
        .arg("--config")
        .arg(&path)
        .arg("check-config")
        .env_remove("GH_TOKEN_FOR_CHECK")
        .env_remove("MCP_GATEWAY_MODEL_DIR")
        .env_remove("MCP_GATEWAY_ORT_LIBRARY")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("valid, 3 warning(s)"), "{err}");
    let model = empty.join("minilm-tools.onnx");
    assert!(
        err.contains(&format!(
            "warning: routing.model_dir: {}",
            empty.join("libonnxruntime.so").display()
        )) && err.contains(&model.display().to_string())
            && err.contains("tool search would match words only"),
        "{err}"
    );
}
