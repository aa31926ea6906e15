//! Why a request asks, taken out of what it asks: "… provide their sizes and modification
//! times to help me identify any unusually large files", "save it as 'art.txt' in my assets
//! directory, so I can include it in the catalog". The reason names things no tool is for
//! (large files, a catalog), and in a small sentence model's single vector they pull the step
//! away from the tool that does what is asked (the file's details, writing the file).
//!
//! Only forms that state a reason and never a need are read: "so (that) I/we can …" (not "so
//! I can use it to …", which names what is done next), "to help (me/us) <understand, identify,
//! decide …>", "to understand …" after what is asked, and "for future reference". "To help me
//! find a hotel" asks for the hotel, and "walk in order to lose 500 calories" names what to
//! compute, so neither is read. Measured in docs/routing.md.

use super::action::{is_action_verb, opens_with_everyday_verb};

/// Verbs of the asker's own thinking: after "to help (me)" they say why, not what to do.
const THINKING: &[&str] = &[
    "assess",
    "choose",
    "decide",
    "determine",
    "diagnose",
    "evaluate",
    "figure",
    "identify",
    "judge",
    "pick",
    "see",
    "spot",
    "understand",
];

/// Words before "to understand" that make it the need itself ("I'd like to understand how …").
const WANTING: &[&str] = &[
    "hope", "how", "like", "love", "me", "need", "trying", "try", "us", "want", "wanted", "wish",
];

/// Words a part keeps before its reason, at least: a reason alone is no request.
const MIN_WORDS_BEFORE: usize = 3;

/// `text` without the reasons it gives for its asks, if it gives any in the forms read here.
pub(super) fn without_purpose(text: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    let mut cuts: Vec<(usize, usize)> = Vec::new();
    let mut from = 0;
    while let Some(start) = next_reason(&lower, from) {
        let end = reason_end(&lower, start);
        // The words of the ask before the reason: since its sentence opened, or since the
        // reason before it ended (each stretch is read once, so a long text costs linear time).
        let ask_start = lower[from..start]
            .rfind(['.', '?', '!', ';', '\n'])
            .map_or(from, |i| from + i + 1);
        let asked = lower[ask_start..start]
            .split_whitespace()
            .take(MIN_WORDS_BEFORE)
            .count();
        // The comma that opened the reason goes with it.
        let opening = lower[..start]
            .trim_end()
            .strip_suffix(',')
            .map_or(start, |s| s.trim_end().len());
        let after_last_cut = cuts.last().is_none_or(|&(_, last)| opening >= last);
        if asked >= MIN_WORDS_BEFORE && after_last_cut {
            cuts.push((opening, end));
        }
        from = end.max(start + 1);
    }
    if cuts.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end) in cuts {
        out.push_str(&text[at..start]);
        at = end;
    }
    out.push_str(&text[at..]);
    Some(out)
}

/// Where the next reason opens in `lower` (at its space), from `from` on.
fn next_reason(lower: &str, from: usize) -> Option<usize> {
    let mut at = from;
    while let Some(i) = lower[at..].find(' ').map(|i| i + at) {
        at = i + 1;
        let rest = &lower[at..];
        let words: Vec<&str> = rest
            .split_whitespace()
            .take(4)
            .map(|w| w.trim_end_matches([',', '.', '?', '!', ';']))
            .collect();
        let word = |n: usize| words.get(n).copied().unwrap_or("");
        let before = lower[..i]
            .split_whitespace()
            .next_back()
            .unwrap_or("")
            .trim_matches(|c: char| !c.is_alphanumeric());
        let reason = match (word(0), word(1), word(2)) {
            ("so", "that", _) => true,
            // "… so I can use it to execute commands": what it is used for is asked next.
            ("so", "i" | "we", "can" | "could" | "may") => word(3) != "use",
            ("to", "help", next) => {
                let next = if matches!(next, "me" | "us") {
                    word(3)
                } else {
                    next
                };
                THINKING.contains(&next)
            }
            ("to", "understand", _) => !WANTING.contains(&before),
            ("for", "future", "reference") => true,
            _ => false,
        };
        if reason {
            return Some(i);
        }
    }
    None
}

