//! Connect links: what one carries (the upstream, whose connection it makes, who asked, the URL
//! elicitation it was sent in), sealed with `user_credentials.key` for 10 minutes, and opened
//! again when the browser follows it.

use registry::now_ms;
use serde::{Deserialize, Serialize};

use super::vault::{Vault, CONNECT_PATH, LINK_LIFETIME_MS, NO_KEY};
use crate::upstream::UpstreamError;

/// A connect link's content.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct Ticket {
    pub(super) upstream: String,
    pub(super) holder: String,
    pub(super) by: String,
    expires_at: i64,
    /// The URL elicitation the link was sent in, told complete when the user is done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) elicitation: Option<String>,
}

impl Vault {
    /// The link that connects `holder` (for whom `by` asks) to `upstream`; `elicitation`: the
    /// URL elicitation it is sent in.
    pub fn link(
        &self,
        upstream: &str,
        holder: &str,
        by: &str,
        elicitation: Option<&str>,
    ) -> Result<String, UpstreamError> {
        let ticket = Ticket {
            upstream: upstream.into(),
            holder: holder.into(),
            by: by.into(),
            expires_at: now_ms() + LINK_LIFETIME_MS,
            elicitation: elicitation.map(str::to_string),
        };
        let sealed = self
            .ring
            .seal("connect", &serde_json::to_value(ticket).expect("JSON"))
            .ok_or_else(|| UpstreamError::Config(NO_KEY.into()))?;
        Ok(format!(
            "{}{CONNECT_PATH}?ticket={sealed}",
            self.public_url()
        ))
    }

    /// A connect link's ticket, opened: this gateway's and unexpired.
    pub(super) fn ticket(&self, sealed: &str) -> Result<Ticket, String> {
        let (v, _) = self
            .ring
            .open("connect", sealed)
            .ok_or("this link is not one of this gateway's")?;
        let ticket: Ticket = serde_json::from_value(v).map_err(|e| e.to_string())?;
        if ticket.expires_at < now_ms() {
            return Err("this link has expired: call the tool again for a new one".into());
        }
        Ok(ticket)
    }

    /// What a connect link is for: its upstream, and the principal who asked for it (the one
    /// whose connection it makes, or the admin who connects the catalog's account).
    pub fn link_of(&self, sealed: &str) -> Result<(String, String), String> {
        self.ticket(sealed).map(|t| (t.upstream, t.by))
    }
}
