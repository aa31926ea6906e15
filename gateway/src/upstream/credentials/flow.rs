//! The gateway as an OAuth client of an upstream's authorization server: it becomes a client
//! (registered beforehand, or by RFC 7591 registration), sends the user to the authorization
//! endpoint (authorization code with PKCE S256, `state`, and `resource` per RFC 8707), checks
//! the answer (`state`; `iss` per RFC 9207 where the server advertises it), and redeems the code
//! with the client authentication the server and the registration agree on.

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD as B64};
use base64::Engine;
use chacha20poly1305::aead::rand_core::RngCore;
use chacha20poly1305::aead::OsRng;
use std::time::Duration;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::discovery::Discovered;
use crate::upstream::assertion::{SigningKey, ASSERTION_TYPE};
use crate::upstream::dpop::DpopKey;

/// Grant and token types of the token requests the gateway makes (RFC 8693, RFC 7523, the
/// identity assertion grant).
pub const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
pub const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
pub const ACCESS_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:access_token";
pub const ID_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id_token";
pub const ID_JAG_TYPE: &str = "urn:ietf:params:oauth:token-type:id-jag";

/// The gateway as a client of one authorization server.
#[derive(Debug, Clone)]
pub struct Client {
    pub client_id: String,
    pub client_secret: Option<String>,
    /// `none`, `client_secret_basic`, `client_secret_post` or `private_key_jwt`.
    pub auth_method: String,
    /// The key `private_key_jwt` signs its assertions with.
    pub private_key: Option<SigningKey>,
    /// The key this client's tokens are bound to (DPoP): its token requests carry proofs.
    pub dpop: Option<std::sync::Arc<DpopKey>>,
}

/// One authorization in progress: what the answer is checked against and the code redeemed with.
#[derive(Debug, Clone)]
pub struct Pending {
    pub url: String,
    pub state: String,
    pub verifier: String,
    pub redirect_uri: String,
}

/// Tokens from the authorization server.
#[derive(Debug, Clone)]
pub struct Tokens {
    pub access_token: String,
    /// `Bearer`, or `DPoP` for a token bound to the proofs' key.
    pub token_type: Option<String>,
    pub refresh_token: Option<String>,
    pub expires_in: Option<u64>,
    pub scope: Option<String>,
    /// An OpenID provider's ID token (a sign-in or its refresh).
    pub id_token: Option<String>,
}

/// A client for authorization servers' endpoints: they must not redirect the client's
/// credentials elsewhere, and a stuck one must not hold a call for long.
pub fn token_endpoint_client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(Duration::from_secs(10))
        .timeout(Duration::from_secs(30))
        .build()
        .expect("http client")
}

fn random() -> String {
    let mut b = [0u8; 32];
    OsRng.fill_bytes(&mut b);
    B64.encode(b)
}

fn endpoint<'a>(d: &'a Discovered, key: &str) -> Result<&'a str, String> {
    d.metadata[key]
        .as_str()
        .ok_or_else(|| format!("the authorization server has no {key}"))
}

