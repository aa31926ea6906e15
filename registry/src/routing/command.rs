//! A request that names a shell command to run ("… using the df -h command", "run `npm test`",
//! "… with the command heroku --version"): running the command is a step of its own, which a
//! tool that runs commands serves. The model reads such a request by its other words ("how much
//! disk space is free") and the command's name as a word ("docker", "date"), so a terminal tool
//! never came near; "run a command in the terminal (df -h)" finds one first (docs/routing.md,
//! "A command to run").

use std::ops::Range;

use super::sentences::words_at;

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
/// "the command X", by a known program with its arguments, or by "the X command".
pub(crate) fn named_command(text: &str, code: &[Code]) -> Option<Command> {
    let words = Words {
        text,
        words: words_at(text),
        code,
    };
    (0..words.len()).find_map(|i| words.phrase_at(i))
}

/// A text's words, with its backticked values.
struct Words<'a> {
    text: &'a str,
    /// Each word's byte offset and the word.
    words: Vec<(usize, &'a str)>,
    code: &'a [Code<'a>],
}

impl Words<'_> {
    fn len(&self) -> usize {
        self.words.len()
    }

    /// Word `i`, lowercase, without the punctuation that closes it ("" past the end).
    fn bare(&self, i: usize) -> String {
        self.words.get(i).map(|(_, w)| bare(w)).unwrap_or_default()
    }

    /// The backticked value that starts at word `i`.
    fn code_at(&self, i: usize) -> Option<&Code<'_>> {
        let at = self.words.get(i)?.0;
        self.code.iter().find(|(r, _)| r.start == at)
    }

    /// The phrase that word `i` opens, if it is an instrument word that hands a command over.
    fn phrase_at(&self, i: usize) -> Option<Command> {
        // Most words are no instrument: told apart without making a lowercase copy of each.
        let word = self.words[i].1;
        let instrument = INSTRUMENTS
            .iter()
            .find(|w| w.eq_ignore_ascii_case(word))?
            .to_string();
        let mut j = i + 1;
        while j < self.len() && ARTICLES.contains(&self.bare(j).as_str()) {
            j += 1;
        }
        let start = self.words[i].0;
        let (end, command) = if j >= self.len() {
            None
        } else if let Some((span, value)) = self.code_at(j) {
            runs(&instrument, &unquote(value)).then(|| (span.end, unquote(value)))
        } else if is_command_word(self.words[j].1) {
            self.command_after(j)
        } else {
            self.program(j).or_else(|| self.command_before(j))
        }?;
        Some(Command {
            span: start..end,
            command,
        })
    }

    /// "the command X", `j` being "command": X and where it ends. Not "… to execute
    /// commands.", which names none, "execute this command to stop …", which names one given
    /// elsewhere, or "the command line".
    fn command_after(&self, j: usize) -> Option<(usize, String)> {
        let next = self.bare(j + 1);
        if ends_clause(self.words[j].1)
            || AFTER_COMMAND.contains(&next.as_str())
            || NOT_A_COMMAND.contains(&next.as_str())
        {
            return None;
        }
        if let Some((span, value)) = self.code_at(j + 1) {
            return Some((span.end, unquote(value)));
        }
        self.given(j + 1)
    }

    /// A program everyone runs from a terminal, with its arguments, at word `j`: "use docker ps
    /// to …", "by running pip install requests". Alone ("deploy with Docker") it names a
    /// product.
    fn program(&self, j: usize) -> Option<(usize, String)> {
        let argument = self.bare(j + 1);
        let has_argument = !argument.is_empty()
            && !ends_clause(self.words[j].1)
            && !AFTER_COMMAND.contains(&argument.as_str())
            && !NOT_IN_A_NAME.contains(&argument.as_str())
            && !is_command_word(&argument);
        if !has_argument || PROGRAMS.binary_search(&self.bare(j).as_str()).is_err() {
            return None;
        }
        self.given(j)
    }

    /// "the X command", X starting at word `j`: X, and the phrase ends at "command".
    fn command_before(&self, j: usize) -> Option<(usize, String)> {
        for k in j..self.len().min(j + WITHIN + 1) {
            let (at, word) = self.words[k];
            if k > j && is_command_word(word) {
                if NOT_A_COMMAND.contains(&self.bare(k + 1).as_str()) {
                    return None;
                }
                let end = at + word.trim_end_matches(CLAUSE_END).len();
                let command = self.text[self.words[j].0..at].trim().to_string();
                return Some((end, command));
            }
            if ends_clause(word) || NOT_IN_A_NAME.contains(&self.bare(k).as_str()) {
                return None;
            }
        }
        None
    }

    /// A command given in words from word `from` on: it ends with its clause, before a word that
    /// ends it ([`AFTER_COMMAND`]), or after [`COMMAND_WORDS`] words. Where it ends, and the
    /// command. `None`: no word follows.
    fn given(&self, from: usize) -> Option<(usize, String)> {
        let mut end = None;
        for (at, word) in self.words.iter().skip(from).take(COMMAND_WORDS) {
            if end.is_some() && AFTER_COMMAND.contains(&word.to_ascii_lowercase().as_str()) {
                break;
            }
            // A backticked value in the command is part of it whole.
            let close = self
                .code
                .iter()
                .find(|(r, _)| r.start == *at)
                .map_or(at + word.len(), |(r, _)| r.end.max(at + word.len()));
            end = Some(close);
            if ends_clause(word) {
                break;
            }
        }
        let end = end?;
        let command = self.text[self.words[from].0..end]
            .trim_end_matches(CLAUSE_END)
            .to_string();
        Some((end, command))
    }
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

/// Whether `word` is "command" or "commands", whatever its case and closing punctuation.
fn is_command_word(word: &str) -> bool {
    matches!(bare(word).as_str(), "command" | "commands")
}

/// `word` lowercase without the punctuation that closes it.
fn bare(word: &str) -> String {
    word.trim_end_matches(|c: char| c.is_ascii_punctuation())
        .to_ascii_lowercase()
}

/// A backticked value without its backticks.
fn unquote(value: &str) -> String {
    value.trim_matches('`').trim().to_string()
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
            command("Check it with the lsof Command."),
            pair("with the lsof Command", "lsof")
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
