//! Semantic tool routing in the gateway: the routing service over the registry's hybrid index,
//! the meta-tools and per-session tool sets, `POST /v1/route`, virtual servers, and search
//! feedback.

pub mod admin;
pub mod config;
pub mod endpoint;
pub mod eval;
pub mod feedback;
pub mod lens;
pub mod meta_tools;
pub mod rest;
pub mod service;
pub mod virtual_servers;

pub use config::{Mode, RoutingConfig};
pub use endpoint::Endpoint;
pub use service::{Found, RoutingStatus, Search, ToolRouter};
