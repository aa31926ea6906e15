//! The gateway registers once at an upstream and keeps that registration across restarts.

use super::*;

/// An upstream whose authorization server takes registrations (RFC 7591) and knows no client of
/// the gateway, and a secured gateway on `database` in front of it (with `extra` config) where
/// alice has connected her account, the gateway registering once: the gateway, alice's and
/// bob's tokens, the provider, the upstream, and the gateway's environment (for restarts).
struct Registered {
    gw: Gateway,
    bob: String,
    idp: gateway_tests::Idp,
    /// Held by the test: the upstream stops when it is dropped.
    _upstream: tokio::process::Child,
    env: Vec<(&'static str, String)>,
}

async fn registered_once(database: &str, extra: &str) -> Registered {
    let port = free_port();
    let idp = gateway_tests::Idp::start_registering(
        // A client of nobody's, for the scopes the provider offers.
        json!([{"client_id": "other", "client_secret": "other-secret", "scope": "openid tools",
                "redirect_uris": ["http://127.0.0.1:9/cb"]}]),
        json!({}),
    )
    .await;
    let (server, upstream) =
        spawn_reporting_url(node("upstream/own_accounts.mjs").arg(&idp.issuer)).await;
    let cfg = format!(
        "{}\n[[upstreams]]\nname = \"own\"\ntransport = \"http\"\nurl = \"{upstream}\"\n\
         sharing = \"per_session\"\n[upstreams.user_oauth]\ncatalog = \"first_user\"\n\
         [user_credentials]\nkey = {{ env = \"CREDENTIALS_KEY\" }}\n{extra}\n\
         [auth]\nmode = \"required\"\n{ROLES}",
        fixture_config(database, "")
    );
    let env = vec![
        ("MCP_GATEWAY_LISTEN", format!("127.0.0.1:{port}")),
        (
            "CREDENTIALS_KEY",
            base64::engine::general_purpose::STANDARD.encode([42; 32]),
        ),
    ];
    let gw = Gateway::start_secured(&cfg, &pairs(&env)).await;
    gw.wait_up(&["fx"]).await;
    let alice = gw.token_for("alice", &["member"]).await;
    let bob = gw.token_for("bob", &["member"]).await;
    connect_own(&gw, &alice, "alice").await;
    assert_eq!(idp.registrations().await, 1);
    Registered {
        gw,
        bob,
        idp,
        _upstream: server,
        env,
    }
}

fn pairs<'a>(env: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    env.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

/// An upstream whose authorization server takes registrations (RFC 7591) and knows no client of
/// the gateway: the gateway registers once, and uses that registration after a restart too
/// (before, every process registered again: users saw the gateway once more among their
/// authorized applications after each restart, on each replica).
#[tokio::test]
async fn the_gateway_registers_once_at_an_upstream_and_keeps_it_across_restarts() {
    let dir = scratch();
    let Registered {
        gw,
        bob,
        idp,
        env,
        _upstream: _running,
    } = registered_once(&sqlite_url(&dir), "").await;
    let gw = gw.restart(&pairs(&env)).await;
    gw.wait_up(&["fx", "own"]).await;
    connect_own(&gw, &bob, "bob").await;
    assert_eq!(
        idp.registrations().await,
        1,
        "the registration kept in the store was used again"
    );
    let mut b = RawClient::initialize_as(&gw.mcp, json!({}), Some(&bob)).await;
    let r = whoami(&mut b).await;
    assert_eq!(r["result"]["content"][0]["text"], "you are bob", "{r}");
}

/// The store cannot be read when a connect link is followed (an outage, with the audit log
/// buffering so that links still work): the gateway does not know whether it registered at the
/// upstream's server before, and says "try again" rather than registering once more (it
/// registered again, kept the new registration in that process's memory alone, and the user
/// saw the gateway twice among the provider's applications). Once the store is back the kept
/// registration is used.
#[tokio::test]
async fn a_link_followed_while_the_store_is_away_registers_nothing_more() {
    let pg = gateway_tests::PgCluster::start();
    let Registered {
        gw,
        bob,
        idp,
        env,
        _upstream: _running,
    } = registered_once(
        &pg.url,
        "confirm_links = false\n[audit]\nwhen_unwritable = \"buffer\"",
    )
    .await;

    // A fresh process: the registration is in the store only. bob's token is checked once, so
    // that it is known while the store is away.
    let gw = gw.restart(&pairs(&env)).await;
    gw.wait_up(&["fx", "own"]).await;
    let (status, _) = gw
        .send(
            reqwest::Method::GET,
            "/v1/connections",
            Some(&bob),
            &Value::Null,
        )
        .await;
    assert_eq!(status, 200);
    pg.stop();
    let (status, link) = gw
        .send(
            reqwest::Method::POST,
            "/v1/connections/own",
            Some(&bob),
            &json!({}),
        )
        .await;
    assert_eq!(status, 200, "{link}\n{}", gw.log());
    let url = link["url"].as_str().unwrap().to_string();
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let r = browser.get(&url).send().await.unwrap();
    let status = r.status();
    let page = r.text().await.unwrap();
    assert_eq!(
        idp.registrations().await,
        1,
        "registered again while the store was away ({status})\n{}",
        gw.log()
    );
    assert_eq!(status, 503, "{page}");
    assert!(page.contains("try again"), "{page}");

    pg.restart();
    let mut status = 0;
    for _ in 0..40 {
        status = browser.get(&url).send().await.unwrap().status().as_u16();
        if status == 302 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert_eq!(status, 302, "on to the provider once the store is back");
    assert_eq!(idp.registrations().await, 1, "with the kept registration");
}
