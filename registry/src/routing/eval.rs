//! Retrieval quality measures for the routing evaluation (binary relevance).

use serde::Serialize;

/// Share of the relevant tools found in the first `k` results.
pub fn recall_at(relevant: &[String], ranked: &[String], k: usize) -> f64 {
    if relevant.is_empty() {
        return 0.0;
    }
    let top = &ranked[..ranked.len().min(k)];
    relevant.iter().filter(|r| top.contains(r)).count() as f64 / relevant.len() as f64
}

/// Normalised discounted cumulative gain of the first `k` results.
pub fn ndcg_at(relevant: &[String], ranked: &[String], k: usize) -> f64 {
    let gain = |i: usize| 1.0 / ((i + 2) as f64).log2();
    let dcg: f64 = ranked
        .iter()
        .take(k)
        .enumerate()
        .filter(|(_, r)| relevant.contains(r))
        .map(|(i, _)| gain(i))
        .sum();
    let ideal: f64 = (0..relevant.len().min(k)).map(gain).sum();
    if ideal == 0.0 {
        0.0
    } else {
        dcg / ideal
    }
}

/// 1 / rank of the first relevant result (0 when none is in the list).
pub fn reciprocal_rank(relevant: &[String], ranked: &[String]) -> f64 {
    ranked
        .iter()
        .position(|r| relevant.contains(r))
        .map_or(0.0, |i| 1.0 / (i + 1) as f64)
}

/// Means over a query set.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Summary {
    pub queries: usize,
    pub recall_at_1: f64,
    pub recall_at_5: f64,
    pub recall_at_10: f64,
    pub ndcg_at_10: f64,
    pub mrr: f64,
}

impl Summary {
    /// `results`: per query, the relevant tools and the ranked answer (at least 10 long when
    /// the catalog allows).
    pub fn of(results: &[(Vec<String>, Vec<String>)]) -> Self {
        let n = results.len().max(1) as f64;
        let mean = |f: &dyn Fn(&[String], &[String]) -> f64| {
            results
                .iter()
                .map(|(rel, ranked)| f(rel, ranked))
                .sum::<f64>()
                / n
        };
        Summary {
            queries: results.len(),
            recall_at_1: mean(&|r, x| recall_at(r, x, 1)),
            recall_at_5: mean(&|r, x| recall_at(r, x, 5)),
            recall_at_10: mean(&|r, x| recall_at(r, x, 10)),
            ndcg_at_10: mean(&|r, x| ndcg_at(r, x, 10)),
            mrr: mean(&|r, x| reciprocal_rank(r, x)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn measures_match_hand_computed_values() {
        let rel = v(&["b"]);
        let ranked = v(&["a", "b", "c"]);
        assert_eq!(recall_at(&rel, &ranked, 1), 0.0);
        assert_eq!(recall_at(&rel, &ranked, 5), 1.0);
        assert_eq!(reciprocal_rank(&rel, &ranked), 0.5);
        assert!((ndcg_at(&rel, &ranked, 10) - 1.0 / 3f64.log2()).abs() < 1e-12);
        let two = v(&["a", "z"]);
        assert_eq!(recall_at(&two, &ranked, 10), 0.5);
        let s = Summary::of(&[(rel, ranked.clone()), (v(&["q"]), ranked)]);
        assert_eq!(s.recall_at_5, 0.5);
        assert_eq!(s.mrr, 0.25);
    }
}
