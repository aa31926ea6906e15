//! Enterprise-managed authorization (the MCP extension
//! `io.modelcontextprotocol/enterprise-managed-authorization`, SEP-990) for `user_oauth`
//! upstreams with `enterprise_managed = true`: a user's token at the upstream comes from their
//! sign-in at the company's provider (`[auth.server.oidc]`), with no page at the upstream.
//!
//! A federated sign-in keeps what the provider gave (its ID token, and a refresh token when it
//! gives one), sealed, as a connection of its own ([`COMPANY`]) of each principal key the user
//! has on `/mcp`. When that user's call needs a token, the gateway exchanges the ID token at the
//! provider (RFC 8693) for an identity assertion grant (an ID-JAG: the provider's signed word
//! that this user may use this client at that server, after its own policy), and redeems the
//! grant at the upstream's authorization server (RFC 7523 `jwt-bearer`) as the configured client.
//! The token is kept like any connection's; when it expires (such grants come without a refresh
//! token), the exchange runs again. An ID token about to expire is refreshed first; without a
//! refresh token the user signs in at the company again (the connect link's page offers it).
//! A refusal of the provider's (its policy) is an error of the call, not a link.

use registry::{now_ms, ConnectionRecord};
use serde_json::json;

use super::discovery::{self, Discovered};
use super::flow::{self, ID_JAG_TYPE, ID_TOKEN_TYPE, JWT_BEARER, TOKEN_EXCHANGE};
use super::managed::Managed;
use super::renewal::Turn;
use super::vault::{principal_of, user_holder, Access, Connected, Tokens, Vault};
use crate::upstream::UpstreamError;

/// The connections' name for company sign-ins: no upstream can be named so (upstream names are
/// letters, digits, `-` and `_`).
pub const COMPANY: &str = "@company";

/// An ID token with less than this left is refreshed before it is exchanged.
const ID_TOKEN_MARGIN_MS: i64 = 60 * 1000;

/// What a sign-in at the company's provider gave.
pub struct CompanySignIn {
    pub id_token: String,
    pub refresh_token: Option<String>,
    pub token_endpoint: String,
}

/// The `exp` of a JWT, in ms. Read without checking the signature: it only decides when to
/// refresh, and the token goes back to the provider that issued it, which checks it.
fn expiry_ms(jwt: &str) -> Option<i64> {
    crate::auth::jwt::unverified_claims(jwt)?["exp"]
        .as_i64()
        .map(|s| s * 1000)
}

impl Vault {
    /// Keeps a company sign-in for each of `keys` (the principal keys its user has on `/mcp`).
    /// Callers keep one only while some upstream is enterprise-managed.
    pub async fn keep_company_sign_in(&self, keys: &[String], s: CompanySignIn) {
        let Some(f) = &self.company else { return };
        // One sign-in, one refresh token, kept for each key: refreshed through the first, and
        // the new tokens kept for all (a provider that rotates refresh tokens revokes the
        // sign-in when another key's copy of a spent one is used).
        let siblings: Vec<String> = keys.iter().map(|k| user_holder(k)).collect();
        let t = Tokens {
            expires_at: expiry_ms(&s.id_token),
            access_token: s.id_token,
            refresh_token: s.refresh_token,
            issuer: f.issuer.clone(),
            token_endpoint: s.token_endpoint,
            resource: String::new(),
            client_id: f.client_id.clone(),
            client_secret: None,
            auth_method: "client_secret_basic".into(),
            dpop_key: None,
            siblings,
        };
        self.keep_copies(&t, "openid", None).await;
    }

    /// Keeps a company sign-in's tokens `t` for each of its user's keys (`t.siblings`) but the
    /// holder `done`.
    async fn keep_copies(&self, t: &Tokens, scope: &str, done: Option<&str>) {
        for holder in t.siblings.iter().filter(|h| Some(h.as_str()) != done) {
            if let Err(e) = self
                .save(COMPANY, holder, principal_of(holder), scope, t)
                .await
            {
                tracing::warn!(error = %e, "the company sign-in could not be kept for one of its user's keys");
            }
        }
    }

    /// Forgets every kept company sign-in among `all` (the stored connections; they are kept
    /// only while some upstream is enterprise-managed, and none is now): how many.
    pub async fn forget_company_sign_ins(&self, all: &[ConnectionRecord]) -> usize {
        let mut forgotten = 0;
        for c in all.iter().filter(|c| c.upstream == COMPANY) {
            let gone = self.registry.delete_connection(COMPANY, &c.holder).await;
            forgotten += usize::from(gone.unwrap_or(false));
        }
        if forgotten > 0 {
            tracing::info!(
                sign_ins = forgotten,
                "company sign-ins forgotten: no upstream is enterprise-managed now"
            );
        }
        forgotten
    }

