//! Where an upstream's authorization server is and what it offers, found the MCP
//! authorization spec's way: the protected resource metadata (RFC 9728) named by the 401's
//! `WWW-Authenticate` or at its well-known paths, then the authorization server's metadata
//! (RFC 8414, then OpenID discovery, paths inserted as the spec orders them). For servers of the
//! 2025-03-26 revision, which publish no resource metadata: the server's origin is its
//! authorization server, and without metadata its endpoints are `/authorize`, `/token` and
//! `/register`.

use serde_json::{json, Value};

/// What an upstream needs for a user's authorization.
#[derive(Debug, Clone)]
pub struct Discovered {
    /// The resource to ask tokens for (RFC 8707): the metadata's `resource`, or the server's URL.
    pub resource: String,
    /// The authorization server's issuer.
    pub issuer: String,
    /// Its metadata (given, or the 2025-03-26 defaults).
    pub metadata: Value,
    /// The scope to ask for: the 401's, else the resource's `scopes_supported`, else none.
    pub scope: Option<String>,
}

/// A parameter of a `WWW-Authenticate: Bearer` challenge.
pub fn challenge_param(header: &str, name: &str) -> Option<String> {
    let rest = header.trim().strip_prefix("Bearer")?.trim_start();
    let mut s = rest;
    while !s.is_empty() {
        let (key, after) = s.split_once('=')?;
        let key = key.trim().trim_start_matches(',').trim();
        let after = after.trim_start();
        let (value, next) = if let Some(q) = after.strip_prefix('"') {
            let end = q.find('"')?;
            (q[..end].to_string(), &q[end + 1..])
        } else {
            let end = after.find(',').unwrap_or(after.len());
            (after[..end].trim().to_string(), &after[end..])
        };
        if key.eq_ignore_ascii_case(name) {
            return Some(value);
        }
        s = next.trim_start().trim_start_matches(',').trim_start();
    }
    None
}

/// `scheme://host[:port]` and the path (without a trailing `/`) of a URL.
fn split(url: &str) -> Result<(String, String), String> {
    let u = url::Url::parse(url).map_err(|e| format!("{url:?} is not a URL: {e}"))?;
    let origin = u.origin().ascii_serialization();
    Ok((origin, u.path().trim_end_matches('/').to_string()))
}

async fn get_json(http: &reqwest::Client, url: &str) -> Option<Value> {
    let r = http
        .get(url)
        .header("accept", "application/json")
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .ok()?;
    if !r.status().is_success() {
        return None;
    }
    crate::json_answers::read(r).await.ok()
}

/// The protected resource metadata of `server_url`: from the challenge, else the path-inserted
/// well-known URL, else the root one.
async fn resource_metadata(
    http: &reqwest::Client,
    server_url: &str,
    challenge: Option<&str>,
) -> Result<Option<Value>, String> {
    let (origin, path) = split(server_url)?;
    let mut candidates = Vec::new();
    if let Some(u) = challenge.and_then(|c| challenge_param(c, "resource_metadata")) {
        candidates.push(u);
    }
    if !path.is_empty() {
        candidates.push(format!(
            "{origin}/.well-known/oauth-protected-resource{path}"
        ));
    }
    candidates.push(format!("{origin}/.well-known/oauth-protected-resource"));
    for c in candidates {
        if let Some(v) = get_json(http, &c).await {
            return Ok(Some(v));
        }
    }
    Ok(None)
}

/// The metadata of `issuer`, at the URLs the spec lists in order.
async fn server_metadata(http: &reqwest::Client, issuer: &str) -> Result<Option<Value>, String> {
    let (origin, path) = split(issuer)?;
    let candidates = if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    };
    for c in candidates {
        if let Some(v) = get_json(http, &c).await {
            return Ok(Some(v));
        }
    }
    Ok(None)
}

/// Whether `resource` (RFC 8707: what a token is for) is the server at `server_url`: that URL,
/// or a part of it that ends at a path segment (its origin, say, for a server that names none).
pub fn serves(resource: &str, server_url: &str) -> bool {
    let (r, s) = (
        resource.trim_end_matches('/'),
        server_url.trim_end_matches('/'),
    );
    !r.is_empty()
        && s.strip_prefix(r)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// An upstream as the tokens sent to it must fit: its URL, and the authorization server its
/// config pins (`issuer`), if it pins one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Server {
    pub url: String,
    pub issuer: Option<String>,
}

impl Server {
    /// Whether a token for `resource` from `issuer` is this server's.
    pub fn accepts(&self, resource: &str, issuer: &str) -> bool {
        serves(resource, &self.url)
            && self
                .issuer
                .as_deref()
                .is_none_or(|p| same_issuer(p, issuer))
    }
}

