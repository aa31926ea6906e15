//! Issue 37, item 8: the 2025-11-25 tasks utility through the gateway, with server-everything
//! (the TypeScript SDK's task support) as the upstream: a task-augmented `tools/call`, then
//! `tasks/get`, `tasks/list`, `tasks/result` and `tasks/cancel`, each for the principal that
//! created the task only, under the gateway's task id, with audit rows.

use std::time::Duration;

use gateway_tests::{peers, request_2026_as, Gateway, RawClient};
use serde_json::{json, Value};

use super::ADMIN_ROLE;

async fn research(c: &mut RawClient, topic: &str) -> Value {
    c.request(
        "tools/call",
        json!({"name": "ev__simulate-research-query", "arguments": {"topic": topic},
               "task": {"ttl": 60000}}),
    )
    .await
}

/// A gateway requiring tokens, in front of server-everything (`ev`), and tokens of two users
/// who may use it.
async fn everything_for_two() -> (Gateway, String, String) {
    let bin = peers().join("node_modules/.bin/mcp-server-everything");
    let config = format!(
        "[auth]\nmode = \"required\"\n\n[database]\nurl = \"{}\"\n\n[[upstreams]]\nname = \"ev\"\n\
         transport = \"stdio\"\ncommand = \"{}\"\n\n{ADMIN_ROLE}\n[[roles]]\nname = \"user\"\n\
         upstreams = [\"ev\"]\n",
        super::SQLITE_IN_ITS_FOLDER,
        bin.display()
    );
    let gw = Gateway::start_secured(&config, &[]).await;
    gw.wait_up(&["ev"]).await;
    let ann = gw.token_for("ann", &["user"]).await;
    let bob = gw.token_for("bob", &["user"]).await;
    (gw, ann, bob)
}

#[tokio::test]
async fn tasks_run_through_the_gateway_for_their_creator_only() {
    let (gw, ann, bob) = everything_for_two().await;
    let init = |token: &str| {
        let (url, token) = (gw.mcp.clone(), token.to_string());
        async move { RawClient::initialize_as(&url, json!({}), Some(&token)).await }
    };
    let mut a = init(&ann).await;
    let mut b = init(&bob).await;

    let created = research(&mut a, "tide pools").await;
    let task = &created["result"]["task"];
    let id = task["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"));
    assert!(
        id.starts_with("gwt1."),
        "the gateway's id, not the upstream's: {created}"
    );
    assert!(task["status"].is_string(), "{created}");

    let got = a.request("tasks/get", json!({"taskId": id})).await;
    assert_eq!(got["result"]["taskId"], id, "{got}");
    let listed = a.request("tasks/list", json!({})).await;
    let ids: Vec<&str> = listed["result"]["tasks"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"))
        .iter()
        .filter_map(|t| t["taskId"].as_str())
        .collect();
    assert_eq!(ids, [id], "{listed}");

    // Another principal neither reaches nor sees it.
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let r = b.request(method, json!({"taskId": id})).await;
        assert_eq!(r["error"]["code"], -32602, "{method}: {r}");
    }
    let theirs = b.request("tasks/list", json!({})).await;
    assert_eq!(theirs["result"]["tasks"], json!([]), "{theirs}");
    // An altered id is no task at all.
    let r = a
        .request("tasks/get", json!({"taskId": format!("{id}x")}))
        .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");

    // The result, once the task is done (about four seconds of simulated research).
    let done = tokio::time::timeout(
        Duration::from_secs(60),
        a.request("tasks/result", json!({"taskId": id})),
    )
    .await
    .expect("the result within a minute");
    let text = done["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("tide pools"), "{done}");
    if let Some(related) = done["result"]["_meta"].get("io.modelcontextprotocol/related-task") {
        assert_eq!(related["taskId"], id, "{done}");
    }
    let after = a.request("tasks/get", json!({"taskId": id})).await;
    assert_eq!(after["result"]["status"], "completed", "{after}");

    // Cancelled before it ends.
    let second = research(&mut a, "sea glass").await;
    let second = second["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    let cancelled = a.request("tasks/cancel", json!({"taskId": second})).await;
    assert_eq!(cancelled["result"]["taskId"], second, "{cancelled}");
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");

    // The result and the cancellation are in the audit log, as ann's.
    let mut actions = Vec::new();
    for _ in 0..40 {
        let rows = gw.get_json("/admin/v1/audit?principal=pat:ann").await;
        actions = rows
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["action"].as_str().unwrap_or("").to_string())
            .collect::<Vec<_>>();
        if actions.iter().any(|a| a == "tasks/cancel")
            && actions.iter().any(|a| a == "tasks/result")
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(actions.iter().any(|a| a == "tasks/result"), "{actions:?}");
    assert!(actions.iter().any(|a| a == "tasks/cancel"), "{actions:?}");
    // Stopped, not killed: the gateway ends server-everything, which outlives a killed parent
    // while its task store's timers run.
    gw.stop().await;
}

/// The same utility for 2026-07-28 hosts: each request stands alone, and the gateway's task id
/// carries what the next one needs (any request of the same principal, on any replica).
#[tokio::test]
async fn a_2026_host_runs_a_task_across_its_stateless_requests() {
    let (gw, ann, bob) = everything_for_two().await;
    let tool = "ev__simulate-research-query";
    let created = request_2026_as(
        &gw.mcp,
        Some(&ann),
        "tools/call",
        tool,
        json!({"name": tool, "arguments": {"topic": "kelp forests"}, "task": {"ttl": 60000}}),
    )
    .await;
    let id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_string();
    assert!(id.starts_with("gwt1."), "{created}");
    let got = request_2026_as(&gw.mcp, Some(&ann), "tasks/get", "", json!({"taskId": id})).await;
    assert_eq!(got["result"]["taskId"], id.as_str(), "{got}");
    let theirs = request_2026_as(&gw.mcp, Some(&bob), "tasks/get", "", json!({"taskId": id})).await;
    assert_eq!(theirs["error"]["code"], -32602, "{theirs}");
    let done = tokio::time::timeout(
        Duration::from_secs(60),
        request_2026_as(
            &gw.mcp,
            Some(&ann),
            "tasks/result",
            "",
            json!({"taskId": id}),
        ),
    )
    .await
    .expect("the result within a minute");
    let text = done["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("kelp forests"), "{done}");
    gw.stop().await;
}
