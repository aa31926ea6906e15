//! One registry suite, run against both backends.

use registry::{EntryKind, Registry, RegistryError, SqlRegistry};
use serde_json::json;

async fn exercise(reg: &dyn Registry) {
    let spec = json!({"name": "a", "transport": "stdio", "command": "x"});
    let rec = reg.create_upstream("a", &spec, "api").await.unwrap();
    assert_eq!(rec.spec, spec);
    assert!(matches!(
        reg.create_upstream("a", &spec, "api").await,
        Err(RegistryError::AlreadyExists(_))
    ));
    let changed = json!({"name": "a", "transport": "stdio", "command": "y"});
    let rec = reg.update_upstream("a", &changed, false).await.unwrap();
    assert_eq!((rec.spec, rec.enabled), (changed, false));
    assert!(matches!(
        reg.update_upstream("zz", &json!({}), true).await,
        Err(RegistryError::NotFound(_))
    ));
    reg.put_upstream("b", &spec, "config").await.unwrap();
    let names: Vec<_> = reg
        .list_upstreams()
        .await
        .unwrap()
        .into_iter()
        .map(|u| u.name)
        .collect();
    assert_eq!(names, ["a", "b"]);

    let t1 = json!({"name": "t1", "description": "one", "execution": {"taskSupport": "optional"}});
    let t2 = json!({"name": "t2", "description": "two"});
    let r = reg
        .sync_catalog("a", EntryKind::Tool, &[t1.clone(), t2.clone()])
        .await
        .unwrap();
    assert_eq!((r.added, r.changed, r.removed), (2, 0, 0));
    let r = reg
        .sync_catalog("a", EntryKind::Tool, &[t1.clone(), t2.clone()])
        .await
        .unwrap();
    assert_eq!(
        (r.unchanged, r.is_change()),
        (2, false),
        "same definitions are no change"
    );
    let t1b = json!({"name": "t1", "description": "one, reworded", "execution": {"taskSupport": "optional"}});
    let r = reg
        .sync_catalog("a", EntryKind::Tool, std::slice::from_ref(&t1b))
        .await
        .unwrap();
    assert_eq!((r.added, r.changed, r.removed), (0, 1, 1));
    let cat = reg.catalog().await.unwrap();
    assert_eq!(cat.len(), 1);
    assert_eq!(
        cat[0].definition.to_value(),
        t1b,
        "definitions are stored faithfully, unknown fields too"
    );
    assert!(reg
        .sync_catalog("a", EntryKind::Tool, &[json!({"description": "no name"})])
        .await
        .is_err());

    reg.delete_upstream("a").await.unwrap();
    assert!(
        reg.catalog().await.unwrap().is_empty(),
        "an upstream's catalog goes with it"
    );
    assert!(matches!(
        reg.delete_upstream("a").await,
        Err(RegistryError::NotFound(_))
    ));
    reg.ping().await.unwrap();
    routing(reg).await;
    audit_retention(reg).await;
}

/// Stored embeddings (by model and text hash) and virtual servers.
/// Rows past their retention leave from the start of the chain, which still verifies, also
/// with every row gone and new ones written after; a row missing where the anchor would go
/// stops retention instead of hiding it.
async fn audit_retention(reg: &dyn Registry) {
    let entry = |at: i64| registry::AuditEntry {
        at,
        principal: "ann".into(),
        action: "tools/call".into(),
        outcome: "ok".into(),
        ..Default::default()
    };
    let old: Vec<_> = (0..5).map(|i| entry(1_000 + i)).collect();
    let new: Vec<_> = (0..3).map(|i| entry(9_000 + i)).collect();
    reg.append_audit(&old).await.unwrap();
    reg.append_audit(&new).await.unwrap();
    assert_eq!(reg.prune_audit(5_000).await.unwrap(), 5);
    assert_eq!(reg.prune_audit(5_000).await.unwrap(), 0, "nothing more");
    let r = reg.verify_audit().await.unwrap();
    assert!(r.ok, "{r:?}");
    assert_eq!((r.pruned_through, r.checked, r.head_seq), (5, 3, 8));
    assert_eq!(reg.prune_audit(i64::MAX).await.unwrap(), 3);
    let r = reg.verify_audit().await.unwrap();
    assert!(r.ok && r.checked == 0 && r.pruned_through == 8, "{r:?}");
    reg.append_audit(&new).await.unwrap();
    let r = reg.verify_audit().await.unwrap();
    assert!(r.ok && r.checked == 3, "{r:?}");
}

