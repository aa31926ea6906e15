//! What of a request the model embeds: the request without its quoted values. "Rename
//! 'Q3 Budget Final' to 'Archive'" asks to rename something; the names say what to rename, not
//! what to do, and in a small sentence model's single vector they pull the request towards tools
//! about budgets and archives. BM25 still sees every word (a quoted platform name is an exact
//! match there). Measured in docs/routing.md.

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

/// `request` without its quoted values (each replaced by a space).
pub fn semantic_query(request: &str) -> String {
    let chars: Vec<char> = request.chars().collect();
    let mut out = String::with_capacity(request.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let at_word_start = i == 0 || chars[i - 1].is_whitespace() || chars[i - 1] == '(';
        if let Some(&(_, close)) = QUOTES.iter().find(|(open, _)| *open == c && at_word_start) {
            let end = (i + 1..chars.len()).find(|&j| {
                chars[j] == close
                    && j > i + 1
                    && chars
                        .get(j + 1)
                        .is_none_or(|n| n.is_whitespace() || n.is_ascii_punctuation())
            });
            if let Some(end) = end {
                out.push(' ');
                i = end + 1;
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    let cleaned = out.split_whitespace().collect::<Vec<_>>().join(" ");
    if cleaned.split_whitespace().count() < MIN_WORDS_LEFT {
        request.to_string()
    } else {
        cleaned
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_values_leave_the_request() {
        assert_eq!(
            semantic_query("Rename 'Q3 Budget Final' to \"Archive\", then tell Bob's team."),
            "Rename to , then tell Bob's team."
        );
        assert_eq!(
            semantic_query("save it as `notes.txt` in \u{201c}my docs\u{201d}"),
            "save it as in"
        );
        // No closing quote, or nothing left: unchanged.
        assert_eq!(semantic_query("don't 'stop"), "don't 'stop");
        assert_eq!(semantic_query("'hello world'"), "'hello world'");
    }
}
