//! `[auth.server]`: the gateway as the OAuth authorization server its hosts sign in with (off
//! unless `enabled`). Its tokens are for the gateway's own resource (`auth.resource`) and its
//! virtual servers.

use std::collections::HashMap;
use std::time::Duration;

use serde::Deserialize;

use super::env::Overrides;
use super::error::{positive, KeyError};
use super::secret::{Secret, ValueSource};

/// The default lifetime of an access token: short, since a refresh gets a new one.
pub const ACCESS_TOKEN_TTL_SECS: u64 = 600;
/// The default lifetime of a refresh token (each use gives a new one).
pub const REFRESH_TOKEN_TTL_SECS: u64 = 30 * 24 * 3600;
/// Seconds a refresh token may be used again after its first use (requests sent together).
pub const REFRESH_TOKEN_REUSE_SECS: u64 = 10;
/// An authorization code is redeemed at once by its client.
pub const CODE_TTL_SECS: u64 = 60;
/// How long the sign-in and consent pages stay valid once shown.
pub const PAGE_TTL_SECS: u64 = 600;
/// A new signing key after this many days; the old one verifies until its tokens expire.
pub const KEY_ROTATION_DAYS: u64 = 30;
/// Dynamic registrations allowed per client address per minute.
pub const REGISTRATIONS_PER_MINUTE: u32 = 10;
/// How long what is over is kept: revoked and lapsed grants, and clients hosts registered that
/// have no grant left.
pub const FORGET_AFTER_DAYS: u64 = 30;
/// The scope granted when a client asks for none.
pub const DEFAULT_SCOPE: &str = "mcp";

// The variables that override keys of `[auth.server]`.
pub const ISSUER_VAR: &str = "MCP_GATEWAY_AUTH_SERVER_ISSUER";
pub const OIDC_ISSUER_VAR: &str = "MCP_GATEWAY_AUTH_SERVER_OIDC_ISSUER";
pub const OIDC_CLIENT_ID_VAR: &str = "MCP_GATEWAY_AUTH_SERVER_OIDC_CLIENT_ID";

/// Who may register a client by RFC 7591 dynamic registration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Registration {
    /// Anyone (the MCP hosts' own flow; rate-limited per address).
    #[default]
    Open,
    /// Only with the initial access token (`initial_access_token`).
    Token,
    /// Nobody: clients come from the config file, the admin API or metadata documents.
    Off,
}

/// A client registered beforehand.
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PreClient {
    pub client_id: String,
    pub client_name: Option<String>,
    pub redirect_uris: Vec<String>,
    /// A confidential client's secret (a reference: `{ env = "VAR" }` or `{ file = "/path" }`).
    /// Without one the client is public and proves itself by PKCE alone.
    pub client_secret: Option<ValueSource>,
    /// The client redeems identity assertion grants of the company's provider at the token
    /// endpoint (enterprise-managed authorization, SEP-990): a host whose users sign in at the
    /// company. Needs `client_secret` (or `public_key`) and `[auth.server.oidc]`;
    /// `redirect_uris` may then be empty (as with `roles`).
    #[serde(default)]
    pub identity_assertion_grants: bool,
    /// Instead of `client_secret`: the public key (PEM; EC P-256 for ES256, RSA for RS256) of a
    /// client that authenticates with assertions it signs (`private_key_jwt`, RFC 7523 §2.2),
    /// as `{ file = "/path" }`, `{ env = "VAR" }` or the PEM itself.
    #[serde(default)]
    pub public_key: Option<ValueSource>,
    /// The roles of the client itself, for the client credentials grant (a machine client, an
    /// agent that acts as itself: the MCP extension `io.modelcontextprotocol/oauth-client-credentials`).
    /// Needs `client_secret` or `public_key`. Empty (the default): the client may not use that
    /// grant.
    #[serde(default)]
    pub roles: Vec<String>,
}

