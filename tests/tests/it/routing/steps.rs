//! Requests of several needs through `POST /v1/route` and `search_tools`: each step gets its
//! tool and says which one it serves; quoted values, comma lists and conditions cut right; a
//! step keeps to the providers the request chose or names.

use std::time::Duration;

use gateway_tests::{Gateway, RawClient};
use serde_json::{json, Value};

use super::{
    add_fixture_tools, fixture_config, names, sqlite_url, tool_names, tools_serving, wait_indexed,
    StepCase,
};

/// The step readings, on the gateway `search_tools_then_call_tool_with_a_real_client` started
/// (the fixture's tools added here stay for the readings after them).
pub(super) async fn served_step_by_step(gw: &Gateway) {
    let route = |body: Value| super::route(gw, body);
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
        gw,
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
        add_fixture_tools(gw, &mut c, case.tools, case.probe).await;
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
