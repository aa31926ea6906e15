//! MCP Gateway: many upstream MCP servers behind one Streamable HTTP endpoint.
//!
//! | module | holds |
//! |---|---|
//! | [`app`] | shared state, router and layers, start-up, shutdown |
//! | [`mcp`] | the downstream endpoint: transport, sessions, dispatch, routing |
//! | [`upstream`] | connections to upstream servers (stdio, Streamable HTTP, legacy SSE) |
//! | [`admin`] | the admin REST API and its OpenAPI document |
//! | [`config`] | configuration file, env overrides, upstream specs, secrets |
//! | [`mcp_servers`] | import of `{"mcpServers": ...}` files |
//! | [`jsonrpc`] | JSON-RPC on raw JSON values |
//! | [`metrics`] | Prometheus metrics |
//! | [`server`] | the HTTP/1 accept loop: connection cap, header and idle timeouts |
//! | [`memory`] | freed memory handed back to the system after loading the model |

pub mod admin;
pub mod app;
pub mod audit;
pub mod auth;
pub mod config;
pub mod jsonrpc;
pub mod mcp;
pub mod mcp_servers;
pub mod memory;
pub mod metrics;
pub mod routing;
pub mod server;
pub mod upstream;

pub use app::{AppState, Application};
pub use config::Config;
