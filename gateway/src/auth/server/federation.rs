//! Sign-in federated to the company's OpenID provider (`[auth.server.oidc]`): the gateway is
//! that provider's client. `POST /oauth/federate` sends the browser there (authorization code
//! with PKCE, a `state` and a `nonce`); `GET /oauth/callback` takes the code back, checks the
//! `state` against the browser's cookie, redeems the code, verifies the ID token (signature by
//! the provider's keys, issuer, audience, expiry, nonce), and maps its claims to roles with
//! `auth.role_mappings`. The user then goes on to the consent page like any other.
//!
//! Everything the round trip needs (the PKCE verifier, the nonce, the state, the host's sealed
//! request) travels in one sealed, HttpOnly, `SameSite=Lax` cookie: any replica can take the
//! callback, the verifier never appears in a URL, and a `state` from another browser (or a
//! replayed one, once the cookie is gone) matches nothing.

use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine;
use jsonwebtoken::Validation;
use registry::now_ms;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::authorize::{self, Request};
use super::{audit, pages, random_secret, server, AuthServer};
use crate::auth::issuer_keys::{read_jwks, IssuerKeys, KeyError, KeyRules};
use crate::config::auth_server::FederationConfig;
use crate::state::AppState;

const ROUND_TRIP_COOKIE: &str = "mcpgw_oidc";

fn callback_url(s: &AuthServer) -> String {
    format!("{}/oauth/callback", s.config.issuer)
}

/// How long the provider's discovery document is kept: a sign-in reads it twice (leaving and
/// coming back).
const DISCOVERY_TTL: Duration = Duration::from_secs(300);

/// How long the provider's keys are kept, and how often they may be read again: as the keys
/// of the issuers whose access tokens the gateway takes, by default.
const KEY_RULES: KeyRules = KeyRules {
    ttl: Duration::from_secs(crate::config::auth::DEFAULT_JWKS_TTL_SECS),
    min_refresh: Duration::from_secs(crate::config::auth::DEFAULT_JWKS_MIN_REFRESH_SECS),
};

/// The company's provider as sign-ins use it: one HTTP client, built at the first sign-in,
/// its discovery document, kept for [`DISCOVERY_TTL`], and its keys. While the provider cannot
/// be reached, the last copy of either stands in: a grant it issued before the outage is still
/// its grant.
#[derive(Default)]
pub struct Provider {
    client: std::sync::OnceLock<reqwest::Client>,
    meta: std::sync::Mutex<Option<(Value, std::time::Instant)>>,
    keys: IssuerKeys,
}

/// Why the provider's word could not be had: a sign-in's code redeemed, a JWT taken as its.
#[derive(Debug, thiserror::Error)]
pub(super) enum ProviderError {
    /// The provider cannot be reached (and, for its keys, none are at hand): nothing was
    /// decided, and trying again later may succeed.
    #[error("the company's provider cannot be reached: {0}")]
    Unreachable(String),
    #[error("{0}")]
    Refused(String),
}

impl Provider {
    fn http(&self) -> &reqwest::Client {
        self.client.get_or_init(|| {
            reqwest::Client::builder()
                // The provider's endpoints must not send the gateway's client secret elsewhere.
                .redirect(reqwest::redirect::Policy::none())
                .connect_timeout(Duration::from_secs(10))
                .timeout(Duration::from_secs(20))
                .build()
                .expect("http client")
        })
    }

    /// The provider's discovery document; its `issuer` must be the configured one.
    async fn metadata(&self, f: &FederationConfig) -> Result<Value, String> {
        let kept = self.meta.lock().unwrap().clone();
        match kept {
            Some((meta, at)) if at.elapsed() < DISCOVERY_TTL => Ok(meta),
            kept => match self.read_metadata(f).await {
                Ok(meta) => Ok(meta),
                Err(e) => match kept {
                    Some((meta, _)) => {
                        tracing::warn!(error = %e, "the company's provider's metadata: the last copy stands in");
                        Ok(meta)
                    }
                    None => Err(e),
                },
            },
        }
    }

    async fn read_metadata(&self, f: &FederationConfig) -> Result<Value, String> {
        let url = format!("{}/.well-known/openid-configuration", f.issuer);
        let answer = self
            .http()
            .get(&url)
            .send()
            .await
            .and_then(|r| r.error_for_status())
            .map_err(|e| format!("cannot read {url}: {e}"))?;
        let meta: Value = crate::json_answers::read(answer)
            .await
            .map_err(|e| format!("{url}: {e}"))?;
        if meta["issuer"].as_str().map(|i| i.trim_end_matches('/')) != Some(f.issuer.as_str()) {
            return Err(format!("{url} names another issuer: {}", meta["issuer"]));
        }
        *self.meta.lock().unwrap() = Some((meta.clone(), std::time::Instant::now()));
        Ok(meta)
    }
}

