//! BM25 over tool texts (the `bm25` crate's scorer), with a tokenizer made for tool catalogs:
//! identifiers split into words, English stemming, common words dropped.

use bm25::{Embedder, EmbedderBuilder, Scorer, Tokenizer};
use rust_stemmers::{Algorithm, Stemmer};

use super::text::humanize;

/// Words too common in requests and descriptions to tell tools apart.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "for", "from", "how", "i", "if",
    "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "please", "s", "so", "that",
    "the", "this", "to", "was", "we", "what", "when", "which", "with", "you", "your",
];

pub struct ToolTokenizer {
    stemmer: Stemmer,
}

impl Default for ToolTokenizer {
    fn default() -> Self {
        Self {
            stemmer: Stemmer::create(Algorithm::English),
        }
    }
}

impl Tokenizer for ToolTokenizer {
    fn tokenize(&self, input_text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for raw in input_text.split(|c: char| !c.is_alphanumeric() && c != '_' && c != '-') {
            if raw.is_empty() {
                continue;
            }
            for word in humanize(raw).split(' ') {
                if word.is_empty() || STOP_WORDS.contains(&word) {
                    continue;
                }
                out.push(self.stemmer.stem(word).into_owned());
            }
        }
        out
    }
}

/// Tool texts scored with BM25; documents are added and removed one at a time.
pub struct Lexical {
    embedder: Embedder<u32, ToolTokenizer>,
    scorer: Scorer<u32>,
}

/// Average tool text length in tokens (measured on the evaluation catalog): BM25's length
/// normalisation needs one before the first document arrives.
const AVGDL: f32 = 40.0;

impl Default for Lexical {
    fn default() -> Self {
        Self {
            embedder: EmbedderBuilder::<u32, ToolTokenizer>::with_avgdl(AVGDL)
                .tokenizer(ToolTokenizer::default())
                .build(),
            scorer: Scorer::new(),
        }
    }
}

impl Lexical {
    pub fn upsert(&mut self, id: u32, text: &str) {
        self.scorer.upsert(&id, self.embedder.embed(text));
    }

    pub fn remove(&mut self, id: u32) {
        self.scorer.remove(&id);
    }

    /// Documents that share a word with the query, best first.
    pub fn search(&self, query: &str) -> Vec<(u32, f32)> {
        let q = self.embedder.embed(query);
        self.scorer
            .matches(&q)
            .into_iter()
            .map(|d| (d.id, d.score))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_and_inflections_match() {
        let t = ToolTokenizer::default();
        assert_eq!(
            t.tokenize("git_status: Shows the working tree's files"),
            ["git", "status", "show", "work", "tree", "file"]
        );
        let mut l = Lexical::default();
        l.upsert(1, "git status. Shows the working tree status");
        l.upsert(2, "read text file. Reads a file from disk");
        l.upsert(3, "fetch. Fetches a URL from the internet");
        assert_eq!(l.search("read the files")[0].0, 2);
        assert_eq!(l.search("working tree")[0].0, 1);
        l.remove(2);
        assert!(l.search("read the files").iter().all(|(id, _)| *id != 2));
    }
}
