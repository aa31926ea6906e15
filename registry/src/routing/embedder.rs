//! Sentence embeddings from local model files (fastembed over a dynamically loaded ONNX Runtime:
//! nothing is downloaded at build or run time), and the LRU cache of query embeddings.

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use fastembed::{
    InitOptionsUserDefined, Pooling, TextEmbedding, TokenizerFiles, UserDefinedEmbeddingModel,
};
use lru::LruCache;
use sha2::{Digest, Sha256};

/// Longest input in tokens: tool texts beyond it are cut. 128, as the shipped model was
/// fine-tuned (and the published tokenizer is set): at 256 a batch of long gists made an
/// inference's buffers grow by 100-200 MB, the peak of indexing, for no measurable recall
/// (docs/routing.md, "Truncation length").
const MAX_LENGTH: usize = 128;
/// Texts embedded, stored and logged together when indexing (the embedder splits them into
/// length-sorted inferences across its sessions).
pub const BATCH: usize = 256;

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("{0}")]
    Load(String),
    #[error("embedding failed: {0}")]
    Run(String),
}

/// Turns texts into unit vectors of one dimension; the model id names the model exactly (a
/// different model means different vectors).
pub trait Embed: Send + Sync {
    fn model_id(&self) -> &str;
    fn dim(&self) -> usize;
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError>;
    /// The file of the graph that runs, when it is one (operators see which kernels their CPU
    /// got: the model file or its `MatMulInteger` rewrite).
    fn graph(&self) -> Option<&str> {
        None
    }
    /// A bulk run is over: memory kept only to make bulk runs fast may go. Returns whether
    /// any did (then it is worth handing freed memory back to the system).
    fn idle(&self) -> bool {
        false
    }
}

/// Where the model files are: the ONNX model (`file`), `tokenizer.json`, `config.json`,
/// `special_tokens_map.json`, `tokenizer_config.json`; and the ONNX Runtime library.
#[derive(Debug, Clone)]
pub struct ModelFiles {
    pub dir: PathBuf,
    /// The ONNX model's file name in `dir` (models that share a tokenizer share the folder).
    pub file: String,
    /// Defaults to `libonnxruntime.so` in `dir` (where `scripts/fetch-model` puts it).
    pub ort_library: Option<PathBuf>,
    /// ONNX sessions, each single-threaded: a catalog is spread over all of them, queries use
    /// the first. Each costs about 105 MB; the extra ones exist only while a catalog is being
    /// embedded (docs/routing.md, "Indexing speed").
    pub threads: usize,
}

/// The tokenizer's files, next to the model.
const TOKENIZER_FILES: [&str; 4] = [
    "tokenizer.json",
    "config.json",
    "special_tokens_map.json",
    "tokenizer_config.json",
];

impl ModelFiles {
    pub fn ort_library(&self) -> PathBuf {
        self.ort_library
            .clone()
            .unwrap_or_else(|| self.dir.join("libonnxruntime.so"))
    }

    /// The files loading needs that are not there (without reading any): what `check-config`
    /// warns about before a start would fall back to words only.
    pub fn missing(&self) -> Vec<PathBuf> {
        std::iter::once(self.ort_library())
            .chain(std::iter::once(self.dir.join(&self.file)))
            .chain(TOKENIZER_FILES.iter().map(|f| self.dir.join(f)))
            .filter(|p| !p.is_file())
            .collect()
    }
}

/// all-MiniLM-L6-v2 (or any BERT-like sentence model with mean pooling) through fastembed.
/// One ONNX session runs single-threaded for queries; a catalog is split across it and up to
/// `threads - 1` more, which are built for the bulk run and dropped by [`Embed::idle`] (each
/// session holds about 105 MB: an idle gateway keeps only one).
pub struct OnnxEmbedder {
    primary: Mutex<TextEmbedding>,
    extra: Mutex<Vec<Arc<Mutex<TextEmbedding>>>>,
    files: ModelFiles,
    /// The graph file the sessions run ([`graph_file`]).
    graph: String,
    id: String,
    dim: usize,
}

