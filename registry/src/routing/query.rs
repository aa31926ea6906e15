//! What of a request the model embeds: the request without its quoted values, and with the kind
//! of a value in place of a file, URL or e-mail address. "Rename 'Q3 Budget Final' to 'Archive'"
//! asks to rename something; the names say what to rename, not what to do, and in a small
//! sentence model's single vector they pull the request towards tools about budgets and
//! archives. Likewise "save it to /home/ana/trips/jfk-weather.md" asks to write a file, not for
//! weather, and "stage README.md" acts on a file: the model sees "save it to file", "stage file".
//! A type that picks the tool stays in the kind: "q3.xlsx" is an "Excel file", "this PNG" a "PNG
//! image file"; and a URL keeps its site, which names the provider: "github web page".
//! BM25 still sees every word (a quoted platform name is an exact match there), the quoted ones
//! at half weight, and the kinds of files and addresses besides (`lexical_query`). A step that
//! writes into a file, named only by where ("into /root/hn.md") or a later one that keeps what
//! was found ("and dump them to …"), is read by both as "write it <destination>", and a phrase
//! that names a shell command ("using the df command") as running one (`command`), and one to
//! the assistant's memory ("remember that …") as what it asks of a memory (`memory`). Measured
//! in docs/routing.md.

use std::borrow::Cow;

use super::arithmetic::as_arithmetic;
use super::calendar::as_calendar;
use super::command::{as_running, Code};
use super::files::as_file_operation;
use super::made::{as_content, as_made_first, as_making};
use super::memory::as_memory;
use super::notes::as_note;
use super::purpose::without_purpose;
use super::reminder::as_reminder;
use super::sentences::words_at;
use super::sentences::LEADING;
use super::spelling::spelled;

/// Quote pairs: a quote opens at the start of a word and closes at the end of one, so
/// apostrophes inside words ("don't", "Alice's") are not quotes.
const QUOTES: &[(char, char)] = &[
    ('\'', '\''),
    ('"', '"'),
    ('`', '`'),
    ('\u{201c}', '\u{201d}'),
    ('\u{2018}', '\u{2019}'),
];

/// Fewer words left than this: the quotes were the request, keep it whole.
const MIN_WORDS_LEFT: usize = 2;

/// File name extensions that make a word a file's name ("config.yaml", "README.md"). A list,
/// not any dotted word: "example.com", "v2.3" and "e.g." name no file.
const FILE_EXTENSIONS: &[&str] = &[
    "7z", "avi", "bash", "bmp", "bz2", "c", "cfg", "conf", "cpp", "cs", "css", "csv", "db", "doc",
    "docx", "env", "epub", "flac", "gif", "go", "gz", "h", "hpp", "htm", "html", "ico", "ini",
    "ipynb", "java", "jpeg", "jpg", "js", "json", "jsonl", "jsx", "kt", "lock", "log", "m4a", "md",
    "mjs", "mkv", "mov", "mp3", "mp4", "odt", "ogg", "parquet", "pdf", "php", "png", "ppt", "pptx",
    "ps1", "py", "rar", "rb", "rs", "rtf", "sh", "sql", "sqlite", "svg", "tar", "tgz", "tif",
    "tiff", "toml", "ts", "tsv", "tsx", "txt", "wav", "webm", "webp", "xls", "xlsx", "xml", "yaml",
    "yml", "zip",
];

