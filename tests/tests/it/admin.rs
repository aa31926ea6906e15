//! The admin API: upstreams registered at run time reach open sessions.

use futures::StreamExt;
use gateway_tests::{Gateway, RawClient};
use serde_json::{json, Value};

#[tokio::test]
async fn upstream_added_through_the_api_appears_in_open_sessions_and_goes_away() {
    let dir = gateway_tests::scratch();
    let gw = Gateway::start(&format!(
        "[database]\nurl = \"{}\"\n",
        super::sqlite_url(&dir)
    ))
    .await;
    let http = reqwest::Client::new();
    let api = format!("{}/admin/v1/upstreams", gw.base);
    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;
    // No upstream yet: only the gateway's own meta-tools.
    let names: Vec<Value> = c.request("tools/list", json!({})).await["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(names, [json!("search_tools"), json!("call_tool")]);
    let mut stream = Box::pin(c.listen().await);

    let bad = http
        .post(&api)
        .json(&json!({"name": "x", "transport": "stdio"}))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
    let msg: Value = bad.json().await.unwrap();
    assert!(
        msg["error"]["message"]
            .as_str()
            .unwrap()
            .contains("command"),
        "{msg}"
    );

    let spec = json!({"name": "fx", "transport": "stdio", "command": super::fixture_bin()});
    let created = http.post(&api).json(&spec).send().await.unwrap();
    assert_eq!(created.status(), 201);
    assert_eq!(
        http.post(&api).json(&spec).send().await.unwrap().status(),
        409
    );

    let note = tokio::time::timeout(std::time::Duration::from_secs(30), stream.next())
        .await
        .expect("list_changed within 30 s");
    assert_eq!(note.unwrap()["method"], "notifications/tools/list_changed");
    let tools = c.request("tools/list", json!({})).await;
    let echo = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "fx__echo")
        .cloned()
        .expect("fx__echo listed");
    // Byte-faithful passthrough: only the name is rewritten.
    assert_eq!(
        serde_json::to_string(&echo).unwrap(),
        r#"{"name":"fx__echo","description":"Echoes its message back","inputSchema":{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]},"execution":{"taskSupport":"optional"},"annotations":{"readOnlyHint":true},"_meta":{"fixture/custom":[1,2,3]},"x-unknown-field":{"kept":true}}"#
    );
    let r = c
        .request(
            "tools/call",
            json!({"name": "fx__echo", "arguments": {"message": "hello"}}),
        )
        .await;
    assert_eq!(
        r["result"],
        json!({"content": [{"type": "text", "text": "hello"}], "structuredContent": {"echoed": "hello"}, "_meta": {"fixture/result": true}})
    );

    let catalog = gw.get_json("/admin/v1/catalog").await;
    assert!(catalog
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["exposed"] == "fx__echo" && e["original"] == "echo"));
    let openapi = gw.get_json("/admin/v1/openapi.json").await;
    assert!(openapi["paths"]["/admin/v1/upstreams/{name}"]["delete"].is_object());

    assert_eq!(
        http.delete(format!("{api}/fx"))
            .send()
            .await
            .unwrap()
            .status(),
        204
    );
    assert_eq!(
        http.delete(format!("{api}/fx"))
            .send()
            .await
            .unwrap()
            .status(),
        404
    );
    let r = c
        .request(
            "tools/call",
            json!({"name": "fx__echo", "arguments": {"message": "x"}}),
        )
        .await;
    assert_eq!(
        r["error"]["code"], -32602,
        "a removed upstream's tools are gone"
    );
}

/// The admin API, and an import, take no upstream the config file would refuse: one whose
/// users' tokens there is no key to seal (`user_oauth` without `user_credentials.key`), or one
/// whose users' tokens come from a company sign-in that is not configured (`enterprise_managed`
/// without `[auth.server.oidc]`). Before, the API took both, and the upstream could never work.
#[tokio::test]
async fn an_upstream_the_config_file_would_refuse_is_refused_by_the_api_and_import() {
    let dir = gateway_tests::scratch();
    let plain = format!("[database]\nurl = \"{}\"\n", super::sqlite_url(&dir));
    let keyed = format!("{plain}[user_credentials]\nkey = {{ env = \"CK\" }}\n");
    let key = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, [7u8; 32]);
    let env = [("CK", key.as_str())];
    let own = |managed: bool| {
        json!({"name": "own", "transport": "http", "url": "http://127.0.0.1:9/mcp",
               "sharing": "per_session",
               "user_oauth": {"client_id": "gw", "enterprise_managed": managed}})
    };
    for (config, spec, missing) in [
        (&plain, own(false), "user_credentials.key"),
        (&keyed, own(true), "auth.server.oidc"),
    ] {
        let gw = Gateway::start_with_env(config, &env).await;
        let answer = reqwest::Client::new()
            .post(format!("{}/admin/v1/upstreams", gw.base))
            .json(&spec)
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 400, "{spec}");
        let msg: Value = answer.json().await.unwrap();
        assert!(msg.to_string().contains(missing), "{msg}");
        let listed: Value = gw.get_json("/admin/v1/upstreams").await;
        assert_eq!(listed, json!([]), "nothing kept");
        drop(gw);

        let path = dir.join("cli.toml");
        std::fs::write(&path, config).unwrap();
        let doc = dir.join("doc.json");
        std::fs::write(&doc, json!({"version": 1, "upstreams": [spec]}).to_string()).unwrap();
        let out = tokio::process::Command::new(gateway_tests::gateway_bin())
            .arg("--config")
            .arg(&path)
            .arg("import")
            .arg(&doc)
            .envs(env)
            .output()
            .await
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && said.contains(missing), "{said}");
    }
}
