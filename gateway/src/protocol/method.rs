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

/// The wire names of the requests the gateway serves, sends upstream or relays. Code outside
/// `protocol` names a method by these (or by [`Method`]), never by a bare string.
pub const INITIALIZE: &str = "initialize";
pub const PING: &str = "ping";
pub const LOGGING_SET_LEVEL: &str = "logging/setLevel";
pub const TOOLS_LIST: &str = "tools/list";
pub const TOOLS_CALL: &str = "tools/call";
pub const PROMPTS_LIST: &str = "prompts/list";
pub const PROMPTS_GET: &str = "prompts/get";
pub const RESOURCES_LIST: &str = "resources/list";
pub const RESOURCES_TEMPLATES_LIST: &str = "resources/templates/list";
pub const RESOURCES_READ: &str = "resources/read";
pub const RESOURCES_SUBSCRIBE: &str = "resources/subscribe";
pub const RESOURCES_UNSUBSCRIBE: &str = "resources/unsubscribe";
pub const COMPLETION_COMPLETE: &str = "completion/complete";
pub const SERVER_DISCOVER: &str = "server/discover";
pub const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";
pub const TASKS_GET: &str = "tasks/get";
pub const TASKS_RESULT: &str = "tasks/result";
pub const TASKS_LIST: &str = "tasks/list";
pub const TASKS_CANCEL: &str = "tasks/cancel";
/// Requests an upstream sends to the host.
pub const SAMPLING_CREATE_MESSAGE: &str = "sampling/createMessage";
pub const ELICITATION_CREATE: &str = "elicitation/create";
pub const ROOTS_LIST: &str = "roots/list";

/// The wire names of notifications, either way.
pub const NOTIFY_INITIALIZED: &str = "notifications/initialized";
pub const NOTIFY_CANCELLED: &str = "notifications/cancelled";
pub const NOTIFY_PROGRESS: &str = "notifications/progress";
pub const NOTIFY_MESSAGE: &str = "notifications/message";
pub const NOTIFY_TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
pub const NOTIFY_PROMPTS_LIST_CHANGED: &str = "notifications/prompts/list_changed";
pub const NOTIFY_RESOURCES_LIST_CHANGED: &str = "notifications/resources/list_changed";
pub const NOTIFY_RESOURCES_UPDATED: &str = "notifications/resources/updated";
pub const NOTIFY_ROOTS_LIST_CHANGED: &str = "notifications/roots/list_changed";
pub const NOTIFY_SUBSCRIPTIONS_ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";
pub const NOTIFY_TASKS_STATUS: &str = "notifications/tasks/status";
/// A URL elicitation's out-of-band interaction finished (2025-11-25).
pub const NOTIFY_ELICITATION_COMPLETE: &str = "notifications/elicitation/complete";

/// Every method the gateway knows, with its name.
const NAMES: [(Method, &str); 19] = [
    (Method::Initialize, INITIALIZE),
    (Method::Ping, PING),
    (Method::LoggingSetLevel, LOGGING_SET_LEVEL),
    (Method::ToolsList, TOOLS_LIST),
    (Method::ToolsCall, TOOLS_CALL),
    (Method::PromptsList, PROMPTS_LIST),
    (Method::PromptsGet, PROMPTS_GET),
    (Method::ResourcesList, RESOURCES_LIST),
    (Method::ResourcesTemplatesList, RESOURCES_TEMPLATES_LIST),
    (Method::ResourcesRead, RESOURCES_READ),
    (Method::ResourcesSubscribe, RESOURCES_SUBSCRIBE),
    (Method::ResourcesUnsubscribe, RESOURCES_UNSUBSCRIBE),
    (Method::CompletionComplete, COMPLETION_COMPLETE),
    (Method::ServerDiscover, SERVER_DISCOVER),
    (Method::SubscriptionsListen, SUBSCRIPTIONS_LISTEN),
    (Method::TasksGet, TASKS_GET),
    (Method::TasksResult, TASKS_RESULT),
    (Method::TasksList, TASKS_LIST),
    (Method::TasksCancel, TASKS_CANCEL),
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

    /// The list methods, in the order a catalog is read.
    pub const LISTS: [Method; 4] = [
        Method::ToolsList,
        Method::ResourcesList,
        Method::ResourcesTemplatesList,
        Method::PromptsList,
    ];

    /// A list method: the server capability that offers it.
    pub fn list_capability(&self) -> Option<&'static str> {
        Some(match self {
            Method::ToolsList => "tools",
            Method::PromptsList => "prompts",
            Method::ResourcesList | Method::ResourcesTemplatesList => "resources",
            _ => return None,
        })
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
        SAMPLING_CREATE_MESSAGE => Some("sampling"),
        ELICITATION_CREATE => Some("elicitation"),
        ROOTS_LIST => Some("roots"),
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
        for m in Method::LISTS {
            assert!(
                m.list_field().is_some() && m.list_capability().is_some(),
                "{m}"
            );
        }
        let odd = Method::parse("tools/explode");
        assert_eq!(odd.as_str(), "tools/explode");
        assert_eq!(odd.label(), "other");
        assert!(!odd.is_stateless());
    }
}
