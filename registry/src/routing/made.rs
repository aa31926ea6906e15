//! A request's result named as a thing to make at the end of its part ("Summarize the newest
//! arXiv papers on diffusion | as a PDF report", "Put the NVIDIA headlines | into an Excel
//! sheet", "Publish the README | as a WordPress post"): making it is a step of its own, which a
//! tool other than the one that finds the content does, and which the part's other words drown.
//! The files named by path have their own rule (`query::destination_at`); this one reads the
//! kinds of things tools make: documents, sheets, slides, charts, notes, posts.

use super::sentences::{plain_word, words_at};

/// Nouns of things a tool makes: the last word of the phrase.
const MADE_NOUNS: &[&str] = &[
    "card",
    "chart",
    "deck",
    "diagram",
    "doc",
    "document",
    "graph",
    "mindmap",
    "note",
    "pdf",
    "post",
    "ppt",
    "pptx",
    "presentation",
    "report",
    "sheet",
    "slide",
    "slides",
    "spreadsheet",
    "ticket",
    "tweet",
    "workbook",
];
/// Prepositions that lead to what is made from what came before: "as" and "into" whatever
/// follows them; "in", "on" and "to" only before a thing not yet there ("in a Word document",
/// "on one slide"), since before one that is ("the errors in the report", "comments on the
/// card") they tell where the content is.
const INTO: &[&str] = &["as", "into"];
const ONTO_NEW: &[&str] = &["in", "on", "to"];
/// Words that say the thing is not there yet.
const NEW: &[&str] = &["a", "an", "new", "one", "single"];
/// Words that may come between the preposition and the noun besides [`NEW`]: determiners and
/// words of a kind or a product ("our Google Sheet", "an area chart", "a PDF report"), at most
/// [`MAX_NAMING`] of the latter.
const DETERMINERS: &[&str] = &["my", "our", "the", "this", "your"];
const MAX_NAMING: usize = 2;
/// How many of a part's last words can hold the phrase.
const LAST_WORDS: usize = 10;

/// Where the phrase that names the thing `text`'s result is made into starts (a byte offset),
/// when `text` ends with one; the phrase's preposition is at the offset.
pub(crate) fn made_at(text: &str) -> Option<usize> {
    let all = words_at(text);
    // The phrase is a preposition, a few determiners, at most two naming words, the noun and a
    // "please": only the last words are read, so that a long part costs no more.
    let words = &all[all.len().saturating_sub(LAST_WORDS)..];
    let plain: Vec<String> = words.iter().map(|(_, w)| plain_word(w)).collect();
    let mut end = plain.len();
    while end > 0 && matches!(plain[end - 1].as_str(), "please" | "") {
        end -= 1;
    }
    if end < 2 || !MADE_NOUNS.contains(&plain[end - 1].as_str()) {
        return None;
    }
    let mut naming = 0;
    let mut new = false;
    for i in (0..end - 1).rev() {
        let word = plain[i].as_str();
        if INTO.contains(&word) || ONTO_NEW.contains(&word) && new {
            return Some(words[i].0);
        }
        if NEW.contains(&word) {
            new = true;
        } else if !DETERMINERS.contains(&word) {
            naming += 1;
            // A word of the part's own before the determiner ("the report of the sales"): no
            // phrase of making.
            if naming > MAX_NAMING || i + 1 < end - 1 && is_determiner(&plain[i + 1]) {
                return None;
            }
        }
    }
    None
}

fn is_determiner(word: &str) -> bool {
    NEW.contains(&word) || DETERMINERS.contains(&word)
}

/// A part that is only such a phrase, read as the making it asks for: "as a PDF report" →
/// "make it into a PDF report", "into our Google Sheet" → "write it into our Google Sheet".
/// Alone, the phrase's preposition and nouns read as being about such things in general ("as a
/// PDF report" found PDF readers); "make it into" found one more of our office set's steps than
/// "create", "convert it to" or the phrase as written (docs/routing.md).
pub(crate) fn as_making(text: &str) -> Option<String> {
    if made_at(text)? != 0 {
        return None;
    }
    let text = text.trim();
    let (preposition, rest) = text.split_once(' ')?;
    Some(match preposition.to_lowercase().as_str() {
        "into" | "to" => format!("write it {text}"),
        _ => format!("make it into {rest}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn made(text: &str) -> Option<&str> {
        made_at(text).map(|at| &text[at..])
    }

    #[test]
    fn the_lists_are_sorted() {
        assert!(MADE_NOUNS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn a_thing_to_make_ends_the_part() {
        assert_eq!(
            made("Summarize the three newest arXiv papers as a PDF report."),
            Some("as a PDF report.")
        );
        assert_eq!(
            made("Put the latest NVIDIA headlines into an Excel sheet"),
            Some("into an Excel sheet")
        );
        assert_eq!(
            made("Every open bug in project WEB on one PowerPoint slide, please"),
            Some("on one PowerPoint slide, please")
        );
        assert_eq!(
            made("readings from the stations near Berlin into our Google Sheet"),
            Some("into our Google Sheet")
        );
        assert_eq!(
            made("Clip the page as markdown into a HackMD note"),
            Some("into a HackMD note")
        );
    }

    #[test]
    fn where_the_content_is_is_no_thing_to_make() {
        assert_eq!(made("Find the errors in the quarterly report"), None);
        assert_eq!(made("Read the comments on the Trello card"), None);
        assert_eq!(made("Show me the latest report"), None);
        assert_eq!(
            made("Look at the numbers in the sales report of the last quarter sheet"),
            None
        );
        assert_eq!(made("Send the summary to the team"), None);
    }

    #[test]
    fn a_phrase_alone_is_read_as_making() {
        assert_eq!(
            as_making("as a PDF report").as_deref(),
            Some("make it into a PDF report")
        );
        assert_eq!(
            as_making("into our Google Sheet.").as_deref(),
            Some("write it into our Google Sheet.")
        );
        assert_eq!(as_making("Summarize the papers as a PDF report"), None);
    }
}
