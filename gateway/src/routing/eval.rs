//! `mcp-gateway eval-routing`: builds the index from a catalog file with the real model and
//! measures retrieval quality and latency for embedding only, BM25 only and hybrid.
//! Files are JSON lines in the routing evaluation set's format.

use std::path::Path;
use std::time::{Duration, Instant};

use registry::routing::eval::Summary;
use registry::routing::{
    embedder::BATCH, tool_doc, Embed, Fusion, Method, ModelFiles, OnnxEmbedder, ToolDoc, ToolIndex,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Deserialize)]
struct CatalogLine {
    server: String,
    #[serde(flatten)]
    definition: Value,
}

#[derive(Deserialize)]
struct ToolRef {
    server: String,
    name: String,
}

#[derive(Deserialize)]
struct QueryLine {
    #[serde(default)]
    id: String,
    query: String,
    relevant: Vec<ToolRef>,
}

/// One method's results.
#[derive(Debug, Serialize)]
pub struct MethodReport {
    pub method: &'static str,
    #[serde(flatten)]
    pub summary: Summary,
    /// Search time per query after the query embedding, median and 95th percentile (µs).
    pub search_p50_us: f64,
    pub search_p95_us: f64,
    /// Queries whose relevant tool was not in the top 5: (id, query, what came first).
    pub misses_at_5: Vec<(String, String, Vec<String>)>,
}

#[derive(Debug, Serialize)]
pub struct Report {
    pub tools: usize,
    pub queries: usize,
    pub model: String,
    pub fusion: Fusion,
    /// Embedding the whole catalog (ms), and one query (median / 95th percentile, ms).
    pub index_build_ms: f64,
    pub query_embed_p50_ms: f64,
    pub query_embed_p95_ms: f64,
    pub methods: Vec<MethodReport>,
}

fn read_lines<T: for<'de> Deserialize<'de>>(path: &Path) -> anyhow::Result<Vec<T>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l)
                .map_err(|e| anyhow::anyhow!("{} line {}: {e}", path.display(), i + 1))
        })
        .collect()
}

fn percentile(v: &mut [Duration], p: f64) -> Duration {
    if v.is_empty() {
        return Duration::ZERO;
    }
    v.sort();
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn key(server: &str, name: &str) -> String {
    format!("{server}/{name}")
}

pub fn run(
    catalog: &Path,
    queries: &Path,
    model: &ModelFiles,
    fusion: Fusion,
) -> anyhow::Result<Report> {
    let tools: Vec<CatalogLine> = read_lines(catalog)?;
    let queries: Vec<QueryLine> = read_lines(queries)?;
    let embedder = OnnxEmbedder::load(model).map_err(|e| {
        anyhow::anyhow!("{e} (the evaluation needs the model: run scripts/fetch-model)")
    })?;
    let mut index = ToolIndex::default();
    let mut docs = Vec::new();
    for t in &tools {
        let name = t
            .definition
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| anyhow::anyhow!("a catalog line of {} has no name", t.server))?;
        let doc = tool_doc(&t.server, name, &t.definition);
        index.upsert(doc.clone());
        docs.push(doc);
    }
    let started = Instant::now();
    for chunk in docs.chunks(BATCH) {
        let texts: Vec<String> = chunk.iter().map(|d| d.gist.clone()).collect();
        let vectors = embedder.embed(&texts)?;
        for (d, v) in chunk.iter().zip(vectors) {
            index.set_vector(&d.upstream, &d.name, &d.hash, v);
        }
    }
    let index_build = started.elapsed();
    let mut embed_times = Vec::new();
    let mut vectors = Vec::new();
    for q in &queries {
        let t = Instant::now();
        let v = embedder.embed(std::slice::from_ref(&q.query))?.remove(0);
        embed_times.push(t.elapsed());
        vectors.push(v);
    }
    let all = |_: &ToolDoc| true;
    let mut methods = Vec::new();
    for method in [Method::Semantic, Method::Lexical, Method::Hybrid] {
        let mut results = Vec::new();
        let mut times = Vec::new();
        let mut misses = Vec::new();
        for (q, v) in queries.iter().zip(&vectors) {
            let t = Instant::now();
            let hits = index.search(&q.query, Some(v), 10, method, &fusion, &all);
            times.push(t.elapsed());
            let ranked: Vec<String> = hits.iter().map(|h| key(&h.upstream, &h.name)).collect();
            let relevant: Vec<String> =
                q.relevant.iter().map(|r| key(&r.server, &r.name)).collect();
            if !ranked.iter().take(5).any(|r| relevant.contains(r)) {
                misses.push((
                    q.id.clone(),
                    q.query.clone(),
                    ranked.iter().take(3).cloned().collect(),
                ));
            }
            results.push((relevant, ranked));
        }
        methods.push(MethodReport {
            method: method.as_str(),
            summary: Summary::of(&results),
            search_p50_us: percentile(&mut times, 0.5).as_secs_f64() * 1e6,
            search_p95_us: percentile(&mut times, 0.95).as_secs_f64() * 1e6,
            misses_at_5: misses,
        });
    }
    Ok(Report {
        tools: tools.len(),
        queries: queries.len(),
        model: embedder.model_id().to_string(),
        fusion,
        index_build_ms: index_build.as_secs_f64() * 1e3,
        query_embed_p50_ms: percentile(&mut embed_times, 0.5).as_secs_f64() * 1e3,
        query_embed_p95_ms: percentile(&mut embed_times, 0.95).as_secs_f64() * 1e3,
        methods,
    })
}

impl Report {
    /// The table `docs/routing.md` records.
    pub fn markdown(&self) -> String {
        let mut s = format!(
            "{} tools, {} queries, model `{}`, fusion: {:?}, semantic weight {}, lexical weight {}, \
             rrf_k {}\n\n| method | recall@1 | recall@5 | recall@10 | nDCG@10 | MRR | search p50 (µs) | search p95 (µs) |\n|---|---|---|---|---|---|---|---|\n",
            self.tools,
            self.queries,
            self.model,
            self.fusion.method,
            self.fusion.semantic_weight,
            self.fusion.lexical_weight,
            self.fusion.rrf_k
        );
        for m in &self.methods {
            let x = &m.summary;
            s.push_str(&format!(
                "| {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.0} | {:.0} |\n",
                m.method,
                x.recall_at_1,
                x.recall_at_5,
                x.recall_at_10,
                x.ndcg_at_10,
                x.mrr,
                m.search_p50_us,
                m.search_p95_us
            ));
        }
        s.push_str(&format!(
            "\nIndex build (embedding every tool): {:.0} ms. Query embedding: p50 {:.1} ms, p95 {:.1} ms.\n",
            self.index_build_ms, self.query_embed_p50_ms, self.query_embed_p95_ms
        ));
        for m in &self.methods {
            if !m.misses_at_5.is_empty() {
                s.push_str(&format!("\nMissed at 5 by {}:\n", m.method));
                for (id, q, top) in &m.misses_at_5 {
                    s.push_str(&format!("- {id} \"{q}\" → {}\n", top.join(", ")));
                }
            }
        }
        s
    }
}
