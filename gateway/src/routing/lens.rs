//! What one request may see: the caller's rights, narrowed to a virtual server's tools, and
//! (for `tools/list`) the endpoint's routing mode.

use std::sync::Arc;

use registry::{EntryKind, Exposed};
use serde_json::{Map, Value};

use super::virtual_servers::VirtualServer;
use crate::auth::Access;
use crate::config::routing::Mode;

pub struct Lens {
    pub access: Access,
    pub scope: Option<Arc<VirtualServer>>,
    pub mode: Mode,
    /// Tools the session's searches found (exposed names).
    pub found: Vec<String>,
}

impl Lens {
    /// Whether the caller may see and call this entry here.
    pub fn allows(&self, kind: EntryKind, upstream: &str, exposed: &str) -> bool {
        self.access.allows(kind, upstream, exposed)
            && self
                .scope
                .as_ref()
                .is_none_or(|v| v.contains(kind, upstream, exposed))
    }

    /// An entry's definition as hosts of this endpoint see it: the upstream's (curated) JSON
    /// under its exposed name, then the virtual server's overrides.
    pub fn shown(&self, e: &Exposed) -> Value {
        let mut def = e.entry.definition.to_value();
        def[e.entry.kind.key_field()] = Value::from(e.exposed.clone());
        if let (Some(v), EntryKind::Tool) = (&self.scope, e.entry.kind) {
            v.shown(&e.exposed, &mut def);
        }
        def
    }

    /// The exposed name a tool is called by here (`None`: a name this endpoint renamed away).
    pub fn exposed_name<'a>(&'a self, name: &'a str) -> Option<&'a str> {
        match &self.scope {
            Some(v) => v.exposed_name(name),
            None => Some(name),
        }
    }

    /// Search results as this endpoint shows them (its names and texts).
    pub fn show_found(&self, found: &mut [super::service::Found]) {
        let Some(v) = &self.scope else {
            return;
        };
        for f in found {
            v.shown(&f.name, &mut f.definition);
            if let Some(n) = f.definition.get("name").and_then(Value::as_str) {
                f.name = n.to_string();
            }
        }
    }

    /// Arguments the endpoint fixes for the tool `exposed`.
    pub fn fixed_arguments(&self, exposed: &str) -> Option<&Map<String, Value>> {
        self.scope.as_ref()?.fixed_arguments(exposed)
    }

    /// Whether `tools/list` shows this (allowed) tool.
    pub fn lists_tool(&self, exposed: &str) -> bool {
        let pinned = || self.scope.as_ref().is_some_and(|v| v.is_pinned(exposed));
        match self.mode {
            Mode::All => true,
            Mode::Search => pinned(),
            Mode::Auto => pinned() || self.found.iter().any(|f| f == exposed),
        }
    }
}