    /// The provider's discovery as token requests use it, and the gateway as its client.
    fn company_client(
        &self,
        token_endpoint: &str,
    ) -> Result<(Discovered, flow::Client), UpstreamError> {
        let f = self.company.as_ref().ok_or_else(|| {
            UpstreamError::Config(
                "user_oauth.enterprise_managed needs the company's provider ([auth.server.oidc])"
                    .into(),
            )
        })?;
        let d = Discovered {
            resource: String::new(),
            issuer: f.issuer.clone(),
            metadata: json!({"issuer": f.issuer, "token_endpoint": token_endpoint}),
            scope: None,
        };
        let client = flow::preregistered(&d, &f.client_id, Some(f.client_secret.expose()));
        Ok((d, client))
    }

    /// `holder`'s ID token from their company sign-in, refreshed when it is about to expire,
    /// and the provider's token endpoint; none kept (or it cannot be refreshed): they sign in
    /// at the company again.
    async fn company_id_token(
        &self,
        upstream: &str,
        holder: &str,
    ) -> Result<(String, String), UpstreamError> {
        // The link that follows leads through the company's sign-in.
        let needs_sign_in = || Vault::needs_connect(upstream, holder);
        let Some((_, t, _)) = self.stored(COMPANY, holder).await? else {
            return Err(needs_sign_in());
        };
        // A sign-in at a provider the gateway no longer federates with (the company changed
        // `[auth.server.oidc]`) is not presented to the new one, nor refreshed at the old one
        // with the new one's client secret.
        if self.company.as_ref().is_none_or(|f| f.issuer != t.issuer) {
            tracing::warn!(issuer = %t.issuer, "a company sign-in of another provider is forgotten; the user signs in again");
            let _ = self.registry.delete_connection(COMPANY, holder).await;
            return Err(needs_sign_in());
        }
        let now = now_ms();
        if t.expires_at.is_none_or(|e| e - now > ID_TOKEN_MARGIN_MS) {
            return Ok((t.access_token, t.token_endpoint));
        }
        if t.refresh_token.is_none() {
            return Err(needs_sign_in());
        }
        // One refresh at a time, between the replicas and the user's keys too: a provider that
        // rotates refresh tokens revokes the sign-in when a spent one is used again. The first
        // of the keys that keep this sign-in holds its current tokens.
        let first = t
            .siblings
            .first()
            .cloned()
            .unwrap_or_else(|| holder.to_string());
        let (rec, t) = match self.refresh_turn(COMPANY, &first, &t.access_token).await? {
            Turn::Theirs(access) => {
                return Ok((access.token.expose().to_string(), t.token_endpoint))
            }
            Turn::Mine(mine) => *mine,
        };
        let refreshed = self.refresh_company(upstream, &first, rec, t).await;
        if let Err(e) = self.registry.release_connection(COMPANY, &first).await {
            tracing::warn!(error = %e, "cannot give back the turn to refresh a company sign-in; it lapses");
        }
        refreshed
    }

    /// `holder`'s company sign-in `rec` (tokens `t`) refreshed and kept: its new ID token and
    /// the provider's token endpoint. A refused refresh forgets it (they sign in again).
    async fn refresh_company(
        &self,
        upstream: &str,
        holder: &str,
        rec: ConnectionRecord,
        t: Tokens,
    ) -> Result<(String, String), UpstreamError> {
        let needs_sign_in = || Vault::needs_connect(upstream, holder);
        let Some(rt) = &t.refresh_token else {
            return Err(needs_sign_in());
        };
        let (d, client) = self.company_client(&t.token_endpoint)?;
        let fresh = match flow::refresh(&self.http, &d, &client, rt).await {
            Ok(fresh) => fresh,
            Err(flow::TokenFailure::Unavailable(why)) => {
                // The company's provider is away for now; the sign-in still works once it is back.
                tracing::warn!(error = %why, "a company sign-in cannot be refreshed right now");
                return Err(UpstreamError::Unavailable(format!(
                    "{upstream} (the company's sign-in cannot be refreshed right now; try again \
                     shortly)"
                )));
            }
            Err(why) => {
                tracing::warn!(error = %why, "a company sign-in could not be refreshed; the user signs in again");
                let _ = self.registry.delete_connection(COMPANY, holder).await;
                return Err(needs_sign_in());
            }
        };
        let Some(id_token) = fresh.id_token else {
            return Err(needs_sign_in());
        };
        let next = Tokens {
            expires_at: expiry_ms(&id_token),
            access_token: id_token.clone(),
            refresh_token: fresh.refresh_token.or(t.refresh_token.clone()),
            ..t
        };
        self.save(COMPANY, holder, &rec.connected_by, &rec.scope, &next)
            .await?;
        self.keep_copies(&next, &rec.scope, Some(holder)).await;
        Ok((id_token, next.token_endpoint))
    }

