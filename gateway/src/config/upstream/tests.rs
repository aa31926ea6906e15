//! What an upstream's settings accept and refuse, field by field.

use super::*;

fn read(json: serde_json::Value) -> Result<UpstreamSpec, String> {
    serde_json::from_value(json).map_err(|e| e.to_string())
}

#[test]
fn each_transport_takes_only_its_own_fields() {
    let e = read(serde_json::json!({"name": "a", "transport": "stdio", "url": "http://x"}))
        .unwrap_err();
    assert!(e.contains("are for http/sse"), "{e}");
    let e = read(
        serde_json::json!({"name": "a", "transport": "http", "url": "http://x",
        "command": "x"}),
    )
    .unwrap_err();
    assert!(e.contains("are for stdio"), "{e}");
    let e =
        read(serde_json::json!({"name": "a", "transport": "sse", "url": "ftp://x"})).unwrap_err();
    assert!(e.contains("sse needs a `url`"), "{e}");
    let e =
        read(serde_json::json!({"name": "a", "transport": "stdio", "command": ""})).unwrap_err();
    assert!(e.contains("needs a `command`"), "{e}");
    let e = read(
        serde_json::json!({"name": "a", "transport": "stdio", "command": "x",
        "comand": "y"}),
    )
    .unwrap_err();
    assert!(e.contains("comand"), "unknown fields are refused: {e}");
}

#[test]
fn the_gateways_client_has_one_credential_given_by_reference() {
    let with = |oauth: serde_json::Value| {
        read(
            serde_json::json!({"name": "a", "transport": "http", "url": "https://x/mcp",
            "oauth": oauth}),
        )?
        .validate()
        .map_err(|e| e.to_string())
    };
    let e = with(serde_json::json!({"client_id": "gw"})).unwrap_err();
    assert!(
        e.contains("client_secret") && e.contains("private_key"),
        "{e}"
    );
    let e = with(
        serde_json::json!({"client_id": "gw", "client_secret": {"env": "S"},
        "private_key": {"file": "/k"}}),
    )
    .unwrap_err();
    assert!(e.contains("give one of"), "{e}");
    let e = with(
        serde_json::json!({"client_id": "gw", "workload_token": {"file": "/t"},
        "token_exchange": true}),
    )
    .unwrap_err();
    assert!(e.contains("token_exchange"), "{e}");
    with(serde_json::json!({"client_id": "gw", "workload_token": {"file": "/t"}})).unwrap();
    let e = with(
        serde_json::json!({"client_id": "gw", "client_secret": {"env": "S"},
        "token_exchange": true}),
    )
    .unwrap_err();
    assert!(e.contains("token_url"), "{e}");
    let e = with(
        serde_json::json!({"client_id": "gw", "client_secret": {"env": "S"},
        "issuer": "as.example"}),
    )
    .unwrap_err();
    assert!(e.contains("issuer") && e.contains("http(s) URL"), "{e}");
    let e = with(
        serde_json::json!({"client_id": "gw", "client_secret": {"env": "S"},
        "issuer": "https://as.example", "token_url": "https://as.example/token"}),
    )
    .unwrap_err();
    assert!(e.contains("not both"), "{e}");
    with(
        serde_json::json!({"client_id": "gw", "client_secret": {"env": "S"},
        "issuer": "https://as.example"}),
    )
    .unwrap();
    let user = |v: serde_json::Value| {
        serde_json::from_value::<UserOAuth>(v)
            .unwrap()
            .validate()
            .map_err(|e| e.1)
    };
    assert!(user(serde_json::json!({"issuer": "ftp://as"})).is_err());
    user(serde_json::json!({"issuer": "https://as.example"})).unwrap();
    let e = with(serde_json::json!({"client_id": "gw", "private_key": "-----BEGIN"})).unwrap_err();
    assert!(e.contains("private_key"), "{e}");
    let e = with(
        serde_json::json!({"client_id": "gw", "private_key": {"file": "/k"},
        "private_key_algorithm": "HS256"}),
    )
    .unwrap_err();
    assert!(e.contains("client_secret instead"), "{e}");
    let e = with(
        serde_json::json!({"client_id": "gw", "client_secret": {"env": "S"},
        "private_key_algorithm": "ES256"}),
    )
    .unwrap_err();
    assert!(e.contains("needs oauth.private_key"), "{e}");
    let e = with(
        serde_json::json!({"client_id": "gw", "client_secret": {"env": "S"},
        "token_url": "ftp://idp/token"}),
    )
    .unwrap_err();
    assert!(e.contains("token_url"), "{e}");
    // No token endpoint: it is found from the upstream's metadata.
    with(serde_json::json!({"client_id": "gw", "client_secret": {"env": "S"}})).unwrap();
}

#[test]
fn the_flat_form_round_trips() {
    for json in [
        serde_json::json!({"name": "fs", "transport": "stdio", "command": "npx",
            "args": ["-y", "x"], "env": {"A": {"env": "B"}}, "inherit_env": ["AWS_*"],
            "cwd": "/tmp", "sharing": "per_session", "prefix": "always",
            "timeout_secs": 5, "enabled": false}),
        serde_json::json!({"name": "api", "transport": "http", "url": "https://x/mcp",
            "headers": {"X-Team": "a"}, "oauth": {"token_url": "https://idp/token",
            "client_id": "gw", "client_secret": {"file": "/s"}}, "sharing": "shared",
            "prefix": "always", "max_result_text_bytes": 9, "enabled": true,
            "tools": {"exclude": ["delete_*"], "overrides": {"search": {"name": "find",
            "arguments": {"org": "acme"}}}}}),
        serde_json::json!({"name": "m2m", "transport": "http", "url": "https://x/mcp",
            "oauth": {"client_id": "gw", "private_key": {"file": "/k.pem"},
            "private_key_algorithm": "RS256"}, "sharing": "shared", "prefix": "always",
            "enabled": true}),
    ] {
        let spec = read(json.clone()).unwrap();
        assert_eq!(spec.to_json(), json);
    }
}
