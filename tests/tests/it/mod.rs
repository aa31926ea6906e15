mod admin;
mod authorization_server;
mod bad_input;
mod config_as_code;
mod conformance;
mod console;
mod cors;
mod curation;
mod database_outage;
mod deployment;
mod edge;
mod ended_sessions;
mod failures;
mod full_disk;
mod hardening;
mod notifications;
mod operations;
mod passthrough;
mod pinning;
mod real_peers;
mod registry_suite;
mod replicas;
mod resilience;
mod resumption;
mod revisions;
mod routing;
mod security;
mod session_limits;
mod tasks;
mod traces;
mod user_credentials;

/// The fixture upstream built with these tests.
pub fn fixture_bin() -> &'static str {
    env!("CARGO_BIN_EXE_fixture-server")
}

/// A role with every right, for configs with `auth.mode = "required"`.
pub const ADMIN_ROLE: &str = "[[roles]]\nname = \"admin\"\nadmin = true\nupstreams = [\"*\"]\n";

/// A config with the fixture as stdio upstream `fx`, extra TOML appended to its table.
pub fn fixture_config(db: &str, extra: &str) -> String {
    format!(
        "[database]\nurl = \"{db}\"\n\n[[upstreams]]\nname = \"fx\"\ntransport = \"stdio\"\ncommand = \"{}\"\n{extra}\n",
        fixture_bin()
    )
}

/// A gateway in front of the fixture alone (its SQLite file in `dir`), once `fx` is up.
pub async fn fixture_gateway(dir: &std::path::Path) -> gateway_tests::Gateway {
    let gw = gateway_tests::Gateway::start(&fixture_config(&sqlite_url(dir), "")).await;
    gw.wait_up(&["fx"]).await;
    gw
}

pub fn sqlite_url(dir: &std::path::Path) -> String {
    format!("sqlite://{}/gw.db?mode=rwc", dir.display())
}

/// A SQLite file in the gateway's own folder ([`gateway_tests::Gateway`] runs there), which
/// lives as long as the gateway does: for helpers that return a started gateway.
pub const SQLITE_IN_ITS_FOLDER: &str = "sqlite://gw.db?mode=rwc";