/// What kind of thing `value` names, when it is a file, a URL or an e-mail address: the kind is
/// what a tool is chosen by, the value only what it acts on.
fn kind_of(value: &str) -> Option<&'static str> {
    if value.is_empty() || value.contains(char::is_whitespace) {
        return None;
    }
    let lower = value.to_lowercase();
    if ["http://", "https://", "ftp://", "www."]
        .iter()
        .any(|p| lower.starts_with(p))
    {
        return Some("web page");
    }
    if let Some((local, domain)) = value.split_once('@') {
        return (!local.is_empty() && domain.contains('.') && !domain.ends_with('.'))
            .then_some("email address");
    }
    if lower.contains("://") {
        return None;
    }
    let rooted = ["/", "~/", "./", "../"]
        .iter()
        .any(|p| value.starts_with(p))
        && value.len() > 2;
    // A Windows path starts at a drive or a share (`C:\Users`, `\\server\docs`); a backslash
    // elsewhere is an escape or a pattern (`\d+`, `\n`).
    let bytes = value.as_bytes();
    let windows = bytes.len() > 3
        && (bytes[0].is_ascii_alphabetic() && bytes[1] == b':' && bytes[2] == b'\\'
            || value.starts_with("\\\\"));
    let nested = value.matches('/').count() >= 2 || windows;
    let has_letter = value.chars().any(|c| c.is_alphabetic());
    let extension = value.rsplit_once('.').and_then(|(stem, ext)| {
        let stem = stem.rsplit(['/', '\\']).next().unwrap_or(stem);
        let ext = ext.to_lowercase();
        let known = !stem.is_empty()
            && FILE_EXTENSIONS.binary_search(&ext.as_str()).is_ok()
            // "Node.js", "Vue.js": a name, not a file.
            && !(ext == "js" && stem.starts_with(char::is_uppercase));
        known.then_some(ext)
    });
    match extension {
        Some(ext) => Some(file_kind(&ext)),
        None => ((rooted || nested) && has_letter).then_some("file"),
    }
}

/// The words the model sees for `value` when it is a file, a URL or an e-mail address: its
/// kind, and for a URL the site it is on ("github web page"), which names the provider.
fn kind_words(value: &str) -> Option<String> {
    let kind = kind_of(value)?;
    if kind != "web page" {
        return Some(kind.to_string());
    }
    Some(match site_of(value) {
        Some(site) => format!("{site} {kind}"),
        None => kind.to_string(),
    })
}

/// The main label of a URL's host: `https://www.github.com/a/b` → `github`. None for an IP
/// address, a one-label host or a placeholder host (`example.com`). The `url` crate finds the
/// host, past user information and ports, and tells IP addresses from names.
fn site_of(url: &str) -> Option<String> {
    let parsed = match url::Url::parse(url) {
        Ok(parsed) => parsed,
        // "www.github.com/a": no scheme.
        Err(_) => url::Url::parse(&format!("http://{url}")).ok()?,
    };
    let url::Host::Domain(host) = parsed.host()? else {
        return None;
    };
    let host = host.strip_prefix("www.").unwrap_or(host);
    let labels: Vec<&str> = host.split('.').collect();
    if labels.len() < 2 {
        return None;
    }
    // "bbc.co.uk": the label before a two-letter country code's "co"/"com"/"org"/"ac" suffix.
    let mut i = labels.len() - 2;
    if i > 0
        && labels[labels.len() - 1].len() == 2
        && ["co", "com", "org", "ac", "gov", "net"].contains(&labels[i])
    {
        i -= 1;
    }
    let site = labels[i];
    (!site.is_empty()
        && site != "example"
        && site.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
    .then(|| site.to_string())
}

/// The kind of file an extension names, in the words tools describe themselves with, where the
/// type picks the tool: "write it into /root/q3.xlsx" wants a spreadsheet tool, "the text of
/// contract.pdf" a PDF tool. Text files (Markdown, HTML, CSV, code) are written and read by the
/// same file tools, and naming their type pulled converters instead (docs/routing.md).
fn file_kind(ext: &str) -> &'static str {
    match ext {
        "xls" | "xlsx" => "Excel file",
        "ppt" | "pptx" => "PowerPoint presentation",
        "doc" | "docx" | "odt" | "rtf" => "Word file",
        "pdf" => "PDF file",
        "bmp" | "gif" | "ico" | "jpeg" | "jpg" | "png" | "svg" | "tif" | "tiff" | "webp" => {
            "image file"
        }
        "flac" | "m4a" | "mp3" | "ogg" | "wav" => "audio file",
        "avi" | "mkv" | "mov" | "mp4" | "webm" => "video file",
        _ => "file",
    }
}

