//! The gateway as the OAuth 2.1 authorization server its hosts sign in with (`[auth.server]`),
//! to the MCP authorization spec: RFC 8414 metadata, authorization code with PKCE (S256 only),
//! RFC 8707 resource indicators, RFC 7591 dynamic registration, refresh tokens that rotate
//! (a spent one used again revokes its whole grant), RFC 7009 revocation. Users sign in at the
//! company's OpenID provider (their claims mapped to roles by `auth.role_mappings`) or with a
//! personal access token (its roles).
//!
//! | module | holds |
//! |---|---|
//! | [`keys`] | signing keys in the store, rotation, JWKS, sealed form values |
//! | [`grants`] | the grants behind issued tokens, as requests check them |
//! | [`clients`] | registration and the redirect URI rules |
//! | [`documents`] | clients named by the URL of their metadata document, fetched with an SSRF guard |
//! | [`pages`] | the sign-in, consent and error pages |
//! | `authorize` | `/oauth/authorize` and `/oauth/consent` |
//! | [`federation`] | sign-in at the company's OpenID provider, claims mapped to roles |
//! | `token` | `/oauth/token` and `/oauth/revoke` |

mod authorize;
pub mod client_keys;
pub mod clients;
pub mod documents;
pub mod federation;
pub mod grants;
mod id_jag;
pub mod keys;
mod machines;
pub mod pages;
mod token;

use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::Arc;

use axum::extract::{ConnectInfo, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine;
use chacha20poly1305::aead::rand_core::RngCore;
use chacha20poly1305::aead::OsRng;
use governor::{DefaultKeyedRateLimiter, Quota};
use registry::{now_ms, ClientRecord, Registry};
use serde_json::{json, Value};

use crate::config::auth_server::{AuthServerConfig, Registration};
use crate::state::AppState;
use crate::upstream::credentials::seal::KeyRing;

/// The authorization server, when `[auth.server]` is on.
pub struct AuthServer {
    pub config: AuthServerConfig,
    /// `auth.resource`: the audience of its tokens (or one of its virtual servers).
    pub resource: String,
    pub keys: keys::Keys,
    pub grants: grants::GrantBook,
    documents: documents::Documents,
    /// The company's provider, for federated sign-in.
    provider: federation::Provider,
    registrations: DefaultKeyedRateLimiter<IpAddr>,
}

/// A random secret of 256 bits, base64url: codes, refresh tokens, client secrets, CSRF values.
pub fn random_secret() -> String {
    let mut b = [0u8; 32];
    OsRng.fill_bytes(&mut b);
    B64.encode(b)
}

/// The stored form of a one-time secret.
pub fn hashed(secret: &str) -> String {
    registry::hash::text_hash(secret)
}

/// Sets a cookie for the sign-in pages (`/oauth` only, HttpOnly, `SameSite=Lax`, `Secure` when
/// the issuer is https); `max_age` 0 removes it.
/// The value of the cookie `name` a request carries.
pub(crate) fn cookie<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

pub(crate) fn set_cookie(
    s: &AuthServer,
    resp: &mut Response,
    name: &str,
    value: &str,
    max_age: u64,
) {
    let secure = if s.config.issuer.starts_with("https://") {
        "; Secure"
    } else {
        ""
    };
    let cookie =
        format!("{name}={value}; Path=/oauth; HttpOnly; SameSite=Lax; Max-Age={max_age}{secure}");
    if let Ok(v) = axum::http::HeaderValue::from_str(&cookie) {
        resp.headers_mut().append(header::SET_COOKIE, v);
    }
}

/// An OAuth error answer (RFC 6749 §5.2): `{"error", "error_description"}`, never cached.
pub fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response {
    (
        status,
        [(header::CACHE_CONTROL, "no-store")],
        Json(json!({ "error": error, "error_description": description })),
    )
        .into_response()
}

/// `invalid_grant` (RFC 6749 §5.2): the grant, code or token presented does not stand.
pub(super) fn invalid_grant(m: &str) -> Response {
    oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", m)
}

/// Why a client could not be looked up.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The store cannot be read or written: the client should try again, and is not told it
    /// is unknown (on `invalid_client` a host's OAuth client throws its registration and
    /// tokens away, and its user must sign in again).
    #[error("the application cannot be checked right now; try again shortly")]
    Unavailable,
    /// The client's metadata document cannot be fetched or is not acceptable.
    #[error("the application's metadata document: {0}")]
    Document(String),
}

impl ClientError {
    fn unavailable(e: &registry::RegistryError) -> Self {
        tracing::warn!(error = %e, "cannot read or store a client");
        ClientError::Unavailable
    }
}