async fn routing(reg: &dyn Registry) {
    let v1 = vec![0.5f32, -0.25, 1e-3];
    reg.put_embeddings(
        "m1",
        &[
            ("h1".into(), v1.clone()),
            ("h2".into(), vec![1.0, 0.0, 0.0]),
        ],
    )
    .await
    .unwrap();
    // A second writer of the same vector (another replica) is not an error; the first stays.
    reg.put_embeddings("m1", &[("h1".into(), vec![9.0, 9.0, 9.0])])
        .await
        .unwrap();
    let hashes: Vec<String> = (0..1200)
        .map(|i| format!("x{i}"))
        .chain(["h1".into()])
        .collect();
    let got = reg.embeddings("m1", &hashes).await.unwrap();
    assert_eq!(
        got.len(),
        1,
        "chunked lookups find the one stored among 1,201"
    );
    assert_eq!(got["h1"], v1);
    assert!(
        reg.embeddings("m2", &["h1".into()])
            .await
            .unwrap()
            .is_empty(),
        "per model"
    );
    // What is in use is marked (each row seldom); what no one marked for long is forgotten,
    // of every model. Times ahead of now stand for days passing.
    const DAY: i64 = 86_400_000;
    let now = registry::now_ms();
    reg.put_embeddings("m2", &[("h1".into(), v1.clone())])
        .await
        .unwrap();
    let ten_days_on = now + 10 * DAY;
    assert_eq!(
        reg.touch_embeddings("m1", &hashes, ten_days_on, ten_days_on - DAY)
            .await
            .unwrap(),
        1,
        "chunked marks reach the one stored among 1,201"
    );
    assert_eq!(
        reg.touch_embeddings("m1", &hashes, ten_days_on + 1, ten_days_on - DAY)
            .await
            .unwrap(),
        0,
        "marked lately: not written again"
    );
    assert_eq!(reg.forget_embeddings(now + 5 * DAY).await.unwrap(), 2);
    let left = reg
        .embeddings("m1", &["h1".into(), "h2".into()])
        .await
        .unwrap();
    assert_eq!(
        left.keys().collect::<Vec<_>>(),
        ["h1"],
        "the marked one stays"
    );
    assert!(reg
        .embeddings("m2", &["h1".into()])
        .await
        .unwrap()
        .is_empty());
    assert_eq!(reg.forget_embeddings(now + 5 * DAY).await.unwrap(), 0);

    let spec = json!({"mode": "auto", "upstreams": ["git*"]});
    reg.put_virtual_server("dev", &spec, true).await.unwrap();
    assert!(matches!(
        reg.put_virtual_server("dev", &spec, true).await,
        Err(RegistryError::AlreadyExists(_))
    ));
    assert!(matches!(
        reg.put_virtual_server("nope", &spec, false).await,
        Err(RegistryError::NotFound(_))
    ));
    let changed = json!({"mode": "search"});
    let rec = reg
        .put_virtual_server("dev", &changed, false)
        .await
        .unwrap();
    assert_eq!(rec.spec, changed);
    let all = reg.list_virtual_servers().await.unwrap();
    assert_eq!((all.len(), &all[0].spec), (1, &changed));
    reg.delete_virtual_server("dev").await.unwrap();
    assert!(matches!(
        reg.delete_virtual_server("dev").await,
        Err(RegistryError::NotFound(_))
    ));
}

#[tokio::test]
async fn sqlite_backend() {
    let dir = gateway_tests::scratch();
    let reg = SqlRegistry::open(&super::sqlite_url(&dir), Default::default())
        .await
        .unwrap();
    assert_eq!(reg.backend(), "sqlite");
    exercise(&reg).await;
}

