//! Other servers' JSON is read with a bound: an upstream whose protected resource metadata never
//! ends (a compromised server exhausting its clients' memory) is read up to 1 MiB and taken as
//! no metadata; the upstream is down, the gateway unharmed.

use gateway_tests::{node, polled, spawn_reporting_url};

use super::*;

#[tokio::test]
async fn an_endless_metadata_answer_is_read_no_further_than_a_bound() {
    let (_server, upstream) = spawn_reporting_url(&mut node("upstream/endless_answers.mjs")).await;
    let config = format!(
        "{}[[upstreams]]\nname = \"endless\"\ntransport = \"http\"\nurl = \"{upstream}\"\n\
         oauth = {{ client_id = \"gw\", client_secret = {{ env = \"GW_SECRET\" }} }}\n",
        fixture_config(SQLITE_IN_ITS_FOLDER, "")
    );
    let gw = Gateway::start_with_env(&config, &[("GW_SECRET", "s")]).await;
    gw.wait_up(&["fx"]).await;
    let health = gw.health_once("endless", |h| h["status"] == "down").await;
    assert_eq!(health["status"], "down", "{health}\n{}", gw.log());
    let base = upstream.trim_end_matches("/mcp");
    // The gateway tries again while down: an answer it is reading now has neither ended nor
    // been closed yet, so only the finished ones are judged (and one is waited for).
    let sent = polled(
        || async {
            reqwest::get(format!("{base}/test/sent"))
                .await
                .unwrap()
                .json::<Value>()
                .await
                .unwrap()
        },
        |sent| finished(sent).next().is_some(),
    )
    .await;
    assert!(
        finished(&sent).next().is_some(),
        "a metadata answer finished: {sent}"
    );
    // Each time, the reader went away after its 1 MiB; the sockets' buffers hold a few MiB more.
    for a in finished(&sent) {
        assert_eq!(a["closed"], true, "the gateway read to the end: {sent}");
    }
    for a in sent.as_array().unwrap() {
        assert!(
            a["sent"].as_u64().unwrap() < 16 * 1024 * 1024,
            "the gateway read on: {sent}"
        );
    }
}

/// The metadata answers that are over: closed by the reader, or written to their end.
fn finished(sent: &Value) -> impl Iterator<Item = &Value> {
    sent.as_array()
        .into_iter()
        .flatten()
        .filter(|a| a["closed"] == true || a["ended"] == true)
}
