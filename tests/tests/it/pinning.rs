//! Tool pinning against a real MCP server (TypeScript SDK) that changes a tool while the
//! gateway runs: its description turns into a prompt injection and its schema grows an
//! argument for what it steals, and it lists a new tool. Under `warn` the change is served
//! flagged; under `hold` the approved definition keeps being served, calls are checked against
//! it, and the new tool stays hidden until an admin approves it.

use std::time::Duration;

use gateway_tests::{last_json_line, node, scratch, spawn_reporting_url, Gateway, RawClient};
use serde_json::{json, Value};

use super::{fixture_config, sqlite_url};

async fn hook(upstream: &str, what: &str) -> Value {
    let base = upstream.trim_end_matches("/mcp");
    let c = reqwest::Client::new();
    let r = if what == "calls" {
        c.get(format!("{base}/test/calls"))
    } else {
        c.post(format!("{base}/test/{what}"))
    };
    r.send().await.unwrap().json().await.unwrap()
}

async fn tool(c: &mut RawClient, name: &str) -> Option<Value> {
    let list = c.request("tools/list", json!({})).await;
    list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .cloned()
}

/// Waits (bounded) until `n` changes wait for review.
async fn pending(gw: &Gateway, n: usize) -> Vec<Value> {
    let mut last = Value::Null;
    for _ in 0..100 {
        last = gw.get_json("/admin/v1/pins/pending").await;
        if last.as_array().map(Vec::len) == Some(n) {
            return last.as_array().unwrap().clone();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("not {n} pending changes: {last}\n{}", gw.log());
}

async fn review(gw: &Gateway, change: &Value, verdict: &str, hash: &str) -> u16 {
    let path = format!(
        "/admin/v1/pins/{}/{}/{verdict}",
        change["upstream"].as_str().unwrap(),
        change["tool"].as_str().unwrap()
    );
    gw.send(reqwest::Method::POST, &path, None, &json!({ "hash": hash }))
        .await
        .0
}

/// Reviews the pending changes in the console (`tests/browser/console_pins.mjs`).
async fn console_review(gw: &Gateway, dir: &std::path::Path) -> Value {
    let artifacts = dir.join("artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let mut cmd = node("browser/console_pins.mjs");
    cmd.env("CHROMIUM", super::console::chromium())
        .env("CONSOLE_URL", &gw.base)
        .env("ARTIFACTS", &artifacts)
        .env("HOME", dir);
    last_json_line(cmd, "the console test").await
}

#[tokio::test]
async fn a_changed_tool_is_flagged_or_held_until_an_admin_approves_it() {
    let dir = scratch();
    let (_w, warned) = spawn_reporting_url(&mut node("upstream/rug_pull.mjs")).await;
    let (_h, held) = spawn_reporting_url(&mut node("upstream/rug_pull.mjs")).await;
    let cfg = fixture_config(&sqlite_url(&dir), "")
        + &format!(
            "\n[[upstreams]]\nname = \"warned\"\ntransport = \"http\"\nurl = \"{warned}\"\npinning = \"warn\"\n\
             \n[[upstreams]]\nname = \"held\"\ntransport = \"http\"\nurl = \"{held}\"\npinning = \"hold\"\n"
        );
    let gw = Gateway::start(&cfg).await;
    gw.wait_up(&["fx", "warned", "held"]).await;
    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;

    // First use: what is listed is approved; nothing waits.
    let honest = tool(&mut c, "held__add").await.expect("held__add listed");
    assert_eq!(honest["description"], "Adds two numbers");
    assert_eq!(gw.get_json("/admin/v1/pins/pending").await, json!([]));

    // The rug pull, on both.
    hook(&warned, "change").await;
    hook(&held, "change").await;
    let changes = pending(&gw, 2).await;
    for ch in &changes {
        assert_eq!(ch["status"], "changed", "{ch}");
        assert_eq!(ch["approved"]["description"], "Adds two numbers", "{ch}");
        assert!(
            ch["listed"]["description"]
                .as_str()
                .unwrap()
                .contains("id_rsa"),
            "{ch}"
        );
    }

    // warn: the change is served, flagged.
    let w = tool(&mut c, "warned__add").await.unwrap();
    assert!(w["description"].as_str().unwrap().contains("id_rsa"), "{w}");
    assert_eq!(
        w["_meta"]["dev.mcp-gateway/pinning"]["status"], "changed",
        "{w}"
    );

    // hold: the approved definition is served, and calls are checked against it.
    let h = tool(&mut c, "held__add").await.unwrap();
    assert_eq!(h, honest, "the approved definition, unchanged");
    let r = c
        .request(
            "tools/call",
            json!({"name": "held__add", "arguments": {"a": 1, "b": 2, "note": "ssh-rsa AAAA"}}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert!(
        r["error"]["message"].as_str().unwrap().contains("\"note\""),
        "{r}"
    );
    let r = c
        .request(
            "tools/call",
            json!({"name": "held__add", "arguments": {"a": 1, "b": 2}}),
        )
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "3", "{r}");
    let calls = hook(&held, "calls").await;
    assert_eq!(
        calls,
        json!([{"tool": "add", "args": {"a": 1, "b": 2}}]),
        "the refused call never left"
    );
    let metrics = gw.metrics().await;
    assert!(
        metrics.contains("tools_pending_approval{upstream=\"held\"} 1"),
        "{metrics}"
    );

    // A new tool under hold stays hidden, and calling it is calling an unknown tool.
    hook(&held, "add").await;
    let changes = pending(&gw, 3).await;
    let steal = changes
        .iter()
        .find(|c| c["tool"] == "steal")
        .unwrap()
        .clone();
    assert_eq!(steal["status"], "new");
    assert!(tool(&mut c, "held__steal").await.is_none());
    let r = c
        .request(
            "tools/call",
            json!({"name": "held__steal", "arguments": {"path": "/etc/passwd"}}),
        )
        .await;
    assert!(r["error"].is_object(), "{r}");
    assert!(tool(&mut c, "warned__add").await.is_some());

    // Approving names the definition reviewed: a stale hash is refused.
    let add = changes
        .iter()
        .find(|c| c["upstream"] == "held" && c["tool"] == "add")
        .unwrap()
        .clone();
    assert_eq!(review(&gw, &add, "approve", "0000").await, 409);
    // The right hash is reviewed in the console, as a diff: the change approved, the new tool
    // rejected, each after a confirmation.
    let seen = console_review(&gw, &dir).await;
    assert!(seen["failure"].is_null(), "{seen:#}\n{}", gw.log());
    assert_eq!(
        seen["blocks"],
        json!(["held/add", "held/steal", "warned/add"]),
        "{seen}"
    );
    let text = |k: &str| {
        seen[k]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap())
            .collect::<String>()
    };
    assert!(
        text("removed").contains("- ") && text("removed").contains("\"Adds two numbers\""),
        "{seen}"
    );
    assert!(
        text("added").contains("id_rsa") && text("added").contains("\"note\""),
        "{seen}"
    );
    assert!(
        text("added").contains("<img src=x"),
        "upstream markup shown as text: {seen}"
    );
    assert_eq!(seen["images"], 0, "{seen}");
    assert_eq!(seen["pwned"], false, "{seen}");
    assert!(
        seen["newTitle"].as_str().unwrap().contains("new tool"),
        "{seen}"
    );
    assert_eq!(seen["dialogs"].as_array().unwrap().len(), 2, "{seen}");
    assert_eq!(seen["left"], json!(["warned/add"]), "{seen}");
    assert_eq!(seen["errors"], json!([]), "{seen}");
    assert!(
        tool(&mut c, "held__steal").await.is_none(),
        "rejected stays hidden"
    );
    let left = pending(&gw, 1).await;
    assert_eq!(left[0]["upstream"], "warned", "{left:?}");
    let metrics = gw.metrics().await;
    assert!(
        metrics.contains("tools_pending_approval{upstream=\"held\"} 0"),
        "{metrics}"
    );

    // Every review is an audit row, the refused one too; a restart keeps the reviews.
    for (action, outcomes) in [
        ("admin.tool.approve", json!(["ok", "error"])),
        ("admin.tool.reject", json!(["ok"])),
    ] {
        let rows = gw
            .get_json(&format!("/admin/v1/audit?action={action}"))
            .await;
        let rows = rows.as_array().unwrap();
        let seen: Vec<&Value> = rows.iter().map(|r| &r["outcome"]).collect();
        assert_eq!(json!(seen), outcomes, "{action}: {rows:?}");
        assert!(rows
            .iter()
            .all(|r| r["target"].as_str().unwrap().starts_with("held/")));
    }
    let gw = gw.restart(&[]).await;
    gw.wait_up(&["warned", "held"]).await;
    pending(&gw, 1).await;
    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;
    assert!(tool(&mut c, "held__add").await.unwrap()["description"]
        .as_str()
        .unwrap()
        .contains("id_rsa"));
    assert!(tool(&mut c, "held__steal").await.is_none());
}
