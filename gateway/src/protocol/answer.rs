//! A call's result on its way back to the host: built by the gateway ([`Answer::Built`]), or an
//! upstream's result passed through as the upstream's own JSON text ([`Passed`]), which is
//! neither parsed into a tree nor written again; and the response that carries either to the
//! host ([`Reply`]).

use std::borrow::Cow;

use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::Value;

use super::{McpError, Member};

/// An upstream's result kept as its JSON text, with the two members the gateway reads of it.
#[derive(Debug)]
pub struct Passed {
    text: Box<RawValue>,
    tool_error: bool,
    input_required: bool,
    /// Whether the result says its `resultType` (2026-07-28).
    typed: bool,
    /// The text ends with [`LAST`], which is not written (a 2025 host's result): cut where it
    /// is written out, without a second copy or a parse.
    tail_cut: bool,
}

/// `resultType` as the last member, as the gateway itself writes it (see `completed`) and as
/// 2026-07-28 upstreams most often do.
const LAST: &str = ",\"resultType\":\"complete\"}";

/// What the gateway reads of a result; every other member is skipped, not built.
#[derive(Deserialize)]
struct Read<'a> {
    #[serde(rename = "isError", default)]
    is_error: Option<bool>,
    #[serde(rename = "resultType", default, borrow)]
    result_type: Option<Cow<'a, str>>,
}

impl Passed {
    /// `text` as a passed result: when it is an object whose `isError` and `resultType` read
    /// plainly. Anything else (`None`) goes the built way, which reads it as it always did.
    pub fn new(text: &RawValue) -> Option<Self> {
        let read: Read = super::jsonrpc::read_object(text.get().as_bytes())?;
        Some(Self {
            text: text.to_owned(),
            tool_error: read.is_error == Some(true),
            input_required: read.result_type.as_deref() == Some("input_required"),
            typed: read.result_type.is_some(),
            tail_cut: false,
        })
    }

    /// The result of `body` when `body` is exactly a JSON-RPC response to request `id` with a
    /// result that reads plainly (see [`new`](Self::new)); anything else (`None`: a batch, an
    /// error, another id, members a response does not have) goes the built way.
    pub fn from_response(body: &[u8], id: i64) -> Option<Self> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Response<'a> {
            jsonrpc: &'a str,
            id: i64,
            #[serde(borrow)]
            result: &'a RawValue,
        }
        let r: Response = super::jsonrpc::read_object(body)?;
        if r.jsonrpc != "2.0" || r.id != id {
            return None;
        }
        Self::new(r.result)
    }

    /// The result without `resultType`, cut out of its text by a scan (no parse, no tree: every
    /// call to a 2026-07-28 upstream from a 2025 host takes this way); back unchanged (`Err`)
    /// when the scan does not find it plainly written, or a `_meta` names the server (the
    /// tree's way then).
    fn without_2026_members(self) -> Result<Self, Self> {
        if let Some(body) = self.text.get().strip_suffix(LAST) {
            if !names_server(body) {
                // Cut where it is written out: no copy of the text.
                return Ok(Self {
                    typed: false,
                    tail_cut: true,
                    ..self
                });
            }
        }
        let Some(cut) =
            cut_member(self.text.get(), "resultType").and_then(|t| RawValue::from_string(t).ok())
        else {
            return Err(self);
        };
        Ok(Self {
            text: cut,
            typed: false,
            ..self
        })
    }

    /// The result's text as it is written out, in two pieces: the upstream's text, less the
    /// [`LAST`] member when it is cut, and what closes it then.
    fn written(&self) -> (&str, &str) {
        let t = self.text.get();
        match self.tail_cut {
            true => (&t[..t.len() - LAST.len()], "}"),
            false => (t, ""),
        }
    }

    /// The result's JSON text, as it is written out.
    pub fn text(&self) -> Cow<'_, str> {
        match self.written() {
            (t, "") => t.into(),
            (body, end) => format!("{body}{end}").into(),
        }
    }

    /// The result as a 2026-07-28 host must get it: with a `resultType`, `complete` unless the
    /// upstream said otherwise (a 2025 upstream says none).
    pub fn completed(self) -> Self {
        if self.tail_cut {
            // Its text says `complete` already.
            return Self {
                typed: true,
                tail_cut: false,
                ..self
            };
        }
        if self.typed {
            return self;
        }
        const MEMBER: &str = "\"resultType\":\"complete\"";
        // An object's text starts with `{` (checked when it was passed) and ends with `}`.
        let Some(body) = self.text.get().trim_end().strip_suffix('}') else {
            return self;
        };
        let body = body.trim_end();
        let sep = if body.len() == 1 { "" } else { "," };
        let text = format!("{body}{sep}{MEMBER}}}");
        Self {
            text: RawValue::from_string(text).expect("an object with one member more"),
            typed: true,
            ..self
        }
    }

    /// The result as a tree. Reading a raw value has no depth limit and a tree has one, so a
    /// result nested deeper than serde_json builds is an error here.
    pub fn to_value(&self) -> Result<Value, McpError> {
        serde_json::from_str(&self.text()).map_err(|e| {
            McpError::internal(format!("the upstream's result could not be read: {e}"))
        })
    }
}

