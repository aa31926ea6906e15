//! Load generator: N concurrent MCP sessions doing `tools/call` against an upstream directly and
//! through the gateway, in one run, so the ratio is measured under the same machine load.
//!
//! Usage: `loadgen [--sessions N] [--seconds S] [--upstream URL --tool NAME --args JSON] [--auth]`
//! (defaults 64 sessions, 10 s). `--auth` adds a third target: a gateway with `auth.mode =
//! "required"` called with a personal access token (checked against the registry on every
//! request). Without `--upstream` it starts the conformance fixture (a Rust
//! Streamable HTTP server that answers in microseconds) and calls `test_simple_text`; with it, it
//! drives that running server. Either way it starts a gateway in front of the upstream from the
//! same target directory and prints a Markdown table.

use std::process::Stdio;
use std::time::{Duration, Instant};

use gateway_tests::{spawn_reporting_url, RawClient};
use serde_json::json;
use tokio::process::Command;

struct Run {
    calls: usize,
    elapsed: Duration,
    p50: Duration,
    p99: Duration,
}

struct Call {
    tool: String,
    args: serde_json::Value,
}

async fn drive(url: &str, call: &Call, sessions: usize, seconds: u64, token: Option<&str>) -> Run {
    let params = json!({"name": call.tool, "arguments": call.args});
    let mut clients = Vec::new();
    for _ in 0..sessions {
        clients.push(RawClient::initialize_as(url, json!({}), token).await);
    }
    // Warm-up: connections open, caches filled.
    for c in &mut clients {
        c.request("tools/call", params.clone()).await;
    }
    let started = Instant::now();
    let deadline = started + Duration::from_secs(seconds);
    let tasks: Vec<_> = clients
        .into_iter()
        .map(|mut c| {
            let params = params.clone();
            tokio::spawn(async move {
                let mut lat = Vec::new();
                while Instant::now() < deadline {
                    let t = Instant::now();
                    let r = c.request("tools/call", params.clone()).await;
                    assert!(r.get("result").is_some(), "call failed: {r}");
                    lat.push(t.elapsed());
                }
                lat
            })
        })
        .collect();
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    let elapsed = started.elapsed();
    all.sort();
    let pct = |p: f64| all[((all.len() as f64 * p) as usize).min(all.len() - 1)];
    Run {
        calls: all.len(),
        elapsed,
        p50: pct(0.50),
        p99: pct(0.99),
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str, default: u64| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let sessions = arg("--sessions", 64) as usize;
    let seconds = arg("--seconds", 10);
    let bin_dir = std::env::current_exe()?.parent().unwrap().to_path_buf();
    let named = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let mut _fixture = None;
    let (upstream, call) = match named("--upstream") {
        Some(url) => (
            url,
            Call {
                tool: named("--tool").expect("--tool with --upstream"),
                args: serde_json::from_str(&named("--args").unwrap_or_else(|| "{}".into()))?,
            },
        ),
        None => {
            let (child, url) = spawn_reporting_url(
                Command::new(bin_dir.join("conformance-fixture")).stderr(Stdio::null()),
            )
            .await;
            _fixture = Some(child);
            (
                url,
                Call {
                    tool: "test_simple_text".into(),
                    args: json!({}),
                },
            )
        }
    };
    let (_gateway, gateway, _) = start_gateway(&bin_dir, &upstream, false).await?;
    let secured = if args.iter().any(|a| a == "--auth") {
        Some(start_gateway(&bin_dir, &upstream, true).await?)
    } else {
        None
    };
    // Interleaved: direct, gateway, direct, gateway — drift on a shared machine hits both.
    let mut direct = Vec::new();
    let mut through = Vec::new();
    let mut authed = Vec::new();
    for _ in 0..2 {
        direct.push(drive(&upstream, &call, sessions, seconds / 2, None).await);
        through.push(drive(&gateway, &call, sessions, seconds / 2, None).await);
        if let Some((_, url, token)) = &secured {
            authed.push(drive(url, &call, sessions, seconds / 2, token.as_deref()).await);
        }
    }
    let sum = |runs: &[Run]| {
        let calls: usize = runs.iter().map(|r| r.calls).sum();
        let secs: f64 = runs.iter().map(|r| r.elapsed.as_secs_f64()).sum();
        let p50 = runs.iter().map(|r| r.p50).max().unwrap();
        let p99 = runs.iter().map(|r| r.p99).max().unwrap();
        (calls as f64 / secs, p50, p99)
    };
    let (d_rps, d50, d99) = sum(&direct);
    let (g_rps, g50, g99) = sum(&through);
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "tool: {}, sessions: {sessions}, seconds per target: {seconds}\n",
        call.tool
    );
    println!("| target | calls/s | p50 ms | p99 ms |\n|---|---|---|---|");
    println!("| direct | {d_rps:.0} | {:.2} | {:.2} |", ms(d50), ms(d99));
    println!("| gateway | {g_rps:.0} | {:.2} | {:.2} |", ms(g50), ms(g99));
    println!(
        "| ratio gateway/direct | {:.2} | {:.2} | {:.2} |",
        g_rps / d_rps,
        ms(g50) / ms(d50),
        ms(g99) / ms(d99)
    );
    if !authed.is_empty() {
        let (a_rps, a50, a99) = sum(&authed);
        println!(
            "| gateway + PAT auth | {a_rps:.0} | {:.2} | {:.2} |",
            ms(a50),
            ms(a99)
        );
        println!(
            "| ratio auth/gateway | {:.2} | {:.2} | {:.2} |",
            a_rps / g_rps,
            ms(a50) / ms(g50),
            ms(a99) / ms(g99)
        );
    }
    Ok(())
}

