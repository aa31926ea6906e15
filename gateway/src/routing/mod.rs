//! Semantic tool routing in the gateway: the routing service over the registry's hybrid index,
//! the meta-tools and per-session tool sets, virtual servers, and search feedback. (Its admin API
//! and `POST /v1/route` are in `admin`, its configuration in `config::routing`.)

pub mod endpoint;
pub mod eval;
pub mod feedback;
pub mod lens;
pub mod meta_tools;
pub mod service;
pub mod texts;
pub mod virtual_servers;

pub use crate::config::routing::{Mode, RoutingConfig};
pub use endpoint::Endpoint;
pub use service::{Found, RoutingStatus, Search, ToolRouter};
