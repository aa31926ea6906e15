//! What is wrong with a configuration: which key (its path in the file, `server.listen`,
//! `upstreams[fs].url`, or the environment variable that overrides it) and why. `check-config`
//! and the start-up print it as `key: why`.

/// One key's problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {message}")]
pub struct KeyError {
    /// The key's path in the file, or the variable's name.
    pub key: String,
    pub message: String,
}

impl KeyError {
    pub fn new(key: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            key: key.into(),
            message: message.into(),
        }
    }

    /// A problem of `key` given as a secret: it must be a reference.
    pub fn clear_text(key: impl Into<String>) -> Self {
        Self::new(
            key,
            "must be a reference ({ env = \"VAR\" } or { file = \"/path\" }), not clear text",
        )
    }
}

/// Zero would be a panic (an interval of 0), a server that accepts nothing or a limit that
/// refuses everything: each is refused with the key's name.
pub(super) fn positive(key: &str, v: Option<u64>) -> Result<(), KeyError> {
    match v {
        Some(0) => Err(KeyError::new(key, "must be > 0")),
        _ => Ok(()),
    }
}
