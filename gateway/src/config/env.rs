//! The gateway's own environment: the prefix of its variables, the overrides read from them,
//! and what of it a stdio child may see.

use std::collections::HashMap;

use super::error::KeyError;

/// Every variable the gateway reads for itself starts with this; none of them reaches a child.
pub const ENV_PREFIX: &str = "MCP_GATEWAY_";

/// `MCP_GATEWAY_*` overrides of file settings, read from the environment the config was given
/// (never the process's directly, so tests can pass their own). Each section names the variable
/// of a key beside that key (a constant, also in the generated schema as `x-env`).
#[derive(Clone, Copy)]
pub struct Overrides<'a>(pub &'a HashMap<String, String>);

impl Overrides<'_> {
    /// The variable `var` (a full name, `MCP_GATEWAY_...`), when set.
    pub fn get(&self, var: &str) -> Option<String> {
        debug_assert!(var.starts_with(ENV_PREFIX), "{var}");
        self.0.get(var).cloned()
    }

    /// The variable `var` as a number, when set; an error names the variable.
    pub fn number(&self, var: &str) -> Result<Option<u64>, KeyError> {
        self.get(var)
            .map(|v| {
                v.parse::<u64>()
                    .map_err(|_| KeyError::new(var, "must be a number"))
            })
            .transpose()
    }

    /// A number that must be > 0 if set.
    pub fn positive(&self, var: &str) -> Result<Option<u64>, KeyError> {
        let v = self.number(var)?;
        super::error::positive(var, v)?;
        Ok(v)
    }
}

/// What every stdio child gets of the gateway's environment: enough to find programs, a home,
/// a locale, a time zone, a temporary folder, proxies and CA certificates.
pub const INHERITED_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "TMPDIR",
    "TERM",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
];

/// Whether an environment variable name is matched by a list of names and `PREFIX*` patterns.
pub fn env_name_matches<S: AsRef<str>>(patterns: &[S], name: &str) -> bool {
    patterns.iter().any(|p| {
        let p = p.as_ref();
        match p.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => p == name,
        }
    })
}
