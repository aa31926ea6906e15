//! One's own files, acted on as files: "make a copy of budget.xlsx before I edit it", "get rid of
//! the old log file at /tmp/app.log", "how big is ~/Videos/holiday.mp4?". The model read such
//! requests by the file's kind, and the format's tools came first (Excel's sheet copier, log
//! readers, video tools, PDF mergers: 5 of 10 in our file set, docs/routing.md, "One's own files").
//! Read after the operation in the file tools' words ("Copy files or directories: …"), they find
//! the file servers' tools.

use super::sentences::{first_ask, opens_with_any, plain_word as plain};

/// What a request does to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Copy,
    Move,
    Delete,
    Details,
}

impl Op {
    /// What the model and BM25 read before the request, in the words file tools use.
    fn phrase(self) -> &'static str {
        match self {
            Op::Copy => "Copy files or directories to a destination path",
            Op::Move => "Move or rename files or directories",
            Op::Delete => "Delete a file or directory at a path",
            Op::Details => "Retrieve file status details and metadata: size, modification time",
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
    let at = |i: usize| words.get(i).map_or("", String::as_str);
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
        } else if word == "big" && i > 0 && at(i - 1) == "how"
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
            Op::Details if word == "big" => i - 1,
            _ => i,
        };
        Some((op?, start))
    })
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
        "modified",
        "move",
        "put",
        "relocate",
        "remove",
        "rename",
        "rid",
        "shift",
        "size",
        "transfer",
        "trash",
        "updated",
    ];
    if !opens_with_any(text, &hints) {
        return None;
    }
    let written: Vec<&str> = text.split_whitespace().collect();
    if !written.iter().any(|w| names_file(w)) {
        return None;
    }
    let words: Vec<String> = written.iter().map(|w| plain(w)).collect();
    let (op, start) = operation(&written, &words, &names_file)?;
    first_ask(&written, &words, start).then(|| format!("{}: {text}", op.phrase()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in for the gateway's test (query.rs): a path, or a name with an extension.
    fn names_file(word: &str) -> bool {
        let w = word.trim_matches(|c: char| c.is_ascii_punctuation() && c != '/' && c != '~');
        let extension = [
            "csv", "docx", "json", "log", "mp4", "pdf", "png", "pptx", "xlsx", "zip",
        ]
        .iter()
        .any(|e| w.rsplit_once('.').is_some_and(|(_, x)| x == *e));
        !w.contains("://")
            && !w.contains('@')
            && (w.starts_with('/') || w.starts_with("~/") || extension)
    }

    fn op(text: &str) -> Option<Op> {
        let written: Vec<&str> = text.split_whitespace().collect();
        let words: Vec<String> = written.iter().map(|w| plain(w)).collect();
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
        ] {
            assert_eq!(op(text), Some(want), "{text}");
        }
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
            "日本 copy a.txt",
        ] {
            let _ = as_file_operation(text, names_file);
        }
    }
}
