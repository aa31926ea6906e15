//! Semantic tool routing end to end: real upstreams (the fixture, server-everything and
//! server-memory from npm, mcp-server-time from PyPI) behind the gateway with the real model;
//! `search_tools` and `call_tool` through the official Python SDK client; `auto` and `search`
//! virtual servers; `POST /v1/route`; a changed description found by its new wording; stored
//! embeddings reused by a restart; RBAC before ranking; and the lexical mode without a model.

use std::time::Duration;

use futures::StreamExt;
use gateway_tests::{peers, Gateway, RawClient};
use serde_json::{json, Value};

use super::{fixture_config, sqlite_url};

/// The fixture (`fx`) plus three real servers.
fn config(db: &str, extra: &str, dir: &std::path::Path) -> String {
    let p = peers();
    let bin = p.join("node_modules/.bin");
    format!(
        r#"{}
[[upstreams]]
name = "everything"
transport = "stdio"
command = "{bin}/mcp-server-everything"

[[upstreams]]
name = "memory"
transport = "stdio"
command = "{bin}/mcp-server-memory"
env = {{ MEMORY_FILE_PATH = "{dir}/memory.jsonl" }}

[[upstreams]]
name = "time"
transport = "stdio"
command = "{venv}/bin/mcp-server-time"
args = ["--local-timezone", "UTC"]
"#,
        fixture_config(db, extra),
        bin = bin.display(),
        venv = p.join("venv").display(),
        dir = dir.display(),
    )
}

const UPSTREAMS: [&str; 4] = ["fx", "everything", "memory", "time"];

