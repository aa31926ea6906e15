//! The text that stands for a tool in both indexes: what a request for it would likely mention.

use serde_json::Value;

/// `read_text_file` / `readTextFile` → `read text file`: identifiers become words the model and
/// the lexical index both understand.
pub fn humanize(ident: &str) -> String {
    let mut out = String::with_capacity(ident.len() + 4);
    let mut prev_lower = false;
    for c in ident.chars() {
        if c == '_' || c == '-' || c == '.' || c == '/' || c == ':' {
            if !out.ends_with(' ') {
                out.push(' ');
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower {
            out.push(' ');
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        out.extend(c.to_lowercase());
    }
    out.trim().to_string()
}

/// How much of a tool the text holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    /// Everything, parameter descriptions included: BM25 normalises for length, and every
    /// exact word may be the one a request names.
    Full,
    /// The first sentences of the description and the parameter names: a small sentence model
    /// embeds one gist per text, and usage notes, formats and examples drowned it
    /// (docs/routing.md).
    Gist,
}

/// Description sentences the [`Detail::Gist`] text keeps.
const GIST_SENTENCES: usize = 3;

/// Name, title, description, parameters, and the upstream's name.
pub fn tool_text(upstream: &str, definition: &Value, detail: Detail) -> String {
    let s = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").trim().to_string();
    let name = s(definition.get("name"));
    let title = s(definition
        .get("title")
        .or_else(|| definition.pointer("/annotations/title")));
    let description = s(definition.get("description"));
    let mut text = humanize(&name);
    if !title.is_empty() && !title.eq_ignore_ascii_case(&text) {
        sentence(&mut text, &title);
    }
    if !description.is_empty() {
        match detail {
            Detail::Full => sentence(&mut text, &description),
            Detail::Gist => {
                let gist: String = description
                    .split_inclusive(". ")
                    .take(GIST_SENTENCES)
                    .collect();
                sentence(&mut text, gist.trim_end())
            }
        }
    }
    if let Some(props) = definition
        .pointer("/inputSchema/properties")
        .and_then(Value::as_object)
    {
        if !props.is_empty() {
            sentence(&mut text, "Parameters: ");
            let params: Vec<String> = props
                .iter()
                .map(|(p, schema)| {
                    let d = s(schema.get("description"));
                    if d.is_empty() || detail == Detail::Gist {
                        humanize(p)
                    } else {
                        format!("{} ({d})", humanize(p))
                    }
                })
                .collect();
            text.push_str(&params.join("; "));
        }
    }
    sentence(&mut text, "Server: ");
    text.push_str(&humanize(upstream));
    text
}

/// Appends `part` as a new sentence.
fn sentence(text: &mut String, part: &str) {
    if !text.is_empty() {
        if !text.ends_with(['.', '!', '?']) {
            text.push('.');
        }
        text.push(' ');
    }
    text.push_str(part);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn identifiers_become_words() {
        assert_eq!(humanize("read_text_file"), "read text file");
        assert_eq!(humanize("getTinyImage"), "get tiny image");
        assert_eq!(humanize("git-diff_staged"), "git diff staged");
    }

    #[test]
    fn text_holds_every_part() {
        let def = json!({"name": "git_log", "title": "Log",
            "description": "Shows commits. One. Two. Three.",
            "inputSchema": {"properties": {"max_count": {"description": "How many"}, "repo_path": {}}}});
        assert_eq!(
            tool_text("mcp-server-git", &def, Detail::Full),
            "git log. Log. Shows commits. One. Two. Three. Parameters: max count (How many); \
             repo path. Server: mcp server git"
        );
        assert_eq!(
            tool_text("mcp-server-git", &def, Detail::Gist),
            "git log. Log. Shows commits. One. Two. Parameters: max count; repo path. \
             Server: mcp server git"
        );
    }
}
