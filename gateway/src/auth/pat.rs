//! Personal access tokens: `mcpgw_<id>_<secret>`. The id is public (it names the token in lists
//! and logs); only the sha256 of the whole token is stored. A token read from the registry is
//! trusted from memory for [`FRESH_FOR`] (a database read per request cost half the throughput);
//! a revocation still takes effect on every replica at once, because each replica forgets a
//! token when the registry announces its change (and distrusts every verdict from before a
//! moment when announcements may have been missed). When the database is unreachable, a token verified in the last few minutes is decided
//! from memory at once (only tokens never seen wait for the database).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use registry::{now_ms, Registry, TokenRecord};
use sha2::{Digest, Sha256};

pub const PREFIX: &str = "mcpgw_";
/// How long a verified token is trusted while the database is unreachable: the bound on how
/// stale a verdict can be during an outage (a revocation on another replica cannot arrive then).
pub const OUTAGE_GRACE: Duration = Duration::from_secs(300);
/// How long a token read from the registry is decided from memory. Revocations do not wait for
/// it (they arrive as registry notifications); it bounds how stale a verdict can be if a
/// notification is lost without the listener noticing.
pub const FRESH_FOR: Duration = Duration::from_secs(10);
/// During an outage, the database is asked again at most this often (in the background).
const PROBE_EVERY: Duration = Duration::from_secs(1);
/// `last_used_at` is written at most this often per token.
const TOUCH_EVERY: Duration = Duration::from_secs(60);

/// A new token: (the token, its id, its hash).
pub fn generate() -> (String, String, String) {
    let id = uuid::Uuid::new_v4().simple().to_string()[..12].to_string();
    let secret = format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    let token = format!("{PREFIX}{id}_{secret}");
    let hash = hash(&token);
    (token, id, hash)
}

pub fn hash(token: &str) -> String {
    registry::hash::text_hash(token)
}

/// Whether `token`'s hash is `stored` (hex), compared in constant time, without allocating.
fn hashes_to(token: &str, stored: &str) -> bool {
    let mut hex = [0u8; 64];
    hex::encode_to_slice(Sha256::digest(token.as_bytes()), &mut hex)
        .is_ok_and(|()| same_bytes(stored.as_bytes(), &hex))
}

/// The id of a token that looks like one of ours.
pub fn id_of(token: &str) -> Option<&str> {
    let rest = token.strip_prefix(PREFIX)?;
    let (id, secret) = rest.split_once('_')?;
    (id.len() == 12 && !secret.is_empty()).then_some(id)
}

/// Whether two slices are equal, in time that does not depend on where they differ (their
/// lengths are not secret: a token's and a hash's are known).
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Why a token was refused.
#[derive(Debug, PartialEq)]
pub enum Refusal {
    Unknown,
    Revoked,
    Expired,
    /// The database cannot be asked and the token was not recently verified.
    Unavailable,
}

/// A token's record as read from the registry, shared (not copied) by every request that uses
/// the token, and when it was read.
type Verified = (Arc<TokenRecord>, Instant);

/// Checks tokens against the registry.
#[derive(Default)]
pub struct TokenChecker {
    /// Recently verified tokens, for database outages: id → (record, when verified).
    recent: Arc<Mutex<HashMap<String, Verified>>>,
    touched: Mutex<HashMap<String, Instant>>,
    /// Since when the database has been failing (until a read succeeds again).
    outage: Arc<Mutex<Option<Instant>>>,
    last_probe: Mutex<Option<Instant>>,
    /// Verdicts from before this are not fresh: notifications may have been missed then.
    unsure_before: Mutex<Option<Instant>>,
}

