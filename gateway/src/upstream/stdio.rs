//! stdio upstreams: a child process speaking newline-delimited JSON-RPC. The child runs in its
//! own process group and the whole group is killed on close, so servers started through `npx`
//! or shell wrappers leave no grandchildren behind.

use std::collections::HashMap;
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;
use tokio::sync::mpsc;

use super::connection::{Inbound, Outbound, TransportParts};
use super::{limits, UpstreamError};
use crate::config::{env_name_matches, Launch, ENV_PREFIX, INHERITED_ENV};

/// How long a child gets to exit after SIGTERM before its group is killed.
const TERM_GRACE: Duration = Duration::from_secs(2);

pub fn spawn(
    upstream: &str,
    spec: &Launch,
    env: &HashMap<String, String>,
    max_message: usize,
) -> Result<TransportParts, UpstreamError> {
    let program = spec.command.as_str();
    let mut child = command(spec, env)?
        .spawn()
        .map_err(|e| UpstreamError::Connect(format!("cannot start {program:?}: {e}")))?;
    let pid = child.id().map(|p| Pid::from_raw(p as i32));
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr = child.stderr.take().expect("stderr is piped");
    let name = upstream.to_string();

    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Outbound>();
    let (in_tx, in_rx) = mpsc::unbounded_channel::<Inbound>();

    tokio::spawn(async move {
        while let Some(Outbound { msg }) = out_rx.recv().await {
            let mut line = serde_json::to_vec(&msg).unwrap_or_default();
            line.push(b'\n');
            if stdin.write_all(&line).await.is_err() || stdin.flush().await.is_err() {
                break;
            }
        }
    });
    tokio::spawn(read_stdout(name.clone(), stdout, in_tx, max_message));
    let err_name = name.clone();
    tokio::spawn(async move {
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            tracing::debug!(upstream = %err_name, stderr = %line, "upstream stderr");
        }
    });
    // Reap the child so it never lingers as a zombie.
    tokio::spawn(async move {
        let status = child.wait().await;
        tracing::info!(upstream = %name, ?status, "upstream process exited");
    });
    Ok(TransportParts {
        tx: out_tx,
        rx: in_rx,
        close: closer(pid),
        direct: None,
    })
}

/// The child's command: its arguments and working folder, and an environment of the allowlist
/// of the gateway's own plus the upstream's references resolved.
fn command(spec: &Launch, env: &HashMap<String, String>) -> Result<Command, UpstreamError> {
    let mut cmd = Command::new(spec.command.as_str());
    cmd.args(&spec.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    // A child sees only an allowlist of the gateway's environment: the rest holds the gateway's
    // own settings and the secrets other upstreams' references point at.
    cmd.env_clear();
    for (key, value) in env.iter().filter(|(k, _)| {
        !k.starts_with(ENV_PREFIX)
            && (env_name_matches(INHERITED_ENV, k) || env_name_matches(&spec.inherit_env, k))
    }) {
        cmd.env(key, value);
    }
    for (key, value) in &spec.env {
        let v = value
            .resolve(env)
            .map_err(|e| UpstreamError::Config(format!("env {key}: {e}")))?;
        cmd.env(key, v.expose());
    }
    if let Some(cwd) = &spec.cwd {
        cmd.current_dir(cwd);
    }
    Ok(cmd)
}

/// Reads the child's messages, a line each, until it ends: an oversized answer becomes its
/// call's error, a line that is not JSON is skipped.
async fn read_stdout(
    name: String,
    stdout: tokio::process::ChildStdout,
    in_tx: mpsc::UnboundedSender<Inbound>,
    max_message: usize,
) {
    let mut stdout = BufReader::new(stdout);
    loop {
        let line = match limits::read_line(&mut stdout, max_message).await {
            Ok(limits::Line::Text(line)) => line,
            Ok(limits::Line::TooLong { head, tail }) => {
                let Some(id) = limits::id_in(&head, &tail) else {
                    // Whose answer it was cannot be told: restart rather than leave a call
                    // waiting for its timeout.
                    tracing::warn!(upstream = %name, "oversized message of no request; restarting");
                    break;
                };
                tracing::warn!(upstream = %name, id, "oversized answer refused");
                let msg = crate::protocol::jsonrpc::error(
                    serde_json::Value::from(id),
                    crate::protocol::jsonrpc::INTERNAL_ERROR,
                    limits::too_large(max_message),
                );
                if in_tx.send(Inbound { msg, related: None }).is_err() {
                    break;
                }
                continue;
            }
            Ok(limits::Line::End) | Err(_) => break,
        };
        if line.trim_ascii().is_empty() {
            continue;
        }
        match serde_json::from_slice(&line) {
            Ok(msg) => {
                if in_tx.send(Inbound { msg, related: None }).is_err() {
                    break;
                }
            }
            Err(_) => tracing::warn!(upstream = %name, "non-JSON line on stdout ignored"),
        }
    }
}

/// Ends the child's process group: SIGTERM, then SIGKILL after [`TERM_GRACE`].
fn closer(pid: Option<Pid>) -> Box<dyn FnOnce() + Send> {
    Box::new(move || {
        if let Some(pid) = pid {
            let _ = killpg(pid, Signal::SIGTERM);
            let kill = move || {
                let _ = killpg(pid, Signal::SIGKILL);
            };
            match tokio::runtime::Handle::try_current() {
                Ok(rt) => {
                    rt.spawn(async move {
                        tokio::time::sleep(TERM_GRACE).await;
                        kill();
                    });
                }
                Err(_) => kill(),
            }
        }
    })
}
