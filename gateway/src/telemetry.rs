//! OpenTelemetry traces, off unless the standard `OTEL_*` variables ask for them: OTLP over
//! HTTP/protobuf to `OTEL_EXPORTER_OTLP_ENDPOINT` (or `..._TRACES_ENDPOINT`), with the service
//! name, resource attributes, headers, timeout and batching the SDK reads from the environment.
//!
//! Spans follow the OpenTelemetry MCP semantic conventions: an HTTP server span per request, an
//! MCP server span per host request (`{mcp.method.name} {target}`, `mcp.session.id`,
//! `gen_ai.tool.name`, `jsonrpc.request.id`, `error.type`), and an MCP client span per upstream
//! call. W3C trace context is taken from the HTTP `traceparent` header and from
//! `params._meta.traceparent` (which wins: it survives hops HTTP does not see), and given to
//! every upstream in `_meta` (and by HTTP upstreams as a header too). The spans have their own
//! target ([`TARGET`]) and level (debug), so with tracing off they are never even created for the
//! log, and the per-call cost stays at one atomic load.

use std::sync::atomic::{AtomicBool, Ordering};

use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::{TraceContextExt, TracerProvider as _};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use serde_json::{Map, Value};
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

/// The target of the spans that are exported.
pub const TARGET: &str = "gateway::otel";

static ON: AtomicBool = AtomicBool::new(false);

/// Whether traces are exported (spans are worth making).
pub fn enabled() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Whether the environment asks for OTLP traces; an error says what is not supported.
fn wanted(env: &dyn Fn(&str) -> Option<String>) -> Result<bool, String> {
    if env("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
        return Ok(false);
    }
    match env("OTEL_TRACES_EXPORTER").as_deref() {
        Some("none") => return Ok(false),
        Some("otlp") | None => {}
        Some(other) => {
            return Err(format!(
                "OTEL_TRACES_EXPORTER={other} is not supported (otlp, none)"
            ))
        }
    }
    let protocol =
        env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL").or_else(|| env("OTEL_EXPORTER_OTLP_PROTOCOL"));
    if let Some(p) = protocol.filter(|p| p != "http/protobuf") {
        return Err(format!(
            "OTLP protocol {p} is not supported (http/protobuf)"
        ));
    }
    Ok(env("OTEL_EXPORTER_OTLP_ENDPOINT").is_some()
        || env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").is_some()
        || env("OTEL_TRACES_EXPORTER").as_deref() == Some("otlp"))
}

/// The exporting layer and its provider (flush it at exit), when the environment asks for it.
pub fn layer<S>() -> Result<Option<(impl Layer<S>, SdkTracerProvider)>, String>
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    if !wanted(&|k| std::env::var(k).ok())? {
        return Ok(None);
    }
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .build()
        .map_err(|e| format!("OTLP exporter: {e}"))?;
    let mut resource = opentelemetry_sdk::Resource::builder().with_attribute(
        opentelemetry::KeyValue::new("service.version", env!("CARGO_PKG_VERSION")),
    );
    if std::env::var_os("OTEL_SERVICE_NAME").is_none() {
        resource = resource.with_service_name("mcp-gateway");
    }
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource.build())
        .build();
    let tracer = provider.tracer("mcp-gateway");
    ON.store(true, Ordering::Relaxed);
    // Only the conventions' attributes: no source locations, thread ids or busy/idle times.
    let layer = tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_location(false)
        .with_threads(false)
        .with_tracked_inactivity(false)
        .with_filter(Targets::new().with_target(TARGET, LevelFilter::DEBUG));
    Ok(Some((layer, provider)))
}

struct Headers<'a>(&'a axum::http::HeaderMap);

impl Extractor for Headers<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }
    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|k| k.as_str()).collect()
    }
}

struct Meta<'a>(&'a Map<String, Value>);

impl Extractor for Meta<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }
    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

struct MetaOut<'a>(&'a mut Map<String, Value>);

impl Injector for MetaOut<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key.to_string(), Value::from(value));
    }
}

