//! The official conformance suite (`--requirements 2025-11-25`) against the Rust fixture upstream
//! alone, and against the gateway with that fixture behind it under its original names. The
//! fixture passing alone means a failure through the gateway is the gateway's.

use std::time::Duration;

use gateway_tests::{peer_path, peers, Gateway};
use serde_json::Value;
use tokio::process::Command;

/// Runs the suite against `url`; returns (successes, failures with their scenario and message).
async fn run_suite(url: &str) -> (usize, Vec<String>) {
    let out_dir = gateway_tests::scratch();
    let run = Command::new(peers().join("node_modules/.bin/conformance"))
        .args(["server", "--url", url, "--requirements", "2025-11-25", "-o"])
        .arg(&out_dir)
        .env("PATH", peer_path())
        .current_dir(&out_dir)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(300), run)
        .await
        .expect("suite finishes in 5 min")
        .unwrap();
    let mut ok = 0;
    let mut failed = Vec::new();
    for dir in std::fs::read_dir(&out_dir).unwrap().flatten() {
        let Ok(text) = std::fs::read_to_string(dir.path().join("checks.json")) else {
            continue;
        };
        let checks: Vec<Value> = serde_json::from_str(&text).unwrap();
        for c in checks {
            match c["status"].as_str() {
                Some("SUCCESS") => ok += 1,
                Some("FAILURE") => failed.push(format!(
                    "{}: {} {}",
                    dir.file_name().to_string_lossy(),
                    c["id"],
                    c["errorMessage"]
                )),
                _ => {}
            }
        }
    }
    assert!(
        ok > 0,
        "the suite ran no check: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (ok, failed)
}

#[tokio::test]
async fn conformance_suite_passes_alone_and_through_the_gateway() {
    let (_fixture, fixture_url) = gateway_tests::spawn_reporting_url(&mut Command::new(env!(
        "CARGO_BIN_EXE_conformance-fixture"
    )))
    .await;

    let (alone, failed) = run_suite(&fixture_url).await;
    assert!(failed.is_empty(), "the fixture alone fails: {failed:#?}");

    let dir = gateway_tests::scratch();
    let gw = Gateway::start(&format!(
        "[database]\nurl = \"{}\"\n\n[[upstreams]]\nname = \"conformance\"\ntransport = \"http\"\nurl = \"{fixture_url}\"\nprefix = \"never\"\n",
        super::sqlite_url(&dir)
    ))
    .await;
    gw.wait_up(&["conformance"]).await;
    let (through, failed) = run_suite(&gw.mcp).await;
    assert!(
        failed.is_empty(),
        "through the gateway: {failed:#?}\n{}",
        gw.log()
    );
    // server-sse-polling reports one check less through the gateway: the gateway resumes the
    // upstream's closed stream itself, so the host's stream never drops (an INFO, not a failure).
    assert!(
        through + 1 >= alone,
        "{through} checks passed through the gateway, {alone} alone"
    );
}
