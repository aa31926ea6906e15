//! The `{"mcpServers": {...}}` JSON that Claude Desktop, Cline and Cursor users already have,
//! turned into upstream specs.

use std::collections::BTreeMap;

use registry::PrefixMode;
use serde::Deserialize;

use crate::config::{Sharing, TransportKind, UpstreamSpec, ValueSource};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct File {
    mcp_servers: BTreeMap<String, Server>,
}

#[derive(Deserialize)]
struct Server {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<String>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    /// Cursor and others write `"type": "sse" | "http" | "streamable-http" | "stdio"`.
    #[serde(rename = "type", alias = "transport")]
    kind: Option<String>,
    #[serde(default)]
    disabled: bool,
}

/// Values that look like secrets become `{ env = NAME }` references named after the key, so that
/// importing never stores a credential in clear text; the user exports that variable.
fn source(key: &str, value: String) -> ValueSource {
    if crate::config::looks_secret(key) {
        let var: String = key
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_uppercase()
                } else {
                    '_'
                }
            })
            .collect();
        ValueSource::Env { env: var }
    } else {
        ValueSource::Literal(value)
    }
}

/// Parses an `mcpServers` document. Names are made valid upstream names.
pub fn parse(text: &str) -> Result<Vec<UpstreamSpec>, String> {
    let file: File = serde_json::from_str(text).map_err(|e| format!("mcpServers file: {e}"))?;
    let mut out = Vec::new();
    for (name, s) in file.mcp_servers {
        let clean: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '-'
                }
            })
            .take(32)
            .collect();
        let transport = match (s.kind.as_deref(), &s.command, &s.url) {
            (Some("sse"), _, _) => TransportKind::Sse,
            (Some("http" | "streamable-http" | "streamableHttp"), _, _) => TransportKind::Http,
            (_, Some(_), _) => TransportKind::Stdio,
            (_, None, Some(u)) if u.trim_end_matches('/').ends_with("/sse") => TransportKind::Sse,
            (_, None, Some(_)) => TransportKind::Http,
            _ => return Err(format!("mcpServers.{name}: needs `command` or `url`")),
        };
        let spec = UpstreamSpec {
            oauth: None,
            name: clean,
            transport,
            command: s.command,
            args: s.args,
            env: s
                .env
                .into_iter()
                .map(|(k, v)| {
                    let src = source(&k, v);
                    (k, src)
                })
                .collect(),
            inherit_env: Vec::new(),
            cwd: s.cwd,
            url: s.url,
            headers: s
                .headers
                .into_iter()
                .map(|(k, v)| {
                    let src = source(&k, v);
                    (k, src)
                })
                .collect(),
            sharing: Sharing::Shared,
            prefix: PrefixMode::Always,
            timeout_secs: None,
            max_result_text_bytes: None,
            enabled: !s.disabled,
        };
        spec.validate()
            .map_err(|e| format!("mcpServers.{name}: {e}"))?;
        out.push(spec);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_claude_desktop_format() {
        let specs = parse(
            r#"{"mcpServers": {
                "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
                "github": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "ghp_secret", "LOG": "1"}},
                "remote": {"url": "https://example.com/sse"},
                "api": {"type": "http", "url": "https://example.com/mcp",
                        "headers": {"Authorization": "Bearer x"}}
            }}"#,
        )
        .unwrap();
        let by = |n: &str| specs.iter().find(|s| s.name == n).unwrap();
        assert_eq!(by("memory").transport, TransportKind::Stdio);
        assert_eq!(by("remote").transport, TransportKind::Sse);
        assert_eq!(by("api").transport, TransportKind::Http);
        assert_eq!(
            by("github").env["GITHUB_TOKEN"],
            ValueSource::Env {
                env: "GITHUB_TOKEN".into()
            },
            "secrets are never imported in clear text"
        );
        assert_eq!(by("github").env["LOG"], ValueSource::Literal("1".into()));
        assert_eq!(
            by("api").headers["Authorization"],
            ValueSource::Env {
                env: "AUTHORIZATION".into()
            }
        );
    }
}
