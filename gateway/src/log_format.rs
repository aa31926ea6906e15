//! The server's log lines: the same JSON, byte for byte, as tracing-subscriber's JSON format,
//! written without its detours.
//!
//! At the default level every audited call logs a line. tracing-subscriber's formatter parsed
//! each enclosing span's fields (kept as JSON text) back into a `serde_json::Value` for every
//! line, twice (`span` and `spans`), and wrote every token through an `io::Write` adapter that
//! checks it for UTF-8 again: 49k instructions per line, a fifth of a call's
//! (docs/benchmarks.md, "The log line of every call"). Here a line is built in one buffer, and
//! a span's JSON text goes in as it is, with its name added. Events bridged from the `log`
//! crate, and a span whose fields are not a JSON object, take tracing-subscriber's own path.
//!
//! A span's fields are kept as that JSON text ([`SpanFields`], the same text as
//! tracing-subscriber's `JsonFields`), written once when the span opens: every request opens one.

use std::cell::RefCell;
use std::fmt::{self, Write as _};

use tracing::field::{Field, Visit};
use tracing::span::Record;
use tracing::{Event, Subscriber};
use tracing_subscriber::field::RecordFields;
use tracing_subscriber::fmt::format::{Format, Json, JsonFields, Writer};
use tracing_subscriber::fmt::time::{FormatTime, SystemTime};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields};
use tracing_subscriber::registry::{LookupSpan, SpanRef};

/// tracing-subscriber's JSON lines (timestamp, level, fields, target, span, spans).
pub struct JsonLines<T = SystemTime> {
    timer: T,
    stock: Format<Json, T>,
}

impl JsonLines {
    pub fn new() -> Self {
        Self::with_timer(SystemTime)
    }
}

impl Default for JsonLines {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: FormatTime + Clone> JsonLines<T> {
    fn with_timer(timer: T) -> Self {
        Self {
            stock: Format::default().json().with_timer(timer.clone()),
            timer,
        }
    }
}

thread_local! {
    /// A line being built, and a value's `Debug` text: kept per thread, not allocated per line.
    static SCRATCH: RefCell<(Vec<u8>, String)> = const { RefCell::new((Vec::new(), String::new())) };
}

impl<S, N, T> FormatEvent<S, N> for JsonLines<T>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'w> FormatFields<'w> + 'static,
    T: FormatTime,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        // tracing-log's events (from the `log` crate) name their origin in `log.*` fields,
        // which the stock formatter reads and leaves out.
        if event.metadata().fields().field("log.target").is_some() {
            return self.stock.format_event(ctx, writer, event);
        }
        let done = SCRATCH.with(|scratch| {
            let Ok(mut scratch) = scratch.try_borrow_mut() else {
                // A line logged while this thread builds one (from a `Debug` impl): rare.
                return None;
            };
            let (line, debug) = &mut *scratch;
            line.clear();
            let built = self.build(ctx, event, line, debug);
            Some(match built.and_then(|()| std::str::from_utf8(line).ok()) {
                Some(text) => writer.write_str(text),
                None => Err(fmt::Error),
            })
        });
        match done {
            Some(Ok(())) => Ok(()),
            // A span's fields that are not a JSON object: the stock formatter says so.
            Some(Err(_)) | None => self.stock.format_event(ctx, writer, event),
        }
    }
}

