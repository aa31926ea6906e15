//! Per-principal rate limits (GCRA, `governor`): a steady rate with bursts; a caller over its
//! limit is told when to come back.

use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

use crate::config::RateLimit;

pub struct Limits {
    limiter: Option<DefaultKeyedRateLimiter<String>>,
    clock: DefaultClock,
}

impl Limits {
    pub fn new(limit: Option<RateLimit>) -> Self {
        let limiter = limit.and_then(|l| {
            let rate = NonZeroU32::new(l.per_second)?;
            let burst = NonZeroU32::new(l.burst)?;
            Some(RateLimiter::keyed(
                Quota::per_second(rate).allow_burst(burst),
            ))
        });
        Self {
            limiter,
            clock: DefaultClock::default(),
        }
    }

    /// `Err(wait)` when the principal is over its limit.
    pub fn check(&self, key: &str) -> Result<(), Duration> {
        let Some(l) = &self.limiter else {
            return Ok(());
        };
        l.check_key(&key.to_string())
            .map_err(|not_until| not_until.wait_time_from(self.clock.now()))
    }

    /// Forgets principals that have not called lately (bounded memory).
    pub fn trim(&self) {
        if let Some(l) = &self.limiter {
            l.retain_recent();
            l.shrink_to_fit();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bursts_then_refuses_per_principal() {
        let l = Limits::new(Some(RateLimit {
            per_second: 1,
            burst: 2,
        }));
        assert!(l.check("a").is_ok());
        assert!(l.check("a").is_ok());
        let wait = l.check("a").unwrap_err();
        assert!(wait > Duration::ZERO && wait <= Duration::from_secs(1));
        assert!(l.check("b").is_ok(), "another principal has its own budget");
        assert!(Limits::new(None).check("a").is_ok());
    }
}
