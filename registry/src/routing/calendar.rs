//! A request about one's calendar in everyday words: "book a call with Dana on Thursday at 10",
//! "am I free on Friday afternoon?", "push my 2pm meeting to 4pm", "add sam@… to the design
//! review invite". Calendar servers call every one of these a "calendar event", and the model read
//! such requests by their other words: a call, an invitation to a project, a rename of a variable,
//! a free-memory command came first for 10 of 18 (docs/routing.md, "Words for one's calendar").
//! Read after what they ask of the calendar ("Schedule a calendar event: …"), they find its tools.

use super::sentences::word_at;

/// What a request asks of a calendar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ask {
    Create,
    List,
    Update,
    Attendees,
    Delete,
    /// Something in one's calendar at a time, with no verb read ("can we nuke tomorrow's
    /// huddle?", "any gaps in my diary on Tuesday?").
    Any,
}

impl Ask {
    /// What the model and BM25 read before the request, in the words calendar tools use.
    fn phrase(self) -> &'static str {
        match self {
            Ask::Create => "Schedule a calendar event:",
            Ask::List => "List calendar events:",
            Ask::Update => "Update a calendar event:",
            Ask::Attendees => "Change the attendees of a calendar event:",
            Ask::Delete => "Delete a calendar event:",
            Ask::Any => "Calendar events:",
        }
    }
}

/// Words for something that takes a time in one's calendar. "call", "invite" and the meals count
/// only where they are one ([`is_event`]); "event" does not count: events are also logs,
/// blockchain events and alerts.
const EVENTS: &[&str] = &[
    "1:1",
    "anniversary",
    "appointment",
    "appointments",
    "birthday",
    "catch-up",
    "check-in",
    "huddle",
    "interview",
    "kick-off",
    "kickoff",
    "meeting",
    "meetings",
    "offsite",
    "one-on-one",
    "retro",
    "retrospective",
    "stand-up",
    "standup",
    "sync",
];
/// Meals and drinks: events with someone or at a time ("lunch with Lee", "lunch next Friday");
/// not "order lunch", "a table for dinner at 7pm", "coffee with almond milk".
const MEALS: &[&str] = &["breakfast", "coffee", "dinner", "drinks", "lunch"];
/// Words that make a meeting the subject of another tool: its recording, its bot, its notes.
const NOT_THE_CALENDAR: &[&str] = &[
    "bot",
    "bots",
    "recording",
    "recordings",
    "transcript",
    "transcripts",
];
/// Words for one's calendar itself.
const CALENDARS: &[&str] = &["agenda", "calendar", "diary", "schedule"];
/// Words of a question of what is on one's calendar ("what's on …", "anything on …"), or of
/// blocking a time in it, which no other list here holds: with [`EVENTS`], [`MEALS`],
/// [`CALENDARS`] and [`UPDATE`] ("push my 2pm"), every request [`ask`] reads as one names one.
const HINTS: &[&str] = &[
    "any",
    "anything",
    "available",
    "block",
    "busy",
    "call",
    "free",
    "got",
    "invite",
    "what",
    "whats",
];
/// Words that open what a message says.
const CONTENT: &[&str] = &["about", "saying", "that"];
/// Nouns after an event word that make the pair another thing ("standup reports").
const NAMED_AFTER: &[&str] = &[
    "id", "link", "minutes", "notes", "report", "reports", "room", "rooms", "summary", "template",
];
/// Words of a time of the day or week ("Friday", "tomorrow", "afternoon").
const TIMES: &[&str] = &[
    "afternoon",
    "evening",
    "friday",
    "midnight",
    "monday",
    "morning",
    "noon",
    "saturday",
    "sunday",
    "thursday",
    "today",
    "tomorrow",
    "tonight",
    "tuesday",
    "wednesday",
    "week",
    "weekend",
];
/// Words between a meal and its time ("lunch at noon", "lunch next Friday").
const BEFORE_TIME: &[&str] = &["at", "next", "on", "this"];
/// Words before "invite" that make it a verb ("and invite Lee"), not the invitation.
const BEFORE_VERB: &[&str] = &["also", "and", "i", "please", "then", "to", "we", "you"];
/// Verbs of making one ("pencil in", "set up" and "slot in" with their particle). Not "add" or
/// "put": "put the issues in a note for the standup" makes a note.
const CREATE: &[&str] = &[
    "arrange", "block", "book", "organise", "organize", "pencil", "schedule", "set", "slot",
];
/// The particle a verb of [`CREATE`] needs to make one ("set up", not "set the timer").
const PARTICLES: &[(&str, &str)] = &[("pencil", "in"), ("set", "up"), ("slot", "in")];
const UPDATE: &[&str] = &[
    "bring",
    "bump",
    "change",
    "delay",
    "move",
    "postpone",
    "push",
    "rename",
    "reschedule",
    "shift",
];
/// Verbs of cancelling one ("call off" is read on its own).
const DELETE: &[&str] = &["cancel", "delete", "drop", "remove", "scrap"];
/// Verbs of who is invited, each with the word before the event: "add Sam to the meeting",
/// "take Alex off the standup", "remove Bob from the sync".
const ATTENDEES: &[(&str, &str)] = &[
    ("add", "to"),
    ("drop", "from"),
    ("include", "in"),
    ("invite", "to"),
    ("remove", "from"),
    ("take", "off"),
    ("uninvite", "from"),
];

