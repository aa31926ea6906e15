//! Tool pinning, kept per upstream: the approved definitions read from the store (pinned on
//! first use when the upstream has none), what each listed tool is served as, the changes
//! waiting for an admin, and approving or rejecting one (every replica re-reads the pins).

use std::collections::HashMap;
use std::sync::Arc;

use registry::{EntryKind, PinRecord};
use serde::Serialize;
use serde_json::Value;

use super::{Definition, Entry, Upstreams};
use crate::config::Pinning;
use crate::upstream::pinning::{flagged, serve, Serve, Standing};

/// One tool's pin as the views use it.
pub(super) struct Pin {
    hash: Option<String>,
    definition: Option<registry::Definition>,
    rejected: Option<String>,
}

impl Pin {
    /// How the listed definition whose pin hash is `hash` stands against `pin` (none: a tool
    /// never pinned).
    fn standing(pin: Option<&Pin>, hash: &str) -> Standing {
        Standing::of(
            hash,
            pin.and_then(|p| p.hash.as_deref()),
            pin.and_then(|p| p.rejected.as_deref()),
        )
    }
}

/// What hosts get of a listed tool under its upstream's pinning.
pub(super) enum Pinned {
    Listed,
    /// Another definition (the approved one, or the listed one flagged); `held`: the approved
    /// one, which calls are checked against.
    Replaced {
        definition: registry::Definition,
        held: bool,
    },
    Hidden,
}

/// A change waiting for an admin, with both definitions for a diff.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct PendingTool {
    pub upstream: String,
    /// The upstream's own name of the tool.
    pub tool: String,
    /// `changed` or `new`.
    pub status: &'static str,
    /// The pin hash of the listed definition: what an approval or rejection names.
    pub hash: String,
    pub approved_hash: Option<String>,
    #[schema(value_type = Object)]
    pub listed: Value,
    #[schema(value_type = Object)]
    pub approved: Option<Value>,
}

/// Why a review was not recorded.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Stale(String),
    #[error(transparent)]
    Store(#[from] registry::RegistryError),
}

impl Upstreams {
    fn policy(entry: &Entry) -> Pinning {
        entry.spec.pinning
    }

    /// Re-reads an upstream's pins; under a pinning policy, pins its tools on first use when it
    /// has none. A store that cannot be read leaves the known pins (none yet: `hold` serves
    /// no tool of it, `warn` serves them unflagged).
    pub(super) async fn refresh_pins(&self, entry: &Entry) {
        let name = &entry.spec.name;
        if Self::policy(entry) == Pinning::Off {
            *entry.pins.lock().unwrap() = None;
            return;
        }
        let mut pins = self.registry.list_pins(name).await;
        if matches!(&pins, Ok(p) if p.is_empty()) {
            let first = self.first_use(entry);
            if !first.is_empty() {
                match self.registry.pin_first_use(&first).await {
                    Ok(n) => {
                        tracing::info!(upstream = %name, tools = n, "tools pinned on first use")
                    }
                    Err(e) => tracing::warn!(upstream = %name, error = %e, "tools not pinned"),
                }
                pins = self.registry.list_pins(name).await;
            }
        }
        match pins {
            Ok(list) => {
                let map = list
                    .into_iter()
                    .map(|p| {
                        let pin = Pin {
                            hash: p.hash,
                            definition: p.definition.and_then(|d| serde_json::from_str(&d).ok()),
                            rejected: p.rejected_hash,
                        };
                        (p.tool, pin)
                    })
                    .collect();
                *entry.pins.lock().unwrap() = Some(map);
            }
            Err(e) => {
                tracing::warn!(upstream = %name, error = %e, "tool pins not read; keeping the known ones")
            }
        }
    }

    /// Pins of every tool listed now, approved by "first use".
    fn first_use(&self, entry: &Entry) -> Vec<PinRecord> {
        let defs = entry.definitions.lock().unwrap();
        let now = registry::now_ms();
        defs.get(&EntryKind::Tool)
            .into_iter()
            .flatten()
            .filter_map(|d| {
                Some(PinRecord {
                    upstream: entry.spec.name.clone(),
                    tool: d.key.clone()?,
                    hash: d.pin.clone(),
                    definition: Some(d.json.text().to_string()),
                    approved_by: "first use".into(),
                    approved_at: now,
                    rejected_hash: None,
                })
            })
            .collect()
    }

