//! The admin console at `/admin/`: static HTML, CSS and JavaScript compiled into the binary (no
//! Node at build or run time). The assets hold no data and need no token; everything they show
//! comes from the admin API and `/mcp` with the token the operator signs in with, so the console
//! can do nothing its user could not do with curl. It answers where the admin API does (loopback
//! unless `server.admin_remote`).

use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;

use crate::state::AppState;

const INDEX: &str = include_str!("../console/index.html");
const SCRIPT: &str = include_str!("../console/console.js");
const FORMS: &str = include_str!("../console/console-forms.js");
const CHARTS: &str = include_str!("../console/console-charts.js");
const STYLE: &str = include_str!("../console/console.css");

/// Only the console's own files run and are fetched; it is never framed (clickjacking).
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                   connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

fn asset(content_type: &'static str, body: &'static str) -> Response {
    let mut r = body.into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    // A new binary may bring new files: the browser asks each time (they are small).
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    r
}

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/admin", get(|| async { Redirect::permanent("/admin/") }))
        .route(
            "/admin/",
            get(|| async { asset("text/html; charset=utf-8", INDEX) }),
        )
        .route(
            "/admin/console.js",
            get(|| async { asset("text/javascript; charset=utf-8", SCRIPT) }),
        )
        .route(
            "/admin/console-forms.js",
            get(|| async { asset("text/javascript; charset=utf-8", FORMS) }),
        )
        .route(
            "/admin/console-charts.js",
            get(|| async { asset("text/javascript; charset=utf-8", CHARTS) }),
        )
        .route(
            "/admin/console.css",
            get(|| async { asset("text/css; charset=utf-8", STYLE) }),
        )
}
