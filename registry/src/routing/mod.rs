//! Semantic tool routing: the text that stands for each tool, its embedding (local ONNX model),
//! a hybrid index (approximate nearest neighbours + BM25, fused by reciprocal rank), and the
//! measures of retrieval quality.

mod ann;
pub mod embedder;
pub mod eval;
mod index;
mod lexical;
mod text;

pub use ann::dot;
pub use embedder::{Embed, EmbedError, ModelFiles, OnnxEmbedder, QueryCache};
pub use index::{Fusion, Hit, Method, ToolDoc, ToolIndex};
pub use text::{humanize, text_hash, tool_text};
