//! The downstream MCP endpoint that hosts point at.
//!
//! | module | holds |
//! |---|---|
//! | [`transport`] | Streamable HTTP handlers (POST/GET/DELETE `/mcp`) |
//! | [`session`] | sessions, their SSE streams and resumption buffers |
//! | [`session_id`] | encrypted self-describing session ids (any replica serves any session) |
//! | [`dispatch`] | host requests by method: aggregation and forwarding |
//! | [`hub`] | all sessions; routing of upstream-initiated messages to them |

pub mod dispatch;
pub mod hub;
pub mod session;
pub mod session_id;
pub mod transport;
