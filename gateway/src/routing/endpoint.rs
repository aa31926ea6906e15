//! Which endpoint a request came to: `/mcp` or a virtual server's `/mcp/v/{name}`.

use axum::http::StatusCode;

use super::ToolRouter;
use crate::protocol::McpError;

/// Put in every MCP request's extensions.
#[derive(Debug, Clone, Default)]
pub struct Endpoint {
    /// The virtual server; none for `/mcp`.
    pub scope: Option<String>,
}

pub const VIRTUAL_PREFIX: &str = "/mcp/v/";

/// The [`Endpoint`] a request's `path` addresses, or the refusal: a virtual server nobody
/// defined is 404.
pub fn scope_of(routing: &ToolRouter, path: &str) -> Result<Endpoint, McpError> {
    let scope = path
        .strip_prefix(VIRTUAL_PREFIX)
        .map(|n| n.trim_end_matches('/').to_string());
    if let Some(name) = &scope {
        if routing.virtual_servers.get(name).is_none() {
            return Err(
                McpError::invalid_request(format!("unknown virtual server: {name}"))
                    .with_status(StatusCode::NOT_FOUND),
            );
        }
    }
    Ok(Endpoint { scope })
}
