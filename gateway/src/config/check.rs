//! `mcp-gateway check-config`: every problem of a configuration file at once, where start-up
//! would stop at the first. Unknown keys are named with the key that was probably meant (from
//! the generated schema, so the list of keys cannot drift); each section and each upstream is
//! read on its own, so one mistake does not hide the next; and what would only fail later is
//! warned about: stdio commands that are not on `PATH`, secret references whose variable is
//! unset or whose file is missing.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::{json_schema, Config, ConfigError, RawConfig, Transport, UpstreamSpec, EXAMPLE_CONFIG};

/// What is wrong (the file cannot be used) and what is suspicious (it can, but something will
/// not work).
#[derive(Debug, Default)]
pub struct Report {
    pub errors: Vec<String>,
    pub warnings: Vec<String>,
    /// The configuration, when it loads.
    pub config: Option<Config>,
}

/// Checks the file at `path` (the bundled example when `None`) with the variables of `env`.
pub fn check(path: Option<&Path>, env: HashMap<String, String>) -> Report {
    let mut report = Report::default();
    let text = match path {
        Some(p) => match std::fs::read_to_string(p) {
            Ok(t) => t,
            Err(e) => {
                report
                    .errors
                    .push(format!("cannot read {}: {e}", p.display()));
                return report;
            }
        },
        None => EXAMPLE_CONFIG.to_string(),
    };
    let parsed = if path.is_some_and(|p| p.extension().is_some_and(|e| e == "json")) {
        serde_json::from_str::<Value>(&text).map_err(|e| e.to_string())
    } else {
        toml::from_str::<Value>(&text).map_err(|e| e.to_string())
    };
    let mut doc = match parsed {
        Ok(v) => v,
        Err(e) => {
            report.errors.push(format!("syntax: {e}"));
            return report;
        }
    };
    let schema = json_schema();
    unknown_keys(&mut doc, &schema, &[&schema], "", &mut report.errors);
    sections(&mut doc, &mut report.errors);
    references(&doc, "", &env, &mut report.warnings);
    if let Some(ups) = doc.get("upstreams") {
        // Each one read fine above.
        let ups: Vec<UpstreamSpec> = serde_json::from_value(ups.clone()).unwrap_or_default();
        commands(&ups, &env, &mut report.warnings);
        unpinned_secrets(&ups, &mut report.warnings);
    }
    let raw: RawConfig = match serde_json::from_value(doc) {
        Ok(r) => r,
        // Every section read on its own above; what is left is reported as it comes.
        Err(e) => {
            report.errors.push(e.to_string());
            return report;
        }
    };
    match Config::from_raw(raw, path.and_then(Path::parent), env) {
        Ok(c) if report.errors.is_empty() => {
            routing_model(&c, &mut report.warnings);
            report.config = Some(c)
        }
        Ok(_) => {}
        Err(e) => report
            .errors
            .extend(e.each().into_iter().map(|e: ConfigError| e.to_string())),
    }
    report
}

/// The schema `s` with its `$ref` followed.
fn resolve<'a>(root: &'a Value, s: &'a Value) -> &'a Value {
    match s.get("$ref").and_then(Value::as_str) {
        Some(r) => r
            .strip_prefix("#/$defs/")
            .and_then(|name| root["$defs"].get(name))
            .unwrap_or(s),
        None => s,
    }
}

/// The object and array schemas `s` may be (through `$ref`, `anyOf`, `oneOf`, `allOf`).
fn alternatives<'a>(root: &'a Value, s: &'a Value, out: &mut Vec<&'a Value>) {
    let s = resolve(root, s);
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(list) = s.get(key).and_then(Value::as_array) {
            for a in list {
                alternatives(root, a, out);
            }
        }
    }
    if ["properties", "additionalProperties", "items"]
        .iter()
        .any(|k| s.get(k).is_some())
    {
        out.push(s);
    }
}

