//! `mcp-gateway routing-texts`: the exact texts the model embeds for a catalog's tools (their
//! gists) and for requests (quoted values left out), as JSON lines. The training script
//! (`scripts/train-routing-model`) trains on these, so a trained model sees what the gateway
//! will give it, not a re-implementation of it. A request of several steps also gets the text
//! of each step as the gateway searches it (`steps`), so the script can train on steps too.

use std::io::Write;
use std::path::Path;

use registry::routing::{semantic_query, split_request, tool_doc};
use serde::Deserialize;
use serde_json::json;

use super::eval::{read_lines, CatalogLine};

#[derive(Deserialize)]
struct RequestLine {
    query: String,
}

/// Writes `{"server", "name", "text"}` for each tool of `catalog`, then `{"query", "text"}` for
/// each request of `queries` (with `"steps"` when it splits into several), in file order.
pub fn write(
    catalog: Option<&Path>,
    queries: Option<&Path>,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    if let Some(path) = catalog {
        for t in read_lines::<CatalogLine>(path)? {
            let name = t.name()?;
            let doc = tool_doc(&t.server, name, &t.definition);
            let line = json!({"server": t.server, "name": name, "text": doc.gist});
            writeln!(out, "{line}")?;
        }
    }
    if let Some(path) = queries {
        for q in read_lines::<RequestLine>(path)? {
            let mut line = json!({"text": semantic_query(&q.query), "query": q.query});
            let parts = split_request(&q.query);
            if parts.len() > 1 {
                let steps: Vec<String> = parts.iter().map(|p| semantic_query(p)).collect();
                line["steps"] = json!(steps);
            }
            writeln!(out, "{line}")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn tools_get_their_gist_and_requests_lose_quoted_values_and_list_their_steps() {
        let dir = tempfile::TempDir::new().unwrap();
        let catalog = dir.path().join("c.jsonl");
        let queries = dir.path().join("q.jsonl");
        std::fs::write(
            &catalog,
            r#"{"server":"git","name":"git_log","description":"Shows commits. Much more. And more. Cut.","inputSchema":{"properties":{"max_count":{}}}}"#,
        )
        .unwrap();
        std::fs::write(
            &queries,
            concat!(
                r#"{"query":"rename 'Q3 Budget' to 'Archive'"}"#,
                "\n",
                r#"{"query":"Find the report on the quarterly sales. Then email it to 'bob@x.org' now."}"#
            ),
        )
        .unwrap();
        let mut out = Vec::new();
        write(Some(&catalog), Some(&queries), &mut out).unwrap();
        let lines: Vec<Value> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(
            lines[0]["text"],
            "git log. Shows commits. Much more. And more. Parameters: max count. Server: git"
        );
        assert_eq!(lines[0]["name"], "git_log");
        assert_eq!(
            lines[1]["text"]
                .as_str()
                .unwrap()
                .split_whitespace()
                .collect::<Vec<_>>(),
            ["rename", "to"]
        );
        assert!(lines[1].get("steps").is_none());
        assert_eq!(
            lines[2]["steps"],
            json!([
                "Find the report on the quarterly sales.",
                "Then send an email with it to email address now."
            ])
        );
    }
}