/// Words that lead to the file a result is to go to ("… into /root/hn.md", "… -> devs.json").
const DESTINATION_WORDS: &[&str] = &["->", "as", "at", "in", "into", "to", "under"];
/// Words that may stand between such a word and the file ("in a new Markdown file at …").
const DESTINATION_FILLER: &[&str] = &[
    "a", "an", "csv", "document", "file", "json", "local", "markdown", "my", "new", "our", "plain",
    "text", "the",
];
/// Verbs of keeping what was found: a later part they open is a step of saving ("…, then write
/// their names to /root/rust.md"); opening a request, what they keep must be found first ("Dump
/// the recent liquidations to ~/liq.json").
pub(crate) const KEEPING_VERBS: &[&str] = &[
    "append", "dump", "export", "jot", "keep", "log", "output", "put", "record", "save", "send",
    "stash", "store", "write",
];
/// The first word of `text` that is not one of [`LEADING`], lowercased: the part's verb, when
/// it has one.
pub(crate) fn part_verb(text: &str) -> String {
    text.split_whitespace()
        .map(|w| {
            w.trim_end_matches(|c: char| !c.is_ascii_alphabetic())
                .to_lowercase()
        })
        .find(|w| !LEADING.contains(&w.as_str()))
        .unwrap_or_default()
}

/// Whether `word` names a file (a path or a file's name), not a URL or an address.
fn names_file(word: &str) -> bool {
    kind_of(around(word).1).is_some_and(|k| k != "web page" && k != "email address")
}

/// Where the phrase that names the file `text`'s result should go to starts (a byte offset),
/// when `text` ends with one ("… into /root/hn.md", "… as a Markdown file at ~/n.md, please"):
/// a word of [`DESTINATION_WORDS`], perhaps words of [`DESTINATION_FILLER`], and a file. None
/// when a file, URL or address comes before it: then the destination is that value's own
/// ("move /a.md to /b.md", "download https://… to /root/c.html").
pub(crate) fn destination_at(text: &str) -> Option<usize> {
    let words = words_at(text);
    let mut end = words.len();
    while end > 0 && around(words[end - 1].1).1.eq_ignore_ascii_case("please") {
        end -= 1;
    }
    if end < 2 || !names_file(words[end - 1].1) {
        return None;
    }
    let mut cut = None;
    for i in (0..end - 1).rev() {
        let word = words[i].1.to_lowercase();
        let core = if word == "->" { "->" } else { around(&word).1 };
        if DESTINATION_WORDS.contains(&core) {
            cut = Some(i);
        } else if !DESTINATION_FILLER.contains(&core) {
            break;
        }
    }
    let cut = cut?;
    let earlier = words[..cut]
        .iter()
        .any(|(_, w)| kind_of(around(w).1).is_some());
    (!earlier).then_some(words[cut].0)
}

/// A part that is a step of writing into a file as "write it <destination>": a part that is
/// only a destination ("into /root/hn.md", as `split::destination_step` cuts them off), or a
/// later part that a verb of keeping opens ("and dump them to ~/trips/kmg-sha.txt", "then
/// save the list to /tmp/issues.md"). What it keeps is what the steps before it found; its own
/// words ("the bundle ids", "the flights") pulled the tools that find those again, and "into
/// file" alone read as being about files in general. "write it" over "save it": one request of
/// our destinations set apart, the same everywhere else (docs/routing.md).
fn as_writing(text: &str) -> Option<String> {
    let at = destination_at(text)?;
    let follows = text
        .split_whitespace()
        .next()
        .is_some_and(|w| LEADING.contains(&w.to_lowercase().as_str()));
    let keeps = follows && KEEPING_VERBS.contains(&part_verb(&text[..at]).as_str());
    (at == 0 || keeps).then(|| format!("write it {}", &text[at..]))
}

/// `word` as what opens it (brackets), its core, and what closes it (brackets, punctuation).
fn around(word: &str) -> (&str, &str, &str) {
    let core = word.trim_start_matches(['(', '[', '<']);
    let lead = &word[..word.len() - core.len()];
    let core = core.trim_end_matches(['.', ',', ';', ':', '?', '!', ')', ']', '>']);
    let tail = &word[lead.len() + core.len()..];
    (lead, core, tail)
}