/// Makes the trace context of a request's HTTP headers the span's parent.
pub fn parent_from_headers(span: &Span, headers: &axum::http::HeaderMap) {
    let cx = TraceContextPropagator::new().extract(&Headers(headers));
    if cx.span().span_context().is_valid() {
        // Fails only for a span no layer records: it has no parent to keep.
        let _ = span.set_parent(cx);
    }
}

/// Makes the trace context in `params._meta` the span's parent, when there is one.
pub fn parent_from_meta(span: &Span, params: Option<&Map<String, Value>>) {
    let Some(meta) = params
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object)
    else {
        return;
    };
    let cx = TraceContextPropagator::new().extract(&Meta(meta));
    if cx.span().span_context().is_valid() {
        // Fails only for a span no layer records: it has no parent to keep.
        let _ = span.set_parent(cx);
    }
}

/// Writes the span's context into `params._meta` (`traceparent`, `tracestate`).
pub fn inject_meta(span: &Span, params: &mut Map<String, Value>) {
    let cx = span.context();
    if !cx.span().span_context().is_valid() {
        return;
    }
    let meta = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(meta) = meta.as_object_mut() {
        TraceContextPropagator::new().inject_context(&cx, &mut MetaOut(meta));
    }
}

/// What a request names: the tool or prompt, or the resource URI.
pub fn target(params: &Map<String, Value>) -> Option<&str> {
    params
        .get("name")
        .or_else(|| params.get("uri"))
        .and_then(Value::as_str)
}

/// A span's name per the conventions: `{method} {target}`, or the method alone.
pub fn span_name(method: &str, target: Option<&str>) -> String {
    match target {
        Some(t) => format!("{method} {t}"),
        None => method.to_string(),
    }
}

/// `work` run in `span`, the span marked failed when its answer is an error. (A future built
/// from `work`, not an `async fn` around it: an `async fn` holds the future it is given twice
/// over, and made every call's future that much larger whether traces were on or not.)
pub fn traced<T, F>(
    span: Span,
    work: F,
) -> impl std::future::Future<Output = Result<T, crate::protocol::McpError>>
where
    T: crate::metrics::MaybeToolError,
    F: std::future::Future<Output = Result<T, crate::protocol::McpError>>,
{
    use futures::FutureExt;
    use tracing::Instrument;
    let recorded = span.clone();
    work.instrument(span).map(move |out| {
        record_outcome(&recorded, &out);
        out
    })
}

/// Marks the span failed when the answer is an error (`error.type`: the JSON-RPC code) or a
/// tool result with `isError` (`tool_error`).
pub fn record_outcome<T: crate::metrics::MaybeToolError>(
    span: &Span,
    out: &Result<T, crate::protocol::McpError>,
) {
    let error = match out {
        Ok(r) if r.is_tool_error() => "tool_error".to_string(),
        Ok(_) => return,
        Err(e) => e.code.to_string(),
    };
    span.record("error.type", error);
    span.record("otel.status_code", "ERROR");
}

/// The span's trace id (hex), for log lines.
pub fn trace_id(span: &Span) -> Option<String> {
    let cx = span.context();
    let sc = cx.span().span_context().clone();
    sc.is_valid().then(|| sc.trace_id().to_string())
}

#[cfg(test)]
mod tests {
    use super::wanted;

    #[test]
    fn only_the_standard_variables_switch_traces_on() {
        let env = crate::testing::env_of;
        assert_eq!(wanted(&env(&[])), Ok(false));
        assert_eq!(
            wanted(&env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318")])),
            Ok(true)
        );
        assert_eq!(
            wanted(&env(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
                ("OTEL_SDK_DISABLED", "true")
            ])),
            Ok(false)
        );
        assert_eq!(
            wanted(&env(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "x"),
                ("OTEL_TRACES_EXPORTER", "none")
            ])),
            Ok(false)
        );
        assert!(wanted(&env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "x"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        ]))
        .is_err());
    }
}
