//! Prometheus metrics, served at `/metrics`. Counters and histograms are recorded where things
//! happen; gauges that mirror state (upstream health, sessions) are read at scrape time, so they
//! can never drift from the truth.

use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounterVec, IntGauge, IntGaugeVec, Opts, Registry,
    TextEncoder,
};

/// Latency buckets from 1 ms to 60 s: tool calls span that range.
const BUCKETS: [f64; 14] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 15.0, 60.0,
];

pub struct Metrics {
    registry: Registry,
    pub http_requests: IntCounterVec,
    /// HTTP request time by route (the pattern), from the first byte of the request to the
    /// response head (a stream's body may go on much longer).
    pub http_duration: HistogramVec,
    /// `tools/call` by upstream, the upstream's tool name and outcome.
    pub tool_calls_by_name: IntCounterVec,
    pub mcp_requests: IntCounterVec,
    pub tool_calls: HistogramVec,
    /// The last hour of `tool_calls`, per upstream and minute (the console's charts).
    pub history: crate::call_history::CallHistory,
    /// Requests refused by authentication, by reason.
    pub auth_refused: IntCounterVec,
    /// Audit entries written, and failed write attempts (each retried).
    pub audit_written: prometheus::IntCounter,
    pub audit_write_errors: prometheus::IntCounter,
    /// Audit entries waiting to be written.
    pub audit_queue: IntGauge,
    /// 1 while the audit log takes rows, 0 while its writes fail.
    pub audit_writable: IntGauge,
    /// Calls refused because the audit log could not take their rows.
    pub audit_refused: prometheus::IntCounter,
    upstream_up: IntGaugeVec,
    upstream_calls_in_flight: IntGaugeVec,
    tools_pending: IntGaugeVec,
    upstream_restarts: IntCounterVec,
    sessions: IntGauge,
    db_connections: IntGaugeVec,
}

/// Makes each metric and registers it: one line per metric in [`Metrics::new`].
struct Maker<'r>(&'r Registry);

impl Maker<'_> {
    fn register<C: prometheus::core::Collector + Clone + 'static>(&self, c: C) -> C {
        self.0
            .register(Box::new(c.clone()))
            .expect("unique metric names");
        c
    }

    fn counter(&self, name: &str, help: &str) -> prometheus::IntCounter {
        self.register(prometheus::IntCounter::new(name, help).expect("a valid metric"))
    }

    fn counters(&self, name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
        self.register(IntCounterVec::new(Opts::new(name, help), labels).expect("a valid metric"))
    }

    fn gauge(&self, name: &str, help: &str) -> IntGauge {
        self.register(IntGauge::new(name, help).expect("a valid metric"))
    }

    fn gauges(&self, name: &str, help: &str, labels: &[&str]) -> IntGaugeVec {
        self.register(IntGaugeVec::new(Opts::new(name, help), labels).expect("a valid metric"))
    }

    fn histograms(&self, name: &str, help: &str, labels: &[&str]) -> HistogramVec {
        let opts = HistogramOpts::new(name, help).buckets(BUCKETS.to_vec());
        self.register(HistogramVec::new(opts, labels).expect("a valid metric"))
    }
}