/// Starts a gateway in front of `upstream` and waits until it is up; with `auth`, authentication
/// is required and a personal access token with the admin role is made first.
async fn start_gateway(
    bin_dir: &std::path::Path,
    upstream: &str,
    auth: bool,
) -> anyhow::Result<(tokio::process::Child, String, Option<String>)> {
    let dir = gateway_tests::scratch();
    let config = dir.join("gateway.toml");
    let mut text = format!("[database]\nurl = \"sqlite://{}/gw.db?mode=rwc\"\n\n[[upstreams]]\nname = \"fx\"\ntransport = \"http\"\nurl = \"{upstream}\"\nprefix = \"never\"\n", dir.display());
    if auth {
        text.push_str("\n[auth]\nmode = \"required\"\n\n[[roles]]\nname = \"admin\"\nadmin = true\nupstreams = [\"*\"]\n");
    }
    std::fs::write(&config, text)?;
    let token = if auth {
        let out = Command::new(bin_dir.join("mcp-gateway"))
            .arg("--config")
            .arg(&config)
            .args([
                "token", "create", "--name", "load", "--owner", "load", "--role", "admin",
            ])
            .output()
            .await?;
        anyhow::ensure!(out.status.success(), "token create failed");
        Some(String::from_utf8(out.stdout)?.trim().to_string())
    } else {
        None
    };
    let (child, gateway) = spawn_reporting_url(
        Command::new(bin_dir.join("mcp-gateway"))
            .arg("--config")
            .arg(&config)
            .env("MCP_GATEWAY_LISTEN", "127.0.0.1:0")
            .env("RUST_LOG", "warn")
            .stderr(Stdio::null()),
    )
    .await;
    let http = reqwest::Client::new();
    let base = gateway.trim_end_matches("/mcp");
    for _ in 0..100 {
        let mut req = http.get(format!("{base}/admin/v1/health"));
        if let Some(t) = &token {
            req = req.bearer_auth(t);
        }
        let h: serde_json::Value = req.send().await?.json().await?;
        if h[0]["status"] == "up" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok((child, gateway, token))
}