/// A 2026-07-28 result's `_meta` key naming the server that answered.
const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// `object` (an object's JSON text) without its top-level member `key`, found by a scan that
/// follows strings and nesting; `None` if no such member is written without escapes in its
/// name, or if there is a `_meta` that names the server (see [`strip_2026`]).
fn cut_member(object: &str, key: &str) -> Option<String> {
    let b = object.as_bytes();
    let (mut depth, mut i) = (0usize, 0usize);
    // At depth 1: whether a member's name is next, the comma before the member being read, the
    // member to cut (its start and the comma before it) once its name is read, and what to
    // splice once its value has ended.
    let (mut expect_key, mut comma) = (false, None);
    let mut cutting: Option<(usize, Option<usize>)> = None;
    let mut spliced: Option<String> = None;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let start = i;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                if depth == 1 && expect_key {
                    expect_key = false;
                    let name = &object[start + 1..i.min(b.len())];
                    if name == key && spliced.is_none() {
                        cutting = Some((start, comma));
                    } else if name == "_meta" && names_server(&object[i..]) {
                        return None;
                    }
                }
            }
            b'{' | b'[' => {
                depth += 1;
                if depth == 1 {
                    expect_key = true;
                }
            }
            b'}' | b']' => {
                if depth == 1 {
                    if let Some((start, comma)) = cutting.take() {
                        spliced = Some(splice(object, start, comma, i, None));
                    }
                    return spliced;
                }
                depth = depth.checked_sub(1)?;
            }
            b',' if depth == 1 => {
                if let Some((start, comma)) = cutting.take() {
                    spliced = Some(splice(object, start, comma, i, Some(i)));
                }
                expect_key = true;
                comma = Some(i);
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// `object` without the member from `start` to `end` (its value's end: the next comma or the
/// closing brace), and one comma: the one before it, else the one after it.
fn splice(
    object: &str,
    start: usize,
    before: Option<usize>,
    end: usize,
    after: Option<usize>,
) -> String {
    let (from, to) = match (before, after) {
        (Some(c), _) => (c, end),
        (None, Some(c)) => (start, c + 1),
        (None, None) => (start, end),
    };
    let mut out = String::with_capacity(object.len() - (to - from));
    out.push_str(&object[..from]);
    out.push_str(&object[to..]);
    out
}

/// Whether `text` holds the `_meta` key of the server's identity (a search with a prepared
/// needle: the standard one set itself up again on every result).
fn names_server(text: &str) -> bool {
    static FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(SERVER_INFO));
    FINDER.find(text.as_bytes()).is_some()
}

/// `v` without `resultType` and the `_meta` serverInfo (an empty `_meta` goes too).
fn strip_2026(mut v: Value) -> Value {
    if let Some(m) = v.as_object_mut() {
        m.remove("resultType");
        if let Some(meta) = m.get_mut("_meta").and_then(Value::as_object_mut) {
            meta.remove(SERVER_INFO);
            if meta.is_empty() {
                m.remove("_meta");
            }
        }
    }
    v
}

/// The result of a call the gateway answers.
#[derive(Debug)]
pub enum Answer {
    Built(Value),
    Passed(Passed),
}

impl From<Value> for Answer {
    fn from(v: Value) -> Self {
        Self::Built(v)
    }
}

