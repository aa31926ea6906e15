//! Who opens a connect link. A link is a bearer link: sent on to someone else (by mistake, or
//! by someone who wants the other's account), it would connect the opener's account at the
//! upstream to the user who asked for it, and that user would then call the upstream as the
//! opener. So before the browser goes to the upstream's authorization server, whoever opened
//! the link signs in to the gateway (a personal access token, or the company's provider of
//! `[auth.server.oidc]`) and goes on only as the principal the link was made for (MCP
//! 2025-11-25, URL mode elicitation: the server checks that the user who completes the
//! interaction is the user it asked).
//!
//! The page's forms carry a CSRF value that must equal its cookie: a sign-in posted from
//! another site (which would start the flow in someone's browser as the poster) is refused. A
//! sign-in here ([`super::confirmed`]) is remembered for ten minutes in a sealed cookie, and
//! the browser goes on by following the link again: a form's redirect may not leave for the
//! upstream's server (the pages' `form-action`), a link may.

use std::collections::HashMap;

use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;

use super::confirmed::{
    record, signed_in, signed_in_as, user_of, Proof, CSRF_COOKIE, SIGNED_IN_SECS,
};
use super::pages::{onward, set_cookie, ConnectQuery};
use super::vault::CONNECT_PATH;
use crate::auth::pat::same_bytes;
use crate::auth::server::pages::{error, escape, page};
use crate::auth::server::{cookie, random_secret};
use crate::auth::Principal;
use crate::state::AppState;

/// How the principal `by` can show who they are here: with a token, and at the company's
/// provider (its name).
struct Ways {
    pat: bool,
    federated: Option<String>,
}

fn ways(state: &AppState, by: &str) -> Ways {
    // Whether `by` is a principal of `kind` (and `issuer`), whoever its subject.
    let of =
        |kind: &str, issuer: Option<&str>| by.starts_with(&Principal::key_of(kind, issuer, ""));
    let server = state.auth.server.as_ref();
    let through_server = server.is_some_and(|s| of("oauth", Some(&s.config.issuer)));
    Ways {
        pat: of("pat", None) || (through_server && server.is_some_and(|s| s.config.pat_sign_in)),
        federated: server
            .and_then(|s| s.config.federation.as_ref())
            .filter(|f| through_server || of("oauth", Some(&f.issuer)))
            .map(|f| f.display_name.clone()),
    }
}

/// Whether whoever opens a link of `by` must show that they are `by`.
fn must_confirm(state: &AppState, by: &str) -> bool {
    by != "anonymous" && state.config.user_credentials.confirm_links
}

/// `GET /oauth/upstream/connect`: on to the upstream's authorization server when the browser
/// signed in here as the link's principal (or there is nobody to confirm), else the page that
/// asks who it is.
pub async fn connect(
    State(state): State<AppState>,
    Query(q): Query<ConnectQuery>,
    headers: HeaderMap,
) -> Response {
    let (upstream, by) = match state.hub.upstreams.vault.link_of(&q.ticket) {
        Ok(link) => link,
        Err(e) => return error(StatusCode::BAD_REQUEST, &e),
    };
    if !must_confirm(&state, &by) || signed_in_as(&state, &headers).contains(&by) {
        return onward(&state, &q.ticket).await;
    }
    ask(&state, &q.ticket, &upstream, &by, None)
}

