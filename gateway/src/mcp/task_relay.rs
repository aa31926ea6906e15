//! The dispatcher's tasks methods (see [`super::tasks`]): what hosts send about a task goes to
//! the upstream that holds it, under the upstream's id, and comes back under the gateway's.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use registry::EntryKind;
use serde_json::{json, Map, Value};

use super::dispatch::{Dispatcher, Routed};
use super::outgoing::Outgoing;
use super::session::Session;
use super::tasks::{expose_id, Indexed, TaskRef};
use crate::protocol::{Answer, McpError, Member, Method};
use crate::routing::lens::Lens;

impl Dispatcher {
    /// A task-augmented call's answer: the task the upstream created, under the gateway's id
    /// for it (see [`super::tasks`]). An upstream that ran the call at once answered a result.
    pub(super) fn expose_created_task(
        &self,
        session: &Session,
        upstream: &str,
        tool: &str,
        result: Answer,
    ) -> Result<Answer, McpError> {
        let mut v = result.into_value()?;
        let Some(task) = v
            .pointer("/task/taskId")
            .and_then(Value::as_str)
            .map(str::to_string)
        else {
            return Ok(v.into());
        };
        let owner = session.principal().key().to_string();
        let id = TaskRef {
            upstream: upstream.to_string(),
            task: task.clone(),
            owner: owner.clone(),
            tool: tool.to_string(),
        }
        .seal(self.hub.codec.state_key());
        self.hub.tasks.insert(
            upstream,
            &task,
            Indexed {
                id: id.clone(),
                session: session.id.clone(),
                owner,
                tool: tool.to_string(),
            },
        );
        expose_id(&mut v, &task, &id);
        Ok(v.into())
    }

    /// `tasks/get`, `tasks/result` and `tasks/cancel`: to the upstream that holds the task, for
    /// the principal that created it while its roles still grant the tool.
    pub(super) async fn task(
        &self,
        session: &Arc<Session>,
        id: &Value,
        method: &Method,
        params: Option<&Map<String, Value>>,
        lens: &Lens,
        routed: &mut Routed,
    ) -> Result<Answer, McpError> {
        let gid = params
            .and_then(|p| p.member("taskId"))
            .and_then(Value::as_str)
            .ok_or_else(|| McpError::invalid_params("taskId is required"))?;
        let unknown_task = || {
            McpError::invalid_params(format!("unknown task {gid:?}"))
                .with_data(json!({ "taskId": gid }))
        };
        let r = TaskRef::open(self.hub.codec.state_key(), gid)
            .filter(|r| r.owner == session.principal().key())
            .ok_or_else(unknown_task)?;
        routed.upstream = Some(r.upstream.clone());
        if !lens.allows(EntryKind::Tool, &r.upstream, &r.tool) {
            routed.denied = true;
            return Err(unknown_task());
        }
        let outgoing = Outgoing {
            host: params,
            replace: ("taskId", Value::from(r.task.as_str())),
            fixed: Map::new(),
        };
        let result = self
            .forward(session, id, &r.upstream, method, outgoing)
            .await?;
        let mut v = result.into_value()?;
        expose_id(&mut v, &r.task, gid);
        Ok(v.into())
    }

    /// `tasks/list`: the caller's tasks this replica saw created, as their upstreams list them
    /// (a shared upstream lists everyone's).
    pub(super) async fn task_list(
        &self,
        session: &Arc<Session>,
        id: &Value,
        lens: &Lens,
    ) -> Result<Answer, McpError> {
        let mut mine: BTreeMap<String, HashMap<String, String>> = BTreeMap::new();
        for (upstream, task, known) in self.hub.tasks.owned(session.principal().key()) {
            if lens.allows(EntryKind::Tool, &upstream, &known.tool) {
                mine.entry(upstream).or_default().insert(task, known.id);
            }
        }
        let mut tasks = Vec::new();
        for (upstream, ids) in mine {
            // Every member is the host's or the gateway's; `tasks/list` takes none but a cursor.
            let outgoing = Outgoing {
                host: None,
                replace: ("_meta", json!({})),
                fixed: Map::new(),
            };
            let listed = match self
                .forward(session, id, &upstream, &Method::TasksList, outgoing)
                .await
            {
                Ok(a) => a.into_value()?,
                // One upstream down does not hide the others' tasks.
                Err(e) => {
                    tracing::debug!(upstream, error = %e.message, "tasks/list failed");
                    continue;
                }
            };
            for mut t in listed
                .get("tasks")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
            {
                let Some(task) = t.get("taskId").and_then(Value::as_str).map(str::to_string) else {
                    continue;
                };
                if let Some(gid) = ids.get(&task) {
                    expose_id(&mut t, &task, gid);
                    tasks.push(t);
                }
            }
        }
        Ok(json!({ "tasks": tasks }).into())
    }
}
