//! Host requests by method: aggregated lists from the catalog view, and calls resolved to their
//! upstream and forwarded with only names, URIs, ids and progress tokens rewritten.

use std::sync::Arc;

use registry::{AuditEntry, EntryKind, Exposed};
use serde_json::{json, Map, Value};

use super::hub::Hub;
use super::outgoing::Outgoing;
use super::session::{Session, LOG_LEVELS};
use crate::audit::Auditor;
use crate::auth::Access;
use crate::metrics::Metrics;
use crate::protocol::method::{LOGGING_SET_LEVEL, NOTIFY_TOOLS_LIST_CHANGED};
use crate::protocol::{jsonrpc, Answer, McpError, Member, Method};
use crate::routing::feedback::{LastSearch, SessionRouting};
use crate::routing::lens::Lens;
use crate::routing::meta_tools::{self, CALL_TOOL, SEARCH_TOOLS};
use crate::routing::virtual_servers::VirtualServer;
use crate::routing::{Mode, ToolRouter};

pub struct Dispatcher {
    pub hub: Arc<Hub>,
    pub page_size: usize,
    pub metrics: Arc<Metrics>,
    pub audit: Arc<Auditor>,
    pub routing: Arc<ToolRouter>,
}

/// What routing a call learned, for its audit entry.
#[derive(Default)]
pub(super) struct Routed {
    pub(super) upstream: Option<String>,
    /// The caller may not use the target (answered as if it did not exist).
    pub(super) denied: bool,
}

/// The error of an unknown tool or prompt; a denied one gets the same, so that a caller cannot
/// learn what exists beyond its rights.
fn unknown(kind: EntryKind, name: &str) -> McpError {
    McpError::invalid_params(format!(
        "unknown {}: {name}",
        if kind == EntryKind::Tool {
            "tool"
        } else {
            "prompt"
        }
    ))
}

/// The error for a resource URI refused before any lookup; a URI refused for its dot segments
/// names its normal form, to be sent instead.
fn uri_refused(uri: &str, why: &super::uri::Refused) -> McpError {
    let mut data = json!({ "uri": uri });
    if let super::uri::Refused::NotNormal(n) = why {
        data["normal"] = Value::from(n.as_str());
    }
    McpError::invalid_params(format!("resource uri {uri:?} {}", why.reason())).with_data(data)
}

fn resource_not_found(uri: &str) -> McpError {
    McpError::invalid_params(format!("resource not found: {uri}")).with_data(json!({ "uri": uri }))
}

fn page<'a, T>(
    items: &'a [T],
    params: Option<&Map<String, Value>>,
    size: usize,
) -> Result<(&'a [T], Option<String>), McpError> {
    let start = match params.and_then(|p| p.get("cursor")) {
        None | Some(Value::Null) => 0,
        Some(Value::String(c)) => c
            .strip_prefix("o")
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|n| *n <= items.len())
            .ok_or_else(|| McpError::invalid_params("invalid cursor"))?,
        Some(_) => return Err(McpError::invalid_params("invalid cursor")),
    };
    let end = (start + size).min(items.len());
    let next = (end < items.len()).then(|| format!("o{end}"));
    Ok((&items[start..end], next))
}

/// A list item: a meta-tool of the gateway's own or a catalog entry.
enum Item<'a> {
    Own(Value),
    Entry(&'a Exposed),
}

impl Dispatcher {
    /// What a request may see: `access`, on the endpoint `scope` (a virtual server), with the
    /// tools the session's searches found.
    pub fn lens(
        &self,
        access: &Access,
        scope: Option<&str>,
        routing: Option<&SessionRouting>,
    ) -> Lens {
        let vs = scope.map(|name| {
            self.routing
                .virtual_servers
                .get(name)
                .unwrap_or_else(|| Arc::new(VirtualServer::gone(name)))
        });
        let mode = vs
            .as_ref()
            .map_or(self.routing.config.mode, |v| v.spec.mode);
        Lens {
            access: access.clone(),
            scope: vs,
            mode,
            found: if mode == Mode::Auto {
                routing.map_or_else(Vec::new, |r| r.found.lock().unwrap().clone())
            } else {
                Vec::new()
            },
        }
    }

    fn session_lens(&self, session: &Session) -> Lens {
        self.lens(
            &session.principal().access,
            session.scope.as_deref(),
            Some(&session.routing),
        )
    }

