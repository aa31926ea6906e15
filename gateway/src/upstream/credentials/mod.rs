//! Each user's own credentials at an upstream (an upstream's `user_oauth`): how the gateway
//! finds an upstream's authorization server and becomes its client, users' tokens sealed in
//! the store and used on their calls only, and the pages a user connects through.
//!
//! | module | holds |
//! |---|---|
//! | [`discovery`] | protected resource and authorization server metadata, 2025-03-26 fallbacks |
//! | [`enterprise`] | enterprise-managed upstreams: tokens from users' company sign-ins (ID-JAG) |
//! | [`managed`] | what token sources know of an enterprise-managed upstream |
//! | [`links`] | connect links: what they carry, sealed and opened |
//! | [`flow`] | registration, PKCE authorization, the answer's checks, code and refresh redemption |
//! | [`registration`] | the gateway's registrations at upstreams' servers, kept in the store |
//! | [`seal`] | the AEAD that seals tokens, links and states with `user_credentials.key` |
//! | [`vault`] | users' tokens: stored, refreshed, dropped; connect links and their answers |
//! | [`confirm`] | who opens a connect link: the page that asks them to sign in to the gateway |
//! | [`confirmed`] | what that sign-in comes to: the link goes on as its user, or is refused |
//! | [`pages`] | `/oauth/upstream/...`: connect, callback, a user's own connections |
//!
//! [`sign_in`] runs the whole flow against an MCP server, following the authorization server's
//! redirects as a browser would (`mcp-gateway upstream-login URL`): the official conformance
//! suite's client authorization scenarios judge it (`scripts/conformance-auth`).

pub mod confirm;
pub mod confirmed;
pub mod discovery;
pub mod enterprise;
pub mod flow;
mod links;
pub mod managed;
pub mod pages;
mod registration;
mod renewal;
pub mod seal;
pub mod vault;

use serde_json::{json, Value};

/// Where the authorization server sends its answer. Nothing listens there: [`sign_in`] stops
/// following redirects when one leads to it.
const REDIRECT_URI: &str = "http://127.0.0.1:1/oauth/callback";
/// Redirects followed on the authorization server's pages at most.
const MAX_REDIRECTS: usize = 10;
/// Authorizations tried for one request at most (a server that keeps asking for more scope).
const MAX_AUTHORIZATIONS: usize = 3;

/// How the gateway becomes a client of an upstream's authorization server, besides
/// registering (RFC 7591) when the server offers it.
#[derive(Debug, Clone, Default)]
pub struct ClientChoice {
    /// A client registered beforehand: its id and secret.
    pub preregistered: Option<(String, Option<String>)>,
    /// The https URL of the gateway's client ID metadata document, used as its `client_id` by
    /// servers that support such documents (the spec's preferred way).
    pub metadata_url: Option<String>,
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(std::time::Duration::from_secs(20))
        .build()
        .expect("http client")
}

/// The answer of an authorization request: its redirects followed until one leads to the
/// redirect URI.
async fn follow(http: &reqwest::Client, start: &str) -> Result<url::Url, String> {
    let mut at = url::Url::parse(start).map_err(|e| e.to_string())?;
    for _ in 0..MAX_REDIRECTS {
        let r = http
            .get(at.as_str())
            .send()
            .await
            .map_err(|e| format!("{at}: {e}"))?;
        let Some(location) = r.headers().get("location").and_then(|l| l.to_str().ok()) else {
            return Err(format!(
                "the authorization server answered {} without sending the user back",
                r.status()
            ));
        };
        let next = at.join(location).map_err(|e| e.to_string())?;
        if next.as_str().starts_with(REDIRECT_URI) {
            return Ok(next);
        }
        at = next;
    }
    Err("too many redirects".into())
}

/// One authorization: discovery from `challenge`, the client, the user's consent, the tokens.
async fn authorize(
    http: &reqwest::Client,
    server_url: &str,
    challenge: Option<&str>,
    choice: &ClientChoice,
) -> Result<(flow::Tokens, Value), String> {
    let d = discovery::discover(http, server_url, challenge, None).await?;
    let documents = d.metadata["client_id_metadata_document_supported"] == true;
    let client = match (&choice.preregistered, &choice.metadata_url) {
        (Some((id, secret)), _) => flow::preregistered(&d, id, secret.as_deref()),
        (None, Some(url)) if documents => flow::preregistered(&d, url, None),
        (None, _) if d.metadata["registration_endpoint"].is_string() => {
            flow::register(http, &d, REDIRECT_URI).await?
        }
        (None, _) => {
            return Err(
                "no way to become a client: no registration endpoint, no metadata \
                        document support, no client registered beforehand"
                    .into(),
            )
        }
    };
    let pending = flow::authorization(&d, &client, REDIRECT_URI)?;
    let answer = follow(http, &pending.url).await?;
    let code = flow::code_of(&d, &pending, &answer)?;
    let tokens = flow::redeem(http, &d, &client, &pending, &code).await?;
    let seen = json!({"issuer": d.issuer, "resource": d.resource, "scope": d.scope,
                      "client_id": client.client_id, "auth_method": client.auth_method});
    Ok((tokens, seen))
}

