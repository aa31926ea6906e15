//! `mcp-gateway eval-routing`: builds the index from a catalog file with the real model and
//! measures retrieval quality and latency for embedding only, BM25 only and hybrid (one row per
//! fusion setting asked for), overall and per value of any extra query field (`level`,
//! `category`), and how well a score threshold tells "nothing fits" apart.
//! Files are JSON lines in the routing evaluation set's format.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use registry::routing::eval::{Judged, Summary};
use registry::routing::{
    answer_size, semantic_query, split_request, tool_doc, Embed, Fusion, Method, ModelFiles,
    OnnxEmbedder, ToolIndex,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tool of a catalog file: its server and its definition.
#[derive(Deserialize)]
pub(crate) struct CatalogLine {
    pub server: String,
    #[serde(flatten)]
    pub definition: Value,
}

impl CatalogLine {
    pub fn name(&self) -> anyhow::Result<&str> {
        self.definition
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| anyhow::anyhow!("a catalog line of {} has no name", self.server))
    }
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
    #[serde(default)]
    relevant_groups: Vec<Vec<ToolRef>>,
    /// Any other field with a string or number value (`level`, `category`): reported apart.
    #[serde(flatten)]
    extra: BTreeMap<String, Value>,
}

/// What to evaluate.
pub struct Options {
    pub catalog: PathBuf,
    pub queries: PathBuf,
    /// Requests no tool serves (`"relevant": []`): the "nothing fits" trade-off.
    pub no_tool: Option<PathBuf>,
    /// One hybrid row per setting.
    pub fusions: Vec<Fusion>,
    /// Also rank each hybrid setting with requests split into their steps.
    pub split: bool,
    /// Progress lines on standard error.
    pub progress: bool,
    /// Every query's answer in the JSON report ([`MethodReport::rankings`]).
    pub rankings: bool,
}

/// One method's results.
#[derive(Debug, Serialize)]
pub struct MethodReport {
    pub method: String,
    #[serde(flatten)]
    pub summary: Summary,
    /// The same measures per value of each extra query field (`level=2`).
    pub by_field: BTreeMap<String, Summary>,
    /// Search time per query after the query embedding, median and 95th percentile (µs).
    pub search_p50_us: f64,
    pub search_p95_us: f64,
    /// Queries with no relevant tool in the top 5: (id, query, what came first).
    pub misses_at_5: Vec<(String, String, Vec<String>)>,
    /// With `--rankings`: every query's answer, to read what a step found.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rankings: Vec<QueryRanking>,
}

/// One query's answer: its steps (when split) and its top 10, each tool with the step that
/// brought it and whether it is relevant.
#[derive(Debug, Serialize)]
pub struct QueryRanking {
    pub id: String,
    pub query: String,
    pub steps: Vec<String>,
    pub ranked: Vec<RankedTool>,
    /// The query's steps (groups of interchangeable tools) with a member in the top 5, and
    /// how many it has.
    pub groups_found_at_5: usize,
    pub groups: usize,
}

#[derive(Debug, Serialize)]
pub struct RankedTool {
    pub tool: String,
    pub step: Option<usize>,
    pub similarity: Option<f32>,
    pub relevant: bool,
}

/// One point of the "nothing fits" curve: with this threshold on a search's best similarity,
/// the share of no-tool requests answered "nothing fits", and the share of graded requests whose
/// best relevant tool in the top 5 stays above it.
#[derive(Debug, Serialize)]
pub struct ThresholdPoint {
    pub threshold: f32,
    pub no_tool_rejected: f64,
    pub graded_kept: f64,
}

#[derive(Debug, Serialize)]
pub struct Report {
    pub tools: usize,
    pub queries: usize,
    pub model: String,
    /// The graph file that ran (the model file, or its rewrite for this CPU).
    pub graph: String,
    /// Embedding the whole catalog (ms), and one query (median / 95th percentile, ms).
    pub index_build_ms: f64,
    pub query_embed_p50_ms: f64,
    pub query_embed_p95_ms: f64,
    /// Queries split into several steps, and embedding their steps (one call, ms).
    pub split_queries: usize,
    pub steps_embed_p50_ms: f64,
    pub steps_embed_p95_ms: f64,
    pub methods: Vec<MethodReport>,
    pub no_tool: Vec<ThresholdPoint>,
}

