//! The catalog as hosts see it: every upstream's tools and prompts under exposed names, resources
//! under exposed URIs, and the way back from an exposed name to the upstream's own one.
//!
//! Exposed names are deterministic for a given catalog, contain only `[A-Za-z0-9_-]`, are at most
//! 64 characters (Claude and OpenAI refuse longer tool names) and never collide: a name that would
//! break a rule is shortened with a stable hash suffix. They are resolved back through this table,
//! never by splitting strings.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use crate::hash::short_hash;
use crate::model::{CatalogEntry, EntryKind};

/// Longest tool or prompt name hosts accept.
pub const MAX_NAME_LEN: usize = 64;
/// Between an upstream's name and its tool's name.
pub const SEPARATOR: &str = "__";
/// Scheme of rewritten resource URIs (used only when two upstreams offer the same URI).
pub const URI_SCHEME: &str = "mcpgw";

/// When an upstream's name is put in front of its tools' and prompts' names.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum PrefixMode {
    #[default]
    Always,
    OnCollision,
    Never,
}

/// One entry with the name (tools, prompts) or URI (resources, templates) hosts see.
#[derive(Debug, Clone)]
pub struct Exposed {
    pub exposed: String,
    pub entry: CatalogEntry,
}

/// The catalog with exposed names and the reverse lookup.
#[derive(Debug, Default)]
pub struct CatalogView {
    lists: BTreeMap<EntryKind, Vec<Exposed>>,
    index: HashMap<(EntryKind, String), usize>,
    /// kind → upstream → the upstream's own key → position in its list (nested so that a
    /// lookup by `&str` allocates nothing: searches call it for every candidate).
    by_key: BTreeMap<EntryKind, HashMap<String, HashMap<String, usize>>>,
}

/// Whether hosts accept `s` as a tool or prompt name as it is: `[A-Za-z0-9_-]`, at most
/// [`MAX_NAME_LEN`] characters.
pub fn is_valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_NAME_LEN
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Makes `wanted` a valid, bounded name; `identity` (unique per entry) seeds the hash suffix.
fn bounded_name(wanted: &str, identity: &str) -> String {
    if is_valid_name(wanted) {
        return wanted.to_string();
    }
    hashed_name(wanted, identity)
}

fn hashed_name(wanted: &str, identity: &str) -> String {
    let clean: String = wanted
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let suffix = short_hash(identity, 8);
    let keep = MAX_NAME_LEN - suffix.len() - 1;
    let head: String = clean.chars().take(keep).collect();
    format!("{head}_{suffix}")
}

/// The name an entry is shown under before prefixing: a tool's or prompt's `name` in its
/// definition, which the gateway's curation may have changed from the upstream's own (`key`,
/// by which the upstream is still called); a resource's URI.
fn shown_name(e: &CatalogEntry) -> String {
    match e.kind {
        EntryKind::Tool | EntryKind::Prompt => e
            .definition
            .str_field("name")
            .unwrap_or_else(|| e.key.clone()),
        EntryKind::Resource | EntryKind::ResourceTemplate => e.key.clone(),
    }
}

impl CatalogView {
    /// Builds the view. `prefix_of` gives each upstream's prefix mode.
    pub fn build(mut entries: Vec<CatalogEntry>, prefix_of: impl Fn(&str) -> PrefixMode) -> Self {
        entries.sort_by(|a, b| (a.kind, &a.upstream, &a.key).cmp(&(b.kind, &b.upstream, &b.key)));
        let shown: Vec<String> = entries.iter().map(shown_name).collect();
        let mut key_count: HashMap<(EntryKind, &str), usize> = HashMap::new();
        for (e, name) in entries.iter().zip(&shown) {
            *key_count.entry((e.kind, name)).or_default() += 1;
        }
        let mut wanted_names = Vec::with_capacity(entries.len());
        for (e, shown) in entries.iter().zip(&shown) {
            let collides = key_count[&(e.kind, shown.as_str())] > 1;
            let wanted = match e.kind {
                EntryKind::Tool | EntryKind::Prompt => {
                    let prefixed = match prefix_of(&e.upstream) {
                        PrefixMode::Always => true,
                        PrefixMode::OnCollision => collides,
                        PrefixMode::Never => false,
                    };
                    let identity = format!("{}\u{0}{}", e.upstream, e.key);
                    let name = if prefixed {
                        format!("{}{SEPARATOR}{}", e.upstream, shown)
                    } else {
                        shown.clone()
                    };
                    bounded_name(&name, &identity)
                }
                EntryKind::Resource | EntryKind::ResourceTemplate if collides => {
                    format!("{URI_SCHEME}://{}/{}", e.upstream, e.key)
                }
                EntryKind::Resource | EntryKind::ResourceTemplate => e.key.clone(),
            };
            wanted_names.push(wanted);
        }
        let mut view = CatalogView::default();
        for (e, wanted) in entries.into_iter().zip(wanted_names) {
            let mut exposed = wanted;
            if view.index.contains_key(&(e.kind, exposed.clone())) {
                // Two entries want the same name (e.g. prefix `never`): the later one, in a
                // stable order, gets a hash suffix.
                exposed = hashed_name(&exposed, &format!("{}\u{0}{}", e.upstream, e.key));
            }
            let list = view.lists.entry(e.kind).or_default();
            view.index.insert((e.kind, exposed.clone()), list.len());
            view.by_key
                .entry(e.kind)
                .or_default()
                .entry(e.upstream.clone())
                .or_default()
                .insert(e.key.clone(), list.len());
            list.push(Exposed { exposed, entry: e });
        }
        view
    }