fn unavailable(why: &str) -> Response {
    tracing::warn!(error = why, "federated sign-in failed");
    pages::error(
        StatusCode::BAD_GATEWAY,
        "the company sign-in cannot be reached right now; try again, or ask your administrator",
    )
}

/// `POST /oauth/federate`: from the sign-in page to the company's provider.
pub async fn start(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    let s = server(&state);
    let form = match authorize::params(&String::from_utf8_lossy(&body)) {
        Ok(f) => f,
        Err(e) => return pages::error(StatusCode::BAD_REQUEST, &e),
    };
    if let Err((status, why)) = authorize::opened(s, &headers, &form) {
        return pages::error(status, why);
    }
    to_provider(s, ("t", &form["ticket"])).await
}

/// To the company's provider to confirm who opened an upstream connect link (`link`: the
/// link's sealed ticket), from the page that asks (`upstream::credentials::confirm`).
pub(crate) async fn confirm_link(state: &AppState, link: &str) -> Response {
    match &state.auth.server {
        Some(s) => to_provider(s, ("c", link)).await,
        None => pages::error(StatusCode::NOT_FOUND, "federated sign-in is not configured"),
    }
}

/// The browser sent to the provider, with the round trip sealed in its cookie; `after`: what
/// the sign-in is for, `("t", the host's sealed request)` or `("c", a connect link's ticket)`.
async fn to_provider(s: &AuthServer, after: (&str, &str)) -> Response {
    let Some(f) = &s.config.federation else {
        return pages::error(StatusCode::NOT_FOUND, "federated sign-in is not configured");
    };
    let meta = match s.provider.metadata(f).await {
        Ok(m) => m,
        Err(e) => return unavailable(&e),
    };
    let Some(endpoint) = meta["authorization_endpoint"].as_str() else {
        return unavailable("the provider has no authorization_endpoint");
    };
    let (verifier, nonce, round) = (random_secret(), random_secret(), random_secret());
    let challenge = B64.encode(Sha256::digest(verifier.as_bytes()));
    let mut trip = json!({"s": round, "v": verifier, "n": nonce,
                          "e": now_ms() + s.config.page_ttl.as_millis() as i64});
    trip[after.0] = json!(after.1);
    let Ok(sealed) = s.keys.seal(&trip) else {
        return unavailable("cannot seal the round trip");
    };
    let Ok(mut url) = url::Url::parse(endpoint) else {
        return unavailable("the provider's authorization_endpoint is not a URL");
    };
    url.query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", &f.client_id)
        .append_pair("redirect_uri", &callback_url(s))
        .append_pair("scope", &f.scopes.join(" "))
        .append_pair("state", &round)
        .append_pair("nonce", &nonce)
        .append_pair("code_challenge", &challenge)
        .append_pair("code_challenge_method", "S256");
    let mut resp = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(url.as_str()) {
        resp.headers_mut().insert(header::LOCATION, v);
    }
    resp.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    super::set_cookie(
        s,
        &mut resp,
        ROUND_TRIP_COOKIE,
        &sealed,
        s.config.page_ttl.as_secs(),
    );
    resp
}

