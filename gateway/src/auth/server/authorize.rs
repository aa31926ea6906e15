//! `/oauth/authorize` and `/oauth/consent`: the request checked (a client and redirect URI that
//! do not match end here, on a page, never redirected), the user signed in, asked for consent
//! unless they gave it to this client before, and sent back with a one-time code.
//!
//! The request travels between the pages sealed (a MAC under the signing key), so any replica
//! can serve the next step and nobody can change it on the way; a CSRF value in a `SameSite`
//! cookie must match the one sealed in it, so another site cannot post the forms for a user.

use std::collections::HashMap;

use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use registry::{now_ms, ClientRecord, CodeRecord, GrantRecord};
use serde_json::{json, Value};

use super::{
    audit, clients, cookie, hashed, pages, random_secret, server, AuthServer, ClientError,
};
use crate::state::AppState;

const CSRF_COOKIE: &str = "mcpgw_oauth_csrf";

/// Form or query parameters, each at most once (RFC 6749 §3.1).
pub(super) fn params(text: &str) -> Result<HashMap<String, String>, String> {
    let mut out = HashMap::new();
    for (k, v) in url::form_urlencoded::parse(text.as_bytes()) {
        if out.insert(k.to_string(), v.to_string()).is_some() {
            return Err(format!("the parameter {k} is repeated"));
        }
    }
    Ok(out)
}

/// The authorization request, as sealed into the pages.
pub(super) struct Request {
    pub(super) client_id: String,
    pub(super) redirect_uri: String,
    state: Option<String>,
    scope: String,
    challenge: String,
    resource: String,
}

impl Request {
    fn to_value(&self, csrf: &str, expires: i64) -> Value {
        json!({"c": self.client_id, "r": self.redirect_uri, "s": self.state, "sc": self.scope,
               "cc": self.challenge, "res": self.resource, "x": csrf, "e": expires})
    }

    pub(super) fn from_value(v: &Value) -> Option<Self> {
        let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        Some(Self {
            client_id: s("c")?,
            redirect_uri: s("r")?,
            state: s("s"),
            scope: s("sc")?,
            challenge: s("cc")?,
            resource: s("res")?,
        })
    }

    /// The client's redirect with `params` (and `state`, `iss`) added to its query.
    fn redirect(&self, issuer: &str, params: &[(&str, &str)]) -> Response {
        let mut url = self.redirect_uri.clone();
        let mut q = url::form_urlencoded::Serializer::new(String::new());
        for (k, v) in params {
            q.append_pair(k, v);
        }
        if let Some(s) = &self.state {
            q.append_pair("state", s);
        }
        q.append_pair("iss", issuer);
        url.push(if url.contains('?') { '&' } else { '?' });
        url.push_str(&q.finish());
        let mut resp = StatusCode::SEE_OTHER.into_response();
        if let Ok(v) = HeaderValue::from_str(&url) {
            resp.headers_mut().insert(header::LOCATION, v);
        }
        resp.headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        resp
    }

    pub(super) fn error(&self, issuer: &str, error: &str, description: &str) -> Response {
        self.redirect(
            issuer,
            &[("error", error), ("error_description", description)],
        )
    }
}

/// The origin of the client's redirect, for the pages' `form-action`.
pub(super) fn origin(uri: &str) -> String {
    url::Url::parse(uri)
        .map(|u| u.origin().ascii_serialization())
        .unwrap_or_else(|_| "'none'".into())
}

/// Where the sign-in page's forms may end up: the client's redirect, and the company
/// provider's pages when sign-in is federated.
pub(super) fn form_targets(s: &AuthServer, redirect_uri: &str) -> String {
    match &s.config.federation {
        Some(f) => format!("{} {}", origin(redirect_uri), origin(&f.issuer)),
        None => origin(redirect_uri),
    }
}

