//! What a message is to carry, named after whom it goes to ("Text +1 555 0142 | the hottest post
//! on r/wallstreetbets", "Email me | the top five threads on r/MachineLearning"): finding it is
//! a step of its own, which a tool other than the sender does, and which the verb and the
//! recipient drowned (the whole request found senders only, or the content's tools only).

use super::made::{end_of_words, names_source};
use super::sentences::{plain_word, words_at};

/// Verbs of sending a message that take the recipient right after them.
const SENDING_VERBS: &[&str] = &[
    "dm", "e-mail", "email", "mail", "message", "send", "sms", "text", "whatsapp",
];
/// Pronouns that are a recipient.
const PRONOUNS: &[&str] = &["her", "him", "me", "them", "us"];
/// Words after the recipient that never open what is sent ("Email me about the review", "Text
/// Dana that …", "Send me to …"): the rest is the message's subject or the sending's details,
/// one need.
const NOT_CONTENT: &[&str] = &[
    "about", "and", "as", "at", "by", "for", "from", "if", "in", "on", "that", "to", "when",
    "whether", "with",
];

/// Where what `text` sends starts (a byte offset, at its first word), when `text` opens with a
/// verb of sending and its recipient — a pronoun, "my"/"our" and a noun, an address, a phone
/// number or a name, then maybe "at"/"on" and an address, number or name, or "by" and a channel
/// ("Text my wife at +1 555 0100", "Message Dana on WhatsApp", "Send me by email") — and what
/// follows names a source (a name, path, page or handle: [`names_source`]).
pub(crate) fn sent_content_at(text: &str) -> Option<usize> {
    let words = words_at(text);
    let plain: Vec<String> = words.iter().map(|(_, w)| plain_word(w)).collect();
    let mut i = after_sending_verb(&plain)?;
    let written = |j: usize| words.get(j).map_or("", |(_, w)| w);
    i = recipient_end(&plain, &written, i)?;
    match plain.get(i).map(String::as_str) {
        Some("at" | "on") => i = addressee_end(&written, i + 1)?,
        Some("by") if plain.get(i + 1).is_some() => i += 2,
        _ => {}
    }
    let first = plain.get(i)?;
    if NOT_CONTENT.contains(&first.as_str()) || words.len() - i < 2 {
        return None;
    }
    words[i..]
        .iter()
        .any(|(_, w)| names_source(w))
        .then_some(words[i].0)
}

/// Where what `text` sends starts and where the phrase of whom it goes to starts (byte offsets),
/// when `text` opens with a verb of sending, names what it sends right after it and ends with
/// "to" and the recipient ("Email | the markdown of https://… | to me@example.com"), and what it
/// sends names a source.
pub(crate) fn sent_before_recipient(text: &str) -> Option<(usize, usize)> {
    let words = words_at(text);
    let plain: Vec<String> = words.iter().map(|(_, w)| plain_word(w)).collect();
    let i = after_sending_verb(&plain)?;
    let end = end_of_words(&plain, i);
    let written = |j: usize| words.get(j).map_or("", |(_, w)| w);
    let to = (i + 2..end)
        .rev()
        .find(|&j| plain[j] == "to" && recipient_end(&plain, &written, j + 1) == Some(end))?;
    let first = plain[i].as_str();
    let sourced = words[i..to].iter().any(|(_, w)| names_source(w));
    (!NOT_CONTENT.contains(&first) && sourced).then_some((words[i].0, words[to].0))
}

/// The index after the verb of sending that `plain` (a text's plain words) opens with, after a
/// "please" or not.
fn after_sending_verb(plain: &[String]) -> Option<usize> {
    let i = usize::from(plain.first().is_some_and(|w| w == "please"));
    plain
        .get(i)
        .is_some_and(|w| SENDING_VERBS.contains(&w.as_str()))
        .then_some(i + 1)
}

