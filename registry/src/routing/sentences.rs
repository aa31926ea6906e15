//! A request's sentences and a list's items, before `split` cuts them further: where a
//! sentence ends (not at "Dr." or "v2.3"), and the numbers, bullets and arrows that open a
//! list's items or a chain's links.

/// Sentences end at `.`, `?`, `!` or `;` followed by a space (so `v2.3`, `a.b@c.com` and URLs
/// stay whole) or a line break; not at the period of an abbreviation.
pub(super) fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    // The last character that is not a space: a list's number follows a colon, a sentence's end
    // or a line break ("… steps: 1. …", "… charts. 3. …"), not a word ("the top 5. Then …").
    let mut last = '\n';
    // The number the list's next item would have: after "1) get the weather", a "2)" that
    // follows a word opens the next item too ("… in Berlin 2) convert it …").
    let mut next_item = None;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        // A list's number ("… these steps: 1. Retrieve …; 2) Create …") opens a sentence and is
        // no word of it; the sentence is marked as a list item.
        let at_word = current.is_empty() || current.ends_with(char::is_whitespace);
        if at_word {
            if let Some((number, after)) = after_enumerator(rest) {
                let after_end = matches!(last, ':' | '.' | ';' | '!' | '?' | '\n');
                if after_end || next_item == Some(number) {
                    out.push(std::mem::take(&mut current));
                    current.push_str(ITEM);
                    next_item = Some(number + 1);
                    rest = after;
                    continue;
                }
            }
        }
        rest = &rest[c.len_utf8()..];
        current.push(c);
        if !c.is_whitespace() || c == '\n' {
            last = c;
        }
        let ends = matches!(c, '.' | '?' | '!' | ';')
            && rest.chars().next().is_none_or(char::is_whitespace)
            && !(c == '.' && ends_in_abbreviation(&current))
            || c == '\n';
        if ends {
            out.push(std::mem::take(&mut current));
        }
    }
    out.push(current);
    out.into_iter().filter(|s| !s.trim().is_empty()).collect()
}

/// A list item's number at the start of `text` ("1. ", "2) ", "(3) ", "Step 4: ") and what
/// follows it, if it opens with one: one or two digits, a period or a closing parenthesis (or
/// a colon after "Step"), then a space.
fn after_enumerator(text: &str) -> Option<(u32, &str)> {
    let step = ["Step ", "step ", "STEP "]
        .iter()
        .find_map(|w| text.strip_prefix(w));
    let body = step.unwrap_or_else(|| text.strip_prefix('(').unwrap_or(text));
    let digits = body.bytes().take_while(u8::is_ascii_digit).count();
    if !(1..=2).contains(&digits) {
        return None;
    }
    let ends: &[char] = if step.is_some() {
        &['.', ')', ':']
    } else {
        &['.', ')']
    };
    let after = body[digits..]
        .strip_prefix(ends)
        .filter(|after| after.starts_with(char::is_whitespace))?;
    Some((body[..digits].parse().ok()?, after))
}

/// What a list item starts with once cut: a bullet, or [`ITEM`], which stands for a list
/// item's number.
const ITEM_MARKS: &[&str] = &["- ", "* ", "• "];
/// Words that may come before a part's verb; a part they open follows another.
pub(super) const LEADING: &[&str] = &["also", "and", "finally", "lastly", "next", "please", "then"];

/// The arrows between the links of a chain, and the dashes people type for one ("Weather at JFK
/// tomorrow — text it to my wife"); `split` cuts before one that an action verb follows.
pub(super) const ARROWS: &[&str] = &["→ ", "-> ", "=> ", "— ", "– ", "- "];
/// The mark `sentences` puts where it took a list item's number away.
const ITEM: &str = "• ";

