//! Values that must not leak: [`Secret`] never prints, [`ValueSource`] lets a setting name an
//! environment variable or a file instead of holding a credential, and URLs shown anywhere
//! lose their user information.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// A string that never prints (logs, debug output, API responses).
#[derive(Clone, Deserialize, Serialize, PartialEq)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    pub fn new(s: impl Into<String>) -> Self {
        Self(s.into())
    }
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// A value that is either given literally (only for what is not secret) or referenced: read from
/// an environment variable or a file when the upstream is started.
#[derive(
    Debug, Clone, PartialEq, Deserialize, Serialize, utoipa::ToSchema, schemars::JsonSchema,
)]
#[serde(untagged)]
pub enum ValueSource {
    Literal(String),
    Env { env: String },
    File { file: String },
}

impl ValueSource {
    pub fn resolve(&self, env: &HashMap<String, String>) -> Result<Secret, String> {
        match self {
            ValueSource::Literal(s) => Ok(Secret::new(s.clone())),
            ValueSource::Env { env: var } => env
                .get(var)
                .map(|v| Secret::new(v.clone()))
                .ok_or_else(|| format!("environment variable {var} is not set")),
            ValueSource::File { file } => std::fs::read_to_string(file)
                .map(|s| Secret::new(s.trim_end().to_string()))
                .map_err(|e| format!("cannot read secret file {file}: {e}")),
        }
    }
}

/// `text` with the user information of every URL in it (`https://user:pass@host`) replaced by
/// `***`: upstream URLs are shown by the admin API, the audit log, health and logs.
pub fn redact_userinfo(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('@') {
        return text.into();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        let end = tail
            .find(|c: char| {
                matches!(c, '/' | '?' | '#' | '"' | '\'' | ' ' | ')' | '>') || c.is_whitespace()
            })
            .unwrap_or(tail.len());
        match tail[..end].rfind('@') {
            Some(at) => {
                out.push_str("***");
                out.push_str(&tail[at..end]);
            }
            None => out.push_str(&tail[..end]),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out.into()
}

/// Whether an env var or header name suggests its value is a credential.
pub fn looks_secret(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    [
        "authorization",
        "cookie",
        "token",
        "secret",
        "password",
        "api-key",
        "api_key",
        "apikey",
    ]
    .iter()
    .any(|s| k.contains(s))
}
