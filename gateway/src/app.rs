//! The application: shared state, the router with its layers, start-up and graceful shutdown.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use registry::{OpenOptions, Registry, SqlRegistry};
use serde_json::json;
use tokio::net::TcpListener;
use tower::{Service, ServiceBuilder};
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;

use crate::audit::Auditor;
use crate::auth::{Authenticator, RoleBook};
use crate::edge::{
    explain_too_large, guard_admin, guard_admin_peer, guard_audited_change, guard_mcp, guard_ops,
    guard_origin, observe,
};
use crate::metrics::Metrics;
use crate::routing::ToolRouter;
use crate::state::{AppState, Shared};
use crate::upstream::credentials;

use crate::config::{Config, UpstreamSpec};
use crate::mcp::dispatch::Dispatcher;
use crate::mcp::hub::Hub;
use crate::mcp::session_id::SessionCodec;
use crate::mcp::transport;
use crate::upstream::Upstreams;

/// Connections the operations port (`server.ops_listen`) keeps open at most: probes and scrapers
/// are few.
const OPS_CONNECTIONS: usize = 64;

/// A built gateway: bound, not yet serving.
pub struct Application {
    listener: TcpListener,
    /// `server.ops_listen`, when set.
    ops_listener: Option<TcpListener>,
    state: AppState,
}

async fn metrics(
    State(metrics): State<Arc<Metrics>>,
    State(hub): State<Arc<Hub>>,
    State(registry): State<Arc<dyn Registry>>,
    State(config): State<Arc<Config>>,
    headers: header::HeaderMap,
) -> Response {
    if let Some(want) = &config.server.metrics_token {
        let sent = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or("");
        if !crate::auth::pat::same_bytes(sent.as_bytes(), want.expose().as_bytes()) {
            return (
                StatusCode::UNAUTHORIZED,
                [(header::WWW_AUTHENTICATE, "Bearer realm=\"metrics\"")],
                "metrics need the bearer token of server.metrics_token\n",
            )
                .into_response();
        }
    }
    let snapshot = crate::metrics::Snapshot {
        sessions: hub.count(),
        upstreams: hub.upstreams.health(),
        db_pool: registry.pool_stats(),
    };
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        metrics.render(&snapshot),
    )
        .into_response()
}

async fn healthz() -> &'static str {
    "ok"
}

async fn readyz(
    State(registry): State<Arc<dyn Registry>>,
    State(hub): State<Arc<Hub>>,
    State(routing): State<Arc<ToolRouter>>,
    State(audit): State<Arc<Auditor>>,
) -> Response {
    let db = registry.ping().await.is_ok();
    let upstreams = hub.upstreams.health();
    let named = |status: &str| -> Vec<String> {
        upstreams
            .iter()
            .filter(|h| h.status == status)
            .map(|h| h.name.clone())
            .collect()
    };
    // Ready once every upstream has had its first connection attempt (the catalog is loaded).
    // Down upstreams are reported, not fatal: the gateway still serves the others.
    let loading = hub.upstreams.loading();
    let audit = audit.writable();
    let body = json!({
        "database": if db { "ok" } else { "unavailable" },
        "audit": if audit { "ok" } else { "unwritable" },
        "catalog": if loading.is_empty() { "loaded" } else { "loading" },
        "upstreams_connecting": loading,
        "upstreams_down": named("down"),
        // Lexical-only routing (no model) is reported, not fatal.
        "routing": routing.status(),
    });
    let status = if db && audit && loading.is_empty() {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, Json(body)).into_response()
}

/// A response that failed: a 500 (a defect) is an ERROR line, other failures (503 while an
/// upstream or the database is away, a timeout) are WARN; probes have no span and no line.
fn log_failure(
    class: tower_http::classify::ServerErrorsFailureClass,
    latency: std::time::Duration,
    span: &tracing::Span,
) {
    use tower_http::classify::ServerErrorsFailureClass as Class;
    if span.is_none() {
        return;
    }
    let ms = latency.as_millis() as u64;
    match class {
        Class::StatusCode(s) if s == StatusCode::INTERNAL_SERVER_ERROR => {
            tracing::error!(parent: span, status = s.as_u16(), latency_ms = ms, "response failed")
        }
        Class::StatusCode(s) => {
            tracing::warn!(parent: span, status = s.as_u16(), latency_ms = ms, "response failed")
        }
        Class::Error(e) => {
            tracing::warn!(parent: span, error = %e, latency_ms = ms, "response failed")
        }
    }
}

/// Probes and metrics: on the main listener, or alone on `server.ops_listen`.
fn ops_routes(config: &Arc<Config>) -> Router<AppState> {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .route_layer(middleware::from_fn_with_state(config.clone(), guard_ops))
}