/// `GET /oauth/callback`: back from the company's provider.
pub async fn callback(
    State(state): State<AppState>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let s = server(&state);
    let Some(f) = &s.config.federation else {
        return pages::error(StatusCode::NOT_FOUND, "federated sign-in is not configured");
    };
    let q = match authorize::params(query.as_deref().unwrap_or("")) {
        Ok(q) => q,
        Err(e) => return pages::error(StatusCode::BAD_REQUEST, &e),
    };
    let trip = match round_trip(s, &headers, &q) {
        Ok(trip) => trip,
        Err((status, why)) => return pages::error(status, why),
    };
    // A connect link's sign-in, or a host's request (checked as the sign-in page's form would
    // be: its CSRF value is the page cookie's).
    let after = match trip["c"].as_str() {
        Some(link) => After::Link(link),
        None => {
            let form = std::collections::HashMap::from([(
                "ticket".to_string(),
                trip["t"].as_str().unwrap_or("").to_string(),
            )]);
            let ticket = match authorize::opened(s, &headers, &form) {
                Ok(t) => t,
                Err((status, why)) => return pages::error(status, why),
            };
            let Some(req) = Request::from_value(&ticket) else {
                return pages::error(StatusCode::BAD_REQUEST, "the sign-in request is incomplete");
            };
            After::Host(req, ticket)
        }
    };
    let claims = match q.get("code") {
        _ if q.contains_key("error") => Err(ProviderError::Refused(format!(
            "it refused: {} {}",
            q["error"],
            q.get("error_description").map_or("", String::as_str)
        ))),
        None => Err(ProviderError::Refused("it sent no code".into())),
        Some(code) => redeem(s, f, code, &trip).await,
    };
    let (claims, tokens) = match claims {
        Ok(answer) => answer,
        Err(ProviderError::Unreachable(e)) => return unavailable(&e),
        Err(ProviderError::Refused(e)) => {
            let target = match &after {
                After::Link(_) => "upstream connect link",
                After::Host(req, _) => &req.client_id,
            };
            audit(&state, "anonymous", "oauth.sign_in", target, "refused").await;
            tracing::warn!(error = %e, "federated sign-in refused");
            return pages::error(
                StatusCode::FORBIDDEN,
                &format!("the company sign-in did not let you in: {e}"),
            );
        }
    };
    let Some(subject) = claims.get(&f.subject_claim).and_then(Value::as_str) else {
        return pages::error(
            StatusCode::FORBIDDEN,
            &format!(
                "the company sign-in did not say who you are (no {} claim)",
                f.subject_claim
            ),
        );
    };
    keep_sign_in(&state, s, f, subject, tokens).await;
    let mut resp = match after {
        After::Link(link) => {
            let proof = crate::upstream::credentials::confirmed::Proof::Federated {
                issuer: &f.issuer,
                subject,
            };
            crate::upstream::credentials::confirmed::signed_in(&state, link, proof).await
        }
        After::Host(req, ticket) => {
            let roles = state.auth.roles_for_claims(&claims);
            let client = match authorize::live_client(&state, &req.client_id).await {
                Ok(c) => c,
                Err(page) => return page,
            };
            let user = json!({"key": subject, "roles": roles, "via": format!("oidc:{}", f.issuer)});
            let described = authorize::describe(&client, &req.redirect_uri);
            let target = authorize::origin(&req.redirect_uri);
            authorize::signed_in(&state, s, &req, &ticket, user, &described, &target).await
        }
    };
    // The round trip is over: its cookie goes, so the same answer cannot be replayed.
    super::set_cookie(s, &mut resp, ROUND_TRIP_COOKIE, "", 0);
    resp
}

