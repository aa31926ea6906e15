//! The HTTP side of authentication: a layer that turns the bearer token into a [`Principal`]
//! (a request extension) or answers 401 / 403 / 429 / 503 with the headers the MCP
//! authorization spec asks for, and the Protected Resource Metadata document (RFC 9728).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use super::dpop::Refused;
use super::{AuthError, Principal};
use crate::protocol::{jsonrpc, McpError};
use crate::state::AppState;

const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// The access token a request carries, and whether it came with the DPoP scheme.
fn presented(headers: &HeaderMap) -> Option<(&str, bool)> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = v.split_once(' ')?;
    let token = token.trim();
    if token.is_empty() {
        return None;
    }
    match scheme {
        s if s.eq_ignore_ascii_case("bearer") => Some((token, false)),
        s if s.eq_ignore_ascii_case("dpop") => Some((token, true)),
        _ => None,
    }
}

/// A request's method and path, which a DPoP proof must name.
#[derive(Clone, Copy)]
pub struct Target<'r> {
    pub method: &'r str,
    pub path: &'r str,
}

/// A token bound to a key (DPoP) must come with the DPoP scheme and a proof for this request
/// signed by that key; an unbound one with the bearer scheme.
async fn proven(
    state: &AppState,
    headers: &HeaderMap,
    target: Target<'_>,
    (token, dpop): (&str, bool),
    p: &Principal,
) -> Result<(), AuthError> {
    let invalid = |m: &str| AuthError::InvalidToken(m.to_string());
    match (dpop, p.bound_to.as_deref()) {
        (false, None) => Ok(()),
        (false, Some(_)) => Err(invalid(
            "the token is bound to a key (DPoP): send it as `Authorization: DPoP` with a proof",
        )),
        (true, None) => Err(invalid(
            "the token is not bound to a key: send it as `Authorization: Bearer`",
        )),
        (true, Some(jkt)) => {
            let mut proofs = headers.get_all("dpop").iter();
            let (Some(proof), None) = (proofs.next(), proofs.next()) else {
                return Err(invalid("a DPoP token needs exactly one DPoP proof header"));
            };
            let proof = proof
                .to_str()
                .map_err(|_| invalid("the DPoP proof is not text"))?;
            // The URL the host called: under `/mcp`, the resource's own (which keeps a path a
            // proxy in front may add), else the resource's origin with the path.
            let resource = resource_url(state, headers);
            let htu = match target.path.strip_prefix("/mcp") {
                Some(rest) => format!("{}{rest}", resource.trim_end_matches('/')),
                None => format!("{}{}", origin_of(&resource), target.path),
            };
            let key = state
                .auth
                .proofs
                .check_everywhere(
                    state.registry.as_ref(),
                    proof,
                    target.method,
                    &htu,
                    Some(token),
                )
                .await
                .map_err(|r| match r {
                    Refused::Proof(why) => AuthError::InvalidToken(why),
                    Refused::StoreUnavailable => AuthError::Unavailable,
                })?;
            match key == jkt {
                true => Ok(()),
                false => Err(invalid(
                    "the DPoP proof is signed by another key than the token's",
                )),
            }
        }
    }
}

/// The gateway's resource URL: configured, or what the request reached.
fn resource_url(state: &AppState, headers: &HeaderMap) -> String {
    if let Some(r) = &state.config.auth.resource {
        return r.clone();
    }
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost");
    let scheme = headers
        .get("x-forwarded-proto")
        .and_then(|h| h.to_str().ok())
        .unwrap_or("http");
    format!("{scheme}://{host}/mcp")
}

/// Where the metadata of `resource` is: the well-known path inserted before the resource's path.
fn metadata_url(resource: &str) -> String {
    let start = resource.find("://").map_or(0, |i| i + 3);
    match resource[start..].find('/') {
        Some(i) => {
            let (origin, path) = resource.split_at(start + i);
            format!("{origin}{METADATA_PATH}{}", path.trim_end_matches('/'))
        }
        None => format!("{resource}{METADATA_PATH}"),
    }
}