/// Reports (and removes) keys no schema of their place names, with the likeliest meant key.
fn unknown_keys(
    doc: &mut Value,
    root: &Value,
    schemas: &[&Value],
    at: &str,
    errors: &mut Vec<String>,
) {
    let mut objects = Vec::new();
    for s in schemas {
        alternatives(root, s, &mut objects);
    }
    match doc {
        Value::Object(map) => {
            let with_props: Vec<&Value> = objects
                .iter()
                .copied()
                .filter(|o| {
                    o.get("properties").is_some() || o.get("additionalProperties").is_some()
                })
                .collect();
            if with_props.is_empty() {
                return;
            }
            let known: Vec<&str> = with_props
                .iter()
                .filter_map(|o| o.get("properties").and_then(Value::as_object))
                .flat_map(|p| p.keys().map(String::as_str))
                .collect();
            let closed = with_props
                .iter()
                .all(|o| o.get("additionalProperties") == Some(&Value::Bool(false)));
            let keys: Vec<String> = map.keys().cloned().collect();
            for k in keys {
                let path = if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                };
                let inner: Vec<&Value> = with_props
                    .iter()
                    .filter_map(|o| {
                        o.get("properties")
                            .and_then(|p| p.get(&k))
                            .or_else(|| o.get("additionalProperties").filter(|a| a.is_object()))
                    })
                    .collect();
                if inner.is_empty() && closed {
                    errors.push(format!("{path}: unknown key{}", meant(&k, &known)));
                    map.remove(&k);
                    continue;
                }
                if let Some(v) = map.get_mut(&k) {
                    unknown_keys(v, root, &inner, &path, errors);
                }
            }
        }
        Value::Array(items) => {
            let item_schemas: Vec<&Value> = objects.iter().filter_map(|o| o.get("items")).collect();
            if item_schemas.is_empty() {
                return;
            }
            for (i, v) in items.iter_mut().enumerate() {
                let name = v.get("name").and_then(Value::as_str).map(str::to_string);
                let path = format!("{at}[{}]", name.unwrap_or_else(|| i.to_string()));
                unknown_keys(v, root, &item_schemas, &path, errors);
            }
        }
        _ => {}
    }
}

/// ` (did you mean "x"?)` for the known key closest to `key`, if one is close.
fn meant(key: &str, known: &[&str]) -> String {
    let best = known
        .iter()
        .map(|k| (strsim::damerau_levenshtein(key, k), *k))
        .min_by_key(|(d, k)| (*d, k.len()));
    match best {
        Some((d, k)) if d <= 2.max(key.len() / 3) => format!(" (did you mean {k:?}?)"),
        _ => format!(" (known here: {})", known.join(", ")),
    }
}

/// Reads each section, and each upstream, on its own: a wrong value is reported with its path
/// and removed, so that the others are still checked.
fn sections(doc: &mut Value, errors: &mut Vec<String>) {
    let Some(map) = doc.as_object_mut() else {
        errors.push("the configuration must be a table".into());
        return;
    };
    if let Some(Value::Array(ups)) = map.get_mut("upstreams") {
        ups.retain(|u| {
            let name = u
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_string();
            match serde_path_to_error::deserialize::<_, UpstreamSpec>(u.clone()) {
                Ok(_) => true,
                Err(e) => {
                    let inner = e.path().to_string();
                    let at = if inner == "." {
                        String::new()
                    } else {
                        format!(".{inner}")
                    };
                    errors.push(format!("upstreams[{name}]{at}: {}", e.into_inner()));
                    false
                }
            }
        });
    }
    let keys: Vec<String> = map.keys().filter(|k| *k != "upstreams").cloned().collect();
    for k in keys {
        let alone = Value::Object(Map::from_iter([(k.clone(), map[&k].clone())]));
        if let Err(e) = serde_path_to_error::deserialize::<_, RawConfig>(alone) {
            let at = e.path().to_string();
            errors.push(format!("{at}: {}", e.into_inner()));
            map.remove(&k);
        }
    }
}

