//! An upstream's credentials stay with its origin: a redirect to another server is not
//! followed, and a legacy SSE server's message endpoint on another origin is not posted to, so
//! a configured secret header never reaches whatever the upstream sends the gateway to; a
//! redirect within the origin still is (`real_peers::an_upstream_whose_url_redirects_is_followed`).

use gateway_tests::{node, spawn_reporting_url};

use super::*;

#[tokio::test]
async fn an_upstreams_secret_header_never_follows_a_redirect_to_another_origin() {
    sent_elsewhere("http", "").await;
}

#[tokio::test]
async fn a_legacy_sse_upstreams_secret_header_never_goes_to_an_endpoint_on_another_origin() {
    sent_elsewhere("sse", "sse").await;
}

/// An upstream (`transport`, its URL's path `path` under the server) that sends the gateway to
/// a server on another origin: its secret header reaches its own origin only, and its health
/// names the other one.
async fn sent_elsewhere(transport: &str, path: &str) {
    // Another origin (127.0.0.2 is loopback too), which records what reaches it.
    let (_elsewhere, elsewhere) =
        spawn_reporting_url(node("upstream/redirector.mjs").arg("").arg("127.0.0.2")).await;
    let (_upstream, upstream) =
        spawn_reporting_url(node("upstream/redirector.mjs").arg(&elsewhere)).await;
    let url = match path {
        "" => upstream.clone(),
        p => format!("{}/{p}", upstream.trim_end_matches("/mcp")),
    };
    let config = format!(
        "{}[[upstreams]]\nname = \"moved\"\ntransport = \"{transport}\"\nurl = \"{url}\"\n\
         headers = {{ X-Api-Key = {{ env = \"MOVED_KEY\" }} }}\n",
        fixture_config(SQLITE_IN_ITS_FOLDER, "")
    );
    let gw = Gateway::start_with_env(&config, &[("MOVED_KEY", "key-for-moved-only")]).await;
    gw.wait_up(&["fx"]).await;
    let moved = gw
        .health_once("moved", |h| h["last_error"].is_string())
        .await;
    let seen = |url: &str| {
        let base = url.trim_end_matches("/mcp").to_string();
        async move {
            reqwest::get(format!("{base}/test/seen"))
                .await
                .unwrap()
                .json::<Value>()
                .await
                .unwrap()
        }
    };
    let at_upstream = seen(&upstream).await;
    assert!(
        at_upstream.to_string().contains("key-for-moved-only"),
        "the upstream's own origin gets its header: {at_upstream}"
    );
    let at_elsewhere = seen(&elsewhere).await;
    assert!(
        !at_elsewhere.to_string().contains("key-for-moved-only"),
        "the header reached {elsewhere}: {at_elsewhere}"
    );
    let error = moved["last_error"].as_str().unwrap_or_default();
    assert!(
        error.contains("another origin") && error.contains("127.0.0.2"),
        "{moved}\n{}",
        gw.log()
    );
}