/// The router of `server.ops_listen`: probes and metrics, counted like the rest.
pub fn ops_router(state: AppState) -> Router {
    ops_routes(&state.config)
        .route_layer(middleware::from_fn_with_state(
            state.dispatcher.metrics.clone(),
            observe,
        ))
        .with_state(state)
}

/// Every route, behind the layers each request passes. They wrap the router once rather than
/// each route (`Router::layer`): axum boxes a route once per layer and clones that chain
/// again at every level of every request, which was about half of a call's allocations
/// (docs/benchmarks.md).
pub fn service(
    state: AppState,
) -> impl Service<Request, Response = Response, Error = Infallible, Future: Send + 'static>
       + Clone
       + Send
       + Sync
       + 'static {
    let config = state.config.clone();
    ServiceBuilder::new()
        .layer(crate::origins::CorsLayer::new(
            &config.server.allowed_origins,
        ))
        .map_response(IntoResponse::into_response)
        .layer(SetRequestIdLayer::x_request_id(MakeRequestUuid))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(|req: &Request| {
                    // Probes and scrapes are not traced: a starting replica answers /readyz 503 on
                    // purpose, every few seconds, and that is no failure to log.
                    if crate::edge::is_probe(req.uri().path()) {
                        return tracing::Span::none();
                    }
                    let id = req
                        .headers()
                        .get("x-request-id")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("");
                    // Text fields as `&str`: recorded as they are, where `%` formatted each into a new
                    // string for every request.
                    tracing::info_span!(
                        "http",
                        method = req.method().as_str(),
                        path = req.uri().path(),
                        request_id = id,
                        trace_id = tracing::field::Empty
                    )
                })
                .on_failure(log_failure),
        )
        // Every log line of a request carries its id, and the client gets it back.
        .layer(PropagateRequestIdLayer::x_request_id())
        // A body that trickles in holds a connection and a task: it must arrive in time. An
        // answer given before the body was read says the connection closes; outside every layer
        // that answers in a response of its own (the 413's explanation).
        .layer(crate::request_body::RequestBodyLayer::new(
            config.server.body_read_timeout,
        ))
        .layer(middleware::map_response_with_state(
            config.clone(),
            explain_too_large,
        ))
        .map_response(IntoResponse::into_response)
        // Bounded bodies: a huge POST is refused with 413 before it is read into memory, with
        // a body that says why. Innermost, so that a body sent without a length that runs over
        // is a length error the extractor recognises (413), not a wrapped one (400).
        .layer(RequestBodyLimitLayer::new(config.server.max_body_bytes))
        // That limit is the only one: axum's body extractors have their own default (2 MB),
        // which refused bodies between it and `server.max_body_bytes` (4 MiB by default).
        .layer(DefaultBodyLimit::disable())
        .service(crate::hot_path::McpFirst::new(state.clone(), router(state)))
}

/// The routes, each behind what guards and observes it.
pub fn router(state: AppState) -> Router {
    let admin = crate::admin::router()
        .layer(middleware::from_fn_with_state(
            state.dispatcher.audit.clone(),
            guard_audited_change,
        ))
        .layer(middleware::from_fn_with_state(state.clone(), guard_admin));
    let console = crate::console::router().layer(middleware::from_fn_with_state(
        state.config.clone(),
        guard_admin_peer,
    ));
    // DNS-rebinding protection covers what a browser page could abuse; probes and scrapers call
    // with the pod's IP as Host and must not be refused.
    let mcp = Router::new()
        .route(
            "/mcp",
            get(transport::get)
                .post(transport::handle_post)
                .delete(transport::delete),
        )
        .route(
            "/mcp/v/{name}",
            get(transport::get)
                .post(transport::handle_post)
                .delete(transport::delete),
        )
        // `POST /mcp` does not come through here (`hot_path`): what guards MCP requests goes
        // into `admit_mcp`, which both call, not into another route layer.
        .route_layer(middleware::from_fn_with_state(state.clone(), guard_mcp));
    let guarded = Router::new()
        .route("/v1/route", axum::routing::post(crate::admin::route::route))
        .route("/v1/me", get(crate::admin::listing::me))
        .route("/v1/connections", get(credentials::pages::list_mine))
        .route(
            "/v1/connections/{upstream}",
            axum::routing::post(credentials::pages::connect_mine)
                .delete(credentials::pages::disconnect_mine),
        )
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            crate::auth::middleware::require_principal,
        ))
        .merge(admin)
        .merge(console)
        .route_layer(middleware::from_fn_with_state(
            state.config.clone(),
            guard_origin,
        ));
    Router::new()
        .merge(mcp)
        .merge(guarded)
        .route(
            "/.well-known/oauth-protected-resource",
            get(crate::auth::middleware::resource_metadata),
        )
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(crate::auth::middleware::resource_metadata),
        )
        .merge(crate::auth::server::routes(&state))
        .route(
            credentials::vault::CONNECT_PATH,
            get(credentials::confirm::connect).post(credentials::confirm::sign_in),
        )
        .route(
            credentials::vault::CALLBACK_PATH,
            get(credentials::pages::callback),
        )
        .merge(match state.config.server.ops_listen {
            Some(_) => Router::new(),
            None => ops_routes(&state.config),
        })
        .route_layer(middleware::from_fn_with_state(
            state.dispatcher.metrics.clone(),
            observe,
        ))
        .with_state(state)
}

