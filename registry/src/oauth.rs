//! The storage of the gateway's own OAuth authorization server: signing keys, registered
//! clients, users' consents, grants, and the one-time codes and refresh tokens of a grant (of
//! which only hashes are stored). It decides nothing about OAuth: the gateway's `auth::server`
//! does; what is here is what must be the same on every replica.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::any::AnyRow;
use sqlx::Row;

use crate::change::Change;
use crate::error::{RegistryError, Result};
use crate::sql::SqlRegistry;

/// A signing key of the authorization server.
#[derive(Debug, Clone, PartialEq)]
pub struct SigningKeyRecord {
    pub kid: String,
    /// The Ed25519 seed, base64url.
    pub secret: String,
    /// The public key, base64url (the JWK's `x`).
    pub public_x: String,
    pub created_at: i64,
    /// Set when a newer key took over signing; the key still verifies until tokens signed with
    /// it have expired.
    pub retired_at: Option<i64>,
}

/// A client registered with the authorization server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientRecord {
    pub client_id: String,
    /// Its RFC 7591 metadata (redirect URIs, name, logo, auth method, ...).
    pub metadata: Value,
    /// sha256 (hex) of a confidential client's secret.
    #[serde(skip_serializing)]
    pub secret_hash: Option<String>,
    /// `dcr`, `config`, `api` or `cimd`.
    pub source: String,
    pub created_at: i64,
    pub blocked_at: Option<i64>,
}

/// One authorization of a client by a user: what its tokens stand for, and the family of its
/// refresh tokens. Revoked, every token of it is refused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GrantRecord {
    pub id: String,
    pub subject: String,
    pub client_id: String,
    pub roles: Vec<String>,
    pub scope: String,
    pub resource: String,
    /// How the user signed in: `pat:<token id>` or `oidc:<issuer>`.
    pub signed_in_with: String,
    pub created_at: i64,
    pub revoked_at: Option<i64>,
}

/// An authorization code's binding.
#[derive(Debug, Clone, PartialEq)]
pub struct CodeRecord {
    pub grant_id: String,
    pub redirect_uri: String,
    pub code_challenge: String,
    pub expires_at: i64,
}

/// What redeeming a one-time secret (a code, a refresh token) found.
#[derive(Debug, Clone, PartialEq)]
pub enum Redeemed<T> {
    /// Unused until now, and now used.
    Fresh(T),
    /// Used before: the grant it belongs to, which the caller revokes (a replay).
    Reused(String),
    /// Used a moment before, within the interval the caller allows: a host that sent several
    /// requests at once, each refreshing with the same token.
    Again(T),
    Unknown,
}