    /// Answers a host request; calls are audited, and traced when traces are on.
    pub async fn dispatch(
        &self,
        session: &Arc<Session>,
        id: &Value,
        method: &Method,
        params: Option<&Map<String, Value>>,
    ) -> Result<Answer, McpError> {
        if !crate::telemetry::enabled() {
            return self.answer(session, id, method, params).await;
        }
        let target = params.and_then(crate::telemetry::target);
        let span = tracing::debug_span!(
            target: crate::telemetry::TARGET,
            "mcp",
            otel.name = crate::telemetry::span_name(method.as_str(), target),
            otel.kind = "server",
            otel.status_code = tracing::field::Empty,
            mcp.method.name = method.as_str(),
            mcp.session.id = %session_ref(session),
            // Who called, as the audit log names them.
            enduser.id = session.principal().key(),
            mcp.protocol.version = session.protocol_version.as_str(),
            jsonrpc.request.id = %id,
            gen_ai.operation.name = tracing::field::Empty,
            gen_ai.tool.name = tracing::field::Empty,
            mcp.resource.uri = tracing::field::Empty,
            error.type = tracing::field::Empty,
        );
        match (method, target) {
            (Method::ToolsCall, Some(t)) => {
                span.record("gen_ai.operation.name", "execute_tool");
                span.record("gen_ai.tool.name", t);
            }
            (m, Some(t)) if m.as_str().starts_with("resources/") => {
                span.record("mcp.resource.uri", t);
            }
            _ => {}
        }
        crate::telemetry::parent_from_meta(&span, params);
        crate::telemetry::traced(span, self.answer(session, id, method, params)).await
    }

    async fn answer(
        &self,
        session: &Arc<Session>,
        id: &Value,
        method: &Method,
        params: Option<&Map<String, Value>>,
    ) -> Result<Answer, McpError> {
        // `call_tool` is a `tools/call` of the tool it names: same rights, same audit entry.
        let unwrapped;
        let params = if *method == Method::ToolsCall
            && params
                .and_then(|p| p.member("name"))
                .and_then(Value::as_str)
                == Some(CALL_TOOL)
        {
            unwrapped = match meta_tools::unwrap_call(params) {
                Ok(u) => u,
                Err(e) => return Ok(meta_tools::bad_arguments(e).into()),
            };
            Some(&unwrapped)
        } else {
            params
        };
        // A resource is checked, forwarded and audited under its normalised URI.
        let normalised;
        let mut refused = None;
        let params = match params.and_then(|p| p.member("uri")).and_then(Value::as_str) {
            Some(uri) if method.as_str().starts_with("resources/") => match self.checked_uri(uri) {
                Ok(n) if n == uri => params,
                Ok(n) => {
                    let mut p = params.cloned().unwrap_or_default();
                    p.insert("uri".into(), Value::from(n));
                    normalised = p;
                    Some(&normalised)
                }
                Err(why) => {
                    refused = Some(uri_refused(uri, &why));
                    match why {
                        // Audited as what it would have reached; never forwarded.
                        super::uri::Refused::NotNormal(n) => {
                            let mut p = params.cloned().unwrap_or_default();
                            p.insert("uri".into(), Value::from(n));
                            normalised = p;
                            Some(&normalised)
                        }
                        _ => params,
                    }
                }
            },
            _ => params,
        };
        // A call whose row the audit log cannot take is not served (its refusal is counted
        // and logged, not audited: that is what cannot be written).
        if method.is_audited() {
            self.audit.admit()?;
        }
        let started = std::time::Instant::now();
        let mut routed = Routed::default();
        let out = match refused {
            Some(e) => Err(e),
            None => self.route(session, id, method, params, &mut routed).await,
        };
        if method.is_audited() {
            self.record(session, method, params, routed, &out, started)
                .await;
        }
        if session.modern {
            return out;
        }
        out.and_then(Answer::sessionful)
    }

    /// Why a tool or prompt name does not resolve: unknown, or served by an upstream that is
    /// restarting (only said to a caller allowed to use it).
    fn unknown_or_offline(&self, lens: &Lens, kind: EntryKind, name: &str) -> McpError {
        match self.hub.upstreams.offline_upstream(kind, name) {
            Some(up) if lens.allows(kind, &up, name) => {
                McpError::upstream_unavailable(&up, "not connected")
            }
            _ => unknown(kind, name),
        }
    }