/// The graph to run for model file `file` in `dir`: on an x86-64 CPU its
/// `<name>.matmul-integer.onnx` rewrite when `scripts/fetch-model` made one (ONNX Runtime's
/// integer GEMM: 2.4x faster than the `MatMulNBits` kernels of `<name>.onnx` on a CPU without
/// VNNI, 2.3x with AVX-512 VNNI; docs/benchmarks.md, "The int8 kernels on a CPU with VNNI");
/// otherwise `file` itself.
pub fn graph_file(dir: &Path, file: &str) -> String {
    let integer = format!("{}.matmul-integer.onnx", file.trim_end_matches(".onnx"));
    if cfg!(target_arch = "x86_64") && dir.join(&integer).is_file() {
        integer
    } else {
        file.to_string()
    }
}

/// Texts from which a bulk run uses the extra sessions (building one takes about a second).
const EXTRA_FROM: usize = 64;

/// Vectors with the position of their text.
type Indexed = Vec<(usize, Vec<f32>)>;

/// Texts per inference when embedding many: sorted by length first, so a batch pads little.
const SUB_BATCH: usize = 4;

fn read(dir: &Path, name: &str) -> Result<Vec<u8>, EmbedError> {
    let path = dir.join(name);
    std::fs::read(&path)
        .map_err(|e| EmbedError::Load(format!("cannot read {}: {e}", path.display())))
}

/// Loads ONNX Runtime once per process (the library cannot be swapped once loaded).
fn load_runtime(lib: &Path) -> Result<(), EmbedError> {
    static LOADED: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    let loaded = LOADED.get_or_init(|| {
        ort::init_from(lib)
            .map(|_| lib.to_path_buf())
            .map_err(|e| format!("cannot load {}: {e}", lib.display()))
    });
    match loaded {
        Ok(_) => Ok(()),
        Err(e) => Err(EmbedError::Load(e.clone())),
    }
}

impl OnnxEmbedder {
    /// Loads the model. Fails with a message that says which file is missing or bad; never
    /// panics (a missing ONNX Runtime would, without the explicit `init_from`).
    pub fn load(files: &ModelFiles) -> Result<Self, EmbedError> {
        let lib = files.ort_library();
        if !lib.is_file() {
            return Err(EmbedError::Load(format!(
                "ONNX Runtime library not found at {}",
                lib.display()
            )));
        }
        let onnx = read(&files.dir, &files.file)?;
        let tokenizer = tokenizer_files(&files.dir)?;
        load_runtime(&lib)?;
        // Named by the model file whichever graph runs: both give the same vectors to within
        // rounding, so replicas on other architectures keep sharing the stored ones.
        let id = format!(
            "{}:{}",
            files.file.trim_end_matches(".onnx"),
            &crate::hash::to_hex(&Sha256::digest(&onnx))[..16]
        );
        let graph = graph_file(&files.dir, &files.file);
        let onnx = match graph == files.file {
            true => onnx,
            false => read(&files.dir, &graph)?,
        };
        let mut primary = session_of(onnx, tokenizer)?;
        let probe = primary
            .embed(["probe"], None)
            .map_err(|e| EmbedError::Load(format!("the model does not run: {e}")))?;
        Ok(Self {
            dim: probe[0].len(),
            primary: Mutex::new(primary),
            extra: Mutex::default(),
            files: files.clone(),
            graph,
            id,
        })
    }

    /// The extra sessions of a bulk run, built if they are not there yet.
    fn extras(&self) -> Result<Vec<Arc<Mutex<TextEmbedding>>>, EmbedError> {
        let want = self.files.threads.saturating_sub(1);
        let mut extra = self.extra.lock().unwrap();
        if extra.len() < want {
            let onnx = read(&self.files.dir, &self.graph)?;
            let tokenizer = tokenizer_files(&self.files.dir)?;
            while extra.len() < want {
                extra.push(Arc::new(Mutex::new(session_of(
                    onnx.clone(),
                    tokenizer.clone(),
                )?)));
            }
        }
        Ok(extra.clone())
    }
}

