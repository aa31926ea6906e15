//! Tool curation through the binary with a real upstream (server-everything over stdio): the
//! tools hosts see, renamed and re-described tools, fixed arguments, RBAC and routing on the
//! curated names and text, the admin API that replaces a curation, and a virtual server's
//! exclusions.

use gateway_tests::{peers, Gateway, RawClient};
use reqwest::Method;
use serde_json::{json, Value};

use super::{sqlite_url, ADMIN_ROLE};

fn names(list: &Value) -> Vec<String> {
    let mut v: Vec<String> = list["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("a tool list: {list}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        // The gateway's own meta-tools are not the upstream's.
        .filter(|n| n != "search_tools" && n != "call_tool")
        .collect();
    v.sort();
    v
}

fn tool<'a>(list: &'a Value, name: &str) -> &'a Value {
    list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("{name} not in {list}"))
}

#[tokio::test]
async fn curated_tools_are_what_hosts_see_call_search_and_are_granted() {
    let dir = gateway_tests::scratch();
    let bin = peers().join("node_modules/.bin/mcp-server-everything");
    let config = format!(
        r#"[auth]
mode = "required"

[database]
url = "{db}"

[[upstreams]]
name = "every"
transport = "stdio"
command = "{bin}"

[upstreams.tools]
include = ["echo", "get-*"]
exclude = ["get-env", "get-tiny-image"]

[upstreams.tools.overrides.get-sum]
name = "add_to_ledger"
description = "Adds an amount to the finance team's quarterly ledger total."
annotations = {{ readOnlyHint = true }}
arguments = {{ b = 100 }}

{ADMIN_ROLE}
[[roles]]
name = "finance"
tools = ["every__add_to_ledger"]
"#,
        db = sqlite_url(&dir),
        bin = bin.display(),
    );
    let gw = Gateway::start_secured(&config, &[]).await;
    gw.wait_up(&["every"]).await;

    // What an admin sees: only included tools, the excluded ones gone, the renamed one renamed.
    let admin = gw.admin_token.clone().unwrap();
    let mut c = RawClient::initialize_as(&gw.mcp, json!({}), Some(&admin)).await;
    let all = c.request("tools/list", json!({})).await;
    let seen = names(&all);
    assert!(seen.contains(&"every__echo".to_string()), "{seen:?}");
    assert!(
        seen.contains(&"every__add_to_ledger".to_string()),
        "{seen:?}"
    );
    for gone in [
        "every__get-sum",
        "every__get-env",
        "every__get-tiny-image",
        "every__trigger-long-running-operation",
    ] {
        assert!(
            !seen.contains(&gone.to_string()),
            "{gone} is curated away: {seen:?}"
        );
    }
    assert!(
        seen.iter().all(|n| n == "every__echo"
            || n.starts_with("every__get-")
            || n == "every__add_to_ledger"),
        "{seen:?}"
    );
    let ledger = tool(&all, "every__add_to_ledger");
    assert_eq!(
        ledger["description"],
        "Adds an amount to the finance team's quarterly ledger total."
    );
    assert_eq!(ledger["annotations"]["readOnlyHint"], true);
    assert!(
        ledger["inputSchema"]["properties"].get("a").is_some(),
        "{ledger}"
    );
    assert!(
        ledger["inputSchema"]["properties"].get("b").is_none(),
        "a fixed argument leaves the schema: {ledger}"
    );
    assert!(!ledger["inputSchema"]["required"]
        .as_array()
        .is_some_and(|r| r.contains(&json!("b"))));

    // A role granted the curated name sees and calls just that; the fixed value wins.
    let token = gw.token_for("fin", &["finance"]).await;
    let mut f = RawClient::initialize_as(&gw.mcp, json!({}), Some(&token)).await;
    assert_eq!(
        names(&f.request("tools/list", json!({})).await),
        ["every__add_to_ledger"]
    );
    let r = f
        .request(
            "tools/call",
            json!({"name": "every__add_to_ledger", "arguments": {"a": 2, "b": 5}}),
        )
        .await;
    assert_eq!(
        r["result"]["content"][0]["text"], "The sum of 2 and 100 is 102.",
        "the upstream got its own tool name and the fixed b: {r}"
    );
    for hidden in ["every__get-sum", "every__get-env"] {
        let r = c
            .request("tools/call", json!({"name": hidden, "arguments": {}}))
            .await;
        assert!(r.get("result").is_none(), "{hidden} cannot be called: {r}");
    }

    // Routing indexes the curated text: words only the override has find the tool.
    let query = json!({"query": "quarterly ledger total for finance", "k": 3});
    let (_, routed) = gw
        .send(Method::POST, "/v1/route", Some(&token), &query)
        .await;
    assert_eq!(
        routed["tools"][0]["name"], "every__add_to_ledger",
        "{routed}"
    );

    // What the config file defines is changed there, not through the API.
    let (status, body) = gw
        .send(
            Method::PUT,
            "/admin/v1/upstreams/every/tools",
            None,
            &json!({"include": ["echo"]}),
        )
        .await;
    assert_eq!(status, 409, "{body}");
    assert!(body.to_string().contains("gateway.toml"), "{body}");

    // The admin API replaces the curation of an upstream it registered; open sessions see the
    // new list.
    let api = json!({"name": "api", "transport": "stdio", "command": bin.display().to_string()});
    let (status, body) = gw
        .send(Method::POST, "/admin/v1/upstreams", None, &api)
        .await;
    assert_eq!(status, 201, "{body}");
    gw.wait_up(&["api"]).await;
    let tools = "/admin/v1/upstreams/api/tools";
    let (status, view) = gw
        .send(
            Method::PUT,
            tools,
            None,
            &json!({"include": ["echo", "get-env"]}),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(view["tools"], json!({"include": ["echo", "get-env"]}));
    let mut seen = Vec::new();
    for _ in 0..100 {
        seen = names(&c.request("tools/list", json!({})).await);
        seen.retain(|n| n.starts_with("api__"));
        if seen == ["api__echo", "api__get-env"] {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(seen, ["api__echo", "api__get-env"]);
    let bad = json!({"overrides": {"echo": {"name": "no spaces allowed"}}});
    assert_eq!(gw.send(Method::PUT, tools, None, &bad).await.0, 400);
    let nope = "/admin/v1/upstreams/nope/tools";
    assert_eq!(gw.send(Method::PUT, nope, None, &json!({})).await.0, 404);

    // A virtual server's exclusions narrow what its endpoint offers.
    let safe = json!({"name": "safe", "upstreams": ["api"], "exclude": ["*get-env"]});
    let (status, body) = gw
        .send(Method::POST, "/admin/v1/virtual-servers", None, &safe)
        .await;
    assert_eq!(status, 201, "{body}");
    let mut v =
        RawClient::initialize_as(&format!("{}/v/safe", gw.mcp), json!({}), Some(&admin)).await;
    assert_eq!(
        names(&v.request("tools/list", json!({})).await),
        ["api__echo"]
    );

    // A virtual server's own overrides: a name, a text and a fixed argument for its hosts only.
    let say = json!({"name": "say", "upstreams": ["api"], "overrides": {"api__echo": {
        "name": "say_back", "description": "Says the team's greeting back.",
        "arguments": {"message": "from the endpoint"}}}});
    let (status, body) = gw
        .send(Method::POST, "/admin/v1/virtual-servers", None, &say)
        .await;
    assert_eq!(status, 201, "{body}");
    let mut s =
        RawClient::initialize_as(&format!("{}/v/say", gw.mcp), json!({}), Some(&admin)).await;
    let list = s.request("tools/list", json!({})).await;
    assert_eq!(names(&list), ["api__get-env", "say_back"]);
    let say = tool(&list, "say_back");
    assert_eq!(say["description"], "Says the team's greeting back.");
    assert!(
        say["inputSchema"]["properties"].get("message").is_none(),
        "{say}"
    );
    let r = s
        .request(
            "tools/call",
            json!({"name": "say_back", "arguments": {"message": "mine"}}),
        )
        .await;
    assert_eq!(
        r["result"]["content"][0]["text"], "Echo: from the endpoint",
        "{r}"
    );
    let r = s
        .request(
            "tools/call",
            json!({"name": "api__echo", "arguments": {"message": "x"}}),
        )
        .await;
    assert!(
        r.get("result").is_none(),
        "the old name is not served here: {r}"
    );
    let found = s
        .request(
            "tools/call",
            json!({"name": "search_tools", "arguments": {"query": "echo the input back"}}),
        )
        .await;
    let found_names: Vec<&str> = found["result"]["structuredContent"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        found_names.contains(&"say_back") && !found_names.contains(&"api__echo"),
        "{found}"
    );
    let query = json!({"query": "echo the input back", "filters": {"virtual_server": "say"}});
    let (_, routed) = gw.send(Method::POST, "/v1/route", None, &query).await;
    assert!(
        routed["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "say_back"),
        "{routed}"
    );
    // The plain endpoint is untouched.
    let plain = c.request("tools/list", json!({})).await;
    assert_eq!(
        tool(&plain, "api__echo")["description"],
        "Echoes back the input string"
    );
}

/// Issue 37, items 13 and 14: an admin body naming a key twice is refused (the last one used to
/// win), and so is a rename onto another tool's name (that tool became unreachable).
#[tokio::test]
async fn duplicate_keys_and_renames_onto_another_tool_are_refused() {
    let dir = gateway_tests::scratch();
    let bin = peers().join("node_modules/.bin/mcp-server-everything");
    let gw = Gateway::start(&format!("[database]\nurl = \"{}\"\n", sqlite_url(&dir))).await;
    let http = reqwest::Client::new();
    let raw = |method: Method, path: &str, body: String| {
        http.request(method, format!("{}{path}", gw.base))
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    let doubled = format!(
        r#"{{"name": "ev", "transport": "stdio", "command": "{}", "tools": {{"include": ["echo"]}}, "tools": {{"include": ["*"]}}}}"#,
        bin.display()
    );
    let r = raw(Method::POST, "/admin/v1/upstreams", doubled)
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let text = r.text().await.unwrap();
    assert!(text.contains("\\\"tools\\\" appears twice"), "{text}");
    let r = raw(
        Method::PUT,
        "/admin/v1/roles/r",
        r#"{"name": "r", "tools": ["a"], "tools": ["*"]}"#.into(),
    )
    .await
    .unwrap();
    assert_eq!(r.status(), 400);

    let ev = json!({"name": "ev", "transport": "stdio", "command": bin.display().to_string()});
    let (status, body) = gw
        .send(Method::POST, "/admin/v1/upstreams", None, &ev)
        .await;
    assert_eq!(status, 201, "{body}");
    gw.wait_up(&["ev"]).await;
    let tools = "/admin/v1/upstreams/ev/tools";
    let onto_echo = json!({"overrides": {"get-env": {"name": "echo"}}});
    let (status, body) = gw.send(Method::PUT, tools, None, &onto_echo).await;
    assert_eq!(status, 400, "{body}");
    assert!(body.to_string().contains("unreachable"), "{body}");
    // With echo excluded the name is free.
    let instead = json!({"exclude": ["echo"], "overrides": {"get-env": {"name": "echo"}}});
    let (status, body) = gw.send(Method::PUT, tools, None, &instead).await;
    assert_eq!(status, 200, "{body}");
    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;
    let mut seen = Vec::new();
    for _ in 0..100 {
        seen = names(&c.request("tools/list", json!({})).await);
        if seen.contains(&"ev__echo".to_string()) && !seen.contains(&"ev__get-env".to_string()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let r = c
        .request("tools/call", json!({"name": "ev__echo", "arguments": {}}))
        .await;
    let text = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        r["result"]["isError"] != true && !text.starts_with("Echo:") && text.contains("PATH"),
        "ev__echo is get-env now (the environment, not an echo): {r}"
    );
    assert!(!seen.contains(&"ev__get-env".to_string()), "{seen:?}");
}