/// The token endpoint cannot reach its store: the client tries again.
pub(super) fn unavailable() -> Response {
    oauth_error(
        StatusCode::SERVICE_UNAVAILABLE,
        "temporarily_unavailable",
        "the authorization server cannot reach its store; try again",
    )
}

/// The `invalid_target` answer when `resource` is not one this server issues tokens for.
pub(super) fn unserved(s: &AuthServer, resource: &str) -> Option<Response> {
    (!s.serves(resource)).then(|| {
        oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_target",
            &format!("this server issues tokens for {} only", s.resource),
        )
    })
}

/// Spends the one-time `what` (a grant's or an assertion's id) in the store until `until` (ms),
/// for every replica: whether it was unspent.
pub(super) async fn spend_once(state: &AppState, what: &str, until: i64) -> Result<bool, Response> {
    state
        .registry
        .spend_form(&hashed(what), until, now_ms())
        .await
        .map_err(|_| unavailable())
}

impl AuthServer {
    /// The server `[auth.server]` asks for, started; `None` when it is off.
    pub async fn from_config(
        config: &crate::config::Config,
        registry: &Arc<dyn Registry>,
    ) -> anyhow::Result<Option<Arc<Self>>> {
        let auth = &config.auth;
        let (Some(c), Some(resource)) = (&auth.server, &auth.resource) else {
            return Ok(None);
        };
        let ring = KeyRing::new(&config.user_credentials.keys);
        let s = Self::start(c.clone(), resource.clone(), registry.clone(), ring).await?;
        tracing::info!(issuer = %c.issuer, "authorization server on");
        Ok(Some(s))
    }

    /// Loads (or makes) the signing keys, stores the config file's clients, keeps the keys
    /// rotating and forgets what lapsed (`forget_lapsed`).
    pub async fn start(
        config: AuthServerConfig,
        resource: String,
        registry: Arc<dyn Registry>,
        ring: KeyRing,
    ) -> anyhow::Result<Arc<Self>> {
        if ring.is_empty() {
            tracing::warn!(
                "the authorization server's signing keys are stored unsealed: set \
                 user_credentials.key to seal them"
            );
        }
        let keys = keys::Keys::load(registry.as_ref(), config.key_rotation, ring).await?;
        for (c, secret) in &config.clients {
            let method = match (secret, &c.public_key) {
                (Some(_), _) => "client_secret_basic",
                (None, Some(_)) => "private_key_jwt",
                (None, None) => "none",
            };
            let mut metadata = json!({
                "redirect_uris": c.redirect_uris,
                "token_endpoint_auth_method": method,
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
            });
            let mut grants = vec!["authorization_code", "refresh_token"];
            if c.identity_assertion_grants {
                grants.push(id_jag::JWT_BEARER);
            }
            if !c.roles.is_empty() {
                grants.push(machines::CLIENT_CREDENTIALS);
            }
            metadata["grant_types"] = json!(grants);
            if let Some(n) = &c.client_name {
                metadata["client_name"] = json!(n);
            }
            registry
                .put_client(&ClientRecord {
                    client_id: c.client_id.clone(),
                    metadata,
                    secret_hash: secret.as_ref().map(|s| hashed(s.expose())),
                    source: "config".into(),
                    created_at: now_ms(),
                    blocked_at: None,
                })
                .await?;
        }
        let per_minute =
            NonZeroU32::new(config.registrations_per_minute).unwrap_or(NonZeroU32::MIN);
        let server = Arc::new(Self {
            registrations: governor::RateLimiter::keyed(Quota::per_minute(per_minute)),
            config,
            resource,
            keys,
            grants: grants::GrantBook::default(),
            documents: documents::Documents::default(),
            provider: federation::Provider::default(),
        });
        let s = server.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(std::time::Duration::from_secs(3600));
            tick.tick().await;
            forget_lapsed(registry.as_ref(), &s.config).await;
            loop {
                tick.tick().await;
                forget_lapsed(registry.as_ref(), &s.config).await;
                if let Err(e) = s
                    .keys
                    .rotate_if_due(registry.as_ref(), s.config.key_rotation)
                    .await
                {
                    tracing::warn!(error = %e, "cannot rotate the signing keys");
                }
                // A retired key verifies until every token it signed has expired.
                let before = now_ms() - s.config.access_token_ttl.as_millis() as i64 - 60_000;
                if let Err(e) = registry.drop_retired_keys(before).await {
                    tracing::warn!(error = %e, "cannot drop retired signing keys");
                }
            }
        });
        Ok(server)
    }

    /// The client `client_id` names: registered, or described by its metadata document.
    /// `Err`: why it cannot be known right now (said to the user or the client).
    pub async fn client(
        &self,
        registry: &dyn Registry,
        client_id: &str,
    ) -> Result<Option<ClientRecord>, ClientError> {
        if self.config.client_metadata_documents && documents::is_document_url(client_id) {
            return self
                .documents
                .client(
                    registry,
                    client_id,
                    self.config.client_metadata_allow_private,
                )
                .await
                .map(Some);
        }
        registry
            .get_client(client_id)
            .await
            .map_err(|e| ClientError::unavailable(&e))
    }

    /// Whether `resource` is one this server issues tokens for: the gateway's, or one of its
    /// virtual servers' (`{resource}/v/{name}`).
    pub fn serves(&self, resource: &str) -> bool {
        resource == self.resource
            || resource
                .strip_prefix(&self.resource)
                .and_then(|r| r.strip_prefix("/v/"))
                .is_some_and(|name| {
                    crate::names::Name::parse(crate::names::NameKind::VirtualServer, name).is_ok()
                })
    }

    /// RFC 8414 metadata.
    pub fn metadata(&self) -> Value {
        let iss = &self.config.issuer;
        let mut m = json!({
            "issuer": iss,
            "authorization_endpoint": format!("{iss}/oauth/authorize"),
            "token_endpoint": format!("{iss}/oauth/token"),
            "revocation_endpoint": format!("{iss}/oauth/revoke"),
            "jwks_uri": format!("{iss}/oauth/jwks"),
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported":
                ["none", "client_secret_post", "client_secret_basic"],
            "revocation_endpoint_auth_methods_supported":
                ["none", "client_secret_post", "client_secret_basic"],
            "scopes_supported": self.config.scopes,
            "authorization_response_iss_parameter_supported": true,
            "client_id_metadata_document_supported": self.config.client_metadata_documents,
            "dpop_signing_alg_values_supported": crate::auth::dpop::ALGORITHMS,
        });
        if self.config.registration != Registration::Off {
            m["registration_endpoint"] = json!(format!("{iss}/oauth/register"));
        }
        let mut grants = vec!["authorization_code", "refresh_token"];
        if self.config.federation.is_some() {
            grants.push(id_jag::JWT_BEARER);
            m["authorization_grant_profiles_supported"] = json!([id_jag::PROFILE]);
        }
        if self.config.clients.iter().any(|(c, _)| !c.roles.is_empty()) {
            grants.push(machines::CLIENT_CREDENTIALS);
        }
        m["grant_types_supported"] = json!(grants);
        // Named only where clients of the config sign assertions: hosts that register choose
        // from this list.
        if !self.config.client_keys.is_empty() {
            m["token_endpoint_auth_methods_supported"] = json!([
                "none",
                "client_secret_post",
                "client_secret_basic",
                "private_key_jwt"
            ]);
            m["token_endpoint_auth_signing_alg_values_supported"] = json!(["ES256", "RS256"]);
        }
        m
    }
}