    /// A URI as the catalog knows it, or else checked (see [`super::uri`]).
    fn checked_uri(&self, uri: &str) -> Result<String, super::uri::Refused> {
        if self
            .hub
            .upstreams
            .view()
            .resolve(EntryKind::Resource, uri)
            .is_some()
        {
            return Ok(uri.to_string());
        }
        super::uri::check(uri)
    }

    async fn record(
        &self,
        session: &Session,
        method: &Method,
        params: Option<&Map<String, Value>>,
        routed: Routed,
        out: &Result<Answer, McpError>,
        started: std::time::Instant,
    ) {
        let principal = session.principal();
        let (outcome, class) = match out {
            _ if routed.denied => ("denied", Some("forbidden")),
            Ok(r) if r.is_tool_error() => ("error", Some("tool_error")),
            Ok(_) => ("ok", None),
            Err(e) => ("error", Some(crate::audit::error_class(e.code))),
        };
        let reads = *method == Method::ResourcesRead;
        let target_key = if reads { "uri" } else { "name" };
        let session_ref = session_ref(session);
        self.audit
            .record(AuditEntry {
                at: registry::now_ms(),
                principal: principal.key().to_string(),
                token_id: principal.token_id.clone(),
                session: Some(session_ref),
                action: method.as_str().to_string(),
                upstream: routed.upstream,
                target: params
                    .and_then(|p| p.member(target_key))
                    .and_then(Value::as_str)
                    .map(str::to_string),
                outcome: outcome.into(),
                error_class: class.map(str::to_string),
                latency_ms: started.elapsed().as_millis() as i64,
                arguments: if reads {
                    None
                } else {
                    self.audit
                        .arguments(params.and_then(|p| p.member("arguments")))
                },
            })
            .await;
    }

    /// One small function per method.
    async fn route(
        &self,
        session: &Arc<Session>,
        id: &Value,
        method: &Method,
        params: Option<&Map<String, Value>>,
        routed: &mut Routed,
    ) -> Result<Answer, McpError> {
        let lens = self.session_lens(session);
        if let Some((kind, field)) = method.list_field() {
            return self.list(kind, field, params, &lens).map(Answer::from);
        }
        match method {
            Method::Ping => Ok(json!({}).into()),
            Method::Initialize => Err(McpError::invalid_request("session is already initialized")),
            Method::LoggingSetLevel => self.set_level(session, params).map(Answer::from),
            Method::ToolsCall | Method::PromptsGet => {
                self.get_named(session, id, method, params, &lens, routed)
                    .await
            }
            Method::ResourcesRead | Method::ResourcesSubscribe | Method::ResourcesUnsubscribe => {
                self.resource(session, id, method, params, &lens, routed)
                    .await
            }
            Method::CompletionComplete => self.complete(session, id, params, &lens).await,
            Method::TasksGet | Method::TasksResult | Method::TasksCancel => {
                self.task(session, id, method, params, &lens, routed).await
            }
            Method::TasksList => self.task_list(session, id, &lens).await,
            _ => Err(McpError::method_not_found(method.as_str())),
        }
    }

    /// `logging/setLevel`: kept for the session, passed to its 2025 upstream connections.
    fn set_level(
        &self,
        session: &Session,
        params: Option<&Map<String, Value>>,
    ) -> Result<Value, McpError> {
        let level = params
            .and_then(|p| p.get("level"))
            .and_then(Value::as_str)
            .ok_or_else(|| McpError::invalid_params("level is required"))?;
        if !LOG_LEVELS.contains(&level) {
            return Err(McpError::invalid_params(format!(
                "level must be one of {}",
                LOG_LEVELS.join(", ")
            ))
            .with_data(json!({ "level": level })));
        }
        session.set_log_level(level);
        for conn in self.hub.upstreams.session_connections(&session.id) {
            // 2026-07-28 upstreams get the level with each request instead.
            if conn.capabilities().get("logging").is_some() && !conn.is_modern() {
                conn.notify_request_free(LOGGING_SET_LEVEL, json!({ "level": level }));
            }
        }
        Ok(json!({}))
    }