/// Where the reason that opens at `start` ends: at the end of its sentence (its closing
/// punctuation or a line break), or before the next step ("…, and email them to me", "… then
/// tweet it": "and", "then" or a comma before a verb that opens a step).
fn reason_end(lower: &str, start: usize) -> usize {
    let bytes = lower.as_bytes();
    (start + 1..bytes.len())
        .find(|&i| {
            bytes[i] == b'\n'
                || matches!(bytes[i], b'.' | b'?' | b'!' | b';')
                    && bytes.get(i + 1).is_none_or(u8::is_ascii_whitespace)
                || bytes[i] == b' ' && opens_step(&lower[i + 1..], bytes[i - 1] == b',')
        })
        .map_or(bytes.len(), |i| {
            // The comma before the next step stays with it.
            if i > 0 && bytes[i - 1] == b',' {
                i - 1
            } else {
                i
            }
        })
}

/// Whether `rest` opens the request's next step: "then …", ", and …", or "and"/"also" and a
/// verb that opens a step ("and email them …"), or such a verb after a comma (`after_comma`).
fn opens_step(rest: &str, after_comma: bool) -> bool {
    let mut words = rest
        .split_whitespace()
        .map(|w| w.trim_end_matches(|c: char| !c.is_ascii_alphabetic()));
    match words.next() {
        Some("then") => true,
        Some("and") if after_comma => true,
        Some("and" | "also") => {
            let after = rest.split_once(' ').map_or("", |(_, a)| a);
            words
                .next()
                .is_some_and(|w| w == "then" || opens_step_with(w, after))
        }
        Some(verb) => after_comma && opens_step_with(verb, rest),
        None => false,
    }
}

/// Whether `word`, the first of `text`, is a verb that opens a step: one of the actions tools do
/// or an everyday verb before its object ("file a bug", "shut it down").
fn opens_step_with(word: &str, text: &str) -> bool {
    is_action_verb(word) || opens_with_everyday_verb(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> String {
        without_purpose(text).unwrap_or_else(|| text.to_string())
    }

    #[test]
    fn a_reason_is_taken_out_up_to_the_next_step() {
        assert_eq!(
            read("Provide their sizes and modification times to help me identify any large files."),
            "Provide their sizes and modification times."
        );
        assert_eq!(
            read("Save it as 'a.txt' in my 'assets' directory, so I can include it. Then mail it"),
            "Save it as 'a.txt' in my 'assets' directory. Then mail it"
        );
        assert_eq!(
            read("Tell me the weather in fahrenheit so that I decide on a jacket? San Francisco"),
            "Tell me the weather in fahrenheit? San Francisco"
        );
        assert_eq!(
            read("Show Samsung's volume to help me judge the momentum, and draw a chart of it."),
            "Show Samsung's volume, and draw a chart of it."
        );
        assert_eq!(
            read("Get the weather at JFK so I can plan my commute then text it to me"),
            "Get the weather at JFK then text it to me"
        );
        assert_eq!(
            read("Get the news to help me choose a coin and tweet the top headline"),
            "Get the news and tweet the top headline"
        );
        assert_eq!(
            read("Find the papers so that I can cite them, save them to refs.md"),
            "Find the papers, save them to refs.md"
        );
        assert_eq!(
            read("Log the error and its fix to the knowledge base for future reference."),
            "Log the error and its fix to the knowledge base."
        );
        assert_eq!(
            read("Retrieve the contents of that file to understand the core functionalities."),
            "Retrieve the contents of that file."
        );
    }

    #[test]
    fn long_and_repeated_reasons_are_read_whole() {
        let long = "Get the report so that I can read it then ".repeat(20_000);
        let read = without_purpose(&long).expect("reasons");
        assert!(read.starts_with("Get the report then Get the report then"));
        assert!(!read.contains("so that"));
        let unbroken = "so that ".repeat(50_000);
        assert_eq!(without_purpose(&unbroken), None);
        let joined = format!("Get the report so that I {}", "and keep ".repeat(50_000));
        assert_eq!(without_purpose(&joined).as_deref(), Some("Get the report"));
    }

    #[test]
    fn a_need_stated_as_a_reason_stays() {
        for text in [
            "I know I can count on you to help me find a hotel near the studio.",
            "How many steps do I need to walk in order to lose 500 calories?",
            "I'd like to understand how the charts feature works.",
            "So I can plan: what is the weather in Oslo?",
            "Get it, so I can",
            "Tell me the instance ID so I can use it to execute commands.",
        ] {
            assert_eq!(without_purpose(text), None, "{text}");
        }
    }
}
