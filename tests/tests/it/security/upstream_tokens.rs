//! An upstream behind OAuth gets the gateway's own token, or one exchanged for the host's
//! user, never the host's.

use super::*;

#[tokio::test]
async fn an_upstream_behind_oauth_gets_the_gateways_own_token_never_the_hosts() {
    let idp = Idp::start(json!([
        {"client_id": "gw", "client_secret": "gw-secret", "scope": "mcp"}
    ]))
    .await;
    // Gateway b: an upstream that requires OAuth tokens for its resource.
    let inner = "https://inner.test/mcp";
    let b = protected_upstream(&idp, inner).await;
    // Gateway a: b as an HTTP upstream with client credentials; hosts use PATs.
    let a_dir = gateway_tests::scratch();
    let a_config = format!(
        "[database]\nurl = \"{}\"\n{ROLES}\n[auth]\nmode = \"required\"\n\n[[upstreams]]\nname = \"inner\"\n\
         transport = \"http\"\nurl = \"{}\"\n\
         oauth = {{ token_url = \"{}/token\", client_id = \"gw\", client_secret = {{ env = \"GW_SECRET\" }}, \
         scopes = [\"mcp\"], resource = \"{inner}\" }}\n",
        sqlite_url(&a_dir),
        b.mcp,
        idp.issuer
    );
    let a = Gateway::start_secured(&a_config, &[("GW_SECRET", "gw-secret")]).await;
    a.wait_up(&["inner"]).await;
    let host_token = a.admin_token.clone().unwrap();
    let (status, _, body) = call_as(
        &a.mcp,
        Some(&host_token),
        "tools/call",
        json!({"name": "inner__fx__echo", "arguments": {"message": "via oauth"}}),
    )
    .await;
    assert_eq!(status, 200, "{body}\n{}", a.log());
    assert_eq!(body["result"]["content"][0]["text"], "via oauth");
    // b saw the gateway's client, not the host's PAT.
    let rows = tool_call_rows(&b).await;
    let principal = rows[0]["principal"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(principal, format!("oauth:{}#gw", idp.issuer), "{rows}");
    // A wrong secret: the upstream is reported down with the token endpoint's refusal.
    let c_dir = gateway_tests::scratch();
    let c = Gateway::start_with_env(
        &format!(
            "[database]\nurl = \"{}\"\n[[upstreams]]\nname = \"inner\"\ntransport = \"http\"\nurl = \"{}\"\n\
             oauth = {{ token_url = \"{}/token\", client_id = \"gw\", client_secret = {{ env = \"GW_SECRET\" }} }}\n",
            sqlite_url(&c_dir),
            b.mcp,
            idp.issuer
        ),
        &[("GW_SECRET", "wrong")],
    )
    .await;
    let health = c.health_once("inner", |h| h["status"] == "down").await;
    assert_eq!(health["status"], "down", "{health}");
    assert!(health.to_string().contains("token request"), "{health}");
}

/// DPoP from end to end, with a gateway on both sides. The gateway's client with no token
/// endpoint configured finds it through the upstream's metadata; oidc-provider there takes DPoP
/// proofs (ES256), so the token request carries one and the token is bound to the gateway's key.
/// The upstream (a gateway) takes the token with the DPoP scheme and a proof for each request.
/// A host that holds a bound token but not its key (a copied token, sent as a bearer token), a
/// replayed proof and a proof of another key are refused.
#[tokio::test]
async fn a_token_bound_to_a_key_goes_with_a_proof_and_is_refused_without_one() {
    let idp = Idp::start(json!([
        {"client_id": "gw", "client_secret": "gw-secret", "scope": "mcp"}
    ]))
    .await;
    let b = protected_upstream_at(&idp, gateway_tests::free_port()).await;
    let meta = reqwest::get(format!(
        "{}/.well-known/oauth-protected-resource/mcp",
        b.base
    ))
    .await
    .unwrap()
    .json::<Value>()
    .await
    .unwrap();
    assert_eq!(meta["dpop_signing_alg_values_supported"], json!(["ES256"]));
    let a_dir = gateway_tests::scratch();
    let a_config = format!(
        "[database]\nurl = \"{}\"\n[[upstreams]]\nname = \"inner\"\ntransport = \"http\"\n\
         url = \"{}\"\noauth = {{ client_id = \"gw\", client_secret = {{ env = \"GW_SECRET\" }}, \
         scopes = [\"mcp\"] }}\n",
        sqlite_url(&a_dir),
        b.mcp
    );
    let a = Gateway::start_with_env(&a_config, &[("GW_SECRET", "gw-secret")]).await;
    a.wait_up(&["inner"]).await;
    let mut host = RawClient::initialize(&a.mcp, json!({})).await;
    let r = host
        .request(
            "tools/call",
            json!({"name": "inner__fx__echo", "arguments": {"message": "bound"}}),
        )
        .await;
    assert_eq!(
        r["result"]["content"][0]["text"],
        "bound",
        "{r}\n{}",
        a.log()
    );
    let log = a.log();
    assert!(log.contains("\"dpop\":true"), "the token was bound:\n{log}");
    assert!(
        !log.contains("takes no DPoP proofs"),
        "the upstream took the DPoP scheme:\n{log}\n{}",
        b.log()
    );
    let rows = tool_call_rows(&b).await;
    assert_eq!(
        rows[0]["principal"],
        format!("oauth:{}#gw", idp.issuer),
        "{rows}"
    );

    // A host of its own with a bound token tries b directly.
    let mut cmd = gateway_tests::node("idp/dpop_client.mjs");
    cmd.arg(format!("{}/token", idp.issuer))
        .arg("gw")
        .arg("gw-secret")
        .arg("mcp")
        .arg(&b.mcp);
    let seen = gateway_tests::last_json_line(cmd, "the DPoP host").await;
    assert_eq!(seen["tokenType"], "DPoP", "{seen}");
    assert!(seen["bound"].is_string(), "{seen}");
    assert_eq!(seen["bearer"], 401, "a bound token without its key: {seen}");
    assert!(
        seen["challenge"]
            .as_str()
            .unwrap()
            .contains("bound to a key"),
        "{seen}"
    );
    assert_eq!(seen["dpop"], 200, "{seen}\n{}", b.log());
    assert_eq!(seen["replayed"], 401, "{seen}");
    assert_eq!(seen["otherKey"], 401, "{seen}");
}

/// The gateway's client with a private key instead of a secret (`private_key_jwt`, RFC 7523):
/// the provider, which knows only the public key, takes the gateway's signed assertion, and
/// the upstream sees the gateway's client. A key that is not one is a clear error.
#[tokio::test]
async fn an_upstream_behind_oauth_takes_the_gateways_signed_assertion_for_a_secret() {
    let key_file = gateway_tests::package_dir().join("idp/client-key.pem");
    let idp = Idp::start(json!([
        {"client_id": "gw", "key_file": key_file.to_str().unwrap(), "scope": "mcp"}
    ]))
    .await;
    let inner = "https://inner.test/mcp";
    let b = protected_upstream(&idp, inner).await;
    let config = |dir: &std::path::Path, key: &std::path::Path| {
        format!(
            "[database]\nurl = \"{}\"\n[[upstreams]]\nname = \"inner\"\ntransport = \"http\"\n\
             url = \"{}\"\noauth = {{ token_url = \"{}/token\", client_id = \"gw\", \
             private_key = {{ file = \"{}\" }}, private_key_algorithm = \"ES256\", \
             scopes = [\"mcp\"], resource = \"{inner}\" }}\n",
            sqlite_url(dir),
            b.mcp,
            idp.issuer,
            key.display()
        )
    };
    let a_dir = gateway_tests::scratch();
    let a = Gateway::start(&config(&a_dir, &key_file)).await;
    a.wait_up(&["inner"]).await;
    let mut host = RawClient::initialize(&a.mcp, json!({})).await;
    let r = host
        .request(
            "tools/call",
            json!({"name": "inner__fx__echo", "arguments": {"message": "signed"}}),
        )
        .await;
    assert_eq!(
        r["result"]["content"][0]["text"],
        "signed",
        "{r}\n{}",
        a.log()
    );
    let rows = tool_call_rows(&b).await;
    assert_eq!(
        rows[0]["principal"],
        format!("oauth:{}#gw", idp.issuer),
        "{rows}"
    );
    // A file that holds no key: the upstream is down, and says why.
    let c_dir = gateway_tests::scratch();
    let not_a_key = c_dir.join("key.pem");
    std::fs::write(&not_a_key, "not a key").unwrap();
    let c = Gateway::start(&config(&c_dir, &not_a_key)).await;
    let health = c.health_once("inner", |h| h["status"] == "down").await;
    assert_eq!(health["status"], "down", "{health}");
    assert!(health.to_string().contains("oauth.private_key"), "{health}");
}

#[tokio::test]
async fn token_exchange_carries_the_hosts_user_to_the_upstream_never_the_hosts_token() {
    let a_resource = "https://gateway-a.test/mcp";
    let inner = "https://inner.test/mcp";
    let idp = Idp::start(json!([
        {"client_id": "ann", "client_secret": "ann-secret", "scope": "mcp"},
        {"client_id": "gw", "client_secret": "gw-secret", "scope": "mcp",
         "token_exchange": {"accept_audience": a_resource}}
    ]))
    .await;
    // Gateway b: the upstream, which accepts tokens of the IdP for its own resource and audits
    // who called.
    let b = protected_upstream(&idp, inner).await;
    // Gateway a: hosts sign in at the IdP; b is reached with each user's exchanged token.
    let a_dir = gateway_tests::scratch();
    let a_config = format!(
        "[database]\nurl = \"{}\"\n{ROLES}\n[[roles]]\nname = \"users\"\nupstreams = [\"inner\"]\n\n\
         [auth]\nmode = \"required\"\nresource = \"{a_resource}\"\nrequired_scopes = [\"mcp\"]\n\
         [[auth.issuers]]\nissuer = \"{}\"\n\
         [[auth.role_mappings]]\nclaim = \"client_id\"\nvalue = \"ann\"\nrole = \"users\"\n\n\
         [[upstreams]]\nname = \"inner\"\ntransport = \"http\"\nurl = \"{}\"\nsharing = \"per_session\"\n\
         oauth = {{ token_url = \"{}/token\", client_id = \"gw\", client_secret = {{ env = \"GW_SECRET\" }}, \
         scopes = [\"mcp\"], resource = \"{inner}\", token_exchange = true }}\n",
        sqlite_url(&a_dir),
        idp.issuer,
        b.mcp,
        idp.issuer
    );
    let a = Gateway::start_secured(&a_config, &[("GW_SECRET", "gw-secret")]).await;
    a.wait_up(&["inner"]).await;

    let ann = idp.token("ann", "ann-secret", "mcp", a_resource).await;
    let (status, _, body) = call_as(
        &a.mcp,
        Some(&ann),
        "tools/call",
        json!({"name": "inner__fx__echo", "arguments": {"message": "as ann"}}),
    )
    .await;
    assert_eq!(status, 200, "{body}\n{}", a.log());
    assert_eq!(body["result"]["content"][0]["text"], "as ann", "{body}");
    // b saw ann (the exchanged token's subject), through a token of its own audience.
    let mut call = Value::Null;
    for _ in 0..50 {
        let rows = b.get_json("/admin/v1/audit?action=tools/call").await;
        if let Some(r) = rows.as_array().and_then(|r| r.first()) {
            call = r.clone();
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        call["principal"],
        format!("oauth:{}#ann", idp.issuer),
        "the user, not the gateway: {call}"
    );
    let ann_jti = jwt_claims(&ann)["jti"].clone();
    assert_ne!(call["token_id"], ann_jti, "b never got ann's own token");

    // A caller with a PAT has no identity the IdP could exchange: a clear refusal.
    let pat = a.token_for("bob", &["users"]).await;
    let (status, _, body) = call_as(
        &a.mcp,
        Some(&pat),
        "tools/call",
        json!({"name": "inner__fx__echo", "arguments": {"message": "as bob"}}),
    )
    .await;
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        status != 200 || body.get("error").is_some(),
        "a PAT cannot reach a token-exchange upstream: {body}"
    );
    assert!(message.contains("OAuth access token"), "{body}");

    // Passthrough stays impossible: the config refuses token exchange on a shared connection.
    let out = std::process::Command::new(gateway_tests::gateway_bin())
        .args(["check-config", "--config"])
        .arg({
            let p = a_dir.join("shared.toml");
            std::fs::write(&p, a_config.replace("sharing = \"per_session\"\n", "")).unwrap();
            p
        })
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("per_session"));

    // Nor does the upstream choose where users' tokens go: an exchange names its token
    // endpoint, for a discovered one would be whatever server the upstream's metadata names.
    let token_url = format!("token_url = \"{}/token\", ", idp.issuer);
    assert!(a_config.contains(&token_url));
    let out = std::process::Command::new(gateway_tests::gateway_bin())
        .args(["check-config", "--config"])
        .arg({
            let p = a_dir.join("discovered.toml");
            std::fs::write(&p, a_config.replace(&token_url, "")).unwrap();
            p
        })
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("oauth.token_url"), "{stderr}");
}