/// Sign-in federated to the company's OpenID provider (`[auth.server.oidc]`).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFederation {
    /// The provider's issuer (its discovery document is `{issuer}/.well-known/openid-configuration`).
    #[schemars(extend("x-env" = OIDC_ISSUER_VAR))]
    issuer: String,
    /// The gateway's client at the provider (redirect URI: `{auth.server.issuer}/oauth/callback`).
    #[schemars(extend("x-env" = OIDC_CLIENT_ID_VAR))]
    client_id: String,
    /// Its secret: a reference (`{ env = "VAR" }` or `{ file = "/path" }`).
    client_secret: ValueSource,
    /// Scopes asked for; `openid` is always added.
    #[serde(default)]
    scopes: Vec<String>,
    /// The claim that names the user (`email` or `preferred_username` read better than `sub`).
    #[schemars(extend("default" = "sub"))]
    subject_claim: Option<String>,
    /// What the sign-in button says: "Sign in with {display_name}".
    display_name: Option<String>,
}

/// The company's OpenID provider, as the sign-in page offers it.
#[derive(Debug, Clone)]
pub struct FederationConfig {
    pub issuer: String,
    pub client_id: String,
    pub client_secret: Secret,
    pub scopes: Vec<String>,
    pub subject_claim: String,
    pub display_name: String,
}

#[derive(Debug, Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawAuthServer {
    #[schemars(extend("default" = true))]
    enabled: Option<bool>,
    /// The issuer identifier (an https URL with no query; default: the origin of
    /// `auth.resource`).
    #[schemars(extend("x-env" = ISSUER_VAR))]
    issuer: Option<String>,
    #[schemars(extend("default" = ACCESS_TOKEN_TTL_SECS))]
    access_token_ttl_secs: Option<u64>,
    #[schemars(extend("default" = REFRESH_TOKEN_TTL_SECS))]
    refresh_token_ttl_secs: Option<u64>,
    /// Seconds after its first use in which a refresh token used again is no replay: a host
    /// whose requests meet the access token's expiry together refreshes once per request with
    /// the same token (the TypeScript SDK does). Each use gets new tokens of the same grant.
    /// Later, a reuse revokes the grant; 0: every reuse does.
    #[schemars(extend("default" = REFRESH_TOKEN_REUSE_SECS))]
    refresh_token_reuse_secs: Option<u64>,
    #[schemars(extend("default" = KEY_ROTATION_DAYS))]
    key_rotation_days: Option<u64>,
    #[schemars(extend("default" = "open"))]
    registration: Option<Registration>,
    initial_access_token: Option<ValueSource>,
    #[schemars(extend("default" = REGISTRATIONS_PER_MINUTE))]
    registrations_per_minute: Option<u32>,
    /// Days a revoked or lapsed grant, and a client a host brought (dynamic registration or a
    /// metadata document; not blocked) with no grant left, are kept before they are forgotten:
    /// hosts register anew on every connection. A host whose registration was forgotten
    /// registers again; a document is fetched again.
    #[schemars(extend("default" = FORGET_AFTER_DAYS))]
    forget_after_days: Option<u64>,
    /// Scopes clients may ask for; the first is granted when a client asks for none.
    #[schemars(extend("default" = [DEFAULT_SCOPE]))]
    scopes: Option<Vec<String>>,
    /// Sign-in with a personal access token on the sign-in page.
    #[schemars(extend("default" = true))]
    pat_sign_in: Option<bool>,
    oidc: Option<RawFederation>,
    /// Clients named by the https URL of their metadata document.
    #[schemars(extend("default" = true))]
    client_metadata_documents: Option<bool>,
    /// Fetch metadata documents from loopback and private addresses too (only for tests and
    /// closed networks).
    #[schemars(extend("default" = false))]
    client_metadata_allow_private: Option<bool>,
    #[serde(default)]
    clients: Vec<PreClient>,
}