impl TokenChecker {
    pub async fn check(
        &self,
        registry: &Arc<dyn Registry>,
        token: &str,
    ) -> Result<Arc<TokenRecord>, Refusal> {
        let id = id_of(token).ok_or(Refusal::Unknown)?;
        if let Some(rec) = self.fresh(id) {
            return self.judge(registry, rec, token, id, false);
        }
        // While the database is known to be down, a token verified a moment ago is decided from
        // memory at once: asking would make every request wait for the pool's timeout.
        if self.outage.lock().unwrap().is_some() {
            if let Some(rec) = self.remembered(id) {
                self.probe(registry, id);
                return self.judge(registry, rec, token, id, false);
            }
        }
        let rec = match registry.get_token(id).await {
            Ok(Some(rec)) => {
                self.outage.lock().unwrap().take();
                Arc::new(rec)
            }
            Ok(None) => {
                self.outage.lock().unwrap().take();
                return Err(Refusal::Unknown);
            }
            Err(e) if e.is_transient() => {
                self.outage.lock().unwrap().get_or_insert_with(Instant::now);
                let Some(rec) = self.remembered(id) else {
                    return Err(Refusal::Unavailable);
                };
                tracing::warn!(
                    token = id,
                    "database unavailable: token accepted from the last check"
                );
                return self.judge(registry, rec, token, id, false);
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot read a token");
                return Err(Refusal::Unavailable);
            }
        };
        self.judge(registry, rec, token, id, true)
    }

    /// A token verified within [`OUTAGE_GRACE`].
    fn remembered(&self, id: &str) -> Option<Arc<TokenRecord>> {
        self.verified_within(id, OUTAGE_GRACE)
    }

    /// A token verified within [`FRESH_FOR`], and since notifications were last missed.
    fn fresh(&self, id: &str) -> Option<Arc<TokenRecord>> {
        let unsure_before = *self.unsure_before.lock().unwrap();
        match self.recent.lock().unwrap().get(id) {
            Some((rec, at))
                if at.elapsed() < FRESH_FOR && unsure_before.is_none_or(|u| *at > u) =>
            {
                Some(rec.clone())
            }
            _ => None,
        }
    }

    fn verified_within(&self, id: &str, age: Duration) -> Option<Arc<TokenRecord>> {
        match self.recent.lock().unwrap().get(id) {
            Some((rec, at)) if at.elapsed() < age => Some(rec.clone()),
            _ => None,
        }
    }

    /// During an outage, asks the database again in the background (one probe at most every
    /// [`PROBE_EVERY`]): an answer ends the outage, and a revocation made while notifications
    /// could not arrive is learnt.
    fn probe(&self, registry: &Arc<dyn Registry>, id: &str) {
        {
            let mut last = self.last_probe.lock().unwrap();
            if last.is_some_and(|t| t.elapsed() < PROBE_EVERY) {
                return;
            }
            *last = Some(Instant::now());
        }
        let registry = registry.clone();
        let id = id.to_string();
        let outage = self.outage.clone();
        let recent = self.recent.clone();
        tokio::spawn(async move {
            match registry.get_token(&id).await {
                Ok(rec) => {
                    outage.lock().unwrap().take();
                    tracing::info!("database reachable again: tokens are checked against it");
                    if rec.is_none_or(|r| r.revoked_at.is_some()) {
                        recent.lock().unwrap().remove(&id);
                    }
                }
                Err(e) => tracing::debug!(error = %e, "database still unavailable"),
            }
        });
    }

    /// The verdict on a record: `fresh` when it was just read from the database.
    fn judge(
        &self,
        registry: &Arc<dyn Registry>,
        rec: Arc<TokenRecord>,
        token: &str,
        id: &str,
        fresh: bool,
    ) -> Result<Arc<TokenRecord>, Refusal> {
        if !hashes_to(token, &rec.token_hash) {
            return Err(Refusal::Unknown);
        }
        if rec.revoked_at.is_some() {
            return Err(Refusal::Revoked);
        }
        let now = now_ms();
        if rec.expires_at.is_some_and(|e| e <= now) {
            return Err(Refusal::Expired);
        }
        if !fresh {
            return Ok(rec);
        }
        self.recent
            .lock()
            .unwrap()
            .insert(id.to_string(), (rec.clone(), Instant::now()));
        let due = {
            let mut touched = self.touched.lock().unwrap();
            let due = touched.get(id).is_none_or(|t| t.elapsed() >= TOUCH_EVERY);
            if due {
                touched.insert(id.to_string(), Instant::now());
            }
            due
        };
        if due {
            let registry = registry.clone();
            let id = id.to_string();
            tokio::spawn(async move {
                if let Err(e) = registry.touch_token(&id, now).await {
                    tracing::debug!(error = %e, "last-used time not written");
                }
            });
        }
        Ok(rec)
    }

