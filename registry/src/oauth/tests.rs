//! The store of the authorization server against a SQLite file: one-time values, grants and
//! their revocation, what lapsed.

use super::*;
use crate::sql::now_ms;

/// A registry on a SQLite file in a folder of its own, removed with the folder.
async fn sqlite() -> (SqlRegistry, tempfile::TempDir) {
    let dir = tempfile::TempDir::new().unwrap();
    let url = format!("sqlite://{}/oauth.db?mode=rwc", dir.path().display());
    (
        SqlRegistry::open(&url, Default::default()).await.unwrap(),
        dir,
    )
}

fn grant(id: &str, subject: &str, client: &str) -> GrantRecord {
    GrantRecord {
        id: id.into(),
        subject: subject.into(),
        client_id: client.into(),
        roles: vec!["dev".into()],
        scope: "mcp".into(),
        resource: "http://gw/mcp".into(),
        signed_in_with: "pat:x".into(),
        created_at: now_ms(),
        revoked_at: None,
    }
}

/// A form is spent once; once expired it is forgotten, and its row is cleared away within
/// a minute.
#[tokio::test]
async fn a_form_is_spent_once_and_forgotten_when_it_expires() {
    let (r, _dir) = sqlite().await;
    let now = now_ms();
    assert!(r.spend_form("f1", now + 1000, now).await.unwrap());
    assert!(!r.spend_form("f1", now + 1000, now).await.unwrap());
    assert!(r.spend_form("f2", now + 1000, now).await.unwrap());
    assert!(
        r.spend_form("f1", now + 5000, now + 2000).await.unwrap(),
        "after it expired it is unspent (the form itself is refused as expired)"
    );
    assert!(!r.spend_form("f1", now + 5000, now + 3000).await.unwrap());
    let rows = || async {
        sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM oauth_spent_forms")
            .fetch_one(r.pool())
            .await
            .unwrap()
    };
    assert_eq!(rows().await, 2, "expired rows wait for the next sweep");
    let later = now + SPENT_SWEEP_MS + 1;
    assert!(r.spend_form("f3", later + 1000, later).await.unwrap());
    assert_eq!(rows().await, 1, "f1 and f2 expired and were cleared away");
}

/// A code and a refresh token work once; the second use names the grant to revoke.
#[tokio::test]
async fn one_time_secrets_work_once_and_a_replay_names_its_grant() {
    let (r, _dir) = sqlite().await;
    r.create_grant(&grant("g1", "ann", "c1")).await.unwrap();
    let code = CodeRecord {
        grant_id: "g1".into(),
        redirect_uri: "http://127.0.0.1/cb".into(),
        code_challenge: "abc".into(),
        expires_at: now_ms() + 60_000,
    };
    r.create_code("h1", &code).await.unwrap();
    assert_eq!(
        r.redeem_code("h1", now_ms()).await.unwrap(),
        Redeemed::Fresh(code)
    );
    assert_eq!(
        r.redeem_code("h1", now_ms()).await.unwrap(),
        Redeemed::Reused("g1".into())
    );
    assert_eq!(
        r.redeem_code("nope", now_ms()).await.unwrap(),
        Redeemed::Unknown
    );

    let now = now_ms();
    r.create_refresh_token("r1", "g1", now, now + 60_000)
        .await
        .unwrap();
    r.create_refresh_token("r2", "g1", now, now - 1)
        .await
        .unwrap();
    assert_eq!(
        r.refresh_token_grant("r1").await.unwrap().as_deref(),
        Some("g1")
    );
    assert_eq!(
        r.redeem_refresh_token("r1", now, 0).await.unwrap(),
        Redeemed::Fresh("g1".into()),
        "a lookup does not spend it"
    );
    assert_eq!(
        r.redeem_refresh_token("r1", now + 5_000, 10_000)
            .await
            .unwrap(),
        Redeemed::Again("g1".into()),
        "used again within the interval allowed"
    );
    assert_eq!(
        r.redeem_refresh_token("r1", now + 10_000, 10_000)
            .await
            .unwrap(),
        Redeemed::Reused("g1".into()),
        "used again after it"
    );
    assert_eq!(
        r.redeem_refresh_token("r1", now, 0).await.unwrap(),
        Redeemed::Reused("g1".into())
    );
    assert_eq!(
        r.redeem_refresh_token("r2", now, 10_000).await.unwrap(),
        Redeemed::Unknown,
        "expired"
    );
}

