//! The audit log on a real full filesystem (issue 37): a small tmpfs holds the SQLite database,
//! a filler file takes its last bytes, and the gateway must neither count unwritten rows as
//! written nor serve calls it cannot audit; once the space is freed, writing resumes by itself.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use gateway_tests::{Gateway, RawClient};
use serde_json::{json, Value};

use super::fixture_config;

/// A tmpfs of `size` mounted for the test, unmounted when dropped. Mounting needs root (CI runs
/// as root); anywhere else the test says so and fails rather than pass untested.
struct Tmpfs {
    dir: PathBuf,
    /// Removed after the tmpfs is unmounted (fields drop after `Drop::drop`).
    _folder: gateway_tests::Scratch,
}

impl Tmpfs {
    fn mount(size: &str) -> Self {
        let scratch = gateway_tests::scratch();
        let dir = scratch.join("tmpfs");
        std::fs::create_dir_all(&dir).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .output()
            .expect("run mount");
        assert!(
            out.status.success(),
            "this test mounts a tmpfs and needs root: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Tmpfs {
            dir,
            _folder: scratch,
        }
    }

    /// Writes a filler file until the filesystem has no space left.
    fn fill(&self) {
        use std::io::Write;
        let mut f = std::fs::File::create(self.dir.join("filler")).unwrap();
        let block = vec![0u8; 64 * 1024];
        loop {
            if f.write_all(&block).is_err() {
                break;
            }
        }
        // The last partial block.
        while f.write_all(&[0u8; 512]).is_ok() {}
        let _ = f.sync_all();
    }

    fn free(&self) {
        std::fs::remove_file(self.dir.join("filler")).unwrap();
    }

    fn path(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
    }
}

async fn echo(c: &mut RawClient, i: usize) -> Value {
    c.request(
        "tools/call",
        json!({ "name": "fx__echo", "arguments": { "message": format!("m{i}") } }),
    )
    .await
}

fn metric(text: &str, name: &str) -> f64 {
    text.lines()
        .find(|l| l.starts_with(name) && !l.starts_with('#'))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0)
}

/// Makes audited calls until one is refused, and returns the refusal; `answered` counts the calls
/// served on the way. A full disk can take rows again with no space freed (seen in CI; most
/// likely SQLite's WAL starting over, after a checkpoint, in the space it already holds), so a
/// caller that needs the log unwritable for longer checks that no row was written meanwhile, and
/// otherwise calls again.
async fn until_refused(
    c: &mut RawClient,
    next: &mut usize,
    answered: &mut usize,
    deadline: Instant,
) -> Value {
    loop {
        *next += 1;
        let r = echo(c, *next).await;
        if !r["result"].is_object() {
            return r;
        }
        *answered += 1;
        assert!(
            Instant::now() < deadline,
            "{answered} calls were served on a full disk and none refused"
        );
    }
}

/// The rows the audit log has written so far (its counter of written rows).
async fn written(gw: &Gateway) -> f64 {
    metric(
        &gw.metrics().await,
        "mcp_gateway_audit_entries_written_total",
    )
}

