//! Admin changes in the audit log: every change through the admin API (upstreams, roles, tokens,
//! virtual servers) is recorded with its outcome, URLs' credentials redacted.

use serde_json::Value;

use super::error::AdminError;
use crate::auth::Principal;
use crate::state::AppState;

/// Records an admin change (or its failure) in the audit log and passes the outcome on.
pub(crate) async fn audited<T>(
    state: &AppState,
    p: &Principal,
    action: &str,
    target: &str,
    args: Option<&Value>,
    started: std::time::Instant,
    out: Result<T, AdminError>,
) -> Result<T, AdminError> {
    let (outcome, class) = match &out {
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
    out
}

/// Arguments with the credentials of any URL in them redacted.
fn redact_urls(args: &Value) -> Value {
    let text = args.to_string();
    match crate::config::redact_userinfo(&text) {
        std::borrow::Cow::Borrowed(_) => args.clone(),
        std::borrow::Cow::Owned(t) => serde_json::from_str(&t).unwrap_or(Value::Null),
    }
}