/// The kind of file a type's name alone names ("this PNG screenshot", "summarize it in a PPT"):
/// a name in capitals whose kind is more than "file". "ICO" is more often a coin offering than
/// an icon.
fn type_name_kind(core: &str) -> Option<&'static str> {
    let name = (2..=4).contains(&core.len())
        && core != "ICO"
        && core
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit());
    name.then(|| file_kind(&core.to_lowercase()))
        .filter(|kind| *kind != "file")
}

/// `word` with its kind in place of a file, URL or e-mail address it names; brackets and
/// punctuation around it stay.
fn kind_in_place(word: &str) -> String {
    let (lead, core, tail) = around(word);
    if let Some(kind) = kind_words(core) {
        return format!("{lead}{kind}{tail}");
    }
    // A type's name alone stays, as tools name the formats they take ("extract SVG assets").
    match type_name_kind(core) {
        Some(kind) if kind.starts_with(core) => format!("{lead}{kind}{tail}"),
        Some(kind) => format!("{lead}{core} {kind}{tail}"),
        None => word.to_string(),
    }
}

/// The byte ranges of `request`'s quoted values, quotes included, in order.
pub(crate) fn quoted_spans(request: &str) -> Vec<std::ops::Range<usize>> {
    let chars: Vec<(usize, char)> = request.char_indices().collect();
    let mut spans = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i].1;
        let at_word_start = i == 0 || chars[i - 1].1.is_whitespace() || chars[i - 1].1 == '(';
        if let Some(&(_, close)) = QUOTES.iter().find(|(open, _)| *open == c && at_word_start) {
            let end = (i + 1..chars.len()).find(|&j| {
                chars[j].1 == close
                    && j > i + 1
                    && chars
                        .get(j + 1)
                        .is_none_or(|(_, n)| n.is_whitespace() || n.is_ascii_punctuation())
            });
            if let Some(end) = end {
                spans.push(chars[i].0..chars[end].0 + close.len_utf8());
                i = end + 1;
                continue;
            }
        }
        i += 1;
    }
    spans
}

/// The byte ranges of `request`'s backticked values: code, a command among them.
pub(crate) fn code_spans(request: &str) -> Vec<Code<'_>> {
    // Most requests have no backtick: no need to find every quoted value.
    if !request.contains('`') {
        return Vec::new();
    }
    quoted_spans(request)
        .into_iter()
        .map(|r| (r.clone(), &request[r]))
        .filter(|(_, value)| value.starts_with('`'))
        .collect()
}

