//! One's own files, acted on as files: "make a copy of budget.xlsx before I edit it", "get rid of
//! the old log file at /tmp/app.log", "how big is ~/Videos/holiday.mp4?". The model read such
//! requests by the file's kind, and the format's tools came first (Excel's sheet copier, log
//! readers, video tools, PDF mergers: 5 of 10 in our file set, docs/routing.md, "One's own files").
//! Read after the operation in the file tools' words ("Copy files or directories: …"), they find
//! the file servers' tools.

use super::sentences::{first_ask, opens_with_any, plain_word as plain, word_at, LEADING};

/// What a request does to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Copy,
    Move,
    Delete,
    Details,
    List,
}

impl Op {
    /// What the model and BM25 read before the request, in the words file tools use.
    fn phrase(self) -> &'static str {
        match self {
            Op::Copy => "Copy files or directories to a destination path",
            Op::Move => "Move or rename files or directories",
            Op::Delete => "Delete a file or directory at a path",
            Op::Details => "Retrieve file status details and metadata: size, modification time",
            Op::List => "List files and directories within a directory path",
        }
    }
}

/// Verbs of each operation on a file as a whole.
const COPYING: &[&str] = &["copy", "duplicate"];
const MOVING: &[&str] = &["move", "relocate", "rename", "shift"];
const DELETING: &[&str] = &["delete", "erase", "remove", "trash"];
/// Verbs that move what they take "from" one place "into" another ("put all the PDFs from
/// ~/Desktop into ~/Documents/pdfs").
const CARRYING: &[&str] = &["drag", "put", "transfer"];
/// Parts of a file's content: an operation on them is none on the file ("remove the background
/// from photo.png", "delete rows 2–5 in data.xlsx", "copy the text of memo.docx").
const CONTENT: &[&str] = &[
    "background",
    "cell",
    "cells",
    "column",
    "columns",
    "comment",
    "comments",
    "content",
    "contents",
    "duplicates",
    "entries",
    "entry",
    "line",
    "lines",
    "page",
    "pages",
    "paragraph",
    "record",
    "records",
    "row",
    "rows",
    "section",
    "sheet",
    "sheets",
    "slide",
    "slides",
    "tab",
    "text",
    "watermark",
];
/// Words that open a question or a request about what a folder holds ("which files are in …",
/// "what's stored under …", "list the contents of …", "show me everything inside …").
const LISTING: &[&str] = &["list", "show", "what", "what's", "which"];
/// Words between "what"/"which" and the folder that make it a question about files.
const HELD: &[&str] = &[
    "directories",
    "documents",
    "files",
    "folders",
    "kept",
    "saved",
    "sitting",
    "stored",
];
/// The prepositions before a folder whose contents are asked for.
const INSIDE: &[&str] = &["in", "inside", "of", "under", "within"];
/// Verbs before "a copy" that keep a result rather than copy a file.
const KEPT: &[&str] = &["keep", "save", "store"];
/// Words after "when was … last" that ask when a file changed.
const CHANGED: &[&str] = &["changed", "created", "edited", "modified", "updated"];

/// The operation on a file that the request of `written` words (and their plain `words`) first
/// asks for, and the index of the word that opens it.
fn operation(
    written: &[&str],
    words: &[String],
    names_file: &impl Fn(&str) -> bool,
) -> Option<(Op, usize)> {
    let at = |i: usize| word_at(words, i);
    // Asked first: "the contents of ~/projects" are a folder's, not a file's content.
    if let Some(start) = (0..words.len()).find(|&i| lists_folder(written, words, i, names_file)) {
        return Some((Op::List, start));
    }
    // Something named by an ID lives in a service, even at a path ("delete the note with ID
    // \"n-1\" from the team workspace \"/path/to/team\"" is HackMD's).
    if words
        .iter()
        .any(|w| CONTENT.contains(&w.as_str()) || w == "id" || w == "ids")
    {
        return None;
    }
    (0..words.len()).find_map(|i| {
        let word = at(i);
        let after = |w: &str| (i + 1..words.len()).any(|j| at(j) == w);
        // "… from ~/Desktop into …": the source is a path ("transfer options from Shanghai to
        // Chengdu" are flights).
        let from_path = (i + 1..written.len())
            .any(|j| at(j) == "from" && written.get(j + 1).is_some_and(|w| names_file(w)));
        // "keep a copy at …" saves a result, a step of writing.
        let kept = i >= 2 && at(i - 1) == "a" && KEPT.contains(&at(i - 2));
        let op = if COPYING.contains(&word) && !kept {
            Some(Op::Copy)
        } else if MOVING.contains(&word)
            || CARRYING.contains(&word) && from_path && (after("into") || after("to"))
        {
            Some(Op::Move)
        } else if DELETING.contains(&word) || word == "rid" && i > 0 && at(i - 1) == "get" {
            Some(Op::Delete)
        } else if matches!(word, "big" | "large") && i > 0 && at(i - 1) == "how"
            || word == "size" && at(i + 1) == "of"
            || CHANGED.contains(&word) && i > 0 && at(i - 1) == "last"
        {
            Some(Op::Details)
        } else {
            None
        };
        // "get rid of" opens at "get"; "how big" at "how".
        let start = match op? {
            Op::Delete if word == "rid" => i - 1,
            Op::Details if matches!(word, "big" | "large") => i - 1,
            _ => i,
        };
        Some((op?, start))
    })
}

