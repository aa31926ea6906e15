//! A connect link sent on to someone else does not connect their account.

use super::*;

/// A connect link is a bearer link: sent on to someone else (by mistake, or by someone who
/// wants the other's account), it must not connect the opener's account at the upstream to
/// the link's user. Whoever opens it signs in to the gateway as the user it was made for.
#[tokio::test]
async fn a_connect_link_opened_by_someone_else_does_not_connect_their_account() {
    let dir = scratch();
    let port = free_port();
    let own = own_upstream(&sqlite_url(&dir), port, "catalog = \"first_user\"").await;
    let gw = own_gateway(&own.config, port).await;
    let alice = gw.token_for("alice", &["member"]).await;
    let mallory = gw.token_for("mallory", &["member"]).await;
    let connections = |token: String| {
        let gw = &gw;
        async move {
            let (_, mine) = gw
                .send(
                    reqwest::Method::GET,
                    "/v1/connections",
                    Some(&token),
                    &Value::Null,
                )
                .await;
            mine["connections"].clone()
        }
    };

    // mallory asks for a link to connect her account and sends it to alice, who opens it and
    // would sign in at the upstream's provider as herself.
    let (status, link) = gw
        .send(
            reqwest::Method::POST,
            "/v1/connections/own",
            Some(&mallory),
            &json!({}),
        )
        .await;
    assert_eq!(status, 200, "{link}");
    let url = link["url"].as_str().unwrap();
    let page = browse(url, &alice, "alice").await;
    assert_eq!(page["status"], 403, "{page}\n{}", gw.log());
    assert!(
        page["text"].as_str().unwrap().contains("another user"),
        "{page}"
    );
    assert_eq!(connections(mallory.clone()).await, json!([]));
    assert_eq!(connections(alice.clone()).await, json!([]));
    assert!(
        recorded(&own.upstream, "lists").await.is_empty(),
        "alice's account was never used"
    );

    // Without a token that is valid, nobody goes on either; a sign-in posted from another site
    // (no cookie of the page) is refused.
    let page = browse(url, "mcpgw_not-a-token", "alice").await;
    assert!(
        page["text"].as_str().unwrap().contains("not valid"),
        "{page}"
    );
    let plain = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let ticket = url.split("ticket=").nth(1).unwrap();
    let forged = plain
        .post(format!("{}/oauth/upstream/connect", gw.base))
        .form(&[("ticket", ticket), ("pat", mallory.as_str()), ("csrf", "x")])
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), 403);
    assert!(forged.headers().get("location").is_none());

    // The user the link was made for goes on to the upstream, and is connected: in Chromium,
    // where the pages' Content-Security-Policy holds.
    let artifacts = dir.join("artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let mut cmd = node("browser/connect_link.mjs");
    cmd.env("CHROMIUM", crate::it::console::chromium())
        .env("LINK", url)
        .env("PAT", &mallory)
        .env("LOGIN", "mallory")
        .env("ARTIFACTS", &artifacts)
        .env("HOME", &dir);
    let seen = last_json_line(cmd, "the browser").await;
    assert!(seen["failure"].is_null(), "{seen:#}\n{}", gw.log());
    assert!(
        seen["askText"]
            .as_str()
            .unwrap()
            .contains("gateway user mallory"),
        "{seen}"
    );
    assert!(
        seen["signedInText"]
            .as_str()
            .unwrap()
            .contains("Signed in as mallory"),
        "{seen}"
    );
    assert!(
        seen["landed"].as_str().unwrap().contains("Connected"),
        "{seen}"
    );
    assert_eq!(seen["csp"], json!([]), "no CSP violation: {seen}");
    let mine = connections(mallory.clone()).await;
    assert_eq!(mine[0]["upstream"], "own", "{mine}");

    // The refusal is an audit row that names both.
    let audit = gw.get_json("/admin/v1/audit?limit=200").await;
    let refused = audit
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["action"] == "upstream.connect.confirm" && r["principal"] == "pat:alice")
        .cloned()
        .unwrap_or_else(|| panic!("a refusal row in {audit}"));
    assert_eq!(refused["outcome"], "refused", "{refused}");
    assert_eq!(refused["target"], "pat:mallory", "{refused}");
    assert_eq!(refused["upstream"], "own", "{refused}");
    drop(own.idp);
}
