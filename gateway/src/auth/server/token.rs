//! `/oauth/token` and `/oauth/revoke`. A code is redeemed once, by its client, with the PKCE
//! verifier of its challenge and the redirect URI it was issued for; a second use revokes the
//! grant it made (RFC 6749 §4.1.2). Refresh tokens rotate: each use gives a new one, and a spent
//! one used again revokes the whole grant (OAuth 2.1 §4.3.1), since one of its two holders is
//! not the client.
//!
//! DPoP (RFC 9449 §5): a token request with a proof gets tokens bound to the proof's key: the
//! access token carries `cnf.jkt` (and goes with proofs of that key only, `auth::dpop`), and
//! the refresh token ends with `~{jkt}` (inside what is hashed, so it cannot be changed), and is
//! taken only with a proof of that key (§5.0: a public client's refresh tokens must be bound).

use std::collections::HashMap;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD as B64};
use base64::Engine;
use registry::{now_ms, ClientRecord, GrantRecord, GrantsOf, Redeemed};
use serde_json::json;
use sha2::{Digest, Sha256};

use super::{
    audit, hashed, invalid_grant, oauth_error, random_secret, server, spend_once, unavailable,
    AuthServer, ClientError,
};
use crate::auth::dpop::Refused;
use crate::state::AppState;

fn form(body: &Bytes) -> Result<HashMap<String, String>, String> {
    let mut out = HashMap::new();
    for (k, v) in url::form_urlencoded::parse(body) {
        if out.insert(k.to_string(), v.to_string()).is_some() {
            return Err(format!("the parameter {k} is repeated"));
        }
    }
    Ok(out)
}

fn invalid_request(m: &str) -> Response {
    oauth_error(StatusCode::BAD_REQUEST, "invalid_request", m)
}

/// The client of a token request, authenticated as it registered: by its secret (HTTP Basic or
/// the form), by an assertion it signed (`client_keys`), or, for a public client, by its id
/// alone (PKCE proves the rest); and whether it proved who it is (a secret or a signature).
async fn client_of(
    state: &AppState,
    headers: &HeaderMap,
    form: &HashMap<String, String>,
) -> Result<(ClientRecord, bool), Response> {
    if form.contains_key("client_assertion_type") || form.contains_key("client_assertion") {
        return signed_client(state, form).await.map(|c| (c, true));
    }
    let basic = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Basic "))
        .and_then(|b| STANDARD.decode(b.trim()).ok())
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|s| {
            let (id, secret) = s.split_once(':')?;
            let dec = |x: &str| {
                url::form_urlencoded::parse(format!("x={x}").as_bytes())
                    .next()
                    .map(|(_, v)| v.to_string())
            };
            Some((dec(id)?, dec(secret)?))
        });
    let (id, secret) = match (&basic, form.get("client_id")) {
        (Some((id, secret)), _) => (id.clone(), Some(secret.clone())),
        (None, Some(id)) => (id.clone(), form.get("client_secret").cloned()),
        (None, None) => {
            return Err(oauth_error(
                StatusCode::UNAUTHORIZED,
                "invalid_client",
                "the request names no client",
            ))
        }
    };
    let refused = |m: &str| oauth_error(StatusCode::UNAUTHORIZED, "invalid_client", m);
    let client = live_client(state, &id).await?;
    if server(state).config.client_keys.contains_key(&id) {
        return Err(refused("the client authenticates with a signed assertion"));
    }
    match (&client.secret_hash, secret) {
        (None, _) => Ok((client, false)),
        (Some(want), Some(sent))
            if crate::auth::pat::same_bytes(want.as_bytes(), hashed(&sent).as_bytes()) =>
        {
            Ok((client, true))
        }
        (Some(_), _) => Err(refused("the client's secret is missing or wrong")),
    }
}