impl<T: FormatTime> JsonLines<T> {
    /// The line into `line`; `None` when a span's fields are not a JSON object.
    fn build<S, N>(
        &self,
        ctx: &FmtContext<'_, S, N>,
        event: &Event<'_>,
        line: &mut Vec<u8>,
        debug: &mut String,
    ) -> Option<()>
    where
        S: Subscriber + for<'a> LookupSpan<'a>,
        N: for<'w> FormatFields<'w> + 'static,
    {
        let meta = event.metadata();
        line.extend_from_slice(b"{\"timestamp\":");
        debug.clear();
        self.timer.format_time(&mut Writer::new(debug)).ok()?;
        string(line, debug);
        line.extend_from_slice(b",\"level\":");
        string(line, meta.level().as_str());
        line.extend_from_slice(b",\"fields\":{");
        let mut fields = Fields {
            line,
            debug,
            first: true,
        };
        event.record(&mut fields);
        line.extend_from_slice(b"},\"target\":");
        string(line, meta.target());
        let current = event
            .parent()
            .and_then(|id| ctx.span(id))
            .or_else(|| ctx.lookup_current());
        if let Some(span) = &current {
            line.extend_from_slice(b",\"span\":");
            span_object::<S, N>(line, span)?;
            line.extend_from_slice(b",\"spans\":[");
            if let Some(leaf) = ctx.lookup_current() {
                for (i, span) in leaf.scope().from_root().enumerate() {
                    if i > 0 {
                        line.push(b',');
                    }
                    span_object::<S, N>(line, &span)?;
                }
            }
            line.push(b']');
        }
        line.extend_from_slice(b"}\n");
        Some(())
    }
}

/// A span as tracing-subscriber writes it: its fields' JSON object with `"name"` added last.
fn span_object<S, N>(line: &mut Vec<u8>, span: &SpanRef<'_, S>) -> Option<()>
where
    S: for<'a> LookupSpan<'a>,
    N: for<'w> FormatFields<'w> + 'static,
{
    let ext = span.extensions();
    let fields = ext.get::<FormattedFields<N>>()?;
    let inner = fields
        .fields
        .as_str()
        .strip_prefix('{')?
        .strip_suffix('}')?;
    line.push(b'{');
    line.extend_from_slice(inner.as_bytes());
    if !inner.trim().is_empty() {
        line.push(b',');
    }
    line.extend_from_slice(b"\"name\":");
    string(line, span.metadata().name());
    line.push(b'}');
    Some(())
}

/// `s` as a JSON string, escaped as serde_json escapes it.
fn string(line: &mut Vec<u8>, s: &str) {
    let _ = serde_json::to_writer(line, s);
}

/// A span's fields as the JSON object tracing-subscriber's `JsonFields` writes: members in name
/// order, the last value of a name kept, `Debug` values as strings (`r#` taken off their names).
/// Fields recorded after the span opened go through `JsonFields` itself.
#[derive(Default)]
pub struct SpanFields;

impl<'w> FormatFields<'w> for SpanFields {
    fn format_fields<R: RecordFields>(&self, mut writer: Writer<'w>, fields: R) -> fmt::Result {
        let mut members = Members::default();
        fields.record(&mut members);
        members.0.sort_by(|a, b| a.0.cmp(b.0));
        let mut text = Vec::with_capacity(128);
        text.push(b'{');
        let mut written = 0;
        for (i, (name, value)) in members.0.iter().enumerate() {
            // Of several values under one name, the last.
            if members.0.get(i + 1).is_some_and(|next| next.0 == *name) {
                continue;
            }
            if written > 0 {
                text.push(b',');
            }
            written += 1;
            string(&mut text, name);
            text.push(b':');
            text.extend_from_slice(value);
        }
        text.push(b'}');
        writer.write_str(std::str::from_utf8(&text).map_err(|_| fmt::Error)?)
    }

    fn add_fields(
        &self,
        current: &'w mut FormattedFields<Self>,
        fields: &Record<'_>,
    ) -> fmt::Result {
        if current.fields.is_empty() {
            return self.format_fields(current.as_writer(), fields);
        }
        let mut theirs = FormattedFields::<JsonFields>::new(std::mem::take(&mut current.fields));
        let out = JsonFields::new().add_fields(&mut theirs, fields);
        current.fields = theirs.fields;
        out
    }
}

/// A span's fields as they are recorded: each name with its value's JSON text.
#[derive(Default)]
struct Members(Vec<(&'static str, Vec<u8>)>);

impl Members {
    fn json(&mut self, name: &'static str, v: impl serde::Serialize) {
        self.0
            .push((name, serde_json::to_vec(&v).unwrap_or_default()));
    }
}

impl Visit for Members {
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.json(field.name(), value);
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.json(field.name(), value);
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.json(field.name(), value);
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.json(field.name(), value);
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.json(field.name(), value);
    }

    fn record_bytes(&mut self, field: &Field, value: &[u8]) {
        self.json(field.name(), value);
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        let name = field.name();
        // tracing-log's `log.*` fields are left out, as `JsonFields` leaves them.
        if name.starts_with("log.") {
            return;
        }
        let name = name.strip_prefix("r#").unwrap_or(name);
        self.json(name, format!("{value:?}"));
    }
}

/// An event's fields, as tracing-serde's map visitor writes them.
struct Fields<'a> {
    line: &'a mut Vec<u8>,
    debug: &'a mut String,
    first: bool,
}

impl Fields<'_> {
    fn key(&mut self, field: &Field) {
        if !self.first {
            self.line.push(b',');
        }
        self.first = false;
        string(self.line, field.name());
        self.line.push(b':');
    }

    fn value(&mut self, field: &Field, v: impl serde::Serialize) {
        self.key(field);
        let _ = serde_json::to_writer(&mut *self.line, &v);
    }
}