/// Whether two issuer URLs name the same server (a trailing `/` aside).
pub fn same_issuer(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

/// The authorization server to use among those the upstream names: the pinned one, which it
/// must name, else its first.
fn chosen(named: &[&str], pinned: Option<&str>) -> Result<String, String> {
    let found = match pinned {
        None => named.first().copied(),
        Some(p) => named.iter().copied().find(|n| same_issuer(n, p)),
    };
    match (found, pinned) {
        (Some(f), _) => Ok(f.trim_end_matches('/').to_string()),
        (None, None) => Err("the protected resource metadata names no authorization server".into()),
        (None, Some(p)) => Err(format!(
            "the upstream names the authorization server {}, not the issuer its config pins \
             ({p}); nothing was sent there",
            match named.is_empty() {
                true => "(none)".to_string(),
                false => named.join(", "),
            }
        )),
    }
}

/// Finds the authorization server of `server_url`, whose 401 carried `challenge`. With an
/// `issuer` pinned, no other server is taken, whatever the upstream names: the client's secret,
/// users' browsers and their tokens go to that one only.
pub async fn discover(
    http: &reqwest::Client,
    server_url: &str,
    challenge: Option<&str>,
    pinned: Option<&str>,
) -> Result<Discovered, String> {
    let prm = resource_metadata(http, server_url, challenge).await?;
    let challenged_scope = challenge.and_then(|c| challenge_param(c, "scope"));
    let Some(prm) = prm else {
        // 2025-03-26: the server's origin is its authorization server.
        let (origin, _) = split(server_url)?;
        chosen(&[origin.as_str()], pinned)?;
        let metadata = match server_metadata(http, &origin).await? {
            Some(m) => m,
            None => json!({
                "issuer": origin,
                "authorization_endpoint": format!("{origin}/authorize"),
                "token_endpoint": format!("{origin}/token"),
                "registration_endpoint": format!("{origin}/register"),
                "code_challenge_methods_supported": ["S256"],
            }),
        };
        return Ok(Discovered {
            resource: server_url.to_string(),
            issuer: origin,
            metadata,
            scope: challenged_scope,
        });
    };
    let resource = prm["resource"]
        .as_str()
        .unwrap_or(server_url)
        .trim_end_matches('/')
        .to_string();
    // RFC 9728 §3.3: the metadata must be about the resource the client is using.
    if !serves(&resource, server_url) {
        return Err(format!(
            "the protected resource metadata is for {resource}, not for {server_url}"
        ));
    }
    let named: Vec<&str> = prm["authorization_servers"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let issuer = chosen(&named, pinned)?;
    let metadata = server_metadata(http, &issuer)
        .await?
        .ok_or_else(|| format!("no metadata for the authorization server {issuer}"))?;
    if !metadata["issuer"]
        .as_str()
        .is_some_and(|i| same_issuer(i, &issuer))
    {
        return Err(format!(
            "the authorization server's metadata names another issuer ({})",
            metadata["issuer"]
        ));
    }
    let scope = challenged_scope.or_else(|| {
        prm["scopes_supported"].as_array().map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" ")
        })
    });
    Ok(Discovered {
        resource,
        issuer,
        metadata,
        scope: scope.filter(|s| !s.is_empty()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resource_serves_its_own_url_and_the_urls_below_it_only() {
        assert!(serves("https://a.example/mcp", "https://a.example/mcp"));
        assert!(serves("https://a.example/mcp/", "https://a.example/mcp"));
        assert!(serves("https://a.example", "https://a.example/mcp"));
        assert!(!serves("https://a.example/mcp", "https://a.example/mcp2"));
        assert!(!serves("https://a.example/mcp", "https://b.example/mcp"));
        assert!(!serves("https://a.example", "https://a.example.evil/mcp"));
        assert!(!serves("", "https://a.example/mcp"));
    }

    #[test]
    fn a_pinned_issuer_is_the_only_server_taken() {
        let named = ["https://as.example/", "https://other.example"];
        assert_eq!(chosen(&named, None).unwrap(), "https://as.example");
        assert_eq!(
            chosen(&named, Some("https://other.example/")).unwrap(),
            "https://other.example"
        );
        let e = chosen(&named, Some("https://pinned.example")).unwrap_err();
        assert!(
            e.contains("https://as.example/, https://other.example"),
            "{e}"
        );
        assert!(e.contains("pins (https://pinned.example)"), "{e}");
        assert!(chosen(&[], None).is_err());
        assert!(chosen(&[], Some("https://pinned.example")).is_err());

        let server = Server {
            url: "https://a.example/mcp".into(),
            issuer: Some("https://as.example".into()),
        };
        assert!(server.accepts("https://a.example/mcp", "https://as.example/"));
        assert!(!server.accepts("https://a.example/mcp", "https://evil.example"));
        assert!(!server.accepts("https://b.example/mcp", "https://as.example"));
        let unpinned = Server {
            issuer: None,
            ..server
        };
        assert!(unpinned.accepts("https://a.example/mcp", "https://evil.example"));
    }

    #[test]
    fn challenge_parameters_are_read_quoted_or_not() {
        let h = r#"Bearer error="insufficient_scope", scope="a b", resource_metadata="https://x/.well-known/oauth-protected-resource/mcp""#;
        assert_eq!(challenge_param(h, "scope").as_deref(), Some("a b"));
        assert_eq!(
            challenge_param(h, "resource_metadata").as_deref(),
            Some("https://x/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(
            challenge_param("Bearer realm=x, scope=read", "scope").as_deref(),
            Some("read")
        );
        assert_eq!(challenge_param("Basic realm=x", "realm"), None);
    }
}