    /// A token of `holder` at the enterprise-managed `upstream`: the company sign-in's ID token
    /// exchanged for a grant, the grant redeemed at the upstream's authorization server; kept
    /// as the holder's connection.
    pub(super) async fn managed_token(
        &self,
        upstream: &str,
        holder: &str,
        m: &Managed,
    ) -> Result<Access, UpstreamError> {
        self.managed_token_from(upstream, holder, holder, m).await
    }

    /// A connect link to an enterprise-managed upstream, followed by its principal: the
    /// connection made from their company sign-in (for the catalog's account too: the admin's
    /// sign-in), with no page of the upstream's.
    pub async fn connect_managed(&self, sealed: &str, m: &Managed) -> Result<Connected, String> {
        let t = self.ticket(sealed)?;
        let signed_in = user_holder(&t.by);
        match self
            .managed_token_from(&t.upstream, &t.holder, &signed_in, m)
            .await
        {
            Ok(_) => Ok(Connected {
                upstream: t.upstream,
                holder: t.holder,
                by: t.by,
                elicitation: t.elicitation,
            }),
            Err(UpstreamError::NeedsConnect { .. }) => Err(format!(
                "{} is reached with your sign-in at your company: sign in to the gateway \
                 through your company's sign-in (on this link's page, or in your application), \
                 then open the link again",
                t.upstream
            )),
            Err(e) => Err(e.to_string()),
        }
    }

