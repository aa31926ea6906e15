//! Client ID Metadata Documents (the MCP authorization spec's preferred registration): a client
//! whose `client_id` is an https URL is described by the JSON document at that URL. The
//! gateway fetches it as an untrusted party would be fetched: https only, no redirects, the
//! host's addresses resolved first and refused when loopback, private, link-local or otherwise
//! not public (unless `client_metadata_allow_private`), the connection pinned to the address
//! checked (a second DNS answer cannot swap it), at most [`MAX_BYTES`] in [`FETCH_TIMEOUT`].
//! A good document is kept for [`FRESH_FOR`] and stored as a client of source `cimd`, so the
//! admin API lists it and can block it. While its site cannot be reached the stored copy stands
//! in: refusing would tell the host its client is unknown, and SDK clients then throw their
//! tokens away.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use registry::{now_ms, ClientRecord, Registry};
use serde_json::Value;

use super::ClientError;

/// The largest document read (the spec suggests documents stay under 5 kB).
pub const MAX_BYTES: usize = 5 * 1024;
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// A fetched document is trusted this long before it is fetched again.
pub const FRESH_FOR: Duration = Duration::from_secs(300);

/// Whether an address is one a document may come from without `allow_private`.
fn is_public(ip: IpAddr) -> bool {
    match ip.to_canonical() {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                // Carrier-grade NAT (100.64/10) and the benchmarking range (198.18/15).
                || (a == 100 && (64..128).contains(&b))
                || (a == 198 && (b == 18 || b == 19))
                || a == 0
                || a >= 240)
        }
        IpAddr::V6(v6) => {
            let first = v6.segments()[0];
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                // Unique local (fc00::/7) and link-local (fe80::/10).
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80)
        }
    }
}

/// Whether `client_id` names a metadata document.
pub fn is_document_url(client_id: &str) -> bool {
    client_id.starts_with("https://")
}

/// Fetched documents by URL.
#[derive(Default)]
pub struct Documents {
    seen: Mutex<HashMap<String, Instant>>,
}

impl Documents {
    /// The client a document URL stands for: the stored one while fresh, else fetched again.
    pub async fn client(
        &self,
        registry: &dyn Registry,
        url: &str,
        allow_private: bool,
    ) -> Result<ClientRecord, ClientError> {
        let fresh = self
            .seen
            .lock()
            .unwrap()
            .get(url)
            .is_some_and(|at| at.elapsed() < FRESH_FOR);
        let stored = registry
            .get_client(url)
            .await
            .map_err(|e| ClientError::unavailable(&e))?;
        if fresh {
            if let Some(c) = stored {
                return Ok(c);
            }
        }
        let doc = match fetch(url, allow_private).await {
            Ok(doc) => doc,
            // Its site is away for now: the last good copy stands in (a refusal would tell the
            // host its client is unknown, on which it throws its tokens away), and is used
            // without asking again for a while.
            Err(Unfetched::Unreachable(e)) => {
                let Some(last) = stored else {
                    return Err(ClientError::Document(e));
                };
                tracing::warn!(client = url, error = %e, "a client's metadata document is out of reach; its last good copy is used");
                self.seen
                    .lock()
                    .unwrap()
                    .insert(url.to_string(), Instant::now());
                return Ok(last);
            }
            Err(e) => return Err(ClientError::Document(e.to_string())),
        };
        let metadata = checked(url, &doc).map_err(ClientError::Document)?;
        let rec = ClientRecord {
            client_id: url.to_string(),
            metadata,
            secret_hash: None,
            source: "cimd".into(),
            created_at: stored.as_ref().map_or_else(now_ms, |s| s.created_at),
            blocked_at: stored.as_ref().and_then(|s| s.blocked_at),
        };
        registry
            .put_client(&rec)
            .await
            .map_err(|e| ClientError::unavailable(&e))?;
        self.seen
            .lock()
            .unwrap()
            .insert(url.to_string(), Instant::now());
        Ok(rec)
    }
}