impl Application {
    /// Opens the registry, seeds the config's upstreams, starts every upstream and binds.
    pub async fn build(config: Config) -> anyhow::Result<Self> {
        let config = Arc::new(config);
        let registry = open_registry(&config).await?;
        crate::seed::seed(registry.as_ref(), &config).await?;
        let roles = Arc::new(RoleBook::new());
        roles.reload(registry.as_ref()).await?;
        let upstreams = Upstreams::new(config.clone(), registry.clone());
        let codec = SessionCodec::new(config.server.session_key.as_ref().map(|k| k.expose()));
        if !codec.shared {
            tracing::info!("no session_key: sessions are known to this process only");
        }
        let hub = Hub::new(
            upstreams.clone(),
            registry.clone(),
            codec,
            config.server.max_sessions_per_principal,
        );
        for rec in registry.list_upstreams().await? {
            let name = rec.name.clone();
            match UpstreamSpec::from_record(rec) {
                Ok(spec) => upstreams.start(spec),
                Err(e) => {
                    tracing::error!(upstream = %name, error = %e, "stored upstream is invalid; skipped")
                }
            }
        }
        crate::followers::upstreams(&registry, &upstreams);
        let auth_server = crate::auth::server::AuthServer::from_config(&config, &registry).await?;
        let auth = Arc::new(Authenticator::new(
            config.auth.clone(),
            roles,
            registry.clone(),
            upstreams.http_client().clone(),
            auth_server,
        ));
        announce_authentication(&config, auth.required());
        crate::followers::access(&registry, &auth);
        let metrics = Arc::new(Metrics::new());
        let audit = Arc::new(Auditor::start(
            registry.clone(),
            config.audit.clone(),
            metrics.clone(),
        ));
        upstreams.vault.set_audit(audit.clone());
        // After the audit is there: what a changed config no longer takes is forgotten, audited.
        upstreams.forget_stale_connections().await;
        // After a key rotation, what the previous keys sealed is sealed again with the new one.
        let vault = upstreams.vault.clone();
        tokio::spawn(async move { vault.reseal_all().await });
        let routing = ToolRouter::start(
            config.routing.clone(),
            registry.clone(),
            hub.upstreams.clone(),
            &metrics,
        )
        .await;
        routing.reload_virtual_servers().await;
        crate::followers::virtual_servers(&registry, &routing);
        crate::followers::elicitations(&registry, &hub);
        crate::followers::ended_sessions(&registry, &hub);
        let dispatcher = Arc::new(Dispatcher {
            hub: hub.clone(),
            page_size: config.server.list_page_size,
            metrics,
            audit,
            routing,
        });
        let listener = TcpListener::bind(config.server.listen).await?;
        hub.upstreams.vault.listening_on(listener.local_addr()?);
        let ops_listener = match config.server.ops_listen {
            Some(addr) => Some(TcpListener::bind(addr).await?),
            None => None,
        };
        let state = AppState::new(Shared {
            config,
            registry,
            hub,
            dispatcher,
            auth,
        });
        sample_calls_every_minute(&state);
        reap_idle_sessions(&state);
        forget_ended_sessions(&state);
        Ok(Self {
            listener,
            ops_listener,
            state,
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.listener.local_addr().expect("bound listener")
    }

    /// Where probes and metrics are served when `server.ops_listen` is set.
    pub fn ops_addr(&self) -> Option<SocketAddr> {
        self.ops_listener
            .as_ref()
            .map(|l| l.local_addr().expect("bound listener"))
    }

    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// Serves until `shutdown` resolves; then stops accepting, ends the sessions' GET streams,
    /// lets in-flight calls finish within `shutdown_grace`, and closes every upstream.
    pub async fn serve(
        self,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        let state = self.state.clone();
        let app = service(self.state);
        let (stopping, mut stopping_rx) = tokio::sync::watch::channel(false);
        let hub = state.hub.clone();
        let limits = crate::server::ConnectionLimits {
            max_connections: crate::server::effective_cap(
                state.config.server.max_connections,
                crate::server::raise_fd_limit(),
            ),
            header_read_timeout: state.config.server.header_read_timeout,
        };
        // Probes and scrapes are answered until the main server has drained, served like the
        // main port (axum's own `serve` sets no header timeout: a half-sent request held its
        // socket for ever), by a thread of their own, with a small connection cap.
        let ops = self.ops_listener.map(|listener| {
            let app = ops_router(state.clone());
            let limits = crate::server::ConnectionLimits {
                max_connections: limits.max_connections.min(OPS_CONNECTIONS),
                ..limits
            };
            tokio::spawn(async move {
                match crate::workers::Workers::start(1) {
                    Ok(worker) => {
                        crate::server::serve(listener, &worker, app, limits, std::future::pending())
                            .await
                    }
                    Err(e) => tracing::error!(error = %e, "the operations listener failed"),
                }
            })
        });
        // Kept to the end: tasks that calls started on a worker (an upstream's session, a GET
        // stream) run on its runtime until the upstreams are closed below.
        let workers = crate::workers::Workers::start(state.config.server.workers)?;
        let server = crate::server::serve(self.listener, &workers, app, limits, async move {
            shutdown.await;
            stopping.send_replace(true);
            // GET streams never end on their own; in-flight POSTs are left to finish.
            for s in hub.all() {
                s.close_get_stream();
            }
            hub.close_listeners();
        });
        let grace = state.config.server.shutdown_grace;
        tokio::select! {
            _ = server => {},
            _ = async {
                let _ = stopping_rx.wait_for(|s| *s).await;
                tokio::time::sleep(grace).await;
            } => tracing::warn!(?grace, "shutdown deadline passed; unfinished requests dropped"),
        }
        if let Some(ops) = ops {
            ops.abort();
        }
        state.dispatcher.audit.close().await;
        state.hub.upstreams.stop_all();
        drop(workers);
        tracing::info!("stopped");
        Ok(())
    }
}

/// The registry the config names, migrated.
async fn open_registry(config: &Config) -> anyhow::Result<Arc<dyn Registry>> {
    let registry = SqlRegistry::open(
        config.database.url.expose(),
        OpenOptions {
            max_connections: config.database.max_connections,
            ..Default::default()
        },
    )
    .await
    .map_err(|e| anyhow::Error::new(e).context("database"))?;
    tracing::info!(backend = registry.backend(), "registry open");
    Ok(Arc::new(registry))
}

/// Says at start whether callers must authenticate; loudly when they need not.
fn announce_authentication(config: &Config, required: bool) {
    if required {
        tracing::info!(
            issuers = config.auth.issuers.len(),
            resource = config.auth.resource.as_deref().unwrap_or(""),
            "authentication required: OAuth access tokens and personal access tokens"
        );
    } else {
        tracing::warn!(
            "AUTHENTICATION IS OFF (auth.mode = none): every caller may call every tool and \
             use the admin API from loopback. For local development only; set auth.mode = \
             \"required\" anywhere else."
        );
    }
}

/// A minute of calls closes every minute, for the console's charts; stops with the gateway.
fn sample_calls_every_minute(state: &AppState) {
    let sampled = Arc::downgrade(&state.dispatcher.metrics);
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(60));
        tick.tick().await;
        loop {
            tick.tick().await;
            let Some(m) = sampled.upgrade() else { break };
            m.history.sample(&m.tool_calls, registry::now_ms());
        }
    });
}

