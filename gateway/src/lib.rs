//! MCP Gateway: many upstream MCP servers behind one Streamable HTTP endpoint.
//!
//! | module | holds |
//! |---|---|
//! | [`app`] | the router and its layers, start-up, shutdown |
//! | [`edge`] | what every request meets first: origin and Host checks, admission, counters, spans |
//! | [`hot_path`] | `POST /mcp`, every host call, served in front of the router |
//! | [`state`] | what handlers share ([`AppState`]) and the parts they take alone |
//! | [`mcp`] | the downstream endpoint: transport, sessions, dispatch, routing |
//! | [`upstream`] | connections to upstream servers (stdio, Streamable HTTP, legacy SSE) |
//! | [`auth`] | who is calling (OAuth access tokens, personal access tokens) and their roles |
//! | [`audit`] | the audit trail: entries, the batching writer, the unwritable-log policy |
//! | [`call_history`] | the last hour of each upstream's calls, minute by minute, from the counters |
//! | [`routing`] | semantic tool routing: the router, meta-tools, `/v1/route`, virtual servers |
//! | [`admin`] | the admin REST API and its OpenAPI document |
//! | [`console`] | the admin console's static files at `/admin/` |
//! | [`followers`] | this replica kept in step with other replicas' changes |
//! | [`config`] | configuration file, env overrides, upstream specs, secrets |
//! | [`json_answers`] | other servers' JSON answers, read with a bound |
//! | [`exchange`] | configuration as code: export and import of what the API registered |
//! | [`seed`] | the config file's upstreams and roles in the registry, pruned when removed |
//! | [`protocol`] | the MCP vocabulary: JSON-RPC, methods, revisions, envelope keys, the one error |
//! | [`names`] | the one rule for names of upstreams, roles and virtual servers |
//! | [`metrics`] | Prometheus metrics |
//! | [`telemetry`] | OpenTelemetry traces (OTLP), off unless `OTEL_*` asks |
//! | [`log_format`] | the log's JSON lines, as tracing-subscriber writes them, at less cost |
//! | [`origins`] | which browser origins and hosts may reach the gateway; CORS |
//! | [`request_body`] | request bodies: a read timeout armed only when one stalls, `Connection: close` when one is left unread |
//! | [`server`] | the HTTP/1 accept loop: connection cap, header and idle timeouts |
//! | [`workers`] | the threads that serve client connections, one runtime each |
//! | [`allocator`] | the process's allocator (mimalloc) |
//! | [`memory`] | freed memory handed back to the system after loading the model |

pub mod admin;
pub mod allocator;
pub mod app;
pub mod audit;
pub mod auth;
pub mod call_history;
pub mod config;
pub mod console;
pub mod edge;
pub mod exchange;
pub mod followers;
pub mod hot_path;
pub mod json_answers;
pub mod log_format;
pub mod mcp;
pub mod memory;
pub mod metrics;
pub mod names;
pub mod origins;
pub mod periodic;
pub mod protocol;
pub mod request_body;
pub mod routing;
pub mod seed;
pub mod server;
pub mod state;
pub mod telemetry;
pub mod upstream;
pub mod workers;

#[cfg(test)]
mod error_map_tests;
#[cfg(test)]
mod testing;

pub use app::Application;
pub use config::Config;
pub use state::AppState;
