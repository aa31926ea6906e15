//! Whether searches find what hosts then call: the tool a session calls right after a search is
//! a hit when the search returned it. The (query, tool called) pairs are kept, newest last, for
//! export in the routing evaluation's query format.

use std::collections::VecDeque;
use std::sync::Mutex;

use serde::Serialize;

/// A session's latest search, waiting for the call that follows it.
#[derive(Debug, Clone)]
pub struct LastSearch {
    pub query: String,
    /// Exposed names, best first.
    pub results: Vec<String>,
}

/// Per-session routing state.
#[derive(Debug, Default)]
pub struct SessionRouting {
    /// Tools this session's searches found (exposed names, most recent first): an `auto`
    /// session lists them.
    pub found: Mutex<Vec<String>>,
    pub last_search: Mutex<Option<LastSearch>>,
}

impl SessionRouting {
    /// Adds a search's results to the found tools, keeping at most `keep`; whether the set
    /// changed.
    pub fn remember(&self, search: LastSearch, keep: usize) -> bool {
        let mut found = self.found.lock().unwrap();
        let before = found.clone();
        let mut next: Vec<String> = search.results.clone();
        for f in found.iter() {
            if !next.contains(f) {
                next.push(f.clone());
            }
        }
        next.truncate(keep);
        *found = next;
        *self.last_search.lock().unwrap() = Some(search);
        let mut a = before;
        let mut b = found.clone();
        a.sort();
        b.sort();
        a != b
    }
}

/// One exported pair, in the shape of the evaluation set's queries (`relevant` names the tool
/// called; `found` says whether the search had returned it).
#[derive(Debug, Clone, Serialize)]
pub struct Pair {
    pub id: String,
    pub query: String,
    pub relevant: Vec<PairTool>,
    pub found: bool,
    /// Where in the results it was (1-based).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank: Option<usize>,
    pub at: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct PairTool {
    pub server: String,
    pub name: String,
}

pub struct Feedback {
    pairs: Mutex<VecDeque<Pair>>,
    cap: usize,
}

impl Feedback {
    pub fn new(cap: usize) -> Self {
        Self {
            pairs: Mutex::new(VecDeque::new()),
            cap,
        }
    }

    /// Records the call that followed a search; returns its rank among the results (None: a
    /// miss).
    pub fn record(
        &self,
        search: &LastSearch,
        exposed: &str,
        upstream: &str,
        tool: &str,
    ) -> Option<usize> {
        let rank = search
            .results
            .iter()
            .position(|r| r == exposed)
            .map(|i| i + 1);
        if self.cap > 0 {
            let at = registry::now_ms();
            let mut pairs = self.pairs.lock().unwrap();
            if pairs.len() == self.cap {
                pairs.pop_front();
            }
            let id = format!("gw-{at}-{}", pairs.len());
            pairs.push_back(Pair {
                id,
                query: search.query.clone(),
                relevant: vec![PairTool {
                    server: upstream.into(),
                    name: tool.into(),
                }],
                found: rank.is_some(),
                rank,
                at,
            });
        }
        rank
    }

    pub fn pairs(&self) -> Vec<Pair> {
        self.pairs.lock().unwrap().iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn found_tools_keep_the_newest_and_pairs_are_bounded() {
        let s = SessionRouting::default();
        let search = |q: &str, r: &[&str]| LastSearch {
            query: q.into(),
            results: r.iter().map(|x| x.to_string()).collect(),
        };
        assert!(s.remember(search("a", &["x", "y"]), 3));
        assert!(!s.remember(search("a", &["y", "x"]), 3));
        assert!(s.remember(search("b", &["z", "w"]), 3));
        assert_eq!(*s.found.lock().unwrap(), ["z", "w", "y"]);
        let f = Feedback::new(2);
        let last = search("read a file", &["fs__read", "fs__write"]);
        assert_eq!(f.record(&last, "fs__write", "fs", "write"), Some(2));
        assert_eq!(f.record(&last, "git__log", "git", "log"), None);
        f.record(&last, "fs__read", "fs", "read");
        let p = f.pairs();
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].relevant[0].name, "log");
        assert!(!p[0].found);
    }
}
