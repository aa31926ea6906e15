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
