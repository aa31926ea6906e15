//! Sums written out: "How much is 394 times 213?", "compute 443 * 349". An operator between two
//! numbers is what picks the tool (one that multiplies, adds, subtracts or divides), but to a
//! small sentence model "times" is about time and "*" is no word at all, and BM25 finds neither
//! in a calculator's description ("Calculates the product of two numeric values"). Read after
//! the operation in those words, such a request finds the calculators.

/// The operation each operator word or sign stands for, in the words calculators use. A word
/// of two ("divided by", "multiplied by") is matched on its first word and checked for the
/// second.
const OPERATORS: &[(&str, Option<&str>, &str)] = &[
    ("*", None, MULTIPLY),
    ("×", None, MULTIPLY),
    ("times", None, MULTIPLY),
    ("multiplied", Some("by"), MULTIPLY),
    ("+", None, ADD),
    ("plus", None, ADD),
    ("minus", None, SUBTRACT),
    ("÷", None, DIVIDE),
    ("divided", Some("by"), DIVIDE),
];

const MULTIPLY: &str = "Multiply two numbers and return their product";
const ADD: &str = "Add two numbers and return their sum";
const SUBTRACT: &str = "Subtract one number from another and return the difference";
const DIVIDE: &str = "Divide one number by another and return the quotient";

/// Whether a written word is a number ("394", "2.5", "-3", "1,000", "$20"): what an operator
/// must stand between to be one ("flip a coin 100 times with …" has no second number).
fn is_number(word: &str) -> bool {
    let core = word
        .trim_start_matches(['$', '€', '£', '(', '-'])
        .trim_end_matches(['?', '.', ',', '!', ')', ';', ':']);
    !core.is_empty()
        && core.starts_with(|c: char| c.is_ascii_digit())
        && core
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.' || c == ',')
}

/// What the model and BM25 read for `text` when it asks for a sum of two numbers: the first
/// operation it writes out, in a calculator's words, then the request.
pub(super) fn as_arithmetic(text: &str) -> Option<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    (1..words.len()).find_map(|i| {
        let word = words[i].to_lowercase();
        let (_, second, operation) = OPERATORS.iter().find(|(w, ..)| *w == word)?;
        let after = match second {
            Some(second) => (words.get(i + 1)?.to_lowercase() == *second).then_some(i + 2)?,
            None => i + 1,
        };
        (is_number(words[i - 1]) && words.get(after).is_some_and(|w| is_number(w)))
            .then(|| format!("{operation}: {text}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_operator_between_two_numbers_is_read_as_its_operation() {
        for (text, operation) in [
            ("How much is 394 times 213?", MULTIPLY),
            ("compute 443 * 349", MULTIPLY),
            ("What's 12.5 multiplied by 4?", MULTIPLY),
            ("what is 1,200 plus 37", ADD),
            ("Work out 90 minus 45 for me", SUBTRACT),
            ("What is 144 divided by 12?", DIVIDE),
        ] {
            assert_eq!(
                as_arithmetic(text),
                Some(format!("{operation}: {text}")),
                "{text}"
            );
        }
    }

    #[test]
    fn other_words_and_signs_are_not() {
        for text in [
            "Flip a coin 100 times with probability 0.5",
            "Change the size to 12x18",
            "What is the air quality in London 2022/08/16?",
            "3 times a week I run",
            "times 4",
            "Book a table for 2 plus a high chair",
            "What is 5 divided into 3 parts",
        ] {
            assert_eq!(as_arithmetic(text), None, "{text}");
        }
    }
}
