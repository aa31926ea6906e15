//! `[auth.server]`: the gateway as the OAuth authorization server its hosts sign in with (off
//! unless `enabled`). Its tokens are for the gateway's own resource (`auth.resource`) and its
//! virtual servers.

use std::time::Duration;

use serde::Deserialize;

use super::env::Overrides;
use super::secret::{Secret, ValueSource};

/// The default lifetime of an access token: short, since a refresh gets a new one.
pub const ACCESS_TOKEN_TTL_SECS: u64 = 600;
/// The default lifetime of a refresh token (each use gives a new one).
pub const REFRESH_TOKEN_TTL_SECS: u64 = 30 * 24 * 3600;
/// An authorization code is redeemed at once by its client.
pub const CODE_TTL_SECS: u64 = 60;
/// How long the sign-in and consent pages stay valid once shown.
pub const PAGE_TTL_SECS: u64 = 600;
/// A new signing key after this many days; the old one verifies until its tokens expire.
pub const KEY_ROTATION_DAYS: u64 = 30;
/// Dynamic registrations allowed per client address per minute.
pub const REGISTRATIONS_PER_MINUTE: u32 = 10;

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
}

/// Sign-in federated to the company's OpenID provider (`[auth.server.oidc]`).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFederation {
    /// The provider's issuer (its discovery document is `{issuer}/.well-known/openid-configuration`).
    issuer: String,
    /// The gateway's client at the provider (redirect URI: `{auth.server.issuer}/oauth/callback`).
    client_id: String,
    /// Its secret: a reference (`{ env = "VAR" }` or `{ file = "/path" }`).
    client_secret: ValueSource,
    /// Scopes asked for; `openid` is always added.
    #[serde(default)]
    scopes: Vec<String>,
    /// The claim that names the user (default `sub`; `email` or `preferred_username` read better).
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
    enabled: Option<bool>,
    /// The issuer identifier (an https URL with no query; default: the origin of
    /// `auth.resource`).
    issuer: Option<String>,
    access_token_ttl_secs: Option<u64>,
    refresh_token_ttl_secs: Option<u64>,
    key_rotation_days: Option<u64>,
    registration: Option<Registration>,
    initial_access_token: Option<ValueSource>,
    registrations_per_minute: Option<u32>,
    /// Scopes clients may ask for; the first is granted when a client asks for none.
    scopes: Option<Vec<String>>,
    /// Sign-in with a personal access token on the sign-in page (default true).
    pat_sign_in: Option<bool>,
    oidc: Option<RawFederation>,
    /// Clients named by the https URL of their metadata document (default true).
    client_metadata_documents: Option<bool>,
    /// Fetch metadata documents from loopback and private addresses too (default false: only
    /// for tests and closed networks).
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
    pub code_ttl: Duration,
    pub page_ttl: Duration,
    pub key_rotation: Duration,
    pub registration: Registration,
    pub initial_access_token: Option<Secret>,
    pub registrations_per_minute: u32,
    pub scopes: Vec<String>,
    pub pat_sign_in: bool,
    pub federation: Option<FederationConfig>,
    pub client_metadata_documents: bool,
    pub client_metadata_allow_private: bool,
    pub clients: Vec<(PreClient, Option<Secret>)>,
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
    ) -> Result<Option<Self>, String> {
        let Some(raw) = raw.filter(|r| r.enabled.unwrap_or(true)) else {
            return Ok(None);
        };
        let resource = resource.ok_or(
            "auth.server needs auth.resource (the gateway's public URL, e.g. \
             https://mcp.example.com/mcp): its tokens are issued for that resource",
        )?;
        if !required {
            return Err(
                "auth.server needs auth.mode = \"required\": its tokens would \
                        otherwise protect nothing"
                    .into(),
            );
        }
        let issuer = issuer_of(vars.get("AUTH_SERVER_ISSUER").or(raw.issuer), resource)?;
        for (key, v) in [
            ("access_token_ttl_secs", raw.access_token_ttl_secs),
            ("refresh_token_ttl_secs", raw.refresh_token_ttl_secs),
            ("key_rotation_days", raw.key_rotation_days),
            (
                "registrations_per_minute",
                raw.registrations_per_minute.map(u64::from),
            ),
        ] {
            if v == Some(0) {
                return Err(format!("auth.server.{key} must be > 0"));
            }
        }
        let registration = raw.registration.unwrap_or_default();
        let initial_access_token =
            resolve(&vars, raw.initial_access_token, "initial_access_token")?;
        if registration == Registration::Token && initial_access_token.is_none() {
            return Err(
                "auth.server.registration = \"token\" needs auth.server.initial_access_token"
                    .into(),
            );
        }
        let scopes = raw.scopes.unwrap_or_else(|| vec!["mcp".into()]);
        if scopes.is_empty() || scopes.iter().any(|s| s.is_empty() || s.contains(' ')) {
            return Err("auth.server.scopes must be a non-empty list of words".into());
        }
        let clients = raw
            .clients
            .into_iter()
            .map(|c| {
                if c.redirect_uris.is_empty() {
                    return Err(format!(
                        "auth.server.clients: {:?} needs redirect_uris",
                        c.client_id
                    ));
                }
                let secret = resolve(&vars, c.client_secret.clone(), "clients.client_secret")?;
                Ok((c, secret))
            })
            .collect::<Result<Vec<_>, String>>()?;
        let federation = raw.oidc.map(|f| federation_of(f, &vars)).transpose()?;
        let pat_sign_in = raw.pat_sign_in.unwrap_or(true);
        if !pat_sign_in && federation.is_none() {
            return Err(
                "auth.server: with pat_sign_in = false, [auth.server.oidc] is needed: nobody \
                 could sign in"
                    .into(),
            );
        }
        let days = raw.key_rotation_days.unwrap_or(KEY_ROTATION_DAYS);
        Ok(Some(Self {
            issuer,
            access_token_ttl: Duration::from_secs(
                raw.access_token_ttl_secs.unwrap_or(ACCESS_TOKEN_TTL_SECS),
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
            scopes,
            pat_sign_in,
            federation,
            client_metadata_documents: raw.client_metadata_documents.unwrap_or(true),
            client_metadata_allow_private: raw.client_metadata_allow_private.unwrap_or(false),
            clients,
        }))
    }
}

