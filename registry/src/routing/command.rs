//! A request that names a shell command to run ("… using the df -h command", "run `npm test`",
//! "… with the command heroku --version"): running the command is a step of its own, which a
//! tool that runs commands serves. The model reads such a request by its other words ("how much
//! disk space is free") and the command's name as a word ("docker", "date"), so a terminal tool
//! never came near; "run a command in the terminal (df -h)" finds one first (docs/routing.md,
//! "A command to run").

use std::ops::Range;

/// Words that hand a command to a step: "using the df command", "run `npm test`", "via the
/// kill command".
const INSTRUMENTS: &[&str] = &[
    "execute",
    "executing",
    "run",
    "running",
    "use",
    "using",
    "via",
    "with",
];

/// Words between an instrument and the command that say nothing of it.
const ARTICLES: &[&str] = &["a", "an", "exact", "the", "this"];

/// At most this many words between an instrument and "command" ("using ImageMagick's convert
/// command"): further away, "command" belongs to something else.
const WITHIN: usize = 4;

/// Words after "command" that make it a thing other than a command ("the command line").
const NOT_A_COMMAND: &[&str] = &["center", "centre", "line", "palette", "prompt"];

/// Words that are no part of a command's name: "with a note about the command …" names none.
const NOT_IN_A_NAME: &[&str] = &[
    "a", "about", "an", "for", "from", "in", "into", "of", "on", "the", "to",
];

/// Programs that are run from a terminal and are no English word, so that "use docker ps" names
/// a command without the word "command" (sorted: a binary search reads it).
const PROGRAMS: &[&str] = &[
    "apt",
    "apt-get",
    "brew",
    "cargo",
    "chmod",
    "chown",
    "curl",
    "docker",
    "ffmpeg",
    "gcloud",
    "git",
    "grep",
    "helm",
    "journalctl",
    "kubectl",
    "ls",
    "lsof",
    "mkdir",
    "npm",
    "npx",
    "pip",
    "pip3",
    "pnpm",
    "pytest",
    "rsync",
    "scp",
    "ssh",
    "sudo",
    "systemctl",
    "terraform",
    "wget",
    "yarn",
];

/// Words that end a command given after "the command" ("… the command echo %time% to see …").
const AFTER_COMMAND: &[&str] = &["and", "so", "then", "to"];

/// At most this many words of a command given after "the command".
const COMMAND_WORDS: usize = 8;

/// A backticked value of a text: its bytes there, and the value (backticks included; in a
/// request being cut, the value a masking character stands for).
pub(crate) type Code<'a> = (Range<usize>, &'a str);

/// A phrase that names a command to run.
#[derive(Debug, PartialEq)]
pub(crate) struct Command {
    /// The phrase's bytes in the text, from its instrument word.
    pub span: Range<usize>,
    /// The command, as the text gives it (a code span without its backticks).
    pub command: String,
}

