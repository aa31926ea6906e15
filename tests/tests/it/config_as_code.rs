//! Configuration as code through the binary: `export` of what the admin API registered,
//! `import` with `--dry-run` and `--prune` into another database that a gateway then serves, and
//! config-file upstreams and roles pruned when the file no longer has them.

use gateway_tests::{gateway_bin, peers, Gateway, RawClient};
use reqwest::Method;
use serde_json::{json, Value};

use super::{fixture_config, sqlite_url};

/// Runs the CLI with `config`; returns (success, stdout + stderr).
async fn cli(config: &std::path::Path, args: &[&str]) -> (bool, String) {
    let out = tokio::process::Command::new(gateway_bin())
        .arg("--config")
        .arg(config)
        .args(args)
        .env("RUST_LOG", "warn")
        .output()
        .await
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[tokio::test]
async fn export_import_and_pruning_carry_configuration_between_databases() {
    let bin = peers().join("node_modules/.bin/mcp-server-everything");
    let dir_a = gateway_tests::scratch();
    let role = "[[roles]]\nname = \"cfgrole\"\nupstreams = [\"fx\"]\n";
    let config_a = format!("{}\n{role}", fixture_config(&sqlite_url(&dir_a), ""));
    let gw = Gateway::start(&config_a).await;
    gw.wait_up(&["fx"]).await;
    let every = json!({"name": "every", "transport": "stdio", "command": bin.display().to_string(),
        "tools": {"include": ["echo", "get-sum"],
                  "overrides": {"get-sum": {"name": "add", "arguments": {"b": 1}}}}});
    let vs = json!({"name": "calc", "upstreams": ["every"], "tools": ["*add"]});
    let dev = json!({"name": "dev", "tools": ["every__*"]});
    for (method, path, body, status) in [
        (Method::POST, "/admin/v1/upstreams", &every, 201),
        (Method::PUT, "/admin/v1/roles/dev", &dev, 200),
        (Method::POST, "/admin/v1/virtual-servers", &vs, 201),
    ] {
        let (got, answer) = gw.send(method, path, None, body).await;
        assert_eq!(got, status, "{path}: {answer}");
    }

    // Export: the API's items, not the file's (unless asked for).
    let path_a = dir_a.join("a.toml");
    std::fs::write(&path_a, &config_a).unwrap();
    let doc_path = dir_a.join("export.json");
    let (ok, out) = cli(&path_a, &["export", "--output", doc_path.to_str().unwrap()]).await;
    assert!(ok, "{out}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&doc_path).unwrap()).unwrap();
    assert_eq!(doc["version"], 1);
    let upstreams: Vec<&str> = doc["upstreams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["name"].as_str().unwrap())
        .collect();
    assert_eq!(upstreams, ["every"], "{doc}");
    assert_eq!(
        doc["upstreams"][0]["tools"]["overrides"]["get-sum"]["name"],
        "add"
    );
    assert_eq!(doc["roles"][0]["name"], "dev");
    assert_eq!(doc["roles"].as_array().unwrap().len(), 1, "{doc}");
    assert_eq!(doc["virtual_servers"]["calc"]["tools"], json!(["*add"]));
    let (ok, out) = cli(&path_a, &["export", "--with-config"]).await;
    assert!(
        ok && out.contains("\"fx\"") && out.contains("cfgrole"),
        "{out}"
    );

    // Import into another database: a dry run changes nothing, the real one creates, a second
    // one finds everything unchanged.
    let dir_b = gateway_tests::scratch();
    let config_b = fixture_config(&sqlite_url(&dir_b), "");
    let path_b = dir_b.join("b.toml");
    std::fs::write(&path_b, &config_b).unwrap();
    let doc_arg = doc_path.to_str().unwrap();
    let (ok, out) = cli(&path_b, &["import", doc_arg, "--dry-run"]).await;
    assert!(ok, "{out}");
    for line in [
        "create    upstream every",
        "create    role dev",
        "create    virtual_server calc",
        "dry run: nothing changed",
    ] {
        assert!(out.contains(line), "{line:?} missing from {out}");
    }
    let (_, empty) = cli(&path_b, &["export"]).await;
    assert!(
        !empty.contains("every"),
        "the dry run changed nothing: {empty}"
    );
    let (ok, out) = cli(&path_b, &["import", doc_arg]).await;
    assert!(ok, "{out}");
    let (ok, out) = cli(&path_b, &["import", doc_arg]).await;
    assert!(
        ok && out.contains("unchanged upstream every") && !out.contains("create"),
        "{out}"
    );

    // An item the config file defines is refused, and nothing of the document is applied.
    let mut clash = doc.clone();
    clash["upstreams"][0]["name"] = json!("fx");
    clash["roles"][0]["name"] = json!("ops");
    let clash_path = dir_b.join("clash.json");
    std::fs::write(&clash_path, clash.to_string()).unwrap();
    let (ok, out) = cli(&path_b, &["import", clash_path.to_str().unwrap()]).await;
    assert!(!ok && out.contains("defined in the config file"), "{out}");
    let (_, now) = cli(&path_b, &["export"]).await;
    assert!(
        !now.contains("\"ops\""),
        "a refused import changes nothing: {now}"
    );

    // --prune deletes what the document no longer names.
    let mut fewer = doc.clone();
    fewer["roles"] = json!([]);
    let fewer_path = dir_b.join("fewer.json");
    std::fs::write(&fewer_path, fewer.to_string()).unwrap();
    let (ok, out) = cli(
        &path_b,
        &["import", fewer_path.to_str().unwrap(), "--prune"],
    )
    .await;
    assert!(ok && out.contains("delete    role dev"), "{out}");
    let (_, now) = cli(&path_b, &["export"]).await;
    assert!(!now.contains("\"dev\""), "{now}");

    // The imported database serves what was exported: curated tools and the virtual server.
    let gw_b = Gateway::start(&config_b).await;
    gw_b.wait_up(&["fx", "every"]).await;
    let mut c = RawClient::initialize(&format!("{}/v/calc", gw_b.mcp), json!({})).await;
    let list = c.request("tools/list", json!({})).await;
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .filter(|n| n.contains("__"))
        .collect();
    assert_eq!(names, ["every__add"], "{list}");
    let r = c
        .request(
            "tools/call",
            json!({"name": "every__add", "arguments": {"a": 41}}),
        )
        .await;
    assert_eq!(
        r["result"]["content"][0]["text"], "The sum of 41 and 1 is 42.",
        "{r}"
    );

    // Config-file items leave the registry when the file no longer has them; API items stay.
    gw.stop().await;
    let without = format!("[database]\nurl = \"{}\"\n", sqlite_url(&dir_a));
    let gw = Gateway::start(&without).await;
    gw.wait_up(&["every"]).await;
    let ups = gw.get_json("/admin/v1/upstreams").await;
    let names: Vec<&str> = ups
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["every"], "fx was the file's and is gone: {ups}");
    let roles = gw.get_json("/admin/v1/roles").await;
    assert!(
        !roles.to_string().contains("cfgrole") && roles.to_string().contains("\"dev\""),
        "{roles}"
    );
}