/// The authorization server's settings.
#[derive(Debug, Clone)]
pub struct AuthServerConfig {
    pub issuer: String,
    pub access_token_ttl: Duration,
    pub refresh_token_ttl: Duration,
    /// How long after its first use a refresh token may be used again (`refresh_token_reuse_secs`).
    pub refresh_token_reuse: Duration,
    pub code_ttl: Duration,
    pub page_ttl: Duration,
    pub key_rotation: Duration,
    pub registration: Registration,
    pub initial_access_token: Option<Secret>,
    pub registrations_per_minute: u32,
    /// How long what is over is kept (`forget_after_days`).
    pub forget_after: Duration,
    pub scopes: Vec<String>,
    pub pat_sign_in: bool,
    pub federation: Option<FederationConfig>,
    pub client_metadata_documents: bool,
    pub client_metadata_allow_private: bool,
    pub clients: Vec<(PreClient, Option<Secret>)>,
    /// The public keys (PEM) of clients that sign assertions, by client id.
    pub client_keys: HashMap<String, String>,
}

/// The origin (`scheme://host[:port]`) of a URL.
fn origin_of(url: &str) -> &str {
    let start = url.find("://").map_or(0, |i| i + 3);
    url[start..].find('/').map_or(url, |i| &url[..start + i])
}

