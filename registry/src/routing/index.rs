//! The hybrid tool index: BM25 for exact words and approximate nearest neighbours for meaning,
//! fused by weighted reciprocal rank. Tools are added, changed and removed one at a time; a
//! tool is searchable lexically at once and semantically once its vector arrives.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use super::action::{step_action, tool_action, Action};
use super::ann::Ann;
use super::lexical::Lexical;
use super::named::UpstreamNames;
use super::query::lexical_reading;

/// One tool as the index knows it.
#[derive(Debug, Clone)]
pub struct ToolDoc {
    pub upstream: String,
    /// The upstream's own name of the tool.
    pub name: String,
    /// What BM25 indexes.
    pub text: String,
    /// What the model embeds.
    pub gist: String,
    /// [`super::text_hash`] of `gist`: the key of its stored embedding.
    pub hash: String,
}

/// Which rankings a search uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    Hybrid,
    Semantic,
    Lexical,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Hybrid => "hybrid",
            Method::Semantic => "semantic",
            Method::Lexical => "lexical",
        }
    }
}

/// How the two rankings are combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FusionMethod {
    /// Weighted sum of scores normalised per search (cosine and BM25 each divided by the best
    /// of its ranking): keeps how far apart the candidates are.
    Score,
    /// Weighted reciprocal rank fusion: `weight / (rrf_k + rank)` summed; only ranks count.
    Rrf,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Fusion {
    pub method: FusionMethod,
    pub semantic_weight: f32,
    /// BM25's weight in a request split into steps: for the whole request and each step.
    pub lexical_weight: f32,
    /// BM25's weight in a request of one need (not split into steps): the model reads one
    /// need's sentence better than its shared words do, while a step's few words and the
    /// providers they name need BM25 (docs/routing.md, "One need, less BM25").
    pub single_need_lexical_weight: f32,
    pub rrf_k: f32,
    /// In a request split into steps, what a step's candidate gains for belonging to an
    /// upstream the rest of the request chose (the whole request's first tool, each other
    /// step's first tool), on the scale of the step's own best score (1), when it fits the step
    /// nearly as well as the step's best ([`STEP_CLOSENESS`]); when the step's best is
    /// already of such an upstream, what its other candidates of no chosen upstream lose. 0:
    /// each step stands alone.
    pub provider_weight: f32,
    /// In a request split into steps, what a step's candidate loses when it does another kind
    /// of action than the step asks for (read, create, change, delete, send, start, stop; both
    /// known), on the scale of the step's best score (1). 0: actions are not compared.
    pub action_weight: f32,
}

impl Default for Fusion {
    fn default() -> Self {
        Self {
            method: FusionMethod::Score,
            semantic_weight: 1.0,
            lexical_weight: 0.5,
            single_need_lexical_weight: 0.35,
            rrf_k: 60.0,
            provider_weight: 0.2,
            action_weight: 0.2,
        }
    }
}

/// A step's candidate may gain from its upstream ([`Fusion::provider_weight`]) or escape the
/// action cut ([`Fusion::action_weight`]) only if its similarity to the step is at least this
/// share of the step's best: the request's provider and the step's verb break near-ties of
/// meaning; shared words alone ("add the numbers" and `add_observations`) do not earn it.
const STEP_CLOSENESS: f32 = 0.7;

/// The similarity a step's candidate needs to fit the step nearly as well as its best
/// ([`STEP_CLOSENESS`]).
fn closeness_floor(hits: &[Hit]) -> f32 {
    let best = hits.iter().filter_map(|h| h.similarity).fold(0.0, f32::max);
    STEP_CLOSENESS * best
}

/// How many of a step's candidates the provider evidence may reorder: the same for every k up to
/// ten, so that an answer of five is the first five of an answer of ten.
const STEP_CANDIDATES: usize = 10;

/// The fused contribution of each candidate of one ranking, in its order.
fn contributions(list: &[(u32, f32)], weight: f32, fusion: &Fusion) -> Vec<f32> {
    match fusion.method {
        FusionMethod::Rrf => (0..list.len())
            .map(|rank| weight / (fusion.rrf_k + rank as f32 + 1.0))
            .collect(),
        FusionMethod::Score => {
            // Each score over the best of its ranking: what a candidate gets does not depend on
            // how many candidates were fetched (min–max over the candidates did).
            let max = list.iter().map(|x| x.1).fold(f32::MIN, f32::max);
            let max = max.max(f32::EPSILON);
            list.iter().map(|x| weight * x.1 / max).collect()
        }
    }
}

