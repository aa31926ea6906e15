//! Words that tools spell one way and requests another: "to-do(s)" is "todo(s)" in the tools'
//! texts, and the model reads "to-dos" as other words ("Show me my open to-dos" found user lists).

use std::borrow::Cow;

/// Spellings of one word that tools write one way: "to-do(s)" is "todo(s)" in their texts, and
/// the model reads "to-dos" as other words ("Show me my open to-dos" found user lists).
const SPELLINGS: &[(&str, &str)] = &[("to-do", "todo")];

/// `request` with each of [`SPELLINGS`] written the tools' way, whatever its case.
pub(super) fn spelled(request: &str) -> Cow<'_, str> {
    let mut out = Cow::Borrowed(request);
    for (variant, spelling) in SPELLINGS {
        let lower = out.to_ascii_lowercase();
        if !lower.contains(variant) {
            continue;
        }
        let mut fixed = String::with_capacity(out.len());
        let mut at = 0;
        for (i, _) in lower.match_indices(variant) {
            fixed.push_str(&out[at..i]);
            fixed.push_str(spelling);
            at = i + variant.len();
        }
        fixed.push_str(&out[at..]);
        out = Cow::Owned(fixed);
    }
    out
}
