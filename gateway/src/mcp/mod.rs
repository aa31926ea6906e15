//! The downstream MCP endpoint that hosts point at.
//!
//! | module | holds |
//! |---|---|
//! | [`transport`] | Streamable HTTP handlers (POST/GET/DELETE `/mcp`) |
//! | [`session`] | sessions, their SSE streams and resumption buffers |
//! | [`session_id`] | encrypted self-describing session ids (any replica serves any session) |
//! | [`dispatch`] | host requests by method: aggregation and forwarding |
//! | `forward` | the upstream half of a call: connection, progress, replay, rounds of questions |
//! | [`hub`] | all sessions; routing of upstream-initiated messages to them |
//! | [`flight`] | a 2026-07-28 call parked while the host answers what the upstream asked |
//! | [`listener`] | a 2026-07-28 `subscriptions/listen` stream |
//! | [`outgoing`] | a forwarded request's params: the host's with the gateway's changes, written once |
//! | [`modern`] | the 2026-07-28 revision: stateless requests, discover, listen, the input bridge |
//! | [`reply`] | answers as JSON or SSE, the gateway's self-description, request counts |
//! | [`request_state`] | the gateway's signed `requestState` |
//! | `task_relay` | the dispatcher's `tasks/*` methods: to the upstream that holds the task |
//! | [`tasks`] | the 2025-11-25 tasks utility: the gateway's task ids, the index of tasks seen |
//! | [`uri`] | resource URIs normalised before they are checked, forwarded and audited |

pub mod dispatch;
pub mod flight;
mod forward;
pub mod hub;
pub mod listener;
pub mod modern;
pub mod outgoing;
pub mod reply;
pub mod request_state;
pub mod session;
pub mod session_id;
mod task_relay;
pub mod tasks;
pub mod transport;
pub mod uri;