/// Where a request asks for a file's metadata by its fields, with or without naming the file
/// ("and then provide their sizes and modification times", "tell me the file size and last
/// modification date"): a size and a time of change together are what a file's details hold,
/// whatever the files were called a step before.
fn metadata_asked(words: &[String]) -> Option<usize> {
    let size = words.iter().position(|w| w == "size" || w == "sizes")?;
    words
        .iter()
        .any(|w| w == "modification" || w == "modified")
        .then_some(size)
}

/// Whether the `i`th of `written` words (plain: `words`) opens a question or request about what
/// a folder holds: "which files are in /var/log", "what's stored under /srv/backups", "list the
/// contents of the folder ~/projects/api", "show me everything inside ~/Downloads". The folder
/// is a path without an extension (so "what's in budget.xlsx" asks for a file's content), within
/// three words of a preposition at most six words on; a question ("what", "which") names files
/// or how they are kept ("stored") between.
fn lists_folder(
    written: &[&str],
    words: &[String],
    i: usize,
    names_file: &impl Fn(&str) -> bool,
) -> bool {
    let word = words[i].as_str();
    if !LISTING.contains(&word) {
        return false;
    }
    let asks = matches!(word, "what" | "what's" | "which");
    (i + 1..(i + 7).min(words.len())).any(|j| {
        let between = &words[i + 1..j];
        INSIDE.contains(&words[j].as_str())
            // "in ~/x", "of the folder ~/x".
            && (j + 1..=j + 3).any(|k| written.get(k).is_some_and(|w| is_folder(w, names_file)))
            && (!asks
                || word == "what's" && between.is_empty()
                || between.iter().any(|w| HELD.contains(&w.as_str())))
    })
}

/// Whether a written word is a folder's path: a path (`names_file`, the gateway's own test) whose
/// last part has no extension ("/var/log/nginx", "~/Downloads/").
fn is_folder(written: &str, names_file: &impl Fn(&str) -> bool) -> bool {
    let w = written.trim_end_matches(|c: char| c.is_ascii_punctuation() && c != '/');
    let last = w.trim_end_matches('/').rsplit('/').next().unwrap_or("");
    names_file(written) && !last.contains('.')
}

/// What the model and BM25 read for `text` when it acts on a file as a whole: the request after
/// what a file tool does ("Copy files or directories to a destination path: make a copy of …").
/// `None`: it names no file, or does something else to one (its content, or a later step's).
/// `names_file` tells whether a word as written is a path or a file name.
pub(crate) fn as_file_operation(text: &str, names_file: impl Fn(&str) -> bool) -> Option<String> {
    // Most requests name no verb of these: told before a word is read.
    let hints = [
        "big",
        "changed",
        "copy",
        "created",
        "delete",
        "drag",
        "duplicate",
        "edited",
        "erase",
        "large",
        "list",
        "modification",
        "modified",
        "move",
        "put",
        "relocate",
        "remove",
        "rename",
        "rid",
        "shift",
        "show",
        "size",
        "transfer",
        "trash",
        "updated",
        "what",
        "which",
    ];
    if !opens_with_any(text, &hints) {
        return None;
    }
    let written: Vec<&str> = text.split_whitespace().collect();
    let words: Vec<String> = written.iter().map(|w| plain(w)).collect();
    if let Some(start) = metadata_asked(&words) {
        // A step's own opening ("and then provide …") joins it to the step before, not to
        // another ask of its own.
        let lead = words
            .iter()
            .take_while(|w| LEADING.contains(&w.as_str()))
            .count();
        return first_ask(&written[lead..], &words[lead..], start - lead)
            .then(|| format!("{}: {text}", Op::Details.phrase()));
    }
    if !written.iter().any(|w| names_file(w)) {
        return None;
    }
    let (op, start) = operation(&written, &words, &names_file)?;
    first_ask(&written, &words, start).then(|| format!("{}: {text}", op.phrase()))
}

