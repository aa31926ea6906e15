//! What a tool does and what a step of a request asks for, as one of a few kinds of action (read,
//! create, change, delete, send, start, stop), from a small lexicon of verbs: among one
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
            "add", "build", "create", "generate", "insert", "make", "register", "upload",
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

fn kind_of(word: &str) -> Option<Action> {
    let word = word
        .trim_matches(|c: char| !c.is_ascii_alphabetic())
        .to_ascii_lowercase();
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

/// What a step asks for: its first verb of the lexicon, passing over a capitalised word inside
/// the step (a name: "Post Office") and a verb that opens a manner ("start by having lunch",
/// "begin with the logs").
pub fn step_action(step: &str) -> Option<Action> {
    let words: Vec<&str> = step.split_whitespace().collect();
    words.iter().enumerate().find_map(|(i, word)| {
        let next = words.get(i + 1).map(|w| w.to_ascii_lowercase());
        let name = i > 0 && word.starts_with(|c: char| c.is_uppercase());
        if name || matches!(next.as_deref(), Some("by" | "with")) {
            None
        } else {
            kind_of(word)
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
