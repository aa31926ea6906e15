//! The edge: what every request meets before a handler. The origin and Host check against DNS
//! rebinding, admission to the MCP endpoints (the caller and the endpoint's scope), the admin
//! API's peer and right checks, the audit gate on admin changes, and the per-route counters and
//! server spans. `app` layers these onto the router; `hot_path` calls the same functions for
//! `POST /mcp`, so both paths decide alike.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, MatchedPath, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tracing::Instrument;

use crate::audit::Auditor;
use crate::config::Config;
use crate::metrics::Metrics;
use crate::origins::{allowed, is_loopback_host, origin_allowed};
use crate::protocol::McpError;
use crate::state::AppState;

/// DNS-rebinding protection: a browser page of a foreign origin (or a foreign Host name) must
/// not reach the gateway.
pub(crate) async fn guard_origin(
    State(config): State<Arc<Config>>,
    req: Request,
    next: Next,
) -> Response {
    match origin_refused(&config, req.headers(), false) {
        Some(refused) => refused,
        None => next.run(req).await,
    }
}

/// Probes and metrics: the same check, except that any IP address is accepted as Host (the
/// kubelet and Prometheus address a pod by its IP). A DNS name must be allowed: a rebinding page
/// read the tool and upstream names in `/metrics` and `/readyz`.
pub(crate) async fn guard_ops(
    State(config): State<Arc<Config>>,
    req: Request,
    next: Next,
) -> Response {
    match origin_refused(&config, req.headers(), true) {
        Some(refused) => refused,
        None => next.run(req).await,
    }
}

/// Why a browser page or a rebound DNS name may not use this request, if it may not.
/// `any_ip`: any IP address is accepted as Host (probes and metrics).
fn origin_refused(config: &Config, headers: &header::HeaderMap, any_ip: bool) -> Option<Response> {
    if let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) {
        if !origin_allowed(&config.server.allowed_origins, origin) {
            return Some(forbidden(&format!("origin {origin:?} is not allowed")));
        }
    }
    // Two Host headers would let one be checked and the other be used by whatever reads next.
    if headers.get_all(header::HOST).iter().nth(1).is_some() {
        return Some(McpError::invalid_request("more than one Host header").into_response());
    }
    if let Some(host) = headers.get(header::HOST).and_then(|v| v.to_str().ok()) {
        // Another replica relaying a retry addresses this one by its advertised URL.
        let advertised = || {
            config
                .server
                .advertise_url
                .as_deref()
                .and_then(|u| u.split("://").nth(1))
                .is_some_and(|h| h.trim_end_matches('/') == host)
        };
        let by_ip = any_ip && crate::origins::is_ip_host(host);
        if !is_loopback_host(host)
            && !by_ip
            && !advertised()
            && !allowed(&config.server.allowed_hosts, host)
        {
            return Some(forbidden(&format!(
                "host {host:?} is not allowed; add it to server.allowed_hosts"
            )));
        }
    }
    None
}

/// In front of the MCP endpoints, in one layer (each layer costs a boxed clone of the route
/// per request): the origin and host check, the caller, and the endpoint's scope.
pub(crate) async fn guard_mcp(
    State(state): State<AppState>,
    mut req: Request,
    next: Next,
) -> Response {
    let target = crate::auth::middleware::Target {
        method: req.method().as_str(),
        path: req.uri().path(),
    };
    match admit_mcp(&state, req.headers(), target).await {
        Ok((principal, endpoint)) => {
            req.extensions_mut().insert(principal);
            req.extensions_mut().insert(endpoint);
            next.run(req).await
        }
        Err(refused) => refused,
    }
}

/// Whether a request to an MCP endpoint at `path` may go on, and as whom: the origin and host
/// check, the caller, and the endpoint's scope (a virtual server nobody defined is 404).
pub(crate) async fn admit_mcp(
    state: &AppState,
    headers: &header::HeaderMap,
    target: crate::auth::middleware::Target<'_>,
) -> Result<(Arc<crate::auth::Principal>, crate::routing::Endpoint), Response> {
    let path = target.path;
    if let Some(refused) = origin_refused(&state.config, headers, false) {
        return Err(refused);
    }
    let principal = crate::auth::middleware::principal(state, headers, target).await?;
    let endpoint = crate::routing::endpoint::scope_of(&state.dispatcher.routing, path)
        .map_err(IntoResponse::into_response)?;
    if let Some(why) = principal
        .audience
        .as_deref()
        .and_then(|a| audience_refused(state, a, &endpoint))
    {
        let e = crate::auth::AuthError::InvalidToken(why);
        return Err(crate::auth::middleware::refuse(state, headers, &e));
    }
    Ok((principal, endpoint))
}

/// RFC 8707: a token of the gateway's authorization server for one virtual server is refused
/// at any other endpoint (a token for the gateway serves all of them).
fn audience_refused(
    state: &AppState,
    audience: &str,
    endpoint: &crate::routing::Endpoint,
) -> Option<String> {
    let server = state.auth.server.as_ref()?;
    let here = match &endpoint.scope {
        None => server.resource.clone(),
        Some(name) => format!("{}/v/{name}", server.resource),
    };
    (audience != server.resource && audience != here)
        .then(|| format!("the token is for {audience}, not for {here}"))
}