/// `request` with each quoted value passed to `value` and replaced by what it returns (or by a
/// space when it returns nothing).
fn replace_quoted(request: &str, mut value: impl FnMut(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(request.len());
    let mut at = 0;
    for span in quoted_spans(request) {
        out.push_str(&request[at..span.start]);
        let open = request[span.start..]
            .chars()
            .next()
            .map_or(1, char::len_utf8);
        let close = request[..span.end]
            .chars()
            .next_back()
            .map_or(1, char::len_utf8);
        let quoted = &request[span.start + open..span.end - close];
        out.push(' ');
        if let Some(put) = value(quoted.trim()) {
            out.push_str(&put);
            out.push(' ');
        }
        at = span.end;
    }
    out.push_str(&request[at..]);
    out
}

/// Words before a verb of messaging that make it one ("…, then email it", "please mail the").
const BEFORE_VERB: &[&str] = &["also", "and", "please", "then", "to", "you"];
/// Words after a verb of messaging that make it one: its object ("email it", "mail the list").
const OBJECTS: &[&str] = &[
    "a", "all", "an", "each", "every", "his", "it", "its", "my", "our", "that", "the", "their",
    "them", "these", "this", "those", "your",
];
/// Words after a verb of messaging that name whom it goes to ("text me the headlines").
const RECIPIENTS: &[&str] = &["her", "him", "me", "us"];

/// The words of a [`MESSAGE_VERBS`] phrase that BM25 is not given: they say nothing of a tool.
const PHRASE_GLUE: &[&str] = &["a", "an", "to", "with"];

/// Nouns that are also verbs of sending them, and what the model should read for the verb:
/// before the thing sent, before whom it goes to.
const MESSAGE_VERBS: &[(&[&str], &str, &str)] = &[
    (
        &["e-mail", "email", "mail"],
        "send an email with",
        "send an email to",
    ),
    (
        &["sms", "text"],
        "send a text message with",
        "send a text message to",
    ),
    (
        &["dm", "message"],
        "send a message with",
        "send a message to",
    ),
    (&["tweet"], "post a tweet with", "post a tweet to"),
    (
        &["whatsapp"],
        "send a WhatsApp message with",
        "send a WhatsApp message to",
    ),
];

/// The phrase the model reads for word `i` of `words` when it is a noun of messaging used as a
/// verb ("email", "text", "message", "tweet"): the model reads "email it to the team" as being
/// about an e-mail account, a team or whatever follows, "text me the headlines" as being about
/// text, and "send an email with it to the team" as sending one (docs/routing.md, "A verb of
/// messaging"). A verb follows the start, a comma or colon, or a word such as "and" or "then",
/// and comes before its object, its recipient, a name or an address ("mail ops@example.com").
fn message_verb(words: &[&str], i: usize) -> Option<&'static str> {
    let word = words[i].to_ascii_lowercase();
    let (_, with, to) = MESSAGE_VERBS
        .iter()
        .find(|(verbs, _, _)| verbs.contains(&word.as_str()))?;
    let before = match i.checked_sub(1).map(|j| words[j]) {
        None => true,
        Some(w) => {
            w.ends_with([',', ':', '.']) || BEFORE_VERB.contains(&w.to_ascii_lowercase().as_str())
        }
    };
    let next = words
        .get(i + 1)
        .map(|w| w.trim_end_matches([',', '.']).to_ascii_lowercase())
        .unwrap_or_default();
    let address = next.contains('@') || next.starts_with('+');
    // "Text Priya …", "Email Omar …": a name after the verb is whom it goes to.
    let name = words.get(i + 1).is_some_and(|w| {
        let mut letters = w.chars().filter(|c| c.is_alphabetic());
        letters.next().is_some_and(char::is_uppercase) && letters.all(char::is_lowercase)
    });
    if !before {
        None
    } else if address || name || RECIPIENTS.contains(&next.as_str()) {
        Some(to)
    } else if OBJECTS.contains(&next.as_str()) {
        Some(with)
    } else {
        None
    }
}

/// What both the model and BM25 read for `request`: a variant spelled the tools' way, a phrase
/// that names a command as running one, a request to the assistant's memory after what it asks
/// of it, a step that writes into a file as "write it <destination>"; otherwise the request.
fn reading(request: &str) -> Cow<'_, str> {
    read_with_tools_words(request).0
}

/// [`reading`], and whether one of the readings that speak the tools' words read it.
fn read_with_tools_words(request: &str) -> (Cow<'_, str>, bool) {
    let mut read = spelled(request);
    let mut tools_words = false;
    if let Some(plain) = without_purpose(&read) {
        read = Cow::Owned(plain);
    }
    if let Some(running) = as_running(&read, &code_spans(&read)) {
        read = Cow::Owned(running);
        tools_words = true;
    }
    // The first that reads it: a request to be reminded ("don't let me forget to …") is none to
    // a memory, a note or a calendar, one to a memory ("remember that the review moved to 3pm")
    // none to a calendar, and a note ("jot down: dentist on Friday at 3") none to a calendar.
    let unquoted = |text: &str| replace_quoted(text, |_| None);
    let asked = as_arithmetic(&read)
        .or_else(|| as_reminder(&read))
        .or_else(|| as_memory(&read))
        .or_else(|| as_note(&read, unquoted))
        .or_else(|| as_calendar(&read, unquoted))
        .or_else(|| as_file_operation(&read, names_file));
    if let Some(asked) = asked {
        read = Cow::Owned(asked);
        tools_words = true;
    }
    let making = || {
        as_making(&read)
            .or_else(|| as_made_first(&read))
            .or_else(|| as_content(&read))
    };
    if let Some(writing) = as_writing(&read).or_else(making) {
        read = Cow::Owned(writing);
        tools_words = true;
    }
    (read, tools_words)
}

