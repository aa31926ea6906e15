//! What one replica tells the others it changed (Postgres LISTEN/NOTIFY), and how that
//! travels as notification text.

/// What another replica changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Upstream(String),
    Role(String),
    /// A personal access token, by id (revoked or created).
    Token(String),
    VirtualServer(String),
    /// An authorization server grant, by id (revoked).
    Grant(String),
    /// The authorization server's signing keys (a key was added; the others retired).
    SigningKey(String),
    /// A user's (or the catalog account's) connection to an upstream: (upstream, holder).
    Connection(String, String),
    /// A URL elicitation a holder completed in the browser, on the replica the browser came
    /// back to: (holder, elicitation id). Nothing is stored; the holder's sessions are told.
    ElicitationComplete(String, String),
    /// An upstream's tool pins (a definition approved or rejected).
    Pins(String),
    /// A session its host ended, by the hash of its id: a replica holding it drops it.
    SessionEnded(String),
    /// The listener lost its connection: what was announced meanwhile is not known, so caches
    /// of announced things should be dropped or re-read.
    Lost,
}

impl Change {
    /// The notification's text. Upstream names have no ':' (validated), so the prefixes of the
    /// others are unambiguous.
    pub(crate) fn to_wire(&self) -> String {
        match self {
            Change::Upstream(n) => n.clone(),
            Change::Role(n) => format!("role:{n}"),
            Change::Token(id) => format!("token:{id}"),
            Change::VirtualServer(n) => format!("virtual:{n}"),
            Change::Grant(id) => format!("grant:{id}"),
            Change::SigningKey(kid) => format!("key:{kid}"),
            // Upstream names have no '/' (validated); holders may have anything after it.
            Change::Connection(u, h) => format!("connection:{u}/{h}"),
            // Elicitation ids are the gateway's UUIDs: no '/'.
            Change::ElicitationComplete(h, id) => format!("elicitation:{id}/{h}"),
            Change::Pins(u) => format!("pins:{u}"),
            Change::SessionEnded(h) => format!("session:{h}"),
            Change::Lost => "lost:notifications".into(),
        }
    }

    pub(crate) fn from_wire(text: &str) -> Option<Self> {
        Some(match text.split_once(':') {
            None => Change::Upstream(text.to_string()),
            Some(("role", n)) => Change::Role(n.to_string()),
            Some(("token", id)) => Change::Token(id.to_string()),
            Some(("virtual", n)) => Change::VirtualServer(n.to_string()),
            Some(("grant", id)) => Change::Grant(id.to_string()),
            Some(("key", kid)) => Change::SigningKey(kid.to_string()),
            Some(("pins", u)) => Change::Pins(u.to_string()),
            Some(("session", h)) => Change::SessionEnded(h.to_string()),
            Some(("connection", c)) => {
                let (u, h) = c.split_once('/')?;
                Change::Connection(u.to_string(), h.to_string())
            }
            Some(("elicitation", c)) => {
                let (id, h) = c.split_once('/')?;
                Change::ElicitationComplete(h.to_string(), id.to_string())
            }
            Some(_) => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Change;

    #[test]
    fn changes_cross_the_wire_unchanged() {
        for c in [
            Change::Upstream("fs".into()),
            Change::Role("dev".into()),
            Change::Token("t1".into()),
            Change::VirtualServer("ops".into()),
            Change::Grant("g1".into()),
            Change::SigningKey("k1".into()),
            Change::Connection("gh".into(), "user:oauth:https://as#a/b".into()),
            Change::ElicitationComplete("user:oauth:https://as#a/b".into(), "e-1".into()),
            Change::Pins("gh".into()),
            Change::SessionEnded("5e55".into()),
        ] {
            assert_eq!(Change::from_wire(&c.to_wire()), Some(c));
        }
        assert_eq!(Change::from_wire("future:thing"), None);
    }
}
