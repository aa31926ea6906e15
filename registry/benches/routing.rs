//! Routing index at 1k, 10k and 100k synthetic tools (384-dimensional unit vectors around 200
//! topic centres, as tool embeddings cluster by kind of task; texts drawn from a 5,000-word
//! vocabulary): top-10 search after the query embedding (hybrid, semantic,
//! lexical), one incremental update (a changed tool re-indexed with its new vector), and, printed
//! once per size, the build time and the memory the index takes; a split request of three steps,
//! one naming an upstream. And reading five requests
//! (steps, and the texts the model and BM25 read of each) before any search, and the longest
//! request the router reads.

use std::hint::black_box;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use registry::routing::{
    bounded_request, lexical_query, semantic_query, split_request, Fusion, Method, ToolDoc,
    ToolIndex, MAX_REQUEST_BYTES,
};

const DIM: usize = 384;

/// A step of a split request: its text and vector.
type Step = (String, Option<Vec<f32>>);

struct Rng(u64, Vec<Vec<f32>>);

fn normalise(mut v: Vec<f32>) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= n);
    v
}

impl Rng {
    fn new(seed: u64) -> Self {
        let mut r = Rng(seed, Vec::new());
        r.1 = (0..200).map(|_| r.uniform()).collect();
        r
    }
    fn uniform(&mut self) -> Vec<f32> {
        normalise(
            (0..DIM)
                .map(|_| (self.next() % 20_000) as f32 / 10_000.0 - 1.0)
                .collect(),
        )
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// A point near one of the topic centres.
    fn unit(&mut self) -> Vec<f32> {
        let c = (self.next() % 200) as usize;
        let noise: Vec<f32> = (0..DIM)
            .map(|_| 0.06 * ((self.next() % 20_000) as f32 / 10_000.0 - 1.0))
            .collect();
        normalise(self.1[c].iter().zip(noise).map(|(a, b)| a + b).collect())
    }
    fn words(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| format!("w{}", self.next() % 5_000))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn doc(i: usize, text: String) -> ToolDoc {
    ToolDoc {
        upstream: format!("up{}", i % 50),
        name: format!("tool_{i}"),
        hash: format!("{i}:{}", text.len()),
        gist: text.clone(),
        text,
    }
}

/// Resident memory of this process in bytes.
fn rss() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

fn build(n: usize, rng: &mut Rng) -> ToolIndex {
    let before = rss();
    let started = Instant::now();
    let mut ix = ToolIndex::default();
    for i in 0..n {
        let d = doc(i, rng.words(30));
        let (u, name, h) = (d.upstream.clone(), d.name.clone(), d.hash.clone());
        ix.upsert(d);
        ix.set_vector(&u, &name, &h, rng.unit());
    }
    eprintln!(
        "routing index of {n} tools: built in {:.2} s, {:.0} MiB resident ({:.1} KiB per tool)",
        started.elapsed().as_secs_f64(),
        (rss().saturating_sub(before)) as f64 / 1048576.0,
        (rss().saturating_sub(before)) as f64 / 1024.0 / n as f64
    );
    ix
}

fn bench(c: &mut Criterion) {
    let mut rng = Rng::new(0x9E37_79B9_7F4A_7C15);
    let fusion = Fusion::default();
    let all = |_: &ToolDoc| true;
    let mut group = c.benchmark_group("routing");
    group.sample_size(20);
    // ROUTING_BENCH_SIZES=10000 measures one size only.
    let sizes: Vec<usize> = std::env::var("ROUTING_BENCH_SIZES")
        .ok()
        .map(|v| v.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1_000, 10_000, 100_000]);
    for n in sizes {
        let mut ix = build(n, &mut rng);
        let queries: Vec<(String, Vec<f32>)> =
            (0..64).map(|_| (rng.words(5), rng.unit())).collect();
        // How many of the exact top 10 the graph finds.
        let mut found = 0;
        for (text, v) in &queries {
            let exact = ix.nearest_exact(v, 10);
            found += ix
                .search(text, Some(v), 10, Method::Semantic, &fusion, &all)
                .iter()
                .filter(|h| exact.contains(&(h.upstream.clone(), h.name.clone())))
                .count();
        }
        eprintln!(
            "routing index of {n} tools: graph recall@10 against an exact scan {:.3}",
            found as f64 / (10 * queries.len()) as f64
        );
        for method in [Method::Hybrid, Method::Semantic, Method::Lexical] {
            let mut q = 0;
            group.bench_with_input(
                BenchmarkId::new(format!("top10_{}", method.as_str()), n),
                &n,
                |b, _| {
                    b.iter(|| {
                        q = (q + 1) % queries.len();
                        let (text, v) = &queries[q];
                        black_box(ix.search(text, Some(v), 10, method, &fusion, &all))
                    })
                },
            );
        }
        // Half the tools hidden by the caller's rights: filtering happens inside the search.
        let mut q = 0;
        let half = |d: &ToolDoc| d.name.ends_with(['0', '2', '4', '6', '8']);
        group.bench_with_input(BenchmarkId::new("top10_hybrid_filtered", n), &n, |b, _| {
            b.iter(|| {
                q = (q + 1) % queries.len();
                let (text, v) = &queries[q];
                black_box(ix.search(text, Some(v), 10, Method::Hybrid, &fusion, &half))
            })
        });
        // A request of three steps, one of which names an upstream ("… on Up7"): a search per
        // step, and the named upstream's tools searched apart for that step.
        let split: Vec<(String, Vec<Step>)> = (0..64)
            .map(|j| {
                let steps = (0..3)
                    .map(|s| {
                        let named = if s == 1 {
                            format!(" on Up{}", j % 50)
                        } else {
                            String::new()
                        };
                        (format!("{}{named}", rng.words(6)), Some(rng.unit()))
                    })
                    .collect();
                (rng.words(18), steps)
            })
            .collect();
        let whole: Vec<Vec<f32>> = (0..64).map(|_| rng.unit()).collect();
        // The first split search after a change reads the upstreams' name words again.
        let started = Instant::now();
        black_box(ix.search_steps(
            &split[0].0,
            Some(&whole[0]),
            &split[0].1,
            10,
            Method::Hybrid,
            &fusion,
            &all,
        ));
        eprintln!(
            "routing index of {n} tools: first split search after a change {:.2} ms",
            started.elapsed().as_secs_f64() * 1000.0
        );
        let mut q = 0;
        group.bench_with_input(
            BenchmarkId::new("top10_split_3_steps_one_named", n),
            &n,
            |b, _| {
                b.iter(|| {
                    q = (q + 1) % split.len();
                    let (text, steps) = &split[q];
                    black_box(ix.search_steps(
                        text,
                        Some(&whole[q]),
                        steps,
                        10,
                        Method::Hybrid,
                        &fusion,
                        &all,
                    ))
                })
            },
        );
        let mut i = 0usize;
        group.bench_with_input(BenchmarkId::new("update_one_tool", n), &n, |b, _| {
            b.iter(|| {
                i += 1;
                let d = doc(i % n, rng.words(30));
                let (u, name, h) = (d.upstream.clone(), d.name.clone(), d.hash.clone());
                ix.upsert(d);
                ix.set_vector(&u, &name, &h, rng.unit());
            })
        });
    }
    group.finish();
}

/// Reading requests before any search: cutting them into steps and making the texts the model
/// and BM25 read of the whole and of each step, over requests of the forms the rules read (a
/// long plan, a command, a memory, a destination, a plain question).
fn read_requests(c: &mut Criterion) {
    let requests = [
        "I'm preparing a detailed investment report on a trending KOSPI stock. First, list all \
         current KOSPI tickers and stock names. Then, for my selected stock, fetch its \
         fundamental metrics and the latest OHLCV data for the past month. Next, generate an \
         image for the report cover, and finally send a message to our team's webhook.",
        "Show how much disk space is free on / using the df -h command",
        "remember that Alice works at Acme as a designer",
        "Summarize the hottest threads on r/rust into /root/reddit/rust.md",
        "what time is it in Tokyo right now",
    ];
    c.bench_function("read_requests", |b| {
        b.iter(|| {
            for request in &requests {
                let steps = split_request(black_box(request));
                for text in std::iter::once(*request).chain(steps.iter().map(String::as_str)) {
                    black_box(semantic_query(text));
                    black_box(lexical_query(text));
                }
            }
        })
    });
}

/// Reading the longest request the router reads ([`MAX_REQUEST_BYTES`] of a plan whose sentences
/// name files, paths, quotes and step words): what one search can cost in the readings, which
/// look at words around words.
fn read_long_request(c: &mut Criterion) {
    let sentence = "Then copy the notes from ~/Desktop/a.txt into ~/docs and delete 'old.log', \
                    so I can see the size and modification times of report.pdf, and email them \
                    to me@example.com. ";
    let long = sentence.repeat(MAX_REQUEST_BYTES / sentence.len() + 1);
    let request = bounded_request(&long);
    c.bench_function("read_long_request", |b| {
        b.iter(|| {
            let steps = split_request(black_box(request));
            for text in std::iter::once(request).chain(steps.iter().map(String::as_str)) {
                black_box(semantic_query(text));
                black_box(lexical_query(text));
            }
        })
    });
}

criterion_group!(benches, bench, read_requests, read_long_request);
criterion_main!(benches);
