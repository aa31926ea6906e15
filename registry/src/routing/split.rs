//! Splitting a request into the steps it asks for ("find the file, then email it to Bob"), so
//! that each step gets its own search: one vector of a long multi-step request is a blur of all
//! of them, and the tool of a minor step never comes near it. Local rules, no model: sentences
//! and a list's items, then clauses at sequencing words, at an arrow before an action verb, at
//! "and" before an action verb, at a saving phrase, at a comma before an action verb that ends
//! an action of its own, before a file named for the result ("… into /root/hn.md") or a thing to
//! make ("… as a PDF report"), after a thing to make named first when its content has a source
//! ("Make a bar chart | of my Strava activities"), and around a phrase that names a shell
//! command ("… using the df -h command").

use super::action::{is_action_verb, opens_with_everyday_verb, step_action};
use super::command::{named_command, Code};
use super::made::{content_at, made_at};
use super::pointer::points_only;
use super::query::{destination_at, part_verb, quoted_spans, KEEPING_VERBS};
use super::sent::{sent_before_recipient, sent_content_at};
use super::sentences::{list_item, sentences, ARROWS};

/// Words that open a new step inside a sentence: after a space, and followed by a space or a
/// comma ("…, and finally, give me the price").
const STEP_MARKERS: &[&str] = &[
    "additionally",
    "afterwards",
    "also",
    "and also",
    "and finally",
    "and then",
    "as well as",
    "after that",
    "finally",
    "followed by",
    "lastly",
    "once that is done",
    "once you have",
    "then",
];

/// Verbs of an action a tool does (the base form), of putting what was found somewhere ("put",
/// "keep", "turn", "jot") and of keeping it in memory ("remember", `memory`): "… and summarize
/// it in a PPT", "… and put it into a slide", "… and remember the host it names" are steps of
/// their own. A small lexicon of actions, not of any set's requests. After a comma
/// only with the care of [`comma_steps`]: cutting at every one cost ETOM level 4
/// (docs/routing.md).
const ACTION_VERBS: &[&str] = &[
    "add",
    "analyse",
    "analyze",
    "archive",
    "attach",
    "book",
    "calculate",
    "chart",
    "check",
    "commit",
    "compare",
    "compress",
    "convert",
    "copy",
    "create",
    "delete",
    "deploy",
    "dm",
    "download",
    "draft",
    "draw",
    "dump",
    "email",
    "estimate",
    "export",
    "extract",
    "fetch",
    "fill",
    "find",
    "forward",
    "generate",
    "get",
    "jot",
    "keep",
    "list",
    "log",
    "look",
    "mail",
    "memorise",
    "memorize",
    "merge",
    "message",
    "move",
    "notify",
    "open",
    "plot",
    "post",
    "present",
    "print",
    "publish",
    "pull",
    "push",
    "put",
    "read",
    "record",
    "remember",
    "remove",
    "rename",
    "render",
    "reply",
    "retrieve",
    "run",
    "save",
    "schedule",
    "search",
    "send",
    "share",
    "show",
    "sms",
    "store",
    "summarise",
    "summarize",
    "tell",
    "text",
    "transcribe",
    "translate",
    "turn",
    "tweet",
    "update",
    "upload",
    "visualise",
    "visualize",
    "write",
];

/// Verbs that are as often nouns in a list ("image models, text models, and audio voices",
/// "the system information, list of datasets"): no cut after a comma.
const NOUNS_TOO: &[&str] = &[
    "access", "book", "build", "change", "chart", "display", "dm", "draft", "drop", "dump",
    "email", "kill", "log", "mail", "make", "message", "plot", "post", "query", "record", "set",
    "sms", "start", "stop", "text", "tweet", "view",
];

/// Words that open a condition or a time ("If the check passes, read the paper", "For each
/// paper, analyze the abstract"): the comma after such a clause ends it, not a step.
const SUBORDINATORS: &[&str] = &[
    "after", "although", "as", "because", "before", "for", "if", "once", "since", "unless",
    "until", "when", "whenever", "while",
];

/// Words that open a step of saving what came before ("… saved at /root/ai.html").
const SAVING: &[&str] = &["saved at ", "saved to ", "saved in ", "saved as "];

