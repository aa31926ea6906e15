//! Which endpoint a request came to: `/mcp` or a virtual server's `/mcp/v/{name}`.

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use std::sync::Arc;

use super::ToolRouter;
use crate::protocol::McpError;

/// Put in every MCP request's extensions.
#[derive(Debug, Clone, Default)]
pub struct Endpoint {
    /// The virtual server; none for `/mcp`.
    pub scope: Option<String>,
}

pub const VIRTUAL_PREFIX: &str = "/mcp/v/";

/// Resolves the endpoint; an unknown virtual server is 404.
pub async fn resolve(
    State(routing): State<Arc<ToolRouter>>,
    mut req: Request,
    next: Next,
) -> Response {
    let scope = req
        .uri()
        .path()
        .strip_prefix(VIRTUAL_PREFIX)
        .map(|n| n.trim_end_matches('/').to_string());
    if let Some(name) = &scope {
        if routing.virtual_servers.get(name).is_none() {
            return McpError::invalid_request(format!("unknown virtual server: {name}"))
                .with_status(StatusCode::NOT_FOUND)
                .into_response();
        }
    }
    req.extensions_mut().insert(Endpoint { scope });
    next.run(req).await
}