/// `https://host:port` of a URL.
fn origin_of(url: &str) -> &str {
    let start = url.find("://").map_or(0, |i| i + 3);
    url[start..].find('/').map_or(url, |i| &url[..start + i])
}

fn quote(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "'")
}

/// The one place an [`AuthError`] becomes a response (and is counted).
pub fn refuse(state: &AppState, headers: &HeaderMap, e: &AuthError) -> Response {
    state
        .dispatcher
        .metrics
        .auth_refused
        .with_label_values(&[e.label()])
        .inc();
    let meta = metadata_url(&resource_url(state, headers));
    // A host that sent a DPoP token hears the DPoP scheme (and that the gateway knows it).
    let scheme = match presented(headers) {
        Some((_, true)) => "DPoP algs=\"ES256\",",
        _ => "Bearer",
    };
    let challenge = match e {
        AuthError::Missing => Some(format!("Bearer resource_metadata=\"{meta}\"")),
        AuthError::InvalidToken(m) => Some(format!(
            "{scheme} error=\"invalid_token\", error_description=\"{}\", resource_metadata=\"{meta}\"",
            quote(m)
        )),
        AuthError::InsufficientScope => Some(format!(
            "{scheme} error=\"insufficient_scope\", scope=\"{}\", resource_metadata=\"{meta}\"",
            quote(&state.config.auth.required_scopes.join(" "))
        )),
        _ => None,
    };
    let mut resp = McpError::from(e).into_response();
    if let Some(c) = challenge.and_then(|c| HeaderValue::from_str(&c).ok()) {
        resp.headers_mut().insert(header::WWW_AUTHENTICATE, c);
    }
    match e {
        AuthError::RateLimited(secs) => {
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(*secs));
        }
        AuthError::Unavailable => {
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(5u64));
        }
        _ => {}
    }
    resp
}

async fn principal_of(
    state: &AppState,
    headers: &HeaderMap,
    target: Target<'_>,
) -> Result<Arc<Principal>, AuthError> {
    let presented = presented(headers);
    let p = state.auth.authenticate(presented.map(|(t, _)| t)).await?;
    if let Some(presented) = presented.filter(|_| state.auth.required()) {
        proven(state, headers, target, presented, &p).await?;
    }
    if let Err(wait) = state.auth.limits.check(p.key()) {
        return Err(AuthError::RateLimited(
            wait.as_secs_f64().ceil().max(1.0) as u64
        ));
    }
    Ok(p)
}

/// In front of the routing API: every request names its principal.
pub async fn require_principal(
    State(state): State<AppState>,
    mut req: Request,
    next: Next,
) -> Response {
    let target = Target {
        method: req.method().as_str(),
        path: req.uri().path(),
    };
    match principal(&state, req.headers(), target).await {
        Ok(p) => {
            req.extensions_mut().insert(p);
            next.run(req).await
        }
        Err(refused) => refused,
    }
}

/// The caller of a request, or the response that says why it may not call.
pub async fn principal(
    state: &AppState,
    headers: &HeaderMap,
    target: Target<'_>,
) -> Result<Arc<Principal>, Response> {
    principal_of(state, headers, target)
        .await
        .map_err(|e| refuse(state, headers, &e))
}

/// In front of the admin API: the admin right.
pub async fn require_admin(
    State(state): State<AppState>,
    mut req: Request,
    next: Next,
) -> Response {
    let target = Target {
        method: req.method().as_str(),
        path: req.uri().path(),
    };
    match principal_of(&state, req.headers(), target).await {
        Ok(p) if p.access.admin() => {
            req.extensions_mut().insert(p);
            next.run(req).await
        }
        Ok(_) => refuse(&state, req.headers(), &AuthError::Forbidden),
        Err(e) => refuse(&state, req.headers(), &e),
    }
}

