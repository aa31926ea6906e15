//! An upstream's authorization server that is down for a while when a user's token must be
//! refreshed: the call fails with "try again", and the user's connection is kept. (It was
//! forgotten on any failed refresh, so an outage of the provider made every user of the
//! upstream connect their account again.)

use super::*;

#[tokio::test]
async fn a_provider_outage_during_a_refresh_keeps_the_users_connection() {
    let dir = scratch();
    let port = free_port();
    let own = own_upstream(&sqlite_url(&dir), port, "").await;
    let gw = own_gateway(&own.config, port).await;
    connect_catalog(&gw).await;
    let alice_token = gw.token_for("alice", &["member"]).await;
    connect_own(&gw, &alice_token, "alice").await;
    let mut alice = RawClient::initialize_as(&gw.mcp, json!({}), Some(&alice_token)).await;
    let r = whoami(&mut alice).await;
    assert_eq!(r["result"]["content"][0]["text"], "you are alice", "{r}");

    // The provider goes down, and the upstream stops taking alice's token: a refresh is due.
    let http = reqwest::Client::new();
    let post = |url: String| http.post(url).send();
    post(format!("{}/test/outage", own.idp.issuer))
        .await
        .unwrap();
    refuse_tokens_of(&own.upstream, "alice").await;
    let during = whoami(&mut alice).await;
    let text = during.to_string();
    assert!(
        !text.contains("/oauth/upstream/connect?ticket="),
        "asked to connect again while the provider is down: {during}"
    );
    assert!(
        during["result"]["isError"] == true || during["error"].is_object(),
        "{during}"
    );

    // Back up: the next call refreshes and goes on, with no new connection.
    post(format!("{}/test/outage-over", own.idp.issuer))
        .await
        .unwrap();
    let after = whoami(&mut alice).await;
    assert_eq!(
        after["result"]["content"][0]["text"],
        "you are alice",
        "{after}\n{}",
        gw.log()
    );
}