fn tokenizer_files(dir: &Path) -> Result<TokenizerFiles, EmbedError> {
    let [tokenizer, config, special_tokens_map, tokenizer_config] = TOKENIZER_FILES;
    Ok(TokenizerFiles {
        tokenizer_file: read(dir, tokenizer)?,
        config_file: read(dir, config)?,
        special_tokens_map_file: read(dir, special_tokens_map)?,
        tokenizer_config_file: read(dir, tokenizer_config)?,
    })
}

/// One single-threaded ONNX session of the model.
fn session_of(onnx: Vec<u8>, tokenizer: TokenizerFiles) -> Result<TextEmbedding, EmbedError> {
    let model = UserDefinedEmbeddingModel::new(onnx, tokenizer).with_pooling(Pooling::Mean);
    // Without ONNX Runtime's CPU arena: it keeps the largest inference's memory for good.
    let cpu = ort::ep::CPU::default().with_arena_allocator(false).build();
    let options = InitOptionsUserDefined::new()
        .with_max_length(MAX_LENGTH)
        .with_intra_threads(1)
        .with_execution_providers(vec![cpu]);
    TextEmbedding::try_new_from_user_defined(model, options)
        .map_err(|e| EmbedError::Load(format!("cannot load the model: {e}")))
}

/// A session, waiting for it (a panic in an earlier inference leaves it usable).
fn hold(m: &Mutex<TextEmbedding>) -> MutexGuard<'_, TextEmbedding> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn infer(model: &mut TextEmbedding, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
    model
        .embed(texts, Some(texts.len().max(1)))
        .map_err(|e| EmbedError::Run(e.to_string()))
}

impl Embed for OnnxEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn graph(&self) -> Option<&str> {
        Some(&self.graph)
    }

    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.len() <= 1 {
            return infer(&mut hold(&self.primary), texts);
        }
        let extras = if texts.len() >= EXTRA_FROM {
            self.extras()?
        } else {
            Vec::new()
        };
        let sessions: Vec<&Mutex<TextEmbedding>> = std::iter::once(&self.primary)
            .chain(extras.iter().map(|e| &**e))
            .collect();
        // Batches of similar length (a batch pads to its longest text: unsorted, padding cost
        // more than batching saved), handed to the sessions in turn.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let batches: Vec<Vec<usize>> = order.chunks(SUB_BATCH).map(<[usize]>::to_vec).collect();
        let next = std::sync::atomic::AtomicUsize::new(0);
        let workers = sessions.len().min(batches.len());
        let results: Vec<Result<Indexed, EmbedError>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..workers)
                .map(|w| {
                    let (batches, next, session) = (&batches, &next, sessions[w]);
                    s.spawn(move || {
                        let mut model = hold(session);
                        let mut out = Vec::new();
                        loop {
                            let b = next.fetch_add(1, Ordering::Relaxed);
                            let Some(batch) = batches.get(b) else {
                                return Ok(out);
                            };
                            let part: Vec<String> =
                                batch.iter().map(|&i| texts[i].clone()).collect();
                            let vectors = infer(&mut model, &part)?;
                            out.extend(batch.iter().copied().zip(vectors));
                        }
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(EmbedError::Run("panicked".into())))
                })
                .collect()
        });
        let mut vectors = vec![Vec::new(); texts.len()];
        for r in results {
            for (i, v) in r? {
                vectors[i] = v;
            }
        }
        Ok(vectors)
    }

    fn idle(&self) -> bool {
        let mut extra = self.extra.lock().unwrap();
        let had = !extra.is_empty();
        extra.clear();
        had
    }
}

/// Query embeddings by query text, least recently used dropped first: a repeated query costs no
/// inference.
pub struct QueryCache {
    cache: Mutex<LruCache<String, Arc<[f32]>>>,
    pub hits: AtomicU64,
    pub misses: AtomicU64,
}

impl QueryCache {
    pub fn new(capacity: usize) -> Self {
        Self {
            cache: Mutex::new(LruCache::new(
                NonZeroUsize::new(capacity.max(1)).expect("non-zero"),
            )),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        }
    }