/// Subjects before "saved" that make it a verb of its own clause, not the start of a step.
const SUBJECTS: &[&str] = &["he", "i", "she", "they", "we", "you"];

/// Parts with fewer words are not a step of their own ("Thanks!", "the next 5 days"): they
/// stay with the part before them.
const MIN_WORDS: usize = 4;
/// At most this many parts are searched: each costs an embedding (about 5 ms on 2 cores). Six cut
/// off the later steps of long requests; past eight nothing changed (docs/routing.md).
pub const MAX_PARTS: usize = 8;

/// The most of a request the router reads, in bytes: the longest request of every evaluation
/// set is under 5,000, the model embeds 128 tokens of each text, and only eight parts are
/// searched. The readings look at words around words, so a request the size of a body limit
/// (4 MiB) cost minutes of CPU before it was bounded (700 KB: 29 s).
pub const MAX_REQUEST_BYTES: usize = 8 * 1024;

/// The part of `request` the router reads: all of it, or its first [`MAX_REQUEST_BYTES`] cut at
/// a character's boundary.
pub fn bounded_request(request: &str) -> &str {
    if request.len() <= MAX_REQUEST_BYTES {
        return request;
    }
    let end = (0..=MAX_REQUEST_BYTES)
        .rev()
        .find(|&i| request.is_char_boundary(i))
        .unwrap_or(0);
    &request[..end]
}

/// How many tools a search that names no k returns: `default_k`, or, for a request split into
/// `steps` parts, one for each part and one for the whole request when that is more (at most
/// `max_k`). The first round of a split search gives exactly that many, so no step goes without.
pub fn answer_size(default_k: usize, max_k: usize, steps: usize) -> usize {
    let per_step = if steps > 1 { steps + 1 } else { 0 };
    default_k.max(per_step).min(max_k)
}

/// The steps of `request`, in order; a single element when it has only one. Parts keep their
/// own words only: no part repeats another.
pub fn split_request(request: &str) -> Vec<String> {
    let (masked, quoted) = mask_quoted(request);
    let mut parts: Vec<String> = Vec::new();
    for sentence in sentences(&masked) {
        for clause in clauses(&sentence) {
            let clause = clause.trim_matches(|c: char| c.is_whitespace() || c == ',' || c == ';');
            let (clause, item) = list_item(clause);
            if clause.is_empty() {
                continue;
            }
            // Read only for a short part: most parts are long enough to stand alone.
            let own_step = || {
                let lower = clause.to_lowercase();
                opens_action(&lower, 0) || item && starts_with_verb(&lower)
            };
            match parts.last_mut() {
                // A part that ends in a colon announces what follows ("run this query:",
                // "the following steps:"): it and what follows are one step.
                Some(last)
                    if last.ends_with(':')
                        || clause.split_whitespace().count() < MIN_WORDS && !own_step() =>
                {
                    last.push(' ');
                    last.push_str(clause);
                }
                _ => parts.push(clause.to_string()),
            }
        }
    }
    // A short first part joins the second, unless both are actions with what they act on
    // ("Read config.yaml | and remember the host it names"; "Find and compare flights …" is one).
    let both_steps = || {
        let acts =
            parts[0].split_whitespace().count() > 1 && starts_with_verb(&parts[0].to_lowercase());
        acts && opens_action(&parts[1].to_lowercase(), 0)
    };
    if parts.len() >= 2 && parts[0].split_whitespace().count() < MIN_WORDS && !both_steps() {
        let first = parts.remove(0);
        parts[0] = format!("{first} {}", parts[0]);
    }
    // Cutting at commas and destinations too must not push a later step past the last part
    // searched.
    let finer: Vec<String> = parts
        .iter()
        .enumerate()
        .flat_map(|(i, p)| {
            comma_steps(p)
                .into_iter()
                .enumerate()
                .map(move |(j, c)| (i == 0 && j == 0, c))
        })
        .flat_map(|(opens_request, c)| command_step(&c, &quoted, opens_request))
        .flat_map(|(opens_request, c)| destination_step(&c, opens_request))
        .flat_map(|c| content_step(&c))
        .collect();
    if finer.len() <= MAX_PARTS {
        parts = finer;
    }
    // A call for help with what the other parts ask is no step ("Could you help me with a few
    // tasks? First, …").
    // With one part left the request is one need, read whole.
    let asking: Vec<String> = parts.iter().filter(|p| !points_only(p)).cloned().collect();
    if !asking.is_empty() {
        parts = asking;
    }
    if parts.len() < 2 {
        return vec![request.trim().to_string()];
    }
    parts.truncate(MAX_PARTS);
    parts.iter().map(|p| unmask(p, &quoted)).collect()
}