/// The routes of the authorization server (none when it is off).
pub fn routes(state: &AppState) -> Router<AppState> {
    if state.auth.server.is_none() {
        return Router::new();
    }
    Router::new()
        .route("/.well-known/oauth-authorization-server", get(metadata))
        .route("/.well-known/openid-configuration", get(metadata))
        .route("/oauth/jwks", get(jwks))
        .route("/oauth/register", post(register))
        .route(
            "/oauth/authorize",
            get(authorize::start).post(authorize::sign_in),
        )
        .route("/oauth/consent", post(authorize::consent))
        .route("/oauth/federate", post(federation::start))
        .route("/oauth/callback", get(federation::callback))
        .route("/oauth/token", post(token::token))
        .route("/oauth/revoke", post(token::revoke))
}

fn server(state: &AppState) -> &Arc<AuthServer> {
    state
        .auth
        .server
        .as_ref()
        .expect("the routes exist only with the server")
}

async fn metadata(State(state): State<AppState>) -> Response {
    Json(server(&state).metadata()).into_response()
}

async fn jwks(State(state): State<AppState>) -> Response {
    (
        [(header::CACHE_CONTROL, "max-age=300")],
        Json(server(&state).keys.jwks()),
    )
        .into_response()
}

/// RFC 7591 dynamic registration.
async fn register(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    let s = server(&state);
    if let Some(refused) = audit_refuses(&state) {
        return refused;
    }
    match s.config.registration {
        Registration::Off => {
            return oauth_error(
                StatusCode::FORBIDDEN,
                "access_denied",
                "dynamic registration is off (auth.server.registration)",
            )
        }
        Registration::Token => {
            let sent = headers
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "))
                .unwrap_or("");
            let want = s.config.initial_access_token.as_ref().map(|t| t.expose());
            if !want.is_some_and(|w| crate::auth::pat::same_bytes(w.as_bytes(), sent.as_bytes())) {
                return oauth_error(
                    StatusCode::UNAUTHORIZED,
                    "invalid_token",
                    "registration needs the initial access token",
                );
            }
        }
        Registration::Open => {}
    }
    if s.registrations
        .check_key(&peer.ip().to_canonical())
        .is_err()
    {
        return (
            StatusCode::TOO_MANY_REQUESTS,
            [(header::RETRY_AFTER, "60")],
            Json(json!({"error": "slow_down",
                        "error_description": "too many registrations from this address; retry in a minute"})),
        )
            .into_response();
    }
    let req: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_client_metadata",
                &format!("the body is not JSON: {e}"),
            )
        }
    };
    let (metadata, confidential) = match clients::registered_metadata(&req, &s.config.scopes) {
        Ok(m) => m,
        Err(e) => {
            let code = if e.starts_with("redirect_uri") {
                "invalid_redirect_uri"
            } else {
                "invalid_client_metadata"
            };
            return oauth_error(StatusCode::BAD_REQUEST, code, &e);
        }
    };
    let (rec, secret) = clients::new_client(
        clients::new_client_id(),
        metadata.clone(),
        confidential,
        "dcr",
    );
    if let Err(e) = state.registry.create_client(&rec).await {
        tracing::warn!(error = %e, "cannot store a registered client");
        return oauth_error(
            StatusCode::SERVICE_UNAVAILABLE,
            "temporarily_unavailable",
            "the client cannot be stored right now",
        );
    }
    audit(&state, "anonymous", "oauth.register", &rec.client_id, "ok").await;
    let mut out = metadata;
    out["client_id"] = json!(rec.client_id);
    out["client_id_issued_at"] = json!(rec.created_at / 1000);
    if let Some(secret) = secret {
        out["client_secret"] = json!(secret);
        out["client_secret_expires_at"] = json!(0);
    }
    (
        StatusCode::CREATED,
        [(header::CACHE_CONTROL, "no-store")],
        Json(out),
    )
        .into_response()
}