    /// All entries of a kind, in a stable order.
    pub fn list(&self, kind: EntryKind) -> &[Exposed] {
        self.lists.get(&kind).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The entry behind an exposed name (or URI).
    pub fn resolve(&self, kind: EntryKind, exposed: &str) -> Option<&Exposed> {
        let i = *self.index.get(&(kind, exposed.to_string()))?;
        self.lists.get(&kind)?.get(i)
    }

    /// An upstream's entry by the upstream's own name (or URI).
    pub fn find(&self, kind: EntryKind, upstream: &str, key: &str) -> Option<&Exposed> {
        let i = *self.by_key.get(&kind)?.get(upstream)?.get(key)?;
        self.lists.get(&kind)?.get(i)
    }

    /// The upstream and its own URI for a resource URI a host asks for: a listed resource, a
    /// rewritten URI, or a URI matching one of the upstreams' templates.
    pub fn resolve_resource_uri(&self, uri: &str) -> Option<(String, String)> {
        if let Some(e) = self.resolve(EntryKind::Resource, uri) {
            return Some((e.entry.upstream.clone(), e.entry.key.clone()));
        }
        if let Some(rest) = uri.strip_prefix(&format!("{URI_SCHEME}://")) {
            if let Some((upstream, original)) = rest.split_once('/') {
                if self.has_upstream(upstream) {
                    return Some((upstream.to_string(), original.to_string()));
                }
            }
        }
        // Longest literal prefix wins, so a specific template beats a catch-all.
        self.list(EntryKind::ResourceTemplate)
            .iter()
            .filter(|t| template_matches(&t.entry.key, uri))
            .max_by_key(|t| t.entry.key.find('{').unwrap_or(t.entry.key.len()))
            .map(|t| (t.entry.upstream.clone(), uri.to_string()))
    }

    /// The exposed URI of an upstream's resource (identity unless it was rewritten).
    pub fn exposed_uri(&self, upstream: &str, uri: &str) -> String {
        let rewritten = format!("{URI_SCHEME}://{upstream}/{uri}");
        if self
            .index
            .contains_key(&(EntryKind::Resource, rewritten.clone()))
        {
            rewritten
        } else {
            uri.to_string()
        }
    }

    fn has_upstream(&self, upstream: &str) -> bool {
        self.lists
            .values()
            .flatten()
            .any(|e| e.entry.upstream == upstream)
    }

    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }
}