/// The `initialize` request the gateway sends as a client (id 1).
fn initialize_request() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "mcp-gateway", "version": env!("CARGO_PKG_VERSION")}}})
}

/// An MCP request to `server_url` with `token`: (status, challenge, session id, body). A
/// 2026-07-28 request (`modern`) carries its envelope in `_meta` and its method in a header.
async fn mcp(
    http: &reqwest::Client,
    server_url: &str,
    token: Option<&str>,
    session: Option<&str>,
    msg: &Value,
    modern: bool,
) -> Result<(u16, Option<String>, Option<String>, String), String> {
    use crate::protocol::envelope::{
        CLIENT_CAPS, CLIENT_INFO, METHOD_HEADER, PROTOCOL_VERSION, VERSION_HEADER,
    };
    let mut msg = msg.clone();
    let mut req = http
        .post(server_url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json");
    if modern {
        let stateless = crate::protocol::Revision::Stateless.as_str();
        msg["params"]["_meta"] = json!({
            PROTOCOL_VERSION: stateless,
            CLIENT_CAPS: {},
            CLIENT_INFO: {"name": "mcp-gateway", "version": env!("CARGO_PKG_VERSION")},
        });
        req = req
            .header(VERSION_HEADER, stateless)
            .header(METHOD_HEADER, msg["method"].as_str().unwrap_or(""));
    }
    let mut req = req.body(msg.to_string());
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    if let Some(s) = session {
        req = req
            .header("mcp-session-id", s)
            .header(VERSION_HEADER, "2025-11-25");
    }
    let r = req.send().await.map_err(|e| format!("{server_url}: {e}"))?;
    let status = r.status().as_u16();
    let header = |n: &str| {
        r.headers()
            .get(n)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let (challenge, session) = (header("www-authenticate"), header("mcp-session-id"));
    Ok((
        status,
        challenge,
        session,
        r.text().await.unwrap_or_default(),
    ))
}

/// Signs in at the MCP server `server_url` as the gateway would for a user, then initializes
/// (a 2026-07-28 server, `modern`: no session), lists tools and calls the first one;
/// re-authorizes (with the scope asked) when a request is refused with a challenge, a bounded
/// number of times. A summary of what happened.
pub async fn sign_in(
    server_url: &str,
    choice: ClientChoice,
    modern: bool,
) -> Result<Value, String> {
    let http = http();
    let mut token: Option<String> = None;
    let mut session: Option<String> = None;
    let mut authorizations = Vec::new();
    let init = initialize_request();
    let mut steps: Vec<Value> = if modern {
        vec![json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})]
    } else {
        vec![init]
    };
    let mut answers = Vec::new();
    let mut i = 0;
    while i < steps.len() {
        let msg = steps[i].clone();
        let (status, challenge, sid, body) = mcp(
            &http,
            server_url,
            token.as_deref(),
            session.as_deref(),
            &msg,
            modern,
        )
        .await?;
        if status == 401 || status == 403 {
            if authorizations.len() >= MAX_AUTHORIZATIONS {
                return Err(format!(
                    "still refused ({status}) after {MAX_AUTHORIZATIONS} authorizations"
                ));
            }
            let (tokens, seen) =
                authorize(&http, server_url, challenge.as_deref(), &choice).await?;
            token = Some(tokens.access_token);
            authorizations.push(seen);
            continue;
        }
        if !(200..300).contains(&status) {
            return Err(format!("{} answered {status}: {body}", msg["method"]));
        }
        if session.is_none() {
            session = sid;
        }
        let answer = last_message(&body);
        if msg["method"] == "initialize" {
            steps.push(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
            steps.push(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
        } else if msg["method"] == "tools/list" {
            if let Some(name) = answer["result"]["tools"][0]["name"].as_str() {
                steps.push(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                                  "params": {"name": name, "arguments": {}}}));
            }
        }
        answers.push(answer);
        i += 1;
    }
    Ok(json!({"authorizations": authorizations, "answers": answers}))
}

/// The JSON-RPC message of a response body: plain JSON, or the last `data:` of an SSE stream.
fn last_message(body: &str) -> Value {
    if let Ok(v) = serde_json::from_str(body) {
        return v;
    }
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .next_back()
        .unwrap_or(Value::Null)
}
