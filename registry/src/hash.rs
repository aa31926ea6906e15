//! Content hashes of definitions: a changed description is a changed hash.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// sha256 (hex) of a JSON value as serialised (key order preserved).
pub fn content_hash(value: &Value) -> String {
    text_hash(&serde_json::to_string(value).unwrap_or_default())
}

/// sha256 (hex) of a text. Identifies it across restarts and replicas: stored embeddings are
/// keyed by it, and a definition's compact text hashes as [`content_hash`] of its value.
pub fn text_hash(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// Short hex digest of a string, for stable suffixes of shortened names.
pub fn short_hash(s: &str, len: usize) -> String {
    let mut h = hex::encode(Sha256::digest(s.as_bytes()));
    h.truncate(len);
    h
}
