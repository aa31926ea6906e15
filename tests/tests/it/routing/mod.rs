//! Semantic tool routing end to end: real upstreams (the fixture, server-everything and
//! server-memory from npm, mcp-server-time from PyPI) behind the gateway with the real model;
//! `search_tools` and `call_tool` through the official Python SDK client; `auto` and `search`
//! virtual servers; `POST /v1/route`; a changed description found by its new wording; stored
//! embeddings reused by a restart; RBAC before ranking; and the lexical mode without a model.

use std::time::Duration;

use gateway_tests::{peers, Gateway, RawClient};
use serde_json::{json, Value};

use super::{fixture_bin, fixture_config, sqlite_url};

mod catalog;
mod eval;
mod everyday;
mod real_client;
mod steps;
mod stored_vectors;

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

/// `POST /v1/route` with `body`: the status and the JSON answer.
async fn route(gw: &Gateway, body: Value) -> (u16, Value) {
    let r = reqwest::Client::new()
        .post(format!("{}/v1/route", gw.base))
        .json(&body)
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.json::<Value>().await.unwrap())
}
