//! Content hashes of definitions: a changed description is a changed hash.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// sha256 (hex) of a JSON value as serialised (key order preserved).
pub fn content_hash(value: &Value) -> String {
    let bytes = serde_json::to_vec(value).unwrap_or_default();
    hex::encode(Sha256::digest(&bytes))
}

/// Short hex digest of a string, for stable suffixes of shortened names.
pub fn short_hash(s: &str, len: usize) -> String {
    let mut h = hex::encode(Sha256::digest(s.as_bytes()));
    h.truncate(len);
    h
}