/// A client of the config that signed this request's assertion with its key, once.
async fn signed_client(
    state: &AppState,
    form: &HashMap<String, String>,
) -> Result<ClientRecord, Response> {
    use super::client_keys::{ClientKey, ASSERTION_TYPE};
    let s = server(state);
    let refused = |m: &str| oauth_error(StatusCode::UNAUTHORIZED, "invalid_client", m);
    if form.get("client_assertion_type").map(String::as_str) != Some(ASSERTION_TYPE) {
        return Err(refused(&format!(
            "client_assertion_type must be {ASSERTION_TYPE}"
        )));
    }
    let assertion = form
        .get("client_assertion")
        .ok_or_else(|| refused("client_assertion is missing"))?;
    let id = crate::auth::jwt::unverified_issuer(assertion)
        .ok_or_else(|| refused("the client assertion names no client"))?;
    if form.get("client_id").is_some_and(|c| *c != id) {
        return Err(refused("client_id is not the assertion's client"));
    }
    let pem = s
        .config
        .client_keys
        .get(&id)
        .ok_or_else(|| refused("the client has no key to sign with"))?;
    let key = ClientKey::from_pem(pem).map_err(|e| refused(&e))?;
    let endpoint = format!("{}/oauth/token", s.config.issuer);
    let claims = key
        .verify(
            assertion,
            &id,
            &[endpoint.as_str(), s.config.issuer.as_str()],
        )
        .map_err(|e| refused(&e))?;
    let jti = claims["jti"].as_str().unwrap_or_default();
    let exp = claims["exp"].as_i64().unwrap_or_default();
    if !spend_once(state, &format!("client-assertion:{id}#{jti}"), exp * 1000).await? {
        return Err(refused("the client assertion was used before"));
    }
    live_client(state, &id).await
}

/// The client `id`, known and not blocked.
async fn live_client(state: &AppState, id: &str) -> Result<ClientRecord, Response> {
    let refused = |m: &str| oauth_error(StatusCode::UNAUTHORIZED, "invalid_client", m);
    match server(state).client(state.registry.as_ref(), id).await {
        Ok(Some(c)) if c.blocked_at.is_none() => Ok(c),
        Ok(Some(_)) => Err(refused("the client is blocked")),
        Ok(None) => Err(refused("unknown client")),
        Err(e @ ClientError::Document(_)) => Err(refused(&e.to_string())),
        Err(ClientError::Unavailable) => Err(unavailable()),
    }
}

/// `POST /oauth/token`.
pub async fn token(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    let s = server(&state);
    if let Some(refused) = super::audit_refuses(&state) {
        return refused;
    }
    let form = match form(&body) {
        Ok(f) => f,
        Err(e) => return invalid_request(&e),
    };
    let (client, proven) = match client_of(&state, &headers, &form).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let jkt = match proof_key(&state, s, &headers).await {
        Ok(k) => k,
        Err(Refused::Proof(e)) => {
            return oauth_error(StatusCode::BAD_REQUEST, "invalid_dpop_proof", &e)
        }
        Err(Refused::StoreUnavailable) => return unavailable(),
    };
    let grant = match form.get("grant_type").map(String::as_str) {
        Some("authorization_code") => redeem_code(&state, &client, &form).await,
        Some("refresh_token") => redeem_refresh(&state, &client, &form, jkt.as_deref()).await,
        Some(super::id_jag::JWT_BEARER) => super::id_jag::redeem(&state, &client, proven, &form)
            .await
            .map(|g| (g, "oauth.id_jag")),
        Some(super::machines::CLIENT_CREDENTIALS) => {
            super::machines::grant(&state, &client, proven, &form)
                .await
                .map(|g| (g, "oauth.client_credentials"))
        }
        Some(other) => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "unsupported_grant_type",
                &format!("grant_type {other:?} is not supported"),
            )
        }
        None => return invalid_request("grant_type is required"),
    };
    let (grant, action) = match grant {
        Ok(g) => g,
        Err(r) => return r,
    };
    if let Some(res) = form.get("resource") {
        if *res != grant.resource {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_target",
                "the resource is not the one this grant was made for",
            );
        }
    }
    // A grant of the company's comes without a refresh token (its policy is asked again), and
    // so does a machine client's (it asks again with its secret; RFC 6749 §4.4.3).
    let refresh = action == "oauth.token" || action == "oauth.refresh";
    match issue(&state, s, &grant, refresh, jkt.as_deref()).await {
        Ok(body) => {
            audit(&state, &grant.subject, action, &grant.client_id, "ok").await;
            (
                [
                    (header::CACHE_CONTROL, "no-store"),
                    (header::PRAGMA, "no-cache"),
                ],
                Json(body),
            )
                .into_response()
        }
        Err(r) => r,
    }
}

