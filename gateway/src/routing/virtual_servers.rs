//! Virtual servers: named endpoints (`/mcp/v/{name}`) with their own upstreams and tools and a
//! routing mode. Kept in the registry; every replica holds them compiled in memory and re-reads
//! them when one changes (NOTIFY `virtual:NAME`, and every minute).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, RwLock};

use registry::{EntryKind, Registry};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use wildmatch::WildMatch;

use crate::config::routing::Mode;
use crate::config::{ToolCuration, ToolOverride};

/// A virtual server as the admin API takes and shows it. Patterns use `*` and `?` and match
/// upstream names and exposed tool names.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct VirtualServerSpec {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Upstreams whose tools, resources and prompts the endpoint offers (empty: all).
    #[serde(default)]
    pub upstreams: Vec<String>,
    /// Tools the endpoint offers, by exposed name (empty: every tool of those upstreams).
    #[serde(default)]
    pub tools: Vec<String>,
    /// Tools the endpoint never offers, by exposed name (wins over `tools`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
    #[serde(default)]
    pub mode: Mode,
    /// Tools listed in `search` and `auto` modes without a search.
    #[serde(default)]
    pub pinned: Vec<String>,
    /// Tools an `auto` session keeps from its searches (default: `routing.auto_k`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_k: Option<usize>,
    /// What this endpoint's hosts see of a tool instead (by exposed name): its whole name here,
    /// description, annotations, and arguments fixed for calls through this endpoint.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub overrides: BTreeMap<String, ToolOverride>,
}

/// Names of virtual servers: they appear in URLs.
pub fn validate_name(name: &str) -> Result<(), String> {
    crate::names::Name::parse(crate::names::NameKind::VirtualServer, name).map(drop)
}

/// A virtual server with its patterns compiled.
#[derive(Debug)]
pub struct VirtualServer {
    pub name: String,
    pub spec: VirtualServerSpec,
    upstreams: Vec<WildMatch>,
    tools: Vec<WildMatch>,
    exclude: Vec<WildMatch>,
    pinned: Vec<WildMatch>,
    /// Renamed tools: the name shown here → the exposed name.
    renamed: HashMap<String, String>,
    /// Deleted while a session still used it: offers nothing.
    gone: bool,
}

fn compile(p: &[String]) -> Vec<WildMatch> {
    p.iter().map(|s| WildMatch::new(s)).collect()
}

impl VirtualServer {
    pub fn new(name: &str, spec: VirtualServerSpec) -> Result<Self, String> {
        validate_name(name)?;
        if spec.auto_k == Some(0) {
            return Err("auto_k must be > 0".into());
        }
        ToolCuration {
            overrides: spec.overrides.clone(),
            ..Default::default()
        }
        .validate()?;
        let renamed = spec
            .overrides
            .iter()
            .filter_map(|(exposed, o)| Some((o.name.clone()?, exposed.clone())))
            .collect();
        Ok(Self {
            renamed,
            name: name.into(),
            upstreams: compile(&spec.upstreams),
            tools: compile(&spec.tools),
            exclude: compile(&spec.exclude),
            pinned: compile(&spec.pinned),
            spec,
            gone: false,
        })
    }

    /// Stands for a virtual server that no longer exists.
    pub fn gone(name: &str) -> Self {
        Self {
            name: name.into(),
            spec: VirtualServerSpec::default(),
            upstreams: Vec::new(),
            tools: Vec::new(),
            exclude: Vec::new(),
            pinned: Vec::new(),
            renamed: HashMap::new(),
            gone: true,
        }
    }

    /// Whether the endpoint offers this entry.
    pub fn contains(&self, kind: EntryKind, upstream: &str, exposed: &str) -> bool {
        if self.gone {
            return false;
        }
        let upstream_ok =
            self.upstreams.is_empty() || self.upstreams.iter().any(|p| p.matches(upstream));
        let tool_ok = kind != EntryKind::Tool
            || ((self.tools.is_empty() || self.tools.iter().any(|p| p.matches(exposed)))
                && !self.exclude.iter().any(|p| p.matches(exposed)));
        upstream_ok && tool_ok
    }