/// Forgets, at start and hourly, the records of sessions ended longer ago than an id is
/// restored from itself (`session_id::RESTORED_FOR_SECS`): they guard nothing any more, and
/// every host's DELETE adds one.
fn forget_ended_sessions(state: &AppState) {
    crate::periodic::every(
        Duration::from_secs(3600),
        &state.registry,
        |registry| async move {
            let before =
                registry::now_ms() - crate::mcp::session_id::RESTORED_FOR_SECS * 1000 - 60_000;
            match registry.forget_terminated_sessions(before).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(sessions = n, "forgot sessions ended long ago"),
                Err(e) => tracing::warn!(error = %e, "cannot forget sessions ended long ago"),
            }
        },
    );
}

/// Ends sessions idle for `server.session_idle`, and gives up calls that waited too long for
/// the client's input; stops with the gateway.
fn reap_idle_sessions(state: &AppState) {
    let idle = state.config.server.session_idle;
    let every = Duration::from_secs(30).min(idle);
    crate::periodic::every(every, &state.hub, move |hub| async move {
        let n = hub.reap(idle);
        if n > 0 {
            tracing::info!(sessions = n, "idle sessions reaped");
        }
        let n = hub.expire_parked();
        if n > 0 {
            tracing::info!(calls = n, "calls waiting for input given up");
        }
    });
}
