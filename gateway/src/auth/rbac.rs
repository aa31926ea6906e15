//! Roles: what a role grants (patterns over upstreams, tools, resources and prompts; the admin
//! right), and the book of roles every replica keeps in memory, re-read when one changes.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use registry::{EntryKind, Registry};
use serde::{Deserialize, Serialize};
use wildmatch::WildMatch;

/// A role as written in the config and the admin API. Patterns use `*` (any run of characters)
/// and `?` (one character) and match the names hosts see: `github__*`, `*__read_*`,
/// `file:///docs/*`.
#[derive(
    Debug, Clone, PartialEq, Deserialize, Serialize, utoipa::ToSchema, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct RoleSpec {
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Every tool, resource and prompt of the upstreams these patterns match.
    #[serde(default)]
    pub upstreams: Vec<String>,
    /// Tools by exposed name.
    #[serde(default)]
    pub tools: Vec<String>,
    /// Resources by exposed URI, resource templates by exposed URI template.
    #[serde(default)]
    pub resources: Vec<String>,
    /// Prompts by exposed name.
    #[serde(default)]
    pub prompts: Vec<String>,
    /// The admin API (upstreams, roles, tokens, the audit log).
    #[serde(default)]
    pub admin: bool,
}

impl RoleSpec {
    pub fn validate(&self) -> Result<(), String> {
        crate::names::Name::parse(crate::names::NameKind::Role, &self.name).map(drop)
    }
}

/// A role with its patterns compiled.
#[derive(Debug)]
struct Compiled {
    upstreams: Vec<WildMatch>,
    tools: Vec<WildMatch>,
    resources: Vec<WildMatch>,
    prompts: Vec<WildMatch>,
    admin: bool,
}

impl Compiled {
    fn of(spec: &RoleSpec) -> Self {
        let c = |v: &[String]| v.iter().map(|p| WildMatch::new(p)).collect();
        Self {
            upstreams: c(&spec.upstreams),
            tools: c(&spec.tools),
            resources: c(&spec.resources),
            prompts: c(&spec.prompts),
            admin: spec.admin,
        }
    }
}

/// What a principal may do: the union of its roles' grants.
#[derive(Debug, Clone)]
pub struct Access {
    /// Everything (`auth.mode = none`).
    all: bool,
    roles: Vec<Arc<Compiled>>,
}

impl Access {
    /// Every right: local development without authentication.
    pub fn everything() -> Self {
        Self {
            all: true,
            roles: Vec::new(),
        }
    }

    pub fn is_everything(&self) -> bool {
        self.all
    }

    pub fn admin(&self) -> bool {
        self.all || self.roles.iter().any(|r| r.admin)
    }

    /// Whether a role grants all of `upstream` (its `upstreams` patterns), not only some of
    /// its entries.
    pub fn grants_upstream(&self, upstream: &str) -> bool {
        self.all
            || self
                .roles
                .iter()
                .any(|r| r.upstreams.iter().any(|p| p.matches(upstream)))
    }

    /// Whether the principal may see and use an entry of `upstream` that hosts see as `exposed`.
    pub fn allows(&self, kind: EntryKind, upstream: &str, exposed: &str) -> bool {
        if self.all {
            return true;
        }
        self.roles.iter().any(|r| {
            r.upstreams.iter().any(|p| p.matches(upstream))
                || match kind {
                    EntryKind::Tool => &r.tools,
                    EntryKind::Resource | EntryKind::ResourceTemplate => &r.resources,
                    EntryKind::Prompt => &r.prompts,
                }
                .iter()
                .any(|p| p.matches(exposed))
        })
    }
}

/// The roles in the registry, compiled, kept by every replica.
pub struct RoleBook {
    roles: RwLock<HashMap<String, Arc<Compiled>>>,
    /// Counts reloads: an [`Access`] built before the last one may be stale.
    generation: AtomicU64,
}

impl RoleBook {
    pub fn new() -> Self {
        Self {
            roles: RwLock::default(),
            generation: AtomicU64::new(0),
        }
    }

    /// Re-reads every role; on failure the roles already known stay.
    pub async fn reload(&self, registry: &dyn Registry) -> registry::Result<()> {
        let mut fresh = HashMap::new();
        for rec in registry.list_roles().await? {
            match serde_json::from_value::<RoleSpec>(rec.spec) {
                Ok(spec) => {
                    fresh.insert(rec.name, Arc::new(Compiled::of(&spec)));
                }
                Err(e) => {
                    tracing::error!(role = %rec.name, error = %e, "stored role is invalid; ignored")
                }
            }
        }
        *self.roles.write().unwrap() = fresh;
        // After the roles are in: an access built from the roles before them was tagged with
        // an older generation (see `generation`).
        self.generation.fetch_add(1, Ordering::Release);
        Ok(())
    }

    pub fn exists(&self, name: &str) -> bool {
        self.roles.read().unwrap().contains_key(name)
    }

    /// Which reload the roles come from. Read it before building an [`Access`]: an access tagged
    /// with the generation read then is never newer than its roles claim.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The access the named roles grant together; unknown names grant nothing.
    pub fn access(&self, names: &[String]) -> Access {
        let roles = self.roles.read().unwrap();
        Access {
            all: false,
            roles: names.iter().filter_map(|n| roles.get(n).cloned()).collect(),
        }
    }
}

impl Default for RoleBook {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(spec: RoleSpec) -> Access {
        Access {
            all: false,
            roles: vec![Arc::new(Compiled::of(&spec))],
        }
    }

    fn role(name: &str) -> RoleSpec {
        RoleSpec {
            name: name.into(),
            description: String::new(),
            upstreams: vec![],
            tools: vec![],
            resources: vec![],
            prompts: vec![],
            admin: false,
        }
    }

    #[test]
    fn patterns_grant_by_kind_and_upstream() {
        let a = access(RoleSpec {
            tools: vec!["*__read_*".into()],
            upstreams: vec!["github".into()],
            ..role("r")
        });
        assert!(a.allows(EntryKind::Tool, "fs", "fs__read_file"));
        assert!(!a.allows(EntryKind::Tool, "fs", "fs__write_file"));
        assert!(a.allows(EntryKind::Prompt, "github", "github__anything"));
        assert!(
            !a.allows(EntryKind::Prompt, "fs", "fs__read_x"),
            "tool patterns are for tools"
        );
        assert!(!a.admin());
        assert!(Access::everything().allows(EntryKind::Resource, "x", "file:///y"));
    }

    #[test]
    fn role_names_are_checked() {
        assert!(role("developer").validate().is_ok());
        assert!(role("").validate().is_err());
        assert!(role("a b").validate().is_err());
    }
}
