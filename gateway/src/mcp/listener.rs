//! A 2026-07-28 `subscriptions/listen` stream: what it asked to hear, and where it goes.

use serde_json::Value;
use tokio::sync::mpsc;

use crate::protocol::envelope::SUBSCRIPTION_ID;
use crate::protocol::jsonrpc;

/// What a `subscriptions/listen` stream asked for and the gateway honours.
pub struct Listener {
    pub id: Value,
    pub tools: bool,
    pub prompts: bool,
    pub resources: bool,
    /// Exposed URIs whose `resources/updated` the host wants.
    pub uris: Vec<String>,
    pub tx: mpsc::UnboundedSender<Value>,
}

impl Listener {
    /// Sends a notification tagged with the subscription; false once the host has gone.
    pub fn send(&self, method: &str, mut params: Value) -> bool {
        params["_meta"][SUBSCRIPTION_ID] = self.id.clone();
        self.tx
            .send(jsonrpc::notification(method, Some(params)))
            .is_ok()
    }
}