impl Answer {
    /// A tool's own failure (`isError: true`).
    pub fn is_tool_error(&self) -> bool {
        match self {
            Self::Built(v) => v.member("isError").and_then(Value::as_bool) == Some(true),
            Self::Passed(p) => p.tool_error,
        }
    }

    /// A 2026-07-28 `InputRequiredResult`: the upstream asks questions before it answers.
    pub fn is_input_required(&self) -> bool {
        match self {
            Self::Built(v) => {
                v.member("resultType").and_then(Value::as_str) == Some("input_required")
            }
            Self::Passed(p) => p.input_required,
        }
    }

    /// The result as a 2025 host must get it: without what only 2026-07-28 results carry, a
    /// `resultType` and the upstream's `_meta` serverInfo (a 2026-07-28 upstream's result
    /// passed through had both). Other results pass untouched, unread; a passed one that has
    /// them loses them in its text, without a tree being built (every call to a 2026-07-28
    /// upstream takes this way).
    pub fn sessionful(self) -> Result<Self, McpError> {
        match self {
            // Only a 2026-07-28 upstream says `resultType`, and only one says serverInfo.
            Self::Passed(p) if p.typed => match p.without_2026_members() {
                Ok(p) => Ok(Self::Passed(p)),
                Err(p) => Self::Passed(p)
                    .into_value()
                    .map(|v| Self::Built(strip_2026(v))),
            },
            Self::Built(v)
                if v.member("resultType").is_some()
                    || v.member("_meta")
                        .and_then(|m| m.member(SERVER_INFO))
                        .is_some() =>
            {
                Ok(Self::Built(strip_2026(v)))
            }
            other => Ok(other),
        }
    }

    /// The result as a tree, for the few paths that read or change more of it.
    pub fn into_value(self) -> Result<Value, McpError> {
        match self {
            Self::Built(v) => Ok(v),
            Self::Passed(p) => p.to_value(),
        }
    }

    /// The result as a tree to change, built from a passed text first.
    pub fn built_mut(&mut self) -> Result<&mut Value, McpError> {
        if let Self::Passed(p) = self {
            *self = Self::Built(p.to_value()?);
        }
        match self {
            Self::Built(v) => Ok(v),
            Self::Passed(_) => unreachable!("built above"),
        }
    }
}

/// The response to a host's request: a JSON-RPC message built whole, or a passed result under
/// the host's id, written around the upstream's text.
#[derive(Debug)]
pub enum Reply {
    Message(Value),
    Passed { id: Value, result: Passed },
}

impl From<Value> for Reply {
    fn from(v: Value) -> Self {
        Self::Message(v)
    }
}

impl Reply {
    /// The response to request `id` with `out`.
    pub fn new(id: Value, out: Result<Answer, McpError>) -> Self {
        match out {
            Ok(Answer::Passed(result)) => Self::Passed { id, result },
            Ok(Answer::Built(r)) => Self::Message(super::jsonrpc::result(id, r)),
            Err(e) => Self::Message(e.to_message(id)),
        }
    }

    /// The response as JSON text, written into a buffer of about its size (a passed result's
    /// length is known).
    pub fn to_json(&self) -> String {
        if let Self::Passed { id, result } = self {
            if result.tail_cut {
                // What `serialize` writes, with the result's last member left out in place.
                let (body, end) = result.written();
                let mut out = String::with_capacity(body.len() + 48);
                out.push_str("{\"jsonrpc\":\"2.0\",\"id\":");
                out.push_str(&serde_json::to_string(id).unwrap_or_default());
                out.push_str(",\"result\":");
                out.push_str(body);
                out.push_str(end);
                out.push('}');
                return out;
            }
        }
        let size = match self {
            Self::Passed { result, .. } => result.text().len() + 48,
            Self::Message(_) => 128,
        };
        let mut out = Vec::with_capacity(size);
        let _ = serde_json::to_writer(&mut out, self);
        String::from_utf8(out).unwrap_or_default()
    }

    /// The error this response carries, if it is an error response.
    pub fn error(&self) -> Option<McpError> {
        match self {
            Self::Message(m) => McpError::from_response(m),
            Self::Passed { .. } => None,
        }
    }
}

