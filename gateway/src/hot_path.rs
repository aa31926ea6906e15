//! `POST /mcp`, the request every host call is, served in front of the router.
//!
//! Through the router, that request had its path matched, the matched path and the URL
//! parameters inserted into its extensions, the route cloned and boxed once per route layer
//! (`observe`, `guard_mcp`) and its headers cloned by the handler's extractor: about 9,000
//! instructions and 28 of the call's 121 allocations that decide nothing (docs/benchmarks.md,
//! "`POST /mcp` in front of the router"). Here the same steps run in the same order with the same code: counted
//! and traced under the route `/mcp` ([`crate::edge::observed`]), admitted
//! ([`crate::edge::admit_mcp`]), the body read by axum's own `Bytes` extractor (the same limits
//! and refusals), then the same handler. Every other request, including a virtual server's
//! `/mcp/v/{name}`, goes to the router. The layers in front of both (CORS, request ids,
//! traces, body limits) are unchanged.

use std::convert::Infallible;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Extension, FromRequest, Request, State};
use axum::http::{self as http, Method};
use axum::response::{IntoResponse, Response};
use axum::routing::future::RouteFuture;
use axum::Router;
use futures::future::{BoxFuture, Either};
use tower::Service;
use tracing::Instrument;

use crate::state::AppState;

/// The route served here.
const ROUTE: &str = "/mcp";

/// The router, with `POST /mcp` taken before it.
#[derive(Clone)]
pub struct McpFirst {
    state: AppState,
    router: Router,
}

impl McpFirst {
    pub fn new(state: AppState, router: Router) -> Self {
        Self { state, router }
    }
}

/// Over any body, as [`Router`] is (the layers in front wrap the body in their own types).
impl<B> Service<http::Request<B>> for McpFirst
where
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<BoxFuture<'static, Result<Response, Infallible>>, RouteFuture<Infallible>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Service::<http::Request<B>>::poll_ready(&mut self.router, cx)
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        if req.method() == Method::POST && req.uri().path() == ROUTE {
            Either::Left(Box::pin(serve_post(self.state.clone(), req.map(Body::new))))
        } else {
            Either::Right(self.router.call(req))
        }
    }
}

async fn serve_post(state: AppState, req: Request) -> Result<Response, Infallible> {
    let span = crate::edge::traced_span(&req, ROUTE);
    let started = std::time::Instant::now();
    let metrics = state.dispatcher.metrics.clone();
    let resp = admitted(state, req)
        .instrument(span.clone().unwrap_or_else(tracing::Span::none))
        .await;
    crate::edge::observed(&metrics, ROUTE, started, span, &resp);
    Ok(resp)
}

async fn admitted(state: AppState, req: Request) -> Response {
    let target = crate::auth::middleware::Target {
        method: req.method().as_str(),
        path: ROUTE,
    };
    let (principal, endpoint) = match crate::edge::admit_mcp(&state, req.headers(), target).await {
        Ok(admitted) => admitted,
        Err(refused) => return refused,
    };
    // The handler gets the headers themselves; the body extractor does not read them.
    let (mut parts, body) = req.into_parts();
    let headers = std::mem::take(&mut parts.headers);
    let body = match Bytes::from_request(Request::from_parts(parts, body), &()).await {
        Ok(body) => body,
        Err(rejected) => return rejected.into_response(),
    };
    crate::mcp::transport::handle_post(
        State(state),
        Extension(principal),
        Extension(endpoint),
        headers,
        body,
    )
    .await
    .into_response()
}