    /// A cached embedding (counted as a hit or a miss).
    pub fn get(&self, query: &str) -> Option<Arc<[f32]>> {
        let found = self.cache.lock().unwrap().get(query).cloned();
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    pub fn put(&self, query: &str, v: Arc<[f32]>) {
        self.cache.lock().unwrap().put(query.to_string(), v);
    }

    /// The query's embedding, from the cache or computed (outside the cache's lock) and kept.
    pub fn get_or_embed(
        &self,
        embedder: &dyn Embed,
        query: &str,
    ) -> Result<Arc<[f32]>, EmbedError> {
        if let Some(v) = self.cache.lock().unwrap().get(query) {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Ok(v.clone());
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let v: Arc<[f32]> = embedder
            .embed(&[query.to_string()])?
            .pop()
            .ok_or_else(|| EmbedError::Run("no embedding returned".into()))?
            .into();
        self.cache.lock().unwrap().put(query.to_string(), v.clone());
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Counting(AtomicU64);
    impl Embed for Counting {
        fn model_id(&self) -> &str {
            "counting"
        }
        fn dim(&self) -> usize {
            1
        }
        fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
            self.0.fetch_add(1, Ordering::Relaxed);
            Ok(texts.iter().map(|t| vec![t.len() as f32]).collect())
        }
    }

    #[test]
    fn repeated_queries_cost_no_inference_and_old_ones_are_dropped() {
        let e = Counting(AtomicU64::new(0));
        let c = QueryCache::new(2);
        c.get_or_embed(&e, "a").unwrap();
        c.get_or_embed(&e, "a").unwrap();
        c.get_or_embed(&e, "bb").unwrap();
        c.get_or_embed(&e, "ccc").unwrap();
        assert_eq!(e.0.load(Ordering::Relaxed), 3);
        assert_eq!(c.hits.load(Ordering::Relaxed), 1);
        // "a" was the least recently used of three with room for two.
        c.get_or_embed(&e, "a").unwrap();
        assert_eq!(e.0.load(Ordering::Relaxed), 4);
    }

    /// On x86-64 the integer-GEMM rewrite runs when it is there; elsewhere, or without the
    /// rewrite (a folder of its own, an older fetch), the model file itself.
    #[test]
    fn the_graph_is_chosen_by_the_architecture_and_what_the_folder_holds() {
        let dir = tempfile::TempDir::new().unwrap();
        std::fs::write(dir.path().join("minilm-tools.onnx"), "").unwrap();
        std::fs::write(dir.path().join("minilm-tools.matmul-integer.onnx"), "").unwrap();
        let chosen = graph_file(dir.path(), "minilm-tools.onnx");
        match cfg!(target_arch = "x86_64") {
            true => assert_eq!(chosen, "minilm-tools.matmul-integer.onnx"),
            false => assert_eq!(chosen, "minilm-tools.onnx"),
        }
        assert_eq!(graph_file(dir.path(), "model.onnx"), "model.onnx");
    }

    #[test]
    fn missing_files_are_listed_without_loading() {
        let dir = tempfile::TempDir::new().unwrap();
        let files = ModelFiles {
            dir: dir.path().into(),
            file: "minilm-tools.onnx".into(),
            ort_library: None,
            threads: 1,
        };
        assert_eq!(files.missing().len(), 6);
        for f in ["libonnxruntime.so", "minilm-tools.onnx"]
            .into_iter()
            .chain(TOKENIZER_FILES)
        {
            std::fs::write(dir.path().join(f), b"x").unwrap();
        }
        assert_eq!(files.missing(), Vec::<PathBuf>::new());
        std::fs::remove_file(dir.path().join("tokenizer.json")).unwrap();
        assert_eq!(files.missing(), [dir.path().join("tokenizer.json")]);
    }

    #[test]
    fn missing_files_are_named() {
        let err = OnnxEmbedder::load(&ModelFiles {
            dir: "/nonexistent/model".into(),
            file: "model.onnx".into(),
            ort_library: None,
            threads: 1,
        })
        .err()
        .unwrap();
        assert!(
            err.to_string()
                .contains("/nonexistent/model/libonnxruntime.so"),
            "{err}"
        );
    }
}