/// The first of the private-use characters that stand for quoted values while a request is cut.
const MASK: u32 = 0xE000;

/// `request` with each quoted value replaced by one private-use character, and the values: a
/// quoted value is what a step acts on, never where it ends ("with the content 'Attendees:
/// John. Minutes: …'" is one step). Left as it is: a request with fewer words outside its
/// quotes than a step has (the quotes are the request: `"John has two triangles. … Can you
/// help him?"`), with such characters of its own, or with more quoted values than they are.
fn mask_quoted(request: &str) -> (String, Vec<&str>) {
    let is_mask = |c: char| (MASK..MASK + 0x1000).contains(&u32::from(c));
    let spans = quoted_spans(request);
    if spans.is_empty() || request.chars().any(is_mask) || spans.len() >= 0x1000 {
        return (request.to_string(), Vec::new());
    }
    let mut masked = String::with_capacity(request.len());
    let mut at = 0;
    let mut values = Vec::with_capacity(spans.len());
    for (n, span) in spans.into_iter().enumerate() {
        masked.push_str(&request[at..span.start]);
        masked.extend(char::from_u32(MASK + n as u32));
        values.push(&request[span.clone()]);
        at = span.end;
    }
    masked.push_str(&request[at..]);
    // The words outside the quotes: a value parts the words on either side of it.
    let outside = masked
        .split(|c: char| c.is_whitespace() || is_mask(c))
        .filter(|w| !w.is_empty())
        .count();
    if outside < MIN_WORDS {
        return (request.to_string(), Vec::new());
    }
    (masked, values)
}

/// `part` with its quoted values back.
fn unmask(part: &str, values: &[&str]) -> String {
    part.chars()
        .fold(String::with_capacity(part.len()), |mut out, c| {
            match u32::from(c)
                .checked_sub(MASK)
                .and_then(|n| values.get(n as usize))
            {
                Some(value) => out.push_str(value),
                None => out.push(c),
            }
            out
        })
}

/// Whether `lower` opens with an arrow and an action verb: the next link of a chain.
fn opens_link(lower: &str) -> bool {
    let Some(rest) = ARROWS.iter().find_map(|a| lower.strip_prefix(a)) else {
        return false;
    };
    starts_with_verb(rest)
}

/// Whether `lower`'s first word is a verb that opens a step ([`is_step_verb`]).
fn starts_with_verb(lower: &str) -> bool {
    let word: String = lower
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect();
    is_step_verb(&word)
}

/// Whether `word` (lowercase) is a verb of [`ACTION_VERBS`] or of the actions tools do.
fn is_step_verb(word: &str) -> bool {
    ACTION_VERBS.binary_search(&word).is_ok() || is_action_verb(word)
}

/// A sentence cut before each step marker that follows a comma or starts a word.
fn clauses(sentence: &str) -> Vec<String> {
    let lower = sentence.to_lowercase();
    // Byte offsets line up: lowercasing ASCII keeps lengths, and the markers are ASCII; a
    // sentence whose lowercase form changes length is left whole.
    if lower.len() != sentence.len() {
        return vec![sentence.to_string()];
    }
    let mut cuts = Vec::new();
    let bytes = lower.as_bytes();
    for (i, _) in lower.char_indices() {
        let at_word = i > 0 && bytes[i - 1] == b' ';
        if !at_word {
            continue;
        }
        if STEP_MARKERS
            .iter()
            .any(|m| starts_with_word(&lower[i..], m))
            || opens_action(&lower, i)
            || opens_link(&lower[i..])
        {
            // "and then": cut before "and", not between it and "then".
            if cuts.last().is_some_and(|&c| i - c <= 4) {
                continue;
            }
            cuts.push(i);
        }
    }
    pieces(sentence, &cuts).map(str::to_string).collect()
}

