//! JSON answers of other servers (authorization servers and their metadata, token issuers'
//! keys, an OpenID provider's tokens, clients' metadata documents), read with a bound. Such a
//! server is whatever an upstream or a config names, and one that answers without end (a
//! compromised upstream's resource metadata, say) must not take the gateway's memory: past
//! [`MAX_BYTES`] (or a smaller bound of the caller's) the read stops.

use serde::de::DeserializeOwned;

/// The most of one answer that is read. Metadata, token answers and key sets are a few KiB.
pub const MAX_BYTES: usize = 1024 * 1024;

/// The JSON of `resp`'s body, or why there is none (too large, cut off, not JSON).
pub async fn read<T: DeserializeOwned>(resp: reqwest::Response) -> Result<T, String> {
    read_at_most(resp, MAX_BYTES).await
}

/// The JSON of `resp`'s body if it is at most `max` bytes, or why there is none.
pub async fn read_at_most<T: DeserializeOwned>(
    mut resp: reqwest::Response,
    max: usize,
) -> Result<T, String> {
    let too_large = || format!("the answer is larger than {max} bytes");
    if resp.content_length().is_some_and(|n| n > max as u64) {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(|e| e.to_string())? {
        if body.len() + chunk.len() > max {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    serde_json::from_slice(&body).map_err(|e| format!("not JSON: {e}"))
}
