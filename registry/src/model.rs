//! Records kept in the registry. Connection settings and definitions are opaque JSON here:
//! the gateway validates them, the registry only stores them faithfully.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A registered upstream MCP server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UpstreamRecord {
    pub name: String,
    /// Connection settings as the gateway's config describes them (secrets only as references).
    pub spec: Value,
    pub enabled: bool,
    /// Where the record came from: `config` (seeded at start-up) or `api`.
    pub source: String,
    /// Milliseconds since the Unix epoch.
    pub created_at: i64,
    pub updated_at: i64,
}

/// What kind of thing a catalog entry describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    Tool,
    Resource,
    ResourceTemplate,
    Prompt,
}

impl EntryKind {
    pub const ALL: [EntryKind; 4] = [
        EntryKind::Tool,
        EntryKind::Resource,
        EntryKind::ResourceTemplate,
        EntryKind::Prompt,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::Tool => "tool",
            EntryKind::Resource => "resource",
            EntryKind::ResourceTemplate => "resource_template",
            EntryKind::Prompt => "prompt",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// The field of a definition that identifies it within its upstream.
    pub fn key_field(self) -> &'static str {
        match self {
            EntryKind::Tool | EntryKind::Prompt => "name",
            EntryKind::Resource => "uri",
            EntryKind::ResourceTemplate => "uriTemplate",
        }
    }
}

/// One tool, resource, resource template or prompt of one upstream, as the upstream sent it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CatalogEntry {
    pub upstream: String,
    pub kind: EntryKind,
    /// The upstream's own name (or URI / URI template) of the entry.
    pub key: String,
    /// The definition, byte-faithful JSON as received (unknown fields included). Shared: the
    /// upstream's list and every view of the catalog hold the same one.
    pub definition: std::sync::Arc<Value>,
    /// sha256 of the definition's serialised form.
    pub content_hash: String,
}

/// What a catalog sync changed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SyncReport {
    pub added: usize,
    pub changed: usize,
    pub removed: usize,
    pub unchanged: usize,
}

impl SyncReport {
    pub fn is_change(&self) -> bool {
        self.added + self.changed + self.removed > 0
    }
}