/// Waits until the index holds every tool of the catalog (with its vector when `semantic`).
async fn wait_indexed(gw: &Gateway, semantic: bool) -> Value {
    for _ in 0..300 {
        let catalog = gw.get_json("/admin/v1/catalog").await;
        let r = gw.get_json("/readyz").await["routing"].clone();
        let tools = r["tools"].as_u64().unwrap_or(0);
        if tools > 0
            && tools == catalog.as_array().map_or(0, |a| a.len() as u64)
            && (!semantic || r["embedded"] == r["tools"])
        {
            return r;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the routing index did not fill: {}", gw.log());
}

/// Adds `tools` (name, description) to the fixture server through `c` and waits until the
/// gateway's index has them: until `/v1/route` answers `probe` with `tools`' last one first.
async fn add_fixture_tools(gw: &Gateway, c: &mut RawClient, tools: &[(&str, &str)], probe: &str) {
    for (name, description) in tools {
        c.request(
            "tools/call",
            json!({"name": "fx__add_tool", "arguments": {"name": name, "description": description}}),
        )
        .await;
    }
    let last = format!("fx__{}", tools.last().expect("a tool").0);
    for _ in 0..100 {
        let body = json!({"query": probe, "k": 1});
        let (_, r) = gw
            .send(reqwest::Method::POST, "/v1/route", None, &body)
            .await;
        if tool_names(&r["tools"]) == [last.as_str()] {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{last} was not indexed: {}", gw.log());
}

/// A step whose own tool is added at run time.
#[derive(Clone, Copy)]
struct StepCase {
    /// The tools added (name, description).
    tools: &'static [(&'static str, &'static str)],
    /// A request that finds the last of them first once it is indexed.
    probe: &'static str,
    /// The request's words before the step.
    before: &'static str,
    step: &'static str,
    /// The tool that must serve the step.
    tool: &'static str,
    /// Whether it must be the step's first tool, or only among them.
    first: bool,
}

/// The names of the tools of a `/v1/route` answer that serve `step`, in order.
fn tools_serving<'a>(answer: &'a Value, step: &str) -> Vec<&'a str> {
    answer["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{answer}"))
        .iter()
        .filter(|t| t["step"] == step)
        .map(|t| t["name"].as_str().unwrap())
        .collect()
}

/// The names of a `search_tools` result's tools.
fn names(result: &Value) -> Vec<String> {
    tool_names(&result["structuredContent"]["tools"])
}

/// The names in a list of found tools (`search_tools`' or `/v1/route`'s).
fn tool_names(tools: &Value) -> Vec<String> {
    tools
        .as_array()
        .unwrap_or(&Vec::new())
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

async fn search(c: &mut RawClient, query: &str, k: u64) -> Vec<String> {
    let r = c
        .request(
            "tools/call",
            json!({"name": "search_tools", "arguments": {"query": query, "k": k}}),
        )
        .await;
    names(&r["result"])
}

async fn admin(gw: &Gateway, method: reqwest::Method, path: &str, body: Value) -> (u16, Value) {
    let resp = reqwest::Client::new()
        .request(method, format!("{}{path}", gw.base))
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn search_tools_then_call_tool_with_a_real_client() {
    let dir = gateway_tests::scratch();
    let gw = Gateway::start(&config(&sqlite_url(&dir), "", &dir)).await;
    gw.wait_up(&UPSTREAMS).await;
    let status = wait_indexed(&gw, true).await;
    assert_eq!(status["mode"], "semantic", "the model is loaded: {status}");

    // The official Python SDK: the meta-tools are in its list; a natural-language search finds
    // the time tool first; call_tool calls it by the name the search gave.
    let calls = json!([
        ["search_tools", {"query": "what time is it in Tokyo right now", "k": 3}],
        ["call_tool", {"name": "time__get_current_time", "arguments": {"timezone": "Asia/Tokyo"}}],
        ["search_tools", {"query": "add two numbers together"}],
    ]);
    let out = gateway_tests::python_client(&gw.mcp, "legacy", &calls, &gw.log()).await;
    let tools: Vec<&str> = out["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(&tools[..2], ["search_tools", "call_tool"], "{tools:?}");
    assert!(
        tools.contains(&"time__get_current_time"),
        "mode all lists everything"
    );
    let found: Value = serde_json::from_str(out["results"][0].as_str().unwrap()).unwrap();
    assert_eq!(
        found["tools"][0]["name"], "time__get_current_time",
        "{found}"
    );
    assert!(found["tools"][0]["inputSchema"]["properties"]["timezone"].is_object());
    assert!(found["tools"].as_array().unwrap().len() <= 3);
    assert!(
        out["results"][1].as_str().unwrap().contains("Asia/Tokyo"),
        "call_tool reached the time server: {}",
        out["results"][1]
    );
    let sum: Value = serde_json::from_str(out["results"][2].as_str().unwrap()).unwrap();
    let top5 = tool_names(&sum["tools"]);
    assert!(top5.iter().any(|n| n == "everything__get-sum"), "{top5:?}");

    // The call that followed the first search was a hit; the pair is exported in the
    // evaluation set's format; the audit log names the real tool, not call_tool.
    let metrics = gw.metrics().await;
    assert!(
        metrics.contains("mcp_gateway_routing_followups_total{result=\"hit\"} 1"),
        "{metrics}"
    );
    assert!(metrics
        .contains("mcp_gateway_routing_searches_total{mode=\"semantic\",surface=\"meta\"} 2"));
    let pairs = reqwest::get(format!("{}/admin/v1/routing/pairs", gw.base))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let pair: Value = serde_json::from_str(pairs.lines().next().unwrap()).unwrap();
    assert_eq!(pair["query"], "what time is it in Tokyo right now");
    assert_eq!(
        pair["relevant"][0],
        json!({"server": "time", "name": "get_current_time"})
    );
    assert_eq!(pair["found"], true);
    let mut audit = Value::Null;
    for _ in 0..50 {
        audit = gw
            .get_json("/admin/v1/audit?target=time__get_current_time")
            .await;
        if audit.as_array().is_some_and(|a| !a.is_empty()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(audit.as_array().map(Vec::len), Some(1), "{audit}");
    assert_eq!(audit[0]["action"], "tools/call");
    assert_eq!(audit[0]["upstream"], "time");

    // A repeated query is served from the cache.
    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;
    search(&mut c, "what time is it in Tokyo right now", 3).await;
    let metrics = gw.metrics().await;
    assert!(
        metrics.contains("mcp_gateway_routing_query_cache_total{result=\"hit\"} 1"),
        "{metrics}"
    );

    // POST /v1/route: ranked tools; filters narrow before ranking.
    let route = |body: Value| {
        let url = format!("{}/v1/route", gw.base);
        async move {
            let r = reqwest::Client::new()
                .post(url)
                .json(&body)
                .send()
                .await
                .unwrap();
            (r.status().as_u16(), r.json::<Value>().await.unwrap())
        }
    };
    // A request as large as a body may be is read to its first 8 KiB: its readings look at
    // words around words, and a 700 KB request cost 29 s of CPU before it was bounded. The
    // answer serves what the request opens with.
    let huge = format!(
        "What time is it in Tokyo right now? {}",
        "Make a chart of my Strava runs and ".repeat(30_000)
    );
    let r = reqwest::Client::new()
        .post(format!("{}/v1/route", gw.base))
        .timeout(std::time::Duration::from_secs(20))
        .json(&json!({ "query": huge, "k": 3 }))
        .send()
        .await
        .expect("an answer within 20 s");
    assert_eq!(r.status().as_u16(), 200);
    let r: Value = r.json().await.unwrap();
    assert!(
        tool_names(&r["tools"])
            .iter()
            .any(|n| n == "time__get_current_time"),
        "{r}"
    );
    let (s, r) = route(json!({"query": "remember a new fact about a person", "k": 5})).await;
    assert_eq!(s, 200, "{r}");
    let ranked = tool_names(&r["tools"]);
    assert!(
        ranked.iter().any(|n| n.starts_with("memory__")),
        "{ranked:?}"
    );
    let scores: Vec<f64> = r["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["score"].as_f64().unwrap())
        .collect();
    assert!(
        scores.windows(2).all(|w| w[0] >= w[1]),
        "ranked by score: {scores:?}"
    );
    let (_, r) = route(
        json!({"query": "what time is it", "k": 5, "filters": {"upstreams": ["everything"]}}),
    )
    .await;
    assert!(
        r["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["upstream"] == "everything"),
        "{r}"
    );
    // A request of two steps gets the tools of each, each saying which step it serves.
    let (_, r) = route(
        json!({"query": "Tell me the current time in Tokyo, and then \
        remember that Alice works at Acme as a data engineer", "k": 4}),
    )
    .await;
    assert_eq!(r["steps"].as_array().map(Vec::len), Some(2), "{r}");
    let tools = r["tools"].as_array().unwrap();
    let serving = |prefix: &str| {
        tools
            .iter()
            .find(|t| t["name"].as_str().unwrap().starts_with(prefix))
            .map(|t| t["step"].as_str().unwrap_or("whole request").to_string())
    };
    let time_step = serving("time__").expect("a time tool");
    let memory_step = serving("memory__").expect("a memory tool");
    assert!(
        time_step.contains("Tokyo") || time_step == "whole request",
        "{r}"
    );
    assert!(memory_step.contains("Alice"), "{r}");
    // A quoted value is what a step acts on, never where it ends.
    let (_, r) = route(
        json!({"query": "Echo back the message 'Build is green. Then deploy to \
        prod.' and then tell me the current time in Tokyo.", "k": 4}),
    )
    .await;
    assert_eq!(
        r["steps"],
        json!([
            "Echo back the message 'Build is green. Then deploy to prod.'",
            "and then tell me the current time in Tokyo."
        ]),
        "{r}"
    );
    // Actions listed with commas are steps too ("…, add …, delete …"), each served by its own
    // tool; a clause that sets a condition ("If …, read …") is not cut.
    let steps = [
        "Create an entity named Alice in the knowledge graph",
        "add the observation that she drinks tea",
        "delete the relation between Alice and Bob.",
    ];
    let (_, r) = route(json!({"query": steps.join(", "), "k": 4})).await;
    assert_eq!(r["steps"], json!(steps), "{r}");
    for (step, tool) in steps.iter().zip([
        "memory__create_entities",
        "memory__add_observations",
        "memory__delete_relations",
    ]) {
        assert_eq!(tools_serving(&r, step).first(), Some(&tool), "{step}: {r}");
    }
    let (_, r) = route(
        json!({"query": "If the graph has an entity named Alice, read \
        the whole graph", "k": 4}),
    )
    .await;
    assert!(r["steps"].as_array().is_none_or(|s| s.len() < 2), "{r}");
    // Everyday words to a memory other than "remember" are read as what they ask of it: the
    // memory server's tools did not come first for these.
    for (query, tools) in [
        (
            "What did I tell you about the boiler?",
            &[
                "memory__search_nodes",
                "memory__open_nodes",
                "memory__read_graph",
            ][..],
        ),
        (
            "Make a mental note that Priya is vegetarian",
            &["memory__add_observations", "memory__create_entities"][..],
        ),
    ] {
        let (_, r) = route(json!({"query": query, "k": 1})).await;
        let first = tool_names(&r["tools"]);
        assert!(tools.contains(&first[0].as_str()), "{query}: {r}");
    }
    // A step's action picks among one provider's look-alikes: "drop the relation" is
    // `delete_relations`, though `create_relations` shares its other words.
    let step = "then drop the relation between Alice and Bob.";
    let (_, r) = route(
        json!({"query": format!("Tell me the current time in Tokyo, {step}"),
        "k": 4}),
    )
    .await;
    let serving = tools_serving(&r, step);
    assert_eq!(serving.first(), Some(&"memory__delete_relations"), "{r}");
    // A request of more steps than the default k names no k: every step still gets its tool,
    // through /v1/route and search_tools alike; a k the caller names is kept.
    let six = "What time is it in Tokyo right now? Then create an entity named Alice in the \
        knowledge graph. Then add the numbers 3 and 4 together. Then echo back the message hello. \
        Then read the whole knowledge graph you remember. Then convert 9:00 Tokyo time to New \
        York time.";
    let needs: [&[&str]; 6] = [
        &["time__get_current_time"],
        &["memory__create_entities", "memory__add_observations"],
        &["everything__get-sum"],
        &["everything__echo", "fx__echo"],
        &["memory__read_graph"],
        &["time__convert_time"],
    ];
    let (_, r) = route(json!({ "query": six })).await;
    assert_eq!(r["steps"].as_array().map(Vec::len), Some(6), "{r}");
    let ranked = tool_names(&r["tools"]);
    for need in needs {
        assert!(
            need.iter().any(|n| ranked.iter().any(|f| f == n)),
            "{need:?} missing from {ranked:?}: {r}"
        );
    }
    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;
    let found = c
        .request(
            "tools/call",
            json!({"name": "search_tools", "arguments": { "query": six }}),
        )
        .await;
    let found = names(&found["result"]);
    for need in needs {
        assert!(
            need.iter().any(|n| found.iter().any(|f| f == n)),
            "{need:?} missing from {found:?}"
        );
    }
    let (_, r) = route(json!({ "query": six, "k": 5 })).await;
    assert_eq!(r["tools"].as_array().map(Vec::len), Some(5), "{r}");
    let (_, r) = route(json!({"query": "what time is it in Tokyo right now", "k": 3})).await;
    assert_eq!(r["nothing_fits"], false, "{r}");
    assert!(r.get("steps").is_none(), "one step: {r}");
    // Nothing here books restaurants: the search says so, and still shows the closest tools.
    let (_, r) =
        route(json!({"query": "book a table for two at an Italian restaurant tonight", "k": 3}))
            .await;
    assert_eq!(r["nothing_fits"], true, "{r}");
    assert_eq!(r["tools"].as_array().map(Vec::len), Some(3), "{r}");
    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;
    let found = c
        .request(
            "tools/call",
            json!({"name": "search_tools", "arguments":
                {"query": "book a table for two at an Italian restaurant tonight"}}),
        )
        .await;
    let structured = &found["result"]["structuredContent"];
    assert_eq!(structured["nothing_fits"], true, "{found}");
    assert!(structured["note"]
        .as_str()
        .unwrap()
        .contains("No tool fits"));
    let (s, _) = route(json!({"query": "", "k": 5})).await;
    assert_eq!(s, 400);
    let (s, _) = route(json!({"query": "x", "k": 5000})).await;
    assert_eq!(s, 400);

    // A step that names no provider keeps to the one the request is about. Alone, "then tell
    // me the current time there" finds another server's clock first (its words match); the
    // request is about the time server, whose tool serves the step.
    c.request(
        "tools/call",
        json!({"name": "fx__add_tool", "arguments": {"name": "clock",
            "description": "Tells the current time on this server's clock"}}),
    )
    .await;
    let request = json!({"query": "Convert 9:00 Tokyo time to New York time, then tell me the \
        current time there.", "k": 5});
    let mut r = Value::Null;
    for _ in 0..100 {
        r = route(request.clone()).await.1;
        if tool_names(&r["tools"]).iter().any(|n| n == "fx__clock") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let step = "then tell me the current time there.";
    let serving = tools_serving(&r, step);
    assert_eq!(
        serving.first(),
        Some(&"time__get_current_time"),
        "the clock must be indexed and rank after the time server's tool for {step:?}: {r}"
    );

    // A step's later candidates keep to the providers the request chose: after the graph's
    // first tool for "…, link them as colleagues", the graph's `create_relations` rather than
    // an address book's look-alike, which used to take its place.
    add_fixture_tools(
        &gw,
        &mut c,
        &[(
            "link_contacts",
            "Links two people as colleagues in the address book",
        )],
        "link two people as colleagues in the address book",
    )
    .await;
    let (_, r) = route(
        json!({"query": "Add Alice and Bob to the knowledge graph, link them as \
        colleagues, then search the graph for Alice.", "k": 4}),
    )
    .await;
    let names = tool_names(&r["tools"]);
    assert!(
        names.iter().any(|n| n == "memory__create_relations")
            && names.iter().all(|n| n.starts_with("memory__")),
        "the graph's tools serve every step: {r}"
    );

    // Steps whose own tool the model or BM25 missed, each with that tool (and the look-alikes
    // that took its place) added at run time: the step must be served by it (first, where the
    // step's words name nothing else).
    // - "email the findings to …" is sending one: the model read it as being about e-mail
    //   accounts, or about whatever the recipient's title names (the portfolio tool, which
    //   the portfolio manager's title still brings first).
    // - "text it to +1 …" is sending a text message for BM25 too: the word "text" alone found a
    //   tool that types text into a device.
    // - The items of a list written on one line ("1) … 2) …") and the links of a chain of
    //   arrows are steps too: they used to be one part, whose words were the graph's.
    // - A file named for the result, with no verb of its own, is a step of writing it there:
    //   while "… into /tmp/graph.json" was one part, the graph's words chose every tool.
    let texting = StepCase {
        tools: &[
            (
                "type_text",
                "Enter text into the focused text field of a device, as if typed.",
            ),
            ("send_sms", "Send SMS messages to phone numbers."),
        ],
        probe: "send SMS messages to phone numbers",
        before: "Read the whole knowledge graph, ",
        step: "then text it to +1 555 0100.",
        tool: "fx__send_sms",
        first: true,
    };
    let cases = [
        StepCase {
            tools: &[
                (
                    "send_email",
                    "Send emails using a specified account. Define recipients, subject and body.",
                ),
                (
                    "list_accounts",
                    "Retrieve a list of all available email accounts managed by the server.",
                ),
                (
                    "get_portfolio",
                    "Retrieve detailed portfolio information using the portfolio ID to manage \
                     and monitor assets.",
                ),
            ],
            probe: "retrieve detailed portfolio information",
            before: "Read the whole knowledge graph, ",
            step: "then email the findings to my portfolio manager.",
            tool: "fx__send_email",
            first: false,
        },
        texting,
        StepCase {
            before: "1) Read the whole knowledge graph 2) ",
            step: "text it to +1 555 0100",
            ..texting
        },
        StepCase {
            before: "Read the whole knowledge graph → ",
            step: "text it to +1 555 0100",
            ..texting
        },
        StepCase {
            tools: &[(
                "write_file",
                "Save or append text content to a file at a given path.",
            )],
            probe: "save text content to a file at a given path",
            before: "Read the whole knowledge graph ",
            step: "into /tmp/graph.json",
            tool: "fx__write_file",
            first: true,
        },
    ];
    for case in cases {
        add_fixture_tools(&gw, &mut c, case.tools, case.probe).await;
        let query = format!("{}{}", case.before, case.step);
        let (_, r) = route(json!({"query": query, "k": 4})).await;
        let serving = tools_serving(&r, case.step);
        let served = if case.first {
            serving.first() == Some(&case.tool)
        } else {
            serving.contains(&case.tool)
        };
        assert!(served, "{} must serve {:?}: {r}", case.tool, case.step);
    }

    // A request to the assistant's memory in the words people use for their own: the memory
    // server's tool for it comes first (its texts speak of knowledge graphs and observations,
    // and the model read these by their other words: none of them was first).
    for (query, tools) in [
        (
            "forget everything you know about Carol",
            &["memory__delete_entities", "memory__delete_observations"][..],
        ),
        (
            "what do you remember about Alice?",
            &["memory__search_nodes", "memory__open_nodes"][..],
        ),
        (
            "remember that Alice speaks French",
            &["memory__add_observations", "memory__create_entities"][..],
        ),
    ] {
        let (_, r) = route(json!({"query": query, "k": 3})).await;
        let first = r["tools"][0]["name"].as_str().unwrap_or_default();
        assert!(tools.contains(&first), "{query:?} → {first}: {r}");
    }

    // "… and remember …" is a step of its own, even after a short first step: the time and
    // the memory each get their tool (it was one part, whose first tools were the memory's).
    let (_, r) = route(json!({"query": "Get Tokyo's time and remember it as the \
        meeting time", "k": 4}))
    .await;
    assert_eq!(
        r["steps"],
        json!(["Get Tokyo's time", "and remember it as the meeting time"]),
        "{r}"
    );
    let names = tool_names(&r["tools"]);
    assert!(
        names.iter().any(|n| n == "time__get_current_time")
            && names
                .iter()
                .any(|n| n == "memory__add_observations" || n == "memory__create_entities"),
        "the time's tool and the memory's: {r}"
    );

    // "to-dos" is read as tools spell it: "todos" (BM25 had dropped "to-do" as two common
    // words, and the model read "to-dos" as other words).
    add_fixture_tools(
        &gw,
        &mut c,
        &[
            (
                "list_users",
                "List the open user accounts and their details.",
            ),
            ("list_todos", "Retrieve all todo items with their status."),
        ],
        "retrieve all todo items",
    )
    .await;
    let (_, r) = route(json!({"query": "Show me my open to-dos", "k": 1})).await;
    assert_eq!(tool_names(&r["tools"]), ["fx__list_todos"], "{r}");

    // One's calendar in everyday words is read in the words calendar tools use ("Schedule a
    // calendar event: …"): a call, a team, a phone tool came first before.
    add_fixture_tools(
        &gw,
        &mut c,
        &[
            (
                "start_call",
                "Start a phone call to a number and speak a message.",
            ),
            (
                "list_teams",
                "List the teams of the organisation and their members.",
            ),
            ("delete_event", "Remove a calendar event by its event ID."),
            (
                "list_events",
                "Retrieve calendar events within a time range.",
            ),
            (
                "create_event",
                "Schedule a new calendar event with title, start and end times and attendees.",
            ),
        ],
        "schedule a new calendar event with title and attendees",
    )
    .await;
    for (query, tool) in [
        (
            "Book a 30-minute call with dana@example.com on Thursday at 10",
            "fx__create_event",
        ),
        ("Am I free on Friday afternoon?", "fx__list_events"),
        ("Can we cancel tomorrow's team huddle?", "fx__delete_event"),
    ] {
        let (_, r) = route(json!({"query": query, "k": 1})).await;
        assert_eq!(tool_names(&r["tools"]), [tool], "{query}: {r}");
    }

    // A request to be reminded is read as a to-do with a reminder: the invoice sender came
    // first for "nudge me on Friday to send the invoices".
    add_fixture_tools(
        &gw,
        &mut c,
        &[
            ("send_invoice", "Send an invoice to a client by email."),
            (
                "create_todo",
                "Create a todo task with a title, a due date and a reminder.",
            ),
        ],
        "create a todo task with a title and a due date",
    )
    .await;
    let (_, r) = route(json!({"query": "Nudge me on Friday to send the invoices", "k": 1})).await;
    assert_eq!(tool_names(&r["tools"]), ["fx__create_todo"], "{r}");

    // Putting something in one's notes is read as making a note: a password store, a mind map
    // and a log reader came first for these.
    add_fixture_tools(
        &gw,
        &mut c,
        &[
            ("get_password", "Retrieve a stored password by its name."),
            (
                "markdown_to_mindmap",
                "Turn an idea outline in markdown into an interactive mind map.",
            ),
            ("get_logs", "Retrieve application logs for a time range."),
            (
                "create_note",
                "Create and save a new note with a title and content.",
            ),
        ],
        "create and save a new note with a title",
    )
    .await;
    for query in [
        "Jot down: the wifi password at the cabin is 'pinecone42'",
        "Stash this idea somewhere: a podcast about old maps",
        "Log today's reading: finished chapter 4 of Dune",
    ] {
        let (_, r) = route(json!({"query": query, "k": 1})).await;
        assert_eq!(tool_names(&r["tools"]), ["fx__create_note"], "{query}: {r}");
    }
    // A file acted on as a whole is read after the operation, not the file's kind: a sheet copier
    // and a log reader came first for these.
    add_fixture_tools(
        &gw,
        &mut c,
        &[
            (
                "excel_copy_sheet",
                "Duplicate a sheet within an Excel file by source and destination sheet names.",
            ),
            ("delete_file", "Delete a file or directory at a path."),
            (
                "copy_items",
                "Copy files or directories from source paths to destination paths.",
            ),
        ],
        "copy files or directories from source paths to destination paths",
    )
    .await;
    for (query, tool) in [
        (
            "Make a copy of budget.xlsx before I edit it",
            "fx__copy_items",
        ),
        (
            "Get rid of the old log file at /tmp/app.log",
            "fx__delete_file",
        ),
    ] {
        let (_, r) = route(json!({"query": query, "k": 1})).await;
        assert_eq!(tool_names(&r["tools"]), [tool], "{query}: {r}");
    }
    // What a folder holds is a listing of it: a backup reader came first for this.
    add_fixture_tools(
        &gw,
        &mut c,
        &[
            (
                "read_backup_manifest",
                "Read what is stored in a backup: its manifest, size and date.",
            ),
            (
                "list_directory",
                "List files and directories within a directory path.",
            ),
        ],
        "list files and directories within a directory path",
    )
    .await;
    let (_, r) =
        route(json!({"query": "What's stored under /srv/backups right now?", "k": 1})).await;
    assert_eq!(tool_names(&r["tools"]), ["fx__list_directory"], "{r}");
    // Looking something up in one's notes shares note-taking's verbs, and is read as a search of
    // them: "what did I jot down" is no new note.
    add_fixture_tools(
        &gw,
        &mut c,
        &[(
            "search_notes",
            "Search notes by a query and read the notes found.",
        )],
        "search notes by a query and read them",
    )
    .await;
    for query in [
        "What did I jot down about the lease renewal?",
        "Find the idea I stashed about old maps",
    ] {
        let (_, r) = route(json!({"query": query, "k": 1})).await;
        assert_eq!(
            tool_names(&r["tools"]),
            ["fx__search_notes"],
            "{query}: {r}"
        );
    }

    // A phrase that names a shell command is a step of running it, which a tool that runs
    // commands serves: "using the date command" was no step, and the time tools took every
    // place.
    add_fixture_tools(
        &gw,
        &mut c,
        &[(
            "run_command",
            "Run a shell command in a terminal and return what it prints.",
        )],
        "run a shell command in a terminal",
    )
    .await;
    let (_, r) = route(
        json!({"query": "Tell me the current time in Berlin, using the date \
        command", "k": 4}),
    )
    .await;
    assert_eq!(
        r["steps"],
        json!([
            "Tell me the current time in Berlin",
            "using the date command"
        ]),
        "{r}"
    );
    let names = tool_names(&r["tools"]);
    assert!(
        names.iter().any(|n| n == "fx__run_command")
            && names.iter().any(|n| n == "time__get_current_time"),
        "the command's runner and the time's tool: {r}"
    );
}

#[tokio::test]
async fn virtual_servers_list_by_mode_and_auto_sessions_grow_after_a_search() {
    let dir = gateway_tests::scratch();
    let gw = Gateway::start(&config(&sqlite_url(&dir), "", &dir)).await;
    gw.wait_up(&UPSTREAMS).await;
    wait_indexed(&gw, true).await;
    let (s, v) = admin(
        &gw,
        reqwest::Method::POST,
        "/admin/v1/virtual-servers",
        json!({"name": "ops", "mode": "auto", "upstreams": ["time", "everything"],
               "pinned": ["everything__echo"], "auto_k": 4}),
    )
    .await;
    assert_eq!(s, 201, "{v}");
    assert_eq!(v["path"], "/mcp/v/ops");
    let (s, _) = admin(
        &gw,
        reqwest::Method::POST,
        "/admin/v1/virtual-servers",
        json!({"name": "finder", "mode": "search"}),
    )
    .await;
    assert_eq!(s, 201);
    let (s, _) = admin(
        &gw,
        reqwest::Method::POST,
        "/admin/v1/virtual-servers",
        json!({"name": "ops"}),
    )
    .await;
    assert_eq!(s, 409, "names are unique");
    let (s, _) = admin(
        &gw,
        reqwest::Method::POST,
        "/admin/v1/virtual-servers",
        json!({"name": "a b"}),
    )
    .await;
    assert_eq!(s, 400);

    let url = format!("{}/mcp/v/ops", gw.base);
    let mut c = RawClient::initialize(&url, json!({})).await;
    let listed = |r: &Value| -> Vec<String> {
        r["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    let before = listed(&c.request("tools/list", json!({})).await);
    assert_eq!(before, ["search_tools", "call_tool", "everything__echo"]);

    let mut events = Box::pin(c.listen().await);
    let found = search(&mut c, "convert a time between two time zones", 3).await;
    assert_eq!(found[0], "time__convert_time", "{found:?}");
    assert!(
        found
            .iter()
            .all(|n| n.starts_with("time__") || n.starts_with("everything__")),
        "only the server's upstreams: {found:?}"
    );
    let note = tokio::time::timeout(Duration::from_secs(10), events.next())
        .await
        .expect("list_changed arrives")
        .unwrap();
    assert_eq!(note["method"], "notifications/tools/list_changed");
    let after = listed(&c.request("tools/list", json!({})).await);
    assert!(
        after.contains(&"time__convert_time".to_string()),
        "{after:?}"
    );
    assert!(
        after.contains(&"everything__echo".to_string()),
        "pinned stays"
    );
    assert!(
        after.len() <= 2 + 1 + 4,
        "auto_k bounds the found tools: {after:?}"
    );

    // A tool outside the server is unknown here, also through call_tool; one inside is called
    // by its name without being listed.
    let r = c
        .request("tools/call", json!({"name": "call_tool", "arguments": {"name": "memory__read_graph", "arguments": {}}}))
        .await;
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown tool"),
        "{r}"
    );
    let r = c
        .request(
            "tools/call",
            json!({"name": "everything__get-sum", "arguments": {"a": 2, "b": 3}}),
        )
        .await;
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains('5'),
        "{r}"
    );

    // The session belongs to its endpoint.
    let mut other = RawClient::new(&gw.mcp);
    other.session = c.session.clone();
    let resp = other
        .post(&json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}))
        .await;
    assert_eq!(resp.status().as_u16(), 404);

    // `search` mode: the meta-tools only (nothing pinned); an unknown server is 404.
    let mut f = RawClient::initialize(&format!("{}/mcp/v/finder", gw.base), json!({})).await;
    assert_eq!(
        listed(&f.request("tools/list", json!({})).await),
        ["search_tools", "call_tool"]
    );
    let resp = RawClient::new(&format!("{}/mcp/v/nope", gw.base))
        .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}))
        .await;
    assert_eq!(resp.status().as_u16(), 404);

    // Stored in the registry: a restart keeps them.
    let (s, _) = admin(
        &gw,
        reqwest::Method::DELETE,
        "/admin/v1/virtual-servers/finder",
        Value::Null,
    )
    .await;
    assert_eq!(s, 204);
    let config_text = std::fs::read_to_string(gw.dir.join("gateway.toml")).unwrap();
    gw.stop().await;
    let gw = Gateway::start(&config_text).await;
    let list = gw.get_json("/admin/v1/virtual-servers").await;
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ops"]);
    assert_eq!(list[0]["mode"], "auto");
}

/// A step that names a product ("… in HackMD") is served by that upstream's tool, though its
/// other words ("write a summary") fit another upstream's tool better.
#[tokio::test]
async fn a_step_that_names_an_upstream_gets_its_tool_first() {
    let dir = gateway_tests::scratch();
    let extra = format!(
        "[[upstreams]]\nname = \"hackmd\"\ntransport = \"stdio\"\ncommand = \"{}\"\n",
        super::fixture_bin()
    );
    let gw = Gateway::start(&fixture_config(&sqlite_url(&dir), &extra)).await;
    gw.wait_up(&["fx", "hackmd"]).await;
    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;
    for (upstream, name, description) in [
        (
            "fx",
            "fetch_page",
            "Fetch a web page by URL and return its text.",
        ),
        (
            "fx",
            "write_summary",
            "Write a summary of a text and save it as a document.",
        ),
        ("hackmd", "list_notes", "List the notes of the account."),
        (
            "hackmd",
            "create_note",
            "Create a note with a title and markdown content.",
        ),
    ] {
        let tool = format!("{upstream}__add_tool");
        c.request(
            "tools/call",
            json!({"name": tool, "arguments": {"name": name, "description": description}}),
        )
        .await;
    }
    let route = |query: &'static str| {
        let gw = &gw;
        async move {
            let (_, r) = gw
                .send(
                    reqwest::Method::POST,
                    "/v1/route",
                    None,
                    &json!({"query": query, "k": 3}),
                )
                .await;
            r
        }
    };
    // Every added tool listed, then indexed with its vector.
    for _ in 0..100 {
        let r = route("create a note with a title and markdown content").await;
        if tool_names(&r["tools"])
            .iter()
            .any(|n| n == "hackmd__create_note")
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    wait_indexed(&gw, true).await;

    let step = "and write a summary of it in HackMD";
    let r = route("Get https://example.com/q3 and write a summary of it in HackMD").await;
    assert_eq!(
        r["steps"],
        json!(["Get https://example.com/q3", step]),
        "{r}"
    );
    assert_eq!(
        tools_serving(&r, step).first().copied(),
        Some("hackmd__create_note"),
        "{r}"
    );
}

#[tokio::test]
async fn a_changed_description_is_found_by_its_new_wording_and_embeddings_are_reused() {
    let dir = gateway_tests::scratch();
    let cfg = fixture_config(&sqlite_url(&dir), "");
    let gw = Gateway::start(&cfg).await;
    gw.wait_up(&["fx"]).await;
    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;
    c.request("tools/call", json!({"name": "fx__add_tool", "arguments": {"name": "forecast", "description": "Tells tomorrow's weather"}})).await;
    // The first result of a search, once it is `fx__forecast` described as `description`.
    let wait_for = |c: &RawClient, query: &'static str, description: &'static str| {
        let mut c2 = RawClient::new(&c.url);
        c2.session = c.session.clone();
        async move {
            let mut last = Value::Null;
            for _ in 0..100 {
                let r = c2
                    .request(
                        "tools/call",
                        json!({"name": "search_tools", "arguments": {"query": query, "k": 1}}),
                    )
                    .await;
                last = r["result"]["structuredContent"]["tools"][0].clone();
                if last["name"] == "fx__forecast" && last["description"] == description {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            panic!("search for {query:?} found {last}");
        }
    };
    wait_for(&c, "will it rain tomorrow", "Tells tomorrow's weather").await;
    let money = "Converts an amount of money between currencies";
    c.request(
        "tools/call",
        json!({"name": "fx__add_tool", "arguments": {"name": "forecast", "description": money}}),
    )
    .await;
    wait_for(&c, "how many euros is 20 dollars", money).await;
    // Words only the new description has find it lexically too, once the index has it (the
    // view changes first; the index follows asynchronously, later under load).
    let mut r = Value::Null;
    for _ in 0..100 {
        r = reqwest::Client::new()
            .post(format!("{}/v1/route", gw.base))
            .json(&json!({"query": "currencies", "k": 1}))
            .send()
            .await
            .unwrap()
            .json::<Value>()
            .await
            .unwrap();
        if r["tools"][0]["name"] == "fx__forecast" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(r["tools"][0]["name"], "fx__forecast", "{r}");
    let first = gw.log();
    assert!(first.contains("tool vectors ready"), "{first}");
    gw.stop().await;

    // A restart on the same database embeds nothing again.
    let gw = Gateway::start(&cfg).await;
    gw.wait_up(&["fx"]).await;
    for _ in 0..100 {
        if gw.log().contains("tool vectors ready") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let line = gw
        .log()
        .lines()
        .find(|l| l.contains("tool vectors ready"))
        .map(str::to_string)
        .expect("vectors line");
    let v: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["fields"]["embedded"], 0, "{line}");
    let tools = gw.get_json("/admin/v1/catalog").await;
    let count = tools.as_array().unwrap().len();
    assert_eq!(v["fields"]["reused"], count, "{line}");
    // The default model is the one trained for tools that this repository ships.
    let model = gw.get_json("/readyz").await["routing"]["model"].clone();
    assert!(
        model
            .as_str()
            .is_some_and(|m| m.starts_with("minilm-tools:")),
        "{model}"
    );
    // It names the graph that runs: on x86-64 the integer-GEMM rewrite `fetch-model` made.
    let graph = gw.get_json("/readyz").await["routing"]["graph"].clone();
    let expected = match cfg!(target_arch = "x86_64") {
        true => "minilm-tools.matmul-integer.onnx",
        false => "minilm-tools.onnx",
    };
    assert_eq!(graph, expected, "{graph}");
    gw.stop().await;

    // The published model stays selectable; switching embeds every tool again with it.
    let gw = Gateway::start_with_env(&cfg, &[("MCP_GATEWAY_ROUTING_MODEL", "minilm")]).await;
    gw.wait_up(&["fx"]).await;
    let mut line = None;
    for _ in 0..300 {
        line = gw
            .log()
            .lines()
            .find(|l| l.contains("tool vectors ready"))
            .map(str::to_string);
        if line.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let line = line.expect("vectors line");
    let v: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["fields"]["embedded"], count, "{line}");
    assert_eq!(v["fields"]["reused"], 0, "{line}");
    let model = gw.get_json("/readyz").await["routing"]["model"].clone();
    assert!(
        model.as_str().is_some_and(|m| m.starts_with("model:")),
        "{model}"
    );
    // Tools live in the fixture's process, which started anew: the tool is added again.
    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;
    c.request(
        "tools/call",
        json!({"name": "fx__add_tool", "arguments": {"name": "forecast", "description": money}}),
    )
    .await;
    wait_for(&c, "how many euros is 20 dollars", money).await;
}

#[tokio::test]
async fn searches_see_only_what_the_caller_may_call() {
    let db = gateway_tests::postgres_database().await;
    let dir = gateway_tests::scratch();
    let roles = r#"
[[roles]]
name = "admin"
admin = true
upstreams = ["*"]

[[roles]]
name = "clock"
upstreams = ["time"]
"#;
    let cfg = format!(
        "{}{roles}\n[auth]\nmode = \"required\"\n",
        config(&db, "", &dir)
    );
    let gw = Gateway::start_secured(&cfg, &[]).await;
    gw.wait_up(&UPSTREAMS).await;
    wait_indexed(&gw, true).await;
    let token = gw.token_for("dana", &["clock"]).await;
    let mut c = RawClient::initialize_as(&gw.mcp, json!({}), Some(&token)).await;
    let found = search(&mut c, "add two numbers", 10).await;
    assert!(!found.is_empty());
    assert!(
        found.iter().all(|n| n.starts_with("time__")),
        "only what the role allows: {found:?}"
    );
    let r = reqwest::Client::new()
        .post(format!("{}/v1/route", gw.base))
        .json(&json!({"query": "store a memory", "k": 10}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        r.status().as_u16(),
        401,
        "the route endpoint needs a token too"
    );
    let r: Value = reqwest::Client::new()
        .post(format!("{}/v1/route", gw.base))
        .bearer_auth(&token)
        .json(&json!({"query": "store a memory", "k": 10}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        r["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["upstream"] == "time"),
        "{r}"
    );
}

#[tokio::test]
async fn without_the_model_search_is_lexical_and_says_so() {
    let dir = gateway_tests::scratch();
    let gw = Gateway::start_with_env(
        &config(&sqlite_url(&dir), "", &dir),
        &[("MCP_GATEWAY_MODEL_DIR", "/nonexistent/model")],
    )
    .await;
    gw.wait_up(&UPSTREAMS).await;
    let status = wait_indexed(&gw, false).await;
    assert_eq!(status["mode"], "lexical");
    assert!(
        status["reason"]
            .as_str()
            .unwrap()
            .contains("/nonexistent/model"),
        "{status}"
    );
    assert!(gw.log().contains("DEGRADED"), "the log says so");
    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;
    let r = c
        .request("tools/call", json!({"name": "search_tools", "arguments": {"query": "get the current time in a timezone", "k": 3}}))
        .await;
    assert_eq!(r["result"]["structuredContent"]["mode"], "lexical");
    assert_eq!(names(&r["result"])[0], "time__get_current_time", "{r}");
}

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
