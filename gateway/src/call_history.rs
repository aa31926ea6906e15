//! The last hour of each upstream's calls, minute by minute, for the console's charts: taken
//! from the gateway's own counters (the `upstream_request_duration_seconds` histogram), sampled
//! once a minute off the call path, so that keeping it costs calls nothing. The minute under way
//! is read from the counters at the moment it is asked for.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Mutex;

use prometheus::core::Collector;
use prometheus::HistogramVec;
use serde::Serialize;

/// Minutes kept per upstream.
pub const MINUTES: usize = 60;

/// One upstream's calls in one minute.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Minute {
    /// When the minute ended (ms since the epoch; the minute under way: now).
    pub at: i64,
    pub calls: u64,
    /// Calls that failed (a tool error, a timeout, an unavailable upstream, any other error).
    pub errors: u64,
    /// Mean duration, ms.
    pub mean_ms: f64,
    /// The upper bound of the histogram bucket that holds the 95th percentile, ms.
    pub p95_ms: Option<f64>,
}

/// Totals read from the histogram, per upstream.
#[derive(Debug, Clone, Default, PartialEq)]
struct Totals {
    calls: u64,
    errors: u64,
    seconds: f64,
    /// Cumulative count by upper bound in seconds (the bits of the f64, which order as the
    /// bounds do: they are positive).
    buckets: BTreeMap<u64, u64>,
}

impl Totals {
    fn minus(&self, before: &Totals, at: i64) -> Minute {
        let calls = self.calls.saturating_sub(before.calls);
        let seconds = (self.seconds - before.seconds).max(0.0);
        let p95 = (calls > 0).then(|| {
            let want = (calls as f64 * 0.95).ceil() as u64;
            self.buckets
                .iter()
                .find(|(le, now)| {
                    let then = before.buckets.get(*le).copied().unwrap_or(0);
                    now.saturating_sub(then) >= want
                })
                .map(|(le, _)| f64::from_bits(*le) * 1000.0)
        });
        Minute {
            at,
            calls,
            errors: self.errors.saturating_sub(before.errors),
            mean_ms: if calls > 0 {
                seconds * 1000.0 / calls as f64
            } else {
                0.0
            },
            p95_ms: p95.flatten().filter(|v| v.is_finite()),
        }
    }
}

/// The sampled minutes, and the totals at the last sample.
#[derive(Default)]
pub struct CallHistory {
    inner: Mutex<State>,
}

#[derive(Default)]
struct State {
    last: HashMap<String, Totals>,
    minutes: HashMap<String, VecDeque<Minute>>,
}

/// Per upstream, what the histogram has counted so far.
fn totals(calls: &HistogramVec) -> HashMap<String, Totals> {
    let mut out: HashMap<String, Totals> = HashMap::new();
    for family in calls.collect() {
        for m in family.get_metric() {
            let label = |name: &str| {
                m.get_label()
                    .iter()
                    .find(|l| l.name() == name)
                    .map(|l| l.value().to_string())
                    .unwrap_or_default()
            };
            let h = m.get_histogram();
            let t = out.entry(label("upstream")).or_default();
            t.calls += h.get_sample_count();
            t.seconds += h.get_sample_sum();
            if label("outcome") != "ok" {
                t.errors += h.get_sample_count();
            }
            // The same bounds for every series: added up bucket by bucket.
            for b in h.get_bucket() {
                *t.buckets.entry(b.upper_bound().to_bits()).or_default() += b.cumulative_count();
            }
        }
    }
    out
}

impl CallHistory {
    /// Closes a minute: what each upstream did since the last sample.
    pub fn sample(&self, calls: &HistogramVec, now: i64) {
        let current = totals(calls);
        let mut s = self.inner.lock().unwrap();
        for (upstream, t) in &current {
            let before = s.last.get(upstream).cloned().unwrap_or_default();
            let minute = t.minus(&before, now);
            let ring = s.minutes.entry(upstream.clone()).or_default();
            ring.push_back(minute);
            while ring.len() > MINUTES {
                ring.pop_front();
            }
        }
        s.last = current;
    }

    /// An upstream's sampled minutes, oldest first, and the minute under way.
    pub fn minutes(&self, upstream: &str, calls: &HistogramVec, now: i64) -> Vec<Minute> {
        let current = totals(calls).remove(upstream).unwrap_or_default();
        let s = self.inner.lock().unwrap();
        let mut out: Vec<Minute> = s
            .minutes
            .get(upstream)
            .map(|r| r.iter().cloned().collect())
            .unwrap_or_default();
        let before = s.last.get(upstream).cloned().unwrap_or_default();
        out.push(current.minus(&before, now));
        if out.len() > MINUTES {
            out.remove(0);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram() -> HistogramVec {
        HistogramVec::new(
            prometheus::HistogramOpts::new("h", "h").buckets(vec![0.01, 0.1, 1.0]),
            &["upstream", "method", "outcome"],
        )
        .unwrap()
    }

    #[test]
    fn each_minute_holds_what_happened_in_it() {
        let h = histogram();
        let history = CallHistory::default();
        for _ in 0..19 {
            h.with_label_values(&["a", "tools/call", "ok"])
                .observe(0.005);
        }
        h.with_label_values(&["a", "tools/call", "timeout"])
            .observe(0.5);
        history.sample(&h, 60_000);
        h.with_label_values(&["a", "tools/call", "ok"])
            .observe(0.05);
        let m = history.minutes("a", &h, 90_000);
        assert_eq!(m.len(), 2);
        assert_eq!((m[0].calls, m[0].errors, m[0].at), (20, 1, 60_000));
        assert!(
            (m[0].mean_ms - (19.0 * 5.0 + 500.0) / 20.0).abs() < 1e-6,
            "{m:?}"
        );
        assert_eq!(m[0].p95_ms, Some(10.0), "19 of 20 under 10 ms");
        assert_eq!(
            (m[1].calls, m[1].errors, m[1].at),
            (1, 0, 90_000),
            "the minute under way"
        );
        assert_eq!(m[1].p95_ms, Some(100.0));
        assert!(history
            .minutes("b", &h, 90_000)
            .iter()
            .all(|m| m.calls == 0));
    }

    #[test]
    fn an_hour_is_kept() {
        let h = histogram();
        let history = CallHistory::default();
        for i in 0..(MINUTES as i64 + 5) {
            h.with_label_values(&["a", "tools/call", "ok"])
                .observe(0.005);
            history.sample(&h, i * 60_000);
        }
        let m = history.minutes("a", &h, 0);
        assert_eq!(m.len(), MINUTES);
        assert!(m[..MINUTES - 1].iter().all(|m| m.calls == 1));
    }
}
