//! The `{"mcpServers": {...}}` JSON that Claude Desktop, Cline and Cursor users already have (and
//! VS Code's `{"servers": {...}}`, JSONC with comments and trailing commas, its `inputs` and
//! `envFile`), turned into upstream specs. `${VAR}` and `${env:VAR}` are expanded from the
//! environment; as a whole `env` or header value they stay a reference. VS Code's
//! `${input:ID}` (which it asks the user for) becomes the variable `ID` in upper case: a
//! reference where a reference can stand, else expanded from that variable.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

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
    /// VS Code: what it asks the user for, named by `${input:ID}`.
    #[serde(default)]
    inputs: Vec<Input>,
}

#[derive(Deserialize)]
struct Input {
    id: String,
    #[serde(default)]
    description: Option<String>,
    /// Asked for as a password: a secret.
    #[serde(default)]
    password: bool,
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
    /// VS Code: a file of `KEY=value` lines added to `env`.
    #[serde(default, rename = "envFile")]
    env_file: Option<String>,
}

/// A variable name made of a key: `X-Api-Key` → `X_API_KEY`.
fn var_name(key: &str) -> String {
    key.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// The variable a value names as a whole: `${env:NAME}` or `${NAME}`.
fn whole_reference(value: &str) -> Option<&str> {
    let inner = value.strip_prefix("${")?.strip_suffix('}')?;
    let name = inner.strip_prefix("env:").unwrap_or(inner);
    let valid = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then_some(name)
}

/// `value` cut at its `${...}` placeholders: each piece of text with the placeholder after it
/// (none after the last; an unclosed `${` stays text).
fn pieces(value: &str) -> Vec<(&str, Option<&str>)> {
    let mut out = Vec::new();
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        out.push((&rest[..start], Some(&rest[start..start + len + 1])));
        rest = &rest[start + len + 1..];
    }
    out.push((rest, None));
    out
}

/// The variables `value` names in `${NAME}` / `${env:NAME}` forms (others, like VS Code's
/// `${input:...}`, are not variables).
fn references(value: &str) -> Vec<&str> {
    pieces(value)
        .into_iter()
        .filter_map(|(_, p)| p.and_then(whole_reference))
        .collect()
}

/// Every `${NAME}` / `${env:NAME}` replaced by the variable's value; an unset variable is an
/// error (an import must not store a half-made command or URL). Other `${...}` forms (VS Code's
/// `${input:...}`) are left as they are.
fn expand(value: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    for (text, placeholder) in pieces(value) {
        out.push_str(text);
        let Some(p) = placeholder else { continue };
        match whole_reference(p) {
            Some(name) => {
                out.push_str(&env(name).ok_or_else(|| format!("variable {name} is not set"))?)
            }
            None => out.push_str(p),
        }
    }
    Ok(out)
}

/// `value` with its variables `refs` expanded, each said in `notes`.
fn expanded(
    what: &str,
    value: &str,
    refs: Vec<&str>,
    env: &dyn Fn(&str) -> Option<String>,
    notes: &mut Notes,
) -> Result<String, String> {
    for r in refs {
        notes.push(format!("{what}: ${{{r}}} expanded"));
    }
    expand(value, env).map_err(|e| format!("{what}: {e}"))
}

/// What an import did with a server's values that the user should know: what became a
/// reference to which variable, and what was expanded. Never a secret's value.
pub type Notes = Vec<String>;

/// A value that goes into a command line, a working directory or a URL: stored as it is, so a
/// secret-looking variable in it is refused (it would be stored in clear text); others are
/// expanded, and said so.
fn plain(
    what: &str,
    value: &str,
    env: &dyn Fn(&str) -> Option<String>,
    notes: &mut Notes,
) -> Result<String, String> {
    let refs = references(value);
    if let Some(secret) = refs.iter().find(|r| looks_secret(r)) {
        return Err(format!(
            "{what} uses ${{{secret}}}, which would be stored in clear text: pass it in `env` \
             (a stdio server) or a header (a remote one) instead"
        ));
    }
    expanded(what, value, refs, env, notes)
}

/// An `env` or header value, which can be a reference: a whole `${VAR}` stays a reference to
/// VAR; a secret-looking key's value, or a value with a secret-looking `${VAR}` inside, becomes
/// a reference to `var` (which the user sets: the note says to what); anything else is
/// expanded.
fn value_source(
    what: &str,
    key: &str,
    var: String,
    value: String,
    env: &dyn Fn(&str) -> Option<String>,
    notes: &mut Notes,
) -> Result<ValueSource, String> {
    if let Some(name) = whole_reference(&value) {
        notes.push(format!("{what}: a reference to ${name}"));
        return Ok(ValueSource::Env {
            env: name.to_string(),
        });
    }
    let refs = references(&value);
    if refs.iter().any(|r| looks_secret(r)) {
        // `Bearer ${TOKEN}`: no reference holds part of a value, so all of it moves.
        let shape: String = value.replace("${env:", "${");
        notes.push(format!(
            "{what}: moved to a reference to ${var}; set {var} to \"{shape}\" (with the \
             variables' values)"
        ));
        return Ok(ValueSource::Env { env: var });
    }
    if looks_secret(key) {
        notes.push(format!(
            "{what}: its value was not stored; a reference to ${var}, which must hold it"
        ));
        return Ok(ValueSource::Env { env: var });
    }
    Ok(ValueSource::Literal(expanded(
        what, &value, refs, env, notes,
    )?))
}

