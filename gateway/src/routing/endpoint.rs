//! Which endpoint a request came to: `/mcp` or a virtual server's `/mcp/v/{name}`.

use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::ToolRouter;
use crate::protocol::McpError;

/// Put in every MCP request's extensions.
#[derive(Debug, Clone, Default)]
pub struct Endpoint {
    /// The virtual server; none for `/mcp`.
    pub scope: Option<String>,
}

pub const VIRTUAL_PREFIX: &str = "/mcp/v/";

/// Puts the request's [`Endpoint`] into its extensions, or returns the refusal: a virtual
/// server nobody defined is 404.
pub fn enter_scope(routing: &ToolRouter, req: &mut Request) -> Option<Response> {
    let scope = req
        .uri()
        .path()
        .strip_prefix(VIRTUAL_PREFIX)
        .map(|n| n.trim_end_matches('/').to_string());
    if let Some(name) = &scope {
        if routing.virtual_servers.get(name).is_none() {
            return Some(
                McpError::invalid_request(format!("unknown virtual server: {name}"))
                    .with_status(StatusCode::NOT_FOUND)
                    .into_response(),
            );
        }
    }
    req.extensions_mut().insert(Endpoint { scope });
    None
}
