//! `[routing]`: where the embedding model is, how rankings are fused, and how the plain `/mcp`
//! endpoint exposes tools.

use std::path::PathBuf;

use registry::routing::{Fusion, ModelFiles};
use serde::{Deserialize, Serialize};

use super::error::{positive, KeyError};

/// How an endpoint lists tools.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    Serialize,
    Deserialize,
    utoipa::ToSchema,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Every tool the caller may see, plus the meta-tools.
    #[default]
    All,
    /// Only `search_tools`, `call_tool` and the pinned tools.
    Search,
    /// The meta-tools, the pinned tools and the tools the session's searches found.
    Auto,
}

/// Which embedding model routes: both are all-MiniLM-L6-v2 with its tokenizer, in one folder.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Model {
    /// Fine-tuned on public tool-retrieval data (`models/minilm-tools/`, docs/routing.md).
    #[default]
    MinilmTools,
    /// all-MiniLM-L6-v2 as published.
    Minilm,
}

impl Model {
    /// The default `min_similarity`: each model's cosines spread differently. Chosen on ETOM's
    /// 91 no-tool requests against its 1,000 graded ones (docs/routing.md, "Nothing fits").
    pub fn min_similarity(self) -> f32 {
        match self {
            Model::MinilmTools => 0.4,
            Model::Minilm => 0.35,
        }
    }

    /// Its file in the model folder (where `scripts/fetch-model` puts it).
    pub fn file(self) -> &'static str {
        match self {
            Model::MinilmTools => "minilm-tools.onnx",
            Model::Minilm => "model.onnx",
        }
    }
}

// Defaults, as the generated schema shows them.
pub const DEFAULT_THREADS: usize = 1;
pub const DEFAULT_K: usize = 5;
pub const DEFAULT_MAX_K: usize = 50;
pub const DEFAULT_AUTO_K: usize = 10;
pub const DEFAULT_QUERY_CACHE: usize = 1024;
pub const DEFAULT_PAIRS: usize = 10_000;

// The variables that override keys of `[routing]`.
pub const ENABLED_VAR: &str = "MCP_GATEWAY_ROUTING_ENABLED";
pub const MODEL_DIR_VAR: &str = "MCP_GATEWAY_MODEL_DIR";
pub const MODEL_VAR: &str = "MCP_GATEWAY_ROUTING_MODEL";
pub const ORT_LIBRARY_VAR: &str = "MCP_GATEWAY_ORT_LIBRARY";

#[derive(Debug, Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawRouting {
    /// `false`: no model is loaded; searches are lexical (`MCP_GATEWAY_ROUTING_ENABLED=false`).
    #[schemars(extend("default" = true, "x-env" = ENABLED_VAR))]
    enabled: Option<bool>,
    /// Which model embeds tools and requests (changing it re-embeds every tool once).
    #[schemars(extend("default" = "minilm-tools", "x-env" = MODEL_VAR))]
    model: Option<Model>,
    /// Where the embedding model is (default: `~/.cache/mcp-gateway/model`).
    #[schemars(extend("x-env" = MODEL_DIR_VAR))]
    model_dir: Option<PathBuf>,
    #[schemars(extend("x-env" = ORT_LIBRARY_VAR))]
    ort_library: Option<PathBuf>,
    #[schemars(extend("default" = DEFAULT_THREADS))]
    threads: Option<usize>,
    #[schemars(extend("default" = DEFAULT_K))]
    default_k: Option<usize>,
    #[schemars(extend("default" = DEFAULT_MAX_K))]
    max_k: Option<usize>,
    #[schemars(extend("default" = DEFAULT_AUTO_K))]
    auto_k: Option<usize>,
    #[schemars(extend("default" = DEFAULT_QUERY_CACHE))]
    query_cache: Option<usize>,
    #[schemars(extend("default" = "all"))]
    mode: Option<Mode>,
    #[serde(default)]
    fusion: Fusion,
    #[schemars(extend("default" = DEFAULT_PAIRS))]
    pairs: Option<usize>,
    #[schemars(extend("default" = true))]
    split_steps: Option<bool>,
    /// Below this best cosine similarity a search says that no tool fits (0: never). Default:
    /// 0.4 with `minilm-tools`, 0.35 with `minilm`.
    min_similarity: Option<f32>,
}

#[derive(Debug, Clone)]
pub struct RoutingConfig {
    /// `false`: no model is loaded; searches are lexical.
    pub enabled: bool,
    pub model: ModelFiles,
    /// Results of a search that names no `k`, and the most it may ask for.
    pub default_k: usize,
    pub max_k: usize,
    /// Tools an `auto` session keeps from its searches (the most recent found first).
    pub auto_k: usize,
    pub query_cache: usize,
    /// Mode of the plain `/mcp` endpoint.
    pub mode: Mode,
    pub fusion: Fusion,
    /// (query, tool called next) pairs kept for export.
    pub pairs: usize,
    /// Split multi-step requests and search each step (registry::routing::split_request).
    pub split_steps: bool,
    /// Below this best cosine similarity a search says that no tool fits (0: never).
    pub min_similarity: f32,
}

