//! Approximate nearest neighbours over unit vectors (`hnsw_rs`, dot-product distance).
//! Vectors are kept as 16-bit fixed-point numbers (a unit vector's components lie in [-1, 1]):
//! 768 bytes a tool instead of 1,536, as precise as half-precision floats were, and a distance is
//! an integer dot product the compiler vectorises on any x86-64 — about ten times faster than
//! widening half-precision floats first (docs/benchmarks.md, "Fixed-point vectors").
//!
//! hnsw_rs graphs only grow, so a removed or replaced vector is a tombstone that searches skip;
//! when tombstones pass a quarter of the graph it is rebuilt from the live vectors (amortised:
//! each rebuild follows at least `len/4` removals).

use std::collections::HashMap;
use std::sync::Arc;

use hnsw_rs::hnsw::Point;
use hnsw_rs::prelude::{Distance, Hnsw};

/// Neighbours kept per node and candidates explored while building. Chosen by measurement
/// (docs/benchmarks.md): 24/200 took 3.5 ms per top-10 search and 26 s to build at 10k tools,
/// 12/64 0.7 ms and 5.7 s with the exact top-10 on clustered vectors; 8/64 was faster but found
/// only 39% of the exact top-10 at 100k tools (12/64: 68%).
const MAX_CONNECTIONS: usize = 12;
const EF_CONSTRUCTION: usize = 64;
const MAX_LAYERS: usize = 16;
/// Up to this many vectors an exact scan is as fast as the graph walk, and exact.
const EXACT_BELOW: usize = 1024;

/// A unit vector's component `x` is stored as `round(x · SCALE)`.
const SCALE: f32 = i16::MAX as f32;

/// A vector in the graph's fixed point, scaled down first if it is longer than one (rounding
/// can make it so), so that no component saturates and no dot product's sum overflows.
fn fixed(v: &[f32]) -> Vec<i16> {
    let norm = dot(v, v).sqrt().max(1.0);
    v.iter()
        .map(|x| (x / norm * SCALE).round() as i16)
        .collect()
}

/// `1 - a·b` for unit vectors, clamped at 0. (hnsw_rs's own `DistDot` asserts that the dot
/// product of two unit vectors never exceeds 1, which rounding breaks: a search would panic.)
#[derive(Clone, Copy, Default)]
pub struct UnitDot;

impl Distance<i16> for UnitDot {
    fn eval(&self, a: &[i16], b: &[i16]) -> f32 {
        (1.0 - dot_fixed(a, b)).max(0.0)
    }
}

/// The dot product of two fixed-point vectors. Integer partial sums, which the compiler turns
/// into SIMD multiply-adds; for vectors no longer than one each sum stays below `SCALE²` (the
/// Cauchy–Schwarz bound), so it cannot overflow.
fn dot_fixed(a: &[i16], b: &[i16]) -> f32 {
    const LANES: usize = 16;
    let mut acc = [0i32; LANES];
    let (ca, cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let tail: i32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| i32::from(*x) * i32::from(*y))
        .sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..LANES {
            acc[i] += i32::from(x[i]) * i32::from(y[i]);
        }
    }
    (acc.iter().sum::<i32>() + tail) as f32 / (SCALE * SCALE)
}

pub struct Ann {
    graph: Hnsw<'static, i16, UnitDot>,
    /// The graph point that holds each live document's vector. The vectors themselves live in
    /// the graph only (a second copy here was 1.5 KB a tool).
    live: HashMap<u32, usize>,
    /// Graph point → document id, for every point (live or tombstone).
    point_doc: Vec<Option<u32>>,
    dim: usize,
}

fn new_graph(capacity: usize) -> Hnsw<'static, i16, UnitDot> {
    Hnsw::new(
        MAX_CONNECTIONS,
        capacity.max(1024),
        MAX_LAYERS,
        EF_CONSTRUCTION,
        UnitDot,
    )
}

