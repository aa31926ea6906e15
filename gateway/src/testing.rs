//! What unit tests share: a registry on a SQLite file of its own, tokens stored in it, and an
//! environment made of fixed variables.

use registry::{OpenOptions, Registry, SqlRegistry, TokenRecord};
use tempfile::TempDir;

/// A migrated registry on a fresh SQLite file, and the folder that holds it.
pub async fn sqlite_registry() -> (SqlRegistry, TempDir) {
    let dir = TempDir::new().unwrap();
    let url = format!("sqlite://{}/r.db?mode=rwc", dir.path().display());
    let reg = SqlRegistry::open(&url, OpenOptions::default())
        .await
        .unwrap();
    (reg, dir)
}

/// A personal access token of `ann` with `roles`, stored in `registry` (`expires_at` in ms since
/// the epoch, which `pat::issue` only takes in whole days); its text and id.
pub async fn stored_token(
    registry: &dyn Registry,
    roles: &[&str],
    expires_at: Option<i64>,
) -> (String, String) {
    let (token, id, token_hash) = crate::auth::pat::generate();
    let rec = TokenRecord {
        id: id.clone(),
        name: "t".into(),
        owner: "ann".into(),
        roles: roles.iter().map(|r| r.to_string()).collect(),
        token_hash,
        created_at: registry::now_ms(),
        expires_at,
        last_used_at: None,
        revoked_at: None,
    };
    registry.create_token(&rec).await.unwrap();
    (token, id)
}

/// An environment lookup (`std::env::var`'s shape) that sees only `pairs`: for code that takes
/// its variables through a function, so a test need not set the process's own.
pub fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
    move |name: &str| {
        pairs
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.to_string())
    }
}