/// The ways to sign in this server offers.
pub(super) fn ways(s: &AuthServer) -> pages::SignInWays<'_> {
    pages::SignInWays {
        pat: s.config.pat_sign_in,
        federated: s
            .config
            .federation
            .as_ref()
            .map(|f| f.display_name.as_str()),
    }
}

/// What a page shows of the client: its name, logo and where the answer goes.
pub(super) fn describe(client: &ClientRecord, redirect_uri: &str) -> String {
    let host = url::Url::parse(redirect_uri)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_else(|| redirect_uri.to_string());
    pages::client_block(
        clients::display_name(client),
        client.metadata["logo_uri"].as_str(),
        &host,
    )
}

pub(super) async fn live_client(state: &AppState, id: &str) -> Result<ClientRecord, Response> {
    match server(state).client(state.registry.as_ref(), id).await {
        Ok(Some(c)) if c.blocked_at.is_none() => Ok(c),
        Ok(Some(_)) => Err(pages::error(
            StatusCode::FORBIDDEN,
            "this application is blocked by the gateway's administrator",
        )),
        Ok(None) => Err(pages::error(
            StatusCode::BAD_REQUEST,
            &format!("unknown client_id {id:?}: the application must register first"),
        )),
        Err(e @ ClientError::Document(_)) => {
            Err(pages::error(StatusCode::BAD_REQUEST, &e.to_string()))
        }
        Err(e @ ClientError::Unavailable) => Err(pages::error(
            StatusCode::SERVICE_UNAVAILABLE,
            &e.to_string(),
        )),
    }
}

/// `GET /oauth/authorize`: the request checked, then the sign-in page.
pub async fn start(State(state): State<AppState>, RawQuery(query): RawQuery) -> Response {
    let s = server(&state);
    let p = match params(query.as_deref().unwrap_or("")) {
        Ok(p) => p,
        Err(e) => return pages::error(StatusCode::BAD_REQUEST, &e),
    };
    let Some(client_id) = p.get("client_id") else {
        return pages::error(StatusCode::BAD_REQUEST, "the request names no client_id");
    };
    let client = match live_client(&state, client_id).await {
        Ok(c) => c,
        Err(page) => return page,
    };
    let registered = clients::redirect_uris(&client);
    let redirect_uri = match p.get("redirect_uri") {
        Some(r) => r.clone(),
        None if registered.len() == 1 => registered[0].clone(),
        None => return pages::error(StatusCode::BAD_REQUEST, "the request names no redirect_uri"),
    };
    if !clients::redirect_matches(&registered, &redirect_uri) {
        return pages::error(
            StatusCode::BAD_REQUEST,
            "the redirect_uri is not one this application registered",
        );
    }
    let mut req = Request {
        client_id: client_id.clone(),
        redirect_uri,
        state: p.get("state").cloned(),
        scope: String::new(),
        challenge: String::new(),
        resource: String::new(),
    };
    let iss = &s.config.issuer;
    if p.get("response_type").map(String::as_str) != Some("code") {
        return req.error(
            iss,
            "unsupported_response_type",
            "response_type must be code",
        );
    }
    match (p.get("code_challenge"), p.get("code_challenge_method")) {
        (Some(c), Some(m)) if m == "S256" && is_pkce_value(c) => req.challenge = c.clone(),
        (Some(_), Some(m)) if m != "S256" => {
            return req.error(iss, "invalid_request", "code_challenge_method must be S256")
        }
        (Some(_), None) => {
            return req.error(
                iss,
                "invalid_request",
                "code_challenge_method is required and must be S256 (plain is not accepted)",
            )
        }
        _ => {
            return req.error(
                iss,
                "invalid_request",
                "PKCE is required: code_challenge (43-128 characters) with method S256",
            )
        }
    }
    req.scope = match scope_of(s, &client, p.get("scope").map(String::as_str)) {
        Ok(sc) => sc,
        Err(e) => return req.error(iss, "invalid_scope", &e),
    };
    req.resource = p
        .get("resource")
        .cloned()
        .unwrap_or_else(|| s.resource.clone());
    if !s.serves(&req.resource) {
        return req.error(
            iss,
            "invalid_target",
            &format!("this server issues tokens for {} only", s.resource),
        );
    }
    let csrf = random_secret();
    let expires = now_ms() + s.config.page_ttl.as_millis() as i64;
    let ticket = match s.keys.seal(&req.to_value(&csrf, expires)) {
        Ok(t) => t,
        Err(_) => {
            return pages::error(
                StatusCode::SERVICE_UNAVAILABLE,
                "the gateway cannot sign in anyone right now",
            )
        }
    };
    let mut page = pages::sign_in(
        &describe(&client, &req.redirect_uri),
        &ticket,
        None,
        &form_targets(s, &req.redirect_uri),
        &ways(s),
    );
    super::set_cookie(
        s,
        &mut page,
        CSRF_COOKIE,
        &csrf,
        s.config.page_ttl.as_secs(),
    );
    page
}