/// A found tool.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub upstream: String,
    pub name: String,
    /// Fused score (hybrid), cosine similarity (semantic) or BM25 score (lexical).
    pub score: f32,
    /// Cosine similarity to the query, when the semantic ranking returned the tool: unlike the
    /// fused score it means the same in every search (the "nothing fits" threshold uses it).
    pub similarity: Option<f32>,
    pub semantic_rank: Option<usize>,
    pub lexical_rank: Option<usize>,
    /// Which step of a split request found the tool ([`ToolIndex::search_steps`]); `None`:
    /// the whole request.
    pub step: Option<usize>,
}

#[derive(Default)]
pub struct ToolIndex {
    ids: HashMap<(String, String), u32>,
    /// By id (ids are handed out in order and never reused: a slot lookup is what a filtered
    /// graph walk does for every node it visits, so no hashing).
    /// Stored without `text` (BM25 holds its terms; `text_hashes` tells a changed text) and,
    /// once the vector is in, without `gist`: together ~1 KB a tool that nothing reads again.
    docs: Vec<Option<ToolDoc>>,
    text_hashes: Vec<u64>,
    /// By id: what each tool does ([`tool_action`]), read from its text when it comes in.
    actions: Vec<Option<Action>>,
    count: usize,
    lexical: Lexical,
    ann: Option<Ann>,
    /// The words that name an upstream ([`UpstreamNames`]), read from the catalog when a split
    /// request first asks after a change.
    names: OnceLock<UpstreamNames>,
}

impl ToolIndex {
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Tools with a vector.
    pub fn embedded(&self) -> usize {
        self.ann.as_ref().map_or(0, Ann::len)
    }

    fn doc(&self, id: u32) -> Option<&ToolDoc> {
        self.docs.get(id as usize).and_then(Option::as_ref)
    }

    /// Adds a tool or replaces its text; a changed text drops its old vector. Returns whether
    /// anything changed.
    pub fn upsert(&mut self, mut doc: ToolDoc) -> bool {
        let key = (doc.upstream.clone(), doc.name.clone());
        let text_hash = hash_of(&doc.text);
        if let Some(&id) = self.ids.get(&key) {
            let old = self.doc(id).expect("indexed id");
            if old.hash == doc.hash && self.text_hashes[id as usize] == text_hash {
                return false;
            }
            if old.hash != doc.hash {
                if let Some(ann) = &mut self.ann {
                    ann.remove(id);
                }
            } else if self.ann.as_ref().is_some_and(|a| a.contains(id)) {
                // Same embedded text, vector still valid: the gist is not needed again.
                doc.gist = String::new();
            }
            self.lexical.upsert(id, &doc.text);
            self.names = OnceLock::new();
            self.actions[id as usize] = tool_action(&doc.text);
            doc.text = String::new();
            self.text_hashes[id as usize] = text_hash;
            self.docs[id as usize] = Some(doc);
            return true;
        }
        let id = self.docs.len() as u32;
        self.lexical.upsert(id, &doc.text);
        self.names = OnceLock::new();
        self.actions.push(tool_action(&doc.text));
        doc.text = String::new();
        self.ids.insert(key, id);
        self.docs.push(Some(doc));
        self.text_hashes.push(text_hash);
        self.count += 1;
        true
    }

    /// Sets the vector of a tool whose text has `hash` (ignored if the tool changed meanwhile).
    pub fn set_vector(&mut self, upstream: &str, name: &str, hash: &str, vector: Vec<f32>) {
        let Some(&id) = self.ids.get(&(upstream.to_string(), name.to_string())) else {
            return;
        };
        if self.doc(id).is_none_or(|d| d.hash != hash) {
            return;
        }
        let ann = self.ann.get_or_insert_with(|| Ann::new(vector.len()));
        if ann.dim() == vector.len() {
            ann.upsert(id, vector);
            if let Some(doc) = self.docs[id as usize].as_mut() {
                doc.gist = String::new();
            }
        }
    }

