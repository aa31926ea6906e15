//! Putting something in one's notes, in everyday words: "jot down: …", "stash this idea
//! somewhere: …", "capture these takeaways in Bear: …", "keep a written record of …", "log
//! today's reading: …". Note apps describe their tools as making notes, and the model read such
//! requests by their other words: a password, mind maps, meeting bots, database records and log
//! tools came first for 5 of 10 (docs/routing.md, "Putting something in one's notes, and looking
//! it up"). Read as "Create and save a new note: …", they find the note apps' tools. Looking
//! something up in one's notes shares the verbs ("what did I jot down about …", "the idea I
//! stashed about …"): read as "Search my notes and read a note: …".

use super::sentences::{first_ask, opens_with_any, word_at, words_of};

/// What a request asks of one's notes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ask {
    Create,
    Search,
}

impl Ask {
    /// What the model and BM25 read before the request, in the words note apps use.
    fn phrase(self) -> &'static str {
        match self {
            Ask::Create => "Create and save a new note",
            Ask::Search => "Search my notes and read a note",
        }
    }
}

/// Verbs that write something down when "down" follows within a few words ("write this down",
/// "note this down"); "jot" and "scribble" do on their own.
const DOWN: &[&str] = &["note", "write"];
/// Verbs of keeping something: before an idea or a thought they keep it in one's notes ("stash
/// this idea somewhere").
const KEEPING: &[&str] = &[
    "capture", "file", "keep", "park", "put", "save", "stash", "store",
];
/// What one keeps in one's notes when nothing else is named.
const THOUGHTS: &[&str] = &["idea", "ideas", "thought", "thoughts"];
/// Verbs that put something into an app named after them ("capture … in Bear", "add … to
/// Obsidian"), besides those of [`KEEPING`]; not "find … in Bear", which searches it.
const PUTTING: &[&str] = &[
    "add", "copy", "drop", "jot", "paste", "pop", "record", "write",
];
/// Note-taking apps, lowercased. Notion is none: its tools make pages and database rows.
const APPS: &[&str] = &[
    "bear",
    "evernote",
    "hackmd",
    "joplin",
    "logseq",
    "noteplan",
    "obsidian",
    "onenote",
    "simplenote",
];
/// Words before "into Bear" that put something in it.
const INTO: &[&str] = &["in", "into", "on", "to"];
/// Words after "log" that make it one's own day ("log today's reading"); not "log my thought
/// process", which thinking tools keep.
const OWN_DAY: &[&str] = &["today's", "tonight's", "yesterday's"];
/// What time trackers log, not notes ("log today's hours").
const HOURS: &[&str] = &["hours", "shift", "time", "work"];
/// Words that may stand before a request's first verb ("please log …", "and then jot …").
const OPENERS: &[&str] = &["and", "can", "please", "then", "you"];

/// Words that make what is written down a to-do ("note it down as a todo"): to-do tools keep it.
const TODOS: &[&str] = &["task", "tasks", "to-do", "to-dos", "todo", "todos"];
/// Words that name a note already: the model reads such a request as the note apps' tools do
/// (the first note set's 4 requests that say "note" found them before this reading), and
/// "Create and save a new note" would only put other apps' note tools above the one named ("write
/// them down in a Bear note"). Not the verb: "note this down" found crypto vaults.
const NOTES: &[&str] = &["note", "notes"];

/// Past forms of the verbs of note-taking: after "I" or "we" they tell what was noted ("the idea I
/// stashed"), which a request then looks up.
const NOTED: &[&str] = &["jotted", "noted", "scribbled", "stashed"];
/// Past forms of verbs that keep or put something: after "I" they tell what was noted when a note
/// app follows ("what I saved in Bear") or an idea or a thought was kept ("that thought I
/// saved").
const KEPT: &[&str] = &[
    "added", "captured", "copied", "filed", "kept", "pasted", "popped", "put", "saved", "stored",
];
/// Who noted something.
const SUBJECTS: &[&str] = &["i", "we"];
/// Words that ask for something already there, one of which comes before "I jotted …" in a
/// request that looks it up; not "I noted that the build failed, fix it".
const FINDING: &[&str] = &[
    "did", "fetch", "find", "get", "look", "pull", "read", "remind", "show", "tell", "what",
    "what's", "when", "where", "where's", "which",
];

