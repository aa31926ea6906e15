//! The sign-in, consent and error pages: plain HTML forms that work without JavaScript, every
//! value from a client or a user escaped, served with a strict Content-Security-Policy (no
//! script at all; the one stylesheet allowed by its hash), no framing, no referrer, no caching.

use std::sync::OnceLock;

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use sha2::{Digest, Sha256};

const CSS: &str = "body{font:16px system-ui,sans-serif;max-width:28rem;margin:3rem auto;\
padding:0 1rem;color:#1b1f24}h1{font-size:1.4rem}.client{display:flex;gap:.75rem;\
align-items:center}.client img{width:48px;height:48px}.note{color:#57606a;font-size:.9rem}\
.error{color:#b42318}label{display:block;margin:1rem 0 .25rem}input[type=password]{width:100%;\
padding:.5rem;box-sizing:border-box}button{margin:1rem .5rem 0 0;padding:.5rem 1rem}\
code{overflow-wrap:anywhere}";

/// The CSP source of [`CSS`]: its hash, so no other style applies.
fn style_hash() -> &'static str {
    static HASH: OnceLock<String> = OnceLock::new();
    HASH.get_or_init(|| {
        let digest = Sha256::digest(CSS.as_bytes());
        format!(
            "'sha256-{}'",
            base64::engine::general_purpose::STANDARD.encode(digest)
        )
    })
}

/// Text for HTML: every character that could open markup or leave an attribute escaped.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A page: `body` is already HTML. `form_target`: the origin a form on the page may end up at
/// after the gateway's redirect (browsers apply `form-action` to redirects too).
pub fn page(status: StatusCode, title: &str, body: &str, form_target: Option<&str>) -> Response {
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{CSS}</style></head><body>{body}</body></html>",
        escape(title)
    );
    let form_action = match form_target {
        Some(origin) => format!("'self' {origin}"),
        None => "'self'".into(),
    };
    let csp = format!(
        "default-src 'none'; style-src {}; img-src https:; form-action {form_action}; \
         frame-ancestors 'none'; base-uri 'none'",
        style_hash()
    );
    let mut resp = (status, html).into_response();
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    if let Ok(v) = HeaderValue::from_str(&csp) {
        h.insert(header::CONTENT_SECURITY_POLICY, v);
    }
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    resp
}

/// A request that cannot go back to its client (unknown client, a redirect URI that does not
/// match): said here, never redirected.
pub fn error(status: StatusCode, message: &str) -> Response {
    page(
        status,
        "Sign-in stopped",
        &format!(
            "<h1>Sign-in stopped</h1><p class=\"error\">{}</p>\
             <p class=\"note\">Nothing was shared. Close this page and start again from your \
             application.</p>",
            escape(message)
        ),
        None,
    )
}

/// Who is asking: the client's name, logo (https only) and where it sends the answer.
pub fn client_block(name: &str, logo: Option<&str>, redirect_host: &str) -> String {
    let logo = logo
        .filter(|l| l.starts_with("https://"))
        .map(|l| format!("<img src=\"{}\" alt=\"\">", escape(l)))
        .unwrap_or_default();
    format!(
        "<div class=\"client\">{logo}<div><strong>{}</strong><br>\
         <span class=\"note\">returns to <code>{}</code></span></div></div>",
        escape(name),
        escape(redirect_host)
    )
}

/// The ways a user may sign in, as the sign-in page offers them.
pub struct SignInWays<'a> {
    pub pat: bool,
    /// The company provider's name, for its button.
    pub federated: Option<&'a str>,
}

/// The sign-in page: a button for the company's provider, a personal access token, or both.
pub fn sign_in(
    client: &str,
    ticket: &str,
    problem: Option<&str>,
    target: &str,
    ways: &SignInWays<'_>,
) -> Response {
    let problem = problem
        .map(|p| format!("<p class=\"error\">{}</p>", escape(p)))
        .unwrap_or_default();
    let ticket = escape(ticket);
    let federated = ways
        .federated
        .map(|name| {
            format!(
                "<form method=\"post\" action=\"/oauth/federate\">\
                 <input type=\"hidden\" name=\"ticket\" value=\"{ticket}\">\
                 <button type=\"submit\" id=\"federated\">Sign in with {}</button></form>",
                escape(name)
            )
        })
        .unwrap_or_default();
    let pat = if ways.pat {
        format!(
            "<form method=\"post\" action=\"/oauth/authorize\">\
             <input type=\"hidden\" name=\"ticket\" value=\"{ticket}\">\
             <label for=\"pat\">Personal access token</label>\
             <input id=\"pat\" name=\"pat\" type=\"password\" autocomplete=\"off\" required>\
             <button type=\"submit\">Sign in</button></form>\
             <p class=\"note\">An administrator gives you a token (<code>mcpgw_…</code>).</p>"
        )
    } else {
        String::new()
    };
    // A refused token shows the form again with the reason: a page like any other (200).
    page(
        StatusCode::OK,
        "Sign in to MCP Gateway",
        &format!("<h1>Sign in to MCP Gateway</h1>{client}{problem}{federated}{pat}"),
        Some(target),
    )
}

/// The consent page: who asks, for what, as whom.
pub fn consent(
    client: &str,
    subject: &str,
    scopes: &[&str],
    ticket: &str,
    target: &str,
) -> Response {
    let items: String = scopes
        .iter()
        .map(|s| format!("<li><code>{}</code></li>", escape(s)))
        .collect();
    page(
        StatusCode::OK,
        "Allow access?",
        &format!(
            "<h1>Allow access?</h1>{client}\
             <p>This application asks to use MCP Gateway as <strong>{}</strong>, with:</p>\
             <ul>{items}</ul>\
             <p class=\"note\">It can call the tools your roles allow until you or an \
             administrator revoke it.</p>\
             <form method=\"post\" action=\"/oauth/consent\">\
             <input type=\"hidden\" name=\"ticket\" value=\"{}\">\
             <button type=\"submit\" name=\"decision\" value=\"allow\">Allow</button>\
             <button type=\"submit\" name=\"decision\" value=\"deny\">Deny</button></form>",
            escape(subject),
            escape(ticket)
        ),
        Some(target),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_text_is_escaped_and_only_https_logos_load() {
        let b = client_block(
            "<script>alert(1)</script>",
            Some("javascript:alert(1)"),
            "\"><img src=x>",
        );
        assert!(!b.contains("<script>") && !b.contains("<img"), "{b}");
        assert!(client_block("x", Some("https://l.example/a.png"), "h")
            .contains("<img src=\"https://l.example/a.png\""));
    }
}
