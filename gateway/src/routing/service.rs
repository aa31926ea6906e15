//! The routing service: keeps the hybrid index in step with the catalog (incrementally, reusing
//! stored embeddings, which `stored_vectors` keeps to what is in use), embeds queries (cached),
//! and answers searches filtered by what the caller may see. Without a model it still starts,
//! says so, and searches by words only.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use prometheus::{Histogram, HistogramOpts, IntCounterVec, IntGaugeVec, Opts};
use registry::routing::{
    answer_size, bounded_request, embedder::BATCH, semantic_query, split_request, tool_doc, Embed,
    Method, OnnxEmbedder, QueryCache, ToolDoc, ToolIndex,
};
use registry::{CatalogView, EntryKind, Exposed, Registry};
use serde::Serialize;
use serde_json::Value;

use super::feedback::Feedback;
use super::virtual_servers::VirtualServers;
use crate::config::routing::RoutingConfig;
use crate::metrics::Metrics;
use crate::upstream::Upstreams;

mod stored_vectors;

/// What `/admin/v1/health` and `/readyz` say about routing.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct RoutingStatus {
    /// `semantic` (embeddings + words) or `lexical` (words only: no model).
    pub mode: &'static str,
    pub model: Option<String>,
    /// The ONNX graph file the model runs: its `MatMulInteger` rewrite on an x86-64 CPU, the
    /// model's own elsewhere or when the folder holds no rewrite.
    pub graph: Option<String>,
    /// Why the model is not in use.
    pub reason: Option<String>,
    pub tools: usize,
    pub embedded: usize,
}

/// A found tool as hosts see it.
#[derive(Debug, Clone, Serialize)]
pub struct Found {
    pub name: String,
    pub upstream: String,
    pub score: f32,
    /// Cosine similarity to the request (or to the step that found it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub similarity: Option<f32>,
    /// The step of a multi-step request this tool serves (absent: the whole request).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    #[serde(skip)]
    pub definition: Value,
}

/// What a search found.
#[derive(Debug, Default)]
pub struct Search {
    pub tools: Vec<Found>,
    /// No tool is similar enough to the request (`routing.min_similarity`): the tools are the
    /// closest ones, not good ones.
    pub nothing_fits: bool,
    /// The steps the request was split into (one: not split).
    pub steps: Vec<String>,
}

struct RoutingMetrics {
    searches: IntCounterVec,
    results: Histogram,
    seconds: Histogram,
    cache: IntCounterVec,
    pub followups: IntCounterVec,
    tools: IntGaugeVec,
}

impl RoutingMetrics {
    fn new(m: &Metrics) -> Self {
        let searches = IntCounterVec::new(
            Opts::new(
                "routing_searches_total",
                "Tool searches by surface and mode",
            ),
            &["surface", "mode"],
        )
        .unwrap();
        let results = Histogram::with_opts(
            HistogramOpts::new("routing_search_results", "Tools returned per search")
                .buckets(vec![0.0, 1.0, 3.0, 5.0, 10.0, 20.0, 50.0]),
        )
        .unwrap();
        let seconds = Histogram::with_opts(
            HistogramOpts::new(
                "routing_search_seconds",
                "Search time, query embedding included",
            )
            .buckets(vec![
                0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5,
            ]),
        )
        .unwrap();
        let cache = IntCounterVec::new(
            Opts::new(
                "routing_query_cache_total",
                "Query embeddings served from the cache (hit) or computed (miss)",
            ),
            &["result"],
        )
        .unwrap();
        let followups = IntCounterVec::new(
            Opts::new(
                "routing_followups_total",
                "Tool calls that followed a search: hit when the search had returned the tool",
            ),
            &["result"],
        )
        .unwrap();
        let tools = IntGaugeVec::new(
            Opts::new(
                "routing_tools",
                "Tools in the routing index, and how many have vectors",
            ),
            &["state"],
        )
        .unwrap();
        for c in [
            Box::new(searches.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(results.clone()),
            Box::new(seconds.clone()),
            Box::new(cache.clone()),
            Box::new(followups.clone()),
            Box::new(tools.clone()),
        ] {
            m.register(c);
        }
        Self {
            searches,
            results,
            seconds,
            cache,
            followups,
            tools,
        }
    }
}

pub struct ToolRouter {
    pub config: RoutingConfig,
    registry: Arc<dyn Registry>,
    upstreams: Arc<Upstreams>,
    index: RwLock<ToolIndex>,
    embedder: Option<Arc<dyn Embed>>,
    /// Why there is no embedder.
    reason: Option<String>,
    cache: QueryCache,
    /// Definition hashes the index holds, by (upstream, tool): only changed tools are re-read.
    known: Mutex<HashMap<(String, String), String>>,
    pub virtual_servers: VirtualServers,
    pub feedback: Feedback,
    metrics: RoutingMetrics,
}

impl ToolRouter {
    /// Loads the model (or explains why not) and starts following the catalog.
    pub async fn start(
        config: RoutingConfig,
        registry: Arc<dyn Registry>,
        upstreams: Arc<Upstreams>,
        metrics: &Metrics,
    ) -> Arc<Self> {
        let (embedder, reason) = if config.enabled {
            let files = config.model.clone();
            let load = move || {
                let _burst = crate::memory::Burst::begin();
                let loaded = OnnxEmbedder::load(&files);
                crate::memory::release_freed();
                loaded
            };
            match tokio::task::spawn_blocking(load).await {
                Ok(Ok(e)) => {
                    tracing::info!(model = %e.model_id(), graph = %e.graph().unwrap_or_default(), dir = %config.model.dir.display(), "semantic tool routing: model loaded");
                    (Some(Arc::new(e) as Arc<dyn Embed>), None)
                }
                Ok(Err(e)) => (None, Some(e.to_string())),
                Err(e) => (None, Some(format!("model loading crashed: {e}"))),
            }
        } else {
            (None, Some("routing.enabled is false".to_string()))
        };
        if let Some(r) = &reason {
            tracing::warn!(reason = %r, "semantic tool routing is DEGRADED: searches match words only (run scripts/fetch-model, or set routing.model_dir; a folder with only model.onnx needs routing.model = \"minilm\")");
        }
        let router = Self::new(config, registry, upstreams, embedder, reason, metrics);
        router.follow_catalog();
        router
    }