/// Where the request of `written` words (and their plain `words`) first asks something of one's
/// notes, and what: the index of the word that opens that ask ("jot", "keep" of "keep a written
/// record", "capture" of "capture … in Bear", "I" of "what I jotted down").
fn note_taking(written: &[&str], words: &[String]) -> Option<(Ask, usize)> {
    let at = |i: usize| word_at(words, i);
    let names = (0..words.len()).any(|i| {
        TODOS.contains(&at(i))
            || NOTES.contains(&at(i)) && !(at(i) == "note" && down_after(words, i))
    });
    if names {
        return None;
    }
    (0..words.len()).find_map(|i| {
        if looked_up(written, words, i) {
            return Some((Ask::Search, i));
        }
        let start = taking_at(written, words, i)?;
        // "what did I jot down about …" looks it up.
        let asked = (start.saturating_sub(3)..start).any(|j| at(j) == "did");
        Some((if asked { Ask::Search } else { Ask::Create }, start))
    })
}

/// Whether the `i`th of `written` words (plain: `words`) is one who noted what a request asks
/// for: "the idea I stashed", "what we wrote down", "what I saved in Bear".
fn looked_up(written: &[&str], words: &[String], i: usize) -> bool {
    let at = |i: usize| word_at(words, i);
    if !SUBJECTS.contains(&at(i)) || !(0..i).any(|j| FINDING.contains(&at(j))) {
        return false;
    }
    (i + 1..=i + 3).any(|j| {
        let w = at(j);
        NOTED.contains(&w)
            || matches!(w, "wrote" | "written") && (j + 1..=j + 3).any(|k| at(k) == "down")
            || KEPT.contains(&w)
                && ((j + 1..words.len()).any(|k| names_app(written, words, k))
                    || (i.saturating_sub(3)..i).any(|k| THOUGHTS.contains(&at(k))))
    })
}

/// Where the note-taking that the `i`th of `written` words (plain: `words`) tells of opens, when
/// it tells of one: "jot" itself, "write" of "write this down", "keep" of "keep a written record",
/// "stash" of "stash this idea", "capture" of "capture … in Bear".
fn taking_at(written: &[&str], words: &[String], i: usize) -> Option<usize> {
    let at = |i: usize| word_at(words, i);
    let (word, prev) = (at(i), i.checked_sub(1).map_or("", at));
    let find = |n: usize, of: &dyn Fn(&str) -> bool| (i.saturating_sub(n)..i).find(|&j| of(at(j)));
    match word {
        // "jot down: …", "write this down", "scribble down these ideas".
        "jot" | "scribble" => Some(i),
        _ if DOWN.contains(&word) => down_after(words, i).then_some(i),
        // "keep a written record of …", "make a log of …".
        "record" | "log" if prev == "written" => Some(i - 1),
        "record" | "log" => find(3, &|w| matches!(w, "keep" | "make")).or_else(|| {
            // "log today's reading: …", not "log today's hours" nor "the log my server wrote".
            let own_day = word == "log"
                && (i == 0 || OPENERS.contains(&prev))
                && OWN_DAY.contains(&at(i + 1))
                && !HOURS.contains(&at(i + 2));
            own_day.then_some(i)
        }),
        // "stash this idea somewhere", "keep this thought".
        _ if THOUGHTS.contains(&word) => find(3, &|w| KEEPING.contains(&w)),
        // "capture these takeaways in Bear", not "find it in Bear".
        _ if names_app(written, words, i) => {
            find(i, &|w| KEEPING.contains(&w) || PUTTING.contains(&w))
        }
        _ => None,
    }
}

/// Whether "down" follows the `i`th of the plain `words` within a few words ("write this down").
fn down_after(words: &[String], i: usize) -> bool {
    words.iter().skip(i + 1).take(4).any(|w| w == "down")
}

/// Whether the request of `written` words (and their plain `words`) asks first of all something
/// of one's notes, and what. A note that a later step keeps ("fetch the price of ARB and jot it
/// down in Bear") is that step's to read: read over the whole request, it put three note apps'
/// tools above the price tool.
fn ask(written: &[&str], words: &[String]) -> Option<Ask> {
    let (ask, start) = note_taking(written, words)?;
    first_ask(written, words, start).then_some(ask)
}

/// Whether the `i`th of `written` words (plain: `words`) names a note app a request puts
/// something in or looks in ("in Bear", "into Obsidian"); not "Bear Lake".
fn names_app(written: &[&str], words: &[String], i: usize) -> bool {
    let word = words[i].as_str();
    let named = APPS.contains(&word) && i > 0 && INTO.contains(&words[i - 1].as_str());
    // The bear is an animal but for a capital, with none after it ("Bear Lake").
    named
        && (word != "bear"
            || written[i].starts_with('B')
                && !written
                    .get(i + 1)
                    .is_some_and(|w| w.starts_with(char::is_uppercase)))
}

