//! The 2025-11-25 tasks utility through the gateway: a task-augmented `tools/call` answered with
//! a task, then `tasks/get`, `tasks/result`, `tasks/cancel` and `tasks/list` (the dispatcher's
//! methods for them are in [`super::task_relay`]), and the upstream's
//! `notifications/tasks/status`.
//!
//! Hosts never see an upstream's task id. They get the gateway's: the upstream, its task id, the
//! principal that created it and the tool, sealed under the key the replicas share
//! ([`super::request_state::seal_with`]). Any replica can route a `tasks/*` request with it,
//! another principal cannot use it (an upstream's id is its only access control, and a shared
//! upstream serves everyone), and the tool is checked against the caller's roles again on every
//! use. What this replica saw created is indexed, for routing the upstream's status
//! notifications to the session that created the task and for filtering `tasks/list` to the
//! caller's own tasks.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::request_state::{open_with, seal_with};

const PREFIX: &str = "gwt1.";
/// The `_meta` key that ties a message or result to a task.
pub const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
/// Tasks a replica indexes; the oldest are forgotten first (their ids keep working).
const INDEXED: usize = 10_000;

/// What a gateway task id says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRef {
    #[serde(rename = "u")]
    pub upstream: String,
    /// The upstream's own task id.
    #[serde(rename = "t")]
    pub task: String,
    /// The principal that created it.
    #[serde(rename = "p")]
    pub owner: String,
    /// The tool it runs, as hosts name it.
    #[serde(rename = "n")]
    pub tool: String,
}

impl TaskRef {
    pub fn seal(&self, key: &[u8]) -> String {
        seal_with(PREFIX, key, self)
    }

    pub fn open(key: &[u8], id: &str) -> Option<Self> {
        open_with(PREFIX, key, id)
    }
}

/// A task this replica saw created.
#[derive(Debug, Clone)]
pub struct Indexed {
    /// The id hosts know it by.
    pub id: String,
    pub session: String,
    pub owner: String,
    /// The tool it runs, as hosts name it (what `tasks/list` checks the caller's roles for).
    pub tool: String,
}

/// An upstream and its own task id.
type Key = (String, String);

/// Tasks by (upstream, upstream task id), and the order they came in (the oldest go first).
#[derive(Default)]
struct Tasks {
    by_key: HashMap<Key, Indexed>,
    order: VecDeque<Key>,
}

/// Tasks this replica saw created.
#[derive(Default)]
pub struct TaskIndex {
    inner: Mutex<Tasks>,
}

impl TaskIndex {
    pub fn insert(&self, upstream: &str, task: &str, entry: Indexed) {
        let mut t = self.inner.lock().unwrap();
        let key = (upstream.to_string(), task.to_string());
        if t.by_key.insert(key.clone(), entry).is_none() {
            t.order.push_back(key);
        }
        while t.order.len() > INDEXED {
            if let Some(old) = t.order.pop_front() {
                t.by_key.remove(&old);
            }
        }
    }

    pub fn get(&self, upstream: &str, task: &str) -> Option<Indexed> {
        let t = self.inner.lock().unwrap();
        t.by_key
            .get(&(upstream.to_string(), task.to_string()))
            .cloned()
    }

    /// `owner`'s tasks: (upstream, upstream task id, what is known of it).
    pub fn owned(&self, owner: &str) -> Vec<(String, String, Indexed)> {
        let t = self.inner.lock().unwrap();
        t.by_key
            .iter()
            .filter(|(_, e)| e.owner == owner)
            .map(|((u, k), e)| (u.clone(), k.clone(), e.clone()))
            .collect()
    }
}

/// Replaces the upstream's task id in `value` (a task, a created-task result's `task`, or a
/// message's related-task `_meta`) with `id`, when it is `upstream_id`.
pub fn expose_id(value: &mut Value, upstream_id: &str, id: &str) {
    let swap = |v: Option<&mut Value>| {
        if let Some(v) = v.filter(|v| v.as_str() == Some(upstream_id)) {
            *v = Value::from(id);
        }
    };
    swap(value.pointer_mut("/taskId"));
    swap(value.pointer_mut("/task/taskId"));
    swap(value.pointer_mut(&format!(
        "/_meta/{}/taskId",
        RELATED_TASK.replace('/', "~1")
    )));
}

/// The upstream task id a message or result names in its related-task `_meta`.
pub fn related_id(value: &Value) -> Option<&str> {
    value
        .get("_meta")?
        .get(RELATED_TASK)?
        .get("taskId")?
        .as_str()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn r() -> TaskRef {
        TaskRef {
            upstream: "ev".into(),
            task: "t-1".into(),
            owner: "pat:ann".into(),
            tool: "ev__research".into(),
        }
    }

    #[test]
    fn a_task_id_opens_with_its_key_only_and_unaltered() {
        let id = r().seal(b"k");
        assert_eq!(TaskRef::open(b"k", &id), Some(r()));
        assert_eq!(TaskRef::open(b"other", &id), None);
        assert_eq!(TaskRef::open(b"k", &format!("{id}x")), None);
        assert_eq!(TaskRef::open(b"k", "t-1"), None);
    }

    #[test]
    fn ids_are_swapped_where_tasks_name_them() {
        let mut v = json!({"task": {"taskId": "t-1"}, "taskId": "t-1",
            "_meta": {RELATED_TASK: {"taskId": "t-1"}}, "other": "t-1"});
        expose_id(&mut v, "t-1", "gw");
        assert_eq!(
            v,
            json!({"task": {"taskId": "gw"}, "taskId": "gw",
                "_meta": {RELATED_TASK: {"taskId": "gw"}}, "other": "t-1"})
        );
        assert_eq!(related_id(&v), Some("gw"));
    }

    #[test]
    fn the_index_forgets_the_oldest_past_its_bound() {
        let index = TaskIndex::default();
        for i in 0..INDEXED + 5 {
            index.insert(
                "u",
                &i.to_string(),
                Indexed {
                    id: format!("g{i}"),
                    session: "s".into(),
                    owner: "o".into(),
                    tool: "t".into(),
                },
            );
        }
        assert!(index.get("u", "0").is_none());
        assert_eq!(
            index.get("u", &(INDEXED + 4).to_string()).unwrap().id,
            format!("g{}", INDEXED + 4)
        );
        assert_eq!(index.owned("o").len(), INDEXED);
    }
}