/// `word` without the punctuation around it (a colon inside stays: "1:1") and without a
/// possessive "'s".
fn bare(word: &str) -> &str {
    let w = word
        .trim_matches(|c: char| c.is_ascii_punctuation() && c != ':')
        .trim_end_matches(':');
    ["'", "\u{2019}"]
        .iter()
        .find_map(|apostrophe| w.strip_suffix(['s', 'S'])?.strip_suffix(apostrophe))
        .unwrap_or(w)
}

/// `word` [`bare`] and lowercased.
fn plain(word: &str) -> String {
    bare(word).to_lowercase()
}

/// Whether `word` is a time: a word of [`TIMES`], "9:30", "2pm", "10am".
pub(crate) fn is_time(word: &str) -> bool {
    if TIMES.contains(&word) || TIMES.iter().any(|t| word.strip_suffix('s') == Some(t)) {
        return true;
    }
    let clock = word
        .strip_suffix("am")
        .or_else(|| word.strip_suffix("pm"))
        .unwrap_or(word);
    let digits = |s: &str| !s.is_empty() && s.len() <= 2 && s.bytes().all(|b| b.is_ascii_digit());
    // "the 20th", "June 3rd".
    let ordinal = ["st", "nd", "rd", "th"]
        .iter()
        .find_map(|s| word.strip_suffix(s))
        .is_some_and(&digits);
    if ordinal {
        return true;
    }
    match clock.split_once(':') {
        Some((h, m)) => digits(h) && m.len() == 2 && digits(m),
        None => clock.len() < word.len() && digits(clock),
    }
}

/// A request's words: as written, [`plain`], and whether each names something in one's calendar.
struct Words<'a> {
    written: Vec<&'a str>,
    plain: Vec<String>,
    events: Vec<bool>,
}

impl<'a> Words<'a> {
    fn new(text: &'a str) -> Self {
        let written: Vec<&str> = text.split_whitespace().collect();
        let plain = written.iter().map(|w| plain(w)).collect();
        let mut words = Words {
            written,
            plain,
            events: Vec::new(),
        };
        // Read once: the verbs' windows and the attendee rule ask of the same words again.
        words.events = (0..words.plain.len())
            .map(|i| words.names_event(i))
            .collect();
        words
    }

    /// The plain word at `i`, "" past the end.
    fn at(&self, i: usize) -> &str {
        word_at(&self.plain, i)
    }

    /// Whether the word at `i` names something in one's calendar (read once, in [`Words::new`]).
    fn is_event(&self, i: usize) -> bool {
        self.events.get(i).copied().unwrap_or(false)
    }