/// A PKCE value: 43-128 unreserved characters (RFC 7636 §4.1-4.2).
pub fn is_pkce_value(v: &str) -> bool {
    (43..=128).contains(&v.len())
        && v.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// The scope granted: what was asked, if the server offers it and the client registered it;
/// else the server's first scope.
fn scope_of(s: &AuthServer, client: &ClientRecord, asked: Option<&str>) -> Result<String, String> {
    let Some(asked) = asked.filter(|a| !a.trim().is_empty()) else {
        return Ok(s.config.scopes[0].clone());
    };
    let registered: Option<Vec<&str>> = client.metadata["scope"]
        .as_str()
        .map(|r| r.split(' ').collect());
    let mut out: Vec<&str> = Vec::new();
    for want in asked.split(' ').filter(|w| !w.is_empty()) {
        if !s.config.scopes.iter().any(|k| k == want) {
            return Err(format!(
                "scope {want:?} is not offered ({})",
                s.config.scopes.join(" ")
            ));
        }
        if registered.as_ref().is_some_and(|r| !r.contains(&want)) {
            return Err(format!("scope {want:?} is not one this client registered"));
        }
        if !out.contains(&want) {
            out.push(want);
        }
    }
    Ok(out.join(" "))
}

fn csrf_cookie(headers: &HeaderMap) -> Option<&str> {
    cookie(headers, CSRF_COOKIE)
}

/// The sealed request of a posted form: unexpired, and posted by the browser it was shown to.
/// Refused: the status and what the page says.
pub(super) fn opened(
    s: &AuthServer,
    headers: &HeaderMap,
    form: &HashMap<String, String>,
) -> Result<Value, (StatusCode, &'static str)> {
    let stale = (
        StatusCode::BAD_REQUEST,
        "this page is no longer valid (expired, changed, or opened in another browser); \
         start again from your application",
    );
    let ticket = form
        .get("ticket")
        .and_then(|t| s.keys.open(t))
        .ok_or(stale)?;
    if ticket["e"].as_i64().is_none_or(|e| e < now_ms()) {
        return Err(stale);
    }
    let sealed_csrf = ticket["x"].as_str().unwrap_or("");
    let sent = csrf_cookie(headers).unwrap_or("");
    if sealed_csrf.is_empty()
        || !crate::auth::pat::same_bytes(sealed_csrf.as_bytes(), sent.as_bytes())
    {
        return Err((
            StatusCode::FORBIDDEN,
            "this form was not sent from the page the gateway showed (its CSRF check failed)",
        ));
    }
    Ok(ticket)
}

/// A posted form of the pages and its sealed request, checked (see [`opened`]); else the page
/// that says why not.
async fn posted(
    s: &AuthServer,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<(HashMap<String, String>, Value), Response> {
    let form = params(&String::from_utf8_lossy(body))
        .map_err(|e| pages::error(StatusCode::BAD_REQUEST, &e))?;
    let ticket = opened(s, headers, &form).map_err(|(status, why)| pages::error(status, why))?;
    Ok((form, ticket))
}

/// `POST /oauth/authorize`: the sign-in form. A known user who consented to this client before
/// goes straight back to it with a code; else the consent page.
pub async fn sign_in(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    let s = server(&state);
    let (form, ticket) = match posted(s, &headers, &body).await {
        Ok(posted) => posted,
        Err(page) => return page,
    };
    let Some(req) = Request::from_value(&ticket) else {
        return pages::error(StatusCode::BAD_REQUEST, "the sign-in request is incomplete");
    };
    let client = match live_client(&state, &req.client_id).await {
        Ok(c) => c,
        Err(page) => return page,
    };
    let described = describe(&client, &req.redirect_uri);
    let target = origin(&req.redirect_uri);
    let retry = |problem: &str| {
        let mut page = pages::sign_in(
            &described,
            &form["ticket"],
            Some(problem),
            &form_targets(s, &req.redirect_uri),
            &ways(s),
        );
        page.headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        page
    };
    if !s.config.pat_sign_in {
        return retry("sign-in with a personal access token is off on this gateway");
    }
    let pat = form.get("pat").map(|p| p.trim()).unwrap_or("");
    let rec = match state.auth.tokens.check(&state.registry, pat).await {
        Ok(rec) => rec,
        Err(crate::auth::pat::Refusal::Unavailable) => {
            return retry("the gateway cannot check tokens right now; try again in a moment")
        }
        Err(_) => {
            audit(
                &state,
                "anonymous",
                "oauth.sign_in",
                &req.client_id,
                "refused",
            )
            .await;
            return retry("that token is not valid (unknown, revoked or expired)");
        }
    };
    // The user is the token's owner: the same name their personal tokens carry.
    let user = json!({"key": rec.owner, "roles": rec.roles, "via": format!("pat:{}", rec.id)});
    signed_in(&state, s, &req, &ticket, user, &described, &target).await
}

/// After sign-in (by either way): straight back to the client with a code when the user gave
/// this client consent for these scopes before, else the consent page. `user`: `key` (the
/// subject), `roles`, `via` (how they signed in).
pub(super) async fn signed_in(
    state: &AppState,
    s: &AuthServer,
    req: &Request,
    ticket: &Value,
    user: Value,
    described: &str,
    target: &str,
) -> Response {
    let subject = user["key"].as_str().unwrap_or("").to_string();
    let consented = state
        .registry
        .consent(&subject, &req.client_id)
        .await
        .ok()
        .flatten()
        .is_some_and(|had| req.scope.split(' ').all(|w| had.split(' ').any(|h| h == w)));
    if consented {
        return grant_and_redirect(state, s, req, ticket, &user).await;
    }
    let csrf = ticket["x"].as_str().unwrap_or("").to_string();
    let mut sealed = req.to_value(&csrf, ticket["e"].as_i64().unwrap_or(0));
    sealed["u"] = user;
    let Ok(next) = s.keys.seal(&sealed) else {
        return pages::error(
            StatusCode::SERVICE_UNAVAILABLE,
            "the gateway cannot sign in anyone right now",
        );
    };
    let scopes: Vec<&str> = req.scope.split(' ').collect();
    pages::consent(described, &subject, &scopes, &next, target)
}

/// `POST /oauth/consent`: allow (a grant and a code) or deny (`access_denied`).
pub async fn consent(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    let s = server(&state);
    let (form, ticket) = match posted(s, &headers, &body).await {
        Ok(posted) => posted,
        Err(page) => return page,
    };
    let (Some(req), Some(user)) = (Request::from_value(&ticket), ticket.get("u")) else {
        return pages::error(StatusCode::BAD_REQUEST, "the consent request is incomplete");
    };
    if let Err(page) = live_client(&state, &req.client_id).await {
        return page;
    }
    let key = user["key"].as_str().unwrap_or("");
    if form.get("decision").map(String::as_str) != Some("allow") {
        audit(&state, key, "oauth.consent", &req.client_id, "denied").await;
        return req.error(&s.config.issuer, "access_denied", "the user denied access");
    }
    if let Err(e) = state
        .registry
        .put_consent(key, &req.client_id, &req.scope)
        .await
    {
        tracing::warn!(error = %e, "cannot store a consent");
        return pages::error(
            StatusCode::SERVICE_UNAVAILABLE,
            "the gateway cannot store your answer right now; try again",
        );
    }
    grant_and_redirect(&state, s, &req, &ticket, user).await
}

/// A new grant for the signed-in user, and the client's redirect with a code for it. The
/// request's forms (`ticket`: its CSRF value and expiry) end in one code: a form posted again
/// (a double click, the back button, a replay from the same browser) gets a page, not a second
/// code.
async fn grant_and_redirect(
    state: &AppState,
    s: &AuthServer,
    req: &Request,
    ticket: &Value,
    user: &Value,
) -> Response {
    let key = user["key"].as_str().unwrap_or("").to_string();
    if state.dispatcher.audit.admit().is_err() {
        return req.error(
            &s.config.issuer,
            "temporarily_unavailable",
            "the audit log cannot be written right now; try again shortly",
        );
    }
    let form = hashed(&format!(
        "{}|{}",
        ticket["x"].as_str().unwrap_or(""),
        req.challenge
    ));
    let expires = ticket["e"].as_i64().unwrap_or(0);
    match state.registry.spend_form(&form, expires, now_ms()).await {
        Ok(true) => {}
        Ok(false) => {
            audit(
                state,
                &key,
                "oauth.replay",
                &req.client_id,
                "form posted again",
            )
            .await;
            return pages::error(
                StatusCode::BAD_REQUEST,
                "this sign-in was already completed; start again from your application",
            );
        }
        Err(e) => {
            tracing::warn!(error = %e, "cannot record a sign-in form");
            return req.error(
                &s.config.issuer,
                "temporarily_unavailable",
                "the sign-in cannot be recorded right now",
            );
        }
    }
    let grant = GrantRecord {
        id: uuid::Uuid::new_v4().simple().to_string(),
        subject: key.clone(),
        client_id: req.client_id.clone(),
        roles: serde_json::from_value(user["roles"].clone()).unwrap_or_default(),
        scope: req.scope.clone(),
        resource: req.resource.clone(),
        signed_in_with: user["via"].as_str().unwrap_or("").to_string(),
        created_at: now_ms(),
        revoked_at: None,
    };
    let code = random_secret();
    let stored = async {
        state.registry.create_grant(&grant).await?;
        state
            .registry
            .create_code(
                &hashed(&code),
                &CodeRecord {
                    grant_id: grant.id.clone(),
                    redirect_uri: req.redirect_uri.clone(),
                    code_challenge: req.challenge.clone(),
                    expires_at: now_ms() + s.config.code_ttl.as_millis() as i64,
                },
            )
            .await
    }
    .await;
    if let Err(e) = stored {
        tracing::warn!(error = %e, "cannot store a grant");
        return req.error(
            &s.config.issuer,
            "temporarily_unavailable",
            "the grant cannot be stored right now",
        );
    }
    audit(state, &key, "oauth.grant", &req.client_id, "ok").await;
    req.redirect(&s.config.issuer, &[("code", &code)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_appear_once_and_pkce_values_have_their_shape() {
        assert!(params("a=1&b=2").is_ok());
        assert!(params("a=1&a=2").is_err());
        assert!(is_pkce_value(&"a".repeat(43)));
        assert!(!is_pkce_value(&"a".repeat(42)));
        assert!(!is_pkce_value(&"a".repeat(129)));
        assert!(!is_pkce_value(&format!("{}+", "a".repeat(43))));
    }

    #[test]
    fn the_csrf_cookie_is_read_among_others() {
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; mcpgw_oauth_csrf=xyz; b=2"),
        );
        assert_eq!(csrf_cookie(&h), Some("xyz"));
    }
}
