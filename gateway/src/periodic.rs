//! Work a replica repeats on a timer (sweeps of what lapsed, the idle-session reaper) for as
//! long as what it works on lives: each task holds it weakly and stops with the gateway.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// Runs `work` on `of` now and then every `period`, until `of` is dropped.
pub fn every<T, F, Fut>(period: Duration, of: &Arc<T>, work: F)
where
    T: ?Sized + Send + Sync + 'static,
    F: Fn(Arc<T>) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send,
{
    let of = Arc::downgrade(of);
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(period);
        loop {
            tick.tick().await;
            let Some(it) = of.upgrade() else { break };
            work(it).await;
        }
    });
}
