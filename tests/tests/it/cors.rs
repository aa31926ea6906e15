//! CORS for browser hosts, through the real binary: preflights answered before authentication
//! for allowed and loopback origins, refused (no CORS headers) for others, and the session and
//! authentication headers exposed on real answers.

use gateway_tests::Gateway;
use serde_json::json;

use super::{fixture_config, sqlite_url, ADMIN_ROLE};

fn header<'a>(r: &'a reqwest::Response, name: &str) -> &'a str {
    r.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

#[tokio::test]
async fn browsers_of_allowed_origins_get_preflights_and_the_session_header() {
    let dir = gateway_tests::scratch();
    let config = format!(
        "[auth]\nmode = \"required\"\n\n{ADMIN_ROLE}\n{}",
        fixture_config(
            &sqlite_url(&dir),
            "\n[server]\nallowed_origins = [\"https://app.example\"]\n"
        )
    );
    let gw = Gateway::start_secured(&config, &[]).await;
    gw.wait_up(&["fx"]).await;
    let http = reqwest::Client::new();
    let preflight = |origin: &'static str| {
        http.request(reqwest::Method::OPTIONS, &gw.mcp)
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .header(
                "access-control-request-headers",
                "content-type, authorization, mcp-session-id, mcp-protocol-version",
            )
            .send()
    };

    // Allowed and loopback origins: answered without a token although auth is required.
    for origin in ["https://app.example", "http://localhost:6274"] {
        let r = preflight(origin).await.unwrap();
        assert!(r.status().is_success(), "{origin}: {}", r.status());
        assert_eq!(header(&r, "access-control-allow-origin"), origin);
        assert!(header(&r, "access-control-allow-methods").contains("POST"));
        let allowed = header(&r, "access-control-allow-headers").to_ascii_lowercase();
        for h in ["authorization", "mcp-session-id", "mcp-protocol-version"] {
            assert!(allowed.contains(h), "{origin}: {allowed}");
        }
    }
    // A foreign origin gets no CORS headers: the browser keeps the page out.
    let r = preflight("https://evil.example").await.unwrap();
    assert_eq!(header(&r, "access-control-allow-origin"), "", "{r:?}");

    // A real call from the allowed origin: the page can read the session id it must send back.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "browser", "version": "1"}}});
    let r = http
        .post(&gw.mcp)
        .header("origin", "https://app.example")
        .header("accept", "application/json, text/event-stream")
        .bearer_auth(gw.admin_token.as_deref().unwrap())
        .json(&init)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(
        header(&r, "access-control-allow-origin"),
        "https://app.example"
    );
    assert!(!header(&r, "mcp-session-id").is_empty());
    let exposed = header(&r, "access-control-expose-headers").to_ascii_lowercase();
    assert!(exposed.contains("mcp-session-id"), "{exposed}");
    // Without a token: refused, and the page can read why (WWW-Authenticate is exposed).
    let r = http
        .post(&gw.mcp)
        .header("origin", "https://app.example")
        .json(&init)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    assert_eq!(
        header(&r, "access-control-allow-origin"),
        "https://app.example"
    );
    assert!(header(&r, "access-control-expose-headers")
        .to_ascii_lowercase()
        .contains("www-authenticate"));
    // The DNS-rebinding guard still refuses foreign pages' real requests.
    let r = http
        .post(&gw.mcp)
        .header("origin", "https://evil.example")
        .bearer_auth(gw.admin_token.as_deref().unwrap())
        .json(&init)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
}