/// The first phrase of `text` that names a command to run: an instrument word followed by a
/// code span (`code`: the byte ranges of `text`'s backticked values, each with the value), by
/// "the command X", or by "the X command".
pub(crate) fn named_command(text: &str, code: &[Code]) -> Option<Command> {
    let words: Vec<(usize, &str)> = word_spans(text);
    let lower = |i: usize| words[i].1.to_ascii_lowercase();
    let code_at = |i: usize| code.iter().find(|(r, _)| r.start == words[i].0);
    for i in 0..words.len() {
        if !INSTRUMENTS.contains(&lower(i).as_str()) {
            continue;
        }
        let start = words[i].0;
        let mut j = i + 1;
        while j < words.len() && ARTICLES.contains(&lower(j).as_str()) {
            j += 1;
        }
        if j >= words.len() {
            return None;
        }
        if let Some((span, value)) = code_at(j).filter(|(_, v)| runs(&lower(i), &unquote(v))) {
            return Some(Command {
                span: start..span.end,
                command: unquote(value),
            });
        }
        if is_command_word(&lower(j)) {
            // "… to execute commands." names none; "execute this command to stop …" names one
            // given elsewhere.
            let next = words.get(j + 1).map(|(_, w)| bare(w)).unwrap_or_default();
            if ends_clause(words[j].1) || AFTER_COMMAND.contains(&next.as_str()) {
                continue;
            }
            if words
                .get(j + 1)
                .is_some_and(|(_, w)| NOT_A_COMMAND.contains(&bare(w).as_str()))
            {
                continue;
            }
            if let Some((span, value)) = (j + 1 < words.len()).then(|| code_at(j + 1)).flatten() {
                return Some(Command {
                    span: start..span.end,
                    command: unquote(value),
                });
            }
            let given = given_command(&words, j + 1, text, code);
            if let Some(end) = given {
                let from = words[j + 1].0;
                let command = text[from..end].trim_end_matches(CLAUSE_END).to_string();
                return Some(Command {
                    span: start..end,
                    command,
                });
            }
            continue;
        }
        // A program everyone runs from a terminal, with its arguments: "use docker ps to …",
        // "by running pip install requests". Alone ("deploy with Docker") it names a product.
        let argument = words.get(j + 1).map(|(_, w)| bare(w)).unwrap_or_default();
        let has_argument = !argument.is_empty()
            && !ends_clause(words[j].1)
            && !AFTER_COMMAND.contains(&argument.as_str())
            && !NOT_IN_A_NAME.contains(&argument.as_str())
            && !is_command_word(&argument);
        if has_argument && PROGRAMS.binary_search(&bare(words[j].1).as_str()).is_ok() {
            if let Some(end) = given_command(&words, j, text, code) {
                return Some(Command {
                    span: start..end,
                    command: text[words[j].0..end]
                        .trim_end_matches(CLAUSE_END)
                        .to_string(),
                });
            }
        }
        // "the X command": X is the command, the phrase ends at "command".
        for k in j..words.len().min(j + WITHIN + 1) {
            if k > j && is_command_word(&bare(words[k].1)) {
                let next = words.get(k + 1).map(|(_, w)| bare(w)).unwrap_or_default();
                if NOT_A_COMMAND.contains(&next.as_str()) {
                    break;
                }
                let end = words[k].0 + words[k].1.trim_end_matches(CLAUSE_END).len();
                return Some(Command {
                    span: start..end,
                    command: text[words[j].0..words[k].0].trim().to_string(),
                });
            }
            if ends_clause(words[k].1) || NOT_IN_A_NAME.contains(&bare(words[k].1).as_str()) {
                break;
            }
        }
    }
    None
}

/// Whether a code span after the instrument word `instrument` is a command: after "run" or
/// "execute" any is; after "with", "using" or "via" only one that reads like a program and its
/// arguments ("with `docker ps`"), not a value ("with the `.txt` extension").
fn runs(instrument: &str, code: &str) -> bool {
    let runner = matches!(instrument, "execute" | "executing" | "run" | "running");
    runner || code.starts_with(|c: char| c.is_ascii_alphabetic()) && code.contains(' ')
}

/// Punctuation that ends a clause when it closes a word.
const CLAUSE_END: &[char] = &[',', ';', '.', '?', '!'];

fn ends_clause(word: &str) -> bool {
    word.ends_with(CLAUSE_END)
}

fn is_command_word(word: &str) -> bool {
    let word = word.trim_end_matches([':', ',', '.']);
    word == "command" || word == "commands"
}

/// `word` lowercase without the punctuation that closes it.
fn bare(word: &str) -> String {
    word.trim_end_matches(|c: char| c.is_ascii_punctuation())
        .to_ascii_lowercase()
}

/// Where a command given after "the command" ends (a byte offset of `text`), its first word
/// being `from`: at the end of the clause, before a word that ends it ([`AFTER_COMMAND`]), or
/// after [`COMMAND_WORDS`] words. `None`: no word follows.
fn given_command(words: &[(usize, &str)], from: usize, text: &str, code: &[Code]) -> Option<usize> {
    if from >= words.len() {
        return None;
    }
    let mut end = None;
    for (at, word) in words.iter().skip(from).take(COMMAND_WORDS) {
        if end.is_some() && AFTER_COMMAND.contains(&word.to_ascii_lowercase().as_str()) {
            break;
        }
        // A quoted value inside the command is part of it ("notify-send 'done'").
        let close = code
            .iter()
            .find(|(r, _)| r.start == *at)
            .map_or(at + word.len(), |(r, _)| r.end.max(at + word.len()));
        end = Some(close.min(text.len()));
        if ends_clause(word) {
            break;
        }
    }
    end
}

/// A backticked value without its backticks.
fn unquote(value: &str) -> String {
    value.trim_matches('`').trim().to_string()
}