/// The client authentication to use: the registration's, if the server supports it; else the
/// first the server supports that the client can do.
fn auth_method(d: &Discovered, registered: Option<&str>, has_secret: bool) -> String {
    let supported: Vec<&str> = d.metadata["token_endpoint_auth_methods_supported"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        // RFC 8414's default.
        .unwrap_or_else(|| vec!["client_secret_basic"]);
    if let Some(r) = registered.filter(|r| supported.contains(r)) {
        return r.to_string();
    }
    let usable = |m: &&&str| match **m {
        "none" => !has_secret,
        "client_secret_basic" | "client_secret_post" => has_secret,
        _ => false,
    };
    supported
        .iter()
        .find(usable)
        .map(|m| m.to_string())
        .unwrap_or_else(|| {
            if has_secret {
                "client_secret_basic"
            } else {
                "none"
            }
            .into()
        })
}

/// A client registered beforehand (its id and secret given).
pub fn preregistered(d: &Discovered, client_id: &str, secret: Option<&str>) -> Client {
    Client {
        client_id: client_id.to_string(),
        client_secret: secret.map(str::to_string),
        auth_method: auth_method(d, None, secret.is_some()),
        private_key: None,
        dpop: None,
    }
}

/// Registers the gateway (RFC 7591) with `redirect_uri`.
pub async fn register(
    http: &reqwest::Client,
    d: &Discovered,
    redirect_uri: &str,
) -> Result<Client, String> {
    let url = endpoint(d, "registration_endpoint")?;
    // SEP-837: `native` for a redirect on loopback (or an app's own scheme), else `web`.
    let native = url::Url::parse(redirect_uri).is_ok_and(|u| {
        u.scheme() != "https"
            && (u.scheme() != "http" || u.host_str().is_some_and(crate::origins::is_loopback_host))
    });
    let mut body = json!({
        "client_name": "MCP Gateway",
        "application_type": if native { "native" } else { "web" },
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
    });
    let supported = d.metadata["token_endpoint_auth_methods_supported"].as_array();
    if supported.is_some_and(|s| s.iter().any(|m| m == "none")) {
        body["token_endpoint_auth_method"] = json!("none");
    }
    if let Some(s) = &d.scope {
        body["scope"] = json!(s);
    }
    let r = http
        .post(url)
        .json(&body)
        .send()
        .await
        .map_err(|e| format!("registration at {url}: {e}"))?;
    let status = r.status();
    let v: Value = crate::json_answers::read(r)
        .await
        .map_err(|e| format!("registration answer: {e}"))?;
    let id = v["client_id"]
        .as_str()
        .ok_or_else(|| format!("registration refused ({status}): {v}"))?;
    let secret = v["client_secret"].as_str();
    Ok(Client {
        client_id: id.to_string(),
        client_secret: secret.map(str::to_string),
        auth_method: auth_method(
            d,
            v["token_endpoint_auth_method"].as_str(),
            secret.is_some(),
        ),
        private_key: None,
        dpop: None,
    })
}

/// A fresh PKCE pair: the verifier and its S256 challenge.
pub fn pkce_pair() -> (String, String) {
    let verifier = random();
    let challenge = B64.encode(Sha256::digest(verifier.as_bytes()));
    (verifier, challenge)
}

/// The authorization endpoint's URL for `client`, with `state`, the PKCE challenge (S256),
/// the resource and the scope.
pub fn authorization_url(
    d: &Discovered,
    client: &Client,
    redirect_uri: &str,
    state: &str,
    challenge: &str,
) -> Result<String, String> {
    let mut url = url::Url::parse(endpoint(d, "authorization_endpoint")?)
        .map_err(|e| format!("the authorization endpoint is not a URL: {e}"))?;
    {
        let mut q = url.query_pairs_mut();
        q.append_pair("response_type", "code")
            .append_pair("client_id", &client.client_id)
            .append_pair("redirect_uri", redirect_uri)
            .append_pair("state", state)
            .append_pair("code_challenge", challenge)
            .append_pair("code_challenge_method", "S256")
            .append_pair("resource", &d.resource);
        if let Some(s) = &d.scope {
            q.append_pair("scope", s);
        }
    }
    Ok(url.to_string())
}

/// The authorization request for `client`, with a fresh PKCE pair and state.
pub fn authorization(
    d: &Discovered,
    client: &Client,
    redirect_uri: &str,
) -> Result<Pending, String> {
    let (verifier, challenge) = pkce_pair();
    let state = random();
    Ok(Pending {
        url: authorization_url(d, client, redirect_uri, &state, &challenge)?,
        state,
        verifier,
        redirect_uri: redirect_uri.to_string(),
    })
}

/// The code of the answer that came back to the redirect URI, checked: its `state`, and its
/// `iss` (RFC 9207: required when the server advertises it, and never another issuer's).
pub fn code_of(d: &Discovered, pending: &Pending, answer: &url::Url) -> Result<String, String> {
    let get = |k: &str| {
        answer
            .query_pairs()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.to_string())
    };
    if get("state").as_deref() != Some(pending.state.as_str()) {
        return Err("the answer's state is not this authorization's".into());
    }
    let advertised = d.metadata["authorization_response_iss_parameter_supported"] == true;
    // Compared as the server states its issuer, character for character (no normalization).
    let issuer = d.metadata["issuer"].as_str().unwrap_or(&d.issuer);
    match get("iss") {
        Some(iss) if iss != issuer => {
            return Err(format!("the answer comes from another issuer ({iss})"))
        }
        None if advertised => return Err("the answer has no iss, which its server promised".into()),
        _ => {}
    }
    if let Some(e) = get("error") {
        return Err(format!("the authorization server refused: {e}"));
    }
    get("code").ok_or_else(|| "the answer has no code".into())
}