    pub fn remove(&mut self, upstream: &str, name: &str) -> bool {
        let Some(id) = self.ids.remove(&(upstream.to_string(), name.to_string())) else {
            return false;
        };
        self.docs[id as usize] = None;
        self.count -= 1;
        self.lexical.remove(id);
        self.names = OnceLock::new();
        if let Some(ann) = &mut self.ann {
            ann.remove(id);
        }
        true
    }

    /// The `k` nearest tools by an exact scan (no graph): the reference for the graph's recall.
    pub fn nearest_exact(&self, query_vector: &[f32], k: usize) -> Vec<(String, String)> {
        let Some(ann) = &self.ann else {
            return Vec::new();
        };
        ann.exact(query_vector, k, &|id| self.doc(id).is_some())
            .into_iter()
            .filter_map(|(id, _)| self.doc(id).map(|d| (d.upstream.clone(), d.name.clone())))
            .collect()
    }

    /// The text hashes of the tools that have a vector (one each, as stored).
    pub fn vector_hashes(&self) -> Vec<String> {
        let Some(ann) = &self.ann else {
            return Vec::new();
        };
        let hashes: std::collections::HashSet<&str> = self
            .docs
            .iter()
            .enumerate()
            .filter(|(id, _)| ann.contains(*id as u32))
            .filter_map(|(_, d)| Some(d.as_ref()?.hash.as_str()))
            .collect();
        hashes.into_iter().map(str::to_string).collect()
    }

    /// Tools that have no vector yet.
    pub fn missing_vectors(&self) -> Vec<ToolDoc> {
        self.docs
            .iter()
            .enumerate()
            .filter_map(|(id, d)| Some((id as u32, d.as_ref()?)))
            .filter(|(id, _)| !self.ann.as_ref().is_some_and(|a| a.contains(*id)))
            .map(|(_, d)| d.clone())
            .collect()
    }

    /// The best `k` tools that `allow` accepts. Semantic ranking needs `query_vector`; without
    /// one a hybrid search is lexical only.
    pub fn search(
        &self,
        query: &str,
        query_vector: Option<&[f32]>,
        k: usize,
        method: Method,
        fusion: &Fusion,
        allow: &dyn Fn(&ToolDoc) -> bool,
    ) -> Vec<Hit> {
        self.ranked(
            (method, fusion, false, false),
            query,
            query_vector,
            allow,
            k,
        )
    }

