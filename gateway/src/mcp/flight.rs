//! A 2026-07-28 call parked between rounds: the upstream asked the host something, the answer
//! comes with the host's retry (see `modern`). Kept by the hub until the retry or its expiry.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::session::{Ask, Session};
use crate::protocol::{jsonrpc, McpError, Method};

/// A call in flight for a 2026-07-28 host, parked between rounds while the host answers what
/// the upstream asked.
pub struct Flight {
    pub session: Arc<Session>,
    /// The host's id of the first round (upstream messages are routed under it).
    pub(super) downstream_id: Value,
    pub(super) method: Method,
    pub(super) result: oneshot::Receiver<Result<crate::protocol::Answer, McpError>>,
    pub(super) asks: mpsc::UnboundedReceiver<Ask>,
    /// Questions sent to the host and not yet answered, by their `inputRequests` key.
    pub(super) pending: BTreeMap<String, Ask>,
}

impl Flight {
    /// Fails the upstream's open questions (the host never answered): its call can end.
    pub fn abandon(self) {
        for ask in self.pending.into_values() {
            ask.conn.send_raw(jsonrpc::error(
                ask.upstream_id,
                jsonrpc::INTERNAL_ERROR,
                "the client did not answer in time",
            ));
        }
    }
}