/// What is over goes, what still works stays: expired codes and refresh tokens, revoked
/// or lapsed grants, and registered clients with no grant left that are older than the
/// cut; not an operator's clients, a blocked one, a new one or one in use.
#[tokio::test]
async fn what_lapsed_is_forgotten_and_what_works_is_kept() {
    const DAY: i64 = 86_400_000;
    let (r, _dir) = sqlite().await;
    let now = now_ms();
    let client = |id: &str, source: &str, age_days: i64, blocked: bool| ClientRecord {
        client_id: id.into(),
        metadata: serde_json::json!({}),
        secret_hash: None,
        source: source.into(),
        created_at: now - age_days * DAY,
        blocked_at: blocked.then_some(now),
    };
    for c in [
        client("unused", "dcr", 60, false),
        client("in-use", "dcr", 60, false),
        client("new", "dcr", 1, false),
        client("blocked", "dcr", 60, true),
        client("operators", "api", 60, false),
        client("https://host.example/client.json", "cimd", 60, false),
        client("https://host.example/blocked.json", "cimd", 60, true),
        client("https://host.example/new.json", "cimd", 1, false),
    ] {
        r.create_client(&c).await.unwrap();
    }
    r.put_consent("ann", "unused", "mcp").await.unwrap();
    r.put_consent("ann", "in-use", "mcp").await.unwrap();
    let aged = |id: &str, client: &str, days: i64, revoked: Option<i64>| GrantRecord {
        created_at: now - days * DAY,
        revoked_at: revoked.map(|d| now - d * DAY),
        ..grant(id, "ann", client)
    };
    for g in [
        aged("live", "in-use", 50, None),
        aged("lapsed", "in-use", 50, None),
        aged("revoked-long-ago", "in-use", 50, Some(40)),
        aged("revoked-lately", "in-use", 50, Some(1)),
        aged("machine-old", "operators", 40, None),
        aged("machine-new", "operators", 0, None),
    ] {
        r.create_grant(&g).await.unwrap();
    }
    for (hash, grant, expires_in_days) in [
        ("rt-live", "live", 29),
        ("rt-spent-expired", "live", -2),
        ("rt-lapsed", "lapsed", -20),
    ] {
        r.create_refresh_token(hash, grant, now, now + expires_in_days * DAY)
            .await
            .unwrap();
    }
    for (hash, expires_in_days) in [("code-old", -3), ("code-new", 0)] {
        let code = CodeRecord {
            grant_id: "live".into(),
            redirect_uri: "http://127.0.0.1/cb".into(),
            code_challenge: "c".into(),
            expires_at: now + expires_in_days * DAY + 60_000,
        };
        r.create_code(hash, &code).await.unwrap();
    }
    let lapsed = Lapsed {
        tokens_before: now - DAY,
        kept_from: now - 30 * DAY,
    };
    let gone = r.forget_lapsed(lapsed).await.unwrap();
    assert_eq!(
        gone,
        Forgotten {
            codes: 1,
            refresh_tokens: 2,
            grants: 3,
            clients: 2,
        }
    );
    let clients: Vec<String> = r
        .list_clients()
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.client_id)
        .collect();
    for gone in ["unused", "https://host.example/client.json"] {
        assert!(!clients.contains(&gone.to_string()), "{gone}: {clients:?}");
    }
    assert_eq!(clients.len(), 6, "{clients:?}");
    for kept in ["live", "revoked-lately", "machine-new"] {
        assert!(r.get_grant(kept).await.unwrap().is_some(), "{kept}");
    }
    for gone in ["lapsed", "revoked-long-ago", "machine-old"] {
        assert!(r.get_grant(gone).await.unwrap().is_none(), "{gone}");
    }
    assert_eq!(r.consent("ann", "unused").await.unwrap(), None);
    assert!(r.consent("ann", "in-use").await.unwrap().is_some());
    assert_eq!(
        r.redeem_refresh_token("rt-live", now, 0).await.unwrap(),
        Redeemed::Fresh("live".into())
    );
    assert_eq!(
        r.redeem_code("code-old", now).await.unwrap(),
        Redeemed::Unknown
    );
    assert!(matches!(
        r.redeem_code("code-new", now).await.unwrap(),
        Redeemed::Fresh(_)
    ));
    assert_eq!(
        r.forget_lapsed(lapsed).await.unwrap(),
        Forgotten::default(),
        "nothing more the second time"
    );
}

/// Revoking by user or by client reaches every grant of theirs, once, and forgets consent.
#[tokio::test]
async fn grants_are_revoked_by_id_user_or_client_and_consent_goes_with_them() {
    let (r, _dir) = sqlite().await;
    for (id, s, c) in [
        ("g1", "ann", "c1"),
        ("g2", "ann", "c2"),
        ("g3", "bob", "c1"),
    ] {
        r.create_grant(&grant(id, s, c)).await.unwrap();
    }
    r.put_consent("ann", "c1", "mcp").await.unwrap();
    assert_eq!(
        r.consent("ann", "c1").await.unwrap().as_deref(),
        Some("mcp")
    );
    let mut gone = r.revoke_grants(GrantsOf::Subject("ann")).await.unwrap();
    gone.sort();
    assert_eq!(gone, ["g1", "g2"]);
    assert_eq!(r.consent("ann", "c1").await.unwrap(), None);
    assert!(
        r.revoke_grants(GrantsOf::Id("g1"))
            .await
            .unwrap()
            .is_empty(),
        "once"
    );
    assert_eq!(
        r.revoke_grants(GrantsOf::Client("c1")).await.unwrap(),
        ["g3"]
    );
    assert!(r
        .get_grant("g3")
        .await
        .unwrap()
        .unwrap()
        .revoked_at
        .is_some());
}
