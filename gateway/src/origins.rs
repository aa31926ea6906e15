//! Which browser origins and hosts may reach the gateway, and CORS for the ones that may.
//!
//! CORS runs only for requests that carry `Origin`: browsers send it on every cross-origin
//! request and preflight, and the CORS headers mean nothing to anyone else. A request without
//! it (every non-browser host) gets the same `Vary` header as a CORS answer, for caches, and
//! skips the layer's per-request header work.

use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::Request;
use axum::http::{header, HeaderName, HeaderValue};
use axum::response::{IntoResponse, Response};
use tower::{Layer, Service};
use tower_http::cors::{AllowHeaders, AllowOrigin, Cors};

pub fn is_loopback_host(host: &str) -> bool {
    let name = host_name(host);
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<IpAddr>()
            .is_ok_and(|ip| ip.to_canonical().is_loopback())
}

/// Whether a Host header names an IP address rather than a DNS name. A DNS-rebinding page
/// reaches the gateway under the attacker's name; a page served from an IP address is of that
/// address's own origin.
pub fn is_ip_host(host: &str) -> bool {
    host_name(host).parse::<IpAddr>().is_ok()
}

/// A Host header without its port; IPv6 literals come in brackets.
fn host_name(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        host.rsplit_once(':').map_or(host, |(h, p)| {
            if p.chars().all(|c| c.is_ascii_digit()) {
                h
            } else {
                host
            }
        })
    }
}

pub fn allowed(list: &[String], value: &str) -> bool {
    list.iter()
        .any(|a| a == "*" || a.eq_ignore_ascii_case(value))
}

/// Whether a browser page of `origin` may call the gateway: loopback origins (a local Inspector,
/// a local web app) and `server.allowed_origins`. The same rule as `edge::guard_origin`.
pub fn origin_allowed(list: &[String], origin: &str) -> bool {
    if origin == "null" {
        return allowed(list, "null");
    }
    is_loopback_host(origin.split("://").nth(1).unwrap_or("")) || allowed(list, origin)
}

/// CORS for browser hosts (the Inspector's direct mode, web apps): preflights are answered here,
/// before authentication (a browser sends no credentials on them), for the origins
/// [`origin_allowed`] accepts; the session and protocol headers a client must read are exposed.
fn cors(allowed_origins: &[String]) -> tower_http::cors::CorsLayer {
    let list = allowed_origins.to_vec();
    tower_http::cors::CorsLayer::new()
        .allow_origin(AllowOrigin::predicate(move |origin, _| {
            origin.to_str().is_ok_and(|o| origin_allowed(&list, o))
        }))
        .allow_methods([
            axum::http::Method::GET,
            axum::http::Method::POST,
            axum::http::Method::DELETE,
            axum::http::Method::PUT,
            axum::http::Method::PATCH,
        ])
        // Whatever the page asks for: the origin is what is checked, and MCP adds headers
        // (Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID, Authorization) as it grows.
        .allow_headers(AllowHeaders::mirror_request())
        .expose_headers([
            HeaderName::from_static("mcp-session-id"),
            HeaderName::from_static("mcp-protocol-version"),
            HeaderName::from_static("www-authenticate"),
            HeaderName::from_static("x-request-id"),
        ])
        .max_age(Duration::from_secs(600))
}

/// What tower-http's CORS layer says in `Vary` (it varies by these request headers).
const VARY: HeaderValue = HeaderValue::from_static(
    "origin, access-control-request-method, access-control-request-headers",
);

/// [`cors`] for requests with `Origin`; the others go straight to the inner service.
#[derive(Clone)]
pub struct CorsLayer(tower_http::cors::CorsLayer);

impl CorsLayer {
    pub fn new(allowed_origins: &[String]) -> Self {
        Self(cors(allowed_origins))
    }
}

impl<S: Clone> Layer<S> for CorsLayer {
    type Service = WhenOrigin<S>;

    fn layer(&self, inner: S) -> Self::Service {
        WhenOrigin {
            cors: self.0.layer(inner.clone()),
            inner,
        }
    }
}

#[derive(Clone)]
pub struct WhenOrigin<S> {
    cors: Cors<S>,
    inner: S,
}

impl<S> Service<Request> for WhenOrigin<S>
where
    S: Service<Request, Response = Response> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        // Both wrap the same service; it is ready for one when it is ready for the other.
        match self.cors.poll_ready(cx) {
            Poll::Ready(Ok(())) => self.inner.poll_ready(cx),
            other => other,
        }
    }

    fn call(&mut self, req: Request) -> Self::Future {
        if req.headers().contains_key(header::ORIGIN) {
            let fut = self.cors.call(req);
            // CORS answers preflights itself with an empty body of the inner type.
            Box::pin(async move { fut.await.map(IntoResponse::into_response) })
        } else {
            let fut = self.inner.call(req);
            Box::pin(async move {
                let mut resp = fut.await?;
                resp.headers_mut().append(header::VARY, VARY);
                Ok(resp)
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower::{ServiceBuilder, ServiceExt};

    async fn answer(origin: Option<&str>, method: &str) -> Response {
        let svc = ServiceBuilder::new()
            .layer(CorsLayer::new(&["https://app.example".into()]))
            .service(tower::service_fn(|_req: Request| async {
                Ok::<_, std::convert::Infallible>("inner".into_response())
            }));
        let mut req = Request::builder().method(method).uri("/mcp");
        if let Some(o) = origin {
            req = req
                .header(header::ORIGIN, o)
                .header(header::ACCESS_CONTROL_REQUEST_METHOD, "POST");
        }
        svc.oneshot(req.body(axum::body::Body::empty()).unwrap())
            .await
            .unwrap()
    }

    /// A host without `Origin` gets the answer with CORS's `Vary` and nothing else of it; a
    /// browser page gets CORS as before, preflight included.
    #[tokio::test]
    async fn cors_runs_for_requests_with_an_origin() {
        let plain = answer(None, "POST").await;
        assert_eq!(plain.headers()[header::VARY], VARY);
        assert!(!plain
            .headers()
            .contains_key(header::ACCESS_CONTROL_EXPOSE_HEADERS));
        let page = answer(Some("https://app.example"), "POST").await;
        assert_eq!(
            page.headers()[header::ACCESS_CONTROL_ALLOW_ORIGIN],
            "https://app.example"
        );
        assert!(page.headers()[header::ACCESS_CONTROL_EXPOSE_HEADERS]
            .to_str()
            .unwrap()
            .contains("mcp-session-id"));
        assert_eq!(page.headers()[header::VARY], VARY);
        let foreign = answer(Some("https://evil.example"), "POST").await;
        assert!(!foreign
            .headers()
            .contains_key(header::ACCESS_CONTROL_ALLOW_ORIGIN));
        let preflight = answer(Some("https://app.example"), "OPTIONS").await;
        assert!(preflight
            .headers()
            .contains_key(header::ACCESS_CONTROL_ALLOW_METHODS));
    }

    #[test]
    fn loopback_hosts() {
        for h in [
            "localhost",
            "localhost:8080",
            "127.0.0.1:1",
            "[::1]:80",
            "[::1]",
            "[::ffff:127.0.0.1]:8080",
        ] {
            assert!(is_loopback_host(h), "{h}");
        }
        for h in [
            "evil.com",
            "evil.com:8080",
            "10.0.0.1",
            "localhost.evil.com",
            "[::ffff:10.0.0.1]",
        ] {
            assert!(!is_loopback_host(h), "{h}");
        }
    }
}