impl AuthServerConfig {
    /// `None` when off. `resource`: `auth.resource`, which the server needs.
    pub(super) fn from_raw(
        raw: Option<RawAuthServer>,
        resource: Option<&str>,
        required: bool,
        vars: Overrides,
    ) -> Result<Option<Self>, KeyError> {
        let Some(raw) = raw.filter(|r| r.enabled.unwrap_or(true)) else {
            return Ok(None);
        };
        let resource = resource.ok_or_else(|| {
            KeyError::new(
                "auth.resource",
                "auth.server needs the gateway's public URL (e.g. https://mcp.example.com/mcp): \
                 its tokens are issued for that resource",
            )
        })?;
        if !required {
            return Err(KeyError::new(
                "auth.mode",
                "auth.server needs auth.mode = \"required\": its tokens would otherwise \
                 protect nothing",
            ));
        }
        let issuer = issuer_of(vars.get(ISSUER_VAR).or(raw.issuer), resource)?;
        for (key, v) in [
            ("access_token_ttl_secs", raw.access_token_ttl_secs),
            ("refresh_token_ttl_secs", raw.refresh_token_ttl_secs),
            ("key_rotation_days", raw.key_rotation_days),
            (
                "registrations_per_minute",
                raw.registrations_per_minute.map(u64::from),
            ),
            ("forget_after_days", raw.forget_after_days),
        ] {
            positive(&format!("auth.server.{key}"), v)?;
        }
        let registration = raw.registration.unwrap_or_default();
        let initial_access_token = resolve(
            &vars,
            raw.initial_access_token,
            "auth.server.initial_access_token",
        )?;
        if registration == Registration::Token && initial_access_token.is_none() {
            return Err(KeyError::new(
                "auth.server.initial_access_token",
                "registration = \"token\" needs it",
            ));
        }
        let scopes = raw.scopes.unwrap_or_else(|| vec![DEFAULT_SCOPE.into()]);
        if scopes.is_empty() || scopes.iter().any(|s| s.is_empty() || s.contains(' ')) {
            return Err(KeyError::new(
                "auth.server.scopes",
                "must be a non-empty list of words",
            ));
        }
        let mut client_keys = HashMap::new();
        let clients = raw
            .clients
            .into_iter()
            .enumerate()
            .map(|(i, c)| {
                let key = format!("auth.server.clients[{i}]");
                if c.client_secret.is_some() && c.public_key.is_some() {
                    return Err(KeyError::new(
                        format!("{key}.public_key"),
                        "give a client_secret or a public_key, not both",
                    ));
                }
                let authenticates = c.client_secret.is_some() || c.public_key.is_some();
                if c.identity_assertion_grants {
                    if !authenticates {
                        return Err(KeyError::new(
                            format!("{key}.identity_assertion_grants"),
                            "needs a client_secret or a public_key: a grant is a bearer \
                             assertion, redeemed by a client that authenticates",
                        ));
                    }
                    if raw.oidc.is_none() {
                        return Err(KeyError::new(
                            format!("{key}.identity_assertion_grants"),
                            "needs the company's provider ([auth.server.oidc]) whose grants it \
                             redeems",
                        ));
                    }
                }
                if !c.roles.is_empty() && !authenticates {
                    return Err(KeyError::new(
                        format!("{key}.roles"),
                        "are for the client credentials grant, which needs a client_secret or \
                         a public_key",
                    ));
                }
                let machine = c.identity_assertion_grants || !c.roles.is_empty();
                if c.redirect_uris.is_empty() && !machine {
                    return Err(KeyError::new(
                        format!("{key}.redirect_uris"),
                        format!("{:?} needs redirect_uris", c.client_id),
                    ));
                }
                let secret = resolve(
                    &vars,
                    c.client_secret.clone(),
                    &format!("{key}.client_secret"),
                )?;
                if let Some(k) = &c.public_key {
                    let pem = k
                        .resolve(vars.0)
                        .map_err(|e| KeyError::new(format!("{key}.public_key"), e))?;
                    crate::auth::server::client_keys::ClientKey::from_pem(pem.expose())
                        .map_err(|e| KeyError::new(format!("{key}.public_key"), e))?;
                    client_keys.insert(c.client_id.clone(), pem.expose().to_string());
                }
                Ok((c, secret))
            })
            .collect::<Result<Vec<_>, KeyError>>()?;
        let federation = raw.oidc.map(|f| federation_of(f, &vars)).transpose()?;
        let pat_sign_in = raw.pat_sign_in.unwrap_or(true);
        if !pat_sign_in && federation.is_none() {
            return Err(KeyError::new(
                "auth.server.pat_sign_in",
                "with pat_sign_in = false, [auth.server.oidc] is needed: nobody could sign in",
            ));
        }
        let days = raw.key_rotation_days.unwrap_or(KEY_ROTATION_DAYS);
        Ok(Some(Self {
            issuer,
            access_token_ttl: Duration::from_secs(
                raw.access_token_ttl_secs.unwrap_or(ACCESS_TOKEN_TTL_SECS),
            ),
            refresh_token_reuse: Duration::from_secs(
                raw.refresh_token_reuse_secs
                    .unwrap_or(REFRESH_TOKEN_REUSE_SECS),
            ),
            refresh_token_ttl: Duration::from_secs(
                raw.refresh_token_ttl_secs.unwrap_or(REFRESH_TOKEN_TTL_SECS),
            ),
            code_ttl: Duration::from_secs(CODE_TTL_SECS),
            page_ttl: Duration::from_secs(PAGE_TTL_SECS),
            key_rotation: Duration::from_secs(days * 24 * 3600),
            registration,
            initial_access_token,
            registrations_per_minute: raw
                .registrations_per_minute
                .unwrap_or(REGISTRATIONS_PER_MINUTE),
            forget_after: Duration::from_secs(
                raw.forget_after_days.unwrap_or(FORGET_AFTER_DAYS) * 24 * 3600,
            ),
            scopes,
            pat_sign_in,
            federation,
            client_metadata_documents: raw.client_metadata_documents.unwrap_or(true),
            client_metadata_allow_private: raw.client_metadata_allow_private.unwrap_or(false),
            clients,
            client_keys,
        }))
    }
}