/// The key of the request's DPoP proof (one, for this token endpoint), if it has one; or why
/// the proof is refused.
async fn proof_key(
    state: &AppState,
    s: &AuthServer,
    headers: &HeaderMap,
) -> Result<Option<String>, Refused> {
    let mut proofs = headers.get_all("dpop").iter();
    match (proofs.next(), proofs.next()) {
        (None, _) => Ok(None),
        (Some(_), Some(_)) => Err(Refused::Proof("more than one DPoP proof".into())),
        (Some(p), None) => {
            let p = p
                .to_str()
                .map_err(|_| Refused::Proof("the DPoP proof is not text".into()))?;
            let endpoint = format!("{}/oauth/token", s.config.issuer);
            state
                .auth
                .proofs
                .check_everywhere(state.registry.as_ref(), p, "POST", &endpoint, None)
                .await
                .map(Some)
        }
    }
}

/// The grant a one-time secret (`what`) was redeemed for: still standing, and `client`'s.
async fn live_grant(
    state: &AppState,
    id: &str,
    client: &ClientRecord,
    what: &str,
) -> Result<GrantRecord, Response> {
    match state.registry.get_grant(id).await {
        Ok(Some(g)) if g.revoked_at.is_some() => Err(invalid_grant("the grant was revoked")),
        Ok(Some(g)) if g.client_id != client.client_id => Err(invalid_grant(&format!(
            "the {what} was issued to another client"
        ))),
        Ok(Some(g)) => Ok(g),
        Ok(None) => Err(invalid_grant("the grant was revoked")),
        Err(_) => Err(unavailable()),
    }
}

/// A replayed code or refresh token: its grant goes, on every replica.
async fn revoke_replayed(state: &AppState, grant: &str, what: &str) -> Response {
    if let Err(e) = super::revoke_grants(state, GrantsOf::Id(grant)).await {
        // The replay is refused all the same; the grant goes when it is replayed again.
        tracing::error!(error = %e, grant, "a replayed {what}'s grant could not be revoked");
        audit(state, "anonymous", "oauth.replay", grant, "not revoked").await;
        return unavailable();
    }
    audit(state, "anonymous", "oauth.replay", grant, what).await;
    invalid_grant(&format!(
        "the {what} was already used; its grant is revoked"
    ))
}

/// What a one-time secret (`what`) was redeemed for, if it was unused: a replay revokes its
/// grant; an unknown or expired one is `invalid_grant`.
async fn fresh<T>(
    state: &AppState,
    redeemed: registry::Result<Redeemed<T>>,
    what: &str,
) -> Result<T, Response> {
    match redeemed {
        Ok(Redeemed::Fresh(t)) => Ok(t),
        Ok(Redeemed::Again(t)) => {
            tracing::info!("a {what} used again within the reuse interval");
            Ok(t)
        }
        Ok(Redeemed::Reused(grant)) => Err(revoke_replayed(state, &grant, what).await),
        Ok(Redeemed::Unknown) => Err(invalid_grant(&format!("unknown or expired {what}"))),
        Err(_) => Err(unavailable()),
    }
}

async fn redeem_code(
    state: &AppState,
    client: &ClientRecord,
    form: &HashMap<String, String>,
) -> Result<(GrantRecord, &'static str), Response> {
    let code = form
        .get("code")
        .ok_or_else(|| invalid_request("code is required"))?;
    let verifier = form
        .get("code_verifier")
        .ok_or_else(|| invalid_request("code_verifier is required (PKCE)"))?;
    let redeemed = state.registry.redeem_code(&hashed(code), now_ms()).await;
    let rec = fresh(state, redeemed, "code").await?;
    let grant = live_grant(state, &rec.grant_id, client, "code").await?;
    if form
        .get("redirect_uri")
        .is_some_and(|r| *r != rec.redirect_uri)
    {
        return Err(invalid_grant(
            "redirect_uri is not the one the code was issued for",
        ));
    }
    let computed = B64.encode(Sha256::digest(verifier.as_bytes()));
    if !super::authorize::is_pkce_value(verifier)
        || !crate::auth::pat::same_bytes(computed.as_bytes(), rec.code_challenge.as_bytes())
    {
        return Err(invalid_grant(
            "the code_verifier does not match the code_challenge",
        ));
    }
    Ok((grant, "oauth.token"))
}

