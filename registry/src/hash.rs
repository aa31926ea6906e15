//! Content hashes of definitions: a changed description is a changed hash.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// sha256 (hex) of a JSON value as serialised (key order preserved).
pub fn content_hash(value: &Value) -> String {
    text_hash(&serde_json::to_string(value).unwrap_or_default())
}

/// Lowercase hex of `bytes`. `hex::encode` collects the digits one `char` at a time into a
/// growing string: about 2,000 instructions for a SHA-256 digest, which every audit entry's
/// chain hash paid (callgrind, docs/benchmarks.md).
pub fn to_hex(bytes: &[u8]) -> String {
    let mut out = vec![0; bytes.len() * 2];
    hex::encode_to_slice(bytes, &mut out).expect("twice as long as the input");
    String::from_utf8(out).expect("hex digits are ASCII")
}

/// sha256 (hex) of a text. Identifies it across restarts and replicas: stored embeddings are
/// keyed by it, and a definition's compact text hashes as [`content_hash`] of its value.
pub fn text_hash(text: &str) -> String {
    to_hex(&Sha256::digest(text.as_bytes()))
}

/// Short hex digest of a string, for stable suffixes of shortened names.
pub fn short_hash(s: &str, len: usize) -> String {
    let mut h = to_hex(&Sha256::digest(s.as_bytes()));
    h.truncate(len);
    h
}

#[cfg(test)]
mod tests {
    #[test]
    fn hex_is_lowercase_and_matches_the_hex_crate() {
        let bytes: Vec<u8> = (0..=255).collect();
        assert_eq!(super::to_hex(&bytes), hex::encode(&bytes));
        assert_eq!(super::to_hex(&[0xAB, 0x01]), "ab01");
        assert_eq!(super::to_hex(&[]), "");
    }
}