pub(crate) fn read_lines<T: for<'de> Deserialize<'de>>(path: &Path) -> anyhow::Result<Vec<T>> {
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

fn key(r: &ToolRef) -> String {
    format!("{}/{}", r.server, r.name)
}

/// The found tools' `server/name` keys, in order.
fn keys(hits: &[registry::routing::Hit]) -> Vec<String> {
    hits.iter()
        .map(|h| format!("{}/{}", h.upstream, h.name))
        .collect()
}

/// The `field=value` labels a query is reported under.
fn labels(q: &QueryLine) -> Vec<String> {
    q.extra
        .iter()
        .filter_map(|(k, v)| match v {
            Value::String(s) => Some(format!("{k}={s}")),
            Value::Number(n) => Some(format!("{k}={n}")),
            _ => None,
        })
        .collect()
}

/// A progress line that rewrites itself on a terminal, and whole lines (every tenth) elsewhere.
fn progress(on: bool, what: &str, done: usize, total: usize) {
    if !on {
        return;
    }
    if std::io::stderr().is_terminal() {
        eprint!("\r{what}: {done}/{total}");
        if done == total {
            eprintln!();
        }
        let _ = std::io::stderr().flush();
    } else if done == total || done * 10 / total.max(1) != (done - 1) * 10 / total.max(1) {
        eprintln!("{what}: {done}/{total}");
    }
}

/// Query embeddings, one inference each (as a live search does), timed.
fn embed_queries(
    embedder: &OnnxEmbedder,
    queries: &[String],
    opts: &Options,
    what: &str,
) -> anyhow::Result<(Vec<Vec<f32>>, Vec<Duration>)> {
    let mut vectors = Vec::with_capacity(queries.len());
    let mut times = Vec::with_capacity(queries.len());
    for (i, q) in queries.iter().enumerate() {
        let t = Instant::now();
        let q = &semantic_query(q);
        vectors.push(embedder.embed(std::slice::from_ref(q))?.remove(0));
        times.push(t.elapsed());
        if (i + 1) % 50 == 0 || i + 1 == queries.len() {
            progress(opts.progress, what, i + 1, queries.len());
        }
    }
    Ok((vectors, times))
}

fn label(method: Method, fusion: &Fusion, several: bool, steps: bool) -> String {
    let mut s = match method {
        Method::Hybrid if several => format!(
            "hybrid ({:?}, semantic {}, lexical {}, one need {})",
            fusion.method,
            fusion.semantic_weight,
            fusion.lexical_weight,
            fusion.single_need_lexical_weight
        )
        .to_lowercase(),
        _ => method.as_str().to_string(),
    };
    if steps {
        s.push_str(", split into steps");
    }
    s
}

/// Each query's steps with their vectors (empty for a one-step request), and the time the
/// extra inferences took per split query.
type Steps = Vec<Vec<(String, Option<Vec<f32>>)>>;

fn embed_steps(
    embedder: &OnnxEmbedder,
    queries: &[String],
    opts: &Options,
) -> anyhow::Result<(Steps, Vec<Duration>)> {
    let mut out = Vec::with_capacity(queries.len());
    let mut times = Vec::new();
    for (i, q) in queries.iter().enumerate() {
        let parts = split_request(q);
        if parts.len() < 2 {
            out.push(Vec::new());
        } else {
            let t = Instant::now();
            let texts: Vec<String> = parts.iter().map(|p| semantic_query(p)).collect();
            let vectors = embedder.embed(&texts)?;
            times.push(t.elapsed());
            out.push(
                parts
                    .into_iter()
                    .zip(vectors.into_iter().map(Some))
                    .collect(),
            );
        }
        if (i + 1) % 50 == 0 || i + 1 == queries.len() {
            progress(opts.progress, "embedding steps", i + 1, queries.len());
        }
    }
    Ok((out, times))
}

pub fn run(opts: &Options, model: &ModelFiles) -> anyhow::Result<Report> {
    let tools: Vec<CatalogLine> = read_lines(&opts.catalog)?;
    let queries: Vec<QueryLine> = read_lines(&opts.queries)?;
    let no_tool: Vec<QueryLine> = match &opts.no_tool {
        Some(p) => read_lines(p)?,
        None => Vec::new(),
    };
    let embedder = OnnxEmbedder::load(model).map_err(|e| {
        anyhow::anyhow!("{e} (the evaluation needs the model: run scripts/fetch-model)")
    })?;
    let (index, index_build) = build_index(&tools, &embedder, opts)?;
    let texts: Vec<String> = queries.iter().map(|q| q.query.clone()).collect();
    let (vectors, mut embed_times) = embed_queries(&embedder, &texts, opts, "embedding queries")?;
    let (steps, mut step_times) = if opts.split {
        embed_steps(&embedder, &texts, opts)?
    } else {
        (vec![Vec::new(); texts.len()], Vec::new())
    };
    let mut runs: Vec<(Method, Fusion, bool)> = vec![
        (Method::Semantic, Fusion::default(), false),
        (Method::Lexical, Fusion::default(), false),
    ];
    runs.extend(opts.fusions.iter().map(|f| (Method::Hybrid, *f, false)));
    if opts.split {
        runs.extend(opts.fusions.iter().map(|f| (Method::Hybrid, *f, true)));
    }
    let several = opts.fusions.len() > 1;
    // The run whose searches the "nothing fits" curve judges graded requests by.
    let curve_run = (
        Method::Hybrid,
        opts.fusions.first().copied().unwrap_or_default(),
        false,
    );
    // Per graded query: the best similarity among its relevant tools in that run's top 5 (none
    // returned: nothing a threshold could keep).
    let mut graded: Vec<Option<f32>> = Vec::new();
    let mut methods = Vec::new();
    for (method, fusion, split) in &runs {
        let curve = (*method, *fusion, *split) == curve_run;
        let search = Search {
            index: &index,
            method: *method,
            fusion,
            split: *split,
            rankings: opts.rankings,
        };
        let graded_here = curve.then_some(&mut graded);
        methods.push(method_report(
            &search,
            &queries,
            &vectors,
            &steps,
            several,
            graded_here,
        ));
    }
    let no_tool = no_tool_curve(&index, &embedder, opts, &no_tool, &graded)?;
    Ok(Report {
        tools: tools.len(),
        queries: queries.len(),
        model: embedder.model_id().to_string(),
        graph: embedder.graph().unwrap_or_default().to_string(),
        index_build_ms: index_build.as_secs_f64() * 1e3,
        query_embed_p50_ms: percentile(&mut embed_times, 0.5).as_secs_f64() * 1e3,
        query_embed_p95_ms: percentile(&mut embed_times, 0.95).as_secs_f64() * 1e3,
        split_queries: step_times.len(),
        steps_embed_p50_ms: percentile(&mut step_times, 0.5).as_secs_f64() * 1e3,
        steps_embed_p95_ms: percentile(&mut step_times, 0.95).as_secs_f64() * 1e3,
        methods,
        no_tool,
    })
}

/// The catalog embedded into an index, and how long that took.
fn build_index(
    tools: &[CatalogLine],
    embedder: &OnnxEmbedder,
    opts: &Options,
) -> anyhow::Result<(ToolIndex, std::time::Duration)> {
    let mut index = ToolIndex::default();
    let mut docs = Vec::new();
    for t in tools {
        let doc = tool_doc(&t.server, t.name()?, &t.definition);
        index.upsert(doc.clone());
        docs.push(doc);
    }
    let started = Instant::now();
    const CHUNK: usize = 256;
    for (i, chunk) in docs.chunks(CHUNK).enumerate() {
        let texts: Vec<String> = chunk.iter().map(|d| d.gist.clone()).collect();
        for (d, v) in chunk.iter().zip(embedder.embed(&texts)?) {
            index.set_vector(&d.upstream, &d.name, &d.hash, v);
        }
        progress(
            opts.progress,
            "embedding tools",
            (i * CHUNK + chunk.len()).min(docs.len()),
            docs.len(),
        );
    }
    Ok((index, started.elapsed()))
}

/// One way of searching that the report measures.
struct Search<'a> {
    index: &'a ToolIndex,
    method: Method,
    fusion: &'a Fusion,
    split: bool,
    rankings: bool,
}

