//! Enterprise-managed authorization (SEP-990) at the gateway's own authorization server: a
//! host whose user signed in at the company's provider (`[auth.server.oidc]`) exchanges that
//! sign-in there for an identity assertion grant (ID-JAG) naming this server, and redeems it at
//! `/oauth/token` (`grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer`). No page of the
//! gateway's is shown: the company's policy decided when it issued the grant.
//!
//! The grant must be the provider's (its keys, `typ` `oauth-id-jag+jwt`), for this server
//! (`aud`), for the client that redeems it (`client_id`; the client registered for this grant
//! type and authenticates with its secret: the grant is a bearer assertion), for a resource
//! this server serves, unexpired, and used once (its issuer and `jti`, spent in the store until
//! it expires, so on every replica). The user's roles come from the grant's claims through
//! `auth.role_mappings`, as at a federated sign-in. The access token lasts
//! `access_token_ttl_secs` and comes without a refresh token, so the company's policy is asked
//! again when it expires.

use std::collections::HashMap;

use axum::http::StatusCode;
use axum::response::Response;
use registry::{now_ms, ClientRecord, GrantRecord};
use serde_json::Value;

use super::federation::ProviderError;
use super::{invalid_grant, oauth_error, server, spend_once, unavailable, unserved};
use crate::state::AppState;

pub use super::clients::JWT_BEARER;
/// The profile this server supports, as its metadata names it.
pub const PROFILE: &str = "urn:ietf:params:oauth:grant-profile:id-jag";
const TYP: &str = "oauth-id-jag+jwt";

/// The grant an identity assertion grant (`form["assertion"]`) of `client`'s comes to: stored,
/// and its audit action.
pub(super) async fn redeem(
    state: &AppState,
    client: &ClientRecord,
    proven: bool,
    form: &HashMap<String, String>,
) -> Result<GrantRecord, Response> {
    let s = server(state);
    let Some(f) = &s.config.federation else {
        return Err(oauth_error(
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            "identity assertion grants need the company's provider ([auth.server.oidc])",
        ));
    };
    if let Some(refused) = refusal(client, proven) {
        return Err(refused);
    }
    let assertion = form.get("assertion").ok_or_else(|| {
        oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "assertion is required",
        )
    })?;
    let (header, claims) = super::federation::provider_signed(s, f, assertion, &s.config.issuer)
        .await
        .map_err(|e| match e {
            // Nothing was decided: a refusal would make the host drop its tokens.
            ProviderError::Unreachable(why) => {
                tracing::warn!(error = %why, "an identity assertion grant cannot be checked");
                oauth_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "temporarily_unavailable",
                    "the company's provider cannot be reached to check the grant; try again",
                )
            }
            ProviderError::Refused(e) => {
                invalid_grant(&format!("the grant is not the company's: {e}"))
            }
        })?;
    if header.typ.as_deref() != Some(TYP) {
        return Err(invalid_grant(&format!("the assertion's typ is not {TYP}")));
    }
    let text = |k: &str| claims.get(k).and_then(Value::as_str);
    if text("client_id") != Some(client.client_id.as_str()) {
        return Err(invalid_grant("the grant was issued for another client"));
    }
    let resource = text("resource")
        .or(form.get("resource").map(String::as_str))
        .unwrap_or(&s.resource)
        .to_string();
    if let Some(refused) = unserved(s, &resource) {
        return Err(refused);
    }
    let Some(subject) = text(&f.subject_claim).or(text("sub")) else {
        return Err(invalid_grant("the grant names no user"));
    };
    let scope = narrowed(s, text("scope"), form.get("scope")).ok_or_else(|| {
        oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_scope",
            "the grant allows none of the scopes asked for here",
        )
    })?;
    let (Some(jti), Some(exp)) = (text("jti"), claims.get("exp").and_then(Value::as_i64)) else {
        return Err(invalid_grant("the grant has no jti"));
    };
    if !spend_once(state, &format!("id-jag:{}#{jti}", f.issuer), exp * 1000).await? {
        return Err(invalid_grant("the grant was used before"));
    }
    let grant = GrantRecord {
        id: uuid::Uuid::new_v4().simple().to_string(),
        subject: subject.to_string(),
        client_id: client.client_id.clone(),
        roles: state.auth.roles_for_claims(&claims),
        scope,
        resource,
        signed_in_with: format!("id-jag:{}", f.issuer),
        created_at: now_ms(),
        revoked_at: None,
    };
    if state.registry.create_grant(&grant).await.is_err() {
        return Err(unavailable());
    }
    Ok(grant)
}

/// Why `client` may not redeem grants (none: it proved who it is, with a secret or a signed
/// assertion, and registered for them).
fn refusal(client: &ClientRecord, proven: bool) -> Option<Response> {
    if !proven {
        return Some(oauth_error(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "an identity assertion grant is redeemed by a client that authenticates (a secret \
             or a signed assertion)",
        ));
    }
    let registered = client.metadata["grant_types"]
        .as_array()
        .is_some_and(|g| g.iter().any(|g| g == JWT_BEARER));
    (!registered).then(|| {
        oauth_error(
            StatusCode::BAD_REQUEST,
            "unauthorized_client",
            "the client did not register for identity assertion grants (grant_types)",
        )
    })
}

/// The scope a grant (`granted`, default: the server's first) comes to: narrowed to what the
/// client `asked` (SEP-990 §7.2.1), among the server's scopes; none left: `None`.
pub(super) fn narrowed(
    s: &super::AuthServer,
    granted: Option<&str>,
    asked: Option<&String>,
) -> Option<String> {
    let granted: Vec<&str> = match granted {
        Some(g) => g.split_whitespace().collect(),
        None => vec![s.config.scopes[0].as_str()],
    };
    let scope: Vec<&str> = match asked {
        Some(asked) => asked
            .split_whitespace()
            .filter(|a| granted.contains(a))
            .collect(),
        None => granted,
    };
    let scope: Vec<&str> = scope
        .into_iter()
        .filter(|x| s.config.scopes.iter().any(|k| k == x))
        .collect();
    (!scope.is_empty()).then(|| scope.join(" "))
}
