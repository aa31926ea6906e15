//! Load generator: N concurrent MCP sessions doing `tools/call` against an upstream directly,
//! through this gateway, and through any other gateway given, in one run, so the ratios are
//! measured under the same machine load.
//!
//! Usage: `loadgen [--sessions N] [--seconds S] [--upstream URL --tool NAME --args JSON
//! [--expect TEXT] [--upstream-pid PID]] [--auth] [--modern] [--gateway-bin PATH]... [--peer JSON]...`
//! (defaults 64 sessions, 10 s per target). Without `--upstream` it starts the conformance
//! fixture (a Rust Streamable HTTP server that answers in microseconds) and calls
//! `test_simple_text`. It starts a gateway in front of the upstream from the same target
//! directory; `--gateway-bin` starts another build the same way (an A/B of two commits in one
//! run); `--auth` adds one with `auth.mode = "required"`, called with a personal access token.
//! `--modern`: the hosts speak 2026-07-28 (every request carries its envelope, no session)
//! instead of 2025-06-18.
//! `--peer
//! '{"name":…,"url":…,"tool":…,"token":…,"pid":…}'` adds another MCP endpoint in front of the same
//! upstream (`tool` when it names the tool differently, `pid` to charge it CPU and memory).
//! Targets are interleaved (two rounds of S/2 each) so drift hits all of them; the table gives
//! calls/s, p50, p99, failed calls, CPU and minor page faults per call and memory (PSS) of each
//! target's own processes.

mod drive;
mod procstat;
mod targets;

use std::sync::Arc;
use std::time::Duration;

use drive::{Call, Run};
use serde_json::{json, Value};

/// One endpoint under load and what it accumulated over the rounds.
struct Target {
    name: String,
    url: String,
    token: Option<String>,
    call: Arc<Call>,
    /// The process charged for this target's CPU and memory.
    pid: Option<u32>,
    runs: Vec<Run>,
    used: procstat::Usage,
    memory: u64,
}

impl Target {
    fn new(
        name: &str,
        url: &str,
        token: Option<String>,
        call: &Arc<Call>,
        pid: Option<u32>,
    ) -> Self {
        Self {
            name: name.into(),
            url: url.into(),
            token,
            call: call.clone(),
            pid,
            runs: Vec::new(),
            used: procstat::Usage::default(),
            memory: 0,
        }
    }

    /// calls/s, p50, p99, failed calls.
    fn summary(&self) -> (f64, Duration, Duration, usize) {
        let calls: usize = self.runs.iter().map(|r| r.calls).sum();
        let secs: f64 = self.runs.iter().map(|r| r.elapsed.as_secs_f64()).sum();
        let mut all: Vec<Duration> = self.runs.iter().flat_map(|r| r.latencies.clone()).collect();
        all.sort();
        let pct = |p: f64| {
            all.get(((all.len() as f64 * p) as usize).min(all.len().saturating_sub(1)))
                .copied()
                .unwrap_or_default()
        };
        let errors = self.runs.iter().map(|r| r.errors).sum();
        (
            calls as f64 / secs.max(f64::EPSILON),
            pct(0.50),
            pct(0.99),
            errors,
        )
    }
}

struct Args(Vec<String>);

impl Args {
    fn named(&self, name: &str) -> Option<String> {
        let i = self.0.iter().position(|a| a == name)?;
        self.0.get(i + 1).cloned()
    }

    fn all(&self, name: &str) -> Vec<String> {
        self.0
            .windows(2)
            .filter(|w| w[0] == name)
            .map(|w| w[1].clone())
            .collect()
    }

    fn number(&self, name: &str, default: u64) -> u64 {
        self.named(name)
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    }