/// The issuer identifier: given, or the origin of the resource; https without query or
/// fragment (http only on loopback).
fn issuer_of(given: Option<String>, resource: &str) -> Result<String, KeyError> {
    let issuer = given
        .unwrap_or_else(|| origin_of(resource).to_string())
        .trim_end_matches('/')
        .to_string();
    let parsed = url::Url::parse(&issuer).map_err(|e| {
        KeyError::new(
            "auth.server.issuer",
            format!("{issuer:?} is not a URL: {e}"),
        )
    })?;
    let loopback = parsed
        .host_str()
        .is_some_and(crate::origins::is_loopback_host);
    if (parsed.scheme() != "https" && !(parsed.scheme() == "http" && loopback))
        || parsed.query().is_some()
        || parsed.fragment().is_some()
    {
        return Err(KeyError::new(
            "auth.server.issuer",
            format!(
                "{issuer:?} must be an https URL without query or fragment (http only on a \
                 loopback host)"
            ),
        ));
    }
    Ok(issuer)
}

/// `[auth.server.oidc]`, with the provider given by the environment where it is.
fn federation_of(f: RawFederation, vars: &Overrides) -> Result<FederationConfig, KeyError> {
    let client_secret = resolve(
        vars,
        Some(f.client_secret),
        "auth.server.oidc.client_secret",
    )?
    .expect("given");
    let mut scopes = vec!["openid".to_string()];
    scopes.extend(f.scopes.into_iter().filter(|s| s != "openid"));
    let issuer = vars.get(OIDC_ISSUER_VAR).unwrap_or(f.issuer);
    Ok(FederationConfig {
        issuer: issuer.trim_end_matches('/').to_string(),
        client_id: vars.get(OIDC_CLIENT_ID_VAR).unwrap_or(f.client_id),
        client_secret,
        scopes,
        subject_claim: f.subject_claim.unwrap_or_else(|| "sub".into()),
        display_name: f
            .display_name
            .unwrap_or_else(|| "your company account".into()),
    })
}

/// A secret setting (`key`, its path): a reference, never clear text.
fn resolve(
    vars: &Overrides,
    raw: Option<ValueSource>,
    key: &str,
) -> Result<Option<Secret>, KeyError> {
    raw.map(|v| {
        if matches!(v, ValueSource::Literal(_)) {
            return Err(KeyError::clear_text(key));
        }
        v.resolve(vars.0).map_err(|e| KeyError::new(key, e))
    })
    .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(toml_text: &str) -> RawAuthServer {
        toml::from_str(toml_text).unwrap()
    }

    #[test]
    fn the_issuer_defaults_to_the_resource_origin_and_must_be_https_or_loopback() {
        let vars = std::collections::HashMap::new();
        let o = Overrides(&vars);
        let c =
            AuthServerConfig::from_raw(Some(raw("")), Some("https://gw.example.com/mcp"), true, o)
                .unwrap()
                .unwrap();
        assert_eq!(c.issuer, "https://gw.example.com");
        assert_eq!(c.scopes, ["mcp"]);
        let e = AuthServerConfig::from_raw(
            Some(raw("issuer = \"http://gw.example.com\"")),
            Some("https://gw.example.com/mcp"),
            true,
            o,
        )
        .unwrap_err();
        assert_eq!(e.key, "auth.server.issuer");
        assert!(e.message.contains("https"), "{e}");
        let e = AuthServerConfig::from_raw(Some(raw("")), None, true, o).unwrap_err();
        assert_eq!(e.key, "auth.resource", "{e}");
        let e = AuthServerConfig::from_raw(Some(raw("")), Some("http://127.0.0.1:1/mcp"), false, o)
            .unwrap_err();
        assert!(e.to_string().contains("required"), "{e}");
        assert!(
            AuthServerConfig::from_raw(Some(raw("enabled = false")), None, false, o)
                .unwrap()
                .is_none()
        );
        let e = AuthServerConfig::from_raw(
            Some(raw("registration = \"token\"")),
            Some("http://127.0.0.1:1/mcp"),
            true,
            o,
        )
        .unwrap_err();
        assert_eq!(e.key, "auth.server.initial_access_token", "{e}");
    }
}