/// An upstream whose metadata names another authorization server than the one the operator
/// pinned (`oauth.issuer`): a compromised or impostor upstream. The impostor (a second real
/// provider, which would take the gateway's secret) never gets a token request: the upstream is
/// reported down with both servers named, while an upstream that names the pinned server works.
/// Without the pin the secret goes where the metadata says (the spec's way), with a warning.
#[tokio::test]
async fn a_pinned_issuer_keeps_the_gateways_secret_from_a_server_an_upstream_names() {
    let clients = json!([{"client_id": "gw", "client_secret": "gw-secret", "scope": "mcp"}]);
    let idp = Idp::start(clients.clone()).await;
    let impostor = Idp::start(clients).await;
    let honest = protected_upstream_at(&idp, gateway_tests::free_port()).await;
    let taken = protected_upstream_at(&impostor, gateway_tests::free_port()).await;
    let upstream = |name: &str, url: &str, pin: &str| {
        format!(
            "[[upstreams]]\nname = \"{name}\"\ntransport = \"http\"\nurl = \"{url}\"\n\
             oauth = {{ client_id = \"gw\", client_secret = {{ env = \"GW_SECRET\" }}, \
             scopes = [\"mcp\"]{pin} }}\n"
        )
    };
    let pin = format!(", issuer = \"{}\"", idp.issuer);
    let dir = gateway_tests::scratch();
    let config = format!(
        "[database]\nurl = \"{}\"\n{}{}",
        sqlite_url(&dir),
        upstream("honest", &honest.mcp, &pin),
        upstream("taken", &taken.mcp, &pin)
    );
    let a = Gateway::start_with_env(&config, &[("GW_SECRET", "gw-secret")]).await;
    a.wait_up(&["honest"]).await;
    let mut host = RawClient::initialize(&a.mcp, json!({})).await;
    let r = host
        .request(
            "tools/call",
            json!({"name": "honest__fx__echo", "arguments": {"message": "pinned"}}),
        )
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "pinned", "{r}");
    let down = a.health_once("taken", |h| h["status"] == "down").await;
    let error = down["last_error"].as_str().unwrap_or_default();
    assert!(
        error.contains(&impostor.issuer) && error.contains(&idp.issuer),
        "both servers named: {down}\n{}",
        a.log()
    );
    assert_eq!(
        impostor.grants().await,
        json!({}),
        "nothing went to the impostor"
    );
    assert_eq!(idp.grants().await["client_credentials"], 1);
    drop(a);

    // Unpinned: the metadata's server gets the secret, and the log says how to pin it.
    let dir = gateway_tests::scratch();
    let config = format!(
        "[database]\nurl = \"{}\"\n{}",
        sqlite_url(&dir),
        upstream("taken", &taken.mcp, "")
    );
    let b = Gateway::start_with_env(&config, &[("GW_SECRET", "gw-secret")]).await;
    b.wait_up(&["taken"]).await;
    assert_eq!(impostor.grants().await["client_credentials"], 1);
    let log = b.log();
    assert!(log.contains("set oauth.issuer"), "{log}");
    assert!(log.contains(&impostor.issuer), "{log}");
}

/// The audit rows of `gw`'s tool calls, once there is one (a row is written after the answer).
async fn tool_call_rows(gw: &Gateway) -> Value {
    let mut rows = Value::Null;
    for _ in 0..50 {
        rows = gw.get_json("/admin/v1/audit?action=tools/call").await;
        if rows.as_array().is_some_and(|r| !r.is_empty()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    rows
}