impl Metrics {
    pub fn new() -> Self {
        let registry =
            Registry::new_custom(Some("mcp_gateway".into()), None).expect("metrics registry");
        let m = Maker(&registry);
        let build_info = m.gauges(
            "build_info",
            "1, labelled with the gateway's version",
            &["version"],
        );
        build_info
            .with_label_values(&[env!("CARGO_PKG_VERSION")])
            .set(1);
        // CPU seconds, resident and virtual memory, open and maximum file descriptors, threads,
        // start time (Linux; `mcp_gateway_process_*`).
        #[cfg(target_os = "linux")]
        registry
            .register(Box::new(
                prometheus::process_collector::ProcessCollector::for_self(),
            ))
            .expect("unique metric names");
        Self {
            http_requests: m.counters(
                "http_requests_total",
                "HTTP requests by route and status",
                &["route", "status"],
            ),
            mcp_requests: m.counters(
                "mcp_requests_total",
                "MCP requests by method and outcome",
                &["method", "outcome"],
            ),
            history: Default::default(),
            tool_calls: m.histograms(
                "upstream_request_duration_seconds",
                "Requests forwarded to upstreams, by upstream, method and outcome",
                &["upstream", "method", "outcome"],
            ),
            auth_refused: m.counters(
                "auth_refused_total",
                "Requests refused by authentication, authorization or rate limits, by reason",
                &["reason"],
            ),
            audit_written: m.counter("audit_entries_written_total", "Audit rows written"),
            audit_write_errors: m.counter(
                "audit_write_errors_total",
                "Failed audit batch writes (each batch is retried until written)",
            ),
            audit_queue: m.gauge("audit_queue_entries", "Audit entries waiting to be written"),
            audit_writable: m.gauge(
                "audit_writable",
                "1 while the audit log takes rows, 0 while its writes fail",
            ),
            audit_refused: m.counter(
                "audit_refused_calls_total",
                "Calls refused because the audit log could not be written (audit.when_unwritable)",
            ),
            upstream_up: m.gauges(
                "upstream_up",
                "1 when the upstream is connected",
                &["upstream"],
            ),
            upstream_calls_in_flight: m.gauges(
                "upstream_calls_in_flight",
                "Hosts' calls waiting for the upstream's answer (counted at scrape time)",
                &["upstream"],
            ),
            tools_pending: m.gauges(
                "tools_pending_approval",
                "Tools whose changed or new definition waits for an admin's review (pinning)",
                &["upstream"],
            ),
            upstream_restarts: m.counters(
                "upstream_restarts_total",
                "Times the upstream's connection was lost and restarted",
                &["upstream"],
            ),
            sessions: m.gauge("sessions_active", "Open downstream sessions"),
            db_connections: m.gauges(
                "db_pool_connections",
                "Database pool connections by state",
                &["state"],
            ),
            http_duration: m.histograms(
                "http_request_duration_seconds",
                "HTTP requests by route, until the response head",
                &["route"],
            ),
            tool_calls_by_name: m.counters(
                "tool_calls_total",
                "tools/call by upstream, tool (the upstream's own name) and outcome",
                &["upstream", "tool", "outcome"],
            ),
            registry,
        }
    }

    /// Adds a collector kept elsewhere (the routing module's metrics).
    pub fn register(&self, c: Box<dyn prometheus::core::Collector>) {
        self.registry.register(c).expect("unique metric names");
    }

    /// The text exposition, with state gauges read from `hub` and `db` now.
    pub fn render(&self, now: &Snapshot) -> String {
        let (open, idle) = now.db_pool;
        self.db_connections
            .with_label_values(&["open"])
            .set(open as i64);
        self.db_connections
            .with_label_values(&["idle"])
            .set(idle as i64);
        self.upstream_up.reset();
        self.upstream_calls_in_flight.reset();
        self.tools_pending.reset();
        for h in &now.upstreams {
            self.upstream_up
                .with_label_values(&[&h.name])
                .set((h.status == "up") as i64);
            self.upstream_calls_in_flight
                .with_label_values(&[&h.name])
                .set(h.calls_in_flight as i64);
            self.tools_pending
                .with_label_values(&[&h.name])
                .set(h.tools_pending_approval as i64);
            // Health counts restarts; the counter catches up with it (it never goes back, also
            // when an upstream is removed and added again).
            let counter = self.upstream_restarts.with_label_values(&[&h.name]);
            let seen = counter.get();
            if (h.restarts as u64) > seen {
                counter.inc_by(h.restarts as u64 - seen);
            }
        }
        self.sessions.set(now.sessions as i64);
        let mut out = Vec::new();
        let _ = TextEncoder::new().encode(&self.registry.gather(), &mut out);
        String::from_utf8(out).unwrap_or_default()
    }
}

/// What the gauges show, read by the caller at scrape time (the metrics do not reach into the
/// hub or the registry themselves).
pub struct Snapshot {
    pub sessions: usize,
    pub upstreams: Vec<crate::upstream::Health>,
    /// Open and idle database connections.
    pub db_pool: (u32, usize),
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

/// The outcome label of a JSON-RPC result.
pub fn outcome<T: MaybeToolError>(r: &Result<T, crate::protocol::McpError>) -> &'static str {
    match r {
        // A tool that ran and failed answered; it did not succeed (the audit log agrees).
        Ok(v) if v.is_tool_error() => "tool_error",
        Ok(_) => "ok",
        Err(e) if e.code == crate::protocol::jsonrpc::UPSTREAM_TIMEOUT => "timeout",
        Err(e) if e.code == crate::protocol::jsonrpc::UPSTREAM_UNAVAILABLE => "unavailable",
        Err(_) => "error",
    }
}

/// A result that may be a tool's own failure (`isError: true`).
pub trait MaybeToolError {
    fn is_tool_error(&self) -> bool;
}

impl MaybeToolError for crate::protocol::Answer {
    fn is_tool_error(&self) -> bool {
        crate::protocol::Answer::is_tool_error(self)
    }
}

impl MaybeToolError for () {
    fn is_tool_error(&self) -> bool {
        false
    }
}