    /// Whether the word at `i` names something in one's calendar, read from its words around.
    fn names_event(&self, i: usize) -> bool {
        let (word, next) = (self.at(i), self.at(i + 1));
        let prev = i.checked_sub(1).map(|j| self.at(j));
        // "a PowerPoint for Monday's meeting", "notes for the standup": what something else is
        // for.
        if (i.saturating_sub(3)..i).any(|j| self.at(j) == "for") {
            return false;
        }
        // "drop Carlos a line about moving our call", "tell Sam that the meeting moved": what a
        // message says.
        if (i.saturating_sub(8)..i).any(|j| CONTENT.contains(&self.at(j))) {
            return false;
        }
        if EVENTS.contains(&word) {
            // "standup reports", "meeting notes": another thing, named after the meeting.
            return !NAMED_AFTER.contains(&next);
        }
        if MEALS.contains(&word) {
            // Someone named or an address after "with": "lunch with Lee", not "with almond milk".
            let someone = self.written.get(i + 2).is_some_and(|w| {
                w.starts_with(char::is_uppercase)
                    || w.contains('@')
                    || ["my", "our", "his", "her", "their"].contains(&self.at(i + 2))
            });
            let timed = is_time(next) || BEFORE_TIME.contains(&next) && is_time(self.at(i + 2));
            return prev != Some("for") && (next == "with" && someone || timed);
        }
        if word == "invite" {
            return prev.is_some_and(|p| !BEFORE_VERB.contains(&p));
        }
        // "a call with Dana", "my 30-minute call"; not "call me at five".
        word == "call"
            && (next == "with"
                || prev.is_some_and(|p| {
                    ["a", "the", "my", "our", "this", "that", "next"].contains(&p)
                        || p.ends_with("minute")
                        || p.ends_with("hour")
                }))
    }

    /// Whether the verb at `i` acts on something in one's calendar: one in the five words after
    /// it ("cancel my dentist appointment"), or one named before and taken up ("the 4pm
    /// interview, cancel it").
    fn acts_on_event(&self, i: usize, event: bool) -> bool {
        self.event_in(i + 1..i + 6) || event && ["it", "that", "them"].contains(&self.at(i + 1))
    }

    /// Whether one of the words in `range` names something in one's calendar.
    fn event_in(&self, range: std::ops::Range<usize>) -> bool {
        range.into_iter().any(|i| self.is_event(i))
    }

    /// A question of what is on one's calendar at the word at `i`: "am I free …", "what's on
    /// for Friday", "what does my week look like", "when is my next meeting", "do I have
    /// anything on Thursday".
    fn asks_whats_on(&self, i: usize, time: bool, event: bool) -> bool {
        let (word, next, after) = (self.at(i), self.at(i + 1), self.at(i + 2));
        // "am I free", "how busy am I", "I'm available?" (a subject at most two words away).
        let free = ["free", "busy", "available"].contains(&word)
            && [self.at(i.wrapping_sub(1)), next, after]
                .iter()
                .any(|w| ["i", "i'm", "we", "we're"].contains(w))
            || matches!(word, "am" | "are")
                && matches!(next, "i" | "we")
                && ["free", "busy", "available"].contains(&after);
        let free = free && time;
        // ("what's" is read as "what", as a possessive.)
        let on = match (word, next) {
            ("what" | "whats", "on") => i + 2,
            ("what", "is") if after == "on" => i + 3,
            _ => 0,
        };
        let whats_on = on > 0
            && (is_time(self.at(on))
                || ["for", "this", "next"].contains(&self.at(on)) && is_time(self.at(on + 1))
                || self.at(on) == "my" && CALENDARS.contains(&self.at(on + 1)));
        let looks = word == "what"
            && next == "does"
            && after == "my"
            && is_time(self.at(i + 3))
            && self.at(i + 4) == "look";
        let next_one = word == "when" && (i + 1..i + 4).any(|j| self.at(j) == "next") && event;
        // "do I have anything on Friday", "is there anything on my schedule for Monday".
        let anything = word == "have" && matches!(next, "anything" | "any") && (time || event)
            || word == "anything" && next == "on" && (time || CALENDARS.contains(&self.at(i + 3)));
        // "what have I got on Friday", "everything I've got this week".
        let got = word == "got"
            && ["i", "i've", "have", "we've"].contains(&self.at(i.wrapping_sub(1)))
            && time;
        free || whats_on || looks || next_one || anything || got
    }

    /// Whether the verb at `i` asks who is invited: "add Sam to the design review", with no
    /// event before the word that leads to it ("remove the meeting from my calendar" deletes).
    fn asks_attendees(&self, i: usize) -> bool {
        let Some(&(_, to)) = ATTENDEES.iter().find(|(v, _)| *v == self.at(i)) else {
            return false;
        };
        let Some(at) = (i + 1..self.plain.len()).find(|&j| self.at(j) == to) else {
            return false;
        };
        let whom = (i + 1..at).all(|j| !self.is_event(j) && !self.at(j).starts_with("event"));
        whom && self.event_in(at + 1..self.plain.len())
    }
}

