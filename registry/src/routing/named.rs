//! The upstreams a step of a request names: "query our Memgraph database …", "run it on the
//! greptimedb-mcp-server", "put the summary on HackMD". A product's name is the strongest
//! evidence of which tools a step wants, yet in a long step its one word weighs little against
//! the others ("… the top 3 investors …" finds finance tools). A word counts as a name when it
//! is a word of few upstreams' names and almost no other tool mentions it (so "data", "search"
//! and "Google" name nobody), and when the step writes it as a name: capitalised (not as the
//! step's first word) or as an identifier ("greptimedb-mcp-server"), so that an upstream
//! called `everything` or `memory` is not named by "list everything". Measured in
//! docs/routing.md ("A step that names its upstream").

use std::collections::HashMap;

/// Words of upstream names that name no product.
const GENERIC: &[&str] = &[
    "and", "api", "apis", "for", "mcp", "model", "official", "protocol", "server", "servers",
    "the", "tool", "tools", "via", "with",
];

/// A name word may belong to this many upstreams ("Obsidian MCP Server" and "Obsidian Local REST
/// API"); a word of more names is a kind of product, not one.
const MAX_UPSTREAMS: usize = 3;

/// A name word may appear in this many tools of other upstreams (a tool that works with the
/// product: "Export a HackMD note"); beyond it the word is one of the catalog's common words.
const MAX_OTHER_MENTIONS: usize = 3;

/// The name words of a catalog's upstreams: word → the upstreams it names.
#[derive(Debug, Default)]
pub struct UpstreamNames {
    words: HashMap<String, Vec<String>>,
}

/// The words of a name or of a written word: lowercase letters and digits, split at anything
/// else ("AITable.ai" → "aitable", "ai"; "greptimedb-mcp-server" → "greptimedb", "mcp", …).
fn name_words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3 && !w.chars().all(|c| c.is_ascii_digit()))
        .map(str::to_lowercase)
}

impl UpstreamNames {
    /// From the names of the catalog's upstreams and `mentions(word, upstreams)`: how many tools
    /// of other upstreams than `upstreams` mention `word`.
    pub fn new<'a>(
        upstreams: impl IntoIterator<Item = &'a str>,
        mentions: impl Fn(&str, &[String]) -> usize,
    ) -> Self {
        let mut owners: HashMap<String, Vec<String>> = HashMap::new();
        for upstream in upstreams {
            for word in name_words(upstream) {
                if GENERIC.contains(&word.as_str()) {
                    continue;
                }
                let list = owners.entry(word).or_default();
                if !list.iter().any(|u| u == upstream) {
                    list.push(upstream.to_string());
                }
            }
        }
        owners.retain(|word, ups| {
            ups.len() <= MAX_UPSTREAMS && mentions(word, ups) <= MAX_OTHER_MENTIONS
        });
        UpstreamNames { words: owners }
    }

    /// The upstreams `step` names, each once, in the order it names them.
    pub fn named_by(&self, step: &str) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        if self.words.is_empty() {
            return out;
        }
        for (i, written) in step.split_whitespace().enumerate() {
            let capitalised = i > 0 && written.chars().any(char::is_uppercase);
            if !capitalised && !is_identifier(written) {
                continue;
            }
            for word in name_words(written) {
                for upstream in self.words.get(&word).into_iter().flatten() {
                    if !out.contains(&upstream.as_str()) {
                        out.push(upstream);
                    }
                }
            }
        }
        out
    }
}

/// Whether a written word is an identifier: letters or digits joined by "-", "_" or "." inside
/// it ("greptimedb-mcp-server", "my_db"), not a hyphenated English word ("real-time") — which
/// has no digit and at most one joint — nor a sentence's end.
fn is_identifier(written: &str) -> bool {
    let core = written.trim_matches(|c: char| !c.is_alphanumeric());
    let joints = core
        .chars()
        .filter(|c| matches!(c, '-' | '_' | '.'))
        .count();
    let digits = core.chars().any(|c| c.is_ascii_digit());
    core.contains('_') || joints >= 2 || (joints == 1 && digits)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> UpstreamNames {
        let ups = [
            "Memgraph MCP Server",
            "greptimedb-mcp-server",
            "HackMD MCP Server",
            "Google Search Server",
            "Google Maps",
            "everything",
        ];
        // "google" is mentioned by many other tools; nothing else is.
        UpstreamNames::new(ups, |w, _| if w == "google" { 40 } else { 0 })
    }

    #[test]
    fn a_capitalised_product_name_names_its_upstream() {
        let n = names();
        assert_eq!(
            n.named_by("Then query our Memgraph database for the top investors"),
            vec!["Memgraph MCP Server"]
        );
        assert_eq!(
            n.named_by("and publish it on HackMD."),
            vec!["HackMD MCP Server"]
        );
    }

    #[test]
    fn an_identifier_names_its_upstream_in_any_case() {
        assert_eq!(
            names().named_by("run this query on the greptimedb-mcp-server please"),
            vec!["greptimedb-mcp-server"]
        );
    }

    #[test]
    fn common_words_and_lowercase_english_name_nobody() {
        let n = names();
        assert!(n.named_by("list everything in the folder").is_empty());
        assert!(n.named_by("Search Google for the latest news").is_empty());
        assert!(
            n.named_by("Memgraph is what we use").is_empty(),
            "first word"
        );
        assert!(n.named_by("a real-time feed of the MCP server").is_empty());
    }

    #[test]
    fn a_word_of_too_many_upstreams_names_none() {
        let ups = ["Acme One", "Acme Two", "Acme Three", "Acme Four"];
        let n = UpstreamNames::new(ups, |_, _| 0);
        assert!(n.named_by("ask Acme for it").is_empty());
        assert_eq!(n.named_by("ask Three for it"), vec!["Acme Three"]);
    }

    #[test]
    fn odd_text_names_nobody_and_does_not_panic() {
        let n = names();
        for text in [
            "",
            " ",
            "…",
            "Ünïcödé Memgraph—HackMD",
            "a-b-c",
            "x.y.z",
            "__",
        ] {
            let _ = n.named_by(text);
        }
        assert_eq!(
            n.named_by("to Memgraph—HackMD"),
            vec!["Memgraph MCP Server", "HackMD MCP Server"]
        );
    }
}
