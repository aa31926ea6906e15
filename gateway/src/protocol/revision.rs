//! The protocol revisions the gateway speaks, with hosts and with upstreams.

use std::fmt;

/// An MCP revision. The 2025 revisions (and 2024-11-05) are session-based: `initialize`, then
/// requests under `Mcp-Session-Id`. 2026-07-28 is stateless: every request carries its own
/// envelope (version, client capabilities) and there is no session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Revision {
    V2024_11_05,
    V2025_03_26,
    V2025_06_18,
    V2025_11_25,
    /// 2026-07-28.
    Stateless,
}

impl Revision {
    /// The session-based revisions the gateway serves hosts and speaks with upstreams, newest
    /// first (what `initialize` offers and accepts).
    pub const SESSIONFUL: [Revision; 4] = [
        Revision::V2025_11_25,
        Revision::V2025_06_18,
        Revision::V2025_03_26,
        Revision::V2024_11_05,
    ];

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "2024-11-05" => Self::V2024_11_05,
            "2025-03-26" => Self::V2025_03_26,
            "2025-06-18" => Self::V2025_06_18,
            "2025-11-25" => Self::V2025_11_25,
            "2026-07-28" => Self::Stateless,
            _ => return None,
        })
    }

    /// A session-based revision by its date.
    pub fn sessionful(s: &str) -> Option<Self> {
        Self::parse(s).filter(|r| !r.is_stateless())
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::V2024_11_05 => "2024-11-05",
            Self::V2025_03_26 => "2025-03-26",
            Self::V2025_06_18 => "2025-06-18",
            Self::V2025_11_25 => "2025-11-25",
            Self::Stateless => "2026-07-28",
        }
    }

    pub fn is_stateless(self) -> bool {
        self == Self::Stateless
    }

    /// Streams of this revision begin with a priming event that makes them resumable
    /// (2025-11-25; 2026-07-28 has no resumption).
    pub fn primes_streams(self) -> bool {
        self == Self::V2025_11_25
    }

    /// The session-based revisions, for messages that list them.
    pub fn sessionful_list() -> String {
        Self::SESSIONFUL.map(Self::as_str).join(", ")
    }
}

impl fmt::Display for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_round_trip_and_order_by_date() {
        for r in Revision::SESSIONFUL
            .into_iter()
            .chain([Revision::Stateless])
        {
            assert_eq!(Revision::parse(r.as_str()), Some(r));
        }
        assert!(Revision::SESSIONFUL.windows(2).all(|w| w[0] > w[1]));
        assert_eq!(Revision::sessionful("2026-07-28"), None);
        assert_eq!(Revision::parse("2025-01-01"), None);
    }
}
