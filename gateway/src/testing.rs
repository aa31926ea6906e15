//! What unit tests share: a registry on a SQLite file of its own, and tokens stored in it.

use std::path::PathBuf;

use registry::{OpenOptions, Registry, SqlRegistry, TokenRecord};

/// A folder removed when dropped.
pub struct Scratch(PathBuf);

impl Scratch {
    /// A new empty folder of its own under the system's temporary folder.
    pub fn new() -> Self {
        let dir = std::env::temp_dir().join(format!("gw-unit-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    pub fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A migrated registry on a fresh SQLite file, and the folder that holds it.
pub async fn sqlite_registry() -> (SqlRegistry, Scratch) {
    let dir = Scratch::new();
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
