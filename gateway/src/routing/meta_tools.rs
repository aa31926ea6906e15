//! The meta-tools every host can use unchanged: `search_tools` finds tools for a task,
//! `call_tool` calls one by name.

use serde_json::{json, Map, Value};

use super::service::Search;
use crate::protocol::McpError;

pub const SEARCH_TOOLS: &str = "search_tools";
pub const CALL_TOOL: &str = "call_tool";

pub fn is_meta(name: &str) -> bool {
    name == SEARCH_TOOLS || name == CALL_TOOL
}

/// Their definitions, as `tools/list` shows them.
pub fn definitions(max_k: usize, default_k: usize) -> [Value; 2] {
    [
        json!({
            "name": SEARCH_TOOLS,
            "title": "Search tools",
            "description": "Find the tools for a task among all the tools behind this gateway. \
                Describe the task in plain words; the answer lists the best matching tools with \
                name, description, input schema and score. Call one with call_tool, or by its \
                name when your tool list shows it.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": { "type": "string", "description": "The task, in plain words" },
                    "k": {
                        "type": "integer", "minimum": 1, "maximum": max_k,
                        "description": format!("How many tools to return (default {default_k}, \
                            or one for each step of a request of more steps)")
                    }
                },
                "required": ["query"]
            },
            "annotations": { "readOnlyHint": true, "openWorldHint": false }
        }),
        json!({
            "name": CALL_TOOL,
            "title": "Call a tool",
            "description": "Call any tool that search_tools found, by its name, with its arguments.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "name": { "type": "string", "description": "The tool's name as search_tools gave it" },
                    "arguments": { "type": "object", "description": "The tool's arguments" }
                },
                "required": ["name"]
            }
        }),
    ]
}

/// `search_tools` arguments: the query and the k it names, if any (bounded by `max_k`).
pub fn search_args(
    params: Option<&Map<String, Value>>,
    max_k: usize,
) -> Result<(String, Option<usize>), McpError> {
    let args = params.and_then(|p| p.get("arguments"));
    let query = args
        .and_then(|a| a.get("query"))
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|q| !q.is_empty())
        .ok_or_else(|| McpError::invalid_params("search_tools needs a non-empty query"))?;
    let k = match args.and_then(|a| a.get("k")) {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_u64()
                .filter(|k| *k >= 1)
                .ok_or_else(|| McpError::invalid_params("k must be a positive integer"))?
                .min(max_k as u64) as usize,
        ),
    };
    Ok((query.to_string(), k))
}

/// The `tools/call` params a `call_tool` call stands for.
/// What a meta-tool answers to arguments it cannot use: a tool result with `isError` (the spec's
/// rule for tool execution errors, so the model can read it and try again), not a protocol error.
pub fn bad_arguments(e: McpError) -> Value {
    serde_json::json!({
        "content": [{ "type": "text", "text": e.message }],
        "isError": true,
    })
}

pub fn unwrap_call(params: Option<&Map<String, Value>>) -> Result<Map<String, Value>, McpError> {
    let args = params
        .and_then(|p| p.get("arguments"))
        .and_then(Value::as_object);
    let name = args
        .and_then(|a| a.get("name"))
        .and_then(Value::as_str)
        .filter(|n| !is_meta(n))
        .ok_or_else(|| {
            McpError::invalid_params("call_tool needs the name of a tool (not a meta-tool)")
        })?;
    let mut inner = Map::new();
    inner.insert("name".into(), Value::from(name));
    match args.and_then(|a| a.get("arguments")) {
        None | Some(Value::Null) => {}
        Some(a @ Value::Object(_)) => {
            inner.insert("arguments".into(), a.clone());
        }
        Some(_) => {
            return Err(McpError::invalid_params(
                "call_tool arguments must be an object",
            ))
        }
    }
    if let Some(meta) = params.and_then(|p| p.get("_meta")) {
        inner.insert("_meta".into(), meta.clone());
    }
    Ok(inner)
}

/// The `search_tools` result: the tools as JSON text (what every host shows the model) and as
/// structured content.
pub fn search_result(search: &Search, mode: &str) -> Value {
    let tools: Vec<Value> = search
        .tools
        .iter()
        .map(|f| {
            let d = &f.definition;
            let mut t = Map::new();
            t.insert("name".into(), Value::from(f.name.clone()));
            for key in ["title", "description", "inputSchema"] {
                if let Some(v) = d.get(key) {
                    t.insert(key.into(), v.clone());
                }
            }
            t.insert(
                "score".into(),
                json!((f64::from(f.score) * 1e4).round() / 1e4),
            );
            if let Some(step) = &f.step {
                t.insert("step".into(), Value::from(step.clone()));
            }
            Value::Object(t)
        })
        .collect();
    let mut structured =
        json!({ "tools": tools, "mode": mode, "nothing_fits": search.nothing_fits });
    if search.steps.len() > 1 {
        structured["steps"] = json!(search.steps);
    }
    if search.nothing_fits {
        // Said in words too: a model reads the text, and should not call a tool that merely
        // came closest.
        structured["note"] = Value::from(
            "No tool fits this request well; these are only the closest. Tell the user if none \
             of them does what was asked.",
        );
    }
    json!({
        "content": [{ "type": "text", "text": structured.to_string() }],
        "structuredContent": structured,
        "isError": false
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn arguments_are_checked() {
        let ok =
            p(json!({"name": "search_tools", "arguments": {"query": " read a file ", "k": 500}}));
        assert_eq!(
            search_args(Some(&ok), 50).unwrap(),
            ("read a file".into(), Some(50))
        );
        let default = p(json!({"arguments": {"query": "read a file"}}));
        assert_eq!(search_args(Some(&default), 50).unwrap().1, None);
        let none = p(json!({"name": "search_tools", "arguments": {"query": ""}}));
        assert!(search_args(Some(&none), 50).is_err());
        let bad_k = p(json!({"arguments": {"query": "x", "k": 0}}));
        assert!(search_args(Some(&bad_k), 50).is_err());
        let call = p(
            json!({"name": "call_tool", "arguments": {"name": "fs__read", "arguments": {"path": "/"}},
                            "_meta": {"progressToken": 1}}),
        );
        let inner = unwrap_call(Some(&call)).unwrap();
        assert_eq!(inner["name"], "fs__read");
        assert_eq!(inner["arguments"]["path"], "/");
        assert_eq!(inner["_meta"]["progressToken"], 1);
        let meta = p(json!({"arguments": {"name": "call_tool"}}));
        assert!(unwrap_call(Some(&meta)).is_err());
    }
}