#[cfg(test)]
mod tests {
    use super::super::sentences::words_of;
    use super::*;

    /// A stand-in for the gateway's test (query.rs): a path, or a name with an extension.
    fn names_file(word: &str) -> bool {
        let w = word.trim_matches(|c: char| c.is_ascii_punctuation() && c != '/' && c != '~');
        let extension = [
            "csv", "docx", "json", "log", "mp4", "pdf", "png", "pptx", "sql", "xlsx", "zip",
        ]
        .iter()
        .any(|e| w.rsplit_once('.').is_some_and(|(_, x)| x == *e));
        !w.contains("://")
            && !w.contains('@')
            && (w.starts_with('/') || w.starts_with("~/") || extension)
    }

    fn op(text: &str) -> Option<Op> {
        let (written, words) = words_of(text);
        as_file_operation(text, names_file)
            .and(operation(&written, &words, &names_file).map(|(op, _)| op))
    }

    #[test]
    fn operations_on_a_file_as_a_whole() {
        for (text, want) in [
            ("Make a copy of budget.xlsx before I edit it", Op::Copy),
            ("Duplicate ~/slides/q3.pptx", Op::Copy),
            ("Rename report_final_v2.docx to report.docx", Op::Move),
            (
                "Tidy up: put all the PDFs from ~/Desktop into ~/Documents/pdfs",
                Op::Move,
            ),
            ("Get rid of the old log file at /tmp/app.log", Op::Delete),
            ("Trash ~/Desktop/shot-01.png", Op::Delete),
            ("How big is ~/Videos/holiday.mp4?", Op::Details),
            ("When was contract.pdf last modified?", Op::Details),
            ("How large is dump.sql?", Op::Details),
            ("Which files are in /var/log/nginx?", Op::List),
            ("What's stored under /srv/backups right now?", Op::List),
            ("List the contents of the folder ~/projects/api", Op::List),
            ("Show me everything inside ~/Downloads", Op::List),
        ] {
            assert_eq!(op(text), Some(want), "{text}");
        }
    }

    #[test]
    fn a_files_metadata_asked_by_its_fields() {
        let details = |text: &str| {
            as_file_operation(text, names_file)
                .is_some_and(|read| read.starts_with(Op::Details.phrase()))
        };
        assert!(details(
            "and then provide their sizes and modification times."
        ));
        assert!(details("Tell me the file size and last modification date"));
        assert!(!details(
            "Fetch the report and then give me its size and modified date"
        ));
    }

    #[test]
    fn other_operations_and_later_steps_are_not() {
        for text in [
            "Remove the background from photo.png",
            "Delete rows 2 to 5 in data.xlsx",
            "Copy the text of memo.docx into an email",
            "Delete the user bob@example.com",
            "Move the meeting to Friday",
            "Summarize report.pdf and then delete it",
            "Download https://example.com/a.zip. Then move it to ~/Downloads/a.zip",
            "Convert notes.docx to PDF",
            "Check the transfer options from Shanghai to Chengdu and save both to out.json",
            "Keep a copy at ~/react-tree.json",
            "Delete the note with ID \"n-1\" from the team workspace \"/path/to/team\"",
            "What's in budget.xlsx?",
            "What changed in /etc/nginx since yesterday?",
            "Fetch the weather and then list the files in ~/reports",
        ] {
            assert_eq!(op(text), None, "{text}");
        }
    }

    #[test]
    fn any_text_is_read_whole() {
        for text in [
            "",
            "rid",
            "get rid",
            "how big",
            "size of",
            "last modified",
            "which",
            "list in",
            "what's in /",
            "日本 copy a.txt",
        ] {
            let _ = as_file_operation(text, names_file);
        }
    }
}
