//! The catalog side of the upstreams: each upstream's lists read (every page), kept with their
//! content hashes, and the exposed view rebuilt and published when any of them changes.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use registry::{CatalogEntry, CatalogView, EntryKind};
use serde_json::{json, Value};

use super::pins::Pinned;
use super::{Definition, Entry, Upstreams};
use crate::config::curation::Curated;
use crate::protocol::{McpError, Method};
use crate::upstream::connection::Connection;

/// Most pages read from one list before the gateway stops (a server whose cursor never ends).
const MAX_PAGES: usize = 200;

impl Upstreams {
    /// Re-reads every connected upstream's lists: a `list_changed` can be lost (sent before a
    /// stream was open, or while it was down), so the periodic reconcile compares catalogs too.
    pub fn resync_all(self: &Arc<Self>) {
        let names: Vec<String> = self.entries.lock().unwrap().keys().cloned().collect();
        for n in names {
            self.resync(&n);
        }
    }

    /// Re-reads an upstream's lists (after its `list_changed`).
    pub fn resync(self: &Arc<Self>, upstream: &str) {
        let Some(entry) = self.entries.lock().unwrap().get(upstream).cloned() else {
            return;
        };
        let Some(conn) = entry.shared.lock().unwrap().clone() else {
            return;
        };
        let me = self.clone();
        tokio::spawn(async move { me.sync(&entry, &conn).await });
    }

    pub(super) async fn sync(&self, entry: &Arc<Entry>, conn: &Arc<Connection>) {
        let _one_at_a_time = entry.syncing.lock().await;
        // A large catalog is read and parsed at once: a burst of allocations.
        let _burst = crate::memory::Burst::begin();
        let caps = conn.capabilities();
        let timeout = self.timeout_of(&entry.spec.name);
        let mut lists = BTreeMap::new();
        for list in Method::LISTS {
            let (kind, field) = list.list_field().expect("a list method");
            let cap = list.list_capability().expect("a list method");
            let method = list.as_str();
            if caps.get(cap).is_none() {
                lists.insert(kind, Vec::new());
                continue;
            }
            match list_all(conn, method, field, timeout).await {
                Ok(items) => {
                    lists.insert(kind, items);
                }
                Err(e) => {
                    if e.contains(NEEDS_CONNECT_TEXT) {
                        entry
                            .catalog_stale
                            .store(true, std::sync::atomic::Ordering::Release);
                    }
                    tracing::warn!(upstream = %entry.spec.name, method, error = %e, "listing failed");
                    // Keep what was known of this kind rather than dropping it on a hiccup.
                    let known = entry
                        .definitions
                        .lock()
                        .unwrap()
                        .get(&kind)
                        .map(|d| d.iter().map(|d| d.json.to_value()).collect());
                    lists.insert(kind, known.unwrap_or_default());
                }
            }
        }
        for (kind, items) in &lists {
            // The registry is a record, not the serving path: a database outage must not stop
            // an upstream's tools from being served.
            match self
                .registry
                .sync_catalog(&entry.spec.name, *kind, items)
                .await
            {
                Ok(report) if report.is_change() => {
                    tracing::info!(
                        upstream = %entry.spec.name,
                        kind = kind.as_str(),
                        added = report.added,
                        changed = report.changed,
                        removed = report.removed,
                        unchanged = report.unchanged,
                        "catalog synced"
                    )
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(upstream = %entry.spec.name, error = %e, "catalog not persisted")
                }
            }
        }
        entry.health.lock().unwrap().tools = lists.get(&EntryKind::Tool).map_or(0, Vec::len);
        if conn.is_closed() {
            return;
        }
        let pinning = !entry.spec.pinning.is_off();
        let lists = lists
            .into_iter()
            .map(|(kind, items)| {
                let defs = items
                    .into_iter()
                    .map(|json| {
                        let pin = (pinning && kind == EntryKind::Tool)
                            .then(|| crate::upstream::pinning::pin_hash(&json));
                        let json = registry::Definition::from(json);
                        Definition {
                            hash: json.content_hash(),
                            key: json.str_field(kind.key_field()),
                            pin,
                            json,
                        }
                    })
                    .collect();
                (kind, defs)
            })
            .collect();
        *entry.definitions.lock().unwrap() = lists;
        self.refresh_pins(entry).await;
        self.rebuild_view();
    }