/// `request` without its quoted values (each replaced by a space, or by its kind when it names
/// a file, URL or e-mail address), and with the kind in place of such values left unquoted.
pub fn semantic_query(request: &str) -> String {
    let read = reading(request);
    let request = read.as_ref();
    let unquoted = replace_quoted(request, kind_words);
    let words: Vec<&str> = unquoted.split_whitespace().collect();
    let cleaned = words
        .iter()
        .enumerate()
        .map(|(i, w)| match message_verb(&words, i) {
            Some(phrase) => phrase.to_string(),
            None => kind_in_place(w),
        })
        .collect::<Vec<_>>()
        .join(" ");
    if cleaned.split_whitespace().count() < MIN_WORDS_LEFT {
        request.to_string()
    } else {
        cleaned
    }
}

/// What BM25 searches for `request`, as texts and their weights: the words outside quotes and
/// the kind of each file or e-mail address the request names and the verb a noun of messaging
/// stands for ("text it" → "send", "message") at full weight, the quoted values at half.
/// - A quoted value says what to act on, not what to do; it may still name the platform
///   exactly ("On Tripo AI, …"), so it keeps half its weight rather than none.
/// - BM25 sees a file's name as its own words ("q3 xlsx"), which no tool's description holds,
///   while the tools that write, read or make such files name the kind ("Excel file",
///   "PowerPoint presentation" for "a PPT"). A URL's site is among its words already, and
///   "web page" added nothing but generic words (docs/routing.md).
pub fn lexical_query(request: &str) -> [(String, f32); 2] {
    lexical_reading(request).0
}

/// [`lexical_query`], and whether a reading put the request in the tools' own words ("Add to
/// memory: …", "Run a shell command: …", "write it …"): its words are then the gateway's
/// translation, not words it merely shares with a description, and BM25 keeps its weight even
/// for a request of one need ([`super::Fusion::single_need_lexical_weight`] is for a need in
/// the asker's words). One reading serves both, as the search needs both.
pub(crate) fn lexical_reading(request: &str) -> ([(String, f32); 2], bool) {
    let (read, tools_words) = read_with_tools_words(request);
    let request = read.as_ref();
    let mut quoted = Vec::new();
    let outside = replace_quoted(request, |v| {
        quoted.push(v.to_string());
        None
    });
    let mut kinds: Vec<&str> = Vec::new();
    for word in outside
        .split_whitespace()
        .chain(quoted.iter().map(String::as_str))
    {
        let (_, core, _) = around(word);
        let kind = match kind_of(core) {
            Some("web page") => None,
            Some(kind) => Some(kind),
            // A type's name alone: its kind without the name, which is among the words
            // already ("a PPT" → "PowerPoint presentation", "a PDF" → "file").
            None => type_name_kind(core).map(|kind| kind.strip_prefix(core).unwrap_or(kind).trim()),
        };
        if let Some(kind) = kind.filter(|k| !kinds.contains(k)) {
            kinds.push(kind);
        }
    }
    // A noun of messaging used as a verb brings the words it stands for that the request lacks:
    // "text it to +1 555 0100" should find `send_sms`, not `type_text`.
    let words: Vec<&str> = outside.split_whitespace().collect();
    for i in 0..words.len() {
        let Some(phrase) = message_verb(&words, i) else {
            continue;
        };
        for word in phrase.split(' ').filter(|w| !PHRASE_GLUE.contains(w)) {
            let named = words.iter().any(|w| w.eq_ignore_ascii_case(word));
            if !named && !kinds.contains(&word) {
                kinds.push(word);
            }
        }
    }
    let texts = [
        (format!("{outside} {}", kinds.join(" ")), 1.0),
        (quoted.join(" "), 0.5),
    ];
    (texts, tools_words)
}

#[cfg(test)]
mod tests;