impl Serialize for Reply {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Message(m) => m.serialize(s),
            Self::Passed { id, result } => {
                let mut m = s.serialize_map(Some(3))?;
                m.serialize_entry("jsonrpc", "2.0")?;
                m.serialize_entry("id", id)?;
                match result.tail_cut {
                    // An SSE event's answer: written once more, cut.
                    true => match RawValue::from_string(result.text().into_owned()) {
                        Ok(cut) => m.serialize_entry("result", &cut)?,
                        Err(_) => m.serialize_entry("result", &result.text)?,
                    },
                    false => m.serialize_entry("result", &result.text)?,
                }
                m.end()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_result_is_written_alike_as_json_and_as_an_event() {
        for text in [
            r#"{"content":[],"resultType":"complete"}"#,
            r#"{"resultType":"complete","content":[]}"#,
        ] {
            let p = Passed::new(&RawValue::from_string(text.into()).unwrap()).unwrap();
            let a = Answer::Passed(p).sessionful().unwrap();
            let r = Reply::new(serde_json::json!("x\"y"), Ok(a));
            assert_eq!(r.to_json(), serde_json::to_string(&r).unwrap());
            assert_eq!(
                r.to_json(),
                r#"{"jsonrpc":"2.0","id":"x\"y","result":{"content":[]}}"#
            );
        }
    }

    #[test]
    fn a_2025_host_gets_no_2026_members() {
        let passed = |t: &str| {
            Answer::Passed(Passed::new(&RawValue::from_string(t.into()).unwrap()).unwrap())
        };
        let text = |a: Answer| match a.sessionful().unwrap() {
            Answer::Passed(p) => p.text().to_string(),
            Answer::Built(v) => v.to_string(),
        };
        assert_eq!(
            text(passed(
                r#"{"content":[],"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"x"},"k":1}}"#
            )),
            r#"{"content":[],"_meta":{"k":1}}"#
        );
        assert_eq!(
            text(passed(
                r#"{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{}},"resultType":"complete"}"#
            )),
            r#"{"content":[]}"#
        );
        assert_eq!(
            text(passed(
                r#"{"resultType":"complete","content":[{"t":"a,}\"b"}]}"#
            )),
            r#"{"content":[{"t":"a,}\"b"}]}"#
        );
        assert_eq!(text(passed(r#"{ "resultType" : "complete" }"#)), "{ }");
        assert_eq!(
            text(passed(
                r#"{"a":{"resultType":1},"resultType":"complete","b":[1,{"c":2}]}"#
            )),
            r#"{"a":{"resultType":1},"b":[1,{"c":2}]}"#
        );
        // A name written with escapes goes the tree's way, to the same end.
        assert_eq!(
            text(passed(r#"{"result\u0054ype":"complete","a":1}"#)),
            r#"{"a":1}"#
        );
        // Untouched, unread: the upstream's own text.
        assert_eq!(text(passed(r#"{"content": [ ]}"#)), r#"{"content": [ ]}"#);
        assert_eq!(
            text(Answer::Built(
                serde_json::json!({"resultType": "complete", "a": 1})
            )),
            r#"{"a":1}"#
        );
    }
    use serde_json::json;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_string()).unwrap()
    }

    #[test]
    fn a_passed_result_reads_as_its_tree_does() {
        // Each result as the built way reads it: the tree's `isError` and `resultType`.
        for text in [
            r#"{"content":[{"type":"text","text":"hi"}]}"#,
            r#"{"content":[],"isError":true}"#,
            r#"{"content":[],"isError":false}"#,
            r#"{"isError":null}"#,
            r#"{"resultType":"input_required","inputRequests":{}}"#,
            r#"{"resultType":"complete"}"#,
            r#"{"resultType":"input_\u0072equired"}"#,
            r#"{"nested":{"isError":true,"resultType":"input_required"}}"#,
            r#"{"content":[{"type":"text","text":"\"isError\":true"}]}"#,
        ] {
            let built = Answer::Built(serde_json::from_str(text).unwrap());
            let passed = Answer::Passed(Passed::new(&raw(text)).expect(text));
            assert_eq!(passed.is_tool_error(), built.is_tool_error(), "{text}");
            assert_eq!(
                passed.is_input_required(),
                built.is_input_required(),
                "{text}"
            );
            // The host gets the upstream's own text.
            assert_eq!(
                Reply::new(json!(1), Ok(passed)).to_json(),
                format!(r#"{{"jsonrpc":"2.0","id":1,"result":{text}}}"#)
            );
        }
    }

    #[test]
    fn what_does_not_read_plainly_goes_the_built_way() {
        for text in [
            r#"[true,"input_required"]"#,
            r#""text""#,
            r#"{"isError":"true"}"#,
            r#"{"isError":true,"isError":false}"#,
            r#"{"resultType":7}"#,
        ] {
            assert!(Passed::new(&raw(text)).is_none(), "{text}");
        }
    }

    #[test]
    fn only_the_plain_response_to_the_request_is_passed() {
        let ok = br#" {"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#;
        assert_eq!(
            Passed::from_response(ok, 7).unwrap().text(),
            r#"{"content":[]}"#
        );
        for (body, why) in [
            (
                &br#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#[..],
                "another id",
            ),
            (
                br#"{"jsonrpc":"1.0","id":8,"result":{}}"#,
                "not JSON-RPC 2.0",
            ),
            (
                br#"{"jsonrpc":"2.0","id":8,"error":{"code":1,"message":"m"}}"#,
                "an error",
            ),
            (
                br#"{"jsonrpc":"2.0","id":8,"result":{},"error":{}}"#,
                "result and error",
            ),
            (br#"{"jsonrpc":"2.0","id":"8","result":{}}"#, "a string id"),
            (br#"["2.0",8,{}]"#, "an array"),
            (br#"[{"jsonrpc":"2.0","id":8,"result":{}}]"#, "a batch"),
            (
                br#"{"jsonrpc":"2.0","id":8,"result":[]}"#,
                "a result that is no object",
            ),
            (
                br#"{"jsonrpc":"2.0","id":8,"result":{}} x"#,
                "trailing text",
            ),
            (
                br#"{"jsonrpc":"2.0","method":"m","id":8,"result":{}}"#,
                "a request's member",
            ),
        ] {
            assert!(Passed::from_response(body, 8).is_none(), "{why}");
        }
    }

    #[test]
    fn a_completed_result_says_complete_unless_it_says_its_type() {
        for (text, completed) in [
            (
                r#"{"content":[]}"#,
                r#"{"content":[],"resultType":"complete"}"#,
            ),
            ("{}", r#"{"resultType":"complete"}"#),
            ("{ \n}", r#"{"resultType":"complete"}"#),
            (r#"{"a":1 }"#, r#"{"a":1,"resultType":"complete"}"#),
            (
                r#"{"resultType":"complete"}"#,
                r#"{"resultType":"complete"}"#,
            ),
            (
                r#"{"resultType":"other","a":{}}"#,
                r#"{"resultType":"other","a":{}}"#,
            ),
        ] {
            let p = Passed::new(&raw(text)).unwrap().completed();
            assert_eq!(p.text(), completed, "{text}");
            // What a tree would make of it.
            let mut built: Value = serde_json::from_str(text).unwrap();
            if built.get("resultType").is_none() {
                built["resultType"] = json!("complete");
            }
            assert_eq!(p.to_value().unwrap(), built, "{text}");
        }
    }

    #[test]
    fn a_reply_writes_the_host_id_around_the_passed_text() {
        let result = Passed::new(&raw(r#"{"content":[],"b":1.50,"a":"\u00e9"}"#)).unwrap();
        let reply = Reply::new(json!("req-1"), Ok(Answer::Passed(result)));
        assert!(reply.error().is_none());
        assert_eq!(serde_json::to_string(&reply).unwrap(), reply.to_json());
        assert_eq!(
            reply.to_json(),
            r#"{"jsonrpc":"2.0","id":"req-1","result":{"content":[],"b":1.50,"a":"\u00e9"}}"#
        );
        let built = Reply::new(json!(2), Ok(Answer::Built(json!({"content": []}))));
        assert_eq!(
            serde_json::to_value(&built).unwrap(),
            json!({"jsonrpc": "2.0", "id": 2, "result": {"content": []}})
        );
        let failed = Reply::new(json!(3), Err(McpError::invalid_params("no")));
        assert_eq!(failed.error().map(|e| e.code), Some(-32602));
    }

    #[test]
    fn a_result_deeper_than_a_tree_is_an_error_when_built() {
        let deep = format!("{{\"a\":{}1{}}}", "[".repeat(200), "]".repeat(200));
        let p = Passed::new(&raw(&deep)).expect("an object that reads plainly");
        assert!(p.to_value().is_err());
    }
}
