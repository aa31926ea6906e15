//! The methods hosts call, parsed once; and the requests upstreams send to hosts, with the client
//! capability each needs.

/// A host's request method. Anything the gateway does not serve is `Other`, answered "method not
/// found" and counted under `other`, so a misbehaving client cannot grow the metrics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Method {
    Initialize,
    Ping,
    LoggingSetLevel,
    ToolsList,
    ToolsCall,
    PromptsList,
    PromptsGet,
    ResourcesList,
    ResourcesTemplatesList,
    ResourcesRead,
    ResourcesSubscribe,
    ResourcesUnsubscribe,
    CompletionComplete,
    /// 2026-07-28.
    ServerDiscover,
    /// 2026-07-28.
    SubscriptionsListen,
    /// 2025-11-25 tasks.
    TasksGet,
    TasksResult,
    TasksList,
    TasksCancel,
    Other(String),
}

/// Every method the gateway knows, with its name.
const NAMES: [(Method, &str); 19] = [
    (Method::Initialize, "initialize"),
    (Method::Ping, "ping"),
    (Method::LoggingSetLevel, "logging/setLevel"),
    (Method::ToolsList, "tools/list"),
    (Method::ToolsCall, "tools/call"),
    (Method::PromptsList, "prompts/list"),
    (Method::PromptsGet, "prompts/get"),
    (Method::ResourcesList, "resources/list"),
    (Method::ResourcesTemplatesList, "resources/templates/list"),
    (Method::ResourcesRead, "resources/read"),
    (Method::ResourcesSubscribe, "resources/subscribe"),
    (Method::ResourcesUnsubscribe, "resources/unsubscribe"),
    (Method::CompletionComplete, "completion/complete"),
    (Method::ServerDiscover, "server/discover"),
    (Method::SubscriptionsListen, "subscriptions/listen"),
    (Method::TasksGet, "tasks/get"),
    (Method::TasksResult, "tasks/result"),
    (Method::TasksList, "tasks/list"),
    (Method::TasksCancel, "tasks/cancel"),
];

/// The static name of a method the gateway knows (to build header values without a copy).
pub fn known(name: &str) -> Option<&'static str> {
    NAMES.iter().find(|(_, n)| *n == name).map(|(_, n)| *n)
}

impl Method {
    pub fn parse(name: &str) -> Self {
        NAMES
            .iter()
            .find(|(_, n)| *n == name)
            .map_or_else(|| Method::Other(name.to_string()), |(m, _)| m.clone())
    }

    pub fn as_str(&self) -> &str {
        match self {
            Method::Other(name) => name,
            known => known.label(),
        }
    }

    /// A bounded label for metrics: the method's name, or `other`.
    pub fn label(&self) -> &'static str {
        NAMES
            .iter()
            .find(|(m, _)| m == self)
            .map_or("other", |(_, n)| n)
    }

    /// Served to 2026-07-28 requests (the session methods `initialize`, `ping`,
    /// `logging/setLevel` and subscriptions are not part of that revision).
    pub fn is_stateless(&self) -> bool {
        matches!(
            self,
            Method::ServerDiscover
                | Method::ToolsList
                | Method::ToolsCall
                | Method::ResourcesList
                | Method::ResourcesRead
                | Method::ResourcesTemplatesList
                | Method::PromptsList
                | Method::PromptsGet
                | Method::CompletionComplete
                | Method::SubscriptionsListen
                // The 2025-11-25 tasks utility, relayed for hosts of either revision: its ids
                // are the gateway's own, sealed, so any request of the same principal may use
                // them (see `mcp::tasks`).
                | Method::TasksGet
                | Method::TasksResult
                | Method::TasksList
                | Method::TasksCancel
        )
    }

    /// A call that reaches an upstream and may bring progress, logs or requests for the host
    /// along (its answer may become a stream).
    pub fn reaches_upstream(&self) -> bool {
        matches!(
            self,
            Method::ToolsCall
                | Method::PromptsGet
                | Method::ResourcesRead
                | Method::CompletionComplete
                | Method::TasksGet
                | Method::TasksResult
                | Method::TasksList
                | Method::TasksCancel
        )
    }

    /// Written to the audit log.
    pub fn is_audited(&self) -> bool {
        matches!(
            self,
            Method::ToolsCall
                | Method::PromptsGet
                | Method::ResourcesRead
                | Method::TasksResult
                | Method::TasksCancel
        )
    }

    /// A list method: the field its items are in.
    pub fn list_field(&self) -> Option<(registry::EntryKind, &'static str)> {
        use registry::EntryKind;
        Some(match self {
            Method::ToolsList => (EntryKind::Tool, "tools"),
            Method::PromptsList => (EntryKind::Prompt, "prompts"),
            Method::ResourcesList => (EntryKind::Resource, "resources"),
            Method::ResourcesTemplatesList => (EntryKind::ResourceTemplate, "resourceTemplates"),
            _ => return None,
        })
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The client capability a request from an upstream to the host needs; `None` for a method the
/// gateway does not relay.
pub fn client_capability(method: &str) -> Option<&'static str> {
    match method {
        "sampling/createMessage" => Some("sampling"),
        "elicitation/create" => Some("elicitation"),
        "roots/list" => Some("roots"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_parse_once_and_unknown_ones_stay_bounded_in_metrics() {
        for (m, n) in NAMES {
            assert_eq!(Method::parse(n), m);
            assert_eq!(m.as_str(), n);
        }
        let odd = Method::parse("tools/explode");
        assert_eq!(odd.as_str(), "tools/explode");
        assert_eq!(odd.label(), "other");
        assert!(!odd.is_stateless());
    }
}