    pub(super) fn rebuild_view(&self) {
        let _one_at_a_time = self.rebuilding.lock().unwrap();
        let entries: Vec<Arc<Entry>> = self.entries.lock().unwrap().values().cloned().collect();
        let mut all = Vec::new();
        let mut offline = Vec::new();
        let mut prefixes = HashMap::new();
        for e in &entries {
            prefixes.insert(e.spec.name.clone(), e.spec.prefix);
            let serving = e
                .shared
                .lock()
                .unwrap()
                .as_ref()
                .is_some_and(|c| !c.is_closed());
            let into = if serving { &mut all } else { &mut offline };
            let pins = e.pins.lock().unwrap();
            let mut held = std::collections::HashSet::new();
            let mut pending = 0;
            for (kind, defs) in e.definitions.lock().unwrap().iter() {
                // A rename onto a tool the upstream listed after the curation was accepted is
                // not applied: that tool would become unreachable.
                let collide = if *kind == EntryKind::Tool {
                    let keys: Vec<&str> = defs.iter().filter_map(|d| d.key.as_deref()).collect();
                    let bad = e.curation.colliding_renames(&keys);
                    if !bad.is_empty() {
                        tracing::warn!(upstream = %e.spec.name, tools = ?bad, "renames onto another tool's name are not applied");
                    }
                    bad
                } else {
                    Vec::new()
                };
                for d in defs {
                    let Some(key) = &d.key else {
                        continue;
                    };
                    // Pinned, then curated, before anything sees the catalog: RBAC, routing,
                    // lists. An untouched definition is shared, not copied.
                    let (definition, content_hash) = match kind {
                        EntryKind::Tool => {
                            let (pinned, standing) = Self::pinned(e, pins.as_ref(), key, d);
                            pending += standing.is_some_and(|s| s.pending()) as usize;
                            let replaced;
                            let (listed, hash) = match pinned {
                                Pinned::Listed => (&d.json, None),
                                Pinned::Hidden => continue,
                                Pinned::Replaced {
                                    definition,
                                    held: h,
                                } => {
                                    if h {
                                        held.insert(key.clone());
                                    }
                                    replaced = definition;
                                    (&replaced, Some(replaced.content_hash()))
                                }
                            };
                            match e
                                .curation
                                .apply(key, listed, !collide.contains(&key.as_str()))
                            {
                                Curated::Hidden => continue,
                                Curated::AsIs => {
                                    let hash = hash.unwrap_or_else(|| d.hash.clone());
                                    (listed.clone(), hash)
                                }
                                Curated::Changed(def) => {
                                    let def = registry::Definition::from(def);
                                    let hash = def.content_hash();
                                    (def, hash)
                                }
                            }
                        }
                        _ => (d.json.clone(), d.hash.clone()),
                    };
                    into.push(CatalogEntry {
                        upstream: e.spec.name.clone(),
                        kind: *kind,
                        key: key.clone(),
                        content_hash,
                        definition,
                    });
                }
            }
            *e.held.lock().unwrap() = held;
            e.health.lock().unwrap().tools_pending_approval = pending;
        }
        let prefix = |u: &str| prefixes.get(u).copied().unwrap_or_default();
        let view = Arc::new(CatalogView::build(all, prefix));
        *self.offline.write().unwrap() = Arc::new(CatalogView::build(offline, prefix));
        let old = std::mem::replace(&mut *self.view.write().unwrap(), view.clone());
        for kind in EntryKind::ALL {
            let sig = |v: &CatalogView| -> Vec<(String, String)> {
                v.list(kind)
                    .iter()
                    .map(|e| (e.exposed.clone(), e.entry.content_hash.clone()))
                    .collect()
            };
            if sig(&old) != sig(&view) {
                let _ = self.changes.send(kind);
            }
        }
    }
}

/// What a listing's error says when the catalog account must connect again.
const NEEDS_CONNECT_TEXT: &str = "the catalog account must connect again";

/// Reads every page of a list.
async fn list_all(
    conn: &Connection,
    method: &str,
    field: &str,
    timeout: Duration,
) -> Result<Vec<Value>, String> {
    let mut out = Vec::new();
    let mut cursor: Option<Value> = None;
    for _ in 0..MAX_PAGES {
        let params = cursor.take().map(|c| json!({ "cursor": c }));
        let mut resp = conn
            .request(method, params, None, timeout)
            .await
            .map_err(|e| e.to_string())?;
        if let Some(e) = McpError::from_response(&resp) {
            // The designated account's token was refused for good, or lacks scope.
            if e.data
                .as_ref()
                .and_then(|d| d.get(crate::upstream::http::NEEDS_CONNECT))
                .is_some()
            {
                return Err(format!("{e} ({NEEDS_CONNECT_TEXT})"));
            }
            return Err(e.to_string());
        }
        // Moved out of the answer, not copied: two deep copies of a 10k-tool listing were most
        // of the sync's peak (166–170 MB against 88–92 MB moved; docs/benchmarks.md, "One glibc
        // arena; a listing moved, not copied").
        let mut result = resp
            .get_mut("result")
            .map(Value::take)
            .unwrap_or(Value::Null);
        if let Some(Value::Array(items)) = result.get_mut(field).map(Value::take) {
            out.extend(items);
        }
        match result.get_mut("nextCursor").map(Value::take) {
            Some(c) if !c.is_null() => cursor = Some(c),
            _ => return Ok(out),
        }
    }
    Ok(out)
}
