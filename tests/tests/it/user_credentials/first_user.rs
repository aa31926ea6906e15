//! `catalog = "first_user"`: the catalog is read with the first connected user's account.

use super::*;

#[tokio::test]
async fn under_first_user_the_catalog_is_read_with_the_first_connected_account() {
    let dir = scratch();
    let port = free_port();
    let own = own_upstream(&sqlite_url(&dir), port, "catalog = \"first_user\"").await;
    let gw = own_gateway(&own.config, port).await;

    // Nobody has connected: the upstream is down and says how to.
    let h = own_health(&gw).await;
    assert_ne!(h["status"], "up", "{h}");
    let why = h["last_error"].as_str().unwrap_or_default();
    assert!(why.contains("POST /v1/connections/own"), "{h}");

    let alice = gw.token_for("alice", &["member"]).await;
    let bob = gw.token_for("bob", &["member"]).await;
    let carol = gw.token_for("carol", &["fixtures-only"]).await;
    let get = reqwest::Method::GET;
    let post = reqwest::Method::POST;

    // A user whose roles grant the upstream sees it to connect, and connects ahead of any call;
    // one whose roles do not cannot.
    let (_, mine) = gw
        .send(get.clone(), "/v1/connections", Some(&alice), &Value::Null)
        .await;
    assert_eq!(mine["connectable"], json!(["own"]), "{mine}");
    let (_, theirs) = gw
        .send(get.clone(), "/v1/connections", Some(&carol), &Value::Null)
        .await;
    assert_eq!(theirs["connectable"], json!([]), "{theirs}");
    let (status, _) = gw
        .send(
            post.clone(),
            "/v1/connections/own",
            Some(&carol),
            &json!({}),
        )
        .await;
    assert_eq!(status, 404);
    connect_own(&gw, &alice, "alice").await;
    gw.wait_up(&["own"]).await;
    let (_, mine) = gw
        .send(get.clone(), "/v1/connections", Some(&alice), &Value::Null)
        .await;
    assert_eq!(mine["connectable"], json!([]), "{mine}");
    assert_eq!(mine["connections"][0]["upstream"], "own", "{mine}");

    // The catalog was listed with alice's account; bob's calls still go with his own, which he
    // is asked to connect.
    let lists = recorded(&own.upstream, "lists").await;
    assert!(
        !lists.is_empty() && lists.iter().all(|l| l["sub"] == "alice"),
        "{lists:?}"
    );
    let mut b = RawClient::initialize_as(&gw.mcp, json!({}), Some(&bob)).await;
    let r = whoami(&mut b).await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    let page = browse(
        &link_in(r["result"]["content"][0]["text"].as_str().unwrap()),
        &bob,
        "bob",
    )
    .await;
    assert!(
        page["text"].as_str().unwrap().contains("Connected"),
        "{page}"
    );
    let r = whoami(&mut b).await;
    assert_eq!(r["result"]["content"][0]["text"], "you are bob", "{r}");

    // alice disconnects: the catalog is read with the next account (bob's), and stays up.
    let (status, _) = gw
        .send(
            reqwest::Method::DELETE,
            "/v1/connections/own",
            Some(&alice),
            &Value::Null,
        )
        .await;
    assert_eq!(status, 204);
    let mut by_bob = false;
    for _ in 0..100 {
        let lists = recorded(&own.upstream, "lists").await;
        by_bob = lists.iter().any(|l| l["sub"] == "bob");
        if by_bob {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        by_bob,
        "the catalog was not read again with bob's account\n{}",
        gw.log()
    );
    gw.wait_up(&["own"]).await;
    let calls = recorded(&own.upstream, "calls").await;
    assert!(calls.iter().all(|c| c["sub"] == "bob"), "{calls:?}");
    // oidc-provider binds the tokens (DPoP); the upstream takes bearer tokens only. It said so
    // once, for the first connection; the others (bob's session, the catalog read again with
    // his account) started with bearer tokens.
    assert_eq!(
        gw.log()
            .matches("the upstream takes no DPoP proofs")
            .count(),
        1,
        "{}",
        gw.log()
    );
    drop(own.idp);
}
