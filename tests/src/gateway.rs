//! The real `mcp-gateway` binary, started on port 0 with a folder of its own.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::{gateway_bin, peer_path, scratch, Scratch};

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

    /// The health of upstream `name` once `until` holds for it, or as it is after 10 s
    /// (`null` when the gateway does not list it).
    pub async fn health_once(&self, name: &str, until: impl Fn(&Value) -> bool) -> Value {
        let health = || async {
            let all = self.get_json("/admin/v1/health").await;
            all.as_array()
                .and_then(|a| a.iter().find(|h| h["name"] == name))
                .cloned()
                .unwrap_or(Value::Null)
        };
        crate::polled(health, until).await
    }

    /// Kills the process at once, as a crashed pod would die.
    pub async fn kill(mut self) {
        let _ = self.child.kill().await;
    }

    /// Stops the gateway (SIGTERM) and starts it again with the same directory, config and
    /// admin token (`env` is given again).
    pub async fn restart(self, env: &[(&str, &str)]) -> Self {
        let admin_token = self.admin_token.clone();
        let (_, dir) = self.stop_keeping_dir().await;
        Self::start_in(dir, env, admin_token).await
    }

    /// [`restart`](Self::restart) with `config` in place of the config file it ran with (an
    /// operator's edit of the file).
    pub async fn restart_with(self, config: &str, env: &[(&str, &str)]) -> Self {
        std::fs::write(self.dir.join("gateway.toml"), config).unwrap();
        self.restart(env).await
    }

    /// Stops the gateway (SIGTERM) and waits for the process to exit.
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