    /// The exposed name a host means by `name` here: a renamed tool answers to its new name
    /// only; `None` for an old name that was renamed.
    pub fn exposed_name<'a>(&'a self, name: &'a str) -> Option<&'a str> {
        if let Some(exposed) = self.renamed.get(name) {
            return Some(exposed);
        }
        match self.spec.overrides.get(name) {
            Some(o) if o.name.is_some() => None,
            _ => Some(name),
        }
    }

    /// A tool definition (as hosts see it everywhere) as this endpoint shows it.
    pub fn shown(&self, exposed: &str, def: &mut Value) {
        if let Some(o) = self.spec.overrides.get(exposed) {
            o.apply(def);
        }
    }

    /// Arguments this endpoint fixes for the tool `exposed`.
    pub fn fixed_arguments(&self, exposed: &str) -> Option<&Map<String, Value>> {
        self.spec.overrides.get(exposed).map(|o| &o.arguments)
    }

    pub fn is_pinned(&self, exposed: &str) -> bool {
        self.pinned.iter().any(|p| p.matches(exposed))
    }
}

/// Every virtual server, compiled.
#[derive(Default)]
pub struct VirtualServers {
    all: RwLock<HashMap<String, Arc<VirtualServer>>>,
}

impl VirtualServers {
    pub fn get(&self, name: &str) -> Option<Arc<VirtualServer>> {
        self.all.read().unwrap().get(name).cloned()
    }

    pub fn list(&self) -> Vec<Arc<VirtualServer>> {
        let mut v: Vec<_> = self.all.read().unwrap().values().cloned().collect();
        v.sort_by(|a, b| a.name.cmp(&b.name));
        v
    }

    /// Re-reads them from the registry; a stored one that no longer compiles is left out, with a
    /// warning.
    pub async fn reload(&self, registry: &dyn Registry) -> registry::Result<()> {
        let mut all = HashMap::new();
        for rec in registry.list_virtual_servers().await? {
            let compiled = serde_json::from_value::<VirtualServerSpec>(rec.spec)
                .map_err(|e| e.to_string())
                .and_then(|spec| VirtualServer::new(&rec.name, spec));
            match compiled {
                Ok(v) => {
                    all.insert(rec.name, Arc::new(v));
                }
                Err(e) => {
                    tracing::warn!(virtual_server = %rec.name, error = %e, "stored virtual server is invalid; left out")
                }
            }
        }
        *self.all.write().unwrap() = all;
        Ok(())
    }

    pub fn put(&self, v: VirtualServer) {
        self.all
            .write()
            .unwrap()
            .insert(v.name.clone(), Arc::new(v));
    }

    pub fn remove(&self, name: &str) {
        self.all.write().unwrap().remove(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_choose_upstreams_tools_and_pins() {
        let v = VirtualServer::new(
            "dev",
            VirtualServerSpec {
                upstreams: vec!["git*".into(), "fs".into()],
                tools: vec!["*__read_*".into(), "git__*".into()],
                exclude: vec!["git__git_push*".into()],
                pinned: vec!["git__git_status".into()],
                ..Default::default()
            },
        )
        .unwrap();
        assert!(v.contains(EntryKind::Tool, "git", "git__git_log"));
        assert!(!v.contains(EntryKind::Tool, "git", "git__git_push"));
        assert!(v.contains(EntryKind::Tool, "fs", "fs__read_file"));
        assert!(!v.contains(EntryKind::Tool, "fs", "fs__write_file"));
        assert!(!v.contains(EntryKind::Tool, "time", "time__read_clock"));
        assert!(v.contains(EntryKind::Prompt, "fs", "fs__anything"));
        assert!(v.is_pinned("git__git_status"));
        assert!(VirtualServer::new("a/b", VirtualServerSpec::default()).is_err());
    }
}
