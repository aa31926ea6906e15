//! A link whose user cannot sign in here in a browser says so, unless confirming is off.

use super::*;

/// A user whose tokens come from a provider the gateway cannot sign them in with in a browser
/// (one of `auth.issuers`, no `[auth.server.oidc]`): their link cannot be confirmed and says
/// why; with `user_credentials.confirm_links = false` it goes on to the upstream unconfirmed.
#[tokio::test]
async fn a_link_whose_user_cannot_sign_in_here_says_so_unless_confirming_is_off() {
    let company = gateway_tests::Idp::start(json!([
        {"client_id": "agent", "client_secret": "agent-secret", "scope": "mcp"}
    ]))
    .await;
    for confirm in [true, false] {
        let dir = scratch();
        let port = free_port();
        let own = own_upstream(&sqlite_url(&dir), port, "").await;
        let resource = format!("http://127.0.0.1:{port}/mcp");
        let issuers = format!(
            "[auth]\nmode = \"required\"\nresource = \"{resource}\"\nrequired_scopes = [\"mcp\"]\n\
             [[auth.issuers]]\nissuer = \"{}\"\n\
             [[auth.role_mappings]]\nclaim = \"client_id\"\nvalue = \"agent\"\nrole = \"member\"\n",
            company.issuer
        );
        let mut cfg = own
            .config
            .replace("[auth]\nmode = \"required\"\n", &issuers);
        if !confirm {
            cfg = cfg.replace(
                "[user_credentials]\n",
                "[user_credentials]\nconfirm_links = false\n",
            );
        }
        let gw = own_gateway(&cfg, port).await;
        let token = company
            .token("agent", "agent-secret", "mcp", &resource)
            .await;
        let (status, link) = gw
            .send(
                reqwest::Method::POST,
                "/v1/connections/own",
                Some(&token),
                &json!({}),
            )
            .await;
        assert_eq!(status, 200, "{link}\n{}", gw.log());
        let opened = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap()
            .get(link["url"].as_str().unwrap())
            .send()
            .await
            .unwrap();
        if confirm {
            assert_eq!(opened.status(), 403);
            let text = opened.text().await.unwrap();
            assert!(text.contains("cannot check in a browser"), "{text}");
            assert!(text.contains("confirm_links"), "{text}");
        } else {
            assert_eq!(opened.status(), 302);
            let to = opened.headers()["location"].to_str().unwrap().to_string();
            assert!(to.starts_with(&own.idp.issuer), "{to}");
        }
    }
}