/// `clause` without the bullet or arrow it opens with, and whether it had one: a list's item or
/// a chain's link ("Grab the top stories → summarize each → email the digest").
pub(super) fn list_item(clause: &str) -> (&str, bool) {
    // A clause arrives trimmed, so a mark alone has lost its space.
    let rest = ITEM_MARKS.iter().chain(ARROWS).find_map(|m| {
        clause
            .strip_prefix(m.trim_end())
            .filter(|rest| rest.is_empty() || rest.starts_with(' '))
    });
    match rest {
        Some(rest) => (rest.trim_start(), true),
        None => (clause, false),
    }
}

/// Words whose period ends no sentence ("Dr. Evelyn Reed", "Apple Inc. stock", "e.g. a PNG").
const ABBREVIATIONS: &[&str] = &[
    "approx", "corp", "dr", "e.g", "i.e", "inc", "jr", "ltd", "mr", "mrs", "ms", "no", "prof",
    "sr", "st", "vs",
];

/// Whether `text`, which ends in a period, ends in an abbreviation or an initial ("John F.").
fn ends_in_abbreviation(text: &str) -> bool {
    let word = text
        .trim_end_matches('.')
        .rsplit(|c: char| c.is_whitespace() || c == '(')
        .next()
        .unwrap_or("");
    let mut letters = word.chars();
    if let (Some(first), None) = (letters.next(), letters.next()) {
        return first.is_uppercase();
    }
    ABBREVIATIONS
        .binary_search(&word.to_lowercase().as_str())
        .is_ok()
}

/// The words of `text` (split at whitespace) with their byte offsets.
pub(super) fn words_at(text: &str) -> Vec<(usize, &str)> {
    text.split_whitespace()
        .map(|w| (w.as_ptr() as usize - text.as_ptr() as usize, w))
        .collect()
}

/// Whether a word of `text` opens with one of `stems`, whatever its case and the punctuation
/// before it ("Remember", "(forget"): the readings' test of whether a request names a word they
/// read at all, made without a lowercase copy of each word.
pub(super) fn opens_with_any(text: &str, stems: &[&str]) -> bool {
    text.split_whitespace().any(|w| {
        let w = w.trim_start_matches(|c: char| c.is_ascii_punctuation());
        stems
            .iter()
            .any(|s| w.get(..s.len()).is_some_and(|p| p.eq_ignore_ascii_case(s)))
    })
}

/// Whether the word at `start` of a request (`written`, and its plain `words`) opens the
/// request's first ask: no "and" or "then" and no sentence's end before it. A later step's ask
/// ("fetch the price of ARB and jot it down in Bear") is that step's to read, not the whole's.
pub(super) fn first_ask(written: &[&str], words: &[String], start: usize) -> bool {
    let joined = (1..start).any(|j| matches!(words[j].as_str(), "and" | "then"));
    let ended = written[..start]
        .iter()
        .any(|w| w.ends_with(['.', '?', '!', ';']));
    !joined && !ended
}

/// The plain word at `i` of `words`, "" past the end: how the readings look at the words around
/// one without checking bounds at each look.
pub(super) fn word_at(words: &[String], i: usize) -> &str {
    words.get(i).map_or("", String::as_str)
}

/// `word` lowercased, without the punctuation around it but with its apostrophes and hyphens
/// ("Don't" → "don't", "heads-up," → "heads-up"): how the reminder and note readings see a word.
pub(super) fn plain_word(word: &str) -> String {
    word.trim_matches(|c: char| c.is_ascii_punctuation() && c != '\'' && c != '-')
        .to_lowercase()
}

/// A text's words as written and as [`plain_word`] sees them, index for index: the readings
/// test the plain words and keep what was written (paths, names, case).
pub(super) fn words_of(text: &str) -> (Vec<&str>, Vec<String>) {
    let written: Vec<&str> = text.split_whitespace().collect();
    let plain = written.iter().map(|w| plain_word(w)).collect();
    (written, plain)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_abbreviations_are_sorted() {
        assert!(ABBREVIATIONS.windows(2).all(|w| w[0] < w[1]));
    }
}
