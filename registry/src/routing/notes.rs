//! Putting something in one's notes, in everyday words: "jot down: …", "stash this idea
//! somewhere: …", "capture these takeaways in Bear: …", "keep a written record of …", "log
//! today's reading: …". Note apps describe their tools as making notes, and the model read such
//! requests by their other words: a password, mind maps, meeting bots, database records and log
//! tools came first for 5 of 10 (docs/routing.md, "Putting something in one's notes"). Read as
//! "Create and save a new note: …", they find the note apps' tools.

use super::sentences::{opens_with_any, plain_word as plain};

/// What the model and BM25 read before such a request, in the words note apps use.
const PHRASE: &str = "Create and save a new note";

/// Verbs that write something down when "down" follows within a few words ("write this down",
/// "scribble down the code"); "jot" does on its own.
const DOWN: &[&str] = &["jot", "scribble", "write"];
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
/// What time trackers log, not notes ("log my hours").
const HOURS: &[&str] = &["hours", "shift", "time", "work"];
/// Words that may stand before a request's first verb ("please log …", "and then jot …").
const OPENERS: &[&str] = &["and", "can", "please", "then", "you"];

/// Words that make what is written down a to-do ("note it down as a todo"): to-do tools keep it.
const TODOS: &[&str] = &["task", "tasks", "to-do", "to-dos", "todo", "todos"];
/// Words that name a note already: the model reads such a request as the note apps' tools do
/// (the first note set's 4 requests that say "note" found them before this reading), and
/// "Create and save a new note" would only put other apps' note tools above the one named ("write
/// them down in a Bear note").
const NOTES: &[&str] = &["note", "notes"];

/// Where the request of `written` words (and their plain `words`) first asks to put something
/// in one's notes: the index of the word that opens that ask ("jot", "keep" of "keep a written
/// record", "capture" of "capture … in Bear").
fn note_taking(written: &[&str], words: &[String]) -> Option<usize> {
    if words
        .iter()
        .any(|w| TODOS.contains(&w.as_str()) || NOTES.contains(&w.as_str()))
    {
        return None;
    }
    let at = |i: usize| words.get(i).map_or("", String::as_str);
    let before = |i: usize, n: usize| i.saturating_sub(n)..i;
    (0..words.len()).find_map(|i| {
        let word = at(i);
        let prev = i.checked_sub(1).map_or("", at);
        let find = |n: usize, of: &dyn Fn(&str) -> bool| before(i, n).find(|&j| of(at(j)));
        // "jot down: …", "write this down", "scribble down these ideas".
        if word == "jot" || DOWN.contains(&word) && (i + 1..=i + 4).any(|j| at(j) == "down") {
            return Some(i);
        }
        match word {
            // "keep a written record of …", "keep a log of …".
            "record" | "log" if prev == "written" => Some(i - 1),
            "record" | "log" => find(3, &|w| w == "keep").or_else(|| {
                // "log today's reading: …", not "log today's hours" nor "the log my server
                // wrote".
                let own_day = word == "log"
                    && (i == 0 || OPENERS.contains(&prev))
                    && OWN_DAY.contains(&at(i + 1))
                    && !HOURS.contains(&at(i + 2));
                own_day.then_some(i)
            }),
            // "stash this idea somewhere", "keep this thought".
            _ if THOUGHTS.contains(&word) => find(3, &|w| KEEPING.contains(&w)),
            // "capture these takeaways in Bear", not "Bear Lake" nor "find it in Bear".
            _ if APPS.contains(&word)
                && INTO.contains(&prev)
                && (word != "bear" || names_bear(written, i)) =>
            {
                find(i, &|w| KEEPING.contains(&w) || PUTTING.contains(&w))
            }
            _ => None,
        }
    })
}

/// Whether the request of `written` words (and their plain `words`) asks first of all to put
/// something in one's notes. A note that a later step keeps ("fetch the price of ARB and jot it
/// down in Bear") is that step's to read: read over the whole request, it put three note apps'
/// tools above the price tool.
fn asks(written: &[&str], words: &[String]) -> bool {
    note_taking(written, words).is_some_and(|start| {
        let joined = (1..start).any(|j| matches!(words[j].as_str(), "and" | "then"));
        let ended = written[..start]
            .iter()
            .any(|w| w.ends_with(['.', '?', '!', ';']));
        !joined && !ended
    })
}

/// Whether the `i`th of `written` words names the Bear app: a capital, and no capital after it
/// ("Bear Lake").
fn names_bear(written: &[&str], i: usize) -> bool {
    written[i].starts_with('B')
        && !written
            .get(i + 1)
            .is_some_and(|w| w.starts_with(char::is_uppercase))
}

/// What the model and BM25 read for `text` when it asks to put something in one's notes: the
/// request after what a note app does ("Create and save a new note: jot down …"). `None`: it
/// asks for no note. `unquote` takes `text`'s quoted values out, so that a quoted title ("the
/// song 'Write It Down'") asks nothing.
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
        "obsidian",
        "onenote",
        "record",
        "simplenote",
        "thought",
    ];
    if !opens_with_any(text, &hints) {
        return None;
    }
    let unquoted = unquote(text);
    let written: Vec<&str> = unquoted.split_whitespace().collect();
    let words: Vec<String> = written.iter().map(|w| plain(w)).collect();
    asks(&written, &words).then(|| format!("{PHRASE}: {text}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(text: &str) -> Option<String> {
        as_note(text, str::to_string)
    }

    #[test]
    fn everyday_words_put_things_in_ones_notes() {
        for text in [
            "Jot down: the wifi password at the cabin is pinecone42",
            "Jot this: the gate code is 4471",
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
            "Note down the serial number of the boiler",
            "Fetch the live price of ARB and jot it down in a Bear note",
            "I found the paper. Write down its key findings",
        ] {
            assert!(note(text).is_none(), "{text}");
        }
    }

    #[test]
    fn quoted_words_ask_nothing() {
        let unquote = |t: &str| t.replace("'Write It Down'", " ");
        assert!(as_note("Play the song 'Write It Down' by Ella", unquote).is_none());
    }
}