/// Each whitespace-separated word of `text` with its byte offset.
fn word_spans(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(s)) => {
                out.push((s, &text[s..i]));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, &text[s..]));
    }
    out
}

/// What the model and BM25 read for `text` when it names a command to run: the phrase as "run a
/// command in the terminal (…)", in place. `None`: it names none.
pub(crate) fn as_running(text: &str, code: &[Code]) -> Option<String> {
    let found = named_command(text, code)?;
    Some(format!(
        "{}run a command in the terminal ({}){}",
        &text[..found.span.start],
        found.command,
        &text[found.span.end..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The backticked spans of `text`, as the query module finds quoted values.
    fn code(text: &str) -> Vec<Code<'_>> {
        let mut out = Vec::new();
        let mut open = None;
        for (i, c) in text.char_indices() {
            if c == '`' {
                match open.take() {
                    Some(s) => out.push((s..i + 1, &text[s..i + 1])),
                    None => open = Some(i),
                }
            }
        }
        out
    }

    fn command(text: &str) -> Option<(String, String)> {
        named_command(text, &code(text)).map(|c| (text[c.span].to_string(), c.command))
    }

    fn pair(phrase: &str, command: &str) -> Option<(String, String)> {
        Some((phrase.to_string(), command.to_string()))
    }

    #[test]
    fn the_x_command_names_x() {
        assert_eq!(
            command("Show the free disk space using the df -h command"),
            pair("using the df -h command", "df -h")
        );
        assert_eq!(
            command("Check it with the lsof command."),
            pair("with the lsof command", "lsof")
        );
        assert_eq!(
            command("Make photo.png smaller using ImageMagick's convert command"),
            pair(
                "using ImageMagick's convert command",
                "ImageMagick's convert"
            )
        );
    }

    #[test]
    fn the_command_x_runs_to_the_end_of_its_clause() {
        assert_eq!(
            command("Get the time, using the command echo %time% to see it"),
            pair("using the command echo %time%", "echo %time%")
        );
        assert_eq!(
            command("shutdown the pc, using the exact command shutdown /s /t 0"),
            pair(
                "using the exact command shutdown /s /t 0",
                "shutdown /s /t 0"
            )
        );
        assert_eq!(
            command("Use the command `pip list --outdated` to see what is old"),
            pair(
                "Use the command `pip list --outdated`",
                "pip list --outdated"
            )
        );
    }

    #[test]
    fn a_code_span_after_an_instrument_is_a_command() {
        assert_eq!(
            command("Run `npm test` in ~/shop and tell me what fails"),
            pair("Run `npm test`", "npm test")
        );
        assert_eq!(
            command("List the running containers with `docker ps`"),
            pair("with `docker ps`", "docker ps")
        );
    }

    #[test]
    fn a_known_program_with_its_arguments_is_a_command() {
        assert_eq!(
            command("is docker running, please use docker ps to find out"),
            pair("use docker ps", "docker ps")
        );
        assert_eq!(
            command("Restart nginx with sudo systemctl restart nginx"),
            pair(
                "with sudo systemctl restart nginx",
                "sudo systemctl restart nginx"
            )
        );
        assert_eq!(command("Deploy the app with Docker to our cluster"), None);
        assert_eq!(command("Write the script using python."), None);
    }

    #[test]
    fn programs_are_sorted() {
        assert!(PROGRAMS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn command_as_a_word_of_something_else_is_no_command() {
        assert_eq!(command("Open a terminal using the command line"), None);
        assert_eq!(command("Run the report with the sales figures"), None);
        assert_eq!(
            command("Send the file with a note about the command center"),
            None
        );
        assert_eq!(command("Check the logs. The command failed."), None);
        assert_eq!(command("Quote `this` back to me"), None);
        assert_eq!(
            command("List all files with the `.txt` extension in `/docs`"),
            None
        );
        assert_eq!(
            command("so I can use it to execute commands. Next, …"),
            None
        );
        assert_eq!(
            command("Could you execute this command to stop the washer?"),
            None
        );
    }

    #[test]
    fn the_phrase_is_read_as_running_a_command() {
        let text = "Tell me the date using the date command";
        assert_eq!(
            as_running(text, &[]).as_deref(),
            Some("Tell me the date run a command in the terminal (date)")
        );
        assert_eq!(as_running("Tell me the date", &[]), None);
    }
}