/// Which grants to revoke.
#[derive(Debug, Clone, Copy)]
pub enum GrantsOf<'a> {
    Id(&'a str),
    Subject(&'a str),
    Client(&'a str),
    /// Made at a sign-in with this (`pat:<token id>`): the token's revocation takes them along.
    SignedInWith(&'a str),
}

/// What the authorization server no longer needs, by when it lapsed (ms since the epoch).
#[derive(Debug, Clone, Copy)]
pub struct Lapsed {
    /// Codes and refresh tokens that expired before this go (spent or not: neither can be
    /// redeemed, and a replay of one is refused as unknown).
    pub tokens_before: i64,
    /// Grants revoked before this, or made before it with no refresh token left, go; then the
    /// clients hosts registered or named by a metadata document (`dcr`, `cimd`; not blocked)
    /// before it with no grant left, and the consents of clients that are gone.
    pub kept_from: i64,
}

/// How many of each [`OAuthStore::forget_lapsed`] removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Forgotten {
    pub codes: u64,
    pub refresh_tokens: u64,
    pub grants: u64,
    pub clients: u64,
}

/// How often (ms) spent one-time values that expired are cleared away, at most.
const SPENT_SWEEP_MS: i64 = 60_000;

/// Storage of the authorization server.
#[async_trait]
pub trait OAuthStore: Send + Sync {
    /// Every signing key, newest first.
    async fn signing_keys(&self) -> Result<Vec<SigningKeyRecord>>;
    /// Adds a key and retires the ones before it; every replica is told.
    async fn add_signing_key(&self, key: &SigningKeyRecord) -> Result<()>;
    /// Replaces key `kid`'s secret `was` with `now` (its seed sealed): false when the secret
    /// is no longer `was` (another replica sealed it first).
    async fn reseal_signing_key(&self, kid: &str, was: &str, now: &str) -> Result<bool>;
    /// Deletes keys retired before `before` (no token they signed can still be valid).
    async fn drop_retired_keys(&self, before: i64) -> Result<u64>;

    /// `AlreadyExists` when the id is taken.
    async fn create_client(&self, client: &ClientRecord) -> Result<()>;
    /// Creates or replaces (clients of the config file and the admin API).
    async fn put_client(&self, client: &ClientRecord) -> Result<()>;
    async fn get_client(&self, client_id: &str) -> Result<Option<ClientRecord>>;
    async fn list_clients(&self) -> Result<Vec<ClientRecord>>;
    /// Blocks or unblocks a client; blocking revokes its grants. `NotFound` when absent.
    async fn block_client(&self, client_id: &str, blocked: bool) -> Result<ClientRecord>;
    /// Deletes a client and revokes its grants. `NotFound` when absent.
    async fn delete_client(&self, client_id: &str) -> Result<()>;

    /// The scope a user consented to for a client.
    async fn consent(&self, subject: &str, client_id: &str) -> Result<Option<String>>;
    async fn put_consent(&self, subject: &str, client_id: &str, scope: &str) -> Result<()>;

    async fn create_grant(&self, grant: &GrantRecord) -> Result<()>;
    async fn get_grant(&self, id: &str) -> Result<Option<GrantRecord>>;
    /// Newest first; of one user when `subject` is given.
    async fn list_grants(&self, subject: Option<&str>) -> Result<Vec<GrantRecord>>;
    /// Revokes grants (and forgets the consents behind them); every replica is told. The ids
    /// of the grants revoked now.
    async fn revoke_grants(&self, which: GrantsOf<'_>) -> Result<Vec<String>>;

    /// Spends the one-time value `form_hash` (a sign-in form, a one-time grant's or
    /// assertion's id, a DPoP proof; hashed) good until `expires_at`, at `at`: true the first
    /// time, false when it was spent before, on any replica. Spent values that expired are
    /// forgotten.
    async fn spend_form(&self, form_hash: &str, expires_at: i64, at: i64) -> Result<bool>;

    async fn create_code(&self, code_hash: &str, code: &CodeRecord) -> Result<()>;
    async fn redeem_code(&self, code_hash: &str, at: i64) -> Result<Redeemed<CodeRecord>>;

    async fn create_refresh_token(
        &self,
        token_hash: &str,
        grant_id: &str,
        at: i64,
        expires_at: i64,
    ) -> Result<()>;
    /// The grant of a refresh token that was unused and unexpired; one first used less than
    /// `reuse_within` ms before `at` is [`Redeemed::Again`].
    async fn redeem_refresh_token(
        &self,
        token_hash: &str,
        at: i64,
        reuse_within: i64,
    ) -> Result<Redeemed<String>>;
    /// The grant of a refresh token, used or not, without spending it.
    async fn refresh_token_grant(&self, token_hash: &str) -> Result<Option<String>>;

    /// Removes what [`Lapsed`] says is over. Hosts register anew on every connection, and a
    /// refresh leaves its spent token behind: without this the tables only grow.
    async fn forget_lapsed(&self, lapsed: Lapsed) -> Result<Forgotten>;
}

fn db(what: &'static str) -> impl Fn(sqlx::Error) -> RegistryError {
    move |e| RegistryError::from_sqlx(e, what)
}

fn get<'r, T: sqlx::Decode<'r, sqlx::Any> + sqlx::Type<sqlx::Any>>(
    row: &'r AnyRow,
    col: &str,
) -> Result<T> {
    row.try_get(col).map_err(RegistryError::Database)
}

fn json_of<T: serde::de::DeserializeOwned>(text: &str, what: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|e| RegistryError::Invalid(format!("stored {what}: {e}")))
}

const CLIENT_COLUMNS: &str = "client_id, metadata, secret_hash, source, created_at, blocked_at";
const GRANT_COLUMNS: &str =
    "id, subject, client_id, roles, scope, resource, signed_in_with, created_at, revoked_at";

fn client_from_row(row: &AnyRow) -> Result<ClientRecord> {
    Ok(ClientRecord {
        client_id: get(row, "client_id")?,
        metadata: json_of(&get::<String>(row, "metadata")?, "client metadata")?,
        secret_hash: get(row, "secret_hash")?,
        source: get(row, "source")?,
        created_at: get(row, "created_at")?,
        blocked_at: get(row, "blocked_at")?,
    })
}

fn grant_from_row(row: &AnyRow) -> Result<GrantRecord> {
    Ok(GrantRecord {
        id: get(row, "id")?,
        subject: get(row, "subject")?,
        client_id: get(row, "client_id")?,
        roles: json_of(&get::<String>(row, "roles")?, "grant roles")?,
        scope: get(row, "scope")?,
        resource: get(row, "resource")?,
        signed_in_with: get(row, "signed_in_with")?,
        created_at: get(row, "created_at")?,
        revoked_at: get(row, "revoked_at")?,
    })
}

/// What redeeming found: used again within the interval the caller allows (`fresh` false,
/// `recent` true), reused (it was used before), expired, or good.
fn verdict<T>(
    fresh: bool,
    recent: bool,
    at: i64,
    expires_at: i64,
    grant: String,
    value: T,
) -> Redeemed<T> {
    match fresh {
        false if recent && expires_at >= at => Redeemed::Again(value),
        false => Redeemed::Reused(grant),
        true if expires_at < at => Redeemed::Unknown,
        true => Redeemed::Fresh(value),
    }
}

impl SqlRegistry {
    async fn insert_client(&self, c: &ClientRecord, upsert: bool) -> Result<()> {
        let conflict = if upsert {
            " ON CONFLICT (client_id) DO UPDATE SET metadata = excluded.metadata, \
             secret_hash = excluded.secret_hash, source = excluded.source"
        } else {
            ""
        };
        sqlx::query(&format!(
            "INSERT INTO oauth_clients ({CLIENT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6){conflict}"
        ))
        .bind(&c.client_id)
        .bind(c.metadata.to_string())
        .bind(&c.secret_hash)
        .bind(&c.source)
        .bind(c.created_at)
        .bind(c.blocked_at)
        .execute(self.pool())
        .await
        .map_err(|e| RegistryError::from_sqlx(e, &format!("client {:?}", c.client_id)))?;
        Ok(())
    }

    /// Marks a one-time secret used: whether it was unused until now, and whether it exists.
    async fn mark_used(&self, table: &str, key: &str, hash: &str, at: i64) -> Result<bool> {
        let done = sqlx::query(&format!(
            "UPDATE {table} SET used_at = $1 WHERE {key} = $2 AND used_at IS NULL"
        ))
        .bind(at)
        .bind(hash)
        .execute(self.pool())
        .await
        .map_err(db("one-time secret"))?;
        Ok(done.rows_affected() == 1)
    }
}

#[async_trait]
impl OAuthStore for SqlRegistry {
    async fn signing_keys(&self) -> Result<Vec<SigningKeyRecord>> {
        let rows = sqlx::query(
            "SELECT kid, secret, public_x, created_at, retired_at FROM oauth_keys \
             ORDER BY created_at DESC, kid",
        )
        .fetch_all(self.pool())
        .await
        .map_err(db("signing keys"))?;
        rows.iter()
            .map(|r| {
                Ok(SigningKeyRecord {
                    kid: get(r, "kid")?,
                    secret: get(r, "secret")?,
                    public_x: get(r, "public_x")?,
                    created_at: get(r, "created_at")?,
                    retired_at: get(r, "retired_at")?,
                })
            })
            .collect()
    }

    async fn reseal_signing_key(&self, kid: &str, was: &str, now: &str) -> Result<bool> {
        let done = sqlx::query("UPDATE oauth_keys SET secret = $1 WHERE kid = $2 AND secret = $3")
            .bind(now)
            .bind(kid)
            .bind(was)
            .execute(self.pool())
            .await
            .map_err(db("signing key"))?;
        Ok(done.rows_affected() == 1)
    }

    async fn add_signing_key(&self, k: &SigningKeyRecord) -> Result<()> {
        sqlx::query(
            "INSERT INTO oauth_keys (kid, secret, public_x, created_at, retired_at) \
             VALUES ($1, $2, $3, $4, NULL)",
        )
        .bind(&k.kid)
        .bind(&k.secret)
        .bind(&k.public_x)
        .bind(k.created_at)
        .execute(self.pool())
        .await
        .map_err(db("signing key"))?;
        sqlx::query("UPDATE oauth_keys SET retired_at = $1 WHERE kid <> $2 AND retired_at IS NULL")
            .bind(k.created_at)
            .bind(&k.kid)
            .execute(self.pool())
            .await
            .map_err(db("signing keys"))?;
        self.announce(&Change::SigningKey(k.kid.clone())).await
    }

    async fn drop_retired_keys(&self, before: i64) -> Result<u64> {
        let done =
            sqlx::query("DELETE FROM oauth_keys WHERE retired_at IS NOT NULL AND retired_at < $1")
                .bind(before)
                .execute(self.pool())
                .await
                .map_err(db("signing keys"))?;
        Ok(done.rows_affected())
    }

    async fn create_client(&self, c: &ClientRecord) -> Result<()> {
        self.insert_client(c, false).await
    }

    async fn put_client(&self, c: &ClientRecord) -> Result<()> {
        self.insert_client(c, true).await
    }

    async fn get_client(&self, client_id: &str) -> Result<Option<ClientRecord>> {
        let row = sqlx::query(&format!(
            "SELECT {CLIENT_COLUMNS} FROM oauth_clients WHERE client_id = $1"
        ))
        .bind(client_id)
        .fetch_optional(self.pool())
        .await
        .map_err(db("client"))?;
        row.as_ref().map(client_from_row).transpose()
    }

    async fn list_clients(&self) -> Result<Vec<ClientRecord>> {
        let rows = sqlx::query(&format!(
            "SELECT {CLIENT_COLUMNS} FROM oauth_clients ORDER BY created_at, client_id"
        ))
        .fetch_all(self.pool())
        .await
        .map_err(db("clients"))?;
        rows.iter().map(client_from_row).collect()
    }

    async fn block_client(&self, client_id: &str, blocked: bool) -> Result<ClientRecord> {
        let at = blocked.then(crate::sql::now_ms);
        let done = sqlx::query("UPDATE oauth_clients SET blocked_at = $1 WHERE client_id = $2")
            .bind(at)
            .bind(client_id)
            .execute(self.pool())
            .await
            .map_err(db("client"))?;
        if done.rows_affected() == 0 {
            return Err(RegistryError::NotFound(format!("client {client_id:?}")));
        }
        if blocked {
            self.revoke_grants(GrantsOf::Client(client_id)).await?;
        }
        self.get_client(client_id)
            .await?
            .ok_or_else(|| RegistryError::NotFound(format!("client {client_id:?}")))
    }

    async fn delete_client(&self, client_id: &str) -> Result<()> {
        let done = sqlx::query("DELETE FROM oauth_clients WHERE client_id = $1")
            .bind(client_id)
            .execute(self.pool())
            .await
            .map_err(db("client"))?;
        if done.rows_affected() == 0 {
            return Err(RegistryError::NotFound(format!("client {client_id:?}")));
        }
        self.revoke_grants(GrantsOf::Client(client_id)).await?;
        Ok(())
    }

    async fn consent(&self, subject: &str, client_id: &str) -> Result<Option<String>> {
        let row =
            sqlx::query("SELECT scope FROM oauth_consents WHERE subject = $1 AND client_id = $2")
                .bind(subject)
                .bind(client_id)
                .fetch_optional(self.pool())
                .await
                .map_err(db("consent"))?;
        row.as_ref().map(|r| get(r, "scope")).transpose()
    }

    async fn put_consent(&self, subject: &str, client_id: &str, scope: &str) -> Result<()> {
        sqlx::query(
            "INSERT INTO oauth_consents (subject, client_id, scope, created_at) \
             VALUES ($1, $2, $3, $4) ON CONFLICT (subject, client_id) \
             DO UPDATE SET scope = excluded.scope, created_at = excluded.created_at",
        )
        .bind(subject)
        .bind(client_id)
        .bind(scope)
        .bind(crate::sql::now_ms())
        .execute(self.pool())
        .await
        .map_err(db("consent"))?;
        Ok(())
    }

    async fn create_grant(&self, g: &GrantRecord) -> Result<()> {
        sqlx::query(&format!(
            "INSERT INTO oauth_grants ({GRANT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
        ))
        .bind(&g.id)
        .bind(&g.subject)
        .bind(&g.client_id)
        .bind(serde_json::to_string(&g.roles).unwrap_or_else(|_| "[]".into()))
        .bind(&g.scope)
        .bind(&g.resource)
        .bind(&g.signed_in_with)
        .bind(g.created_at)
        .bind(g.revoked_at)
        .execute(self.pool())
        .await
        .map_err(db("grant"))?;
        Ok(())
    }

    async fn get_grant(&self, id: &str) -> Result<Option<GrantRecord>> {
        let row = sqlx::query(&format!(
            "SELECT {GRANT_COLUMNS} FROM oauth_grants WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(self.pool())
        .await
        .map_err(db("grant"))?;
        row.as_ref().map(grant_from_row).transpose()
    }

    async fn list_grants(&self, subject: Option<&str>) -> Result<Vec<GrantRecord>> {
        let rows = match subject {
            Some(s) => {
                sqlx::query(&format!(
                    "SELECT {GRANT_COLUMNS} FROM oauth_grants WHERE subject = $1 \
                 ORDER BY created_at DESC, id"
                ))
                .bind(s)
                .fetch_all(self.pool())
                .await
            }
            None => {
                sqlx::query(&format!(
                    "SELECT {GRANT_COLUMNS} FROM oauth_grants ORDER BY created_at DESC, id"
                ))
                .fetch_all(self.pool())
                .await
            }
        }
        .map_err(db("grants"))?;
        rows.iter().map(grant_from_row).collect()
    }

    async fn revoke_grants(&self, which: GrantsOf<'_>) -> Result<Vec<String>> {
        let (column, value) = match which {
            GrantsOf::Id(v) => ("id", v),
            GrantsOf::Subject(v) => ("subject", v),
            GrantsOf::Client(v) => ("client_id", v),
            GrantsOf::SignedInWith(v) => ("signed_in_with", v),
        };
        let rows = sqlx::query(&format!(
            "SELECT id, subject, client_id FROM oauth_grants \
             WHERE {column} = $1 AND revoked_at IS NULL"
        ))
        .bind(value)
        .fetch_all(self.pool())
        .await
        .map_err(db("grants"))?;
        let mut ids = Vec::new();
        for row in &rows {
            let (id, subject, client): (String, String, String) = (
                get(row, "id")?,
                get(row, "subject")?,
                get(row, "client_id")?,
            );
            sqlx::query(
                "UPDATE oauth_grants SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL",
            )
            .bind(crate::sql::now_ms())
            .bind(&id)
            .execute(self.pool())
            .await
            .map_err(db("grant"))?;
            // Taken back, the authorization is asked for again next time.
            sqlx::query("DELETE FROM oauth_consents WHERE subject = $1 AND client_id = $2")
                .bind(&subject)
                .bind(&client)
                .execute(self.pool())
                .await
                .map_err(db("consent"))?;
            self.announce(&Change::Grant(id.clone())).await?;
            ids.push(id);
        }
        Ok(ids)
    }

    async fn spend_form(&self, form_hash: &str, expires_at: i64, at: i64) -> Result<bool> {
        // Expired rows are cleared at most once a minute per process: a DPoP-bound host spends
        // a proof on every request, and one statement (one commit) per spend is half the cost
        // of two. A value spent before but expired since is taken as unspent by the upsert.
        let sweep = &self.next_spent_sweep;
        if at >= sweep.load(std::sync::atomic::Ordering::Relaxed) {
            sweep.store(at + SPENT_SWEEP_MS, std::sync::atomic::Ordering::Relaxed);
            sqlx::query("DELETE FROM oauth_spent_forms WHERE expires_at < $1")
                .bind(at)
                .execute(self.pool())
                .await
                .map_err(db("spent forms"))?;
        }
        let done = sqlx::query(
            "INSERT INTO oauth_spent_forms (form_hash, expires_at) VALUES ($1, $2) \
             ON CONFLICT (form_hash) DO UPDATE SET expires_at = excluded.expires_at \
             WHERE oauth_spent_forms.expires_at < $3",
        )
        .bind(form_hash)
        .bind(expires_at)
        .bind(at)
        .execute(self.pool())
        .await
        .map_err(db("spent form"))?;
        Ok(done.rows_affected() == 1)
    }

    async fn create_code(&self, code_hash: &str, c: &CodeRecord) -> Result<()> {
        sqlx::query(
            "INSERT INTO oauth_codes (code_hash, grant_id, redirect_uri, code_challenge, \
             expires_at, used_at) VALUES ($1, $2, $3, $4, $5, NULL)",
        )
        .bind(code_hash)
        .bind(&c.grant_id)
        .bind(&c.redirect_uri)
        .bind(&c.code_challenge)
        .bind(c.expires_at)
        .execute(self.pool())
        .await
        .map_err(db("code"))?;
        Ok(())
    }

    async fn redeem_code(&self, code_hash: &str, at: i64) -> Result<Redeemed<CodeRecord>> {
        let fresh = self
            .mark_used("oauth_codes", "code_hash", code_hash, at)
            .await?;
        let row = sqlx::query(
            "SELECT grant_id, redirect_uri, code_challenge, expires_at FROM oauth_codes \
             WHERE code_hash = $1",
        )
        .bind(code_hash)
        .fetch_optional(self.pool())
        .await
        .map_err(db("code"))?;
        let Some(row) = row else {
            return Ok(Redeemed::Unknown);
        };
        let code = CodeRecord {
            grant_id: get(&row, "grant_id")?,
            redirect_uri: get(&row, "redirect_uri")?,
            code_challenge: get(&row, "code_challenge")?,
            expires_at: get(&row, "expires_at")?,
        };
        Ok(verdict(
            fresh,
            false,
            at,
            code.expires_at,
            code.grant_id.clone(),
            code,
        ))
    }

    async fn create_refresh_token(
        &self,
        token_hash: &str,
        grant_id: &str,
        at: i64,
        expires_at: i64,
    ) -> Result<()> {
        sqlx::query(
            "INSERT INTO oauth_refresh_tokens (token_hash, grant_id, created_at, expires_at, \
             used_at) VALUES ($1, $2, $3, $4, NULL)",
        )
        .bind(token_hash)
        .bind(grant_id)
        .bind(at)
        .bind(expires_at)
        .execute(self.pool())
        .await
        .map_err(db("refresh token"))?;
        Ok(())
    }

    async fn redeem_refresh_token(
        &self,
        token_hash: &str,
        at: i64,
        reuse_within: i64,
    ) -> Result<Redeemed<String>> {
        let fresh = self
            .mark_used("oauth_refresh_tokens", "token_hash", token_hash, at)
            .await?;
        let row = sqlx::query(
            "SELECT grant_id, expires_at, used_at FROM oauth_refresh_tokens WHERE token_hash = $1",
        )
        .bind(token_hash)
        .fetch_optional(self.pool())
        .await
        .map_err(db("refresh token"))?;
        let Some(row) = row else {
            return Ok(Redeemed::Unknown);
        };
        let grant: String = get(&row, "grant_id")?;
        let used_at: Option<i64> = get(&row, "used_at")?;
        let recent = used_at.is_some_and(|u| at - u < reuse_within);
        Ok(verdict(
            fresh,
            recent,
            at,
            get(&row, "expires_at")?,
            grant.clone(),
            grant,
        ))
    }

    async fn refresh_token_grant(&self, token_hash: &str) -> Result<Option<String>> {
        let row = sqlx::query("SELECT grant_id FROM oauth_refresh_tokens WHERE token_hash = $1")
            .bind(token_hash)
            .fetch_optional(self.pool())
            .await
            .map_err(db("refresh token"))?;
        row.as_ref().map(|r| get(r, "grant_id")).transpose()
    }

    async fn forget_lapsed(&self, lapsed: Lapsed) -> Result<Forgotten> {
        let run = |sql: &'static str, at: i64| async move {
            sqlx::query(sql)
                .bind(at)
                .execute(self.pool())
                .await
                .map(|done| done.rows_affected())
                .map_err(db("lapsed authorizations"))
        };
        let codes = run(
            "DELETE FROM oauth_codes WHERE expires_at < $1",
            lapsed.tokens_before,
        )
        .await?;
        let refresh_tokens = run(
            "DELETE FROM oauth_refresh_tokens WHERE expires_at < $1",
            lapsed.tokens_before,
        )
        .await?;
        // A grant without refresh tokens (a machine's, the company's) has only the access
        // token issued with it, long expired at `kept_from`; a revoked one stays in the
        // console's list until `kept_from` has passed its revocation.
        let grants = run(
            "DELETE FROM oauth_grants WHERE (revoked_at IS NOT NULL AND revoked_at < $1) \
             OR (revoked_at IS NULL AND created_at < $1 AND NOT EXISTS \
             (SELECT 1 FROM oauth_refresh_tokens r WHERE r.grant_id = oauth_grants.id))",
            lapsed.kept_from,
        )
        .await?;
        // Only clients hosts brought themselves: registered, or named by a metadata document
        // (fetched again if its host comes back). One of the config or the admin API is an
        // operator's to remove, and a blocked one keeps its block.
        let clients = run(
            "DELETE FROM oauth_clients WHERE source IN ('dcr', 'cimd') AND blocked_at IS NULL \
             AND created_at < $1 AND NOT EXISTS \
             (SELECT 1 FROM oauth_grants g WHERE g.client_id = oauth_clients.client_id)",
            lapsed.kept_from,
        )
        .await?;
        if clients > 0 {
            sqlx::query(
                "DELETE FROM oauth_consents WHERE NOT EXISTS \
                 (SELECT 1 FROM oauth_clients c WHERE c.client_id = oauth_consents.client_id)",
            )
            .execute(self.pool())
            .await
            .map_err(db("lapsed consents"))?;
        }
        Ok(Forgotten {
            codes,
            refresh_tokens,
            grants,
            clients,
        })
    }
}

#[cfg(test)]
mod tests;
