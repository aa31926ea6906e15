//! Tool curation of one upstream: which of its tools hosts see, and what they see of each one
//! (another name, description or annotations, arguments fixed by the operator and hidden from
//! the schema). It is applied where the catalog view is built, so RBAC, routing (which indexes
//! the curated text), listing and search all see the curated tools and nothing else.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use wildmatch::WildMatch;

/// Longest tool name hosts accept (the same bound the catalog view keeps).
const MAX_TOOL_NAME: usize = registry::view::MAX_NAME_LEN;

/// An upstream's `tools` section.
#[derive(
    Debug, Clone, PartialEq, Default, Deserialize, Serialize, utoipa::ToSchema, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct ToolCuration {
    /// Tools offered, by the upstream's own name (`*` and `?` wildcards); empty: all of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub include: Vec<String>,
    /// Tools never offered, by the upstream's own name; wins over `include`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
    /// What hosts see instead, per tool (by the upstream's own name).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub overrides: BTreeMap<String, ToolOverride>,
}

/// What hosts see of one tool instead of what the upstream says.
#[derive(
    Debug, Clone, PartialEq, Default, Deserialize, Serialize, utoipa::ToSchema, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct ToolOverride {
    /// The tool's name before the upstream prefix (`[A-Za-z0-9_-]`, at most 64 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Merged over the upstream's annotations (`readOnlyHint`, `destructiveHint`, `title`, ...).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    #[schema(value_type = Object)]
    pub annotations: Map<String, Value>,
    /// Argument values the gateway always sends; they leave the input schema, and a host's own
    /// value for them is replaced.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    #[schema(value_type = Object)]
    pub arguments: Map<String, Value>,
}

impl ToolCuration {
    pub fn is_empty(&self) -> bool {
        self.include.is_empty() && self.exclude.is_empty() && self.overrides.is_empty()
    }

    /// Checks names and patterns; the message says what to fix.
    pub fn validate(&self) -> Result<(), String> {
        if let Some(p) = self
            .include
            .iter()
            .chain(&self.exclude)
            .find(|p| p.is_empty())
        {
            return Err(format!("tools: an empty pattern matches nothing ({p:?})"));
        }
        let mut names = std::collections::HashSet::new();
        for (tool, o) in &self.overrides {
            if let Some(n) = &o.name {
                if !registry::view::is_valid_name(n) {
                    return Err(format!(
                        "tools.overrides.{tool}.name {n:?}: use A-Z, a-z, 0-9, _ and -, at most \
                         {MAX_TOOL_NAME} characters"
                    ));
                }
                if !names.insert(n.as_str()) {
                    return Err(format!("tools.overrides: two tools are renamed to {n:?}"));
                }
            }
            if o.arguments.keys().any(|k| k.is_empty()) {
                return Err(format!("tools.overrides.{tool}.arguments: an empty name"));
            }
        }
        Ok(())
    }

    /// Refuses a rename onto the name of another of the upstream's `tools` that hosts would
    /// still see: that tool would become unreachable.
    pub fn check_renames(&self, tools: &[&str]) -> Result<(), String> {
        let compiled = self.compile();
        match compiled.colliding_renames(tools).first() {
            None => Ok(()),
            Some(tool) => {
                let n = compiled.renamed(tool).unwrap_or_default();
                Err(format!(
                    "tools.overrides.{tool}.name {n:?} is the name of another tool of this \
                     upstream, which would become unreachable: pick another name, or exclude \
                     or rename that tool"
                ))
            }
        }
    }

    /// Compiled for use on every catalog change and call.
    pub fn compile(&self) -> Curation {
        let compile = |p: &[String]| p.iter().map(|s| WildMatch::new(s)).collect();
        Curation {
            include: compile(&self.include),
            exclude: compile(&self.exclude),
            overrides: self.overrides.clone(),
        }
    }
}

/// What curation makes of one tool.
#[derive(Debug, PartialEq)]
pub enum Curated {
    /// Not offered.
    Hidden,
    /// Offered as the upstream describes it (the definition is shared, not copied).
    AsIs,
    /// Offered with overrides applied.
    Changed(Value),
}

/// A [`ToolCuration`] ready to apply.
#[derive(Debug, Default)]
pub struct Curation {
    include: Vec<WildMatch>,
    exclude: Vec<WildMatch>,
    overrides: BTreeMap<String, ToolOverride>,
}

impl Curation {
    /// Whether hosts see the upstream's tool `name` at all.
    pub fn offers(&self, name: &str) -> bool {
        (self.include.is_empty() || self.include.iter().any(|p| p.matches(name)))
            && !self.exclude.iter().any(|p| p.matches(name))
    }

    /// The tool as hosts see it, or `None` when it is not offered. `name` stays the upstream's
    /// own unless renamed (and `rename`); the gateway calls the upstream by its own name either
    /// way. `name` is the definition's own: only a changed definition is parsed.
    pub fn apply(&self, name: &str, definition: &registry::Definition, rename: bool) -> Curated {
        if !self.offers(name) {
            return Curated::Hidden;
        }
        match self.overrides.get(name) {
            None => Curated::AsIs,
            Some(o) => {
                let mut def = definition.to_value();
                o.apply(&mut def);
                if !rename {
                    def["name"] = Value::from(name);
                }
                Curated::Changed(def)
            }
        }
    }

    /// The name `tool` is renamed to, if it is.
    fn renamed(&self, tool: &str) -> Option<&str> {
        self.overrides.get(tool).and_then(|o| o.name.as_deref())
    }

