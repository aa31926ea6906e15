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

/// Share of the groups of interchangeable tools with at least one member in the first `k`
/// results: a step is served when any tool that can do it is offered.
pub fn group_recall_at(groups: &[Vec<String>], ranked: &[String], k: usize) -> f64 {
    if groups.is_empty() {
        return 0.0;
    }
    let top = &ranked[..ranked.len().min(k)];
    groups
        .iter()
        .filter(|g| g.iter().any(|t| top.contains(t)))
        .count() as f64
        / groups.len() as f64
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
    /// [`group_recall_at`]; equal to plain recall where every group is one tool.
    pub group_recall_at_5: f64,
    pub group_recall_at_10: f64,
    /// Group recall of the answer a search that names no k gets ([`Judged::answer`]), and that
    /// answer's mean size.
    pub group_recall_of_answer: f64,
    pub answer_size: f64,
}

/// One query's truth and answer.
#[derive(Debug, Clone, Default)]
pub struct Judged {
    pub relevant: Vec<String>,
    /// Interchangeable tools per step; empty means one group per relevant tool.
    pub groups: Vec<Vec<String>>,
    pub ranked: Vec<String>,
    /// The answer of a search that names no k (`split::answer_size`), when it is not the first
    /// 5 of `ranked` (a request of more steps).
    pub answer: Option<Vec<String>>,
}

impl Judged {
    /// The query's steps: its groups, or one group per relevant tool when it has none.
    pub fn groups(&self) -> Vec<Vec<String>> {
        if self.groups.is_empty() {
            self.relevant.iter().map(|r| vec![r.clone()]).collect()
        } else {
            self.groups.clone()
        }
    }
}

impl Summary {
    /// `results`: per query, the truth and the ranked answer (at least 10 long when the
    /// catalog allows).
    pub fn of<'a>(results: impl IntoIterator<Item = &'a Judged>) -> Self {
        let results: Vec<&Judged> = results.into_iter().collect();
        let n = results.len().max(1) as f64;
        let mean = |f: &dyn Fn(&Judged) -> f64| results.iter().map(|j| f(j)).sum::<f64>() / n;
        Summary {
            queries: results.len(),
            recall_at_1: mean(&|j| recall_at(&j.relevant, &j.ranked, 1)),
            recall_at_5: mean(&|j| recall_at(&j.relevant, &j.ranked, 5)),
            recall_at_10: mean(&|j| recall_at(&j.relevant, &j.ranked, 10)),
            ndcg_at_10: mean(&|j| ndcg_at(&j.relevant, &j.ranked, 10)),
            mrr: mean(&|j| reciprocal_rank(&j.relevant, &j.ranked)),
            group_recall_at_5: mean(&|j| group_recall_at(&j.groups(), &j.ranked, 5)),
            group_recall_at_10: mean(&|j| group_recall_at(&j.groups(), &j.ranked, 10)),
            group_recall_of_answer: mean(&|j| match &j.answer {
                Some(a) => group_recall_at(&j.groups(), a, a.len()),
                None => group_recall_at(&j.groups(), &j.ranked, 5),
            }),
            answer_size: mean(&|j| {
                j.answer.as_ref().map_or(j.ranked.len().min(5), Vec::len) as f64
            }),
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
        let judged = |relevant: Vec<String>, groups: Vec<Vec<String>>| Judged {
            relevant,
            groups,
            ranked: ranked.clone(),
            answer: None,
        };
        let s = Summary::of(&[judged(rel, vec![]), judged(v(&["q"]), vec![])]);
        assert_eq!(s.recall_at_5, 0.5);
        assert_eq!(s.group_recall_at_5, 0.5);
        assert_eq!(s.mrr, 0.25);
        // Two steps, the first served by either of two tools: one of them is enough.
        let steps = judged(v(&["a", "x", "y"]), vec![v(&["x", "a"]), v(&["y"])]);
        assert_eq!(group_recall_at(&steps.groups, &ranked, 5), 0.5);
        let s = Summary::of([&steps]);
        assert!((s.recall_at_5 - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(s.group_recall_at_5, 0.5);
        assert_eq!((s.group_recall_of_answer, s.answer_size), (0.5, 3.0));
        // A longer answer, for a request of more steps, is judged as a whole.
        let longer = Judged {
            answer: Some(v(&["a", "b", "c", "d", "e", "f", "y"])),
            ..steps
        };
        let s = Summary::of([&longer]);
        assert_eq!(s.group_recall_at_5, 0.5);
        assert_eq!((s.group_recall_of_answer, s.answer_size), (1.0, 7.0));
    }
}