    /// `tools/call` and `prompts/get`: resolved by exposed name, checked, forwarded.
    async fn get_named(
        &self,
        session: &Arc<Session>,
        id: &Value,
        method: &Method,
        params: Option<&Map<String, Value>>,
        lens: &Lens,
        routed: &mut Routed,
    ) -> Result<Answer, McpError> {
        let kind = if *method == Method::ToolsCall {
            EntryKind::Tool
        } else {
            EntryKind::Prompt
        };
        let name = params
            .and_then(|p| p.member("name"))
            .and_then(Value::as_str)
            .ok_or_else(|| McpError::invalid_params("name is required"))?;
        if kind == EntryKind::Tool && name == SEARCH_TOOLS {
            return self
                .search_tools(session, lens, params)
                .await
                .map(Answer::from);
        }
        // A virtual server may show a tool under a name of its own.
        let name = match kind {
            EntryKind::Tool => lens.exposed_name(name).ok_or_else(|| unknown(kind, name))?,
            _ => name,
        };
        let view = self.hub.upstreams.view();
        let e = view
            .resolve(kind, name)
            .ok_or_else(|| self.unknown_or_offline(lens, kind, name))?;
        if !lens.allows(kind, &e.entry.upstream, name) {
            routed.denied = true;
            return Err(unknown(kind, name));
        }
        routed.upstream = Some(e.entry.upstream.clone());
        if kind == EntryKind::Tool {
            self.follow_up(session, name, &e.entry.upstream, &e.entry.key);
        }
        let upstream = e.entry.upstream.clone();
        let key = Value::from(e.entry.key.as_str());
        // The upstream's, then the endpoint's (which win where both fix one).
        let mut fixed = Map::new();
        if kind == EntryKind::Tool {
            let (f, held) = self.hub.upstreams.call_rules(&upstream, &e.entry.key);
            if held {
                // Served as approved while the upstream lists another definition: the call
                // must fit what the host was shown.
                let approved = e.entry.definition.to_value();
                let schema = approved.get("inputSchema").unwrap_or(&Value::Null);
                crate::upstream::pinning::check_arguments(
                    schema,
                    params.and_then(|p| p.get("arguments")),
                )
                .map_err(|why| McpError::invalid_params(format!("{name}: {why}")))?;
            }
            if let Some(f) = f {
                fixed = f;
            }
            if let Some(endpoint) = lens.fixed_arguments(name) {
                fixed.extend(endpoint.clone());
            }
        }
        drop(view);
        let outgoing = Outgoing {
            host: params,
            replace: ("name", key),
            fixed,
        };
        let mut result = self
            .forward(session, id, &upstream, method, outgoing)
            .await?;
        if kind == EntryKind::Tool {
            if params.is_some_and(|p| p.member("task").is_some()) {
                result = self.expose_created_task(session, &upstream, name, result)?;
            }
            if let Some(cap) = self.hub.upstreams.result_text_cap(&upstream) {
                trim_result_texts(&mut result, cap)?;
            }
        }
        Ok(result)
    }

    /// `resources/read`, `resources/subscribe` and `resources/unsubscribe`, by exposed URI.
    async fn resource(
        &self,
        session: &Arc<Session>,
        id: &Value,
        method: &Method,
        params: Option<&Map<String, Value>>,
        lens: &Lens,
        routed: &mut Routed,
    ) -> Result<Answer, McpError> {
        let uri = params
            .and_then(|p| p.get("uri"))
            .and_then(Value::as_str)
            .ok_or_else(|| McpError::invalid_params("uri is required"))?
            .to_string();
        let view = self.hub.upstreams.view();
        let (upstream, original) = view.resolve_resource_uri(&uri).ok_or_else(|| {
            match self
                .hub
                .upstreams
                .offline_upstream(EntryKind::Resource, &uri)
            {
                Some(up) if lens.allows(EntryKind::Resource, &up, &uri) => {
                    McpError::upstream_unavailable(&up, "not connected")
                }
                _ => resource_not_found(&uri),
            }
        })?;
        drop(view);
        if !lens.allows(EntryKind::Resource, &upstream, &uri) {
            routed.denied = true;
            return Err(resource_not_found(&uri));
        }
        routed.upstream = Some(upstream.clone());
        let outgoing = Outgoing {
            host: params,
            replace: ("uri", Value::from(original.as_str())),
            fixed: Map::new(),
        };
        match method {
            Method::ResourcesSubscribe => session.subscribe(&uri),
            Method::ResourcesUnsubscribe => session.unsubscribe(&uri),
            _ => {}
        }
        if *method != Method::ResourcesRead && self.hub.upstreams.is_modern(&upstream) {
            // 2026-07-28 has no subscribe method: the subscription is the gateway's.
            return Ok(json!({}).into());
        }
        let mut result = self
            .forward(session, id, &upstream, method, outgoing)
            .await?;
        if uri != original {
            let built = result.built_mut()?;
            if let Some(contents) = built.get_mut("contents").and_then(Value::as_array_mut) {
                for c in contents {
                    if c.get("uri").and_then(Value::as_str) == Some(original.as_str()) {
                        c["uri"] = Value::from(uri.clone());
                    }
                }
            }
        }
        Ok(result)
    }

