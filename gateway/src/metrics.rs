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
    upstream_restarts: IntCounterVec,
    sessions: IntGauge,
    db_connections: IntGaugeVec,
}

impl Metrics {
    pub fn new() -> Self {
        let registry =
            Registry::new_custom(Some("mcp_gateway".into()), None).expect("metrics registry");
        let http_requests = IntCounterVec::new(
            Opts::new("http_requests_total", "HTTP requests by route and status"),
            &["route", "status"],
        )
        .unwrap();
        let mcp_requests = IntCounterVec::new(
            Opts::new("mcp_requests_total", "MCP requests by method and outcome"),
            &["method", "outcome"],
        )
        .unwrap();
        let tool_calls = HistogramVec::new(
            HistogramOpts::new(
                "upstream_request_duration_seconds",
                "Requests forwarded to upstreams, by upstream, method and outcome",
            )
            .buckets(BUCKETS.to_vec()),
            &["upstream", "method", "outcome"],
        )
        .unwrap();
        let auth_refused = IntCounterVec::new(
            Opts::new(
                "auth_refused_total",
                "Requests refused by authentication, authorization or rate limits, by reason",
            ),
            &["reason"],
        )
        .unwrap();
        let audit_written =
            prometheus::IntCounter::new("audit_entries_written_total", "Audit rows written")
                .unwrap();
        let audit_write_errors = prometheus::IntCounter::new(
            "audit_write_errors_total",
            "Failed audit batch writes (each batch is retried until written)",
        )
        .unwrap();
        let audit_queue =
            IntGauge::new("audit_queue_entries", "Audit entries waiting to be written").unwrap();
        let audit_writable = IntGauge::new(
            "audit_writable",
            "1 while the audit log takes rows, 0 while its writes fail",
        )
        .unwrap();
        let audit_refused = prometheus::IntCounter::new(
            "audit_refused_calls_total",
            "Calls refused because the audit log could not be written (audit.when_unwritable)",
        )
        .unwrap();
        let upstream_up = IntGaugeVec::new(
            Opts::new("upstream_up", "1 when the upstream is connected"),
            &["upstream"],
        )
        .unwrap();
        let upstream_calls_in_flight = IntGaugeVec::new(
            Opts::new(
                "upstream_calls_in_flight",
                "Hosts' calls waiting for the upstream's answer (counted at scrape time)",
            ),
            &["upstream"],
        )
        .unwrap();
        let upstream_restarts = IntCounterVec::new(
            Opts::new(
                "upstream_restarts_total",
                "Times the upstream's connection was lost and restarted",
            ),
            &["upstream"],
        )
        .unwrap();
        let http_duration = HistogramVec::new(
            HistogramOpts::new(
                "http_request_duration_seconds",
                "HTTP requests by route, until the response head",
            )
            .buckets(BUCKETS.to_vec()),
            &["route"],
        )
        .unwrap();
        let tool_calls_by_name = IntCounterVec::new(
            Opts::new(
                "tool_calls_total",
                "tools/call by upstream, tool (the upstream's own name) and outcome",
            ),
            &["upstream", "tool", "outcome"],
        )
        .unwrap();
        let build_info = IntGaugeVec::new(
            Opts::new("build_info", "1, labelled with the gateway's version"),
            &["version"],
        )
        .unwrap();
        build_info
            .with_label_values(&[env!("CARGO_PKG_VERSION")])
            .set(1);
        let sessions = IntGauge::new("sessions_active", "Open downstream sessions").unwrap();
        let db_connections = IntGaugeVec::new(
            Opts::new("db_pool_connections", "Database pool connections by state"),
            &["state"],
        )
        .unwrap();
        for c in [
            Box::new(http_requests.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(mcp_requests.clone()),
            Box::new(tool_calls.clone()),
            Box::new(auth_refused.clone()),
            Box::new(audit_written.clone()),
            Box::new(audit_write_errors.clone()),
            Box::new(audit_queue.clone()),
            Box::new(audit_writable.clone()),
            Box::new(audit_refused.clone()),
            Box::new(upstream_up.clone()),
            Box::new(upstream_calls_in_flight.clone()),
            Box::new(upstream_restarts.clone()),
            Box::new(sessions.clone()),
            Box::new(db_connections.clone()),
            Box::new(http_duration.clone()),
            Box::new(tool_calls_by_name.clone()),
            Box::new(build_info),
        ] {
            registry.register(c).expect("unique metric names");
        }
        // CPU seconds, resident and virtual memory, open and maximum file descriptors, threads,
        // start time (Linux; `mcp_gateway_process_*`).
        #[cfg(target_os = "linux")]
        registry
            .register(Box::new(
                prometheus::process_collector::ProcessCollector::for_self(),
            ))
            .expect("unique metric names");
        Self {
            registry,
            http_requests,
            mcp_requests,
            tool_calls,
            auth_refused,
            audit_written,
            audit_write_errors,
            audit_queue,
            audit_writable,
            audit_refused,
            upstream_up,
            upstream_calls_in_flight,
            upstream_restarts,
            sessions,
            db_connections,
            http_duration,
            tool_calls_by_name,
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
        for h in &now.upstreams {
            self.upstream_up
                .with_label_values(&[&h.name])
                .set((h.status == "up") as i64);
            self.upstream_calls_in_flight
                .with_label_values(&[&h.name])
                .set(h.calls_in_flight as i64);
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
