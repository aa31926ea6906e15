//! The names operators give things: upstreams, roles, virtual servers. One rule, with what each
//! kind adds: they appear in URLs, tool-name prefixes and log lines, so they are short ASCII.

use std::fmt;

/// What a name names, and so its limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameKind {
    /// A prefix of every exposed tool name: short, and without the `__` separator.
    Upstream,
    /// Roles may carry dots (`team.read`).
    Role,
    /// Part of the URL `/mcp/v/{name}`.
    VirtualServer,
}

impl NameKind {
    fn max_len(self) -> usize {
        match self {
            NameKind::Upstream => 32,
            NameKind::Role | NameKind::VirtualServer => 64,
        }
    }

    fn allows(self, b: u8) -> bool {
        b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || (self == NameKind::Role && b == b'.')
    }

    fn what(self) -> &'static str {
        match self {
            NameKind::Upstream => "upstream name",
            NameKind::Role => "role name",
            NameKind::VirtualServer => "virtual server name",
        }
    }

    fn alphabet(self) -> &'static str {
        match self {
            NameKind::Role => "[A-Za-z0-9_.-]",
            _ => "[A-Za-z0-9_-]",
        }
    }
}

/// A checked name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Name(String);

impl Name {
    pub fn parse(kind: NameKind, name: &str) -> Result<Self, String> {
        let ok = !name.is_empty()
            && name.len() <= kind.max_len()
            && name.bytes().all(|b| kind.allows(b))
            && !(kind == NameKind::Upstream && name.contains(registry::view::SEPARATOR));
        if ok {
            return Ok(Self(name.to_string()));
        }
        let extra = if kind == NameKind::Upstream {
            " without \"__\""
        } else {
            ""
        };
        Err(format!(
            "{} {name:?} must be 1-{} characters of {}{extra}",
            kind.what(),
            kind.max_len(),
            kind.alphabet()
        ))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_keeps_its_own_limits() {
        assert!(Name::parse(NameKind::Upstream, "fs-1_a").is_ok());
        assert!(Name::parse(NameKind::Upstream, "a__b").is_err());
        assert!(Name::parse(NameKind::Upstream, &"a".repeat(33)).is_err());
        assert!(Name::parse(NameKind::VirtualServer, &"a".repeat(64)).is_ok());
        assert!(Name::parse(NameKind::Role, "team.read").is_ok());
        assert!(Name::parse(NameKind::VirtualServer, "team.read").is_err());
        for kind in [NameKind::Upstream, NameKind::Role, NameKind::VirtualServer] {
            assert!(Name::parse(kind, "").is_err());
            assert!(Name::parse(kind, "a b").is_err());
            assert!(Name::parse(kind, "é").is_err());
        }
        assert_eq!(
            Name::parse(NameKind::Upstream, "a b").unwrap_err(),
            "upstream name \"a b\" must be 1-32 characters of [A-Za-z0-9_-] without \"__\""
        );
    }
}