#[tokio::test]
async fn postgres_backend() {
    let url = gateway_tests::postgres_database().await;
    let reg = SqlRegistry::open(&url, Default::default()).await.unwrap();
    assert_eq!(reg.backend(), "postgres");
    exercise(&reg).await;
    // Opening again (a second replica) finds the migrations done.
    SqlRegistry::open(&url, Default::default()).await.unwrap();
}

#[tokio::test]
async fn replicas_starting_together_migrate_once() {
    let url = gateway_tests::postgres_database().await;
    let opens: Vec<_> = (0..6)
        .map(|_| {
            let url = url.clone();
            tokio::spawn(async move { SqlRegistry::open(&url, Default::default()).await })
        })
        .collect();
    for o in opens {
        o.await.unwrap().expect("every replica starts");
    }
    let reg = SqlRegistry::open(&url, Default::default()).await.unwrap();
    let applied: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM _sqlx_migrations")
        .fetch_one(reg.pool())
        .await
        .unwrap();
    let files = std::fs::read_dir(gateway_tests::package_dir().join("../migrations/postgres"))
        .unwrap()
        .count() as i64;
    assert_eq!(applied, files, "each migration applied exactly once");
}

async fn terminated_sessions(reg: &dyn Registry) {
    assert!(!reg.is_session_terminated("h1").await.unwrap());
    reg.terminate_session("h1").await.unwrap();
    reg.terminate_session("h1").await.unwrap();
    assert!(reg.is_session_terminated("h1").await.unwrap());
    let now = registry::now_ms();
    assert_eq!(
        reg.sessions_terminated_since(now - 60_000).await.unwrap(),
        vec!["h1".to_string()]
    );
    assert!(reg
        .sessions_terminated_since(now + 60_000)
        .await
        .unwrap()
        .is_empty());
    assert_eq!(
        reg.forget_terminated_sessions(now - 60_000).await.unwrap(),
        0
    );
    assert!(reg.is_session_terminated("h1").await.unwrap());
    assert_eq!(
        reg.forget_terminated_sessions(now + 60_000).await.unwrap(),
        1
    );
    assert!(!reg.is_session_terminated("h1").await.unwrap());
}

#[tokio::test]
async fn terminated_sessions_on_both_backends() {
    let (_dir, both) = both_backends().await;
    for reg in &both {
        terminated_sessions(reg).await;
    }
}

/// A migrated SQLite registry (in the folder returned) and a Postgres one.
async fn both_backends() -> (gateway_tests::Scratch, [SqlRegistry; 2]) {
    let dir = gateway_tests::scratch();
    let sqlite = SqlRegistry::open(&super::sqlite_url(&dir), Default::default())
        .await
        .unwrap();
    let url = gateway_tests::postgres_database().await;
    let postgres = SqlRegistry::open(&url, Default::default()).await.unwrap();
    (dir, [sqlite, postgres])
}

/// One replica's turn to refresh a connection at a time; a turn not given back lapses.
async fn connection_turns(reg: &dyn Registry) {
    let now = registry::now_ms();
    assert_eq!(
        reg.lease_connection("own", "user:a", now, now + 30_000)
            .await
            .unwrap(),
        None,
        "no such connection"
    );
    reg.put_connection(&registry::ConnectionRecord {
        upstream: "own".into(),
        holder: "user:a".into(),
        connected_by: "a".into(),
        sealed: "x".into(),
        issuer: "https://as".into(),
        scope: String::new(),
        created_at: now,
        updated_at: now,
        expires_at: None,
    })
    .await
    .unwrap();
    let lease = |at: i64| reg.lease_connection("own", "user:a", at, at + 30_000);
    assert_eq!(lease(now).await.unwrap(), Some(true));
    assert_eq!(lease(now + 1_000).await.unwrap(), Some(false), "taken");
    assert_eq!(
        lease(now + 31_000).await.unwrap(),
        Some(true),
        "a turn not given back lapses"
    );
    reg.release_connection("own", "user:a").await.unwrap();
    assert_eq!(lease(now + 32_000).await.unwrap(), Some(true), "given back");
}

#[tokio::test]
async fn connection_turns_on_both_backends() {
    let (_dir, both) = both_backends().await;
    for reg in &both {
        connection_turns(reg).await;
    }
}