    pub fn new(
        config: RoutingConfig,
        registry: Arc<dyn Registry>,
        upstreams: Arc<Upstreams>,
        embedder: Option<Arc<dyn Embed>>,
        reason: Option<String>,
        metrics: &Metrics,
    ) -> Arc<Self> {
        Arc::new(Self {
            cache: QueryCache::new(config.query_cache),
            feedback: Feedback::new(config.pairs),
            config,
            registry,
            upstreams,
            index: RwLock::default(),
            embedder,
            reason,
            known: Mutex::default(),
            virtual_servers: VirtualServers::default(),
            metrics: RoutingMetrics::new(metrics),
        })
    }

    pub fn status(&self) -> RoutingStatus {
        let ix = self.index.read().unwrap();
        RoutingStatus {
            mode: if self.embedder.is_some() {
                "semantic"
            } else {
                "lexical"
            },
            model: self.embedder.as_ref().map(|e| e.model_id().to_string()),
            graph: self
                .embedder
                .as_ref()
                .and_then(|e| e.graph().map(str::to_string)),
            reason: self.reason.clone(),
            tools: ix.len(),
            embedded: ix.embedded(),
        }
    }

    pub fn count_followup(&self, hit: bool) {
        self.metrics
            .followups
            .with_label_values(&[if hit { "hit" } else { "miss" }])
            .inc();
    }

