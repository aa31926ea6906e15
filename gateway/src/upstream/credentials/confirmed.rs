//! What a sign-in on the connect pages ([`super::confirm`]) comes to: the principal keys a
//! token's owner or a subject of the company's provider has on `/mcp`, compared with the user
//! a connect link was made for; as that user, a sealed cookie that lets the link go on (and a
//! page to follow it), as anyone else a refusal. Audited either way
//! (`upstream.connect.confirm`). The company provider's callback comes here too
//! (`auth::server::federation`), so this module knows neither page.

use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use registry::{now_ms, AuditEntry};
use serde_json::json;

use super::pages::set_cookie;
use super::vault::CONNECT_PATH;
use crate::auth::server::cookie;
use crate::auth::server::pages::{error, escape, page};
use crate::auth::Principal;
use crate::state::AppState;

/// The CSRF cookie of the page that asks who opened a link.
pub(super) const CSRF_COOKIE: &str = "mcpgw_connect_csrf";
/// Who signed in on these pages, sealed.
const SIGNED_IN_COOKIE: &str = "mcpgw_connect_user";
/// How long a sign-in here opens links (as long as a link lives).
pub(super) const SIGNED_IN_SECS: i64 = 600;
/// What the sealed sign-in is for, so that nothing else sealed passes for it.
const SIGNED_IN_PURPOSE: &str = "connect-user";

/// What a browser proved about its user on these pages.
pub enum Proof<'a> {
    /// The owner of a personal access token.
    Pat(&'a str),
    /// A subject of the company's provider.
    Federated { issuer: &'a str, subject: &'a str },
}

impl Proof<'_> {
    /// The principal keys this user has on `/mcp`. A token's owner is `pat:{owner}`, and
    /// `oauth:{issuer}#{owner}` through this gateway's authorization server when it signs in
    /// with tokens; a subject of the company's provider is `oauth:{provider}#{subject}` with the
    /// provider's own tokens and `oauth:{issuer}#{subject}` through this gateway's server.
    pub(crate) fn keys(&self, server: Option<(&str, bool)>) -> Vec<String> {
        let key = Principal::key_of;
        match self {
            Proof::Pat(owner) => {
                let mut keys = vec![key("pat", None, owner)];
                if let Some((issuer, true)) = server {
                    keys.push(key("oauth", Some(issuer), owner));
                }
                keys
            }
            Proof::Federated { issuer, subject } => {
                let mut keys = vec![key("oauth", Some(issuer), subject)];
                if let Some((gateway, _)) = server {
                    keys.push(key("oauth", Some(gateway), subject));
                }
                keys
            }
        }
    }
}

/// This gateway's authorization server: its issuer, and whether it signs in with tokens.
pub(crate) fn server_of(state: &AppState) -> Option<(&str, bool)> {
    state
        .auth
        .server
        .as_ref()
        .map(|s| (s.config.issuer.as_str(), s.config.pat_sign_in))
}

/// The user part of a principal key, as a page names it.
pub(super) fn user_of(key: &str) -> &str {
    match key.strip_prefix("oauth:") {
        Some(rest) => rest.rsplit_once('#').map_or(rest, |(_, s)| s),
        None => key.split_once(':').map_or(key, |(_, s)| s),
    }
}

/// The principal keys the browser signed in as on these pages (none when it has not, or the
/// sign-in is over).
pub(super) fn signed_in_as(state: &AppState, headers: &HeaderMap) -> Vec<String> {
    cookie(headers, SIGNED_IN_COOKIE)
        .and_then(|c| state.hub.upstreams.vault.open(SIGNED_IN_PURPOSE, c))
        .filter(|v| v["e"].as_i64().is_some_and(|e| e >= now_ms()))
        .and_then(|v| serde_json::from_value(v["k"].clone()).ok())
        .unwrap_or_default()
}

/// The browser signed in here with `proof`: as the principal of the link `ticket`, the page
/// that goes on to the upstream (the sign-in kept in a cookie); as anyone else, a refusal.
pub async fn signed_in(state: &AppState, ticket: &str, proof: Proof<'_>) -> Response {
    let vault = &state.hub.upstreams.vault;
    let (upstream, by) = match vault.link_of(ticket) {
        Ok(link) => link,
        Err(e) => return error(StatusCode::BAD_REQUEST, &e),
    };
    let keys = proof.keys(server_of(state));
    if !keys.contains(&by) {
        record(state, &keys[0], &upstream, &by, "refused").await;
        return error(
            StatusCode::FORBIDDEN,
            &format!(
                "this link was made for another user ({}), and you signed in as {}: nothing was \
                 connected. If someone sent you this link, do not use it.",
                user_of(&by),
                user_of(&keys[0])
            ),
        );
    }
    record(state, &by, &upstream, &by, "ok").await;
    let Some(sealed) = vault.seal(
        SIGNED_IN_PURPOSE,
        &json!({"k": keys, "e": now_ms() + SIGNED_IN_SECS * 1000}),
    ) else {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            "the gateway cannot seal a sign-in (no user_credentials.key)",
        );
    };
    let link = format!("{CONNECT_PATH}?ticket={}", escape(ticket));
    let body = format!(
        "<h1>Signed in as {who}</h1><p>Go on to connect your account at <b>{up}</b>.</p>\
         <p><a id=\"continue\" href=\"{link}\">Continue to {up}</a></p>",
        who = escape(user_of(&by)),
        up = escape(&upstream)
    );
    let mut resp = page(StatusCode::OK, "Signed in", &body, None);
    set_cookie(&mut resp, state, SIGNED_IN_COOKIE, &sealed, SIGNED_IN_SECS);
    set_cookie(&mut resp, state, CSRF_COOKIE, "", 0);
    resp
}

/// An audit row of a sign-in on these pages: who signed in, for which upstream and whose link.
pub(super) async fn record(
    state: &AppState,
    principal: &str,
    upstream: &str,
    by: &str,
    outcome: &str,
) {
    state
        .dispatcher
        .audit
        .record(AuditEntry {
            at: now_ms(),
            principal: principal.into(),
            action: "upstream.connect.confirm".into(),
            upstream: Some(upstream.into()),
            target: Some(by.into()),
            outcome: outcome.into(),
            ..Default::default()
        })
        .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sign_in_stands_for_the_keys_its_user_has_on_mcp() {
        let gw = "https://gw.example";
        assert_eq!(Proof::Pat("ann").keys(None), ["pat:ann"]);
        assert_eq!(
            Proof::Pat("ann").keys(Some((gw, true))),
            ["pat:ann", "oauth:https://gw.example#ann"]
        );
        // A server that does not sign in with tokens gave no token's owner its subjects.
        assert_eq!(Proof::Pat("ann").keys(Some((gw, false))), ["pat:ann"]);
        let company = Proof::Federated {
            issuer: "https://idp.example",
            subject: "u-1",
        };
        assert_eq!(
            company.keys(Some((gw, false))),
            [
                "oauth:https://idp.example#u-1",
                "oauth:https://gw.example#u-1"
            ]
        );
        assert_eq!(user_of("oauth:https://idp.example#u-1"), "u-1");
        assert_eq!(user_of("pat:ann"), "ann");
        assert_eq!(user_of("pat:a#b"), "a#b");
    }
}