/// Every query searched one way, judged: the summary, by field, timings and misses. With
/// `graded`, the best similarity of each query's relevant tools in its top 5 is recorded (for
/// the "nothing fits" curve).
fn method_report(
    search: &Search<'_>,
    queries: &[QueryLine],
    vectors: &[Vec<f32>],
    steps: &Steps,
    several: bool,
    mut graded: Option<&mut Vec<Option<f32>>>,
) -> MethodReport {
    let all = |_: &registry::routing::ToolDoc| true;
    let (index, method, fusion) = (search.index, search.method, search.fusion);
    let mut judged = Vec::new();
    let mut times = Vec::new();
    let mut misses = Vec::new();
    let mut rankings = Vec::new();
    let mut by_field: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, (q, v)) in queries.iter().zip(vectors).enumerate() {
        let t = Instant::now();
        // Unsplit, the request is one step: what a gateway with `routing.split_steps = false`
        // searches (its BM25 weighed as one need's).
        let request_steps: &[(String, Option<Vec<f32>>)] =
            if search.split { &steps[i] } else { &[] };
        let hits = index.search_steps(&q.query, Some(v), request_steps, 10, method, fusion, &all);
        times.push(t.elapsed());
        let ranked = keys(&hits);
        let relevant: Vec<String> = q.relevant.iter().map(key).collect();
        if let Some(graded) = graded.as_deref_mut() {
            graded.push(
                hits.iter()
                    .take(5)
                    .zip(&ranked)
                    .filter(|(_, name)| relevant.contains(name))
                    .filter_map(|(h, _)| h.similarity)
                    .reduce(f32::max),
            );
        }
        // The answer of a search that names no k, where it is longer than the first 5: searched
        // again at its size (outside the timing), as the gateway would.
        let size = answer_size(5, usize::MAX, steps[i].len());
        let answer = (search.split && size > 5).then(|| {
            keys(&index.search_steps(&q.query, Some(v), &steps[i], size, method, fusion, &all))
        });
        let j = Judged {
            relevant,
            groups: q
                .relevant_groups
                .iter()
                .map(|g| g.iter().map(key).collect())
                .collect(),
            ranked,
            answer,
        };
        if search.rankings {
            rankings.push(ranking(q, &steps[i], &hits, &j, search.split));
        }
        if !j.ranked.iter().take(5).any(|r| j.relevant.contains(r)) {
            misses.push((
                q.id.clone(),
                q.query.clone(),
                j.ranked.iter().take(3).cloned().collect(),
            ));
        }
        for l in labels(q) {
            by_field.entry(l).or_default().push(i);
        }
        judged.push(j);
    }
    MethodReport {
        method: label(method, fusion, several, search.split),
        summary: Summary::of(&judged),
        by_field: by_field
            .into_iter()
            .map(|(l, ids)| (l, Summary::of(ids.iter().map(|&i| &judged[i]))))
            .collect(),
        search_p50_us: percentile(&mut times, 0.5).as_secs_f64() * 1e6,
        search_p95_us: percentile(&mut times, 0.95).as_secs_f64() * 1e6,
        misses_at_5: misses,
        rankings,
    }
}

