//! The `[user_credentials]` section: the key that seals users' own upstream tokens at rest (an
//! upstream's `user_oauth`), the keys it replaced, and the URL users' browsers reach the
//! gateway at (connect links and the authorization servers' redirects come back there).

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde::Deserialize;

use super::env::Overrides;
use super::error::KeyError;
use super::secret::ValueSource;

/// A sealing key's length (XChaCha20-Poly1305).
pub const KEY_BYTES: usize = 32;

// The variables that override keys of `[user_credentials]`.
pub const KEY_VAR: &str = "MCP_GATEWAY_USER_CREDENTIALS_KEY";
pub const PUBLIC_URL_VAR: &str = "MCP_GATEWAY_USER_CREDENTIALS_PUBLIC_URL";

#[derive(Debug, Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawUserCredentials {
    /// The key (32 random bytes, base64) that seals users' upstream tokens in the store: a
    /// reference (`{ env = "VAR" }` or `{ file = "/path" }`). `MCP_GATEWAY_USER_CREDENTIALS_KEY`
    /// gives it too. Every replica needs the same one.
    #[schemars(with = "Option<serde_json::Value>", extend("x-env" = KEY_VAR))]
    key: Option<ValueSource>,
    /// Keys that sealed tokens before `key` (rotation): what they sealed is still opened, and
    /// sealed again with `key` when the token is next refreshed.
    #[serde(default)]
    #[schemars(with = "Vec<serde_json::Value>")]
    previous_keys: Vec<ValueSource>,
    /// The gateway's URL as users' browsers reach it (default: `auth.server.issuer`, else the
    /// origin of `auth.resource`, else `http://` and `server.listen`).
    #[schemars(extend("x-env" = PUBLIC_URL_VAR))]
    public_url: Option<String>,
    /// Whoever opens a connect link signs in to the gateway first, and goes on only as the
    /// user the link was made for (default true). Off: a link sent on to someone else connects
    /// that person's account to the link's user. Turn it off only where users sign in with
    /// tokens of a provider the gateway cannot sign them in with in a browser.
    confirm_links: Option<bool>,
}

/// Where users' upstream tokens are sealed with, and where browsers reach the gateway.
#[derive(Clone)]
pub struct UserCredentialsConfig {
    /// The current key first, then the previous ones. Empty: no key given.
    pub keys: Vec<[u8; KEY_BYTES]>,
    pub public_url: Option<String>,
    /// Whoever opens a connect link shows first that they are its user.
    pub confirm_links: bool,
}

impl Default for UserCredentialsConfig {
    fn default() -> Self {
        Self {
            keys: Vec::new(),
            public_url: None,
            confirm_links: true,
        }
    }
}

impl std::fmt::Debug for UserCredentialsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UserCredentialsConfig")
            .field("keys", &self.keys.len())
            .field("public_url", &self.public_url)
            .field("confirm_links", &self.confirm_links)
            .finish()
    }
}

impl UserCredentialsConfig {
    pub(super) fn from_raw(
        raw: RawUserCredentials,
        vars: Overrides,
        env: &std::collections::HashMap<String, String>,
    ) -> Result<Self, KeyError> {
        let key = |what: &str, v: &ValueSource| -> Result<[u8; KEY_BYTES], KeyError> {
            let text = v.resolve(env).map_err(|e| KeyError::new(what, e))?;
            decode_key(text.expose()).map_err(|e| KeyError::new(what, e))
        };
        let mut keys = Vec::new();
        match (vars.get(KEY_VAR), &raw.key) {
            (Some(text), _) => keys.push(decode_key(&text).map_err(|e| KeyError::new(KEY_VAR, e))?),
            (None, Some(ValueSource::Literal(_))) => {
                return Err(KeyError::clear_text("user_credentials.key"))
            }
            (None, Some(v)) => keys.push(key("user_credentials.key", v)?),
            (None, None) => {}
        }
        if keys.is_empty() && !raw.previous_keys.is_empty() {
            return Err(KeyError::new(
                "user_credentials.previous_keys",
                "needs user_credentials.key",
            ));
        }
        for (i, v) in raw.previous_keys.iter().enumerate() {
            keys.push(key(&format!("user_credentials.previous_keys[{i}]"), v)?);
        }
        let public_url = vars.get(PUBLIC_URL_VAR).or(raw.public_url);
        if let Some(u) = &public_url {
            let ok = url::Url::parse(u)
                .is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.query().is_none());
            if !ok {
                return Err(KeyError::new(
                    "user_credentials.public_url",
                    format!("must be an http(s) URL without a query: {u:?}"),
                ));
            }
        }
        Ok(Self {
            keys,
            public_url: public_url.map(|u| u.trim_end_matches('/').to_string()),
            confirm_links: raw.confirm_links.unwrap_or(true),
        })
    }
}

/// A key from its base64 text: exactly 32 bytes (`openssl rand -base64 32`).
fn decode_key(text: &str) -> Result<[u8; KEY_BYTES], String> {
    let bytes = STANDARD
        .decode(text.trim())
        .map_err(|_| "not base64 (make one with `openssl rand -base64 32`)".to_string())?;
    bytes.try_into().map_err(|b: Vec<u8>| {
        format!(
            "{} bytes; a key is {KEY_BYTES} (make one with `openssl rand -base64 32`)",
            b.len()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn keys_come_from_references_or_the_environment_and_are_checked() {
        let good = STANDARD.encode([7u8; 32]);
        let env = HashMap::from([
            ("K".to_string(), good.clone()),
            ("SHORT".to_string(), STANDARD.encode([1u8; 8])),
        ]);
        let read = |toml: &str, env: &HashMap<String, String>| {
            let raw: RawUserCredentials = toml::from_str(toml).unwrap();
            UserCredentialsConfig::from_raw(raw, Overrides(env), env)
        };
        let c = read(
            "key = { env = \"K\" }\npublic_url = \"https://gw.example/\"",
            &env,
        )
        .unwrap();
        assert_eq!(c.keys, vec![[7u8; 32]]);
        assert_eq!(c.public_url.as_deref(), Some("https://gw.example"));
        let e = read("key = { env = \"SHORT\" }", &env).unwrap_err();
        assert_eq!(e.key, "user_credentials.key");
        assert!(e.message.contains("8 bytes"), "{e}");
        let e = read(&format!("key = \"{good}\""), &env).unwrap_err();
        assert!(e.message.contains("not clear text"), "{e}");
        let e = read("previous_keys = [{ env = \"K\" }]", &env).unwrap_err();
        assert_eq!(e.key, "user_credentials.previous_keys", "{e}");
        let mut env2 = env.clone();
        env2.insert("MCP_GATEWAY_USER_CREDENTIALS_KEY".into(), good);
        let c = read("previous_keys = [{ env = \"K\" }]", &env2).unwrap();
        assert_eq!(c.keys.len(), 2);
    }
}