    /// `completion/complete`: the prompt or resource template it refers to, resolved.
    async fn complete(
        &self,
        session: &Arc<Session>,
        id: &Value,
        params: Option<&Map<String, Value>>,
        lens: &Lens,
    ) -> Result<Answer, McpError> {
        let r = params
            .and_then(|p| p.get("ref"))
            .ok_or_else(|| McpError::invalid_params("ref is required"))?;
        let view = self.hub.upstreams.view();
        let (upstream, new_ref) = match r.get("type").and_then(Value::as_str) {
            Some("ref/prompt") => {
                let name = r.get("name").and_then(Value::as_str).unwrap_or_default();
                let e = view
                    .resolve(EntryKind::Prompt, name)
                    .filter(|e| lens.allows(EntryKind::Prompt, &e.entry.upstream, name))
                    .ok_or_else(|| unknown(EntryKind::Prompt, name))?;
                let mut nr = r.clone();
                nr["name"] = Value::from(e.entry.key.clone());
                (e.entry.upstream.clone(), nr)
            }
            Some("ref/resource") => {
                let raw = r.get("uri").and_then(Value::as_str).unwrap_or_default();
                let uri = &match view.resolve(EntryKind::ResourceTemplate, raw) {
                    Some(_) => raw.to_string(),
                    None => self
                        .checked_uri(raw)
                        .map_err(|why| uri_refused(raw, &why))?,
                };
                let found = view
                    .resolve(EntryKind::ResourceTemplate, uri)
                    .map(|e| (e.entry.upstream.clone(), e.entry.key.clone()))
                    .or_else(|| view.resolve_resource_uri(uri))
                    .filter(|(up, _)| lens.allows(EntryKind::Resource, up, uri))
                    .ok_or_else(|| McpError::invalid_params(format!("unknown resource: {uri}")))?;
                let mut nr = r.clone();
                nr["uri"] = Value::from(found.1);
                (found.0, nr)
            }
            _ => {
                return Err(McpError::invalid_params(
                    "ref.type must be ref/prompt or ref/resource",
                ))
            }
        };
        drop(view);
        let outgoing = Outgoing {
            host: params,
            replace: ("ref", new_ref),
            fixed: Map::new(),
        };
        self.forward(
            session,
            id,
            &upstream,
            &Method::CompletionComplete,
            outgoing,
        )
        .await
    }

    /// `search_tools`: the best tools for the query among those the caller may call here. An
    /// `auto` session's tool list gains them (and the host hears `list_changed`).
    async fn search_tools(
        &self,
        session: &Session,
        lens: &Lens,
        params: Option<&Map<String, Value>>,
    ) -> Result<Value, McpError> {
        let cfg = &self.routing.config;
        let (query, k) = match meta_tools::search_args(params, cfg.max_k) {
            Ok(a) => a,
            Err(e) => return Ok(meta_tools::bad_arguments(e)),
        };
        let mut search = self
            .routing
            .search(&query, k, "meta", &|e: &Exposed| {
                lens.allows(EntryKind::Tool, &e.entry.upstream, &e.exposed)
            })
            .await;
        let mode = self.routing.status().mode;
        if !session.modern {
            let keep = lens
                .scope
                .as_ref()
                .and_then(|v| v.spec.auto_k)
                .unwrap_or(cfg.auto_k);
            let search = LastSearch {
                query,
                results: search.tools.iter().map(|f| f.name.clone()).collect(),
            };
            if session.routing.remember(search, keep) && lens.mode == Mode::Auto {
                session.send_unsolicited(&jsonrpc::notification(NOTIFY_TOOLS_LIST_CHANGED, None));
            }
        }
        lens.show_found(&mut search.tools);
        Ok(meta_tools::search_result(&search, mode))
    }