/// Whether `uri` is an expansion of the RFC 6570 template `template`. Simple expressions
/// (`{x}`) match one path segment; reserved and path forms (`{+x}`, `{/x}`, ...) match anything.
pub fn template_matches(template: &str, uri: &str) -> bool {
    fn go(t: &str, u: &str) -> bool {
        match t.find('{') {
            None => t == u,
            Some(open) => {
                let (lit, rest) = t.split_at(open);
                let Some(u) = u.strip_prefix(lit) else {
                    return false;
                };
                let Some(close) = rest.find('}') else {
                    return false;
                };
                let expr = &rest[1..close];
                let after = &rest[close + 1..];
                let greedy = expr.starts_with(['+', '#', '/', '.', ';', '?', '&']);
                // Try every possible extent of the variable, shortest first.
                for (i, c) in u.char_indices().chain(std::iter::once((u.len(), ' '))) {
                    if i > 0 && go(after, &u[i..]) {
                        return true;
                    }
                    if !greedy && (c == '/' || c == '?' || c == '#') {
                        break;
                    }
                }
                false
            }
        }
    }
    go(template, uri)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(upstream: &str, kind: EntryKind, key: &str) -> CatalogEntry {
        let def = json!({ kind.key_field(): key });
        CatalogEntry {
            upstream: upstream.into(),
            kind,
            key: key.into(),
            content_hash: crate::hash::content_hash(&def),
            definition: def.into(),
        }
    }

    #[test]
    fn a_renamed_tool_is_shown_by_its_new_name_and_resolves_to_its_own() {
        let mut renamed = entry("github", EntryKind::Tool, "search_repositories");
        renamed.definition = json!({"name": "find_repos"}).into();
        let v = CatalogView::build(vec![renamed], |_| PrefixMode::Always);
        assert!(v
            .resolve(EntryKind::Tool, "github__search_repositories")
            .is_none());
        let e = v.resolve(EntryKind::Tool, "github__find_repos").unwrap();
        assert_eq!(e.entry.key, "search_repositories");
    }

    #[test]
    fn prefixes_always_and_resolves_back() {
        let v = CatalogView::build(
            vec![
                entry("github", EntryKind::Tool, "create_issue"),
                entry("git", EntryKind::Tool, "create_issue"),
            ],
            |_| PrefixMode::Always,
        );
        let names: Vec<_> = v
            .list(EntryKind::Tool)
            .iter()
            .map(|e| e.exposed.as_str())
            .collect();
        assert_eq!(names, ["git__create_issue", "github__create_issue"]);
        let e = v.resolve(EntryKind::Tool, "github__create_issue").unwrap();
        assert_eq!(
            (e.entry.upstream.as_str(), e.entry.key.as_str()),
            ("github", "create_issue")
        );
        let found = v.find(EntryKind::Tool, "git", "create_issue").unwrap();
        assert_eq!(found.exposed, "git__create_issue");
        assert!(v.find(EntryKind::Prompt, "git", "create_issue").is_none());
        assert!(v.find(EntryKind::Tool, "gitlab", "create_issue").is_none());
    }

    #[test]
    fn on_collision_prefixes_only_colliding_names() {
        let v = CatalogView::build(
            vec![
                entry("a", EntryKind::Tool, "echo"),
                entry("b", EntryKind::Tool, "echo"),
                entry("b", EntryKind::Tool, "unique"),
            ],
            |_| PrefixMode::OnCollision,
        );
        assert!(v.resolve(EntryKind::Tool, "a__echo").is_some());
        assert!(v.resolve(EntryKind::Tool, "b__echo").is_some());
        assert!(v.resolve(EntryKind::Tool, "unique").is_some());
        assert!(v.resolve(EntryKind::Tool, "echo").is_none());
    }

    #[test]
    fn never_mode_keeps_names_distinct() {
        let v = CatalogView::build(
            vec![
                entry("a", EntryKind::Tool, "echo"),
                entry("b", EntryKind::Tool, "echo"),
            ],
            |_| PrefixMode::Never,
        );
        let names: Vec<_> = v
            .list(EntryKind::Tool)
            .iter()
            .map(|e| e.exposed.clone())
            .collect();
        assert_eq!(names[0], "echo");
        assert_ne!(names[1], "echo");
        assert!(is_valid_name(&names[1]));
        assert_eq!(
            v.resolve(EntryKind::Tool, &names[1])
                .unwrap()
                .entry
                .upstream,
            "b"
        );
    }

    #[test]
    fn long_and_odd_names_are_bounded_stable_and_distinct() {
        let long_a = format!("{}_a", "x".repeat(80));
        let long_b = format!("{}_b", "x".repeat(80));
        let build = || {
            CatalogView::build(
                vec![
                    entry("up.stream", EntryKind::Tool, &long_a),
                    entry("up.stream", EntryKind::Tool, &long_b),
                    entry("s", EntryKind::Tool, "dotted.name/with space"),
                ],
                |_| PrefixMode::Always,
            )
        };
        let (v1, v2) = (build(), build());
        let n1: Vec<_> = v1
            .list(EntryKind::Tool)
            .iter()
            .map(|e| e.exposed.clone())
            .collect();
        let n2: Vec<_> = v2
            .list(EntryKind::Tool)
            .iter()
            .map(|e| e.exposed.clone())
            .collect();
        assert_eq!(n1, n2, "names are deterministic");
        for n in &n1 {
            assert!(is_valid_name(n), "{n} is a valid name");
        }
        assert_ne!(n1[1], n1[2]);
        for n in &n1 {
            assert!(v1.resolve(EntryKind::Tool, n).is_some());
        }
    }

    #[test]
    fn colliding_resource_uris_are_rewritten_reversibly() {
        let v = CatalogView::build(
            vec![
                entry("a", EntryKind::Resource, "file:///x"),
                entry("b", EntryKind::Resource, "file:///x"),
                entry("b", EntryKind::Resource, "file:///only-b"),
            ],
            |_| PrefixMode::Always,
        );
        assert_eq!(v.exposed_uri("a", "file:///x"), "mcpgw://a/file:///x");
        assert_eq!(
            v.resolve_resource_uri("mcpgw://b/file:///x"),
            Some(("b".into(), "file:///x".into()))
        );
        assert_eq!(
            v.resolve_resource_uri("file:///only-b"),
            Some(("b".into(), "file:///only-b".into()))
        );
    }

    #[test]
    fn templates_match_their_expansions() {
        assert!(template_matches(
            "test://template/{id}/data",
            "test://template/123/data"
        ));
        assert!(!template_matches(
            "test://template/{id}/data",
            "test://template/1/2/data"
        ));
        assert!(template_matches("file://{+path}", "file:///a/b/c"));
        assert!(!template_matches("test://x/{id}", "test://y/1"));
        let v = CatalogView::build(
            vec![
                entry("a", EntryKind::ResourceTemplate, "test://{+any}"),
                entry(
                    "b",
                    EntryKind::ResourceTemplate,
                    "test://template/{id}/data",
                ),
            ],
            |_| PrefixMode::Always,
        );
        assert_eq!(
            v.resolve_resource_uri("test://template/7/data").unwrap().0,
            "b",
            "the most specific template wins"
        );
        assert_eq!(v.resolve_resource_uri("test://other").unwrap().0, "a");
    }
}
