//! A request's result named as a thing to make at the end of its part ("Summarize the newest
//! arXiv papers on diffusion | as a PDF report", "Put the NVIDIA headlines | into an Excel
//! sheet", "Publish the README | as a WordPress post"): making it is a step of its own, which a
//! tool other than the one that finds the content does, and which the part's other words drown.
//! Named first ("Make a bar chart | of my Strava activities this month"), the thing is cut from
//! its content when that content has a source another tool reads. The files named by path have
//! their own rule (`query::destination_at`); this one reads the kinds of things tools make:
//! documents, sheets, slides, charts, notes, posts.

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
    "issue",
    "mindmap",
    "note",
    "page",
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
    let end = end_of_words(&plain, 0);
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

/// Verbs that make the thing named right after them ("Make a bar chart of …", "Open a Linear
/// issue for …").
const MAKING_VERBS: &[&str] = &[
    "build", "compose", "create", "draft", "draw", "generate", "make", "open", "prepare",
    "produce", "start", "write",
];
/// Words that ask for a thing without a verb of making ("I need a slide deck on …", "Give me a
/// PDF of …"), or before one ("Can you make …"): the words a request opens with.
const ASKING: &[&[&str]] = &[
    &["can", "you"],
    &["could", "you"],
    &["give", "me"],
    &["help", "me"],
    &["i", "need"],
    &["i", "want"],
    &["i'd", "like"],
    &["please"],
    &["would", "you"],
];
/// Words that lead from the thing to make to what it is made of.
const CONTENT_WORDS: &[&str] = &[
    "about",
    "covering",
    "for",
    "from",
    "listing",
    "of",
    "on",
    "showing",
    "summarising",
    "summarizing",
    "with",
];

/// Where the words of `plain` (a text's plain words) end, from index `from` on, before a
/// closing "please" and bare punctuation ("…, please!").
pub(super) fn end_of_words(plain: &[String], from: usize) -> usize {
    let mut end = plain.len();
    while end > from && matches!(plain[end - 1].as_str(), "please" | "") {
        end -= 1;
    }
    end
}

/// Where what `text`'s thing to make is made of starts (a byte offset, at its first word), when
/// `text` opens by asking for a new thing ("Make a bar chart | of my Strava activities this
/// month", "I need a slide deck | on this week's trending GitHub developers") and what follows
/// names a source: a name, a file, a page or a handle. The content is found by another tool than
/// the one that makes the thing, and the thing's words drowned it; content of no source ("Create
/// a Jira ticket for the login bug") is what the maker is given, one need.
pub(crate) fn content_at(text: &str) -> Option<usize> {
    let words = words_at(text);
    let plain: Vec<String> = words.iter().map(|(_, w)| plain_word(w)).collect();
    let (_, mut lead) = thing_named_first(&plain)?;
    // "a new note on HackMD with …": a name right after the thing says where it is made.
    if plain
        .get(lead)
        .is_some_and(|w| matches!(w.as_str(), "on" | "in" | "at"))
        && words.get(lead + 1).is_some_and(|(_, w)| names_source(w))
    {
        lead += 2;
    }
    if !plain
        .get(lead)
        .is_some_and(|w| CONTENT_WORDS.contains(&w.as_str()))
    {
        return None;
    }
    let content = &words[lead + 1..];
    let sourced = content.iter().any(|(_, w)| names_source(w));
    (content.len() >= 2 && sourced).then_some(words[lead].0)
}

/// Where the thing to make that `plain` (a text's plain words) opens by asking for starts (its
/// "a", "new", …) and the index of the word after it: "Make | a bar chart | of …", "I need | a
/// slide deck | on …".
fn thing_named_first(plain: &[String]) -> Option<(usize, usize)> {
    let mut i = 0;
    let mut asked = false;
    while let Some(phrase) = ASKING.iter().find(|p| {
        plain
            .get(i..i + p.len())
            .is_some_and(|w| w.iter().eq(p.iter()))
    }) {
        i += phrase.len();
        asked |= phrase.len() == 2 && !matches!(phrase[1], "you");
    }
    if plain
        .get(i)
        .is_some_and(|w| MAKING_VERBS.contains(&w.as_str()))
    {
        i += 1;
    } else if !asked {
        return None;
    }
    if !plain.get(i).is_some_and(|w| NEW.contains(&w.as_str())) {
        return None;
    }
    let is_noun = |j: usize| {
        let word = plain[j].as_str();
        MADE_NOUNS.contains(&word) || word == "map" && plain[j - 1] == "mind"
    };
    let noun = (i + 1..(i + 2 + MAX_NAMING).min(plain.len())).find(|&j| is_noun(j))?;
    // "a slide deck", "a PDF report": the last noun of the run is the thing.
    let last = (noun..plain.len()).take_while(|&j| is_noun(j)).last()?;
    Some((i, last + 1))
}

/// A part that only asks for a thing to make, read as making what came before into it: "Create
/// a PDF report" → "make it into a PDF report". Cut from its content ([`content_at`]), such a
/// part read as being about such things in general ("Prepare a PDF" found PDF readers), as the
/// phrase at the end of a part did ([`as_making`]).
pub(crate) fn as_made_first(text: &str) -> Option<String> {
    let words = words_at(text);
    let plain: Vec<String> = words.iter().map(|(_, w)| plain_word(w)).collect();
    let (new, after) = thing_named_first(&plain)?;
    if end_of_words(&plain, after) != after {
        return None;
    }
    Some(format!("make it into {}", &text[words[new].0..]))
}

