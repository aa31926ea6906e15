//! What unit tests share: a registry on a SQLite file of its own.

use std::path::PathBuf;

use registry::{OpenOptions, SqlRegistry};

/// A folder removed when dropped.
pub struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A migrated registry on a fresh SQLite file, and the folder that holds it.
pub async fn sqlite_registry() -> (SqlRegistry, Scratch) {
    let dir = std::env::temp_dir().join(format!("gw-unit-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("sqlite://{}/r.db?mode=rwc", dir.display());
    let reg = SqlRegistry::open(&url, OpenOptions::default())
        .await
        .unwrap();
    (reg, Scratch(dir))
}
