//! The `{"mcpServers": {...}}` JSON that Claude Desktop, Cline and Cursor users already have (and
//! VS Code's `{"servers": {...}}`), turned into upstream specs. `${VAR}` and `${env:VAR}` are
//! expanded from the environment; as a whole `env` or header value they stay a reference.

use std::collections::BTreeMap;

use registry::PrefixMode;
use serde::Deserialize;

use super::secret::{looks_secret, ValueSource};
use super::upstream::{Endpoint, Launch, Sharing, Transport, UpstreamSpec};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct File {
    /// VS Code's `.vscode/mcp.json` calls it `servers`.
    #[serde(alias = "servers")]
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
    if looks_secret(key) {
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

/// The variable a value names as a whole: `${env:NAME}` or `${NAME}`.
fn whole_reference(value: &str) -> Option<&str> {
    let inner = value.strip_prefix("${")?.strip_suffix('}')?;
    let name = inner.strip_prefix("env:").unwrap_or(inner);
    let valid = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then_some(name)
}

/// Every `${NAME}` / `${env:NAME}` replaced by the variable's value; an unset variable is an
/// error (an import must not store a half-made command or URL). Other `${...}` forms (VS Code's
/// `${input:...}`) are left as they are.
fn expand(value: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        let whole = &rest[start..start + len + 1];
        match whole_reference(whole) {
            Some(name) => {
                out.push_str(&env(name).ok_or_else(|| format!("variable {name} is not set"))?)
            }
            None => out.push_str(whole),
        }
        rest = &rest[start + len + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// An `env` or header value: a whole `${VAR}` stays a reference to VAR, a secret-looking key a
/// reference named after it, anything else is expanded.
fn value_source(
    key: &str,
    value: String,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ValueSource, String> {
    if let Some(name) = whole_reference(&value) {
        return Ok(ValueSource::Env {
            env: name.to_string(),
        });
    }
    match source(key, value) {
        ValueSource::Literal(v) => Ok(ValueSource::Literal(expand(&v, env)?)),
        other => Ok(other),
    }
}

/// Parses an `mcpServers` (or VS Code `servers`) document with the process environment.
pub fn parse(text: &str) -> Result<Vec<UpstreamSpec>, String> {
    parse_with(text, &|name| std::env::var(name).ok())
}

/// Parses an `mcpServers` document. Names are made valid upstream names.
pub fn parse_with(
    text: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<UpstreamSpec>, String> {
    let file: File = serde_json::from_str(text).map_err(|e| format!("mcpServers file: {e}"))?;
    let mut out = Vec::new();
    for (name, s) in file.mcp_servers {
        let at = |e: String| format!("mcpServers.{name}: {e}");
        let s = Server {
            command: s.command.map(|c| expand(&c, env)).transpose().map_err(at)?,
            args: s
                .args
                .iter()
                .map(|a| expand(a, env))
                .collect::<Result<_, _>>()
                .map_err(at)?,
            cwd: s.cwd.map(|c| expand(&c, env)).transpose().map_err(at)?,
            url: s.url.map(|u| expand(&u, env)).transpose().map_err(at)?,
            ..s
        };
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
        let env_of = |pairs: BTreeMap<String, String>| {
            pairs
                .into_iter()
                .map(|(k, v)| Ok((k.clone(), value_source(&k, v, env)?)))
                .collect::<Result<BTreeMap<_, _>, String>>()
                .map_err(at)
        };
        let remote = |url: String, headers| -> Result<Endpoint, String> {
            Ok(Endpoint {
                url,
                headers: env_of(headers)?,
                oauth: None,
            })
        };
        let sse = |u: &str| u.trim_end_matches('/').ends_with("/sse");
        let transport = match (s.kind.as_deref(), s.command, s.url) {
            (Some("sse"), _, Some(u)) => Transport::Sse(remote(u, s.headers)?),
            (Some("http" | "streamable-http" | "streamableHttp"), _, Some(u)) => {
                Transport::Http(remote(u, s.headers)?)
            }
            (Some("sse" | "http" | "streamable-http" | "streamableHttp"), _, None) => {
                return Err(format!("mcpServers.{name}: needs a `url`"))
            }
            (_, Some(command), _) => Transport::Stdio(Launch {
                command,
                args: s.args,
                env: env_of(s.env)?,
                inherit_env: Vec::new(),
                cwd: s.cwd,
            }),
            (_, None, Some(u)) if sse(&u) => Transport::Sse(remote(u, s.headers)?),
            (_, None, Some(u)) => Transport::Http(remote(u, s.headers)?),
            _ => return Err(format!("mcpServers.{name}: needs `command` or `url`")),
        };
        let spec = UpstreamSpec {
            name: clean,
            transport,
            sharing: Sharing::Shared,
            prefix: PrefixMode::Always,
            timeout_secs: None,
            max_result_text_bytes: None,
            tools: Default::default(),
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
    use crate::config::upstream::TransportKind;

    fn launch(s: &UpstreamSpec) -> &Launch {
        match &s.transport {
            Transport::Stdio(l) => l,
            other => panic!("not stdio: {other:?}"),
        }
    }

    fn endpoint(s: &UpstreamSpec) -> &Endpoint {
        s.transport.endpoint().expect("an http or sse upstream")
    }

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
        assert_eq!(by("memory").transport.kind(), TransportKind::Stdio);
        assert_eq!(by("remote").transport.kind(), TransportKind::Sse);
        assert_eq!(by("api").transport.kind(), TransportKind::Http);
        assert_eq!(
            launch(by("github")).env["GITHUB_TOKEN"],
            ValueSource::Env {
                env: "GITHUB_TOKEN".into()
            },
            "secrets are never imported in clear text"
        );
        assert_eq!(
            launch(by("github")).env["LOG"],
            ValueSource::Literal("1".into())
        );
        assert_eq!(
            endpoint(by("api")).headers["Authorization"],
            ValueSource::Env {
                env: "AUTHORIZATION".into()
            }
        );
    }

    #[test]
    fn parses_vs_code_servers_and_expands_variables() {
        let env = |name: &str| match name {
            "HOME" => Some("/home/ann".to_string()),
            "PORT" => Some("3001".to_string()),
            _ => None,
        };
        let specs = parse_with(
            r#"{"servers": {
                "files": {"type": "stdio", "command": "mcp-files",
                          "args": ["--root", "${env:HOME}/notes", "${input:pick}"],
                          "env": {"API_KEY": "${env:FILES_KEY}", "MODE": "${PORT}-x"}},
                "remote": {"type": "http", "url": "http://127.0.0.1:${PORT}/mcp",
                           "headers": {"X-Team": "${TEAM_HEADER}"}}
            }, "inputs": []}"#,
            &env,
        )
        .unwrap();
        let by = |n: &str| specs.iter().find(|s| s.name == n).unwrap();
        assert_eq!(
            launch(by("files")).args,
            ["--root", "/home/ann/notes", "${input:pick}"]
        );
        assert_eq!(
            launch(by("files")).env["API_KEY"],
            ValueSource::Env {
                env: "FILES_KEY".into()
            },
            "a whole reference stays a reference"
        );
        assert_eq!(
            launch(by("files")).env["MODE"],
            ValueSource::Literal("3001-x".into())
        );
        assert_eq!(endpoint(by("remote")).url, "http://127.0.0.1:3001/mcp");
        assert_eq!(
            endpoint(by("remote")).headers["X-Team"],
            ValueSource::Env {
                env: "TEAM_HEADER".into()
            }
        );
        let err = parse_with(
            r#"{"servers": {"x": {"command": "${env:NOPE}/bin/x"}}}"#,
            &env,
        )
        .unwrap_err();
        assert!(
            err.contains("NOPE") && err.contains("mcpServers.x"),
            "{err}"
        );
    }
}