    /// Those of the upstream's `tools` whose rename takes the name another offered tool keeps
    /// (it would become unreachable). The upstream may list a tool of that name after the
    /// curation was accepted: such a rename is then not applied (see the view's rebuild).
    pub fn colliding_renames<'a>(&self, tools: &[&'a str]) -> Vec<&'a str> {
        // Every catalog rebuild asks, for every upstream: most rename nothing.
        if self.overrides.values().all(|o| o.name.is_none()) {
            return Vec::new();
        }
        let offered: Vec<&str> = tools.iter().copied().filter(|t| self.offers(t)).collect();
        let kept: std::collections::HashSet<&str> = offered
            .iter()
            .copied()
            .filter(|t| self.renamed(t).is_none_or(|n| n == *t))
            .collect();
        offered
            .into_iter()
            .filter(|t| self.renamed(t).is_some_and(|n| n != *t && kept.contains(n)))
            .collect()
    }

    /// The fixed arguments of the upstream's tool `name`, if any.
    pub fn fixed_arguments(&self, name: &str) -> Option<&Map<String, Value>> {
        self.overrides.get(name).map(|o| &o.arguments)
    }
}

impl ToolOverride {
    /// Changes a tool definition into what hosts see: its name, description and annotations,
    /// and the fixed arguments out of its input schema.
    pub fn apply(&self, def: &mut Value) {
        let o = self;
        if let Some(n) = &o.name {
            def["name"] = Value::from(n.clone());
        }
        if let Some(d) = &o.description {
            def["description"] = Value::from(d.clone());
        }
        if !o.annotations.is_empty() {
            let mut merged = def
                .get("annotations")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            merged.extend(o.annotations.clone());
            def["annotations"] = Value::Object(merged);
        }
        if !o.arguments.is_empty() {
            if let Some(schema) = def.get_mut("inputSchema").and_then(Value::as_object_mut) {
                if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
                    for k in o.arguments.keys() {
                        props.remove(k);
                    }
                }
                if let Some(req) = schema.get_mut("required").and_then(Value::as_array_mut) {
                    req.retain(|r| r.as_str().is_none_or(|r| !o.arguments.contains_key(r)));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn curation(json: Value) -> Curation {
        let c: ToolCuration = serde_json::from_value(json).unwrap();
        c.validate().unwrap();
        c.compile()
    }

    fn apply(c: &Curation, def: Value) -> Curated {
        let name = def["name"].as_str().unwrap().to_string();
        c.apply(&name, &def.into(), true)
    }

    #[test]
    fn a_rename_onto_another_offered_tool_is_refused() {
        let c: ToolCuration = serde_json::from_value(
            json!({"overrides": {"get-env": {"name": "echo"}, "add": {"name": "sum"}}}),
        )
        .unwrap();
        let e = c.check_renames(&["echo", "get-env", "add"]).unwrap_err();
        assert!(e.contains("get-env") && e.contains("\"echo\""), "{e}");
        assert!(c.check_renames(&["get-env", "add"]).is_ok());
        // The other tool out of the way (excluded, or renamed itself): no collision.
        let c: ToolCuration = serde_json::from_value(
            json!({"exclude": ["echo"], "overrides": {"get-env": {"name": "echo"}}}),
        )
        .unwrap();
        assert!(c.check_renames(&["echo", "get-env"]).is_ok());
        let c: ToolCuration = serde_json::from_value(json!({"overrides": {
            "get-env": {"name": "echo"}, "echo": {"name": "say"}}}))
        .unwrap();
        assert!(c.check_renames(&["echo", "get-env"]).is_ok());
        assert_eq!(
            c.compile().colliding_renames(&["echo", "get-env"]),
            Vec::<&str>::new()
        );
    }

    #[test]
    fn include_exclude_and_overrides_shape_what_hosts_see() {
        let c = curation(json!({
            "include": ["get_*", "search_*"],
            "exclude": ["get_secret*"],
            "overrides": {"search_repositories": {
                "name": "find_repos", "description": "Find the team's repositories.",
                "annotations": {"readOnlyHint": true},
                "arguments": {"owner": "acme"}}}
        }));
        let def = json!({"name": "search_repositories", "description": "Search GitHub",
            "annotations": {"title": "Search"},
            "inputSchema": {"type": "object", "properties": {"owner": {"type": "string"},
                "query": {"type": "string"}}, "required": ["owner", "query"]}});
        let Curated::Changed(seen) = apply(&c, def) else {
            panic!("overridden");
        };
        assert_eq!(seen["name"], "find_repos");
        assert_eq!(seen["description"], "Find the team's repositories.");
        assert_eq!(
            seen["annotations"],
            json!({"title": "Search", "readOnlyHint": true})
        );
        assert_eq!(
            seen["inputSchema"],
            json!({"type": "object", "properties": {"query": {"type": "string"}},
                "required": ["query"]})
        );
        assert_eq!(
            c.fixed_arguments("search_repositories"),
            Some(&json!({"owner": "acme"}).as_object().unwrap().clone())
        );
        assert_eq!(apply(&c, json!({"name": "get_me"})), Curated::AsIs);
        assert_eq!(
            apply(&c, json!({"name": "get_secret_key"})),
            Curated::Hidden
        );
        assert_eq!(apply(&c, json!({"name": "delete_repo"})), Curated::Hidden);
    }

    #[test]
    fn bad_names_are_refused() {
        for bad in [
            json!({"overrides": {"a": {"name": "has space"}}}),
            json!({"overrides": {"a": {"name": "x"}, "b": {"name": "x"}}}),
            json!({"exclude": [""]}),
        ] {
            let c: ToolCuration = serde_json::from_value(bad.clone()).unwrap();
            assert!(c.validate().is_err(), "{bad}");
        }
    }
}
