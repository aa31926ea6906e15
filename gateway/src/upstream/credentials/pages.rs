//! What users reach of their upstream connections: the connect link (`GET
//! /oauth/upstream/connect`, once [`super::confirm`] knows who opened it, sends the browser to
//! the upstream's authorization server), the
//! callback the server sends it back to, and their own connections (`GET /v1/connections`,
//! `POST` and `DELETE /v1/connections/{upstream}`, signed in as for `/mcp`).

use std::sync::Arc;

use axum::extract::{Extension, Path, RawQuery, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use super::vault::{user_holder, ConnectError, COOKIE};
use crate::admin::error::AdminError;
use crate::auth::server::pages::{error, escape, page};
use crate::auth::Principal;
use crate::state::AppState;

#[derive(Deserialize)]
pub struct ConnectQuery {
    pub(super) ticket: String,
}

/// A connect link followed (by its principal, [`super::confirm`]): on to the upstream's
/// authorization server, with the cookie that the answer must come back with.
pub(super) async fn onward(state: &AppState, ticket: &str) -> Response {
    let ups = &state.hub.upstreams;
    // Connecting is an audit row: while the log cannot take it, nobody connects.
    if state.dispatcher.audit.admit().is_err() {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            "the audit log cannot be written right now; try again shortly",
        );
    }
    // An enterprise-managed upstream: connected from the company sign-in, here and now.
    let managed = ups
        .vault
        .link_of(ticket)
        .ok()
        .and_then(|(upstream, _)| ups.spec(&upstream))
        .and_then(|spec| super::managed::Managed::of(&spec));
    if let Some(m) = managed {
        return match ups.vault.connect_managed(ticket, &m).await {
            Ok(c) => connected(state, c).await,
            Err(e) => {
                tracing::info!(error = %e, "a connect link could not be followed");
                error(StatusCode::FORBIDDEN, &e)
            }
        };
    }
    match ups.vault.begin(ticket, |name| ups.spec(name)).await {
        Ok((url, nonce)) => {
            let Ok(location) = HeaderValue::from_str(&url) else {
                return error(
                    StatusCode::BAD_GATEWAY,
                    "the authorization URL is not valid",
                );
            };
            let mut resp = (StatusCode::FOUND, "").into_response();
            let h = resp.headers_mut();
            h.insert(header::LOCATION, location);
            h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            set_cookie(&mut resp, state, COOKIE, &nonce, 600);
            resp
        }
        Err(ConnectError::StoreAway(e)) => {
            tracing::warn!(error = %e, "a connect link could not be followed");
            error(StatusCode::SERVICE_UNAVAILABLE, &e)
        }
        Err(ConnectError::Failed(e)) => {
            tracing::info!(error = %e, "a connect link could not be followed");
            error(StatusCode::BAD_REQUEST, &e)
        }
    }
}

/// Sets a cookie of these pages (`/oauth/upstream` only, HttpOnly, `SameSite=Lax`, `Secure`
/// when browsers reach the gateway over https); `max_age` 0 removes it.
pub(super) fn set_cookie(
    resp: &mut Response,
    state: &AppState,
    name: &str,
    value: &str,
    max_age: i64,
) {
    let secure = if state
        .hub
        .upstreams
        .vault
        .public_url()
        .starts_with("https://")
    {
        "; Secure"
    } else {
        ""
    };
    let c = format!(
        "{name}={value}; Path=/oauth/upstream; Max-Age={max_age}; HttpOnly; SameSite=Lax{secure}"
    );
    if let Ok(v) = HeaderValue::from_str(&c) {
        resp.headers_mut().append(header::SET_COOKIE, v);
    }
}

/// The upstream's authorization server sends the browser back here.
pub async fn callback(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let ups = &state.hub.upstreams;
    let cookie = crate::auth::server::cookie(&headers, COOKIE);
    match ups
        .vault
        .finish(query.as_deref().unwrap_or(""), cookie)
        .await
    {
        Ok(c) => connected(&state, c).await,
        Err(e) => {
            tracing::info!(error = %e, "an upstream authorization did not complete");
            error(StatusCode::BAD_REQUEST, &e)
        }
    }
}