    /// Syncs now, then after every change of the exposed tools.
    fn follow_catalog(self: &Arc<Self>) {
        use tokio::sync::broadcast::error::RecvError;
        let mut changes = self.upstreams.subscribe_changes();
        let me = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut first = true;
            loop {
                let Some(router) = me.upgrade() else { break };
                let view = router.upstreams.view();
                router.sync(&view).await;
                if std::mem::take(&mut first) {
                    router.keep_stored_vectors();
                }
                drop(router);
                loop {
                    match changes.recv().await {
                        Ok(EntryKind::Tool) | Err(RecvError::Lagged(_)) => break,
                        Ok(_) => continue,
                        Err(RecvError::Closed) => return,
                    }
                }
            }
        });
    }

    /// Brings the index in line with the view's tools: removed tools leave, new and changed
    /// ones are (re)indexed, then vectors are filled in.
    pub async fn sync(&self, view: &CatalogView) {
        // A large catalog's texts and vectors are a burst of allocations.
        let _burst = crate::memory::Burst::begin();
        let tools = view.list(EntryKind::Tool);
        let (removed, changed) = {
            let mut known = self.known.lock().unwrap();
            let mut present = HashSet::with_capacity(tools.len());
            let mut changed = Vec::new();
            for e in tools {
                let key = (e.entry.upstream.clone(), e.entry.key.clone());
                if known.get(&key) != Some(&e.entry.content_hash) {
                    changed.push(tool_doc(&key.0, &key.1, &e.entry.definition.to_value()));
                    known.insert(key.clone(), e.entry.content_hash.clone());
                }
                present.insert(key);
            }
            let removed: Vec<(String, String)> = known
                .keys()
                .filter(|k| !present.contains(*k))
                .cloned()
                .collect();
            for k in &removed {
                known.remove(k);
            }
            (removed, changed)
        };
        if !removed.is_empty() || !changed.is_empty() {
            let mut ix = self.index.write().unwrap();
            for (u, n) in &removed {
                ix.remove(u, n);
            }
            for d in changed {
                ix.upsert(d);
            }
        }
        if let Some(embedder) = self.embedder.clone() {
            self.fill_vectors(embedder).await;
        }
        let st = self.status();
        self.metrics
            .tools
            .with_label_values(&["indexed"])
            .set(st.tools as i64);
        self.metrics
            .tools
            .with_label_values(&["embedded"])
            .set(st.embedded as i64);
    }

    /// Vectors for tools without one: stored ones first (another replica or an earlier run made
    /// them), the rest embedded in batches and stored.
    async fn fill_vectors(&self, embedder: Arc<dyn Embed>) {
        let missing = self.index.read().unwrap().missing_vectors();
        if missing.is_empty() {
            return;
        }
        let model = embedder.model_id().to_string();
        let hashes: Vec<String> = missing
            .iter()
            .map(|d| d.hash.clone())
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        let stored = match self.registry.embeddings(&model, &hashes).await {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read stored embeddings; embedding anew");
                HashMap::new()
            }
        };
        let mut todo = Vec::new();
        {
            let mut ix = self.index.write().unwrap();
            for d in missing {
                match stored.get(&d.hash) {
                    Some(v) => ix.set_vector(&d.upstream, &d.name, &d.hash, v.clone()),
                    None => todo.push(d),
                }
            }
        }
        let reused = stored.len();
        if todo.is_empty() {
            tracing::info!(reused, embedded = 0, model = %model, "tool vectors ready");
            return;
        }
        let total = todo.len();
        let loud = total > BATCH;
        if loud {
            tracing::info!(tools = total, model = %model, reused, "embedding tools");
        }
        let mut done = 0;
        for chunk in todo.chunks(BATCH) {
            let texts: Vec<String> = chunk.iter().map(|d| d.gist.clone()).collect();
            let e = embedder.clone();
            let vectors = match tokio::task::spawn_blocking(move || e.embed(&texts)).await {
                Ok(Ok(v)) => v,
                Ok(Err(e)) => {
                    tracing::warn!(error = %e, "embedding failed; these tools are found by words only until the next change");
                    return;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "embedding crashed");
                    return;
                }
            };
            let rows: Vec<(String, Vec<f32>)> = chunk
                .iter()
                .zip(&vectors)
                .map(|(d, v)| (d.hash.clone(), v.clone()))
                .collect();
            if let Err(e) = self.registry.put_embeddings(&model, &rows).await {
                tracing::warn!(error = %e, "cannot store embeddings; they stay in memory only");
            }
            {
                let mut ix = self.index.write().unwrap();
                for (d, v) in chunk.iter().zip(vectors) {
                    ix.set_vector(&d.upstream, &d.name, &d.hash, v);
                }
            }
            done += chunk.len();
            if loud {
                tracing::info!(done, total, "embedding tools: progress");
            }
        }
        // The sessions built for this run go; queries need only the first.
        if embedder.idle() || loud {
            crate::memory::release_freed();
        }
        tracing::info!(reused, embedded = done, model = %model, "tool vectors ready");
    }

    /// The query's vector (cached), or None without a model.
    async fn query_vector(&self, query: &str) -> Option<Arc<[f32]>> {
        let embedder = self.embedder.clone()?;
        if let Some(v) = self.cache.get(query) {
            self.metrics.cache.with_label_values(&["hit"]).inc();
            return Some(v);
        }
        self.metrics.cache.with_label_values(&["miss"]).inc();
        let q = vec![semantic_query(query)];
        match tokio::task::spawn_blocking(move || embedder.embed(&q)).await {
            Ok(Ok(mut v)) => {
                let v: Arc<[f32]> = v.pop()?.into();
                self.cache.put(query, v.clone());
                Some(v)
            }
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "query embedding failed; searching by words only");
                None
            }
            Err(_) => None,
        }
    }

    /// The vectors of a request's steps: cached ones reused, the others embedded in one call.
    async fn step_vectors(&self, steps: &[String]) -> Vec<Option<Vec<f32>>> {
        let Some(embedder) = self.embedder.clone() else {
            return vec![None; steps.len()];
        };
        let mut out: Vec<Option<Vec<f32>>> = steps
            .iter()
            .map(|s| self.cache.get(s).map(|v| v.to_vec()))
            .collect();
        let missing: Vec<String> = steps
            .iter()
            .zip(&out)
            .filter(|(_, v)| v.is_none())
            .map(|(s, _)| s.clone())
            .collect();
        if missing.is_empty() {
            return out;
        }
        let texts: Vec<String> = missing.iter().map(|m| semantic_query(m)).collect();
        match tokio::task::spawn_blocking(move || embedder.embed(&texts)).await {
            Ok(Ok(vectors)) => {
                let mut fresh = missing.iter().zip(vectors);
                for slot in out.iter_mut().filter(|v| v.is_none()) {
                    if let Some((text, v)) = fresh.next() {
                        self.cache.put(text, v.clone().into());
                        *slot = Some(v);
                    }
                }
            }
            Ok(Err(e)) => tracing::warn!(error = %e, "step embedding failed; searching by words"),
            Err(_) => {}
        }
        out
    }

    /// The best `k` tools for `query` among those `allow` accepts (and that are in the catalog
    /// now: only connected upstreams' tools are). A request of several steps is searched step by
    /// step as well (`routing.split_steps`). Without a `k` from the caller, `routing.default_k`,
    /// raised (up to `max_k`) to one tool for each step and one for the whole request: a request
    /// of more steps than that would otherwise leave its later steps without a tool.
    pub async fn search(
        &self,
        query: &str,
        k: Option<usize>,
        surface: &str,
        allow: &(dyn Fn(&Exposed) -> bool + Sync),
    ) -> Search {
        let started = Instant::now();
        let query = bounded_request(query);
        let qv = self.query_vector(query).await;
        let steps = if self.config.split_steps {
            split_request(query)
        } else {
            vec![query.to_string()]
        };
        let k =
            k.unwrap_or_else(|| answer_size(self.config.default_k, self.config.max_k, steps.len()));
        let step_vectors = if steps.len() > 1 {
            self.step_vectors(&steps).await
        } else {
            Vec::new()
        };
        let view = self.upstreams.view();
        let hits = {
            let ix = self.index.read().unwrap();
            let allow = |d: &ToolDoc| {
                view.find(EntryKind::Tool, &d.upstream, &d.name)
                    .is_some_and(allow)
            };
            let with_vectors: Vec<(String, Option<Vec<f32>>)> =
                steps.iter().cloned().zip(step_vectors).collect();
            ix.search_steps(
                query,
                qv.as_deref(),
                &with_vectors,
                k,
                Method::Hybrid,
                &self.config.fusion,
                &allow,
            )
        };
        let tools: Vec<Found> = hits
            .into_iter()
            .filter_map(|h| {
                let e = view.find(EntryKind::Tool, &h.upstream, &h.name)?;
                let mut def = e.entry.definition.to_value();
                def["name"] = Value::from(e.exposed.clone());
                Some(Found {
                    name: e.exposed.clone(),
                    upstream: h.upstream,
                    score: h.score,
                    similarity: h.similarity,
                    step: h.step.and_then(|i| steps.get(i).cloned()),
                    definition: def,
                })
            })
            .collect();
        // Without a model there is no similarity to judge by: never "nothing fits".
        let best = tools.iter().filter_map(|f| f.similarity).reduce(f32::max);
        let nothing_fits = qv.is_some()
            && self.config.min_similarity > 0.0
            && best.is_none_or(|b| b < self.config.min_similarity);
        let mode = if qv.is_some() { "semantic" } else { "lexical" };
        self.metrics
            .searches
            .with_label_values(&[surface, mode])
            .inc();
        self.metrics.results.observe(tools.len() as f64);
        self.metrics
            .seconds
            .observe(started.elapsed().as_secs_f64());
        Search {
            tools,
            nothing_fits,
            steps,
        }
    }

    /// Re-reads the virtual servers.
    pub async fn reload_virtual_servers(&self) {
        if let Err(e) = self.virtual_servers.reload(self.registry.as_ref()).await {
            tracing::warn!(error = %e, "cannot read the virtual servers; keeping the known ones");
        }
    }
}