/// Removes what is over from the store (`registry::Lapsed`): expired codes and refresh tokens
/// once every access token they could have given has expired too, and after
/// `forget_after_days` revoked or lapsed grants and the clients hosts registered or named by a
/// metadata document that have no grant left. Run at start and every hour; every replica may
/// run it (each delete is idempotent).
async fn forget_lapsed(registry: &dyn Registry, config: &AuthServerConfig) {
    const DAY_MS: i64 = 24 * 3600 * 1000;
    let access_ms = config.access_token_ttl.as_millis() as i64;
    let now = now_ms();
    let lapsed = registry::Lapsed {
        tokens_before: now - access_ms.max(DAY_MS),
        kept_from: now - (config.forget_after.as_millis() as i64).max(access_ms + DAY_MS),
    };
    match registry.forget_lapsed(lapsed).await {
        Ok(gone) if gone == registry::Forgotten::default() => {}
        Ok(gone) => tracing::info!(
            codes = gone.codes,
            refresh_tokens = gone.refresh_tokens,
            grants = gone.grants,
            clients = gone.clients,
            "authorization server: forgot what had lapsed"
        ),
        Err(e) => tracing::warn!(error = %e, "cannot forget lapsed authorizations"),
    }
}

/// Revokes grants in the store (which tells the other replicas) and forgets them here at once:
/// the ids revoked now.
pub(crate) async fn revoke_grants(
    state: &AppState,
    which: registry::GrantsOf<'_>,
) -> registry::Result<Vec<String>> {
    let ids = state.registry.revoke_grants(which).await?;
    for id in &ids {
        state.auth.forget_grant(id);
    }
    Ok(ids)
}

/// Granting, issuing and registering are audit rows: while the audit log cannot take them
/// (`audit.when_unwritable`), they are refused as admin changes are. Revocation never is.
pub(crate) fn audit_refuses(state: &AppState) -> Option<Response> {
    state.dispatcher.audit.admit().err().map(|_| {
        oauth_error(
            StatusCode::SERVICE_UNAVAILABLE,
            "temporarily_unavailable",
            "the audit log cannot be written right now; try again shortly",
        )
    })
}

/// An audit row for the authorization server.
pub(crate) async fn audit(
    state: &AppState,
    principal: &str,
    action: &str,
    target: &str,
    outcome: &str,
) {
    state
        .dispatcher
        .audit
        .record_event(principal, action, target, outcome)
        .await;
}