/// The index after the recipient that starts at `i`: a pronoun, "my"/"our" and one noun, or an
/// addressee ([`addressee_end`]).
fn recipient_end<'a>(
    plain: &[String],
    written: &impl Fn(usize) -> &'a str,
    i: usize,
) -> Option<usize> {
    let word = plain.get(i)?.as_str();
    if PRONOUNS.contains(&word) {
        Some(i + 1)
    } else if matches!(word, "my" | "our") {
        plain.get(i + 1).map(|_| i + 2)
    } else {
        addressee_end(written, i)
    }
}

/// The index after an address ("dev@acme.com"), a phone number of one or more groups ("+44 7700
/// 900123") or a name ("Dana") that starts at `i`.
fn addressee_end<'a>(written: &impl Fn(usize) -> &'a str, i: usize) -> Option<usize> {
    let word = written(i).trim_end_matches([',', '.']);
    let digits =
        |w: &str| !w.is_empty() && w.chars().all(|c| c.is_ascii_digit() || "-()".contains(c));
    if word.contains('@') {
        Some(i + 1)
    } else if word.strip_prefix('+').is_some_and(digits) {
        let mut end = i + 1;
        while digits(written(end).trim_end_matches([',', '.'])) {
            end += 1;
        }
        Some(end)
    } else if word.chars().next().is_some_and(char::is_uppercase) && names_source(word) {
        Some(i + 1)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(text: &str) -> Option<&str> {
        sent_content_at(text).map(|at| &text[at..])
    }

    #[test]
    fn the_lists_are_sorted() {
        for list in [SENDING_VERBS, PRONOUNS, NOT_CONTENT] {
            assert!(list.windows(2).all(|w| w[0] < w[1]), "{list:?}");
        }
    }

    #[test]
    fn what_is_sent_after_its_recipient_is_its_own() {
        assert_eq!(
            sent("Text +1 555 0142 the hottest post on r/wallstreetbets right now."),
            Some("the hottest post on r/wallstreetbets right now.")
        );
        assert_eq!(
            sent("Email me the top five hot threads on r/MachineLearning at me@example.com."),
            Some("the top five hot threads on r/MachineLearning at me@example.com.")
        );
        assert_eq!(
            sent("Text my wife at +1 555 0100 the weather forecast for JFK airport tomorrow."),
            Some("the weather forecast for JFK airport tomorrow.")
        );
        assert_eq!(
            sent("Message Dana on WhatsApp my Oura readiness score for today."),
            Some("my Oura readiness score for today.")
        );
        assert_eq!(
            sent("Send dev@acme.com every open Jira bug in project WEB."),
            Some("every open Jira bug in project WEB.")
        );
        assert_eq!(
            sent("Send me by email the WeatherXM readings near Berlin"),
            Some("the WeatherXM readings near Berlin")
        );
    }

    #[test]
    fn a_message_without_sourced_content_is_one_need() {
        assert_eq!(sent("Email me about the review with Dana"), None);
        assert_eq!(sent("Text Dana that I am late"), None);
        assert_eq!(sent("Send the report to bob@example.com"), None);
        assert_eq!(sent("Email bob@example.com the notes from today"), None);
        assert_eq!(sent("Send me a reminder"), None);
        assert_eq!(
            sent("Email me the top five threads at me@example.com"),
            None
        );
    }

    #[test]
    fn what_is_sent_before_its_recipient_is_its_own() {
        let text = "Email the markdown of https://docs.pinecone.io/guides/hybrid-search to me@example.com.";
        let (content, to) = sent_before_recipient(text).unwrap();
        assert_eq!(
            &text[content..to],
            "the markdown of https://docs.pinecone.io/guides/hybrid-search "
        );
        assert_eq!(&text[to..], "to me@example.com.");
        assert_eq!(sent_before_recipient("Email the agenda to the team"), None);
        assert_eq!(
            sent_before_recipient("Send the report to bob@example.com"),
            None
        );
    }
}