/// What a host hears of a refusal (its status and code; the challenge headers come on top).
impl From<&AuthError> for McpError {
    fn from(e: &AuthError) -> Self {
        let (status, code) = match e {
            AuthError::Missing | AuthError::InvalidToken(_) => {
                (axum::http::StatusCode::UNAUTHORIZED, jsonrpc::UNAUTHORIZED)
            }
            AuthError::InsufficientScope | AuthError::Forbidden => {
                (axum::http::StatusCode::FORBIDDEN, jsonrpc::UNAUTHORIZED)
            }
            AuthError::Unavailable => (
                axum::http::StatusCode::SERVICE_UNAVAILABLE,
                jsonrpc::UPSTREAM_UNAVAILABLE,
            ),
            AuthError::RateLimited(_) => (
                axum::http::StatusCode::TOO_MANY_REQUESTS,
                jsonrpc::RATE_LIMITED,
            ),
        };
        Self::new(code, e.to_string()).with_status(status)
    }
}

impl AuthError {
    /// A bounded label for metrics.
    pub fn label(&self) -> &'static str {
        match self {
            AuthError::Missing => "missing",
            AuthError::InvalidToken(_) => "invalid_token",
            AuthError::InsufficientScope => "insufficient_scope",
            AuthError::Forbidden => "forbidden",
            AuthError::Unavailable => "unavailable",
            AuthError::RateLimited(_) => "rate_limited",
        }
    }
}

/// Protected Resource Metadata (RFC 9728): which authorization servers issue tokens for the
/// gateway, and which scopes it knows.
///
/// RFC 9728 §3.3: the `resource` a document names is the one its URL was made from, so the root
/// document (`/.well-known/oauth-protected-resource`) names the origin and the one under `/mcp`
/// names `…/mcp`, the resource whose tokens the gateway accepts (and which its 401s point to).
pub async fn resource_metadata(
    State(state): State<AppState>,
    uri: axum::http::Uri,
    headers: HeaderMap,
) -> Response {
    if !state.auth.required() {
        // The REST error shape, like every other endpoint that is not MCP's.
        return crate::admin::error::AdminError::NotFound(
            "no protected resource metadata: authentication is off (auth.mode = none)".into(),
        )
        .into_response();
    }
    let a = &state.config.auth;
    Json(json!({
        "resource": if uri.path() == METADATA_PATH {
            origin_of(&resource_url(&state, &headers)).to_string()
        } else {
            resource_url(&state, &headers)
        },
        // The gateway's own authorization server first: hosts take the first they can use.
        "authorization_servers": state.auth.server.iter().map(|s| s.config.issuer.clone())
            .chain(a.issuers.iter().map(|i| i.issuer.clone()))
            .collect::<Vec<_>>(),
        "scopes_supported": match &state.auth.server {
            Some(s) => s.config.scopes.clone(),
            None => a.required_scopes.clone(),
        },
        "bearer_methods_supported": ["header"],
        "dpop_signing_alg_values_supported": super::dpop::ALGORITHMS,
        "resource_name": "MCP Gateway",
    }))
    .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_url_inserts_the_well_known_path() {
        assert_eq!(
            metadata_url("https://gw.example.com/mcp"),
            "https://gw.example.com/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            metadata_url("https://gw.example.com"),
            "https://gw.example.com/.well-known/oauth-protected-resource"
        );
    }

    #[test]
    fn origins() {
        assert_eq!(
            origin_of("https://gw.example.com/mcp"),
            "https://gw.example.com"
        );
        assert_eq!(origin_of("http://127.0.0.1:8/a/b"), "http://127.0.0.1:8");
        assert_eq!(
            origin_of("https://gw.example.com"),
            "https://gw.example.com"
        );
    }

    #[test]
    fn bearer_and_dpop_tokens_are_read_case_insensitively() {
        let mut h = HeaderMap::new();
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("bearer abc"),
        );
        assert_eq!(presented(&h), Some(("abc", false)));
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("DPoP abc"));
        assert_eq!(presented(&h), Some(("abc", true)));
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("Basic abc"));
        assert_eq!(presented(&h), None);
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer  "));
        assert_eq!(presented(&h), None);
    }
}