async fn redeem_refresh(
    state: &AppState,
    client: &ClientRecord,
    form: &HashMap<String, String>,
    jkt: Option<&str>,
) -> Result<(GrantRecord, &'static str), Response> {
    let token = form
        .get("refresh_token")
        .ok_or_else(|| invalid_request("refresh_token is required"))?;
    // Checked before it is spent: a request without the key must not use up the holder's token.
    if let Some((_, bound)) = token.rsplit_once('~') {
        if jkt != Some(bound) {
            return Err(invalid_grant(
                "the refresh token is bound to a key: send a DPoP proof signed by it",
            ));
        }
    }
    // A host whose requests met the expiry together refreshes once per request with the same
    // token (the TypeScript SDK does): a use again within the reuse interval is no replay.
    let reuse = server(state).config.refresh_token_reuse.as_millis() as i64;
    let redeemed = state
        .registry
        .redeem_refresh_token(&hashed(token), now_ms(), reuse)
        .await;
    let grant = fresh(state, redeemed, "refresh token").await?;
    let grant = live_grant(state, &grant, client, "refresh token").await?;
    Ok((grant, "oauth.refresh"))
}

/// A new access token for `grant`, and a refresh token (`refresh`); both bound to the key
/// `jkt` (DPoP) when there is one.
async fn issue(
    state: &AppState,
    s: &AuthServer,
    grant: &GrantRecord,
    refresh: bool,
    jkt: Option<&str>,
) -> Result<serde_json::Value, Response> {
    let now = now_ms();
    let ttl = s.config.access_token_ttl.as_secs();
    let claims = json!({
        "iss": s.config.issuer,
        "sub": grant.subject,
        "aud": grant.resource,
        "client_id": grant.client_id,
        "scope": grant.scope,
        "iat": now / 1000,
        "exp": now / 1000 + ttl as i64,
        "jti": uuid::Uuid::new_v4().simple().to_string(),
        "gid": grant.id,
    });
    let mut claims = claims;
    if let Some(k) = jkt {
        claims["cnf"] = json!({ "jkt": k });
    }
    let access = s.keys.sign(&claims).map_err(|_| unavailable())?;
    let mut body = json!({
        "access_token": access,
        "token_type": if jkt.is_some() { "DPoP" } else { "Bearer" },
        "expires_in": ttl,
        "scope": grant.scope,
    });
    if refresh {
        let refresh = match jkt {
            Some(k) => format!("{}~{k}", random_secret()),
            None => random_secret(),
        };
        state
            .registry
            .create_refresh_token(
                &hashed(&refresh),
                &grant.id,
                now,
                now + s.config.refresh_token_ttl.as_millis() as i64,
            )
            .await
            .map_err(|_| unavailable())?;
        body["refresh_token"] = json!(refresh);
    }
    Ok(body)
}

/// `POST /oauth/revoke` (RFC 7009): a refresh token or an access token of this server revokes
/// its grant. Answered 200 whatever the token was, as the RFC asks.
pub async fn revoke(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    let s = server(&state);
    let form = match form(&body) {
        Ok(f) => f,
        Err(e) => return invalid_request(&e),
    };
    let client = match client_of(&state, &headers, &form).await {
        Ok((c, _)) => c,
        Err(r) => return r,
    };
    let Some(token) = form.get("token") else {
        return invalid_request("token is required");
    };
    let grant = match s
        .keys
        .verify(token, &s.config.issuer, state.registry.as_ref())
        .await
    {
        Ok(claims) => claims
            .get("gid")
            .and_then(|g| g.as_str())
            .map(str::to_string),
        // Looked up, not redeemed: a request that turns out not to be the grant's client
        // must not spend the token.
        Err(_) => match state.registry.refresh_token_grant(&hashed(token)).await {
            Ok(grant) => grant,
            // A revocation that did not happen is never answered as done (RFC 7009 §2.2.1).
            Err(_) => return unavailable(),
        },
    };
    if let Some(grant) = grant {
        // Only the client the grant is for may revoke it.
        let mine = match state.registry.get_grant(&grant).await {
            Ok(g) => g.is_some_and(|g| g.client_id == client.client_id),
            Err(_) => return unavailable(),
        };
        if mine {
            if super::revoke_grants(&state, GrantsOf::Id(&grant))
                .await
                .is_err()
            {
                return unavailable();
            }
            audit(&state, &client.client_id, "oauth.revoke", &grant, "ok").await;
        }
    }
    StatusCode::OK.into_response()
}
