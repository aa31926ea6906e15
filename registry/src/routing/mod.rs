//! Semantic tool routing: the text that stands for each tool, its embedding (local ONNX model),
//! a hybrid index (approximate nearest neighbours + BM25, fused by reciprocal rank), and the
//! measures of retrieval quality.

mod action;
mod ann;
mod arithmetic;
mod calendar;
mod command;
pub mod embedder;
pub mod eval;
mod files;
mod index;
mod lexical;
mod made;
mod memory;
mod named;
mod notes;
mod pointer;
mod purpose;
mod query;
mod reminder;
mod sent;
mod sentences;
mod spelling;
mod split;
mod text;

pub use ann::dot;
/// The two texts of a tool: the full one for BM25, the gist for the model (keyed by its hash).
pub fn tool_doc(upstream: &str, name: &str, definition: &serde_json::Value) -> ToolDoc {
    let gist = tool_text(upstream, definition, Detail::Gist);
    ToolDoc {
        upstream: upstream.to_string(),
        name: name.to_string(),
        text: tool_text(upstream, definition, Detail::Full),
        hash: text_hash(&gist),
        gist,
    }
}

pub use crate::hash::text_hash;
pub use embedder::{Embed, EmbedError, ModelFiles, OnnxEmbedder, QueryCache};
pub use index::{Fusion, FusionMethod, Hit, Method, ToolDoc, ToolIndex};
pub use query::{lexical_query, semantic_query};
pub use split::{answer_size, bounded_request, split_request, MAX_PARTS, MAX_REQUEST_BYTES};
pub use text::{humanize, tool_text, Detail};