/// A query's answer as [`QueryRanking`] tells it.
fn ranking(
    q: &QueryLine,
    steps: &[(String, Option<Vec<f32>>)],
    hits: &[registry::routing::Hit],
    j: &Judged,
    split: bool,
) -> QueryRanking {
    let groups = j.groups();
    let top5 = &j.ranked[..j.ranked.len().min(5)];
    QueryRanking {
        id: q.id.clone(),
        query: q.query.clone(),
        steps: match split {
            true => steps.iter().map(|(s, _)| s.clone()).collect(),
            false => Vec::new(),
        },
        ranked: hits
            .iter()
            .zip(&j.ranked)
            .map(|(h, name)| RankedTool {
                tool: name.clone(),
                step: h.step,
                similarity: h.similarity,
                relevant: j.relevant.contains(name),
            })
            .collect(),
        groups_found_at_5: groups
            .iter()
            .filter(|g| g.iter().any(|t| top5.contains(t)))
            .count(),
        groups: groups.len(),
    }
}

/// The "nothing fits" curve: per threshold, the share of requests with no fitting tool whose
/// best hit falls below it, and the share of graded requests whose relevant tool stays above.
fn no_tool_curve(
    index: &ToolIndex,
    embedder: &OnnxEmbedder,
    opts: &Options,
    no_tool: &[QueryLine],
    graded: &[Option<f32>],
) -> anyhow::Result<Vec<ThresholdPoint>> {
    if no_tool.is_empty() {
        return Ok(Vec::new());
    }
    let all = |_: &registry::routing::ToolDoc| true;
    let texts: Vec<String> = no_tool.iter().map(|q| q.query.clone()).collect();
    let (none_vectors, _) = embed_queries(embedder, &texts, opts, "embedding no-tool queries")?;
    let fusion = opts.fusions.first().copied().unwrap_or_default();
    let best = |q: &str, v: &[f32]| {
        index
            .search(q, Some(v), 5, Method::Hybrid, &fusion, &all)
            .iter()
            .filter_map(|h| h.similarity)
            .fold(f32::MIN, f32::max)
    };
    let none: Vec<f32> = no_tool
        .iter()
        .zip(&none_vectors)
        .map(|(q, v)| best(&q.query, v))
        .collect();
    Ok((0..=14)
        .map(|i| {
            let t = 0.2 + 0.05 * i as f32;
            ThresholdPoint {
                threshold: (t * 100.0).round() / 100.0,
                no_tool_rejected: none.iter().filter(|&&s| s < t).count() as f64
                    / none.len() as f64,
                graded_kept: graded.iter().filter(|s| s.is_some_and(|s| s >= t)).count() as f64
                    / graded.len().max(1) as f64,
            }
        })
        .collect())
}

