//! Configuration as code: what was registered through the admin API (upstreams with their tool
//! curation, roles, virtual servers) exported to one document and imported from it. Secrets stay
//! references: the registry never holds a clear-text credential, so the document does not
//! either. Tokens and the audit log are not configuration and are not exported.
//!
//! An import checks every item first and changes nothing when one is invalid or names something
//! the config file defines (that belongs to the file). It then creates or replaces items (source
//! `api`); with `prune`, API-registered items the document does not name are removed.

use std::collections::{BTreeMap, BTreeSet};

use registry::{Registry, RegistryError};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::auth::rbac::RoleSpec;
use crate::config::{Config, UpstreamSpec, UpstreamWire};
use crate::routing::virtual_servers::{VirtualServer, VirtualServerSpec};

/// The version of the document's shape.
pub const VERSION: u32 = 1;

/// An exported configuration.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Document {
    pub version: u32,
    #[serde(default)]
    pub upstreams: Vec<UpstreamWire>,
    #[serde(default)]
    pub roles: Vec<RoleSpec>,
    /// By name.
    #[serde(default)]
    pub virtual_servers: BTreeMap<String, VirtualServerSpec>,
}

/// What an import does to one item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Create,
    Update,
    Unchanged,
    /// Registered through the API, not in the document, and `prune` was asked for.
    Delete,
}

/// One line of an import plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Step {
    /// `upstream`, `role` or `virtual_server`.
    pub kind: &'static str,
    pub name: String,
    pub action: Action,
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let action = match self.action {
            Action::Create => "create",
            Action::Update => "update",
            Action::Unchanged => "unchanged",
            Action::Delete => "delete",
        };
        write!(f, "{action:9} {} {}", self.kind, self.name)
    }
}

/// Everything registered through the API; with `with_config`, the config file's items too.
pub async fn export(registry: &dyn Registry, with_config: bool) -> anyhow::Result<Document> {
    let wanted = |source: &str| with_config || source != "config";
    let mut doc = Document {
        version: VERSION,
        ..Default::default()
    };
    for rec in registry.list_upstreams().await? {
        if !wanted(&rec.source) {
            continue;
        }
        let mut spec: UpstreamWire = serde_json::from_value(rec.spec)?;
        spec.enabled = spec.enabled && rec.enabled;
        // Registered before URLs with credentials were refused: never written out.
        if let Some(url) = &spec.url {
            let redacted = crate::config::redact_userinfo(url);
            if redacted != url.as_str() {
                tracing::warn!(
                    upstream = %spec.name,
                    "the url's credentials are not exported: give them as a header secret \
                     reference (headers = {{ Authorization = {{ env = \"VAR\" }} }})"
                );
                spec.url = Some(redacted.into_owned());
            }
        }
        doc.upstreams.push(spec);
    }
    for rec in registry.list_roles().await? {
        if wanted(&rec.source) {
            doc.roles.push(serde_json::from_value(rec.spec)?);
        }
    }
    for rec in registry.list_virtual_servers().await? {
        doc.virtual_servers
            .insert(rec.name, serde_json::from_value(rec.spec)?);
    }
    Ok(doc)
}

/// Reads a document (JSON, or TOML when `toml` is set).
pub fn parse(text: &str, toml: bool) -> anyhow::Result<Document> {
    let doc: Document = if toml {
        toml::from_str(text)?
    } else {
        serde_json::from_str(text)?
    };
    anyhow::ensure!(
        doc.version == VERSION,
        "document version {} is not supported (this gateway reads version {VERSION})",
        doc.version
    );
    Ok(doc)
}

/// Checks the document against itself, the registry and `config` (an upstream the config file
/// could not hold, it cannot import either) and says what an import would do.
pub async fn plan(
    registry: &dyn Registry,
    config: &Config,
    doc: &Document,
    prune: bool,
) -> anyhow::Result<Vec<Step>> {
    let mut steps = Vec::new();
    let mut deletes = Vec::new();
    let (upstreams, upstream_deletes) = plan_upstreams(registry, config, doc, prune).await?;
    steps.extend(upstreams);
    deletes.extend(upstream_deletes);
    let (roles, role_deletes) = plan_roles(registry, doc, prune).await?;
    steps.extend(roles);
    deletes.extend(role_deletes);
    let (servers, server_deletes) = plan_virtual_servers(registry, doc, prune).await?;
    steps.extend(servers);
    deletes.extend(server_deletes);
    // Deletions come last, as a reader of the plan expects.
    steps.extend(deletes);
    Ok(steps)
}