/// `text` cut at the byte offsets `cuts` (ascending), every piece kept.
fn pieces<'a>(text: &'a str, cuts: &'a [usize]) -> impl Iterator<Item = &'a str> {
    let starts = std::iter::once(0).chain(cuts.iter().copied());
    let ends = cuts.iter().copied().chain(std::iter::once(text.len()));
    starts.zip(ends).map(move |(start, end)| &text[start..end])
}

/// `part` cut after each comma that comes before a verb of [`ACTION_VERBS`] or of the actions
/// tools do ([`is_action_verb`]: "…, check its status, verify the licences"), when the words
/// since the last cut ask for an action of their own ([`step_action`]) and do not open a
/// condition ([`SUBORDINATORS`]), and the verb is not likely a noun ([`NOUNS_TOO`], "list of").
fn comma_steps(part: &str) -> Vec<String> {
    let lower = part.to_lowercase();
    // Offsets line up only when lowercasing keeps lengths (as in `clauses`).
    if lower.len() != part.len() {
        return vec![part.to_string()];
    }
    let mut cuts: Vec<usize> = Vec::new();
    for (comma, _) in lower.match_indices(", ") {
        let at = comma + 2;
        let mut words = lower[at..].split_whitespace();
        let verb = words
            .next()
            .unwrap_or("")
            .trim_end_matches(|c: char| !c.is_ascii_alphabetic());
        let noun = NOUNS_TOO.contains(&verb) || words.next() == Some("of");
        if noun || !is_step_verb(verb) {
            continue;
        }
        let since = cuts.last().copied().unwrap_or(0);
        let opener = lower[since..comma]
            .split_whitespace()
            .next()
            .unwrap_or("")
            .trim_end_matches(',');
        if step_action(&part[since..comma]).is_some() && !SUBORDINATORS.contains(&opener) {
            cuts.push(at);
        }
    }
    // A part never ends in a space or a comma (`split_request` trims them), so only the pieces
    // before a cut lose one.
    pieces(part, &cuts)
        .map(|p| p.trim_end_matches([' ', ',']).to_string())
        .collect()
}

/// `part` cut before a phrase that names a shell command to run ("Show the free disk space |
/// using the df -h command"): running it is a step that a terminal tool serves, which the need
/// it serves would drown. Not when the part is little more than the phrase ("Check it with the
/// lsof command"): the part is that step, unless what it is for follows it ("to see …").
/// `values` are the masked quoted values (a backticked one after "run" is a command); `first`
/// is passed on with the first piece.
fn command_step(part: &str, values: &[&str], first: bool) -> Vec<(bool, String)> {
    let code: Vec<Code> = part
        .char_indices()
        .filter_map(|(i, c)| {
            let value = u32::from(c)
                .checked_sub(MASK)
                .and_then(|n| values.get(n as usize))?;
            value
                .starts_with('`')
                .then(|| (i..i + c.len_utf8(), *value))
        })
        .collect();
    let whole = vec![(first, part.to_string())];
    let Some(found) = named_command(part, &code) else {
        return whole;
    };
    let before = part[..found.span.start].trim_end_matches([' ', ',']);
    if before.split_whitespace().count() >= MIN_WORDS {
        return vec![
            (first, before.to_string()),
            (false, part[found.span.start..].to_string()),
        ];
    }
    // The phrase first and what it is for after it: "Use the command `pip list --outdated` |
    // to see which packages need updating".
    let after = part[found.span.end..].trim_start_matches([' ', ',']);
    if after.starts_with("to ") && after.split_whitespace().count() >= MIN_WORDS {
        return vec![
            (first, part[..found.span.end].to_string()),
            (false, after.to_string()),
        ];
    }
    whole
}

