//! The clients of the authorization server: RFC 7591 registration (metadata checked, a public
//! client by default), clients of the config file, and the redirect URI rules of the MCP
//! authorization spec and RFC 8252: an exact match, except that a loopback redirect matches on
//! any port (a native app listens on whatever port it gets).

use registry::ClientRecord;
use serde_json::{json, Map, Value};

/// Schemes a redirect may never use: they run code or read files in the browser.
const REFUSED_SCHEMES: [&str; 5] = ["javascript", "data", "file", "vbscript", "blob"];

/// The loopback hosts of native apps' redirects.
fn is_loopback(url: &url::Url) -> bool {
    matches!(
        url.host(),
        Some(url::Host::Ipv4(ip)) if ip.is_loopback()
    ) || matches!(url.host(), Some(url::Host::Ipv6(ip)) if ip.is_loopback())
        || url.host_str() == Some("localhost")
}

/// Whether `uri` may be registered as a redirect: absolute, no fragment, https, http only to
/// loopback, or an app's private-use scheme.
pub fn redirect_allowed(uri: &str) -> Result<(), String> {
    let url = url::Url::parse(uri).map_err(|e| format!("redirect_uri {uri:?}: {e}"))?;
    if url.fragment().is_some() {
        return Err(format!("redirect_uri {uri:?} has a fragment"));
    }
    match url.scheme() {
        "https" => Ok(()),
        "http" if is_loopback(&url) => Ok(()),
        "http" => Err(format!(
            "redirect_uri {uri:?}: http only for loopback hosts (127.0.0.1, [::1], localhost)"
        )),
        s if REFUSED_SCHEMES.contains(&s) => Err(format!("redirect_uri {uri:?}: scheme {s}")),
        _ => Ok(()),
    }
}

/// Whether `sent` is one of the client's redirect URIs: the same string, or a loopback one
/// that differs only in its port.
pub fn redirect_matches(registered: &[String], sent: &str) -> bool {
    if registered.iter().any(|r| r == sent) {
        return true;
    }
    let Ok(sent_url) = url::Url::parse(sent) else {
        return false;
    };
    if sent_url.scheme() != "http" || !is_loopback(&sent_url) {
        return false;
    }
    registered.iter().any(|r| {
        url::Url::parse(r).is_ok_and(|mut r| {
            if r.scheme() != "http" || !is_loopback(&r) {
                return false;
            }
            let mut s = sent_url.clone();
            let _ = r.set_port(None);
            let _ = s.set_port(None);
            r == s
        })
    })
}

/// The redirect URIs of a client's metadata.
/// The grant type of identity assertion grants (RFC 7523 jwt-bearer; `super::id_jag`).
pub const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

