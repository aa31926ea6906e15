//! The browser's answer on one replica completes the host's elicitation on another.

use super::*;

/// With two replicas, the browser may come back to the one the host is not on: the host's
/// session is told that its URL elicitation is complete all the same.
#[tokio::test]
async fn the_completion_reaches_a_host_on_another_replica() {
    let db = gateway_tests::postgres_database().await;
    // The browsers reach replica b (user_credentials.public_url): links and callbacks go there.
    let port_b = free_port();
    let own = own_upstream(&db, port_b, "").await;
    let key = base64::engine::general_purpose::STANDARD.encode([42; 32]);
    let public = format!("http://127.0.0.1:{port_b}");
    let listen_b = format!("127.0.0.1:{port_b}");
    let env = [
        ("UPSTREAM_SECRET", "upstream-secret"),
        ("CREDENTIALS_KEY", key.as_str()),
        ("OLD_CREDENTIALS_KEY", key.as_str()),
        ("MCP_GATEWAY_USER_CREDENTIALS_PUBLIC_URL", public.as_str()),
    ];
    let a = Gateway::start_secured(&own.config, &env).await;
    let mut env_b = env.to_vec();
    env_b.push(("MCP_GATEWAY_LISTEN", listen_b.as_str()));
    let b = Gateway::start_secured(&own.config, &env_b).await;
    a.wait_up(&["fx"]).await;
    b.wait_up(&["fx"]).await;
    let link = connect_catalog(&a).await;
    assert!(link.starts_with(&public), "{link}");

    // alice's host is on replica a; she completes the elicitation through replica b.
    let alice = a.token_for("alice", &["member"]).await;
    let caps = json!({"elicitation": {"url": {}}});
    let mut host = RawClient::initialize_as(&a.mcp, caps, Some(&alice)).await;
    let first = whoami(&mut host).await;
    assert_eq!(first["error"]["code"], -32042, "{first}");
    let elicitation = &first["error"]["data"]["elicitations"][0];
    let mut stream = Box::pin(host.listen().await);
    let page = browse(elicitation["url"].as_str().unwrap(), &alice, "alice").await;
    assert!(
        page["text"].as_str().unwrap().contains("Connected"),
        "{page}"
    );
    let complete = completion(&mut stream)
        .await
        .unwrap_or_else(|| panic!("no completion on replica a within 10 s\n{}", b.log()));
    assert_eq!(
        complete["params"]["elicitationId"], elicitation["elicitationId"],
        "{complete}"
    );
    drop(stream);
    let r = whoami(&mut host).await;
    assert_eq!(r["result"]["content"][0]["text"], "you are alice", "{r}");
    drop(own.idp);
}

/// Two replicas that both find a user's upstream token refused at once refresh it once between
/// them: the upstream's provider rotates refresh tokens and takes a spent one used again for a
/// theft, revoking the user's grant (as Auth0 or Okta with rotation do).
#[tokio::test]
async fn two_replicas_refresh_a_users_token_once_between_them() {
    let db = gateway_tests::postgres_database().await;
    let port_a = free_port();
    let own = own_upstream(&db, port_a, "").await;
    let (listen_a, key) = own_listen_and_key(port_a);
    let a = Gateway::start_secured(&own.config, &own_env(&listen_a, &key)).await;
    let env_b = [
        ("UPSTREAM_SECRET", "upstream-secret"),
        ("CREDENTIALS_KEY", key.as_str()),
        ("OLD_CREDENTIALS_KEY", key.as_str()),
        ("MCP_GATEWAY_USER_CREDENTIALS_PUBLIC_URL", &a.base),
    ];
    let b = Gateway::start_secured(&own.config, &env_b).await;
    a.wait_up(&["fx"]).await;
    b.wait_up(&["fx"]).await;
    connect_catalog(&a).await;
    let alice = a.token_for("alice", &["member"]).await;
    connect_own(&a, &alice, "alice").await;
    let mut on_a = RawClient::initialize_as(&a.mcp, json!({}), Some(&alice)).await;
    let mut on_b = RawClient::initialize_as(&b.mcp, json!({}), Some(&alice)).await;
    for host in [&mut on_a, &mut on_b] {
        let r = whoami(host).await;
        assert_eq!(r["result"]["content"][0]["text"], "you are alice", "{r}");
    }

    for round in 0..3 {
        refuse_tokens_of(&own.upstream, "alice").await;
        let (ra, rb) = tokio::join!(whoami(&mut on_a), whoami(&mut on_b));
        for r in [ra, rb] {
            assert_eq!(
                r["result"]["content"][0]["text"],
                "you are alice",
                "round {round}: {r}\n{}\n{}",
                a.log(),
                b.log()
            );
        }
    }
}
