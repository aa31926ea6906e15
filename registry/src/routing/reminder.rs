//! A request to be reminded, in everyday words: "nudge me on Friday to send the invoices", "ping
//! me tomorrow at 9 about …", "jog my memory next week about …", "make a note to myself: …". To-do
//! servers serve these ("create tasks … with due dates, reminders"), and the model read them by
//! their other words: invoices, a phone call, memory stores, a balance check came first for 8 of
//! 12 (docs/routing.md, "Asking to be reminded"). Read as "Create a todo task with a due date and
//! a reminder: …", they find the to-do tools.

use super::calendar::is_time;
use super::sentences::{opens_with_any, word_at, words_of};

/// What the model and BM25 read before such a request, in the words to-do tools use.
const PHRASE: &str = "Create a todo task with a due date and a reminder";
/// What is read after [`PHRASE`] when the reminder is at a clock time.
const ALARM: &str = ", or set an alarm at that time";

/// Words after a verb of reminding that make it one for the user ("remind me", "nudge us").
const ME: &[&str] = &["me", "us"];
/// Verbs that ask to be reminded when "me" follows and a time is named ("ping me tomorrow").
const NUDGES: &[&str] = &["nudge", "ping", "poke", "prod"];
/// Words before "reminder" that make it a new one of the user's ("set a reminder", "a new
/// reminder"); not "send a reminder to the signers", a message, nor "mark my reminders as
/// completed".
const OWN: &[&str] = &["add", "create", "new", "set"];
/// Words after "remind me" that ask to be told now, not later ("remind me of the tokens",
/// "remind me what it was").
const TELL: &[&str] = &["how", "of", "what", "when", "where", "which", "who", "why"];

/// Whether the request of `written` words (and their plain `words`) asks to be reminded of
/// something.
fn asks(written: &[&str], words: &[String]) -> bool {
    // "play Remind Me by Carrie Underwood": a capital inside a sentence names a title.
    let titled = |i: usize| {
        i > 0
            && written[i].starts_with(char::is_uppercase)
            && !written[i - 1].ends_with(['.', '?', '!', ':'])
    };
    let at = |i: usize| word_at(words, i);
    let time = words.iter().any(|w| is_time(w));
    (0..words.len()).any(|i| {
        let (word, next, after) = (at(i), at(i + 1), at(i + 2));
        let before = |n: usize| (i.saturating_sub(n)..i).map(at).collect::<Vec<_>>();
        // "remind me …", "remind us …".
        word == "remind" && ME.contains(&next) && !titled(i) && !TELL.contains(&after)
            // "set a reminder", "add it to my reminders".
            || word.starts_with("reminder")
                && (before(2).iter().any(|w| OWN.contains(w)) || before(2) == ["to", "my"])
            // "nudge me on Friday to …", "ping me tomorrow at 9 about …".
            || NUDGES.contains(&word) && ME.contains(&next) && time
            // "give me a heads-up on the 30th …".
            || word == "heads-up" && before(3).contains(&"me")
            // "jog my memory …".
            || word == "jog" && next == "my" && after == "memory"
            // "make sure I remember to …", "don't let me forget to …".
            || word == "remember" && next == "to" && before(2) == ["sure", "i"]
            || word == "forget" && before(3) == ["don't", "let", "me"]
            // "a note to myself: …", "note to self".
            || word == "note" && next == "to" && matches!(after, "self" | "myself")
    })
}

/// What the model and BM25 read for `text` when it asks to be reminded: the request after what
/// a to-do tool does ("Create a todo task with a due date and a reminder: nudge me …"). `None`:
/// it asks for no reminder.
pub(crate) fn as_reminder(text: &str) -> Option<String> {
    // Most requests name no word of reminding: told before each word is read.
    let hints = [
        "remind", "nudge", "ping", "poke", "prod", "heads-up", "jog", "remember", "forget", "note",
    ];
    if !opens_with_any(text, &hints) {
        return None;
    }
    let (written, words) = words_of(text);
    if !asks(&written, &words) {
        return None;
    }
    // A reminder at a clock time ("at 11PM", "for 7:00 AM") is also what an alarm does.
    let clock = words.iter().enumerate().any(|(i, w)| {
        is_clock(w)
            || ["am", "pm"].contains(&w.as_str())
                && i.checked_sub(1)
                    .is_some_and(|j| words[j].bytes().all(|b| b.is_ascii_digit()))
    });
    let also = if clock { ALARM } else { "" };
    Some(format!("{PHRASE}{also}: {text}"))
}

/// Whether `word` is a clock time ("11pm", "7:00", "9am"), not a day.
fn is_clock(word: &str) -> bool {
    let clock = word.contains(':') || word.ends_with("am") || word.ends_with("pm");
    clock && word.starts_with(|c: char| c.is_ascii_digit()) && is_time(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everyday_words_ask_to_be_reminded() {
        for text in [
            "Remind me in two hours to check the oven",
            "Nudge me on Friday to send the invoices",
            "Ping me tomorrow at 9 about the car insurance renewal",
            "Set a reminder to take my medication at 8pm",
            "Add 'renew passport' to my reminders",
            "Give me a heads-up on the 30th to cancel the free trial",
            "Jog my memory next week about renewing the domain",
            "Can you make sure I remember to call grandma on Sunday?",
            "Don't let me forget to water the plants",
            "Make a note to myself: pick up the dry cleaning",
        ] {
            assert!(as_reminder(text).is_some(), "{text}");
        }
    }

    #[test]
    fn reminders_to_others_and_other_pings_are_not() {
        for text in [
            "Send a reminder to the signers of document 42",
            "Send overdue payment reminders for invoice 7",
            "Ping 8.8.8.8 five times",
            "ping me when the build is done",
            "I remember the hotel was near the station",
            "Forget everything you know about Carol",
            "Add a note to the ticket",
            "remind the team about the deadline",
            "Can you play me Remind Me by Carrie Underwood?",
            "I need to mark my reminders as completed",
            "I forgot all the API tokens, can you remind me of them?",
        ] {
            assert!(as_reminder(text).is_none(), "{text}");
        }
    }

    #[test]
    fn clocks_are_times_of_day() {
        for w in ["11pm", "7:00", "9am"] {
            assert!(is_clock(w), "{w}");
        }
        for w in ["30th", "tomorrow", "friday", "12"] {
            assert!(!is_clock(w), "{w}");
        }
    }

    #[test]
    fn any_text_is_read_whole() {
        for text in [
            "",
            "remind",
            "’",
            "jog my",
            "日本 remind me ❤️",
            "note to",
            "heads-up",
        ] {
            let _ = as_reminder(text);
        }
        assert_eq!(
            as_reminder("remind me to stretch").as_deref(),
            Some("Create a todo task with a due date and a reminder: remind me to stretch")
        );
        assert_eq!(
            as_reminder("Set a Reminder to text Raj at 11 PM").as_deref(),
            Some(
                "Create a todo task with a due date and a reminder, or set an alarm at that \
                 time: Set a Reminder to text Raj at 11 PM"
            )
        );
    }
}
