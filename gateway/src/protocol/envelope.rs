//! What travels beside a request's method and params: the `_meta` keys of the 2026-07-28
//! envelope and the HTTP headers of Streamable HTTP.

/// `_meta` key: the request's protocol revision (2026-07-28).
pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the client's capabilities, per request (2026-07-28).
pub const CLIENT_CAPS: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: the client's name and version (2026-07-28).
pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key: the log level the client wants for this request (2026-07-28).
pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key of `server/discover`'s result: the server's name and version.
pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key of a `subscriptions/listen` stream's notifications.
pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
/// The envelope keys only 2026-07-28 servers understand.
pub const STATELESS_KEYS: [&str; 4] = [PROTOCOL_VERSION, CLIENT_CAPS, CLIENT_INFO, LOG_LEVEL];

/// The session a 2025 request belongs to.
pub const SESSION_HEADER: &str = "mcp-session-id";
/// The revision of a request after `initialize` (and of every 2026-07-28 request).
pub const VERSION_HEADER: &str = "mcp-protocol-version";
/// 2026-07-28: the method, repeated for routers that do not read bodies.
pub const METHOD_HEADER: &str = "mcp-method";
/// 2026-07-28: the tool or prompt name or resource URI, repeated likewise.
pub const NAME_HEADER: &str = "mcp-name";
/// Resumption of an SSE stream.
pub const LAST_EVENT_ID_HEADER: &str = "last-event-id";

/// A header value as 2026-07-28 carries it: plain printable ASCII as is, anything else as
/// `=?base64?...?=`.
pub fn encode_header(value: &str) -> String {
    use base64::Engine;
    let plain = value.bytes().all(|b| (0x20..0x7f).contains(&b)) && value.trim() == value;
    if plain {
        value.to_string()
    } else {
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(value)
        )
    }
}

/// The value [`encode_header`] made; `None` for a `=?base64?` value that does not decode.
pub fn decode_header(v: &str) -> Option<String> {
    use base64::Engine;
    match v
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    {
        Some(p) => base64::engine::general_purpose::STANDARD
            .decode(p)
            .ok()
            .and_then(|b| String::from_utf8(b).ok()),
        None => Some(v.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_round_trip() {
        for v in ["get_weather", "café", " padded", "file:///a b"] {
            assert_eq!(decode_header(&encode_header(v)).as_deref(), Some(v));
        }
        assert_eq!(encode_header("plain"), "plain");
        assert!(encode_header("café").starts_with("=?base64?"));
    }
}
