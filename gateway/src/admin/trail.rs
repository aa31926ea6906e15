//! Admin changes in the audit log: every change through the admin API (upstreams, roles, tokens,
//! virtual servers) is recorded with its outcome, URLs' credentials redacted.

use serde_json::Value;

use super::error::AdminError;
use crate::auth::Principal;
use crate::state::AppState;

/// Runs an admin change and records it (or its failure) in the audit log, with how long it
/// took; the outcome is passed on.
pub(crate) async fn audited<T>(
    state: &AppState,
    p: &Principal,
    action: &str,
    target: &str,
    args: Option<&Value>,
    change: impl std::future::Future<Output = Result<T, AdminError>>,
) -> Result<T, AdminError> {
    let started = std::time::Instant::now();
    let out = change.await;
    record(state, p, action, target, args, started, &out).await;
    out
}

/// Records an admin change that ran since `started` (or its failure) in the audit log. For a
/// change whose target is known only from its outcome; else [`audited`].
pub(crate) async fn record<T>(
    state: &AppState,
    p: &Principal,
    action: &str,
    target: &str,
    args: Option<&Value>,
    started: std::time::Instant,
    out: &Result<T, AdminError>,
) {
    let (outcome, class) = match out {
        Ok(_) => ("ok", None),
        Err(e) => ("error", Some(e.code())),
    };
    state
        .dispatcher
        .audit
        .record(registry::AuditEntry {
            at: registry::now_ms(),
            principal: p.key().to_string(),
            token_id: p.token_id.clone(),
            session: None,
            action: action.into(),
            upstream: None,
            target: Some(target.into()),
            outcome: outcome.into(),
            error_class: class.map(str::to_string),
            latency_ms: started.elapsed().as_millis() as i64,
            arguments: state
                .dispatcher
                .audit
                .arguments(args.map(redact_urls).as_ref()),
        })
        .await;
}

/// Arguments with the credentials of any URL in them redacted.
fn redact_urls(args: &Value) -> Value {
    let text = args.to_string();
    match crate::config::redact_userinfo(&text) {
        std::borrow::Cow::Borrowed(_) => args.clone(),
        std::borrow::Cow::Owned(t) => serde_json::from_str(&t).unwrap_or(Value::Null),
    }
}