/// A part cut at its content ([`content_at`]) read as finding it: "of my Strava activities this
/// month" → "get my Strava activities this month".
pub(crate) fn as_content(text: &str) -> Option<String> {
    let (lead, rest) = text.trim().split_once(' ')?;
    let lower = lead.to_lowercase();
    // "with" and "for" lead a request's details as often ("… alarms I have set? with user id
    // 12345"), and "On Tripo AI, download …" opens a request: a part written from a capital is
    // not a cut one, except with words no request opens with.
    let opens_requests = matches!(lower.as_str(), "from" | "on");
    let details = matches!(lower.as_str(), "for" | "with");
    if !CONTENT_WORDS.contains(&lower.as_str()) || details || opens_requests && lead != lower {
        return None;
    }
    Some(format!("get {rest}"))
}

/// Capitalised words that name no source: the speaker, identifiers, dates.
const NO_SOURCE: &[&str] = &[
    "April",
    "August",
    "December",
    "February",
    "Friday",
    "I",
    "ID",
    "IDs",
    "January",
    "July",
    "June",
    "March",
    "May",
    "Monday",
    "November",
    "October",
    "Saturday",
    "September",
    "Sunday",
    "Thursday",
    "Tuesday",
    "Wednesday",
];

/// Whether a word as written names where content comes from: a name ("Strava", "GitHub",
/// "AAPL"), a path or page ("octo/widgets", "meeting.docx", "r/rust") or a handle ("@acme"). A
/// word with digits is a value ("WTU123"), not a name; an e-mail address is whom something goes
/// to.
pub(super) fn names_source(written: &str) -> bool {
    let bare = written.trim_end_matches(|c: char| c.is_ascii_punctuation());
    let bare = bare.trim_start_matches(|c: char| c.is_ascii_punctuation() && c != '@');
    if let Some(handle) = bare.strip_prefix('@') {
        return !handle.is_empty();
    }
    if bare.contains('@') {
        return false;
    }
    let word = bare.strip_suffix("'s").unwrap_or(bare);
    let name = word.chars().any(char::is_uppercase)
        && !word.chars().any(|c| c.is_ascii_digit())
        && !NO_SOURCE.contains(&word);
    name || word.contains(['/', '.'])
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
        for list in [MADE_NOUNS, MAKING_VERBS, CONTENT_WORDS, NO_SOURCE] {
            assert!(list.windows(2).all(|w| w[0] < w[1]), "{list:?}");
        }
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

    fn content(text: &str) -> Option<&str> {
        content_at(text).map(|at| &text[at..])
    }

    #[test]
    fn the_content_of_a_thing_named_first_is_its_own() {
        assert_eq!(
            content("Make a bar chart of my Strava activities this month."),
            Some("of my Strava activities this month.")
        );
        assert_eq!(
            content("I need a slide deck on this week's trending GitHub developers"),
            Some("on this week's trending GitHub developers")
        );
        assert_eq!(
            content("Can you generate a mind map of the key points in /home/me/notes/meeting.docx"),
            Some("of the key points in /home/me/notes/meeting.docx")
        );
        assert_eq!(
            content("Open a Linear issue for each action item from my latest Zoom meeting"),
            Some("for each action item from my latest Zoom meeting")
        );
    }

    #[test]
    fn content_without_a_source_is_the_makers() {
        assert_eq!(content("Create a Jira ticket for the login bug"), None);
        assert_eq!(content("Write a short note about kindness"), None);
        assert_eq!(content("Make the chart of Strava activities bigger"), None);
        assert_eq!(content("Show me a chart of Strava activities"), None);
        assert_eq!(content("Make a chart of it"), None);
        assert_eq!(
            content("I want a note of my bike's serial number, WTU123"),
            None
        );
        assert_eq!(
            content("Generate a detailed map of the website at https://example.com"),
            None
        );
        assert_eq!(
            content("Create an issue with the name and description for project with ID"),
            None
        );
        assert_eq!(content("Create a new note on HackMD with the title"), None);
        assert_eq!(
            content("Write a note about the trip for bob@example.com"),
            None
        );
    }

    #[test]
    fn where_the_thing_is_made_is_not_its_content() {
        assert_eq!(
            content("Create an issue on GitHub for the crash Sentry reported"),
            Some("for the crash Sentry reported")
        );
    }

    #[test]
    fn a_thing_asked_for_alone_is_read_as_making() {
        assert_eq!(
            as_made_first("Create a PDF report").as_deref(),
            Some("make it into a PDF report")
        );
        assert_eq!(
            as_made_first("I need a slide deck").as_deref(),
            Some("make it into a slide deck")
        );
        assert_eq!(as_made_first("Create a PDF report of the sales"), None);
        assert_eq!(as_made_first("Open the PDF report"), None);
    }

    #[test]
    fn cut_content_is_read_as_finding_it() {
        assert_eq!(
            as_content("of my Strava activities this month.").as_deref(),
            Some("get my Strava activities this month.")
        );
        assert_eq!(
            as_content("on this week's trending GitHub developers").as_deref(),
            Some("get this week's trending GitHub developers")
        );
        assert_eq!(as_content("On Tripo AI, download the asset"), None);
        assert_eq!(as_content("with user id 12345"), None);
        assert_eq!(as_content("Find my Strava activities"), None);
    }
}
