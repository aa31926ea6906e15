//! `mcp-gateway eval-routing` run as docs/routing.md runs it.

use serde_json::{json, Value};

/// `mcp-gateway eval-routing` as someone reproducing docs/routing.md runs it: group-aware
/// recall, a table per extra query field, split requests, the no-tool trade-off, JSON for
/// scripts, progress lines and no library log lines on standard error.
#[tokio::test]
async fn eval_routing_reports_groups_levels_steps_and_the_no_tool_curve() {
    let dir = gateway_tests::scratch();
    let lines = |rows: &[Value]| {
        rows.iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    };
    let tool = |server: &str, name: &str, description: &str| {
        json!({"server": server, "name": name, "description": description,
               "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}})
    };
    std::fs::write(
        dir.join("catalog.jsonl"),
        lines(&[
            tool("files", "read_file", "Reads a text file from disk."),
            tool("files", "write_file", "Writes text to a file on disk."),
            tool(
                "mail",
                "send_email",
                "Sends an e-mail message to a recipient.",
            ),
            tool("notes", "read_note", "Reads a note from the notebook."),
            tool(
                "weather",
                "forecast",
                "Gets the weather forecast for a city.",
            ),
            tool(
                "calendar",
                "create_event",
                "Creates an event in the calendar.",
            ),
        ]),
    )
    .unwrap();
    let r = |server: &str, name: &str| json!({"server": server, "name": name});
    std::fs::write(
        dir.join("queries.jsonl"),
        lines(&[
            json!({"id": "a", "query": "show me what is in the file 'todo.txt'", "level": 1,
                   "relevant": [r("files", "read_file"), r("notes", "read_note")],
                   "relevant_groups": [[r("files", "read_file"), r("notes", "read_note")]]}),
            json!({"id": "b", "query": "Read the file report.txt, and then email it to Bob", "level": 4,
                   "relevant": [r("files", "read_file"), r("mail", "send_email")]}),
            json!({"id": "c", "level": 4, "query": "Get the weather forecast for Paris. Then \
                   write it to the file paris.txt. Then email it to Bob. Then read my note about \
                   the trip. Then create a calendar event for the flight.",
                   "relevant": [r("weather", "forecast"), r("files", "write_file"),
                                r("mail", "send_email"), r("notes", "read_note"),
                                r("calendar", "create_event")]}),
        ]),
    )
    .unwrap();
    std::fs::write(
        dir.join("none.jsonl"),
        lines(&[json!({"id": "n", "query": "book a table for two tonight", "relevant": []})]),
    )
    .unwrap();
    let out = tokio::process::Command::new(gateway_tests::gateway_bin())
        .current_dir(&dir)
        .env_remove("RUST_LOG")
        .args(["eval-routing", "--split", "--json"])
        .arg("--catalog")
        .arg(dir.join("catalog.jsonl"))
        .arg("--queries")
        .arg(dir.join("queries.jsonl"))
        .arg("--no-tool")
        .arg(dir.join("none.jsonl"))
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("embedding tools: 6/6"), "{stderr}");
    assert!(!stderr.contains("INFO"), "no library log lines: {stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["tools"], 6);
    assert_eq!(report["split_queries"], 2, "{report}");
    let methods: Vec<&str> = report["methods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["method"].as_str().unwrap())
        .collect();
    assert_eq!(
        methods,
        ["semantic", "lexical", "hybrid", "hybrid, split into steps"]
    );
    let hybrid = &report["methods"][3];
    // Query a: one step served by either tool; query b: two steps, one tool each.
    let (plain, grouped) = (
        hybrid["recall_at_10"].as_f64().unwrap(),
        hybrid["group_recall_at_10"].as_f64().unwrap(),
    );
    assert_eq!(
        grouped, 1.0,
        "every step has a tool in the top 10: {hybrid}"
    );
    assert_eq!(plain, 1.0, "six tools, all in the top 10: {hybrid}");
    assert_eq!(hybrid["by_field"]["level=1"]["queries"], 1, "{hybrid}");
    let level4 = &hybrid["by_field"]["level=4"];
    assert_eq!(level4["queries"], 2, "{hybrid}");
    // Query c has five steps: a search that names no k answers with six tools, every one.
    assert_eq!(level4["answer_size"], 5.5, "{hybrid}");
    assert_eq!(level4["group_recall_of_answer"], 1.0, "{hybrid}");
    assert_eq!(
        report["methods"][2]["answer_size"], 5.0,
        "unsplit: {report}"
    );
    let curve = report["no_tool"].as_array().unwrap();
    assert!(!curve.is_empty());
    assert!(curve
        .windows(2)
        .all(|w| w[0]["no_tool_rejected"].as_f64() <= w[1]["no_tool_rejected"].as_f64()));
}
