//! Semantic tool routing in the gateway: the routing service over the registry's hybrid index,
//! the meta-tools and per-session tool sets, `POST /v1/route`, virtual servers, and search
//! feedback.

pub mod config;
pub mod feedback;
pub mod service;
pub mod virtual_servers;

pub use config::{Mode, RoutingConfig};
pub use service::{Found, RoutingStatus, ToolRouter};