pub fn redirect_uris(client: &ClientRecord) -> Vec<String> {
    client.metadata["redirect_uris"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The name a consent page shows.
pub fn display_name(client: &ClientRecord) -> &str {
    client.metadata["client_name"]
        .as_str()
        .unwrap_or(&client.client_id)
}

/// A new client's id.
pub fn new_client_id() -> String {
    format!("mcpgw-{}", uuid::Uuid::new_v4().simple())
}

/// A new client's record, and its secret (shown once, stored as a hash) when it is
/// confidential. `source`: `dcr` or `api`.
pub fn new_client(
    client_id: String,
    metadata: Value,
    confidential: bool,
    source: &str,
) -> (ClientRecord, Option<String>) {
    let secret = confidential.then(super::random_secret);
    let rec = ClientRecord {
        client_id,
        metadata,
        secret_hash: secret.as_deref().map(super::hashed),
        source: source.into(),
        created_at: registry::now_ms(),
        blocked_at: None,
    };
    (rec, secret)
}

/// A registration request checked and completed (RFC 7591 §2): the metadata to store, and
/// whether the client is confidential (gets a secret).
pub fn registered_metadata(req: &Value, scopes: &[String]) -> Result<(Value, bool), String> {
    let req = req
        .as_object()
        .ok_or("the registration must be a JSON object")?;
    let uris: Vec<&str> = req
        .get("redirect_uris")
        .and_then(Value::as_array)
        .ok_or("redirect_uris is required")?
        .iter()
        .map(|v| v.as_str().ok_or("redirect_uris must be strings"))
        .collect::<Result<_, _>>()?;
    if uris.is_empty() {
        return Err("redirect_uris must not be empty".into());
    }
    for u in &uris {
        redirect_allowed(u)?;
    }
    let method = req
        .get("token_endpoint_auth_method")
        .and_then(Value::as_str)
        .unwrap_or("none");
    if !["none", "client_secret_post", "client_secret_basic"].contains(&method) {
        return Err(format!(
            "token_endpoint_auth_method {method:?} is not supported (none, client_secret_post, \
             client_secret_basic)"
        ));
    }
    let strings = |key: &str, default: &str| -> Result<Vec<String>, String> {
        match req.get(key) {
            None => Ok(vec![default.to_string()]),
            Some(Value::Array(a)) => a
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_string)
                        .ok_or(format!("{key} must be strings"))
                })
                .collect(),
            Some(_) => Err(format!("{key} must be a list")),
        }
    };
    let grant_types = strings("grant_types", "authorization_code")?;
    for g in &grant_types {
        if g != "authorization_code" && g != "refresh_token" && g != JWT_BEARER {
            return Err(format!("grant type {g:?} is not supported"));
        }
    }
    let response_types = strings("response_types", "code")?;
    if response_types.iter().any(|r| r != "code") {
        return Err("only the response type code is supported".into());
    }
    if let Some(scope) = req.get("scope").and_then(Value::as_str) {
        if let Some(bad) = scope.split(' ').find(|s| !scopes.iter().any(|k| k == s)) {
            return Err(format!(
                "scope {bad:?} is not offered (scopes: {})",
                scopes.join(" ")
            ));
        }
    }
    let mut out = Map::new();
    out.insert("redirect_uris".into(), json!(uris));
    out.insert("token_endpoint_auth_method".into(), json!(method));
    out.insert("grant_types".into(), json!(grant_types));
    out.insert("response_types".into(), json!(response_types));
    // Descriptive fields are kept as sent when they are strings (shown as text, never markup).
    for key in [
        "client_name",
        "client_uri",
        "logo_uri",
        "scope",
        "software_id",
        "software_version",
    ] {
        if let Some(v) = req.get(key).and_then(Value::as_str) {
            if v.len() > 2048 {
                return Err(format!("{key} is longer than 2048 characters"));
            }
            out.insert(key.into(), json!(v));
        }
    }
    Ok((Value::Object(out), method != "none"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirects_match_exactly_or_on_any_loopback_port() {
        let reg = vec![
            "http://127.0.0.1:3000/callback".to_string(),
            "https://app.example.com/cb".to_string(),
            "http://localhost/cb".to_string(),
        ];
        assert!(redirect_matches(&reg, "https://app.example.com/cb"));
        assert!(redirect_matches(&reg, "http://127.0.0.1:49152/callback"));
        assert!(redirect_matches(&reg, "http://localhost:8080/cb"));
        assert!(
            !redirect_matches(&reg, "https://app.example.com/cb/"),
            "exact"
        );
        assert!(
            !redirect_matches(&reg, "https://app.example.com:444/cb"),
            "ports only on loopback"
        );
        assert!(!redirect_matches(&reg, "http://127.0.0.1:3000/other"));
        assert!(!redirect_matches(
            &reg,
            "http://127.0.0.1.evil.com:3000/callback"
        ));
        assert!(!redirect_matches(
            &reg,
            "https://app.example.com/cb?next=https://evil"
        ));
    }

    #[test]
    fn registrations_are_checked() {
        let scopes = vec!["mcp".to_string()];
        let (m, confidential) = registered_metadata(
            &json!({"redirect_uris": ["http://localhost:1/cb"], "client_name": "X"}),
            &scopes,
        )
        .unwrap();
        assert!(!confidential);
        assert_eq!(m["token_endpoint_auth_method"], "none");
        assert_eq!(m["grant_types"], json!(["authorization_code"]));
        for bad in [
            json!({}),
            json!({"redirect_uris": []}),
            json!({"redirect_uris": ["http://evil.example.com/cb"]}),
            json!({"redirect_uris": ["javascript:alert(1)"]}),
            json!({"redirect_uris": ["https://a.example/cb#x"]}),
            json!({"redirect_uris": ["https://a.example/cb"], "grant_types": ["password"]}),
            json!({"redirect_uris": ["https://a.example/cb"], "scope": "admin"}),
            json!({"redirect_uris": ["https://a.example/cb"], "token_endpoint_auth_method": "private_key_jwt"}),
        ] {
            assert!(registered_metadata(&bad, &scopes).is_err(), "{bad}");
        }
        assert!(registered_metadata(
            &json!({"redirect_uris": ["cursor://anysphere.cursor/cb"]}),
            &scopes
        )
        .is_ok());
    }
}
