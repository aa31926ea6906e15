//! One measured run: N sessions calling one tool in a loop against one MCP endpoint. Every answer
//! is checked (HTTP 200, a JSON-RPC result that is not `isError`, the expected text); a failed
//! call is counted, not fatal, so a struggling target shows its errors instead of ending the run.

use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::{json, Value};

/// What every session calls, and what a good answer contains.
pub struct Call {
    pub tool: String,
    pub args: Value,
    pub expect: Option<String>,
    /// The host speaks 2026-07-28 (no session: each request carries its envelope) instead of
    /// 2025-06-18.
    pub modern: bool,
}

/// The outcome of one run against one target.
pub struct Run {
    pub calls: usize,
    pub errors: usize,
    pub elapsed: Duration,
    pub latencies: Vec<Duration>,
    /// The first error seen, to show what went wrong.
    pub first_error: Option<String>,
}

/// A minimal Streamable HTTP session that reports failures instead of panicking.
struct Session {
    raw: gateway_tests::RawClient,
    next: u64,
}

impl Session {
    async fn open(url: &str, token: Option<&str>, modern: bool) -> Result<Self, String> {
        let mut raw = gateway_tests::RawClient::new(url);
        raw.token = token.map(str::to_string);
        // The revision every peer measured (ContextForge 1.1.0 among them) speaks.
        raw.version = "2025-06-18";
        let mut s = Self { raw, next: 1 };
        if modern {
            return Ok(s);
        }
        let resp = s
            .post(
                &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "loadgen", "version": "0"}}}),
            )
            .await?;
        s.raw.session = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        read_answer(resp, 0).await?;
        s.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await?;
        Ok(s)
    }

    async fn post(&self, msg: &Value) -> Result<reqwest::Response, String> {
        self.post_with(msg, &[]).await
    }

    async fn post_with(
        &self,
        msg: &Value,
        headers: &[(&str, &str)],
    ) -> Result<reqwest::Response, String> {
        let body = serde_json::to_vec(msg).map_err(|e| e.to_string())?;
        let mut req = self.raw.post_builder(body);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let resp = req.send().await.map_err(|e| format!("transport: {e}"))?;
        if !resp.status().is_success() {
            return Err(format!("HTTP {}", resp.status()));
        }
        Ok(resp)
    }

    async fn call(&mut self, call: &Call) -> Result<(), String> {
        let id = self.next;
        self.next += 1;
        let mut params = json!({"name": call.tool, "arguments": call.args});
        // A 2026-07-28 request carries its envelope and says in headers what it is.
        let modern = [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", call.tool.as_str()),
        ];
        let headers: &[(&str, &str)] = if call.modern {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}});
            &modern
        } else {
            &[]
        };
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
        let answer = read_answer(self.post_with(&msg, headers).await?, id).await?;
        let result = answer
            .get("result")
            .ok_or_else(|| format!("no result: {answer}"))?;
        if result.get("isError") == Some(&Value::Bool(true)) {
            return Err(format!("tool error: {result}"));
        }
        if let Some(text) = &call.expect {
            if !result.to_string().contains(text.as_str()) {
                return Err(format!("expected text missing: {result}"));
            }
        }
        Ok(())
    }
}

/// The JSON-RPC answer with `id`, from a JSON body or an SSE stream.
async fn read_answer(resp: reqwest::Response, id: u64) -> Result<Value, String> {
    let sse = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|c| c.starts_with("text/event-stream"));
    if !sse {
        return resp.json().await.map_err(|e| format!("body: {e}"));
    }
    let mut events = sse_stream::SseStream::from_bytes_stream(resp.bytes_stream());
    while let Some(ev) = events.next().await {
        let ev = ev.map_err(|e| format!("stream: {e}"))?;
        let Some(data) = ev.data.filter(|d| !d.is_empty()) else {
            continue;
        };
        let msg: Value = serde_json::from_str(&data).map_err(|e| format!("event: {e}"))?;
        if msg.get("id") == Some(&json!(id)) && msg.get("method").is_none() {
            return Ok(msg);
        }
    }
    Err("stream ended without an answer".into())
}

/// Opens `sessions` sessions, warms each up with one call, then has all of them call for
/// `seconds`.
pub async fn drive(
    url: &str,
    token: Option<&str>,
    call: &std::sync::Arc<Call>,
    sessions: usize,
    seconds: f64,
) -> anyhow::Result<Run> {
    let mut open = Vec::new();
    for _ in 0..sessions {
        let mut s = Session::open(url, token, call.modern)
            .await
            .map_err(|e| anyhow::anyhow!("{url}: opening a session: {e}"))?;
        s.call(call)
            .await
            .map_err(|e| anyhow::anyhow!("{url}: warm-up call: {e}"))?;
        open.push(s);
    }
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(seconds);
    let tasks: Vec<_> = open
        .into_iter()
        .map(|mut s| {
            let call = call.clone();
            tokio::spawn(async move {
                let (mut lat, mut errors, mut first) = (Vec::new(), 0, None);
                while Instant::now() < deadline {
                    let t = Instant::now();
                    match s.call(&call).await {
                        Ok(()) => lat.push(t.elapsed()),
                        Err(e) => {
                            errors += 1;
                            first.get_or_insert(e);
                        }
                    }
                }
                (lat, errors, first)
            })
        })
        .collect();
    let mut run = Run {
        calls: 0,
        errors: 0,
        elapsed: Duration::ZERO,
        latencies: Vec::new(),
        first_error: None,
    };
    for t in tasks {
        let (lat, errors, first) = t.await?;
        run.latencies.extend(lat);
        run.errors += errors;
        if run.first_error.is_none() {
            run.first_error = first;
        }
    }
    run.elapsed = started.elapsed();
    run.calls = run.latencies.len();
    Ok(run)
}