/// What `text` asks of a calendar, if it is about one's calendar: a question of what is on it,
/// or a verb of making, moving, inviting to or cancelling something that takes a time in it.
/// `unquoted` is `text` without its quoted values, which name things and say nothing of what to
/// do ("add a time entry 'Meeting with John'").
fn ask(unquoted: &str) -> Option<Ask> {
    let words = Words::new(unquoted);
    let n = words.plain.len();
    if words
        .plain
        .iter()
        .any(|w| NOT_THE_CALENDAR.contains(&w.as_str()))
    {
        return None;
    }
    let event = words.event_in(0..n);
    let time = words.plain.iter().any(|w| is_time(w));
    // "schedule" is one's calendar after "my", "the" or a time ("today's schedule"); before, the
    // verb ("schedule a LinkedIn post") or another schedule ("the cricket schedule").
    let calendar = (0..n).any(|i| {
        let prev = words.at(i.wrapping_sub(1));
        CALENDARS.contains(&words.at(i))
            && (words.at(i) != "schedule"
                || ["my", "our", "your", "the"].contains(&prev)
                || is_time(prev))
    });
    let asked = (0..n).find_map(|i| {
        if words.asks_whats_on(i, time, event) {
            return Some(Ask::List);
        }
        if words.asks_attendees(i) {
            return Some(Ask::Attendees);
        }
        let (verb, next) = (words.at(i), words.at(i + 1));
        let my_time = next == "my" && is_time(words.at(i + 2));
        // "block" a time on its own ("block two hours on Friday").
        let particle = PARTICLES
            .iter()
            .find(|(v, _)| *v == verb)
            .is_none_or(|(_, p)| *p == next);
        let verbs = [CREATE, UPDATE, DELETE];
        let acts = verbs.iter().any(|v| v.contains(&verb)) && words.acts_on_event(i, event);
        let creates = acts && particle || verb == "block" && time;
        if CREATE.contains(&verb) && creates {
            return Some(Ask::Create);
        }
        if UPDATE.contains(&verb) && (acts || my_time) {
            return Some(Ask::Update);
        }
        // "call off the offsite", "the offsite is called off" (the event before the verb).
        let called_off = matches!(verb, "call" | "called") && next == "off" && event;
        if DELETE.contains(&verb) && acts || called_off {
            return Some(Ask::Delete);
        }
        None
    });
    // With no verb read, the thing and its time must be one sentence's: "I'll be in New York
    // after a business meeting. Find concerts this weekend" asks nothing of a calendar.
    let one_sentence = !words.written[..n.saturating_sub(1)]
        .iter()
        .any(|w| w.ends_with(['.', '?', '!']));
    asked.or(((event || calendar) && time && one_sentence).then_some(Ask::Any))
}