/// What the model and BM25 read for `text` when it asks to put something in one's notes or to
/// look something up in them: the request after what a note app does ("Create and save a new
/// note: jot down …"). `None`: it asks nothing of one's notes. `unquote` takes `text`'s quoted
/// values out, so that a quoted title ("the song 'Write It Down'") asks nothing.
pub(crate) fn as_note(text: &str, unquote: impl FnOnce(&str) -> String) -> Option<String> {
    // Most requests name no word of note-taking: told before their quotes are taken out and their
    // words read one by one.
    let hints = [
        "bear",
        "down",
        "evernote",
        "hackmd",
        "idea",
        "joplin",
        "jot",
        "log",
        "note",
        "obsidian",
        "onenote",
        "record",
        "scribbl",
        "simplenote",
        "stash",
        "thought",
    ];
    if !opens_with_any(text, &hints) {
        return None;
    }
    let unquoted = unquote(text);
    let (written, words) = words_of(&unquoted);
    ask(&written, &words).map(|a| format!("{}: {text}", a.phrase()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(text: &str) -> Option<String> {
        as_note(text, str::to_string)
    }

    fn asked(text: &str) -> Option<Ask> {
        let (written, words) = words_of(text);
        ask(&written, &words)
    }

    #[test]
    fn what_was_noted_is_looked_up() {
        for text in [
            "What did I jot down about the lease renewal?",
            "Where did I write down the gate code?",
            "Find the idea I stashed about old maps",
            "Show me what I saved in Bear about sourdough",
            "Where's that thought I saved about a standing desk?",
            "Read me back what I scribbled after the dentist visit",
            "Tell me what we wrote down at the offsite",
        ] {
            assert_eq!(asked(text), Some(Ask::Search), "{text}");
        }
        for text in [
            "I noted that the build failed, can you fix it?",
            "Show me the files I saved yesterday",
        ] {
            assert_eq!(asked(text), None, "{text}");
        }
        assert_eq!(asked("Jot down: gate code 4471"), Some(Ask::Create));
    }

    #[test]
    fn everyday_words_put_things_in_ones_notes() {
        for text in [
            "Jot down: the wifi password at the cabin is pinecone42",
            "Jot this: the gate code is 4471",
            "Note this down: the locker combination is 12-34-08",
            "Scribble this somewhere: call the vet",
            "Make a record of today's mileage: 42 miles",
            "Please write this down for me: gate code 4471",
            "Stash this idea somewhere: a podcast about old maps",
            "Keep these thoughts for later",
            "Capture these meeting takeaways in Bear: budget approved",
            "Copy the recipe into Obsidian",
            "Can you keep a written record of my blood pressure reading: 120 over 80",
            "Log today's reading: finished chapter 4 of Dune",
        ] {
            assert!(note(text).is_some(), "{text}");
        }
    }

    #[test]
    fn other_downs_logs_and_bears_are_not() {
        for text in [
            "Shut down the staging server",
            "Write a blog post about bears",
            "Find my note about the lease in Bear",
            "Show me the trails around Bear Lake",
            "Log today's hours on the Acme project",
            "Log my thought process on the caching bug",
            "I need to pay the electricity bill by the 5th, note it down as a todo",
            "Check the log my server wrote last night",
            "Add a note to ticket 42",
            "Brainstorm ideas for the launch",
            "Record a voice memo",
            "Make a note to self: call the bank",
            "Jot down a note about the plumber",
            "Fetch the live price of ARB and jot it down in a Bear note",
            "I found the paper. Write down its key findings",
        ] {
            assert!(note(text).is_none(), "{text}");
        }
    }

    #[test]
    fn any_text_is_read_whole() {
        for text in [
            "",
            "jot",
            "down",
            "written record",
            "log",
            "in Bear",
            "Bear",
            "I jotted",
            "did I",
            "“jot” ❤️ dówn",
            "日本 jot down 東京",
            "what I saved in",
        ] {
            let _ = note(text);
        }
        assert!(note("日本 jot down 東京").is_some());
    }

    #[test]
    fn quoted_words_ask_nothing() {
        let unquote = |t: &str| t.replace("'Write It Down'", " ");
        assert!(as_note("Play the song 'Write It Down' by Ella", unquote).is_none());
    }
}