/// A kind's changes and (with `prune`) deletions.
type Planned = (Vec<Step>, Vec<Step>);

/// What is stored of a kind, by name: (source, spec).
type Stored = BTreeMap<String, (String, Value)>;

/// The steps of one kind: each wanted item (name and spec, validated) against what is stored,
/// compared in the normal form `normal` gives a stored spec; with `prune`, deletions of what the
/// document does not name.
fn plan_kind(
    kind: &'static str,
    stored: &Stored,
    wanted: Vec<(String, Value)>,
    normal: impl Fn(&Value) -> Option<Value>,
    prune: bool,
) -> anyhow::Result<Planned> {
    let mut names = BTreeSet::new();
    let mut steps = Vec::new();
    for (name, json) in &wanted {
        anyhow::ensure!(names.insert(name.clone()), "{kind} {name:?} is named twice");
        steps.push(step(kind, name, stored.get(name), json, &normal)?);
    }
    let deletes = match prune {
        true => deletions(kind, stored, |n| names.contains(n)),
        false => Vec::new(),
    };
    Ok((steps, deletes))
}

async fn plan_upstreams(
    registry: &dyn Registry,
    config: &Config,
    doc: &Document,
    prune: bool,
) -> anyhow::Result<Planned> {
    let stored: Stored = registry
        .list_upstreams()
        .await?
        .into_iter()
        .map(|r| {
            let mut spec = r.spec;
            spec["enabled"] = Value::Bool(spec["enabled"].as_bool().unwrap_or(true) && r.enabled);
            (r.name, (r.source, spec))
        })
        .collect();
    let mut wanted = Vec::new();
    for wire in &doc.upstreams {
        let spec = UpstreamSpec::try_from(wire.clone())
            .and_then(|s| s.validate().map(|()| s).map_err(|e| e.to_string()))
            .map_err(anyhow::Error::msg)?;
        crate::config::upstream_fits(&spec, &config.user_credentials, &config.auth)?;
        wanted.push((spec.name.clone(), serde_json::to_value(&spec)?));
    }
    let normal = |v: &Value| {
        serde_json::from_value::<UpstreamSpec>(v.clone())
            .ok()
            .map(|s| s.to_json())
    };
    plan_kind("upstream", &stored, wanted, normal, prune)
}

async fn plan_roles(
    registry: &dyn Registry,
    doc: &Document,
    prune: bool,
) -> anyhow::Result<Planned> {
    let stored: Stored = registry
        .list_roles()
        .await?
        .into_iter()
        .map(|r| (r.name, (r.source, r.spec)))
        .collect();
    let mut wanted = Vec::new();
    for role in &doc.roles {
        role.validate().map_err(anyhow::Error::msg)?;
        wanted.push((role.name.clone(), serde_json::to_value(role)?));
    }
    let normal = |v: &Value| {
        serde_json::from_value::<RoleSpec>(v.clone())
            .ok()
            .and_then(|r| serde_json::to_value(r).ok())
    };
    plan_kind("role", &stored, wanted, normal, prune)
}

async fn plan_virtual_servers(
    registry: &dyn Registry,
    doc: &Document,
    prune: bool,
) -> anyhow::Result<Planned> {
    let stored: Stored = registry
        .list_virtual_servers()
        .await?
        .into_iter()
        .map(|r| (r.name, ("api".to_string(), r.spec)))
        .collect();
    let mut wanted = Vec::new();
    for (name, spec) in &doc.virtual_servers {
        VirtualServer::new(name, spec.clone())
            .map_err(|e| anyhow::anyhow!("virtual server {name:?}: {e}"))?;
        wanted.push((name.clone(), serde_json::to_value(spec)?));
    }
    let normal = |v: &Value| {
        serde_json::from_value::<VirtualServerSpec>(v.clone())
            .ok()
            .and_then(|s| serde_json::to_value(s).ok())
    };
    plan_kind("virtual_server", &stored, wanted, normal, prune)
}

/// The step for one item: `stored` is its (source, spec) in the registry, `normal` reads a stored
/// spec the way the document's was written, so that equal settings compare equal.
fn step(
    kind: &'static str,
    name: &str,
    stored: Option<&(String, Value)>,
    wanted: &Value,
    normal: impl Fn(&Value) -> Option<Value>,
) -> anyhow::Result<Step> {
    let action = match stored {
        None => Action::Create,
        Some((source, _)) if source == "config" => anyhow::bail!(
            "{kind} {name:?} is defined in the config file; change it there, not by import"
        ),
        Some((_, spec)) if normal(spec).as_ref() == Some(wanted) => Action::Unchanged,
        Some(_) => Action::Update,
    };
    Ok(Step {
        kind,
        name: name.to_string(),
        action,
    })
}