    /// Drops what is remembered of a token (revoked here or on another replica, or expired).
    pub fn forget(&self, id: &str) {
        self.recent.lock().unwrap().remove(id);
        self.touched.lock().unwrap().remove(id);
    }

    /// Registry notifications were missed, and one of them may have been a revocation: no
    /// verdict from before now is trusted without asking the database again. They stay for a
    /// database outage (the listener loses its connection exactly then), where
    /// [`OUTAGE_GRACE`] bounds them.
    pub fn distrust_all(&self) {
        *self.unsure_before.lock().unwrap() = Some(Instant::now());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_recognisable_and_hashed() {
        let (token, id, h) = generate();
        assert!(token.starts_with(PREFIX));
        assert_eq!(id_of(&token), Some(id.as_str()));
        assert_eq!(hash(&token), h);
        assert!(hashes_to(&token, &h) && !hashes_to(&token, &hash("mcpgw_x")));
        assert!(!hashes_to(&token, &h[..63]));
        assert_ne!(generate().0, token);
        assert_eq!(id_of("mcpgw_short_x"), None);
        assert_eq!(id_of("eyJhbGciOi.x.y"), None);
        assert!(same_bytes(b"abc", b"abc") && !same_bytes(b"abc", b"abd"));
        assert!(!same_bytes(b"", b"abc") && !same_bytes(b"abc", b"ab"));
    }

    /// A token forgotten (revoked or expired) leaves nothing of itself in the checker.
    #[tokio::test]
    async fn a_forgotten_token_leaves_nothing_behind() {
        let (reg, _dir) = crate::testing::sqlite_registry().await;
        let registry: Arc<dyn Registry> = Arc::new(reg);
        let (token, id) = crate::testing::stored_token(registry.as_ref(), &[], None).await;
        let checker = TokenChecker::default();
        checker.check(&registry, &token).await.unwrap();
        assert!(checker.recent.lock().unwrap().contains_key(&id));
        assert!(checker.touched.lock().unwrap().contains_key(&id));

        checker.forget(&id);
        assert!(checker.recent.lock().unwrap().is_empty());
        assert!(
            checker.touched.lock().unwrap().is_empty(),
            "the time of its last write is still kept"
        );
    }
}

/// What a new token is for.
#[derive(Debug, Clone, serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewToken {
    /// What the token is for (shown in lists).
    pub name: String,
    /// Who it acts for: the principal the audit log names.
    pub owner: String,
    /// Roles it carries; each must exist.
    #[serde(default)]
    pub roles: Vec<String>,
    /// Days until it expires; none: it does not expire.
    pub expires_in_days: Option<u32>,
}

/// Creates a token: (the token, shown once; its record).
pub async fn issue(
    registry: &dyn Registry,
    req: &NewToken,
) -> Result<(String, TokenRecord), registry::RegistryError> {
    use registry::RegistryError::Invalid;
    if req.name.trim().is_empty() || req.owner.trim().is_empty() {
        return Err(Invalid("a token needs a name and an owner".into()));
    }
    let known: Vec<String> = registry
        .list_roles()
        .await?
        .into_iter()
        .map(|r| r.name)
        .collect();
    if let Some(r) = req.roles.iter().find(|r| !known.contains(r)) {
        return Err(Invalid(format!(
            "role {r:?} does not exist (known: {})",
            known.join(", ")
        )));
    }
    if req.expires_in_days == Some(0) {
        return Err(Invalid("expires_in_days must be > 0".into()));
    }
    let (token, id, token_hash) = generate();
    let now = now_ms();
    let rec = TokenRecord {
        id,
        name: req.name.clone(),
        owner: req.owner.clone(),
        roles: req.roles.clone(),
        token_hash,
        created_at: now,
        expires_at: req.expires_in_days.map(|d| now + i64::from(d) * 86_400_000),
        last_used_at: None,
        revoked_at: None,
    };
    registry.create_token(&rec).await?;
    Ok((token, rec))
}