async fn ready(gw: &Gateway) -> (u16, Value) {
    let r = reqwest::get(format!("{}/readyz", gw.base)).await.unwrap();
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn a_full_disk_refuses_calls_and_the_audit_log_resumes_by_itself() {
    full_disk("").await;
}

/// `buffer` serves calls while their rows fit in the queue, then refuses; none is lost.
#[tokio::test]
async fn a_full_disk_buffers_within_the_queue_then_refuses() {
    full_disk("[audit]\nwhen_unwritable = \"buffer\"\nqueue = 300\nbatch = 20\n").await;
}

async fn full_disk(audit: &str) {
    let fs = Tmpfs::mount("8m");
    let db = format!("sqlite://{}/gw.db?mode=rwc", fs.path().display());
    let gw = Gateway::start(&format!("{audit}\n{}", fixture_config(&db, ""))).await;
    gw.wait_up(&["fx"]).await;
    let mut c = RawClient::initialize(&gw.mcp, json!({})).await;
    assert!(echo(&mut c, 0).await["result"].is_object());

    fs.fill();
    // Calls go on until the audit log cannot take them: then they are refused, not served.
    let mut answered = 1usize;
    let mut next = 1usize;
    let deadline = Instant::now() + Duration::from_secs(90);
    let (refusal, body) = loop {
        let refusal = until_refused(&mut c, &mut next, &mut answered, deadline).await;
        let (status, body) = ready(&gw).await;
        if status == 503 {
            break (refusal, body);
        }
        assert!(
            Instant::now() < deadline,
            "/readyz never said the audit log is unwritable while calls were refused: {body}"
        );
    };
    assert!(
        refusal["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("audit")),
        "the refusal says why: {refusal}"
    );
    assert_eq!(body["audit"], "unwritable", "{body}");

    fs.free();
    let deadline = Instant::now() + Duration::from_secs(30);
    while ready(&gw).await.0 != 200 {
        assert!(
            Instant::now() < deadline,
            "the audit log resumes by itself once space returns: {}",
            ready(&gw).await.1
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    for i in 0..20 {
        let r = echo(&mut c, 100_000 + i).await;
        assert!(r["result"].is_object(), "served again: {r}");
        answered += 1;
    }
    // Every answered call is a row, and the counter counts rows that exist.
    let deadline = Instant::now() + Duration::from_secs(30);
    let (mut rows, mut written);
    loop {
        let audit = gw
            .get_json("/admin/v1/audit?action=tools/call&limit=10000")
            .await;
        rows = audit
            .as_array()
            .unwrap_or_else(|| panic!("{audit}"))
            .iter()
            .filter(|e| e["outcome"] == "ok")
            .count();
        written = metric(
            &gw.metrics().await,
            "mcp_gateway_audit_entries_written_total",
        );
        if rows >= answered || Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(rows, answered, "every served call is in the audit log");
    let all = gw.get_json("/admin/v1/audit?limit=10000").await;
    assert_eq!(
        written as usize,
        all.as_array().map_or(0, Vec::len),
        "audit_entries_written_total counts the rows that were stored"
    );
    let verify = gw.get_json("/admin/v1/audit/verify").await;
    assert_eq!(verify["ok"], true, "{verify}");
    gw.stop().await;
}

/// The authorization server's grants, tokens and registrations are audit rows: while the log
/// cannot take them it refuses them (503 `temporarily_unavailable`), and issues again once it can.
#[tokio::test]
async fn the_authorization_server_issues_nothing_the_audit_log_cannot_record() {
    let fs = Tmpfs::mount("8m");
    let db = format!("sqlite://{}/gw.db?mode=rwc", fs.path().display());
    let port = gateway_tests::free_port();
    let config = format!(
        "{}\n[auth]\nmode = \"required\"\nresource = \"http://127.0.0.1:{port}/mcp\"\n\
         [auth.server]\n\n[[roles]]\nname = \"admin\"\nadmin = true\nupstreams = [\"*\"]\n",
        fixture_config(&db, "")
    );
    let listen = format!("127.0.0.1:{port}");
    let gw = Gateway::start_secured(&config, &[("MCP_GATEWAY_LISTEN", &listen)]).await;
    gw.wait_up(&["fx"]).await;
    let pat = gw.token_for("ann", &["admin"]).await;
    let register = || async {
        reqwest::Client::new()
            .post(format!("{}/oauth/register", gw.base))
            .json(&json!({"redirect_uris": ["http://127.0.0.1/cb"]}))
            .send()
            .await
            .unwrap()
    };
    assert_eq!(register().await.status(), 201);

    fs.fill();
    let mut c = RawClient::initialize_as(&gw.mcp, json!({}), Some(&pat)).await;
    let (mut next, mut answered) = (1usize, 0usize);
    let deadline = Instant::now() + Duration::from_secs(90);
    let (refused, token) = loop {
        assert!(
            Instant::now() < deadline,
            "the audit log never stayed unwritable from /readyz through a registration and a \
             token request"
        );
        until_refused(&mut c, &mut next, &mut answered, deadline).await;
        let before = written(&gw).await;
        if ready(&gw).await.0 != 503 {
            continue;
        }
        let refused = register().await;
        let token = reqwest::Client::new()
            .post(format!("{}/oauth/token", gw.base))
            .form(&[
                ("grant_type", "refresh_token"),
                ("refresh_token", "x"),
                ("client_id", "y"),
            ])
            .send()
            .await
            .unwrap();
        // The state flips back only on a written row: with none written since /readyz said
        // "unwritable", the log was unwritable throughout both requests.
        if written(&gw).await == before {
            break (refused, token);
        }
    };
    assert_eq!(refused.status(), 503);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"], "temporarily_unavailable", "{body}");
    assert_eq!(token.status(), 503);

    fs.free();
    let deadline = Instant::now() + Duration::from_secs(30);
    while ready(&gw).await.0 != 200 {
        assert!(Instant::now() < deadline, "the audit log resumes");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(
        register().await.status(),
        201,
        "registering again once it can record it"
    );
    gw.stop().await;
}