/// With `prune`: the API-registered items of one kind in `stored` the document does not name.
fn deletions(
    kind: &'static str,
    stored: &BTreeMap<String, (String, Value)>,
    named: impl Fn(&str) -> bool,
) -> Vec<Step> {
    stored
        .iter()
        .filter(|(name, (source, _))| source != "config" && !named(name))
        .map(|(name, _)| Step {
            kind,
            name: name.clone(),
            action: Action::Delete,
        })
        .collect()
}

/// Carries out a plan made by [`plan`] for the same document.
pub async fn apply(registry: &dyn Registry, doc: &Document, steps: &[Step]) -> anyhow::Result<()> {
    for s in steps {
        let result = match (s.kind, s.action) {
            (_, Action::Unchanged) => Ok(()),
            ("upstream", Action::Delete) => registry.delete_upstream(&s.name).await,
            ("role", Action::Delete) => registry.delete_role(&s.name).await,
            ("virtual_server", Action::Delete) => registry.delete_virtual_server(&s.name).await,
            ("upstream", _) => {
                let wire = doc.upstreams.iter().find(|u| u.name == s.name);
                let spec = serde_json::to_value(wire.expect("planned from this document"))?;
                registry.put_upstream(&s.name, &spec, "api").await.map(drop)
            }
            ("role", _) => {
                let role = doc.roles.iter().find(|r| r.name == s.name);
                let spec = serde_json::to_value(role.expect("planned from this document"))?;
                registry.put_role(&s.name, &spec, "api").await.map(drop)
            }
            (_, action) => {
                let spec = serde_json::to_value(&doc.virtual_servers[&s.name])?;
                registry
                    .put_virtual_server(&s.name, &spec, action == Action::Create)
                    .await
                    .map(drop)
            }
        };
        match result {
            // Removed meanwhile by someone else: the end state is the one asked for.
            Err(RegistryError::NotFound(_)) if s.action == Action::Delete => {}
            other => other?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn stored() -> Stored {
        BTreeMap::from([
            ("same".to_string(), ("api".to_string(), json!({"v": 1}))),
            ("changed".to_string(), ("api".to_string(), json!({"v": 1}))),
            ("gone".to_string(), ("api".to_string(), json!({"v": 1}))),
            ("filed".to_string(), ("config".to_string(), json!({"v": 1}))),
        ])
    }

    fn wanted(items: &[(&str, Value)]) -> Vec<(String, Value)> {
        items
            .iter()
            .map(|(n, v)| (n.to_string(), v.clone()))
            .collect()
    }

    #[test]
    fn a_plan_creates_updates_keeps_and_with_prune_deletes_what_the_api_made() {
        let (steps, deletes) = plan_kind(
            "role",
            &stored(),
            wanted(&[
                ("same", json!({"v": 1})),
                ("changed", json!({"v": 2})),
                ("new", json!({"v": 1})),
            ]),
            |v| Some(v.clone()),
            true,
        )
        .unwrap();
        let actions: Vec<(&str, Action)> =
            steps.iter().map(|s| (s.name.as_str(), s.action)).collect();
        assert_eq!(
            actions,
            [
                ("same", Action::Unchanged),
                ("changed", Action::Update),
                ("new", Action::Create)
            ]
        );
        // What the config file defines is never deleted by an import.
        let deleted: Vec<&str> = deletes.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(deleted, ["gone"]);
        let (_, none) =
            plan_kind("role", &stored(), wanted(&[]), |v| Some(v.clone()), false).unwrap();
        assert!(none.is_empty(), "no deletions without prune");
    }

    #[test]
    fn a_name_twice_and_an_item_of_the_config_file_are_refused() {
        let e = plan_kind(
            "upstream",
            &stored(),
            wanted(&[("new", json!({})), ("new", json!({}))]),
            |v| Some(v.clone()),
            false,
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "upstream \"new\" is named twice");
        let e = plan_kind(
            "upstream",
            &stored(),
            wanted(&[("filed", json!({"v": 2}))]),
            |v| Some(v.clone()),
            false,
        )
        .unwrap_err();
        assert!(e.to_string().contains("defined in the config file"), "{e}");
    }
}