/// What the model and BM25 read for `text` when it asks something of one's calendar: the request
/// after what it asks ("Schedule a calendar event: book a call with …"). `None`: it asks nothing
/// of one. `unquote` takes `text`'s quoted values out (as [`ask`] reads it).
pub(crate) fn as_calendar(text: &str, unquote: impl FnOnce(&str) -> String) -> Option<String> {
    // Most requests name nothing of a calendar: told before their quotes are taken out and their
    // words read one by one.
    // Compared word by word without a lowercase copy ("sync" is no word of "async").
    let mentions = text.split_whitespace().any(|w| {
        let w = bare(w);
        [EVENTS, MEALS, CALENDARS, HINTS, UPDATE]
            .iter()
            .any(|list| list.iter().any(|k| k.eq_ignore_ascii_case(w)))
    });
    if !mentions {
        return None;
    }
    ask(&unquote(text)).map(|a| format!("{} {text}", a.phrase()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everyday_words_for_the_calendar_say_what_to_do_with_it() {
        for (text, want) in [
            (
                "Book a 30-minute call with dana@example.com on Thursday",
                Ask::Create,
            ),
            (
                "Block two hours on Wednesday morning for deep work",
                Ask::Create,
            ),
            ("Set up a team lunch next Friday at noon", Ask::Create),
            ("Schedule dinner with Lee at 7", Ask::Create),
            ("Am I free on Friday afternoon?", Ask::List),
            ("What does my week look like?", Ask::List),
            ("When is my next meeting with the design team?", Ask::List),
            ("Do I have anything on Thursday evening", Ask::List),
            ("what's on for tomorrow", Ask::List),
            ("What is on my agenda?", Ask::List),
            ("Push my 2pm meeting to 4pm", Ask::Update),
            ("Push my 2pm to 4pm", Ask::Update),
            ("Rename tomorrow's standup to Roadmap review", Ask::Update),
            (
                "Add sam@example.com to the design review invite",
                Ask::Attendees,
            ),
            (
                "Take alex@example.com off tomorrow's planning meeting",
                Ask::Attendees,
            ),
            ("Cancel my dentist appointment", Ask::Delete),
            ("Pencil in a check-in with Omar for Monday", Ask::Create),
            ("Add a meeting with Bob on Friday", Ask::Any),
            ("bump the 9am client meeting to the afternoon", Ask::Update),
            ("How busy am I tomorrow?", Ask::List),
            (
                "Is there anything on my schedule for Monday morning?",
                Ask::List,
            ),
            (
                "List everything I've got between Monday and Wednesday",
                Ask::List,
            ),
            ("Drop the Thursday retro", Ask::Delete),
            ("I can't make the 4pm interview, cancel it", Ask::Delete),
            ("Call off Saturday's standup", Ask::Delete),
            (
                "Can you shift my one-on-one with Raj by thirty minutes?",
                Ask::Update,
            ),
            ("Can we nuke tomorrow's team huddle?", Ask::Any),
            ("Any gaps in my diary on the 14th?", Ask::Any),
            ("The offsite is called off", Ask::Delete),
        ] {
            assert_eq!(ask(text), Some(want), "{text}");
        }
    }

    #[test]
    fn other_bookings_moves_and_meetings_are_not_the_calendar() {
        for text in [
            "Book a table for two at 7pm",
            "Schedule a LinkedIn post for Monday at 9am",
            "Get the transcript of yesterday's meeting",
            "Summarize the meeting minutes from Monday",
            "Have the meeting bot say hello in the chat",
            "Move the file to the archive folder",
            "Push the branch to origin",
            "What's on my plate today?",
            "Call me at 5pm",
            "Delete the event subscription",
            "Order lunch for the team at noon",
            "Set the timer for 10am",
            "Pencil a sketch of a cat",
            "Add the numbers 2 and 3",
            "I'm free to help, what do you need?",
            "Drop the users table",
            "Download the meeting notes template",
            "Show the cricket schedule",
            "Summarize it in a PowerPoint for Monday's meeting",
            "Put the issues in a new note for the standup",
            "I'll be in New York after a business meeting. Find concerts this weekend",
            "Get standup reports for standup ID 1234 from the past week",
            "Drop carlos@acme.io a line about moving our call to Friday",
            "Email the team that the meeting moved to Friday",
            "Book a table for dinner at 7pm",
            "Can you help me plan a dinner? I am looking for a vegan recipe",
            "change my order to a large hot coffee with almond milk",
            "Get standup reports from the past week",
            "add a new user to the project and send an invitation",
            "Invite jo@example.com to the Marketing scope",
            "remove the event  with the ID  from my calendar",
            "Add time entry to project 123456 from 14:00 to 15:00",
        ] {
            assert_eq!(ask(text), None, "{text}");
        }
    }

    #[test]
    fn times_are_read_as_clocks_and_days() {
        for t in ["2pm", "10am", "9:30", "fridays", "tomorrow", "20th", "3rd"] {
            assert!(is_time(t), "{t}");
        }
        for t in [
            "pm", "am", "1:1", "300pm", "9:3", "spam", "ham", "th", "4th-gen", "100th",
        ] {
            assert!(!is_time(t), "{t}");
        }
    }

    #[test]
    fn any_text_is_read_whole() {
        for text in [
            "",
            "’s",
            "am",
            "what's on",
            "when",
            "日本 meeting ❤️",
            "take off",
            "k❤️:",
        ] {
            let _ = as_calendar(text, str::to_string);
        }
        assert_eq!(
            as_calendar("cancel the standup", str::to_string).as_deref(),
            Some("Delete a calendar event: cancel the standup")
        );
    }
}