/// A token request with the client's authentication (and a DPoP proof for a client whose
/// tokens are bound to a key: a server that asks for its nonce gets the request once more).
pub async fn token_request(
    http: &reqwest::Client,
    d: &Discovered,
    client: &Client,
    form: Vec<(&str, String)>,
) -> Result<Tokens, String> {
    request_tokens(http, d, client, form)
        .await
        .map_err(|f| f.to_string())
}

/// Why a token request brought no token.
#[derive(Debug, thiserror::Error)]
pub enum TokenFailure {
    /// The authorization server refused it (an OAuth error of the grant or the client), or it
    /// cannot be made (no token endpoint): asking again will not help.
    #[error("{0}")]
    Refused(String),
    /// The authorization server could not be asked, or was unavailable (a network error, a 5xx,
    /// 429, `temporarily_unavailable`, `server_error`, an answer that is not JSON): asking again
    /// later may work, so nothing that still works is given up for it.
    #[error("{0}")]
    Unavailable(String),
}

async fn request_tokens(
    http: &reqwest::Client,
    d: &Discovered,
    client: &Client,
    form: Vec<(&str, String)>,
) -> Result<Tokens, TokenFailure> {
    let url = endpoint(d, "token_endpoint").map_err(TokenFailure::Refused)?;
    let mut nonce: Option<String> = None;
    loop {
        let mut req = authenticated(http.post(url), d, client, form.clone())
            .map_err(TokenFailure::Refused)?;
        if let Some(key) = &client.dpop {
            req = req.header(
                "dpop",
                key.proof(
                    "POST",
                    &crate::upstream::dpop::htu(url),
                    None,
                    nonce.as_deref(),
                ),
            );
        }
        let r = req
            .send()
            .await
            .map_err(|e| TokenFailure::Unavailable(format!("the token endpoint: {e}")))?;
        let status = r.status();
        let asked = r
            .headers()
            .get("dpop-nonce")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let v: Value = crate::json_answers::read(r)
            .await
            .map_err(|e| TokenFailure::Unavailable(format!("the token answer ({status}): {e}")))?;
        if client.dpop.is_some() && nonce.is_none() && v["error"] == "use_dpop_nonce" {
            if let Some(n) = asked {
                nonce = Some(n);
                continue;
            }
        }
        let Some(access) = v["access_token"].as_str() else {
            let why = format!("no token ({status}): {v}");
            let busy = status.is_server_error()
                || status == reqwest::StatusCode::TOO_MANY_REQUESTS
                || matches!(
                    v["error"].as_str(),
                    Some("temporarily_unavailable" | "server_error")
                );
            return Err(if busy {
                TokenFailure::Unavailable(why)
            } else {
                TokenFailure::Refused(why)
            });
        };
        return Ok(Tokens {
            access_token: access.to_string(),
            token_type: v["token_type"].as_str().map(str::to_string),
            refresh_token: v["refresh_token"].as_str().map(str::to_string),
            expires_in: v["expires_in"].as_u64(),
            scope: v["scope"].as_str().map(str::to_string),
            id_token: v["id_token"].as_str().map(str::to_string),
        });
    }
}

