//! What a tool does and what a step of a request asks for, as one of a few kinds of action (read,
//! create, change, delete, send, start, stop; a step may also ask to write, which creating or
//! changing both do), from a small lexicon of verbs: among one
//! provider's look-alikes the action is what tells them apart ("shut down the instance" wants
//! `stop_instance`, not `start_instance`, whose words are the same). Used to rank a split
//! request's steps ([`super::index::ToolIndex::search_steps`]); measured in docs/routing.md
//! ("The action a step asks for").

/// A kind of action. Each verb of the lexicon belongs to one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Read,
    Create,
    Change,
    Delete,
    Send,
    Start,
    Stop,
    /// Putting what a step has somewhere ("log the quotes in our sheet", "store them in a Redis
    /// set"): a tool that creates or changes does it. Asked for by a step, never read from a tool.
    Write,
}

impl Action {
    /// Whether a tool that does `tool` does what a step asking for `self` wants.
    pub fn served_by(self, tool: Action) -> bool {
        self == tool || (self == Action::Write && matches!(tool, Action::Create | Action::Change))
    }
}

/// The verbs of each kind (base forms; a final "s" is read too: "Retrieves").
const VERBS: &[(Action, &[&str])] = &[
    (
        Action::Read,
        &[
            "access", "analyse", "analyze", "check", "describe", "discover", "display", "extract",
            "fetch", "find", "get", "identify", "inspect", "list", "look", "obtain", "pull",
            "query", "read", "retrieve", "search", "show", "verify", "view",
        ],
    ),
    (
        Action::Create,
        &[
            "add", "build", "create", "draw", "generate", "insert", "make", "register", "upload",
        ],
    ),
    (
        Action::Change,
        &[
            "change",
            "configure",
            "define",
            "edit",
            "modify",
            "rename",
            "replace",
            "set",
            "update",
        ],
    ),
    (
        Action::Delete,
        &["clear", "delete", "drop", "erase", "purge", "remove"],
    ),
    (
        Action::Send,
        &[
            "email", "forward", "mail", "message", "notify", "post", "publish", "reply", "send",
            "share", "text", "tweet",
        ],
    ),
    (
        Action::Start,
        &[
            "begin", "execute", "initiate", "launch", "run", "start", "trigger",
        ],
    ),
    (
        Action::Stop,
        &["cancel", "halt", "kill", "pause", "stop", "terminate"],
    ),
];

/// Everyday verbs a step acts in that tools do not name themselves by, each with the particle
/// that may follow it ("fire off", "shut it down"). Each is read as a verb only before its object
/// ([`OBJECT_OPENERS`]): "file a Linear issue", not "the file is at …"; "log the quotes", not
/// "log in" or "check the log".
const EVERYDAY_VERBS: &[(&str, Option<&str>, Action)] = &[
    ("file", None, Action::Create),
    ("fire", Some("off"), Action::Send),
    ("grab", None, Action::Read),
    ("jot", Some("down"), Action::Write),
    ("kick", Some("off"), Action::Start),
    ("log", None, Action::Write),
    ("ping", None, Action::Send),
    ("push", None, Action::Send),
    ("put", None, Action::Write),
    ("raise", None, Action::Create),
    ("record", None, Action::Write),
    ("save", None, Action::Write),
    ("shoot", Some("over"), Action::Send),
    ("shut", Some("down"), Action::Stop),
    ("spin", Some("up"), Action::Create),
    ("stick", None, Action::Write),
    ("store", None, Action::Write),
    ("write", None, Action::Write),
];

/// Words that open the object of a verb: an article, a determiner or a pronoun.
const OBJECT_OPENERS: &[&str] = &[
    "a", "all", "an", "any", "each", "every", "her", "him", "his", "it", "its", "me", "my", "one",
    "our", "some", "that", "the", "their", "them", "these", "this", "those", "us", "your",
];

/// What is opened when opening creates it ("open a Linear issue", "open a ticket"); opening
/// anything else (a file, a page) is reading it and left to the tools' words.
const OPENED_AS_NEW: &[&str] = &["bug", "case", "incident", "issue", "pr", "pull", "ticket"];

/// `word` without what surrounds its letters, lowercased.
fn plain(word: &str) -> String {
    word.trim_matches(|c: char| !c.is_ascii_alphabetic())
        .to_ascii_lowercase()
}

/// The kind of the everyday verb `words[i]`, when it is one before its object (after its
/// particle, or with the particle after a pronoun: "shut it down").
fn everyday_kind(words: &[&str], i: usize) -> Option<Action> {
    let word = plain(words[i]);
    let next = |n: usize| words.get(i + n).map(|w| plain(w));
    let opens_object = |w: Option<String>| w.is_some_and(|w| OBJECT_OPENERS.contains(&w.as_str()));
    if word == "open" {
        let new = (1..=3).any(|n| {
            next(n).is_some_and(|w| {
                OPENED_AS_NEW.contains(&w.as_str())
                    || w.strip_suffix('s')
                        .is_some_and(|w| OPENED_AS_NEW.contains(&w))
            })
        });
        return new.then_some(Action::Create);
    }
    let (_, particle, kind) = EVERYDAY_VERBS.iter().find(|(verb, ..)| *verb == word)?;
    let after_particle = particle.is_some_and(|p| next(1).as_deref() == Some(p));
    let object = if after_particle { next(2) } else { next(1) };
    // "shut it down": the object may come before the particle too.
    (opens_object(object) || opens_object(next(1))).then_some(*kind)
}