    /// [`managed_token`](Self::managed_token) from the company sign-in of `signed_in`.
    async fn managed_token_from(
        &self,
        upstream: &str,
        holder: &str,
        signed_in: &str,
        m: &Managed,
    ) -> Result<Access, UpstreamError> {
        let (id_token, company_endpoint) = self.company_id_token(upstream, signed_in).await?;
        let refused = |step: &str, e: String| {
            UpstreamError::Connect(format!(
                "enterprise-managed authorization at {upstream}: {step}: {e}"
            ))
        };
        let challenge = self.challenge(&m.url).await;
        let mut d = discovery::discover(
            &self.http,
            &m.url,
            challenge.as_deref(),
            m.user.issuer.as_deref(),
        )
        .await
        .map_err(|e| refused("discovery", e))?;
        if !m.user.scopes.is_empty() {
            d.scope = Some(m.user.scopes.join(" "));
        }
        let by = principal_of(signed_in);
        let grant = match self.company_grant(&company_endpoint, id_token, &d).await {
            Ok(g) => g,
            Err(e) => {
                // An answer without a grant is the provider's refusal (its policy); no answer at
                // all (the network, a page that is not JSON) is an error.
                let outcome = match e.starts_with("no token") {
                    true => "refused",
                    false => "error",
                };
                self.audit(by, "upstream.connect", upstream, outcome).await;
                return Err(refused("the company's provider gave no grant", e));
            }
        };
        let client = self
            .client(upstream, &m.user, &d)
            .await
            .map_err(|e| refused("the client", e.to_string()))?;
        let form = with_scope(
            vec![
                ("grant_type", JWT_BEARER.to_string()),
                ("assertion", grant),
                ("resource", d.resource.clone()),
            ],
            &d,
        );
        let tokens = match flow::token_request(&self.http, &d, &client, form).await {
            Ok(t) => t,
            Err(e) => {
                self.audit(by, "upstream.connect", upstream, "error").await;
                return Err(refused(
                    "the upstream's authorization server refused the grant",
                    e,
                ));
            }
        };
        let now = now_ms();
        let scope = tokens.scope.clone().or(d.scope.clone()).unwrap_or_default();
        let t = Tokens {
            access_token: tokens.access_token,
            refresh_token: tokens.refresh_token,
            expires_at: tokens.expires_in.map(|e| now + e as i64 * 1000),
            issuer: issuer_of(&d),
            token_endpoint: d.metadata["token_endpoint"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            resource: d.resource.clone(),
            client_id: client.client_id,
            client_secret: client.client_secret,
            auth_method: client.auth_method,
            dpop_key: None,
            siblings: Vec::new(),
        };
        self.save(upstream, holder, by, &scope, &t).await?;
        self.audit(by, "upstream.connect", upstream, "ok").await;
        tracing::info!(
            upstream,
            "a user's upstream token came from their company sign-in"
        );
        Ok(t.access(now))
    }

    /// The company's grant (an ID-JAG) for the upstream's authorization server (`d`), for the
    /// user of `id_token`, or why the provider refused it.
    async fn company_grant(
        &self,
        endpoint: &str,
        id_token: String,
        d: &Discovered,
    ) -> Result<String, String> {
        let (cd, company) = self.company_client(endpoint).map_err(|e| e.to_string())?;
        let form = with_scope(
            vec![
                ("grant_type", TOKEN_EXCHANGE.to_string()),
                ("requested_token_type", ID_JAG_TYPE.to_string()),
                ("audience", issuer_of(d)),
                ("resource", d.resource.clone()),
                ("subject_token", id_token),
                ("subject_token_type", ID_TOKEN_TYPE.to_string()),
            ],
            d,
        );
        let g = flow::token_request(&self.http, &cd, &company, form).await?;
        Ok(g.access_token)
    }
}

/// The upstream's authorization server as its metadata names itself: the grant's audience.
fn issuer_of(d: &Discovered) -> String {
    d.metadata["issuer"]
        .as_str()
        .unwrap_or(&d.issuer)
        .to_string()
}

/// A token request's form, with the scope to ask for when there is one.
fn with_scope(
    mut form: Vec<(&'static str, String)>,
    d: &Discovered,
) -> Vec<(&'static str, String)> {
    if let Some(s) = &d.scope {
        form.push(("scope", s.clone()));
    }
    form
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;
    use std::sync::Arc;

    #[test]
    fn an_id_tokens_expiry_is_read_from_its_claims() {
        use base64::Engine;
        let b64 = |v: Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
        let jwt = format!(
            "{}.{}.sig",
            b64(json!({"alg": "RS256"})),
            b64(json!({"exp": 1700000000}))
        );
        assert_eq!(expiry_ms(&jwt), Some(1_700_000_000_000));
        assert_eq!(expiry_ms("not a jwt"), None);
    }

    /// A vault of a gateway federating with `issuer`, over `registry`.
    fn vault_of(issuer: &str, registry: Arc<dyn registry::Registry>) -> Arc<Vault> {
        let text = format!(
            "[auth]\nmode = \"required\"\nresource = \"https://gw.example/mcp\"\n\
             [auth.server]\n[auth.server.oidc]\nissuer = \"{issuer}\"\nclient_id = \"gw\"\n\
             client_secret = {{ env = \"S\" }}\n[user_credentials]\nkey = {{ env = \"K\" }}\n"
        );
        let env = [
            ("S", "secret"),
            ("K", "KioqKioqKioqKioqKioqKioqKioqKioqKioqKioqKio="),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .into();
        let config = crate::config::Config::parse(&text, None, env).unwrap();
        Vault::new(&config, registry)
    }

    #[tokio::test]
    async fn a_sign_in_at_a_provider_no_longer_federated_is_forgotten_not_used() {
        let dir = tempfile::TempDir::new().unwrap();
        let url = format!("sqlite://{}/v.db?mode=rwc", dir.path().display());
        let registry: Arc<dyn registry::Registry> = Arc::new(
            registry::SqlRegistry::open(&url, Default::default())
                .await
                .unwrap(),
        );
        let before = vault_of("https://old.example", registry.clone());
        let sign_in = || CompanySignIn {
            id_token: "id-token".into(),
            refresh_token: Some("refresh".into()),
            token_endpoint: "https://old.example/token".into(),
        };
        before
            .keep_company_sign_in(&["pat:alice".into()], sign_in())
            .await;
        let holder = user_holder("pat:alice");
        assert_eq!(
            before.company_id_token("up", &holder).await.unwrap().0,
            "id-token"
        );
        // The company moved to another provider: the old sign-in is neither exchanged nor
        // refreshed; alice signs in again.
        let after = vault_of("https://new.example", registry.clone());
        let e = after.company_id_token("up", &holder).await.unwrap_err();
        assert!(matches!(e, UpstreamError::NeedsConnect { .. }), "{e}");
        assert!(registry.list_connections(None).await.unwrap().is_empty());
    }
}