/// Parses an `mcpServers` (or VS Code `servers`) document with the process environment;
/// `base`: the folder it is in (where `envFile` paths start).
pub fn parse(text: &str, base: Option<&Path>) -> Result<Vec<UpstreamSpec>, String> {
    parse_with(text, &|name| std::env::var(name).ok(), base).map(|(specs, _)| specs)
}

/// Reads JSON or JSONC (comments, trailing commas) into a [`File`], with every `${input:ID}`
/// turned into the variable that stands for it, each said in `notes`.
fn read(text: &str, notes: &mut Notes) -> Result<File, String> {
    let options = jsonc_parser::ParseOptions::default();
    let parse = |t: &str| -> Result<File, String> {
        jsonc_parser::parse_to_serde_value::<File>(t, &options)
            .map_err(|e| format!("mcpServers file: {e}"))
    };
    let file = parse(text)?;
    if !text.contains("${input:") {
        return Ok(file);
    }
    let mut text = text.to_string();
    let mut ids: Vec<String> = pieces(&text)
        .into_iter()
        .filter_map(|(_, p)| {
            p?.strip_prefix("${input:")?
                .strip_suffix('}')
                .map(str::to_string)
        })
        .collect();
    ids.sort();
    ids.dedup();
    for id in ids {
        let input = file.inputs.iter().find(|i| i.id == id);
        let mut var = var_name(&id);
        // A password VS Code asks for is a secret wherever it goes.
        if input.is_some_and(|i| i.password) && !looks_secret(&var) {
            var.push_str("_SECRET");
        }
        let asked = input
            .and_then(|i| i.description.as_deref())
            .map(|d| format!(" ({d})"))
            .unwrap_or_default();
        notes.push(format!(
            "${{input:{id}}}{asked}: VS Code asks for it; here it is the variable {var}"
        ));
        text = text.replace(&format!("${{input:{id}}}"), &format!("${{{var}}}"));
    }
    parse(&text)
}

/// The workspace folder of a VS Code `mcp.json` in `base` (its `.vscode` folder's parent).
fn workspace(base: Option<&Path>) -> PathBuf {
    let base = base.map(Path::to_path_buf).unwrap_or_default();
    match base.file_name() {
        Some(n) if n == ".vscode" => base.parent().map(Path::to_path_buf).unwrap_or_default(),
        _ => base,
    }
}

/// The `KEY=value` lines of an env file (blank lines, `#` comments and `export ` skipped,
/// quotes around a value removed).
fn env_file(path: &Path) -> Result<BTreeMap<String, String>, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("envFile {}: {e}", path.display()))?;
    let mut out = BTreeMap::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        let v = v.trim();
        let unquoted = ['"', '\'']
            .iter()
            .find_map(|q| v.strip_prefix(*q).and_then(|v| v.strip_suffix(*q)))
            .unwrap_or(v);
        out.insert(k.trim().to_string(), unquoted.to_string());
    }
    Ok(out)
}