/// Verbs that take a thing to a file themselves: the destination after them is theirs ("copy
/// the config to /root/b.conf", "download the changelog to …").
const TRANSFER_VERBS: &[&str] = &[
    "convert", "copy", "download", "move", "rename", "sync", "transfer", "upload",
];
/// Verbs a file-writing tool does itself: what they write is given ("Write a haiku about autumn
/// to /tmp/haiku.txt", "Append the log line to …"), one need with its file.
const WRITING_VERBS: &[&str] = &["append", "save", "write"];
/// `part` cut before the file its result should go to ("Pull the fundamentals … into
/// ~/kospi/samsung.csv"), or before the thing it is to be made into ("Summarize the newest
/// papers | as a PDF report", [`made_at`]): the destination is a step of saving or making, which
/// the rest of the part's words would drown. Not when the part's verb moves things to files
/// itself ([`TRANSFER_VERBS`]; and "turn" into a thing to make: converting) or writes them
/// ([`WRITING_VERBS`]), nor when it keeps things and the part is not the request's `first` (it
/// is the saving step then), nor when the part is little more than the destination.
fn destination_step(part: &str, first: bool) -> Vec<String> {
    let whole = vec![part.to_string()];
    let (at, made) = match destination_at(part) {
        Some(at) => (at, false),
        None => match made_at(part) {
            Some(at) => (at, true),
            None => return whole,
        },
    };
    let before = part[..at].trim_end_matches([' ', ',']);
    if before.split_whitespace().count() < MIN_WORDS {
        return whole;
    }
    let verb = part_verb(before);
    let keeps = KEEPING_VERBS.contains(&verb.as_str());
    if TRANSFER_VERBS.contains(&verb.as_str())
        || WRITING_VERBS.contains(&verb.as_str())
        || made && verb == "turn"
        || !first && keeps
    {
        return whole;
    }
    // "at", "in", "under" say where a file is as often as where one should go ("transcribe the
    // recording at ~/a.mp3"): a destination only after a verb of keeping or with the word
    // "file" ("… in a text file at /home/me/n.txt"). A thing to make reads its own prepositions.
    let phrase = part[at..].to_lowercase();
    let opener = phrase.split_whitespace().next().unwrap_or("");
    let locative = matches!(opener, "at" | "in" | "under");
    let says_file = phrase
        .split_whitespace()
        .any(|w| w == "file" || w == "document");
    if !made && locative && !keeps && !says_file {
        return whole;
    }
    vec![before.to_string(), part[at..].to_string()]
}

/// `part` cut after a thing to make that it names first, before what that thing is made of,
/// when that names a source ("Make a bar chart | of my Strava activities this month",
/// [`content_at`]), or after a verb of sending and its recipient, before what is sent ("Text +1
/// 555 0142 | the hottest post on r/wallstreetbets", [`sent_content_at`]), or between the verb
/// and "to" its recipient ([`sent_before_recipient`]): finding the content is a step of its own.
fn content_step(part: &str) -> Vec<String> {
    if let Some(at) = content_at(part).or_else(|| sent_content_at(part)) {
        return vec![
            part[..at].trim_end_matches([' ', ',']).to_string(),
            part[at..].to_string(),
        ];
    }
    // "Email | the markdown of https://… | to me@example.com": the sending with its recipient
    // is one step, what it sends another (its words kept, in the request's order).
    match sent_before_recipient(part) {
        Some((content, to)) => vec![
            format!("{} {}", part[..content].trim_end(), &part[to..]),
            part[content..to].trim_end_matches([' ', ',']).to_string(),
        ],
        None => vec![part.to_string()],
    }
}

/// Whether `text` starts with the words `words`, followed by a space or a comma.
fn starts_with_word(text: &str, words: &str) -> bool {
    text.strip_prefix(words)
        .is_some_and(|rest| rest.starts_with([' ', ',']))
}

/// Whether the words at `i` (a word's start) open an action of their own: "and <verb>" (of the
/// lexicon, or an everyday verb before its object: "and file a bug"), or a
/// saving phrase.
fn opens_action(lower: &str, i: usize) -> bool {
    let rest = &lower[i..];
    if SAVING.iter().any(|m| rest.starts_with(m)) {
        // "what I saved in Bear": after a subject "saved" tells what someone did, in the
        // request's own step; only a participle ("… saved at /root/ai.html") opens a step.
        let subject = lower[..i].split_whitespace().next_back();
        return !subject.is_some_and(|w| SUBJECTS.contains(&w));
    }
    let Some(verb_at) = rest.strip_prefix("and ") else {
        return false;
    };
    let word: String = verb_at
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect();
    ACTION_VERBS.binary_search(&word.as_str()).is_ok() || opens_with_everyday_verb(verb_at)
}

#[cfg(test)]
mod tests;