    /// [`ToolIndex::search`]; `exact`: the semantic ranking compares the query with every
    /// allowed vector instead of walking the graph (for a filter that allows a few tools, which
    /// a graph walk would first look for among all); `one_need`: the query is a whole request
    /// of one need, whose BM25 weighs [`Fusion::single_need_lexical_weight`] unless a reading
    /// put it in the tools' own words (told by the same reading that makes its BM25 query).
    fn ranked(
        &self,
        (method, fusion, exact, one_need): (Method, &Fusion, bool, bool),
        query: &str,
        query_vector: Option<&[f32]>,
        allow: &dyn Fn(&ToolDoc) -> bool,
        k: usize,
    ) -> Vec<Hit> {
        if k == 0 {
            return Vec::new();
        }
        let allowed = |id: u32| self.doc(id).is_some_and(allow);
        // Each ranking contributes more candidates than asked for, so that fusion can promote a
        // tool that only one of them ranks highly.
        let depth = match method {
            Method::Hybrid => (k * 5).max(50),
            _ => k,
        };
        let semantic: Vec<(u32, f32)> = match (method, query_vector, &self.ann) {
            (Method::Semantic | Method::Hybrid, Some(q), Some(ann)) if q.len() == ann.dim() => {
                if exact {
                    ann.exact(q, depth, &allowed)
                } else {
                    ann.search(q, depth, &allowed)
                }
            }
            _ => Vec::new(),
        };
        let (lexical, lexical_weight) = match method {
            Method::Lexical | Method::Hybrid => {
                let (texts, tools_words) = lexical_reading(query);
                let weight = if one_need && !tools_words {
                    fusion.single_need_lexical_weight
                } else {
                    fusion.lexical_weight
                };
                let found = self.lexical.search_weighted(&texts, depth, &allowed);
                (found, weight)
            }
            Method::Semantic => (Vec::new(), fusion.lexical_weight),
        };
        let mut scored: HashMap<u32, Hit> = HashMap::new();
        let mut add = |list: &[(u32, f32)], semantic: bool| {
            let weight = if semantic {
                fusion.semantic_weight
            } else {
                lexical_weight
            };
            let fused = contributions(list, weight, fusion);
            for (rank, (id, raw)) in list.iter().enumerate() {
                let doc = self.doc(*id).expect("indexed id");
                let hit = scored.entry(*id).or_insert_with(|| Hit {
                    upstream: doc.upstream.clone(),
                    name: doc.name.clone(),
                    score: 0.0,
                    similarity: None,
                    semantic_rank: None,
                    lexical_rank: None,
                    step: None,
                });
                let slot = if semantic {
                    &mut hit.semantic_rank
                } else {
                    &mut hit.lexical_rank
                };
                *slot = Some(rank + 1);
                if semantic {
                    hit.similarity = Some(*raw);
                }
                hit.score += match method {
                    Method::Hybrid => fused[rank],
                    _ => *raw,
                };
            }
        };
        add(&semantic, true);
        add(&lexical, false);
        let mut hits: Vec<Hit> = scored.into_values().collect();
        hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(
                    a.semantic_rank
                        .unwrap_or(usize::MAX)
                        .cmp(&b.semantic_rank.unwrap_or(usize::MAX)),
                )
                .then_with(|| (&a.upstream, &a.name).cmp(&(&b.upstream, &b.name)))
        });
        hits.truncate(k);
        hits
    }

    /// The best `k` tools for a request split into steps (`steps`: each step's text and
    /// vector): the whole request and every step are searched, and their rankings taken in
    /// turn — the first of each, then the second of each — so that every step has its best tools
    /// near the top however many words the others have. A tool keeps the first place it earns
    /// (and the step that earned it). A request of fewer than two steps is one need, searched
    /// whole with [`Fusion::single_need_lexical_weight`] unless a reading put it in the tools'
    /// words.
    ///
    /// A step is ranked with the rest of the request in mind ([`Fusion::provider_weight`]):
    /// "…, then retrieve its details" names no provider, and alone it finds another product's
    /// `get_details`; the upstream the other steps chose has the one it means. A step that
    /// names an upstream ([`UpstreamNames`]: "query our Memgraph database …") gets that
    /// upstream's tool that fits it best first, when it fits nearly as well as the step's best.
    #[allow(clippy::too_many_arguments)]
    pub fn search_steps(
        &self,
        query: &str,
        query_vector: Option<&[f32]>,
        steps: &[(String, Option<Vec<f32>>)],
        k: usize,
        method: Method,
        fusion: &Fusion,
        allow: &dyn Fn(&ToolDoc) -> bool,
    ) -> Vec<Hit> {
        if steps.len() < 2 {
            return self.ranked((method, fusion, false, true), query, query_vector, allow, k);
        }
        let whole = self.search(query, query_vector, k, method, fusion, allow);
        let mut parts = self.step_rankings(whole.first(), steps, k, method, fusion, allow);
        // Within a round, the steps whose best tool fits best come first: a sentence of
        // context ("I'm researching OSMO") fits no tool well and should not take a slot first.
        // Measured on ETOM level 4: group recall@5 0.509 in request order, 0.540 in this one.
        let fit = |l: &Vec<Hit>| l.first().and_then(|h| h.similarity).unwrap_or(0.0);
        parts.sort_by(|a, b| fit(b).total_cmp(&fit(a)));

        let mut lists = vec![whole];
        lists.extend(parts);
        let mut out: Vec<Hit> = Vec::with_capacity(k);
        // The round each tool of `out` was placed in.
        let mut placed: Vec<usize> = Vec::with_capacity(k);
        for rank in 0..k {
            for list in &lists {
                let Some(hit) = list.get(rank) else { continue };
                let seen = out
                    .iter()
                    .position(|h| h.upstream == hit.upstream && h.name == hit.name);
                match seen {
                    // Found again: it fits the text that fits it best this well. A tool the
                    // whole request placed in this round serves the step that ranks it as high
                    // (the answer says which step each tool serves; the whole request is none).
                    Some(i) => {
                        let h = &mut out[i];
                        h.similarity = match (h.similarity, hit.similarity) {
                            (Some(a), Some(b)) => Some(a.max(b)),
                            (a, b) => a.or(b),
                        };
                        if placed[i] == rank {
                            h.step = h.step.or(hit.step);
                        }
                    }
                    None if out.len() < k => {
                        out.push(hit.clone());
                        placed.push(rank);
                    }
                    None => {}
                }
            }
        }
        out
    }

    /// Each step's best `k` tools, each step ranked with the rest of the request in mind
    /// ([`favour_providers`]): the upstreams of `whole_first` (the whole request's first tool)
    /// and of every other step's first tool.
    #[allow(clippy::too_many_arguments)]
    fn step_rankings(
        &self,
        whole_first: Option<&Hit>,
        steps: &[(String, Option<Vec<f32>>)],
        k: usize,
        method: Method,
        fusion: &Fusion,
        allow: &dyn Fn(&ToolDoc) -> bool,
    ) -> Vec<Vec<Hit>> {
        let candidates = if fusion.provider_weight > 0.0 {
            k.max(STEP_CANDIDATES)
        } else {
            k
        };
        let mut parts: Vec<Vec<Hit>> = steps
            .iter()
            .map(|(text, vector)| {
                self.search(text, vector.as_deref(), candidates, method, fusion, allow)
            })
            .collect();
        for (hits, (text, _)) in parts.iter_mut().zip(steps) {
            self.favour_action(hits, step_action(text), fusion.action_weight);
        }
        // A step that names an upstream ("query our Memgraph database …") is served by that
        // upstream's tool that fits it best, first, however its other words rank others.
        let named: Vec<Option<Hit>> = steps
            .iter()
            .zip(&parts)
            .map(|((text, vector), hits)| {
                self.named_best(
                    text,
                    vector.as_deref(),
                    hits,
                    candidates,
                    method,
                    fusion,
                    allow,
                )
            })
            .collect();
        for (hits, best) in parts.iter_mut().zip(&named) {
            if let Some(best) = best {
                put_first(hits, best);
            }
        }
        let chosen: Vec<Option<String>> = parts
            .iter()
            .map(|l| l.first().map(|h| h.upstream.clone()))
            .collect();
        for (i, hits) in parts.iter_mut().enumerate() {
            let others: HashSet<&str> = whole_first
                .map(|h| h.upstream.as_str())
                .into_iter()
                .chain(
                    chosen
                        .iter()
                        .enumerate()
                        .filter(|(j, _)| *j != i)
                        .filter_map(|(_, u)| u.as_deref()),
                )
                .collect();
            favour_providers(hits, &others, fusion.provider_weight);
            // First again: the provider rule reorders by score, the named tool's included.
            if let Some(best) = &named[i] {
                put_first(hits, best);
            }
            hits.truncate(k);
            for h in hits.iter_mut() {
                h.step = Some(i);
            }
        }
        parts
    }

    /// The best tool, for `text`, of the upstreams it names ([`UpstreamNames`]), if one fits
    /// it nearly as well as the best of its own ranking (`hits`): a product named as a source
    /// ("based on the Readwise docs, … generate three images") is no target.
    #[allow(clippy::too_many_arguments)]
    fn named_best(
        &self,
        text: &str,
        vector: Option<&[f32]>,
        hits: &[Hit],
        candidates: usize,
        method: Method,
        fusion: &Fusion,
        allow: &dyn Fn(&ToolDoc) -> bool,
    ) -> Option<Hit> {
        let ups = self.upstream_names().named_by(text);
        if ups.is_empty() {
            return None;
        }
        let within = |d: &ToolDoc| allow(d) && ups.contains(&d.upstream.as_str());
        let mut best = self.ranked(
            (method, fusion, true, false),
            text,
            vector,
            &within,
            candidates,
        );
        self.favour_action(&mut best, step_action(text), fusion.action_weight);
        let floor = closeness_floor(hits);
        best.into_iter()
            .next()
            .filter(|b| b.similarity.is_some_and(|s| s >= floor))
    }

    /// The words that name an upstream, read once after each change of the catalog.
    fn upstream_names(&self) -> &UpstreamNames {
        self.names.get_or_init(|| {
            let mut upstreams: Vec<&str> = self
                .docs
                .iter()
                .flatten()
                .map(|d| d.upstream.as_str())
                .collect();
            upstreams.sort_unstable();
            upstreams.dedup();
            UpstreamNames::new(upstreams, |word, owners| {
                self.lexical
                    .holders(word)
                    .into_iter()
                    .filter(|&id| self.doc(id).is_some_and(|d| !owners.contains(&d.upstream)))
                    .count()
            })
        })
    }

    /// Lowers, in a step's ranking, the score of each tool whose action is known and of
    /// another kind than the step asks for (`wanted`), or of that kind but far from the step's
    /// meaning ([`STEP_CLOSENESS`]), by `weight` times the step's best score, and reorders
    /// it. Among one provider's look-alikes ("please shut down the instance":
    /// `start_instance` and `stop_instance` share every other word) the action tells them
    /// apart. The score itself changes, so the provider rules after it rank on it too.
    fn favour_action(&self, hits: &mut [Hit], wanted: Option<Action>, weight: f32) {
        let (Some(wanted), Some(first)) = (wanted, hits.first()) else {
            return;
        };
        if weight <= 0.0 {
            return;
        }
        let cut = weight * first.score;
        let floor = closeness_floor(hits);
        for h in hits.iter_mut() {
            let action = self
                .ids
                .get(&(h.upstream.clone(), h.name.clone()))
                .and_then(|&id| self.actions[id as usize]);
            // Only a tool that fits the step nearly as well as its best escapes the cut by its
            // action: "add the numbers 3 and 4" is no reason for `add_observations` (cosine
            // 0.21) to pass `get-sum` (0.32).
            let far = h.similarity.unwrap_or(0.0) < floor;
            if action.is_some_and(|a| !wanted.served_by(a) || far) {
                h.score -= cut;
            }
        }
        // A stable sort: ties keep the step's own order.
        hits.sort_by(|a, b| b.score.total_cmp(&a.score));
    }
}