impl Visit for Fields<'_> {
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.value(field, value);
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.value(field, value);
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.value(field, value);
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.value(field, value);
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.value(field, value);
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.key(field);
        self.debug.clear();
        let _ = write!(self.debug, "{value:?}");
        string(self.line, self.debug);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use tracing_subscriber::layer::SubscriberExt;

    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Captured {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    #[derive(Clone)]
    struct Fixed;

    impl FormatTime for Fixed {
        fn format_time(&self, w: &mut Writer<'_>) -> fmt::Result {
            w.write_str("2026-11-25T16:00:00.123456Z")
        }
    }

    struct Shown(&'static str);

    impl fmt::Debug for Shown {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
    }

    /// Every kind of field, span and escape, through both formatters: the same bytes.
    #[test]
    fn lines_are_the_bytes_tracing_subscriber_writes() {
        let (ours, stock) = (Captured::default(), Captured::default());
        let (o, s) = (ours.clone(), stock.clone());
        let subscriber = tracing_subscriber::registry()
            .with(
                tracing_subscriber::fmt::layer()
                    .json()
                    .fmt_fields(SpanFields)
                    .event_format(JsonLines::with_timer(Fixed))
                    .with_writer(move || o.clone()),
            )
            .with(
                tracing_subscriber::fmt::layer()
                    .json()
                    .with_timer(Fixed)
                    .with_writer(move || s.clone()),
            );
        tracing::subscriber::with_default(subscriber, || {
            tracing::info!("no span");
            tracing::warn!(
                n = -3i64,
                u = 7u64,
                f = 1.5f64,
                big = 1e300f64,
                b = true,
                "numbers"
            );
            let outer = tracing::info_span!(
                "http",
                method = "POST",
                path = "/mcp",
                trace_id = tracing::field::Empty
            );
            let _o = outer.enter();
            outer.record("trace_id", "abc");
            tracing::info!(target: "audit", principal = "pat:ann", args = "{\"k\":\"v\\n\"}", ctl = "tab\tbell\u{7}é", "audit");
            let inner = tracing::debug_span!("mcp", tool = %"fx__echo");
            let _i = inner.enter();
            tracing::error!(shown = ?Shown("a \"quoted\" debug"), display = %"plain", "in two spans");
            let empty = tracing::info_span!("empty");
            tracing::info!(parent: &empty, "with an explicit parent");
            tracing::info!(parent: None, "with no parent");
            tracing::info!(r#type = "raw", "a raw name");
            let kinds = tracing::info_span!(
                "kinds",
                z = 1u64,
                a = -2i64,
                m = 0.25f64,
                t = false,
                d = ?Shown("dbg \"x\""),
                r#loop = ?Shown("raw"),
                e = "esc\n\"",
                later = tracing::field::Empty,
            );
            let _k = kinds.enter();
            tracing::info!("in a span with every kind of field");
            kinds.record("later", 5i64);
            kinds.record("z", "again");
            tracing::info!("after fields were recorded later");
        });
        let (ours, stock) = (ours.text(), stock.text());
        assert_eq!(ours.lines().count(), 9, "{ours}");
        for (a, b) in ours.lines().zip(stock.lines()) {
            assert_eq!(a, b);
        }
        assert_eq!(ours, stock);
    }
}
