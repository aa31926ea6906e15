//! A request to the assistant's memory, in the words people use for their own: "remember that
//! Alice works at Acme", "forget everything about Carol", "what do you remember about Alice?".
//! Memory servers describe their tools by how they store things ("knowledge graph", "entities",
//! "observations"), and the model read such requests by their other words: the memory tools were
//! not in the top 5 for four of five. Read as "Add to memory: …", "Delete from memory: …",
//! "Search memory: …", they come first (docs/routing.md, "Words for memory").

use super::sentences::{opens_with_any, plain_word};

/// What a request asks of a memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ask {
    Add,
    Delete,
    Search,
}

impl Ask {
    /// What the model and BM25 read before the request.
    fn phrase(self) -> &'static str {
        match self {
            Ask::Add => "Add to memory:",
            Ask::Delete => "Delete from memory:",
            Ask::Search => "Search memory:",
        }
    }
}

/// Verbs of keeping something in mind.
const KEEP: &[&str] = &["memorise", "memorize", "remember"];
/// Words before "forget" that make it a reminder ("don't forget to …").
const NEGATIONS: &[&str] = &["don't", "dont", "never", "not"];
/// Words before a verb of memory that make it a statement about someone ("I forget its name").
const SPEAKERS: &[&str] = &["he", "i", "she", "they", "we"];
/// Words just before "remember" that make it a question to the memory ("what do you remember").
const ASKED: &[&str] = &["u", "you"];

/// What the first verb of memory in `text` asks, if one does: "remember that …", "keep in mind
/// that …" and "don't forget that …" add, "do you remember …" and "recall …" search, "forget …"
/// deletes. "Remember to call Bob" and "don't forget to …" ask for a reminder, not a memory.
fn ask(text: &str) -> Option<Ask> {
    // Most requests name no verb of memory: told before each word is read.
    if !opens_with_any(text, &["forget", "keep", "memori", "recall", "remember"]) {
        return None;
    }
    let words: Vec<String> = text.split_whitespace().map(plain_word).collect();
    words.iter().enumerate().find_map(|(i, word)| {
        let next = words.get(i + 1).map(String::as_str);
        let prev = i.checked_sub(1).map(|j| words[j].as_str());
        // "remember to …" asks for a reminder; "I forget the title", "we remember that …" say
        // what someone does, and ask nothing of a memory.
        if next == Some("to") || prev.is_some_and(|p| SPEAKERS.contains(&p)) {
            return None;
        }
        // "keep in mind that …".
        let in_mind =
            word == "keep" && next == Some("in") && words.get(i + 2).is_some_and(|w| w == "mind");
        if in_mind {
            return Some(Ask::Add);
        }
        if KEEP.contains(&word.as_str()) {
            Some(if prev.is_some_and(|p| ASKED.contains(&p)) {
                Ask::Search
            } else {
                Ask::Add
            })
        } else if word == "recall" {
            Some(Ask::Search)
        } else if word == "forget" {
            // "don't forget that …" asks to remember; "don't forget the milk", for a reminder.
            match (prev.is_some_and(|p| NEGATIONS.contains(&p)), next) {
                (false, _) => Some(Ask::Delete),
                (true, Some("that")) => Some(Ask::Add),
                (true, _) => None,
            }
        } else {
            None
        }
    })
}

/// What the model and BM25 read for `text` when it asks something of a memory: the request
/// after what it asks ("Add to memory: remember that …"). `None`: it asks nothing of one.
pub(crate) fn as_memory(text: &str) -> Option<String> {
    ask(text).map(|a| format!("{} {text}", a.phrase()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_words_for_memory_say_what_to_do_with_it() {
        assert_eq!(ask("remember that Alice works at Acme"), Some(Ask::Add));
        assert_eq!(
            ask("Please memorize: the key rotates monthly"),
            Some(Ask::Add)
        );
        assert_eq!(
            ask("forget everything you know about Carol"),
            Some(Ask::Delete)
        );
        assert_eq!(ask("what do you remember about Alice?"), Some(Ask::Search));
        assert_eq!(
            ask("Do you recall anything about Falcon?"),
            Some(Ask::Search)
        );
        assert_eq!(
            ask("Keep in mind that I prefer aisle seats"),
            Some(Ask::Add)
        );
        assert_eq!(ask("Don't forget that the review moved"), Some(Ask::Add));
    }

    #[test]
    fn a_reminder_is_no_memory() {
        assert_eq!(ask("remember to call Bob at five"), None);
        assert_eq!(ask("don't forget to water the plants"), None);
        assert_eq!(ask("Don't forget the milk"), None);
        assert_eq!(ask("I forget the name of that song, find it"), None);
        assert_eq!(ask("We remember the hotel was near the station"), None);
        assert_eq!(ask("list my open pull requests"), None);
    }

    #[test]
    fn any_text_is_read_whole() {
        for text in [
            "",
            "“docs” ❤️ rémember",
            "k❤️",
            "forget",
            "keep in",
            "Recall…",
            "日本 remember",
        ] {
            let _ = as_memory(text);
        }
        assert_eq!(ask("日本 remember that it rains"), Some(Ask::Add));
    }

    #[test]
    fn the_request_is_read_after_what_it_asks() {
        assert_eq!(
            as_memory("forget that Alice likes tea").as_deref(),
            Some("Delete from memory: forget that Alice likes tea")
        );
    }
}