/// The issuer identifier: given, or the origin of the resource; https without query or
/// fragment (http only on loopback).
fn issuer_of(given: Option<String>, resource: &str) -> Result<String, String> {
    let issuer = given
        .unwrap_or_else(|| origin_of(resource).to_string())
        .trim_end_matches('/')
        .to_string();
    let parsed = url::Url::parse(&issuer)
        .map_err(|e| format!("auth.server.issuer {issuer:?} is not a URL: {e}"))?;
    let loopback = parsed
        .host_str()
        .is_some_and(crate::origins::is_loopback_host);
    if (parsed.scheme() != "https" && !(parsed.scheme() == "http" && loopback))
        || parsed.query().is_some()
        || parsed.fragment().is_some()
    {
        return Err(format!(
            "auth.server.issuer {issuer:?} must be an https URL without query or fragment \
             (http only on a loopback host)"
        ));
    }
    Ok(issuer)
}

/// `[auth.server.oidc]`, with the provider given by the environment where it is.
fn federation_of(f: RawFederation, vars: &Overrides) -> Result<FederationConfig, String> {
    let client_secret = resolve(vars, Some(f.client_secret), "oidc.client_secret")?.expect("given");
    let mut scopes = vec!["openid".to_string()];
    scopes.extend(f.scopes.into_iter().filter(|s| s != "openid"));
    let issuer = vars.get("AUTH_SERVER_OIDC_ISSUER").unwrap_or(f.issuer);
    Ok(FederationConfig {
        issuer: issuer.trim_end_matches('/').to_string(),
        client_id: vars
            .get("AUTH_SERVER_OIDC_CLIENT_ID")
            .unwrap_or(f.client_id),
        client_secret,
        scopes,
        subject_claim: f.subject_claim.unwrap_or_else(|| "sub".into()),
        display_name: f
            .display_name
            .unwrap_or_else(|| "your company account".into()),
    })
}

/// A secret setting: a reference, never clear text.
fn resolve(
    vars: &Overrides,
    raw: Option<ValueSource>,
    key: &str,
) -> Result<Option<Secret>, String> {
    raw.map(|v| {
        if matches!(v, ValueSource::Literal(_)) {
            return Err(format!(
                "auth.server.{key} must be a reference ({{ env = \"VAR\" }} or \
                 {{ file = \"/path\" }}), not clear text"
            ));
        }
        v.resolve(vars.0)
            .map_err(|e| format!("auth.server.{key}: {e}"))
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
        assert!(e.contains("https"), "{e}");
        let e = AuthServerConfig::from_raw(Some(raw("")), None, true, o).unwrap_err();
        assert!(e.contains("auth.resource"), "{e}");
        let e = AuthServerConfig::from_raw(Some(raw("")), Some("http://127.0.0.1:1/mcp"), false, o)
            .unwrap_err();
        assert!(e.contains("required"), "{e}");
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
        assert!(e.contains("initial_access_token"), "{e}");
    }
}
