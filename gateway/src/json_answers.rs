//! JSON answers of other servers (authorization servers and their metadata, token issuers'
//! keys, an OpenID provider's tokens), read with a bound. Such a server is whatever an upstream
//! or a config names, and one that answers without end (a compromised upstream's resource
//! metadata, say) must not take the gateway's memory: past [`MAX_BYTES`] the read stops.

use serde::de::DeserializeOwned;

/// The most of one answer that is read. Metadata, token answers and key sets are a few KiB.
pub const MAX_BYTES: usize = 1024 * 1024;

/// The JSON of `resp`'s body, or why there is none (too large, cut off, not JSON).
pub async fn read<T: DeserializeOwned>(mut resp: reqwest::Response) -> Result<T, String> {
    let too_large = || format!("the answer is larger than {MAX_BYTES} bytes");
    if resp.content_length().is_some_and(|n| n > MAX_BYTES as u64) {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(|e| e.to_string())? {
        if body.len() + chunk.len() > MAX_BYTES {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    serde_json::from_slice(&body).map_err(|e| format!("not JSON: {e}"))
}