/// A token request's form and headers with the client's authentication.
fn authenticated(
    mut req: reqwest::RequestBuilder,
    d: &Discovered,
    client: &Client,
    mut form: Vec<(&str, String)>,
) -> Result<reqwest::RequestBuilder, String> {
    req = req.header("accept", "application/json");
    match (client.auth_method.as_str(), &client.client_secret) {
        ("private_key_jwt", _) => {
            let key = client
                .private_key
                .as_ref()
                .ok_or("private_key_jwt without a private key")?;
            // The issuer is the audience (RFC 7523bis): an assertion made for one server is
            // no good at another that a token endpoint URL could be made to name.
            let assertion = key.assertion(&client.client_id, &d.issuer)?;
            form.push(("client_id", client.client_id.clone()));
            form.push(("client_assertion_type", ASSERTION_TYPE.into()));
            form.push(("client_assertion", assertion));
        }
        ("client_secret_basic", Some(secret)) => {
            let enc =
                |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
            let pair = format!("{}:{}", enc(&client.client_id), enc(secret));
            req = req.header("authorization", format!("Basic {}", STANDARD.encode(pair)));
        }
        ("client_secret_post", Some(secret)) => {
            form.push(("client_id", client.client_id.clone()));
            form.push(("client_secret", secret.clone()));
        }
        _ => form.push(("client_id", client.client_id.clone())),
    }
    Ok(req.form(&form))
}

/// Redeems a code.
pub async fn redeem(
    http: &reqwest::Client,
    d: &Discovered,
    client: &Client,
    pending: &Pending,
    code: &str,
) -> Result<Tokens, String> {
    token_request(
        http,
        d,
        client,
        vec![
            ("grant_type", "authorization_code".into()),
            ("code", code.into()),
            ("redirect_uri", pending.redirect_uri.clone()),
            ("code_verifier", pending.verifier.clone()),
            ("resource", d.resource.clone()),
        ],
    )
    .await
}

/// A new access token for a refresh token.
pub async fn refresh(
    http: &reqwest::Client,
    d: &Discovered,
    client: &Client,
    refresh_token: &str,
) -> Result<Tokens, TokenFailure> {
    request_tokens(
        http,
        d,
        client,
        with_resource(
            vec![
                ("grant_type", "refresh_token".into()),
                ("refresh_token", refresh_token.into()),
            ],
            d,
        ),
    )
    .await
}

/// `form` with the resource the tokens are for, where there is one (a sign-in's provider has
/// none: its tokens are for the gateway itself).
fn with_resource(
    mut form: Vec<(&'static str, String)>,
    d: &Discovered,
) -> Vec<(&'static str, String)> {
    if !d.resource.is_empty() {
        form.push(("resource", d.resource.clone()));
    }
    form
}

#[cfg(test)]
mod tests {
    use super::*;

    fn discovered(meta: Value) -> Discovered {
        Discovered {
            resource: "https://up/mcp".into(),
            issuer: "https://as".into(),
            metadata: meta,
            scope: None,
        }
    }

    #[test]
    fn the_answer_is_checked_for_state_and_issuer() {
        let d = discovered(json!({"authorization_endpoint": "https://as/authorize",
                                  "authorization_response_iss_parameter_supported": true}));
        let c = preregistered(&d, "c", None);
        let p = authorization(&d, &c, "http://127.0.0.1:1/cb").unwrap();
        assert!(p.url.contains("code_challenge_method=S256") && p.url.contains("resource="));
        let answer = |q: &str| url::Url::parse(&format!("http://127.0.0.1:1/cb?{q}")).unwrap();
        let s = &p.state;
        assert_eq!(
            code_of(&d, &p, &answer(&format!("code=x&state={s}&iss=https://as"))),
            Ok("x".into())
        );
        assert!(
            code_of(&d, &p, &answer(&format!("code=x&state={s}"))).is_err(),
            "iss promised"
        );
        assert!(code_of(
            &d,
            &p,
            &answer(&format!("code=x&state={s}&iss=https://evil"))
        )
        .is_err());
        assert!(code_of(&d, &p, &answer("code=x&state=other&iss=https://as")).is_err());
    }

    #[test]
    fn client_authentication_follows_what_the_server_supports() {
        let d =
            discovered(json!({"token_endpoint_auth_methods_supported": ["client_secret_post"]}));
        assert_eq!(
            auth_method(&d, Some("client_secret_basic"), true),
            "client_secret_post"
        );
        let d = discovered(json!({}));
        assert_eq!(auth_method(&d, None, true), "client_secret_basic");
        assert_eq!(
            auth_method(
                &discovered(json!({"token_endpoint_auth_methods_supported": ["none"]})),
                None,
                false
            ),
            "none"
        );
    }
}
