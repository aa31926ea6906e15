//! The per-session side of the upstreams: a `per_session` upstream's connection for each
//! session, opened on the session's first call (one opening at a time), with the session's
//! token exchanger, and closed when the session ends.

use std::sync::Arc;

use serde_json::Value;

use super::{Entry, Upstreams};
use crate::config::{Secret, Sharing};
use crate::upstream::connection::Connection;
use crate::upstream::credentials::vault::user_holder;
use crate::upstream::oauth::TokenSource;
use crate::upstream::UpstreamError;

/// Who a call is for.
#[derive(Clone, Copy)]
pub struct Caller<'a> {
    /// The principal's key (see `auth::Principal::key`).
    pub key: &'a str,
    /// An OAuth principal's access token, for upstreams that exchange it.
    pub bearer: Option<&'a Secret>,
}

impl Upstreams {
    /// The connection to use for a call from `session`: the shared one, or the session's own
    /// (opened on first use) for `per_session` upstreams.
    /// `caller`: who calls (principal key), and their OAuth access token for upstreams that
    /// exchange it.
    pub async fn connection_for(
        &self,
        upstream: &str,
        session: &str,
        host_caps: Option<&Value>,
        caller: Caller<'_>,
    ) -> Result<Arc<Connection>, UpstreamError> {
        let subject = caller.bearer;
        let entry = self
            .entries
            .lock()
            .unwrap()
            .get(upstream)
            .cloned()
            .ok_or_else(|| UpstreamError::Unknown(upstream.to_string()))?;
        let shared = entry.shared.lock().unwrap().clone();
        let shared = shared
            .filter(|c| !c.is_closed())
            .ok_or_else(|| UpstreamError::Unavailable(upstream.to_string()))?;
        if entry.spec.sharing == Sharing::Shared {
            return Ok(shared);
        }
        let open = || {
            let c = entry.sessions.lock().unwrap().get(session).cloned()?;
            if c.is_closed() {
                return None;
            }
            if let (Some(x), Some(s)) = (entry.exchangers.lock().unwrap().get(session), subject) {
                x.set_subject(s);
            }
            Some(c)
        };
        if let Some(c) = open() {
            return Ok(c);
        }
        let gate = entry
            .opening
            .lock()
            .unwrap()
            .entry(session.to_string())
            .or_default()
            .clone();
        let _opening = gate.lock().await;
        // Another call of this session may have opened it while this one waited.
        if let Some(c) = open() {
            return Ok(c);
        }
        // Boxed: opening is rare next to calls, and its future (a whole connect and handshake)
        // would otherwise be part of every call's state, moved on each poll of a new task.
        let conn = Box::pin(self.open_session_connection(&entry, session, host_caps, caller)).await;
        if conn.is_ok() {
            // Later calls find the connection; after a failure the gate stays, so that the calls
            // waiting on it retry one at a time (end_session clears it).
            entry.opening.lock().unwrap().remove(session);
        }
        conn
    }

    /// Opens `session`'s own connection to `entry` (its caller holds the session's gate).
    async fn open_session_connection(
        &self,
        entry: &Arc<Entry>,
        session: &str,
        host_caps: Option<&Value>,
        caller: Caller<'_>,
    ) -> Result<Arc<Connection>, UpstreamError> {
        let exchanger = match entry.spec.transport.endpoint() {
            // The caller's own tokens at the upstream; none yet: they are asked to connect.
            Some(e) if e.user_oauth.is_some() => Some(TokenSource::of_holder(
                self.vault.clone(),
                &entry.spec,
                &user_holder(caller.key),
            )),
            _ => self.exchanger(&entry.spec, caller.bearer)?,
        };
        if let Some(x) = &exchanger {
            entry
                .exchangers
                .lock()
                .unwrap()
                .insert(session.to_string(), x.clone());
        }
        let conn = self
            .connect(
                &entry.spec,
                Some(session.to_string()),
                host_caps.cloned(),
                exchanger,
            )
            .await?;
        let mut sessions = entry.sessions.lock().unwrap();
        if let Some(old) = sessions.insert(session.to_string(), conn.clone()) {
            old.shutdown();
        }
        Ok(conn)
    }

    /// Connections a session has opened (per-session upstreams), for forwarding notifications.
    pub fn session_connections(&self, session: &str) -> Vec<Arc<Connection>> {
        let entries = self.entries.lock().unwrap();
        entries
            .values()
            .filter_map(|e| e.sessions.lock().unwrap().get(session).cloned())
            .collect()
    }

    /// Closes a session's per-session connections (session ended or reaped).
    pub fn end_session(&self, session: &str) {
        let entries: Vec<Arc<Entry>> = self.entries.lock().unwrap().values().cloned().collect();
        for e in entries {
            e.exchangers.lock().unwrap().remove(session);
            e.opening.lock().unwrap().remove(session);
            if let Some(c) = e.sessions.lock().unwrap().remove(session) {
                c.shutdown();
            }
        }
    }

    /// Closes a session's own connection to one upstream (its credentials changed): its next
    /// call opens another.
    pub fn drop_session_connection(&self, upstream: &str, session: &str) {
        let entry = self.entries.lock().unwrap().get(upstream).cloned();
        if let Some(e) = entry {
            e.exchangers.lock().unwrap().remove(session);
            if let Some(c) = e.sessions.lock().unwrap().remove(session) {
                c.shutdown();
            }
        }
    }
}
