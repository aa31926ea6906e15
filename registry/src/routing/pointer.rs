//! A part of a request that only points at the request's other parts: "Could you help me with a
//! few tasks?", "Can you assist me with these?", "Could you please help me with the following
//! tasks?". It asks for nothing the other parts do not, so it is not a step of its own; searched
//! as one it takes a place in the answer for whatever tool speaks of help or asking (a tool that
//! asks the user, a help command).
//!
//! Read only in the form where the help is for a count or a pointer and at most a generic noun:
//! "help me with a math problem" names a domain and "help me plan a trip" an action, so neither
//! is read. Measured in docs/routing.md.

use super::sentences::words_of;

/// Words that may open the ask before "help"/"assist".
const ASKING: &[&str] = &["can", "could", "would", "will", "you", "please", "kindly"];

/// Who is helped, between the verb and "with".
const HELPED: &[&str] = &["me", "us", "them"];

/// What the help is for, when it points rather than names: a count or a pointer.
const POINTERS: &[&[&str]] = &[
    &["the", "following"],
    &["all", "of", "this"],
    &["all", "of", "these"],
    &["all", "this"],
    &["all", "these"],
    &["a", "couple", "of"],
    &["a", "few"],
    &["these"],
    &["this"],
    &["those"],
    &["some"],
    &["several"],
    &["multiple"],
    &["two"],
    &["three"],
    &["four"],
    &["a", "two-part"],
    &["a", "multi-part"],
];

/// Nouns that name no domain: what a pointer may count.
const GENERIC: &[&str] = &[
    "calculation",
    "calculations",
    "item",
    "items",
    "problem",
    "problems",
    "queries",
    "query",
    "question",
    "questions",
    "request",
    "requests",
    "searches",
    "task",
    "tasks",
    "thing",
    "things",
];

/// Whether `part` only asks for help with the request's other parts.
pub(super) fn points_only(part: &str) -> bool {
    let (_, words) = words_of(part);
    let words: Vec<&str> = words
        .iter()
        .map(String::as_str)
        .filter(|w| !w.is_empty())
        .collect();
    let mut i = 0;
    while i < words.len() && ASKING.contains(&words[i]) {
        i += 1;
    }
    if !matches!(words.get(i), Some(&("help" | "assist"))) {
        return false;
    }
    i += 1;
    if words.get(i).is_some_and(|w| HELPED.contains(w)) {
        i += 1;
    }
    if words.get(i) != Some(&"with") {
        return false;
    }
    i += 1;
    let Some(pointer) = POINTERS.iter().find(|p| words[i..].starts_with(p)) else {
        return false;
    };
    i += pointer.len();
    if words.get(i).is_some_and(|w| GENERIC.contains(w)) {
        i += 1;
    }
    i == words.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_for_help_with_what_follows_points_only() {
        for part in [
            "Could you help me with a few tasks?",
            "\"Can you help me with a few calculations?",
            "Could you please help me with the following tasks?",
            "Can you assist me with these?",
            "Can you assist with these searches?",
            "Could you help me with a two-part request?",
            "Can you help me with all of this?",
            "Could you please help me with a couple of calculations?",
        ] {
            assert!(points_only(part), "{part}");
        }
    }

    #[test]
    fn help_that_names_a_need_is_a_step() {
        for part in [
            "Can you help me with a math problem?",
            "Could you help me plan a trip?",
            "can you help me find a salon in San Fran?",
            "Would you please assist me with locating a therapist in Berkeley?",
            "Can you help me with a few tasks and book a hotel?",
            "Help me with these files in /tmp",
        ] {
            assert!(!points_only(part), "{part}");
        }
    }
}