impl Ann {
    pub fn new(dim: usize) -> Self {
        Self {
            graph: new_graph(0),
            live: HashMap::new(),
            point_doc: Vec::new(),
            dim,
        }
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    pub fn len(&self) -> usize {
        self.live.len()
    }

    pub fn contains(&self, id: u32) -> bool {
        self.live.contains_key(&id)
    }

    /// Adds or replaces a document's vector (`vector` must be unit length and `dim` long).
    pub fn upsert(&mut self, id: u32, vector: Vec<f32>) {
        debug_assert_eq!(vector.len(), self.dim);
        if let Some(point) = self.live.remove(&id) {
            self.point_doc[point] = None;
        }
        let point = self.point_doc.len();
        self.graph.insert_slice((&fixed(&vector), point));
        self.point_doc.push(Some(id));
        self.live.insert(id, point);
        self.maybe_compact();
    }

    pub fn remove(&mut self, id: u32) {
        if let Some(point) = self.live.remove(&id) {
            self.point_doc[point] = None;
            self.maybe_compact();
        }
    }

    fn maybe_compact(&mut self) {
        let dead = self.point_doc.len() - self.live.len();
        if dead > 64 && dead * 4 > self.point_doc.len() {
            self.rebuild();
        }
    }

    /// Every live document with the graph point that holds its vector.
    fn live_points(&self) -> impl Iterator<Item = (u32, Arc<Point<'static, i16>>)> + '_ {
        // hnsw_rs's point iterator unwraps the entry point: an empty graph has none.
        (!self.point_doc.is_empty())
            .then(|| self.graph.get_point_indexation().into_iter())
            .into_iter()
            .flatten()
            .filter_map(|p| Some((self.point_doc[p.get_origin_id()]?, p)))
    }

    /// Rebuilds the graph from the live vectors only.
    pub fn rebuild(&mut self) {
        let mut points: Vec<_> = self.live_points().collect();
        points.sort_unstable_by_key(|(id, _)| *id);
        let graph = new_graph(points.len());
        let batch: Vec<(&[i16], usize)> = points
            .iter()
            .enumerate()
            .map(|(point, (_, p))| (p.get_v(), point))
            .collect();
        graph.parallel_insert_slice(&batch);
        self.live = points
            .iter()
            .enumerate()
            .map(|(point, (id, _))| (*id, point))
            .collect();
        self.point_doc = points.iter().map(|(id, _)| Some(*id)).collect();
        self.graph = graph;
    }

    /// The `k` nearest live documents that `allow` accepts, nearest first, with cosine
    /// similarity. The filter applies inside the graph walk; if it leaves the walk short (a very
    /// selective filter), the allowed documents are scanned exactly instead.
    pub fn search(&self, query: &[f32], k: usize, allow: &dyn Fn(u32) -> bool) -> Vec<(u32, f32)> {
        if self.live.is_empty() || k == 0 {
            return Vec::new();
        }
        if self.live.len() <= EXACT_BELOW {
            return self.exact(query, k, allow);
        }
        let filter = |point: &usize| self.point_doc[*point].is_some_and(allow);
        let ef = k.max(32);
        let query = fixed(query);
        let found = self.graph.search_filter(&query, k, ef, Some(&filter));
        let mut out: Vec<(u32, f32)> = found
            .iter()
            .filter_map(|n| self.point_doc[n.d_id].map(|id| (id, 1.0 - n.distance)))
            .collect();
        if out.len() < k && out.len() < self.live.len() {
            out = self.exact_fixed(&query, k, allow);
        }
        out
    }

    /// Every allowed live vector compared with the query.
    pub fn exact(&self, query: &[f32], k: usize, allow: &dyn Fn(u32) -> bool) -> Vec<(u32, f32)> {
        self.exact_fixed(&fixed(query), k, allow)
    }

    /// [`Ann::exact`] for a query already in the graph's fixed point.
    fn exact_fixed(&self, query: &[i16], k: usize, allow: &dyn Fn(u32) -> bool) -> Vec<(u32, f32)> {
        let mut all: Vec<(u32, f32)> = self
            .live_points()
            .filter(|(id, _)| allow(*id))
            .map(|(id, p)| (id, dot_fixed(query, p.get_v())))
            .collect();
        all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        all.truncate(k);
        all
    }
}

/// Dot product with independent partial sums, which the compiler turns into SIMD; a plain
/// `zip().sum()` is one dependent chain of additions and was 8× slower at 384 dimensions
/// (docs/benchmarks.md).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    const LANES: usize = 16;
    let mut acc = [0.0f32; LANES];
    let (ca, cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..LANES {
            acc[i] += x[i] * y[i];
        }
    }
    acc.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(seed: u32, dim: usize) -> Vec<f32> {
        // Deterministic pseudo-random vectors.
        let mut x = seed.wrapping_mul(2654435761).wrapping_add(1);
        let mut v: Vec<f32> = (0..dim)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                (x % 2000) as f32 / 1000.0 - 1.0
            })
            .collect();
        let n = dot(&v, &v).sqrt();
        v.iter_mut().for_each(|c| *c /= n);
        v
    }

    #[test]
    fn finds_itself_skips_removed_and_honours_the_filter() {
        // More than EXACT_BELOW vectors: the graph walk answers.
        let mut a = Ann::new(32);
        for id in 0..1500 {
            a.upsert(id, unit(id, 32));
        }
        let all = |_: u32| true;
        let itself = a.search(&unit(7, 32), 1, &all)[0];
        assert_eq!(itself.0, 7);
        assert!(
            (itself.1 - 1.0).abs() < 1e-3,
            "fixed-point score {}",
            itself.1
        );
        a.remove(7);
        assert!(a
            .search(&unit(7, 32), 10, &all)
            .iter()
            .all(|(id, _)| *id != 7));
        let odd = |id: u32| id % 2 == 1;
        let hits = a.search(&unit(9, 32), 5, &odd);
        assert_eq!(hits.len(), 5);
        assert_eq!(hits[0].0, 9);
        assert!(hits.iter().all(|(id, _)| id % 2 == 1));
        // A filter that leaves two documents still finds both.
        let two = |id: u32| id == 3 || id == 400;
        let mut ids: Vec<u32> = a
            .search(&unit(1, 32), 5, &two)
            .iter()
            .map(|h| h.0)
            .collect();
        ids.sort();
        assert_eq!(ids, [3, 400]);
    }

    #[test]
    fn scores_from_fixed_point_match_single_precision() {
        let dim = 384;
        let mut a = Ann::new(dim);
        // The graph walk over fixed-point vectors is `finds_itself_…`'s; here the scores.
        let docs: Vec<Vec<f32>> = (0..200).map(|id| unit(id, dim)).collect();
        for (id, v) in docs.iter().enumerate() {
            a.upsert(id as u32, v.clone());
        }
        for q in [3u32, 100, 199] {
            let query = unit(q, dim);
            let hits = a.exact(&query, 5, &|_| true);
            assert_eq!(hits[0].0, q);
            for (id, score) in &hits {
                let exact = dot(&query, &docs[*id as usize]);
                assert!((score - exact).abs() < 2e-3, "{id}: {score} vs {exact}");
            }
        }
    }

    #[test]
    fn a_vector_longer_than_one_neither_saturates_nor_overflows() {
        // Every component at 1: each would saturate, and the sums overflow, unscaled.
        let dim = 384;
        let mut a = Ann::new(dim);
        a.upsert(1, vec![1.0; dim]);
        a.upsert(2, unit(2, dim));
        let hits = a.exact(&vec![1.0; dim], 2, &|_| true);
        assert_eq!(hits[0].0, 1);
        assert!((hits[0].1 - 1.0).abs() < 1e-3, "{}", hits[0].1);
    }

    #[test]
    fn many_removals_rebuild_the_graph_and_keep_answers() {
        let mut a = Ann::new(16);
        for id in 0..2400 {
            a.upsert(id, unit(id, 16));
        }
        for id in 0..900 {
            a.remove(id);
        }
        assert!(a.point_doc.len() < 2400, "the graph was rebuilt");
        assert_eq!(a.len(), 1500);
        assert_eq!(a.search(&unit(2350, 16), 1, &|_| true)[0].0, 2350);
        assert!(a
            .search(&unit(5, 16), 10, &|_| true)
            .iter()
            .all(|(id, _)| *id >= 900));
    }

    #[test]
    fn a_graph_emptied_by_removals_answers_nothing_and_takes_new_vectors() {
        let mut a = Ann::new(16);
        for id in 0..300 {
            a.upsert(id, unit(id, 16));
        }
        for id in 0..300 {
            a.remove(id);
        }
        assert_eq!(a.len(), 0);
        assert!(a.search(&unit(1, 16), 5, &|_| true).is_empty());
        assert!(a.exact(&unit(1, 16), 5, &|_| true).is_empty());
        a.upsert(1000, unit(1000, 16));
        a.upsert(1001, unit(1001, 16));
        let hits = a.exact(&unit(1001, 16), 5, &|_| true);
        assert_eq!(hits.len(), 2);
        assert_eq!(hits[0].0, 1001);
    }
}