/// Misses listed per method in the Markdown report (all of them are in `--json`).
const MISSES_SHOWN: usize = 10;

impl Report {
    /// The tables `docs/routing.md` records.
    pub fn markdown(&self) -> String {
        let mut s = format!(
            "{} tools, {} queries, model `{}` (graph `{}`)\n\n| method | recall@1 | recall@5 | recall@10 | \
             group recall@5 | group recall@10 | nDCG@10 | MRR | search p50 (µs) | search p95 (µs) |\n\
             |---|---|---|---|---|---|---|---|---|---|\n",
            self.tools, self.queries, self.model, self.graph,
        );
        let row = |name: &str, x: &Summary, tail: &str| {
            format!(
                "| {name} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} |{tail}\n",
                x.recall_at_1,
                x.recall_at_5,
                x.recall_at_10,
                x.group_recall_at_5,
                x.group_recall_at_10,
                x.ndcg_at_10,
                x.mrr,
            )
        };
        for m in &self.methods {
            let tail = format!(" {:.0} | {:.0} |", m.search_p50_us, m.search_p95_us);
            s.push_str(&row(&m.method, &m.summary, &tail));
        }
        let fields: Vec<&String> = self
            .methods
            .first()
            .map(|m| m.by_field.keys().collect())
            .unwrap_or_default();
        if !fields.is_empty() {
            s.push_str(
                "\nPer query field:\n\n| method | field | queries | recall@1 | recall@5 | \
                 recall@10 | group recall@5 | group recall@10 | nDCG@10 | MRR |\n\
                 |---|---|---|---|---|---|---|---|---|---|\n",
            );
            for m in &self.methods {
                for (field, x) in &m.by_field {
                    let name = format!("{} | {field} | {}", m.method, x.queries);
                    s.push_str(&row(&name, x, ""));
                }
            }
        }
        let split: Vec<&MethodReport> = self
            .methods
            .iter()
            .filter(|m| m.summary.answer_size > 5.0)
            .collect();
        if !split.is_empty() {
            s.push_str(
                "\nThe answer of a search that names no k (5 tools, or one for each step and one \
                 for the whole request):\n\n| method | field | queries | group recall | tools |\n\
                 |---|---|---|---|---|\n",
            );
            for m in split {
                let all = std::iter::once(("all", &m.summary));
                for (field, x) in all.chain(m.by_field.iter().map(|(f, x)| (f.as_str(), x))) {
                    s.push_str(&format!(
                        "| {} | {field} | {} | {:.3} | {:.2} |\n",
                        m.method, x.queries, x.group_recall_of_answer, x.answer_size
                    ));
                }
            }
        }
        s.push_str(&format!(
            "\nIndex build (embedding every tool): {:.0} ms. Query embedding: p50 {:.1} ms, p95 {:.1} ms.\n",
            self.index_build_ms, self.query_embed_p50_ms, self.query_embed_p95_ms
        ));
        if self.split_queries > 0 {
            s.push_str(&format!(
                "Split into steps: {} queries; embedding their steps: p50 {:.1} ms, p95 {:.1} ms.\n",
                self.split_queries, self.steps_embed_p50_ms, self.steps_embed_p95_ms
            ));
        }
        if !self.no_tool.is_empty() {
            s.push_str(
                "\nNothing fits (threshold on the best similarity of a search):\n\n\
                 | threshold | no-tool requests answered \"nothing fits\" | graded requests whose \
                 tool stays above |\n|---|---|---|\n",
            );
            for p in &self.no_tool {
                s.push_str(&format!(
                    "| {:.2} | {:.3} | {:.3} |\n",
                    p.threshold, p.no_tool_rejected, p.graded_kept
                ));
            }
        }
        for m in &self.methods {
            if !m.misses_at_5.is_empty() {
                s.push_str(&format!(
                    "\nMissed at 5 by {} ({} queries, first {}):\n",
                    m.method,
                    m.misses_at_5.len(),
                    MISSES_SHOWN.min(m.misses_at_5.len())
                ));
                for (id, q, top) in m.misses_at_5.iter().take(MISSES_SHOWN) {
                    s.push_str(&format!("- {id} \"{q}\" → {}\n", top.join(", ")));
                }
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(name: &str, step: Option<usize>) -> registry::routing::Hit {
        registry::routing::Hit {
            upstream: "s".into(),
            name: name.into(),
            score: 1.0,
            similarity: Some(0.5),
            semantic_rank: None,
            lexical_rank: None,
            step,
        }
    }

    /// A split query's answer says which step brought each tool, which tools are relevant,
    /// and how many of its steps have a tool in the top 5 (a step's tool at 6th counts not).
    #[test]
    fn a_ranking_tells_each_tool_its_step_and_counts_steps_found_in_the_top_5() {
        let q: QueryLine = serde_json::from_str(
            r#"{"id": "q1", "query": "find the file, then email it",
                "relevant": [{"server": "s", "name": "find"}, {"server": "s", "name": "mail"},
                             {"server": "s", "name": "send"}],
                "relevant_groups": [[{"server": "s", "name": "find"}],
                                    [{"server": "s", "name": "mail"}, {"server": "s", "name": "send"}]]}"#,
        )
        .unwrap();
        let steps = vec![
            ("find the file".to_string(), None),
            ("then email it".to_string(), None),
        ];
        let names = ["find", "a", "b", "c", "d", "mail"];
        let hits: Vec<_> = names
            .iter()
            .enumerate()
            .map(|(i, n)| hit(n, (i > 0).then_some(i % 2)))
            .collect();
        let j = Judged {
            relevant: q.relevant.iter().map(key).collect(),
            groups: q
                .relevant_groups
                .iter()
                .map(|g| g.iter().map(key).collect())
                .collect(),
            ranked: hits.iter().map(|h| format!("s/{}", h.name)).collect(),
            answer: None,
        };
        let r = ranking(&q, &steps, &hits, &j, true);
        assert_eq!(r.steps, ["find the file", "then email it"]);
        assert_eq!((r.groups_found_at_5, r.groups), (1, 2));
        assert_eq!(r.ranked[0].step, None);
        assert!(r.ranked[0].relevant && r.ranked[5].relevant && !r.ranked[1].relevant);
        assert_eq!(r.ranked[5].step, Some(1));
        let whole = ranking(&q, &[], &hits, &j, false);
        assert!(whole.steps.is_empty());
    }
}
