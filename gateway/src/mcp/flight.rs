//! A 2026-07-28 call parked between rounds: the upstream asked the host something, the answer
//! comes with the host's retry (see `modern`). Kept by the hub until the retry or its expiry.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tracing::Instrument;

use super::session::{Ask, Session};
use crate::protocol::{jsonrpc, Answer, McpError, Method};

type Outcome = Result<Answer, McpError>;

/// The call's work: polled by the task that answers the host while it can be (no task, no
/// channel and no wake-up of another task per call), moved to a task of its own when the call
/// is parked and nobody polls it until the host's retry.
pub(super) enum Running {
    InPlace(Pin<Box<dyn Future<Output = Outcome> + Send>>),
    Detached(oneshot::Receiver<Outcome>),
}

impl Running {
    pub(super) fn new(work: impl Future<Output = Outcome> + Send + 'static) -> Self {
        Self::InPlace(Box::pin(work))
    }

    /// Goes on in a task of its own (see [`Running`]).
    pub(super) fn detach(&mut self) {
        let (tx, rx) = oneshot::channel();
        match std::mem::replace(self, Self::Detached(rx)) {
            Self::InPlace(work) => {
                tokio::spawn(
                    async move {
                        let _ = tx.send(work.await);
                    }
                    .in_current_span(),
                );
            }
            detached => *self = detached,
        }
    }
}

impl Future for Running {
    type Output = Outcome;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Outcome> {
        match &mut *self {
            Self::InPlace(work) => work.as_mut().poll(cx),
            Self::Detached(rx) => Pin::new(rx).poll(cx).map(|r| {
                r.unwrap_or_else(|_| Err(McpError::internal("the call ended without a result")))
            }),
        }
    }
}

/// A call in flight for a 2026-07-28 host, parked between rounds while the host answers what
/// the upstream asked.
pub struct Flight {
    pub session: Arc<Session>,
    /// The host's id of the first round (upstream messages are routed under it).
    pub(super) downstream_id: Value,
    pub(super) method: Method,
    pub(super) result: Running,
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