/// The page that asks who opened the link, with the ways `by` can sign in here.
fn ask(
    state: &AppState,
    ticket: &str,
    upstream: &str,
    by: &str,
    problem: Option<&str>,
) -> Response {
    let ways = ways(state, by);
    let who = escape(user_of(by));
    let up = escape(upstream);
    if !ways.pat && ways.federated.is_none() {
        return error(
            StatusCode::FORBIDDEN,
            &format!(
                "this gateway cannot check in a browser that you are {} (signed in with another \
                 provider's tokens), so the link cannot be used; an administrator can configure \
                 that provider as [auth.server.oidc], or turn user_credentials.confirm_links off",
                user_of(by)
            ),
        );
    }
    let csrf = random_secret();
    let ticket = escape(ticket);
    let problem = problem
        .map(|p| format!("<p class=\"error\">{}</p>", escape(p)))
        .unwrap_or_default();
    let federated = ways
        .federated
        .map(|name| {
            format!(
                "<form method=\"post\" action=\"{CONNECT_PATH}\">\
                 <input type=\"hidden\" name=\"ticket\" value=\"{ticket}\">\
                 <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
                 <input type=\"hidden\" name=\"way\" value=\"federated\">\
                 <button type=\"submit\" id=\"federated\">Sign in with {}</button></form>",
                escape(&name)
            )
        })
        .unwrap_or_default();
    let pat = if ways.pat {
        format!(
            "<form method=\"post\" action=\"{CONNECT_PATH}\">\
             <input type=\"hidden\" name=\"ticket\" value=\"{ticket}\">\
             <input type=\"hidden\" name=\"csrf\" value=\"{csrf}\">\
             <label for=\"pat\">Personal access token</label>\
             <input id=\"pat\" name=\"pat\" type=\"password\" autocomplete=\"off\" required>\
             <button type=\"submit\">Sign in</button></form>"
        )
    } else {
        String::new()
    };
    let body = format!(
        "<h1>Connect your account at {up}</h1>\
         <p>This link connects an account at <b>{up}</b> to the gateway user <b>{who}</b>. \
         Sign in to the gateway as {who} to go on.</p>\
         <p class=\"note\">If someone sent you this link, close this page: going on would let \
         them use your account.</p>{problem}{federated}{pat}"
    );
    let target = state
        .auth
        .server
        .as_ref()
        .and_then(|s| s.config.federation.as_ref())
        .and_then(|f| url::Url::parse(&f.issuer).ok())
        .map(|u| u.origin().ascii_serialization());
    let mut resp = page(
        StatusCode::OK,
        "Connect your account",
        &body,
        target.as_deref(),
    );
    set_cookie(&mut resp, state, CSRF_COOKIE, &csrf, SIGNED_IN_SECS);
    resp
}

/// `POST /oauth/upstream/connect`: the page's sign-in, with a token or at the company's
/// provider.
pub async fn sign_in(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    let form: HashMap<String, String> = url::form_urlencoded::parse(&body).into_owned().collect();
    let ticket = form.get("ticket").map(String::as_str).unwrap_or("");
    let (upstream, by) = match state.hub.upstreams.vault.link_of(ticket) {
        Ok(link) => link,
        Err(e) => return error(StatusCode::BAD_REQUEST, &e),
    };
    let sent = form.get("csrf").map(String::as_str).unwrap_or("");
    let kept = cookie(&headers, CSRF_COOKIE).unwrap_or("");
    if sent.is_empty() || !same_bytes(sent.as_bytes(), kept.as_bytes()) {
        return error(
            StatusCode::FORBIDDEN,
            "this form was not sent from the page the gateway showed (its CSRF check failed)",
        );
    }
    let ways = ways(&state, &by);
    if form.get("way").map(String::as_str) == Some("federated") {
        return match ways.federated {
            Some(_) => crate::auth::server::federation::confirm_link(&state, ticket).await,
            None => error(
                StatusCode::BAD_REQUEST,
                "this sign-in is not offered for this link",
            ),
        };
    }
    if !ways.pat {
        return error(
            StatusCode::BAD_REQUEST,
            "this sign-in is not offered for this link",
        );
    }
    let pat = form.get("pat").map(|p| p.trim()).unwrap_or("");
    match state.auth.tokens.check(&state.registry, pat).await {
        Ok(rec) => signed_in(&state, ticket, Proof::Pat(&rec.owner)).await,
        Err(crate::auth::pat::Refusal::Unavailable) => ask(
            &state,
            ticket,
            &upstream,
            &by,
            Some("the gateway cannot check tokens right now; try again in a moment"),
        ),
        Err(_) => {
            record(&state, "anonymous", &upstream, &by, "refused").await;
            ask(
                &state,
                ticket,
                &upstream,
                &by,
                Some("that token is not valid (unknown, revoked or expired)"),
            )
        }
    }
}
