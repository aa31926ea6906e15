//! What spending a one-time value in the store costs (`spend_form`: a sign-in form, a one-time
//! grant's id, and since the twenty-sixth round every DPoP proof a bound token comes with), on
//! SQLite or Postgres: wall time per spend, one caller after another (as one host's requests
//! come) and several at once (as many hosts' requests come), with the table holding the rows of
//! the last 5 minutes.
//!
//!   cargo run --release -p registry --example spend-once -- [SPENDS] [CONCURRENCY] [DATABASE_URL]
//!
//! Without `DATABASE_URL`, a SQLite file in the temporary directory.

use std::sync::Arc;
use std::time::Instant;

use registry::{OAuthStore, SqlRegistry};

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let spends: usize = args.get(1).map_or(20_000, |a| a.parse().expect("SPENDS"));
    let concurrency: usize = args.get(2).map_or(8, |a| a.parse().expect("CONCURRENCY"));
    let dir = std::env::temp_dir().join(format!("spend-once-{}", std::process::id()));
    let url = match args.get(3) {
        Some(u) => u.clone(),
        None => {
            std::fs::create_dir_all(&dir).unwrap();
            format!("sqlite://{}?mode=rwc", dir.join("gw.db").display())
        }
    };
    let reg = Arc::new(SqlRegistry::open(&url, Default::default()).await.unwrap());
    let now = registry::now_ms();
    let until = now + 300_000;
    // The rows a busy minute leaves: spends still within their window.
    for i in 0..spends {
        reg.spend_form(&format!("warm-{now}-{i}"), until, now)
            .await
            .unwrap();
    }
    let one_by_one = Instant::now();
    for i in 0..spends {
        assert!(reg
            .spend_form(&format!("one-{now}-{i}"), until, now)
            .await
            .unwrap());
    }
    let one_by_one = one_by_one.elapsed();
    let at_once = Instant::now();
    let tasks: Vec<_> = (0..concurrency)
        .map(|t| {
            let reg = reg.clone();
            tokio::spawn(async move {
                for i in (t..spends).step_by(concurrency) {
                    let key = format!("many-{now}-{i}");
                    assert!(reg.spend_form(&key, until, now).await.unwrap());
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let at_once = at_once.elapsed();
    let backend = url.split(':').next().unwrap_or("?");
    println!(
        "{backend}: {spends} spends one after another: {:.1} µs each; {concurrency} callers at once: {:.1} µs each ({:.0} spends/s)",
        one_by_one.as_secs_f64() * 1e6 / spends as f64,
        at_once.as_secs_f64() * 1e6 / spends as f64,
        spends as f64 / at_once.as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