/// A document's metadata, checked: it names itself, and asks for what a public client may.
fn checked(url: &str, doc: &Value) -> Result<Value, String> {
    if doc["client_id"].as_str() != Some(url) {
        return Err(format!(
            "the document's client_id is not its own URL ({url})"
        ));
    }
    let method = doc["token_endpoint_auth_method"].as_str().unwrap_or("none");
    if method != "none" {
        return Err(format!(
            "token_endpoint_auth_method {method:?}: a metadata document's client has no \
             secret (use none)"
        ));
    }
    let (metadata, _) = super::clients::registered_metadata(doc, &[]).or_else(|e| {
        // Scopes are checked at authorization, against what the server offers.
        if e.starts_with("scope") {
            let mut d = doc.clone();
            d.as_object_mut().map(|o| o.remove("scope"));
            super::clients::registered_metadata(&d, &[])
        } else {
            Err(e)
        }
    })?;
    Ok(metadata)
}

/// Why a document was not had.
#[derive(Debug, thiserror::Error)]
enum Unfetched {
    /// The URL or what its site answered is not acceptable (not https, a private address, a
    /// 4xx): the client is refused.
    #[error("{0}")]
    Refused(String),
    /// Its site cannot be reached or is failing (no answer in time, a 5xx, 429): that may pass.
    #[error("{0}")]
    Unreachable(String),
}

impl From<String> for Unfetched {
    fn from(why: String) -> Self {
        Unfetched::Refused(why)
    }
}

impl From<&str> for Unfetched {
    fn from(why: &str) -> Self {
        Unfetched::Refused(why.to_string())
    }
}

/// The document at `url`, fetched with the guards of this module.
async fn fetch(url: &str, allow_private: bool) -> Result<Value, Unfetched> {
    let unreachable = Unfetched::Unreachable;
    let parsed = url::Url::parse(url).map_err(|e| format!("client_id is not a URL: {e}"))?;
    if parsed.scheme() != "https"
        || !parsed.username().is_empty()
        || parsed.password().is_some()
        || parsed.fragment().is_some()
        || parsed.path() == "/"
    {
        return Err(
            "a client_id URL must be https, with a path, and without credentials or fragment"
                .into(),
        );
    }
    let host = parsed
        .host_str()
        .ok_or("client_id has no host")?
        .to_string();
    let port = parsed.port_or_known_default().unwrap_or(443);
    let addrs: Vec<SocketAddr> = tokio::time::timeout(
        FETCH_TIMEOUT,
        tokio::net::lookup_host((host.trim_matches(['[', ']']), port)),
    )
    .await
    .map_err(|_| unreachable(format!("{host} did not resolve in time")))?
    .map_err(|e| unreachable(format!("{host} does not resolve: {e}")))?
    .collect();
    let Some(addr) = addrs.first().copied() else {
        return Err(unreachable(format!("{host} has no address")));
    };
    if !allow_private {
        if let Some(bad) = addrs.iter().find(|a| !is_public(a.ip())) {
            return Err(Unfetched::Refused(format!(
                "{host} resolves to {} (loopback, private or reserved): refused \
                 (auth.server.client_metadata_allow_private)",
                bad.ip()
            )));
        }
    }
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .resolve(&host, addr)
        .connect_timeout(FETCH_TIMEOUT)
        .timeout(FETCH_TIMEOUT)
        .build()
        .map_err(|e| e.to_string())?;
    let resp = http
        .get(parsed.as_str())
        .header("accept", "application/json")
        .send()
        .await
        .map_err(|e| unreachable(format!("cannot fetch {url}: {e}")))?;
    let status = resp.status();
    if status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS {
        return Err(unreachable(format!("{url} answered {status}")));
    }
    if !status.is_success() {
        return Err(Unfetched::Refused(format!("{url} answered {status}")));
    }
    crate::json_answers::read_at_most(resp, MAX_BYTES)
        .await
        .map_err(|e| Unfetched::Refused(format!("{url}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_public_addresses_are_public() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "240.0.0.1",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for public in ["93.184.216.34", "2606:4700::1111", "8.8.8.8"] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }

    #[test]
    fn a_document_names_itself_and_has_no_secret() {
        let url = "https://app.example.com/client.json";
        let good = serde_json::json!({"client_id": url, "redirect_uris": ["http://127.0.0.1/cb"],
                                      "client_name": "App", "scope": "anything"});
        assert!(checked(url, &good).is_ok());
        let mut other = good.clone();
        other["client_id"] = "https://evil.example/client.json".into();
        assert!(checked(url, &other).is_err());
        let mut secret = good.clone();
        secret["token_endpoint_auth_method"] = "client_secret_basic".into();
        assert!(checked(url, &secret).is_err());
    }
}