/// Warns about secret references (`{ env = "VAR" }`, `{ file = "/path" }`) that will not
/// resolve.
fn references(v: &Value, at: &str, env: &HashMap<String, String>, warnings: &mut Vec<String>) {
    match v {
        Value::Object(m) if m.len() == 1 && m.get("env").is_some_and(Value::is_string) => {
            let var = m["env"].as_str().unwrap_or_default();
            if !env.contains_key(var) {
                warnings.push(format!("{at}: the variable {var} is not set"));
            }
        }
        Value::Object(m) if m.len() == 1 && m.get("file").is_some_and(Value::is_string) => {
            let file = m["file"].as_str().unwrap_or_default();
            if !Path::new(file).is_file() {
                warnings.push(format!("{at}: the file {file} does not exist"));
            }
        }
        Value::Object(m) => {
            for (k, v) in m {
                let path = if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                };
                references(v, &path, env, warnings);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                let name = v.get("name").and_then(Value::as_str).map(str::to_string);
                references(
                    v,
                    &format!("{at}[{}]", name.unwrap_or_else(|| i.to_string())),
                    env,
                    warnings,
                );
            }
        }
        _ => {}
    }
}

/// Warns when routing is on and its model's files are not all there: the gateway would start
/// with searches that match words only.
fn routing_model(config: &Config, warnings: &mut Vec<String>) {
    if !config.routing.enabled {
        return;
    }
    let missing = config.routing.model.missing();
    if !missing.is_empty() {
        let names: Vec<String> = missing.iter().map(|p| p.display().to_string()).collect();
        warnings.push(format!(
            "routing.model_dir: {} not found; tool search would match words only (run \
             scripts/fetch-model, or set routing.model_dir)",
            names.join(", ")
        ));
    }
}

/// Warns about enabled stdio upstreams whose command is not found (on the `PATH` the gateway
/// passes on, for a bare name).
fn commands(upstreams: &[UpstreamSpec], env: &HashMap<String, String>, warnings: &mut Vec<String>) {
    let path = env.get("PATH").cloned().unwrap_or_default();
    for u in upstreams.iter().filter(|u| u.enabled) {
        let Transport::Stdio(launch) = &u.transport else {
            continue;
        };
        let cmd = Path::new(&launch.command);
        let found = if cmd.components().count() > 1 {
            let base = launch.cwd.as_deref().map(Path::new);
            match base {
                Some(b) if cmd.is_relative() => b.join(cmd).is_file(),
                _ => cmd.is_file(),
            }
        } else {
            std::env::split_paths(&path).any(|dir| dir.join(cmd).is_file())
        };
        if !found {
            warnings.push(format!(
                "upstreams[{}].command: {:?} is not found{}; the upstream will be down",
                u.name,
                launch.command,
                if cmd.components().count() > 1 {
                    ""
                } else {
                    " on PATH"
                }
            ));
        }
    }
}

