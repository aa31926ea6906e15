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
        cat[0].definition, t1b,
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
    let files = std::fs::read_dir(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../migrations/postgres"
    ))
    .unwrap()
    .count() as i64;
    assert_eq!(applied, files, "each migration applied exactly once");
}

async fn terminated_sessions(reg: &dyn Registry) {
    assert!(!reg.is_session_terminated("h1").await.unwrap());
    reg.terminate_session("h1").await.unwrap();
    reg.terminate_session("h1").await.unwrap();
    assert!(reg.is_session_terminated("h1").await.unwrap());
}

#[tokio::test]
async fn terminated_sessions_on_both_backends() {
    let dir = gateway_tests::scratch();
    terminated_sessions(
        &SqlRegistry::open(&super::sqlite_url(&dir), Default::default())
            .await
            .unwrap(),
    )
    .await;
    let url = gateway_tests::postgres_database().await;
    terminated_sessions(&SqlRegistry::open(&url, Default::default()).await.unwrap()).await;
}