    /// The upstream's pins changed (here or on another replica): re-read, views rebuilt.
    pub async fn pins_changed(&self, upstream: &str) {
        let Some(entry) = self.entries.lock().unwrap().get(upstream).cloned() else {
            return;
        };
        self.refresh_pins(&entry).await;
        self.rebuild_view();
    }

    /// How `d` (a listed tool of `entry`, named `key`) stands and what is served for it.
    pub(super) fn pinned(
        entry: &Entry,
        pins: Option<&HashMap<String, Pin>>,
        key: &str,
        d: &Definition,
    ) -> (Pinned, Option<Standing>) {
        let policy = Self::policy(entry);
        let (Some(pins), Some(hash)) = (pins, d.pin.as_deref()) else {
            return match policy {
                // Unknown pins: nothing is served that an admin has not seen.
                Pinning::Hold => (Pinned::Hidden, None),
                _ => (Pinned::Listed, None),
            };
        };
        let pin = pins.get(key);
        let standing = Pin::standing(pin, hash);
        let served = match serve(policy, standing) {
            Serve::Listed => Pinned::Listed,
            Serve::Hidden => Pinned::Hidden,
            Serve::Flagged => Pinned::Replaced {
                definition: flagged(&d.json.to_value(), standing).into(),
                held: false,
            },
            Serve::Approved => match pin.and_then(|p| p.definition.clone()) {
                Some(definition) => Pinned::Replaced {
                    definition,
                    held: true,
                },
                None => Pinned::Hidden,
            },
        };
        (served, Some(standing))
    }

    /// The tool changes waiting for an admin, over every upstream with pinning.
    pub fn pending_tools(&self) -> Vec<PendingTool> {
        let entries: Vec<Arc<Entry>> = self.entries.lock().unwrap().values().cloned().collect();
        entries
            .iter()
            .flat_map(|e| Self::pending_of(e, None))
            .collect()
    }

    /// An upstream's tool changes waiting for an admin (only `tool`'s, when given).
    fn pending_of(e: &Entry, tool: Option<&str>) -> Vec<PendingTool> {
        if Self::policy(e) == Pinning::Off {
            return Vec::new();
        }
        let pins = e.pins.lock().unwrap();
        let Some(pins) = pins.as_ref() else {
            return Vec::new();
        };
        let defs = e.definitions.lock().unwrap();
        let mut out = Vec::new();
        for d in defs.get(&EntryKind::Tool).into_iter().flatten() {
            let (Some(key), Some(hash)) = (&d.key, &d.pin) else {
                continue;
            };
            if tool.is_some_and(|t| t != key) {
                continue;
            }
            let pin = pins.get(key);
            let standing = Pin::standing(pin, hash);
            if standing.pending() {
                out.push(PendingTool {
                    upstream: e.spec.name.clone(),
                    tool: key.clone(),
                    status: standing.as_str(),
                    hash: hash.clone(),
                    approved_hash: pin.and_then(|p| p.hash.clone()),
                    listed: d.json.to_value(),
                    approved: pin
                        .and_then(|p| p.definition.as_ref())
                        .map(|d| d.to_value()),
                });
            }
        }
        out
    }

    /// Approves (or rejects) the listed definition of `tool` whose pin hash is `hash`: the
    /// one the admin reviewed, not one that changed since.
    pub async fn review_tool(
        &self,
        upstream: &str,
        tool: &str,
        hash: &str,
        by: &str,
        approve: bool,
    ) -> Result<(), ReviewError> {
        let entry = self.entries.lock().unwrap().get(upstream).cloned();
        let listed = entry.and_then(|e| Self::pending_of(&e, Some(tool)).pop());
        let Some(listed) = listed else {
            return Err(ReviewError::NotFound(format!(
                "no change of tool {tool:?} of upstream {upstream:?} is waiting for review"
            )));
        };
        if listed.hash != hash {
            return Err(ReviewError::Stale(format!(
                "tool {tool:?} of {upstream:?} changed again since it was reviewed: review it anew"
            )));
        }
        if approve {
            self.registry
                .approve_pin(&PinRecord {
                    upstream: upstream.into(),
                    tool: tool.into(),
                    hash: Some(hash.into()),
                    definition: Some(listed.listed.to_string()),
                    approved_by: by.into(),
                    approved_at: registry::now_ms(),
                    rejected_hash: None,
                })
                .await?;
        } else {
            self.registry.reject_pin(upstream, tool, hash, by).await?;
        }
        self.pins_changed(upstream).await;
        Ok(())
    }
}
