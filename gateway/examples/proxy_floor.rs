//! The floor of the gateway's own stack, a reference target for `scripts/bench-wrk --floor`.
//!
//! It serves HTTP with the gateway's own accept loop (`server::serve`: the same hyper settings,
//! connection limit and worker threads), forwards each request's body to one upstream URL
//! through the gateway's own HTTP/1 pool (`upstream::h1`, the connection driven by the calling
//! task) and answers with the upstream's status, content type, session id and body, all under
//! the gateway's allocator. What it leaves out is everything the gateway is for: no JSON,
//! sessions, layers, access checks, metrics or audit log. A call through it costs what any
//! gateway built on this stack must pay at least, so the gap between it and the gateway is the
//! gateway's own work, and the gap between it and nginx is the stack's (docs/benchmarks.md).
//!
//!   proxy-floor UPSTREAM_URL    (prints `listening on http://ADDR/PATH`)

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use bytes::Bytes;
use gateway::server::ConnectionLimits;
use gateway::upstream::h1::{Pool, Pools};
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderName, StatusCode};
use http_body_util::{BodyExt, Full};

#[global_allocator]
static GLOBAL: gateway::allocator::Mimalloc = gateway::allocator::Mimalloc;

const SESSION: HeaderName = HeaderName::from_static("mcp-session-id");

/// The request headers an MCP upstream reads, passed on as they came.
const PASSED: [HeaderName; 4] = [
    CONTENT_TYPE,
    ACCEPT,
    SESSION,
    HeaderName::from_static("mcp-protocol-version"),
];

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let url = std::env::args()
        .nth(1)
        .context("usage: proxy-floor UPSTREAM_URL")?;
    let upstream: http::Uri = url.parse().context("UPSTREAM_URL")?;
    let pool = Pools::default()
        .pool_for(&upstream)
        .context("UPSTREAM_URL has no host")?;
    let path = Arc::<str>::from(upstream.path());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("listening on http://{}{path}", listener.local_addr()?);
    let app = tower::service_fn(move |req: Request| {
        let (pool, path) = (pool.clone(), path.clone());
        async move { Ok::<_, Infallible>(forward(&pool, &path, req).await) }
    });
    let limits = ConnectionLimits {
        max_connections: 10_000,
        header_read_timeout: Duration::from_secs(30),
    };
    let workers = gateway::workers::Workers::start(gateway::workers::cores())?;
    gateway::server::serve(listener, &workers, app, limits, std::future::pending()).await;
    Ok(())
}

/// One request, forwarded whole; any failure is a 502 that says why.
async fn forward(pool: &Arc<Pool>, path: &str, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let body = match body.collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => return failed(StatusCode::BAD_REQUEST, e.to_string()),
    };
    let mut up = http::Request::post(path);
    for name in &PASSED {
        if let Some(v) = parts.headers.get(name) {
            up = up.header(name, v);
        }
    }
    let up = up.body(Full::new(body)).expect("a valid request");
    let resp = match pool.send(up).await {
        Ok(r) => r,
        Err(e) => return failed(StatusCode::BAD_GATEWAY, format!("{e:?}")),
    };
    let (head, body) = resp.into_parts();
    let body = match body.collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => return failed(StatusCode::BAD_GATEWAY, e.to_string()),
    };
    let mut out = Response::new(Body::from(body));
    *out.status_mut() = head.status;
    for name in [CONTENT_TYPE, SESSION] {
        if let Some(v) = head.headers.get(&name) {
            out.headers_mut().insert(name, v.clone());
        }
    }
    out
}

fn failed(status: StatusCode, why: String) -> Response {
    let mut out = Response::new(Body::from(Bytes::from(why)));
    *out.status_mut() = status;
    out
}
