//! What one request may see: the caller's rights, narrowed to a virtual server's tools, and
//! (for `tools/list`) the endpoint's routing mode.

use std::sync::Arc;

use registry::EntryKind;

use super::config::Mode;
use super::virtual_servers::VirtualServer;
use crate::auth::Access;

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
