//! The one retry policy of the gateway's loops (upstream supervision, HTTP listen and subscribe
//! streams, the audit writer, the registry listener; it lives here, below both crates): exponential with full jitter, so replicas
//! and upstreams that failed together do not retry together, and without end, so nothing gives
//! up for good. Built on `backon`'s policy; each loop sleeps on its own terms (it also watches a
//! stop signal).

use std::time::Duration;

use backon::BackoffBuilder;

/// Delays from `min` doubling up to `max`, each jittered, never running out.
pub struct Backoff {
    min: Duration,
    max: Duration,
    delays: backon::ExponentialBackoff,
}

impl Backoff {
    pub fn new(min: Duration, max: Duration) -> Self {
        Self {
            min,
            max,
            delays: Self::build(min, max),
        }
    }

    fn build(min: Duration, max: Duration) -> backon::ExponentialBackoff {
        backon::ExponentialBuilder::default()
            .with_min_delay(min)
            .with_max_delay(max)
            .with_jitter()
            .without_max_times()
            .build()
    }

    /// The next delay.
    pub fn next_delay(&mut self) -> Duration {
        self.delays.next().unwrap_or(self.max)
    }

    /// After a success: the next failure waits the shortest delay again.
    pub fn reset(&mut self) {
        self.delays = Self::build(self.min, self.max);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_to_the_cap_never_ends_and_resets() {
        let mut b = Backoff::new(Duration::from_millis(100), Duration::from_secs(2));
        let delays: Vec<Duration> = (0..50).map(|_| b.next_delay()).collect();
        assert!(delays.iter().all(|d| *d >= Duration::from_millis(100)));
        // Jitter adds up to one more delay on top of the capped one.
        assert!(delays.iter().all(|d| *d <= Duration::from_secs(4)));
        assert!(delays[40..].iter().all(|d| *d >= Duration::from_secs(2)));
        b.reset();
        assert!(b.next_delay() < Duration::from_millis(201));
    }
}