/// Keeps what the provider gave for this user's enterprise-managed upstreams (none: nothing
/// is kept), under each principal key the user has on `/mcp`.
async fn keep_sign_in(
    state: &AppState,
    s: &AuthServer,
    f: &FederationConfig,
    subject: &str,
    tokens: Value,
) {
    let upstreams = &state.hub.upstreams;
    if !upstreams.any_enterprise_managed() {
        return;
    }
    let (Some(id_token), Ok(meta)) = (tokens["id_token"].as_str(), s.provider.metadata(f).await)
    else {
        return;
    };
    let proof = crate::upstream::credentials::confirmed::Proof::Federated {
        issuer: &f.issuer,
        subject,
    };
    let keys = proof.keys(crate::upstream::credentials::confirmed::server_of(state));
    let sign_in = crate::upstream::credentials::enterprise::CompanySignIn {
        id_token: id_token.to_string(),
        refresh_token: tokens["refresh_token"].as_str().map(str::to_string),
        token_endpoint: meta["token_endpoint"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    };
    upstreams.vault.keep_company_sign_in(&keys, sign_in).await;
    upstreams.company_signed_in();
}

/// What a federated sign-in is for.
enum After<'t> {
    /// Confirming who opened an upstream connect link (its sealed ticket).
    Link(&'t str),
    /// A host's authorization request, and its opened ticket.
    Host(Request, Value),
}

/// The round trip's sealed cookie, unexpired and of this `state`.
fn round_trip(
    s: &AuthServer,
    headers: &HeaderMap,
    q: &std::collections::HashMap<String, String>,
) -> Result<Value, (StatusCode, &'static str)> {
    let trip = super::cookie(headers, ROUND_TRIP_COOKIE)
        .and_then(|c| s.keys.open(c))
        .filter(|t| t["e"].as_i64().is_some_and(|e| e >= now_ms()))
        .ok_or((
            StatusCode::BAD_REQUEST,
            "this sign-in is no longer valid (expired, or finished in another browser); start \
             again from your application",
        ))?;
    let sent_state = q.get("state").map(String::as_str).unwrap_or("");
    let want_state = trip["s"].as_str().unwrap_or("");
    if want_state.is_empty()
        || !crate::auth::pat::same_bytes(sent_state.as_bytes(), want_state.as_bytes())
    {
        return Err((
            StatusCode::FORBIDDEN,
            "the answer from the company sign-in does not belong to this browser's sign-in \
             (state mismatch)",
        ));
    }
    Ok(trip)
}

/// The provider's code redeemed and its ID token verified: the token's claims, and the
/// provider's answer.
async fn redeem(
    s: &AuthServer,
    f: &FederationConfig,
    code: &str,
    trip: &Value,
) -> Result<(Map<String, Value>, Value), ProviderError> {
    let meta = s
        .provider
        .metadata(f)
        .await
        .map_err(ProviderError::Unreachable)?;
    let token_endpoint = meta["token_endpoint"]
        .as_str()
        .ok_or_else(|| ProviderError::Refused("the provider has no token_endpoint".into()))?;
    let answer = s
        .provider
        .http()
        .post(token_endpoint)
        .basic_auth(&f.client_id, Some(f.client_secret.expose()))
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", &callback_url(s)),
            ("code_verifier", trip["v"].as_str().unwrap_or("")),
        ])
        .send()
        .await
        .map_err(|e| ProviderError::Unreachable(format!("the token endpoint: {e}")))?;
    if answer.status().is_server_error() {
        return Err(ProviderError::Unreachable(format!(
            "the token endpoint answered {}",
            answer.status()
        )));
    }
    let tokens: Value = crate::json_answers::read(answer)
        .await
        .map_err(|e| ProviderError::Refused(format!("the token endpoint's answer: {e}")))?;
    let id_token = tokens["id_token"].as_str().ok_or_else(|| {
        ProviderError::Refused(format!(
            "no ID token ({})",
            tokens["error_description"]
                .as_str()
                .or(tokens["error"].as_str())
                .unwrap_or("the provider sent none")
        ))
    })?;
    let (_, claims) = provider_signed(s, f, id_token, &f.client_id)
        .await
        .map_err(|e| match e {
            ProviderError::Refused(e) => ProviderError::Refused(format!("the ID token: {e}")),
            unreachable => unreachable,
        })?;
    if claims.get("nonce").and_then(Value::as_str) != trip["n"].as_str() {
        return Err(ProviderError::Refused(
            "the ID token's nonce is not this sign-in's".into(),
        ));
    }
    Ok((claims, tokens))
}

/// A JWT the company's provider signed (one of its keys, with the key's own algorithm), for
/// `audience`, unexpired: its header and claims.
pub(super) async fn provider_signed(
    s: &AuthServer,
    f: &FederationConfig,
    jwt: &str,
    audience: &str,
) -> Result<(jsonwebtoken::Header, Map<String, Value>), ProviderError> {
    let refused = |e: String| ProviderError::Refused(e);
    let header = jsonwebtoken::decode_header(jwt).map_err(|e| refused(e.to_string()))?;
    let read_keys = || async {
        let meta = s.provider.metadata(f).await?;
        let jwks_uri = meta["jwks_uri"]
            .as_str()
            .ok_or("the provider has no jwks_uri")?;
        read_jwks(s.provider.http(), jwks_uri)
            .await
            .map_err(|e| format!("the provider's keys: {e}"))
    };
    let (key, alg) = s
        .provider
        .keys
        .key(&f.issuer, header.kid.as_deref(), KEY_RULES, read_keys)
        .await
        .map_err(|e| match e {
            KeyError::Unknown => refused("its key is not among the provider's".into()),
            KeyError::Unavailable => ProviderError::Unreachable("its keys cannot be read".into()),
        })?;
    if header.alg != alg {
        return Err(refused(format!(
            "it is signed with {:?} but its key is for {alg:?}",
            header.alg
        )));
    }
    let mut v = Validation::new(alg);
    v.set_issuer(&[&f.issuer, &format!("{}/", f.issuer)]);
    v.set_audience(&[audience]);
    v.leeway = 30;
    let claims = jsonwebtoken::decode::<Map<String, Value>>(jwt, &key, &v)
        .map_err(|e| refused(e.to_string()))?
        .claims;
    Ok((header, claims))
}
