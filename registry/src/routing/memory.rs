//! A request to the assistant's memory, in the words people use for their own: "remember that
//! Alice works at Acme", "forget everything about Carol", "what do you remember about Alice?".
//! Memory servers describe their tools by how they store things ("knowledge graph", "entities",
//! "observations"), and the model read such requests by their other words: the memory tools were
//! not in the top 5 for four of five. Read as "Add new information to memory: …", "Delete from
//! memory: …", "Search memory: …", they come first (docs/routing.md, "Words for memory").

use super::sentences::{opens_with_any, word_at, words_of};

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
            Ask::Add => "Add new information to memory:",
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
    // Most requests name no word of memory: told before each word is read.
    let verbs = opens_with_any(text, &["forget", "keep", "memori", "recall", "remember"]);
    if !verbs && !opens_with_any(text, EVERYDAY_HINTS) {
        return None;
    }
    let (written, words) = words_of(text);
    let asked = if verbs { verb_ask(&words) } else { None };
    asked.or_else(|| everyday_ask(&written, &words))
}

/// What the first verb of memory ("remember", "recall", "forget", "keep in mind") of the plain
/// `words` of a request asks, if one does.
fn verb_ask(words: &[String]) -> Option<Ask> {
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
        // "stop remembering my schedule".
        if word == "remembering" && prev == Some("stop") {
            return Some(Ask::Delete);
        }
        if KEEP.contains(&word.as_str()) {
            // "erase everything you remember about …": what a removal takes out.
            let removed = (i.saturating_sub(4)..i).any(|j| REMOVING.contains(&words[j].as_str()));
            Some(match prev.is_some_and(|p| ASKED.contains(&p)) {
                true if removed => Ask::Delete,
                true => Ask::Search,
                false => Ask::Add,
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

/// What [`everyday_ask`] reads, told before a request's words are: the words its phrases open
/// with.
const EVERYDAY_HINTS: &[&str] = &[
    "bear", "clear", "delete", "did", "drop", "erase", "for", "had", "have", "just", "know",
    "learn", "mental", "purge", "remove", "so", "take", "wipe",
];
/// Words between "did I" and a verb of telling ("did I ever tell you …").
const ADVERBS: &[&str] = &["already", "ever", "just", "once", "previously"];
/// Verbs of telling the assistant something: asked after "did I" or "have I" ("what did I tell
/// you about …", "have I mentioned …"), they search what it was told.
const TOLD: &[&str] = &["mention", "mentioned", "say", "said", "tell", "told"];
/// Auxiliaries that make "I told" a question ("did I tell", "have I mentioned").
const AUXILIARIES: &[&str] = &["did", "had", "have"];
/// Other places one says things: "what did I say in my last email?" asks of the mail.
const CHANNELS: &[&str] = &[
    "call", "chat", "comment", "e-mail", "email", "mail", "meeting", "message", "messages", "post",
    "slack", "thread", "tweet",
];
/// Verbs that take something out: of what the assistant knows, out of its memory.
const REMOVING: &[&str] = &[
    "clear", "delete", "drop", "erase", "purge", "remove", "wipe",
];
/// Verbs that, as a command with "that" after them, tell the assistant a fact ("learn that my
/// manager is Ingrid", "from now on, know that …"); not "I know that …".
const TAKE_IN: &[&str] = &["know", "learn"];

/// What a request in other everyday words of memory asks, if it does: "make a mental note that
/// …", "bear in mind that …", "learn that …" add; "what did I tell you about …", "have I
/// mentioned … before?" search; "drop … from memory", "wipe what you know about …" delete. From
/// the misses of our second and third memory sets (docs/routing.md, "Words for memory").
fn everyday_ask(written: &[&str], words: &[String]) -> Option<Ask> {
    let at = |i: usize| word_at(words, i);
    let channel = words.iter().any(|w| CHANNELS.contains(&w.as_str()));
    (0..words.len()).find_map(|i| {
        let (word, next) = (at(i), at(i + 1));
        let prev = i.checked_sub(1).map_or("", at);
        // A command opens its clause: "learn that …", "from now on, know that …"; so does an
        // aside that tells a fact ("for future reference, …"), which at a clause's end says what
        // something is kept for ("log the error to the knowledge base for future reference").
        let opens = |k: usize| {
            k == 0 || written[k - 1].ends_with([',', ':', ';', '.']) || at(k - 1) == "please"
        };
        let opens_clause = opens(i);
        let add = word == "mental" && next == "note"
            || word == "bear" && next == "in" && at(i + 2) == "mind"
            || TAKE_IN.contains(&word) && next == "that" && opens_clause
            // "for future reference, …", "just so you know, …", "take note: …".
            || word == "future" && next == "reference" && prev == "for" && opens(i - 1)
            || word == "so"
                && next == "you"
                && at(i + 2) == "know"
                && (opens(i) || prev == "just" && opens(i - 1))
            || word == "take" && next == "note" && opens_clause;
        if add {
            return Some(Ask::Add);
        }
        // "did I tell you …", "did I ever tell you …".
        let subject = if ADVERBS.contains(&prev) {
            i.checked_sub(2)
        } else {
            i.checked_sub(1)
        };
        let asked = TOLD.contains(&word)
            && subject.is_some_and(|s| {
                matches!(at(s), "i" | "we") && s >= 1 && AUXILIARIES.contains(&at(s - 1))
            });
        // "do you (still) have my old address on file?"
        let on_file = word == "on"
            && next == "file"
            && (0..i).any(|j| at(j) == "you" && matches!(at(j + 1), "have" | "still"));
        if asked && !channel || on_file {
            return Some(Ask::Search);
        }
        (REMOVING.contains(&word) && of_memory(words, i)).then_some(Ask::Delete)
    })
}

/// Whether what the removal verb at `i` of the plain `words` takes out is the assistant's memory:
/// "… from (your) memory", "what you know / remember about …".
fn of_memory(words: &[String], i: usize) -> bool {
    let at = |k: usize| word_at(words, k);
    (i + 1..words.len()).any(|k| {
        // "from (your) memory", not "from your calendar".
        let from_memory = at(k) == "from"
            && (at(k + 1) == "memory" || at(k + 1) == "your" && at(k + 2) == "memory");
        let what_you_know = matches!(at(k), "what" | "everything" | "all")
            && at(k + 1) == "you"
            && matches!(at(k + 2), "know" | "remember");
        from_memory || what_you_know
    })
}

/// What the model and BM25 read for `text` when it asks something of a memory: the request
/// after what it asks ("Add new information to memory: remember that …"). `None`: it asks
/// nothing of one.
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
    fn other_everyday_words_of_memory() {
        for (text, want) in [
            ("Make a mental note that Priya is vegetarian", Ask::Add),
            ("Bear in mind that the office closes early", Ask::Add),
            ("From now on, know that I go by Sam", Ask::Add),
            ("Learn that my manager is called Ingrid", Ask::Add),
            ("What did I tell you about the boiler?", Ask::Search),
            (
                "Have I mentioned my peanut allergy to you before?",
                Ask::Search,
            ),
            ("Where did I say I parked last time?", Ask::Search),
            (
                "You can drop the stuff about my landlord from memory",
                Ask::Delete,
            ),
            ("Remove my address from your memory", Ask::Delete),
            ("Drop it from memory now", Ask::Delete),
            ("Wipe what you know about my old job", Ask::Delete),
            ("Did I ever tell you my wife's name?", Ask::Search),
            ("Do you still have my old address on file?", Ask::Search),
            (
                "Erase everything you remember about the Zephyr deal",
                Ask::Delete,
            ),
            ("Stop remembering my work schedule", Ask::Delete),
            ("For future reference, my shoe size is 44", Ask::Add),
            ("Just so you know, I'm allergic to penicillin", Ask::Add),
            ("Please take note: the school starts at 8:15", Ask::Add),
        ] {
            assert_eq!(ask(text), Some(want), "{text}");
        }
        for text in [
            "I know that the build is flaky, fix it",
            "What did I say in my last email to Bob?",
            "Drop the users table",
            "Delete the standup from your calendar",
            "Remove the file from memory-dumps",
            "Show me bears in Yellowstone",
            "Did I pass the exam?",
            "Take notes during the meeting",
            "Finally, log the error to the knowledge base for future reference.",
            "Store the file on file server 2",
        ] {
            assert_eq!(ask(text), None, "{text}");
        }
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
            "for future",
            "so you",
            "did I",
            "I ever told",
            "wipe",
            "on file",
            "take",
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