/// A connection made: the catalog and the holder's sessions are told, and so is the host that
/// asked (its URL elicitation is complete); the page that says so.
async fn connected(state: &AppState, c: super::vault::Connected) -> Response {
    state
        .hub
        .upstreams
        .connection_changed(&c.upstream, &c.holder)
        .await;
    if let Some(id) = &c.elicitation {
        elicitation_complete(&state.hub, &c.holder, id);
        // The host's session may live on another replica.
        if let Err(e) = state
            .registry
            .announce_elicitation_complete(&c.holder, id)
            .await
        {
            tracing::warn!(error = %e, "cannot tell the other replicas that an elicitation is complete");
        }
    }
    let body = format!(
        "<main><h1>Connected</h1><p>Your account at <b>{}</b> is connected to the \
         gateway. Go back to your application and call again.</p></main>",
        escape(&c.upstream)
    );
    page(StatusCode::OK, "Connected", &body, None)
}

/// Tells the holder's sessions on this replica that the URL elicitation `id` is complete
/// (2025-11-25 `notifications/elicitation/complete`; a host may then retry by itself).
pub(crate) fn elicitation_complete(hub: &crate::mcp::hub::Hub, holder: &str, id: &str) {
    let note = crate::protocol::jsonrpc::notification(
        crate::protocol::method::NOTIFY_ELICITATION_COMPLETE,
        Some(json!({ "elicitationId": id })),
    );
    for s in hub.all() {
        if !s.modern && user_holder(s.principal().key()) == holder {
            s.send_related(None, &note);
        }
    }
}

/// The caller's own connections to upstreams (never their tokens), and the `user_oauth`
/// upstreams their roles grant that they have not connected (`connectable`).
pub async fn list_mine(
    State(state): State<AppState>,
    Extension(p): Extension<Arc<Principal>>,
) -> Result<Json<Value>, AdminError> {
    let list = state
        .registry
        .list_connections(Some(&user_holder(p.key())))
        .await?;
    let connectable: Vec<String> = state
        .hub
        .upstreams
        .user_oauth_upstreams()
        .into_iter()
        .filter(|u| p.access.grants_upstream(u) && !list.iter().any(|c| &c.upstream == u))
        .collect();
    Ok(Json(
        json!({ "connections": list, "connectable": connectable }),
    ))
}

/// A link that connects the caller's own account at a `user_oauth` upstream before any call
/// asks for it: `{"url": ...}`, good 10 minutes. For upstreams the caller's roles grant whole
/// (a role that grants only some of its tools: the link comes with the first call of one).
pub async fn connect_mine(
    State(state): State<AppState>,
    Extension(p): Extension<Arc<Principal>>,
    Path(upstream): Path<String>,
) -> Result<Json<Value>, AdminError> {
    let ups = &state.hub.upstreams;
    if !ups.user_oauth_upstreams().contains(&upstream) || !p.access.grants_upstream(&upstream) {
        return Err(AdminError::NotFound(format!(
            "no upstream {upstream:?} where you connect your own account"
        )));
    }
    let url = ups
        .vault
        .link(&upstream, &user_holder(p.key()), p.key(), None)
        .map_err(|e| AdminError::BadRequest(e.to_string()))?;
    Ok(Json(json!({ "url": url, "expires_in": 600 })))
}

/// Forgets one of the caller's own connections: their next call asks them to connect again.
pub async fn disconnect_mine(
    State(state): State<AppState>,
    Extension(p): Extension<Arc<Principal>>,
    Path(upstream): Path<String>,
) -> Result<StatusCode, AdminError> {
    let ups = &state.hub.upstreams;
    let holder = user_holder(p.key());
    if !ups.disconnect(&upstream, &holder, p.key()).await? {
        return Err(AdminError::NotFound(format!(
            "you have no connection to {upstream:?}"
        )));
    }
    Ok(StatusCode::NO_CONTENT)
}
