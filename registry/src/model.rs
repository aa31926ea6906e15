//! Records kept in the registry. Connection settings and definitions are opaque JSON here:
//! the gateway validates them, the registry only stores them faithfully.

use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
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
    /// The definition as received (unknown fields included, key order kept). Shared: the
    /// upstream's list and every view of the catalog hold the same one.
    pub definition: Definition,
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

/// A definition kept as compact JSON text, parsed when it is read.
///
/// A catalog holds thousands of these for as long as the gateway runs, and reads them rarely
/// (listings, search results, rebuilt views). As a parsed [`Value`] one real tool takes about
/// 4.7 KB (order-preserving maps, one allocation per string); as text it takes its serialised
/// size, about 720 bytes. Cloning shares the text.
#[derive(Clone)]
pub struct Definition(Arc<RawValue>);

impl Definition {
    pub fn new(value: &Value) -> Self {
        let text = serde_json::to_string(value).unwrap_or_else(|_| "null".into());
        // Serialising a Value always gives valid JSON.
        Definition(Arc::from(
            RawValue::from_string(text).expect("serialised JSON parses"),
        ))
    }

    /// The definition as a value to read or change.
    pub fn to_value(&self) -> Value {
        serde_json::from_str(self.0.get()).unwrap_or(Value::Null)
    }

    /// The compact JSON text.
    pub fn text(&self) -> &str {
        self.0.get()
    }

    /// sha256 (hex) of the text: [`crate::hash::content_hash`] of the value, without
    /// serialising it again.
    pub fn content_hash(&self) -> String {
        crate::hash::text_hash(self.text())
    }

    /// A top-level string field (a tool's `name`, a resource's `uri`), read without building the
    /// rest of the definition.
    pub fn str_field(&self, field: &str) -> Option<String> {
        let mut de = serde_json::Deserializer::from_str(self.0.get());
        serde::de::DeserializeSeed::deserialize(FieldSeek(field), &mut de)
            .ok()
            .flatten()
    }
}

/// Reads one top-level string field of a JSON object, skipping the other values unparsed.
struct FieldSeek<'f>(&'f str);

impl<'de> serde::de::DeserializeSeed<'de> for FieldSeek<'_> {
    type Value = Option<String>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for FieldSeek<'_> {
    type Value = Option<String>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut found = None;
        while let Some(is_field) = map.next_key_seed(KeyIs(self.0))? {
            if is_field {
                found = map.next_value::<Option<String>>().ok().flatten();
            } else {
                map.next_value::<serde::de::IgnoredAny>()?;
            }
        }
        Ok(found)
    }
}

/// Whether a map key is the wanted one, compared without copying it.
struct KeyIs<'f>(&'f str);

impl<'de> serde::de::DeserializeSeed<'de> for KeyIs<'_> {
    type Value = bool;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_str(self)
    }
}

impl serde::de::Visitor<'_> for KeyIs<'_> {
    type Value = bool;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<bool, E> {
        Ok(key == self.0)
    }
}

impl From<Value> for Definition {
    fn from(value: Value) -> Self {
        Definition::new(&value)
    }
}

impl PartialEq for Definition {
    fn eq(&self, other: &Self) -> bool {
        self.text() == other.text()
    }
}

impl std::fmt::Debug for Definition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.text())
    }
}

impl Serialize for Definition {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Definition {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Through a Value: stored text may carry whitespace, and the text kept must be compact.
        Value::deserialize(d).map(Definition::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_definition_keeps_compact_text_in_order_and_reads_top_level_fields() {
        let v = json!({"inputSchema": {"name": "nested"}, "na\"me": 1, "name": "get_\u{e9}t\"e",
            "z": [1, {"a": null}], "a": true});
        let d = Definition::from(v.clone());
        assert_eq!(d.text(), serde_json::to_string(&v).unwrap());
        assert!(
            d.text().find("\"z\"") < d.text().find("\"a\":true"),
            "key order kept"
        );
        assert_eq!(d.to_value(), v);
        assert_eq!(d.str_field("name").as_deref(), Some("get_\u{e9}t\"e"));
        assert_eq!(d.str_field("uri"), None);
        assert_eq!(d.str_field("a"), None, "not a string");
        assert_eq!(d.content_hash(), crate::hash::content_hash(&v));
    }

    #[test]
    fn a_definition_round_trips_through_serde_as_compact_json() {
        let d: Definition =
            serde_json::from_str("{ \"name\" : \"x\",\n \"b\": [ 1, 2 ] }").unwrap();
        assert_eq!(d.text(), r#"{"name":"x","b":[1,2]}"#);
        assert_eq!(serde_json::to_string(&d).unwrap(), d.text());
        assert_eq!(d, Definition::from(json!({"name": "x", "b": [1, 2]})));
        assert_ne!(d, Definition::from(json!({"b": [1, 2], "name": "x"})));
    }
}