/// `$MCP_GATEWAY_MODEL_DIR`, else where `scripts/fetch-model` puts the model.
fn default_model_dir(env: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    if let Some(d) = env(MODEL_DIR_VAR) {
        return PathBuf::from(d);
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    home.join(".cache/mcp-gateway/model")
}

impl RoutingConfig {
    /// `env`: the variables (full names) that override keys.
    pub fn from_raw(
        raw: RawRouting,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, KeyError> {
        let default_k = raw.default_k.unwrap_or(DEFAULT_K);
        let max_k = raw.max_k.unwrap_or(DEFAULT_MAX_K);
        if default_k == 0 {
            return Err(KeyError::new("routing.default_k", "must be > 0"));
        }
        if max_k < default_k {
            return Err(KeyError::new("routing.max_k", "must be >= default_k"));
        }
        positive("routing.threads", raw.threads.map(|v| v as u64))?;
        positive("routing.auto_k", raw.auto_k.map(|v| v as u64))?;
        let f = raw.fusion;
        if [
            f.semantic_weight,
            f.lexical_weight,
            f.single_need_lexical_weight,
            f.provider_weight,
            f.action_weight,
            f.rrf_k,
        ]
        .iter()
        .any(|v| v.is_nan() || *v < 0.0)
        {
            return Err(KeyError::new(
                "routing.fusion",
                "weights and rrf_k must be >= 0",
            ));
        }
        let model = match env(MODEL_VAR) {
            Some(v) => {
                serde_json::from_value(serde_json::Value::String(v.clone())).map_err(|_| {
                    KeyError::new(
                        "routing.model",
                        format!("{MODEL_VAR}={v}: must be minilm-tools or minilm"),
                    )
                })?
            }
            None => raw.model.unwrap_or_default(),
        };
        let min_similarity = raw.min_similarity.unwrap_or(model.min_similarity());
        if !(0.0..1.0).contains(&min_similarity) {
            return Err(KeyError::new(
                "routing.min_similarity",
                "must be >= 0 and < 1",
            ));
        }
        let enabled = match env(ENABLED_VAR).as_deref() {
            Some("false" | "0") => false,
            Some(_) => true,
            None => raw.enabled.unwrap_or(true),
        };
        Ok(Self {
            enabled,
            model: ModelFiles {
                file: model.file().to_string(),
                dir: env(MODEL_DIR_VAR)
                    .map(PathBuf::from)
                    .or(raw.model_dir)
                    .unwrap_or_else(|| default_model_dir(env)),
                ort_library: env(ORT_LIBRARY_VAR).map(PathBuf::from).or(raw.ort_library),
                threads: raw.threads.unwrap_or(DEFAULT_THREADS),
            },
            default_k,
            max_k,
            auto_k: raw.auto_k.unwrap_or(DEFAULT_AUTO_K),
            query_cache: raw.query_cache.unwrap_or(DEFAULT_QUERY_CACHE),
            mode: raw.mode.unwrap_or_default(),
            fusion: f,
            pairs: raw.pairs.unwrap_or(DEFAULT_PAIRS),
            split_steps: raw.split_steps.unwrap_or(true),
            min_similarity,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(toml: &str, var: Option<&str>) -> Result<RoutingConfig, KeyError> {
        let raw: RawRouting = toml::from_str(toml).unwrap();
        RoutingConfig::from_raw(raw, &|k| (k == MODEL_VAR).then(|| var.map(String::from))?)
    }

    #[test]
    fn the_model_picks_its_file_and_its_nothing_fits_threshold() {
        let tuned = parse("", None).unwrap();
        assert_eq!(tuned.model.file, "minilm-tools.onnx");
        assert_eq!(tuned.min_similarity, 0.4);
        let base = parse(r#"model = "minilm""#, None).unwrap();
        assert_eq!(base.model.file, "model.onnx");
        assert_eq!(base.min_similarity, 0.35);
        // A threshold set in the file stays, whichever model.
        let set = parse("model = \"minilm\"\nmin_similarity = 0.5", None).unwrap();
        assert_eq!(set.min_similarity, 0.5);
        // The variable wins over the file, and a wrong value is named.
        let env = parse(r#"model = "minilm""#, Some("minilm-tools")).unwrap();
        assert_eq!(env.model.file, "minilm-tools.onnx");
        let bad = parse("", Some("bge")).err().unwrap();
        assert!(
            bad.message.contains("MCP_GATEWAY_ROUTING_MODEL=bge"),
            "{}",
            bad.message
        );
        assert!(toml::from_str::<RawRouting>(r#"model = "bge""#).is_err());
    }

    #[test]
    fn fusion_weights_default_and_a_negative_one_is_named() {
        let f = parse("", None).unwrap().fusion;
        assert_eq!((f.lexical_weight, f.provider_weight), (0.5, 0.2));
        assert_eq!((f.action_weight, f.single_need_lexical_weight), (0.2, 0.35));
        let off = parse("[fusion]\nprovider_weight = 0", None).unwrap().fusion;
        assert_eq!((off.lexical_weight, off.provider_weight), (0.5, 0.0));
        let bad = parse("[fusion]\nprovider_weight = -0.1", None)
            .err()
            .unwrap();
        assert_eq!(bad.key, "routing.fusion");
        assert!(toml::from_str::<RawRouting>("[fusion]\nprovider = 1").is_err());
    }
}