/// Puts `best` first in `hits` (taking it out of its place if it had one), with the list's top
/// score, so that the provider rules that rank on scores keep it there.
fn put_first(hits: &mut Vec<Hit>, best: &Hit) {
    let top = hits.iter().map(|h| h.score).fold(best.score, f32::max);
    let at = hits
        .iter()
        .position(|h| h.upstream == best.upstream && h.name == best.name);
    let mut hit = match at {
        Some(i) => hits.remove(i),
        None => best.clone(),
    };
    hit.score = top;
    hits.insert(0, hit);
}

/// Reorders a step's ranking with the upstreams the rest of the request chose (`providers`).
/// A step whose best tool is of none of them: each tool's score over the step's best, plus
/// `weight` if its upstream is one of them and it fits the step nearly as well as the step's
/// best tool ([`STEP_CLOSENESS`]). A step whose best tool is of one of them keeps it first,
/// and its other candidates of no chosen upstream lose `weight`: "…, link
/// them as colleagues" on a knowledge graph wants the graph's `create_relations` next, not an
/// address book's `link_contacts`. Measured in docs/routing.md ("The request's providers").
fn favour_providers(hits: &mut [Hit], providers: &HashSet<&str>, weight: f32) {
    if weight <= 0.0 || hits.is_empty() {
        return;
    }
    let top = hits[0].score.max(f32::EPSILON);
    if providers.contains(hits[0].upstream.as_str()) {
        // No cosine gate here: the step's first tool already says which provider it means, and
        // only tools of no chosen upstream move (in a catalog of one upstream, none does).
        let key = |h: &Hit| {
            let chosen = providers.contains(h.upstream.as_str());
            h.score / top - if chosen { 0.0 } else { weight }
        };
        hits[1..].sort_by(|a, b| key(b).total_cmp(&key(a)));
        return;
    }
    let floor = closeness_floor(hits);
    let key = |h: &Hit| {
        let close = h.similarity.unwrap_or(0.0) >= floor;
        let gain = if close && providers.contains(h.upstream.as_str()) {
            weight
        } else {
            0.0
        };
        h.score / top + gain
    };
    // A stable sort: ties keep the step's own order.
    hits.sort_by(|a, b| key(b).total_cmp(&key(a)));
}

/// Tells a changed BM25 text without keeping the text.
fn hash_of(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests;