/// Client secrets that go to whichever authorization server an upstream's metadata names: a
/// compromised upstream could name its own and collect them.
fn unpinned_secrets(upstreams: &[UpstreamSpec], warnings: &mut Vec<String>) {
    for u in upstreams {
        let Some(e) = u.transport.endpoint() else {
            continue;
        };
        if let Some(o) = e.oauth.as_ref() {
            if o.secret_unpinned() {
                warnings.push(format!(
                    "upstreams[{}].oauth: the client_secret goes to the authorization server the \
                     upstream's metadata names; set oauth.issuer (or token_url) to pin it",
                    u.name
                ));
            }
        }
        if let Some(o) = e.user_oauth.as_ref() {
            if o.secret_unpinned() {
                warnings.push(format!(
                    "upstreams[{}].user_oauth: the client_secret goes to the authorization server \
                     the upstream's metadata names; set user_oauth.issuer to pin it",
                    u.name
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_text(text: &str, env: &[(&str, &str)]) -> Report {
        let dir = tempfile::TempDir::new().unwrap();
        let path = dir.path().join("gateway.toml");
        std::fs::write(&path, text).unwrap();
        let env = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        check(Some(&path), env)
    }

    #[test]
    fn every_error_at_once_with_the_key_that_was_meant() {
        let r = check_text(
            r#"
[server]
listn = "127.0.0.1:1"
max_body_bytes = "big"

[routing]
enabld = false

[[upstreams]]
name = "a"
transport = "stdio"
comand = "x"

[[upstreams]]
name = "b"
transport = "http"
url = "http://127.0.0.1:9/mcp"
timeout_secs = 0

[[upstreams]]
name = "c"
transport = "carrier-pigeon"
"#,
            &[("PATH", "/usr/bin")],
        );
        let all = r.errors.join("\n");
        assert!(
            all.contains("server.listn: unknown key (did you mean \"listen\"?)"),
            "{all}"
        );
        assert!(
            all.contains("routing.enabld: unknown key (did you mean \"enabled\"?)"),
            "{all}"
        );
        assert!(
            all.contains("upstreams[a].comand: unknown key (did you mean \"command\"?)"),
            "{all}"
        );
        assert!(all.contains("server.max_body_bytes: invalid type"), "{all}");
        assert!(
            all.contains("upstreams[c].transport: unknown variant"),
            "{all}"
        );
        assert!(all.contains("timeout_secs"), "{all}");
        assert!(r.config.is_none());
    }

    #[test]
    fn unset_references_and_missing_commands_are_warned_about() {
        let r = check_text(
            r#"
[[upstreams]]
name = "gh"
transport = "http"
url = "http://127.0.0.1:9/mcp"
headers = { Authorization = { env = "GH_TOKEN" } }

[[upstreams]]
name = "local"
transport = "stdio"
command = "surely-not-a-command-here"
env = { KEY = { file = "/nonexistent/key" } }

[[upstreams]]
name = "sh"
transport = "stdio"
command = "sh"
"#,
            &[("PATH", "/usr/bin:/bin")],
        );
        assert!(r.errors.is_empty(), "{:?}", r.errors);
        let all = r.warnings.join("\n");
        assert!(
            all.contains("upstreams[gh].headers.Authorization: the variable GH_TOKEN is not set"),
            "{all}"
        );
        assert!(
            all.contains("upstreams[local].env.KEY: the file /nonexistent/key does not exist"),
            "{all}"
        );
        assert!(
            all.contains(
                "upstreams[local].command: \"surely-not-a-command-here\" is not found on PATH"
            ),
            "{all}"
        );
        assert!(!all.contains("upstreams[sh]"), "{all}");
        assert!(r.config.is_some());
    }

    #[test]
    fn client_secrets_an_upstream_could_send_elsewhere_are_warned_about() {
        let upstream = |name: &str, oauth: &str| {
            format!(
                "[[upstreams]]\nname = \"{name}\"\ntransport = \"http\"\n\
                 url = \"http://127.0.0.1:9/mcp\"\n{oauth}\n"
            )
        };
        let secret = "client_id = \"gw\"\nclient_secret = { env = \"S\" }";
        let text = [
            upstream("open", &format!("[upstreams.oauth]\n{secret}")),
            upstream(
                "pinned",
                &format!("[upstreams.oauth]\n{secret}\nissuer = \"https://as.example\""),
            ),
            upstream(
                "named",
                &format!("[upstreams.oauth]\n{secret}\ntoken_url = \"https://as.example/t\""),
            ),
            upstream(
                "users",
                &format!("sharing = \"per_session\"\n[upstreams.user_oauth]\n{secret}"),
            ),
        ]
        .concat();
        let r = check_text(&text, &[("S", "s")]);
        let all = r.warnings.join("\n");
        assert!(
            all.contains("upstreams[open].oauth: the client_secret")
                && all.contains("oauth.issuer"),
            "{all}"
        );
        assert!(
            all.contains("upstreams[users].user_oauth: the client_secret"),
            "{all}"
        );
        assert!(!all.contains("upstreams[pinned]"), "{all}");
        assert!(!all.contains("upstreams[named]"), "{all}");
    }
}