    /// Counts whether the session's latest search had found the tool it calls now.
    fn follow_up(&self, session: &Session, exposed: &str, upstream: &str, tool: &str) {
        let Some(last) = session.routing.last_search.lock().unwrap().take() else {
            return;
        };
        let rank = self.routing.feedback.record(&last, exposed, upstream, tool);
        self.routing.count_followup(rank.is_some());
    }

    /// One page of what the caller may see of `kind` (tools: as the endpoint's mode lists them,
    /// the meta-tools first).
    pub fn list(
        &self,
        kind: EntryKind,
        field: &str,
        params: Option<&Map<String, Value>>,
        lens: &Lens,
    ) -> Result<Value, McpError> {
        let view = self.hub.upstreams.view();
        let mut visible: Vec<Item> = Vec::new();
        if kind == EntryKind::Tool {
            let cfg = &self.routing.config;
            visible.extend(
                meta_tools::definitions(cfg.max_k, cfg.default_k)
                    .into_iter()
                    .map(Item::Own),
            );
        }
        visible.extend(
            view.list(kind)
                .iter()
                .filter(|e| lens.allows(kind, &e.entry.upstream, &e.exposed))
                .filter(|e| kind != EntryKind::Tool || lens.lists_tool(&e.exposed))
                .map(Item::Entry),
        );
        let (items, next) = page(&visible, params, self.page_size)?;
        let mut out = Map::new();
        out.insert(
            field.into(),
            Value::Array(
                items
                    .iter()
                    .map(|i| match i {
                        Item::Own(v) => v.clone(),
                        Item::Entry(e) => lens.shown(e),
                    })
                    .collect(),
            ),
        );
        if let Some(n) = next {
            out.insert("nextCursor".into(), Value::from(n));
        }
        Ok(Value::Object(out))
    }
}

/// How logs, traces and the audit log name a session: a 2025 session id is a credential, so
/// only a prefix of its hash is written; a 2026-07-28 one is not secret.
fn session_ref(session: &Session) -> String {
    if session.modern {
        return session.id.clone();
    }
    // Hashed once per session, not per call.
    session.hash_prefix().to_string()
}

/// Cuts every text item of a tool result to `cap` bytes (at a character boundary), saying so at
/// the end of the text: a model that reads a cut text should know it is not the whole.
fn trim_result_texts(result: &mut Answer, cap: usize) -> Result<(), McpError> {
    // A text is shorter than the result that holds it: a short passed result needs no look.
    if matches!(result, Answer::Passed(p) if p.text().len() <= cap) {
        return Ok(());
    }
    let result = result.built_mut()?;
    let Some(items) = result.get_mut("content").and_then(Value::as_array_mut) else {
        return Ok(());
    };
    for item in items {
        if item.get("type").and_then(Value::as_str) != Some("text") {
            continue;
        }
        let Some(text) = item.get_mut("text") else {
            continue;
        };
        let Some(s) = text.as_str().filter(|s| s.len() > cap) else {
            continue;
        };
        let mut end = cap;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        *text = Value::from(format!(
            "{}\n[trimmed by the gateway: {} of {} bytes shown (max_result_text_bytes)]",
            &s[..end],
            end,
            s.len()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod trim_tests {
    use super::*;

    #[test]
    fn long_tool_texts_are_cut_at_a_character_boundary_and_say_so() {
        let text = r#"{"content":[{"type":"text","text":"héllo wörld"},{"type":"text","text":"ok"},{"type":"image","data":"AAAA"}]}"#;
        let passed = || {
            let raw = serde_json::value::RawValue::from_string(text.into()).unwrap();
            Answer::Passed(crate::protocol::answer::Passed::new(&raw).unwrap())
        };
        // Built or passed through, a result is cut the same way.
        for mut r in [Answer::Built(serde_json::from_str(text).unwrap()), passed()] {
            trim_result_texts(&mut r, 2).unwrap();
            let r = r.into_value().unwrap();
            let cut = r["content"][0]["text"].as_str().unwrap();
            assert!(
                cut.starts_with("h\n[trimmed by the gateway: 1 of 13 bytes"),
                "{cut}"
            );
            assert_eq!(r["content"][1]["text"], "ok");
            assert_eq!(r["content"][2]["data"], "AAAA");
        }
        // A passed result no longer than the cap holds no text to cut: it stays as it came.
        let mut r = passed();
        trim_result_texts(&mut r, text.len()).unwrap();
        assert!(matches!(&r, Answer::Passed(p) if p.text() == text));
    }
}
