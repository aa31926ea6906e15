//! Tokens go to the server and authorization server they were issued for: an upstream
//! moved under its name, removed, or pinned to another issuer forgets its connections.

use super::*;

/// Every token an upstream server was presented, by audience.
async fn presented_audiences(upstream: &str) -> Vec<String> {
    recorded(upstream, "presented")
        .await
        .iter()
        .flat_map(|p| match &p["aud"] {
            Value::Array(a) => a
                .iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect(),
            v => v.as_str().map(String::from).into_iter().collect::<Vec<_>>(),
        })
        .collect()
}

/// `own` behind a gateway on `port` (its database in `dir`), with the catalog account and
/// alice connected: the upstream, the gateway and alice's token.
async fn alice_connected(dir: &std::path::Path, port: u16) -> (Own, Gateway, String) {
    let own = own_upstream(&sqlite_url(dir), port, "").await;
    let gw = own_gateway(&own.config, port).await;
    connect_catalog(&gw).await;
    let alice = gw.token_for("alice", &["member"]).await;
    connect_own(&gw, &alice, "alice").await;
    (own, gw, alice)
}

#[tokio::test]
async fn a_users_token_for_one_server_never_reaches_another_under_the_same_name() {
    let dir = scratch();
    let port = free_port();
    let (own, gw, alice) = alice_connected(&dir, port).await;
    let (listen, key) = own_listen_and_key(port);
    let env = own_env(&listen, &key);
    let mut host = RawClient::initialize_as(&gw.mcp, json!({}), Some(&alice)).await;
    let r = whoami(&mut host).await;
    assert_eq!(r["result"]["content"][0]["text"], "you are alice", "{r}");
    drop(host);

    // The operator points `own` at another server (same provider, another resource).
    let (_other_server, other) =
        spawn_reporting_url(node("upstream/own_accounts.mjs").arg(&own.idp.issuer)).await;
    let moved = own.config.replace(&own.upstream, &other);
    assert_ne!(moved, own.config);
    let gw = gw.restart_with(&moved, &env).await;
    gw.wait_up(&["fx"]).await;
    // Every connection was made for the first server: the catalog's account is connected
    // again, alice is asked to connect again, and the second server never sees a token issued
    // for the first.
    connect_catalog(&gw).await;
    let mut host = RawClient::initialize_as(&gw.mcp, json!({}), Some(&alice)).await;
    let r = whoami(&mut host).await;
    assert_eq!(r["result"]["isError"], true, "{r}\n{}", gw.log());
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("/oauth/upstream/connect?ticket="), "{text}");
    let seen = presented_audiences(&other).await;
    assert!(
        !seen.contains(&own.upstream),
        "a token for {} reached {other}: {seen:?}",
        own.upstream
    );
    let page = browse(&link_in(text), &alice, "alice").await;
    assert!(
        page["text"].as_str().unwrap().contains("Connected"),
        "{page}"
    );
    let r = whoami(&mut host).await;
    assert_eq!(r["result"]["content"][0]["text"], "you are alice", "{r}");
    assert_eq!(recorded(&other, "calls").await.len(), 1);
    drop(host);
    let audit = gw
        .get_json("/admin/v1/audit?action=upstream.disconnect")
        .await;
    assert!(
        audit.to_string().contains("moved"),
        "the forgotten connection is audited: {audit}"
    );

    // The operator removes `own` from the file: its users' tokens go with it.
    let start = moved
        .find("[[upstreams]]\nname = \"own\"")
        .expect("own's table");
    let end = moved[start..].find("[user_credentials]").unwrap() + start;
    let removed = format!("{}{}", &moved[..start], &moved[end..]);
    let gw = gw.restart_with(&removed, &env).await;
    gw.wait_up(&["fx"]).await;
    let all = gw.get_json("/admin/v1/connections").await;
    assert_eq!(all, json!([]), "nothing of a removed upstream is kept");
}

/// The operator pins the upstream's authorization server (`user_oauth.issuer`). Pinned to the
/// server the connections came from, nothing changes. Pinned to another one (the upstream's
/// metadata now names a server the operator does not trust, or the operator moves to a new
/// one), every connection from the old server is forgotten when the gateway starts, so that
/// no refresh sends the gateway's client secret and a user's refresh token there, and a new
/// link leads nowhere but says why.
#[tokio::test]
async fn a_pinned_issuer_takes_connections_from_that_server_only() {
    let dir = scratch();
    let port = free_port();
    let (own, gw, alice) = alice_connected(&dir, port).await;
    let (listen, key) = own_listen_and_key(port);
    let env = own_env(&listen, &key);
    // Unpinned, the preregistered secret went where the metadata said, and the log says how to
    // pin it.
    let log = gw.log();
    assert!(log.contains("set user_oauth.issuer"), "{log}");

    let pin = |issuer: &str| {
        own.config.replace(
            "[upstreams.user_oauth]\n",
            &format!("[upstreams.user_oauth]\nissuer = \"{issuer}\"\n"),
        )
    };
    let gw = gw.restart_with(&pin(&own.idp.issuer), &env).await;
    gw.wait_up(&["fx", "own"]).await;
    let mut host = RawClient::initialize_as(&gw.mcp, json!({}), Some(&alice)).await;
    let r = whoami(&mut host).await;
    assert_eq!(r["result"]["content"][0]["text"], "you are alice", "{r}");
    drop(host);

    let elsewhere = "http://127.0.0.1:9/issuer";
    let gw = gw.restart_with(&pin(elsewhere), &env).await;
    gw.wait_up(&["fx"]).await;
    // Forgotten at start, the catalog account's connection as well as alice's, each audited.
    let left = gw.get_json("/admin/v1/connections").await;
    assert_eq!(left, json!([]), "{}", gw.log());
    let audit = gw
        .get_json("/admin/v1/audit?action=upstream.disconnect")
        .await;
    let moved = audit
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["outcome"] == "moved")
        .count();
    assert_eq!(moved, 2, "{audit}");
    // A new link says why it cannot go on, and goes to neither server.
    let page = own_link_page(&gw, &alice, "alice").await;
    let said = page["text"].as_str().unwrap_or_default();
    assert!(
        said.contains(elsewhere) && said.contains(&own.idp.issuer),
        "the link names both servers: {page}"
    );
    assert!(
        !page["url"]
            .as_str()
            .unwrap_or_default()
            .starts_with(&own.idp.issuer),
        "{page}"
    );
}