/// The words [`everyday_kind`] reads from its verb on: the verb and the three after it ("open
/// a new issue", "shut it down").
const EVERYDAY_REACH: usize = 4;

/// Whether `text` opens with an everyday verb before its object ("file a bug …", "shut it
/// down"): a step of its own after "and". Only its first words are split off: the splitter and
/// the reason reading ask this at every "and" of a request.
pub fn opens_with_everyday_verb(text: &str) -> bool {
    let words: Vec<&str> = text.split_whitespace().take(EVERYDAY_REACH).collect();
    !words.is_empty() && everyday_kind(&words, 0).is_some()
}

fn kind_of(word: &str) -> Option<Action> {
    let word = plain(word);
    let find = |w: &str| {
        VERBS
            .iter()
            .find(|(_, verbs)| verbs.contains(&w))
            .map(|(kind, _)| *kind)
    };
    find(&word).or_else(|| word.strip_suffix('s').and_then(find))
}

/// Whether `word` is a verb of one of the kinds ("verify", "Retrieves").
pub fn is_action_verb(word: &str) -> bool {
    kind_of(word).is_some()
}

/// What a tool does, from its BM25 text ("<name in words>. <description>…"): a verb among its
/// name's words (`stop_instance`), else its description's first word ("Retrieve …").
pub fn tool_action(text: &str) -> Option<Action> {
    let (name, description) = text.split_once(". ").unwrap_or((text, ""));
    name.split_whitespace()
        .find_map(kind_of)
        .or_else(|| description.split_whitespace().next().and_then(kind_of))
}

/// What a step asks for: its first verb of the lexicon or everyday verb before its object,
/// passing over a capitalised word inside the step (a name: "Post Office") and a verb that opens
/// a manner ("start by having lunch", "begin with the logs").
pub fn step_action(step: &str) -> Option<Action> {
    let words: Vec<&str> = step.split_whitespace().collect();
    words.iter().enumerate().find_map(|(i, word)| {
        let next = words.get(i + 1).map(|w| w.to_ascii_lowercase());
        let name = i > 0 && word.starts_with(|c: char| c.is_uppercase());
        if name || matches!(next.as_deref(), Some("by" | "with")) {
            None
        } else {
            kind_of(word).or_else(|| everyday_kind(&words, i))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_and_steps_get_the_kind_of_their_verb() {
        assert_eq!(
            tool_action("stop instance. Shut down a running desktop instance."),
            Some(Action::Stop)
        );
        assert_eq!(
            tool_action("paradex vault list. Retrieves a detailed list of vaults."),
            Some(Action::Read)
        );
        assert_eq!(tool_action("ocr. Optical character recognition."), None);
        assert_eq!(
            step_action("and then create a Trello card for it?"),
            Some(Action::Create)
        );
        assert_eq!(
            step_action("I want to start by having lunch somewhere, then find a match"),
            Some(Action::Read)
        );
        assert_eq!(step_action("I am a vegan."), None);
        assert_eq!(
            step_action("then calculate the distance from New York to Los Angeles"),
            None
        );
    }

    #[test]
    fn everyday_verbs_count_only_before_their_object() {
        assert_eq!(
            step_action("and file a Linear issue for it"),
            Some(Action::Create)
        );
        assert_eq!(step_action("the file is at /tmp/x"), None);
        assert_eq!(
            step_action("and log the quotes in our sheet"),
            Some(Action::Write)
        );
        assert_eq!(step_action("log in to the portal"), None);
        assert_eq!(step_action("shut it down afterwards"), Some(Action::Stop));
        assert_eq!(step_action("open a ticket in Plane"), Some(Action::Create));
        assert_eq!(step_action("open the page"), None);
        assert!(opens_with_everyday_verb("fire off an email to ops"));
        // The last word it reads is the fourth.
        assert!(opens_with_everyday_verb("open a new issue for the crash"));
        assert!(!opens_with_everyday_verb("open the old page of issue 3"));
        assert!(!opens_with_everyday_verb("file names"));
        assert!(Action::Write.served_by(Action::Change));
        assert!(!Action::Write.served_by(Action::Read));
    }

    #[test]
    fn the_lexicon_is_sorted_and_each_verb_has_one_kind() {
        let mut all: Vec<&str> = Vec::new();
        for (_, verbs) in VERBS {
            assert!(verbs.windows(2).all(|w| w[0] < w[1]), "{verbs:?}");
            all.extend(verbs.iter());
        }
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n);
    }
}