/// Parses an `mcpServers` document, saying what it did with each value that needed it. Names
/// are made valid upstream names. `base`: the folder the document is in.
pub fn parse_with(
    text: &str,
    env: &dyn Fn(&str) -> Option<String>,
    base: Option<&Path>,
) -> Result<(Vec<UpstreamSpec>, Notes), String> {
    let mut notes = Notes::new();
    let file = read(text, &mut notes)?;
    let mut out = Vec::new();
    for (name, mut s) in file.mcp_servers {
        let at = |e: String| format!("mcpServers.{name}: {e}");
        if let Some(f) = s.env_file.take() {
            let root = workspace(base);
            let f = f.replace("${workspaceFolder}", &root.to_string_lossy());
            let path = root.join(f);
            let vars = env_file(&path).map_err(at)?;
            notes.push(format!(
                "mcpServers.{name}.envFile: {} variable(s) from {}",
                vars.len(),
                path.display()
            ));
            for (k, v) in vars {
                // What `env` sets itself wins, as in VS Code.
                s.env.entry(k).or_insert(v);
            }
        }
        let n = &mut notes;
        let s = Server {
            command: s
                .command
                .map(|c| plain(&format!("mcpServers.{name}.command"), &c, env, n))
                .transpose()?,
            args: s
                .args
                .iter()
                .enumerate()
                .map(|(i, a)| plain(&format!("mcpServers.{name}.args[{i}]"), a, env, n))
                .collect::<Result<_, _>>()?,
            cwd: s
                .cwd
                .map(|c| plain(&format!("mcpServers.{name}.cwd"), &c, env, n))
                .transpose()?,
            url: s
                .url
                .map(|u| plain(&format!("mcpServers.{name}.url"), &u, env, n))
                .transpose()?,
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
        // An env key is the variable the server reads: the gateway passes its own of that name.
        // A header's variable is named after the server too, so two servers' do not collide.
        let sources = |field: &str, pairs: BTreeMap<String, String>, notes: &mut Notes| {
            pairs
                .into_iter()
                .map(|(k, v)| {
                    let var = match field {
                        "env" => var_name(&k),
                        _ => format!("{}_{}", var_name(&clean), var_name(&k)),
                    };
                    let what = format!("mcpServers.{name}.{field}.{k}");
                    Ok((k.clone(), value_source(&what, &k, var, v, env, notes)?))
                })
                .collect::<Result<BTreeMap<_, _>, String>>()
        };
        let remote = |url: String, headers, notes: &mut Notes| -> Result<Endpoint, String> {
            Ok(Endpoint {
                url,
                headers: sources("headers", headers, notes)?,
                oauth: None,
                user_oauth: None,
            })
        };
        let sse = |u: &str| u.trim_end_matches('/').ends_with("/sse");
        let n = &mut notes;
        let transport = match (s.kind.as_deref(), s.command, s.url) {
            (Some("sse"), _, Some(u)) => Transport::Sse(remote(u, s.headers, n)?),
            (Some("http" | "streamable-http" | "streamableHttp"), _, Some(u)) => {
                Transport::Http(remote(u, s.headers, n)?)
            }
            (Some("sse" | "http" | "streamable-http" | "streamableHttp"), _, None) => {
                return Err(format!("mcpServers.{name}: needs a `url`"))
            }
            (_, Some(command), _) => Transport::Stdio(Launch {
                command,
                args: s.args,
                env: sources("env", s.env, n)?,
                inherit_env: Vec::new(),
                cwd: s.cwd,
            }),
            (_, None, Some(u)) if sse(&u) => Transport::Sse(remote(u, s.headers, n)?),
            (_, None, Some(u)) => Transport::Http(remote(u, s.headers, n)?),
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
            pinning: Default::default(),
            enabled: !s.disabled,
        };
        spec.validate().map_err(|e| at(e.to_string()))?;
        out.push(spec);
    }
    Ok((out, notes))
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
            None,
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
                env: "API_AUTHORIZATION".into()
            },
            "a header's variable is named after its server"
        );
    }

    #[test]
    fn secrets_are_moved_to_references_or_refused_and_each_move_is_said() {
        let env = |name: &str| match name {
            "GH_TOKEN" => Some("ghp_live".to_string()),
            "HOME" => Some("/home/ann".to_string()),
            _ => None,
        };
        // In a command line a secret cannot be a reference: refused, naming where.
        let err = parse_with(
            r#"{"mcpServers": {"gh": {"command": "gh-mcp", "args": ["--token", "${GH_TOKEN}"]}}}"#,
            &env,
            None,
        )
        .unwrap_err();
        assert!(
            err.contains("args[1]") && err.contains("GH_TOKEN") && !err.contains("ghp_live"),
            "{err}"
        );
        let (specs, notes) = parse_with(
            r#"{"mcpServers": {
                "gh": {"command": "gh-mcp", "args": ["--root", "${HOME}"],
                       "env": {"GITHUB_AUTH": "token ${GH_TOKEN}", "DEBUG": "1"}},
                "api": {"url": "https://example.com/mcp",
                        "headers": {"Authorization": "Bearer ${GH_TOKEN}", "X-Key": "${env:API_KEY}"}}
            }}"#,
            &env,
            None,
        )
        .unwrap();
        let by = |n: &str| specs.iter().find(|s| s.name == n).unwrap();
        assert_eq!(
            endpoint(by("api")).headers["Authorization"],
            ValueSource::Env {
                env: "API_AUTHORIZATION".into()
            },
            "no reference to a variable nobody set: one named for the server, said so"
        );
        assert_eq!(
            launch(by("gh")).env["GITHUB_AUTH"],
            ValueSource::Env {
                env: "GITHUB_AUTH".into()
            },
            "part of a value is never expanded in clear"
        );
        assert_eq!(launch(by("gh")).args, ["--root", "/home/ann"]);
        let text = notes.join("\n");
        assert!(!text.contains("ghp_live"), "{text}");
        for said in [
            "mcpServers.api.headers.Authorization: moved to a reference to $API_AUTHORIZATION; set API_AUTHORIZATION to \"Bearer ${GH_TOKEN}\"",
            "mcpServers.api.headers.X-Key: a reference to $API_KEY",
            "mcpServers.gh.env.GITHUB_AUTH: moved to a reference to $GITHUB_AUTH",
            "mcpServers.gh.args[1]: ${HOME} expanded",
        ] {
            assert!(text.contains(said), "{said:?} not in:\n{text}");
        }
    }

    #[test]
    fn parses_vs_code_servers_and_expands_variables() {
        let env = |name: &str| match name {
            "HOME" => Some("/home/ann".to_string()),
            "PORT" => Some("3001".to_string()),
            "PICK" => Some("/srv/picked".to_string()),
            _ => None,
        };
        let (specs, _) = parse_with(
            r#"{"servers": {
                "files": {"type": "stdio", "command": "mcp-files",
                          "args": ["--root", "${env:HOME}/notes", "${input:pick}"],
                          "env": {"API_KEY": "${env:FILES_KEY}", "MODE": "${PORT}-x"}},
                "remote": {"type": "http", "url": "http://127.0.0.1:${PORT}/mcp",
                           "headers": {"X-Team": "${TEAM_HEADER}"}}
            }, "inputs": []}"#,
            &env,
            None,
        )
        .unwrap();
        let by = |n: &str| specs.iter().find(|s| s.name == n).unwrap();
        assert_eq!(
            launch(by("files")).args,
            ["--root", "/home/ann/notes", "/srv/picked"]
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
            None,
        )
        .unwrap_err();
        assert!(
            err.contains("NOPE") && err.contains("mcpServers.x"),
            "{err}"
        );
    }

    #[test]
    fn reads_vs_code_jsonc_with_inputs_and_an_env_file() {
        let scratch = tempfile::TempDir::new().unwrap();
        let dir = scratch.path();
        let vscode = dir.join(".vscode");
        std::fs::create_dir_all(&vscode).unwrap();
        std::fs::write(
            dir.join(".env"),
            "# keys\nexport LOG_LEVEL=debug\nDB_PASSWORD=\"hunter2\"\nMODE=from-file\n",
        )
        .unwrap();
        let env = |name: &str| (name == "ROOT").then(|| "/data".to_string());
        let (specs, notes) = parse_with(
            r#"{
              // VS Code's mcp.json: comments, trailing commas, inputs, envFile.
              "inputs": [
                {"type": "promptString", "id": "api-key", "description": "The API key", "password": true},
                {"type": "promptString", "id": "root"},
              ],
              "servers": {
                "db": {
                  "command": "db-mcp",
                  "args": ["--root", "${input:root}"],
                  "env": {"API": "${input:api-key}", "MODE": "explicit"},
                  "envFile": "${workspaceFolder}/.env",
                },
                "api": {"type": "http", "url": "https://example.com/mcp",
                        "headers": {"Authorization": "Bearer ${input:api-key}"}},
              },
            }"#,
            &env,
            Some(&vscode),
        )
        .unwrap();
        let by = |n: &str| specs.iter().find(|s| s.name == n).unwrap();
        let db = launch(by("db"));
        assert_eq!(db.args, ["--root", "/data"]);
        assert_eq!(
            db.env["API"],
            ValueSource::Env {
                env: "API_KEY".into()
            }
        );
        assert_eq!(
            db.env["MODE"],
            ValueSource::Literal("explicit".into()),
            "env wins over the file"
        );
        assert_eq!(db.env["LOG_LEVEL"], ValueSource::Literal("debug".into()));
        assert_eq!(
            db.env["DB_PASSWORD"],
            ValueSource::Env {
                env: "DB_PASSWORD".into()
            },
            "a secret from the file is not stored"
        );
        assert_eq!(
            endpoint(by("api")).headers["Authorization"],
            ValueSource::Env {
                env: "API_AUTHORIZATION".into()
            }
        );
        let text = notes.join("\n");
        assert!(!text.contains("hunter2"), "{text}");
        for said in [
            "${input:api-key} (The API key): VS Code asks for it; here it is the variable API_KEY",
            "${input:root}: VS Code asks for it; here it is the variable ROOT",
            "mcpServers.db.envFile: 3 variable(s) from",
        ] {
            assert!(text.contains(said), "{said:?} not in:\n{text}");
        }
        // A password input in a command line is refused like any secret.
        let err = parse_with(
            r#"{"inputs": [{"id": "pin", "password": true}],
                "servers": {"x": {"command": "x", "args": ["${input:pin}"]}}}"#,
            &env,
            None,
        )
        .unwrap_err();
        assert!(
            err.contains("PIN_SECRET") && err.contains("clear text"),
            "{err}"
        );
    }
}