    fn flag(&self, name: &str) -> bool {
        self.0.iter().any(|a| a == name)
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args(std::env::args().collect());
    let sessions = args.number("--sessions", 64) as usize;
    let seconds = args.number("--seconds", 10) as f64;
    // The host's revision: 2025-06-18 sessions unless `--modern` (2026-07-28, no session).
    let modern = args.flag("--modern");
    let bin_dir = std::env::current_exe()?.parent().unwrap().to_path_buf();

    let mut _fixture = None;
    let (upstream, upstream_pid, call) = match args.named("--upstream") {
        Some(url) => {
            let call = Call {
                tool: args
                    .named("--tool")
                    .ok_or_else(|| anyhow::anyhow!("--tool with --upstream"))?,
                args: serde_json::from_str(&args.named("--args").unwrap_or_else(|| "{}".into()))?,
                expect: args.named("--expect"),
                modern,
            };
            let pid = args.named("--upstream-pid").and_then(|p| p.parse().ok());
            (url, pid, call)
        }
        None => {
            let (child, url) = targets::fixture(&bin_dir).await;
            let pid = child.id();
            _fixture = Some(child);
            let call = Call {
                tool: "test_simple_text".into(),
                args: json!({}),
                expect: Some("This is a simple text response for testing.".into()),
                modern,
            };
            (url, pid, call)
        }
    };
    let call = Arc::new(call);

    let mut keep = Vec::new();
    let mut list = vec![Target::new("direct", &upstream, None, &call, upstream_pid)];
    let gateway_bin = bin_dir.join("mcp-gateway");
    let (child, url, _) = targets::gateway(&gateway_bin, &upstream, false).await?;
    list.push(Target::new("gateway", &url, None, &call, child.0.id()));
    keep.push(child);
    // Other builds of the gateway (say, of the previous commit), measured in the same run.
    for (i, bin) in args.all("--gateway-bin").into_iter().enumerate() {
        let (child, url, _) =
            targets::gateway(std::path::Path::new(&bin), &upstream, false).await?;
        let name = format!("gateway-bin {}", i + 1);
        list.push(Target::new(&name, &url, None, &call, child.0.id()));
        keep.push(child);
    }
    if args.flag("--auth") {
        let (child, url, token) = targets::gateway(&gateway_bin, &upstream, true).await?;
        list.push(Target::new(
            "gateway + PAT",
            &url,
            token,
            &call,
            child.0.id(),
        ));
        keep.push(child);
    }
    for peer in args.all("--peer") {
        list.push(peer_target(&peer, &call)?);
    }

    // Interleaved rounds: drift on a shared machine hits every target alike.
    for _ in 0..2 {
        for t in &mut list {
            let before = t.pid.map(procstat::usage);
            let run =
                drive::drive(&t.url, t.token.as_deref(), &t.call, sessions, seconds / 2.0).await?;
            if let (Some(pid), Some(before)) = (t.pid, before) {
                let used = procstat::usage(pid).since(before);
                t.used.cpu += used.cpu;
                t.used.faults += used.faults;
                t.memory = t.memory.max(procstat::memory(pid));
            }
            if let Some(e) = &run.first_error {
                eprintln!("{}: {} failed calls, first: {e}", t.name, run.errors);
            }
            t.runs.push(run);
        }
    }
    print_table(&list, &call, sessions, seconds);
    drop(keep);
    Ok(())
}

/// A target from `--peer '{"name":…,"url":…,"tool":…,"token":…,"pid":…}'`.
fn peer_target(spec: &str, call: &Arc<Call>) -> anyhow::Result<Target> {
    let v: Value = serde_json::from_str(spec)?;
    let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    let name = text("name").ok_or_else(|| anyhow::anyhow!("--peer needs a name"))?;
    let url = text("url").ok_or_else(|| anyhow::anyhow!("--peer needs a url"))?;
    let call = match text("tool") {
        Some(tool) => Arc::new(Call {
            tool,
            args: call.args.clone(),
            expect: call.expect.clone(),
            modern: call.modern,
        }),
        None => call.clone(),
    };
    let pid = v.get("pid").and_then(Value::as_u64).map(|p| p as u32);
    Ok(Target::new(&name, &url, text("token"), &call, pid))
}

fn print_table(list: &[Target], call: &Call, sessions: usize, seconds: f64) {
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "tool: {}, sessions: {sessions}, seconds per target: {seconds}\n",
        call.tool
    );
    println!("| target | calls/s | p50 ms | p99 ms | failed calls | CPU ms per call | page faults per call | memory MB (PSS) | calls/s vs direct | p50 vs direct | p99 vs direct |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let (d_rps, d50, d99, _) = list[0].summary();
    for t in list {
        let (rps, p50, p99, errors) = t.summary();
        let calls: usize = t.runs.iter().map(|r| r.calls + r.errors).sum();
        let (cpu, faults) = match t.pid {
            Some(_) if calls > 0 => (
                format!("{:.3}", ms(t.used.cpu) / calls as f64),
                format!("{:.2}", t.used.faults as f64 / calls as f64),
            ),
            _ => ("–".into(), "–".into()),
        };
        let memory = match t.pid {
            Some(_) => format!("{:.0}", t.memory as f64 / 1e6),
            None => "–".into(),
        };
        println!(
            "| {} | {rps:.0} | {:.2} | {:.2} | {errors} | {cpu} | {faults} | {memory} | {:.3} | {:.2} | {:.2} |",
            t.name,
            ms(p50),
            ms(p99),
            rps / d_rps,
            ms(p50) / ms(d50),
            ms(p99) / ms(d99),
        );
    }
}