/// The admin API answers loopback peers only unless `server.admin_remote`; with authentication
/// on, it also needs a principal with the admin right.
pub(crate) async fn guard_admin(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    mut req: Request,
    next: Next,
) -> Response {
    if let Some(refused) = admin_peer_refused(&state.config, peer) {
        return refused;
    }
    if state.auth.required() {
        return crate::auth::middleware::require_admin(State(state), req, next).await;
    }
    req.extensions_mut().insert(state.auth.anonymous());
    next.run(req).await
}

/// Inside [`guard_admin`] (an admitted admin's request): a change is refused while the audit
/// log cannot record it, except revoking a token: taking access away must never wait for the
/// audit log.
pub(crate) async fn guard_audited_change(
    State(audit): State<Arc<Auditor>>,
    req: Request,
    next: Next,
) -> Response {
    let reads = matches!(
        *req.method(),
        axum::http::Method::GET | axum::http::Method::HEAD
    );
    let revokes = *req.method() == axum::http::Method::DELETE
        && req.uri().path().starts_with("/admin/v1/tokens/");
    if reads || revokes || audit.admit().is_ok() {
        return next.run(req).await;
    }
    crate::admin::error::AdminError::AuditUnavailable.into_response()
}

/// The admin surface answers loopback peers only, unless `server.admin_remote`.
fn admin_peer_refused(config: &Config, peer: SocketAddr) -> Option<Response> {
    // A dual-stack listener (`[::]`) sees IPv4 loopback peers as `::ffff:127.0.0.1`.
    (!config.server.admin_remote && !peer.ip().to_canonical().is_loopback())
        .then(|| forbidden("the admin API answers loopback clients only (server.admin_remote)"))
}

/// The console's files: where the admin API answers, without a token (they hold no data).
pub(crate) async fn guard_admin_peer(
    State(config): State<Arc<Config>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    req: Request,
    next: Next,
) -> Response {
    match admin_peer_refused(&config, peer) {
        Some(refused) => refused,
        None => next.run(req).await,
    }
}

fn forbidden(message: &str) -> Response {
    McpError::invalid_request(message)
        .with_status(StatusCode::FORBIDDEN)
        .into_response()
}

/// Counts every HTTP request by route (the pattern, not the path: bounded) and status, and
/// opens the HTTP server span of a traced request, the child of the caller's `traceparent`
/// (its trace id joins the request's log lines; probes and scrapes are not traced). One layer
/// inside the router, where the matched route is known.
pub(crate) async fn observe(
    State(metrics): State<Arc<Metrics>>,
    req: Request,
    next: Next,
) -> Response {
    let route = req.extensions().get::<MatchedPath>().cloned();
    let route = route.as_ref().map_or("unmatched", MatchedPath::as_str);
    let span = traced_span(&req, route);
    let started = std::time::Instant::now();
    let resp = next
        .run(req)
        .instrument(span.clone().unwrap_or_else(tracing::Span::none))
        .await;
    observed(&metrics, route, started, span, &resp);
    resp
}

/// Counts a response under `route` and records it on `span`, the request's server span when
/// it is traced. (A function called after the await rather than an `async fn` around it: an
/// `async fn` holds the future it is given twice over in its own size.)
pub(crate) fn observed(
    metrics: &Metrics,
    route: &str,
    started: std::time::Instant,
    span: Option<tracing::Span>,
    resp: &Response,
) {
    if let Some(span) = span {
        // As i64: the OpenTelemetry layer writes unsigned numbers as their Debug text.
        span.record(
            "http.response.status_code",
            i64::from(resp.status().as_u16()),
        );
        if resp.status().is_server_error() {
            span.record("otel.status_code", "ERROR");
        }
    }
    metrics
        .http_requests
        .with_label_values(&[route, resp.status().as_str()])
        .inc();
    metrics
        .http_duration
        .with_label_values(&[route])
        .observe(started.elapsed().as_secs_f64());
}

/// Probes and scrapes: asked every few seconds, neither traced nor logged.
pub(crate) fn is_probe(path: &str) -> bool {
    matches!(path, "/healthz" | "/readyz" | "/metrics")
}

/// The server span for `req`, when traces are exported and it is not a probe or a scrape.
pub(crate) fn traced_span(req: &Request, route: &str) -> Option<tracing::Span> {
    let path = req.uri().path();
    if !crate::telemetry::enabled() || is_probe(path) {
        return None;
    }
    let span = tracing::debug_span!(
        target: crate::telemetry::TARGET,
        "http",
        otel.name = format!("{} {route}", req.method()),
        otel.kind = "server",
        otel.status_code = tracing::field::Empty,
        http.request.method = %req.method(),
        http.route = %route,
        url.path = %path,
        http.response.status_code = tracing::field::Empty,
    );
    crate::telemetry::parent_from_headers(&span, req.headers());
    if let Some(id) = crate::telemetry::trace_id(&span) {
        tracing::Span::current().record("trace_id", id);
    }
    Some(span)
}

pub(crate) async fn explain_too_large(
    State(config): State<Arc<Config>>,
    resp: Response,
) -> Response {
    if resp.status() != StatusCode::PAYLOAD_TOO_LARGE {
        return resp;
    }
    let message = format!(
        "request body larger than {} bytes (server.max_body_bytes)",
        config.server.max_body_bytes
    );
    McpError::invalid_request(message)
        .with_status(StatusCode::PAYLOAD_TOO_LARGE)
        .into_response()
}
