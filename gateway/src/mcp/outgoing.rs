//! The params of a request the gateway forwards upstream: the host's, with the gateway's
//! changes (the upstream's own name for the tool, prompt, resource or completion ref, the
//! operator's fixed arguments, the progress token, the 2026-07-28 envelope set or taken off, the
//! answers of a round of questions).
//!
//! Built as a `Map` ([`Outgoing::build`]) they cost a copy of the host's params and of the
//! session's envelope per call, each key and string its own allocation, then a serialisation of
//! the copy. Written ([`Outgoing::write`]), the changes are applied while the host's own
//! members are serialised, and nothing is copied: a Streamable HTTP upstream gets them that
//! way (docs/benchmarks.md, "The upstream's request written once"). Both give the same JSON; the tests hold them to
//! it.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

use crate::protocol::envelope::{CLIENT_INFO, PROTOCOL_VERSION, STATELESS_KEYS};
use crate::upstream::connection::Routing;

const PROGRESS_TOKEN: &str = "progressToken";
/// What a round of questions adds to a 2026-07-28 upstream's request: taken off one to a 2025
/// upstream.
const ROUND_KEYS: [&str; 2] = ["inputResponses", "requestState"];

/// What the dispatcher decided for a call: the host's params and what replaces part of them.
pub struct Outgoing<'a> {
    pub host: Option<&'a Map<String, Value>>,
    /// The member the gateway sets (`name`, `uri` or `ref`) and its upstream value.
    pub replace: (&'static str, Value),
    /// The operator's fixed arguments: they win over the host's (tools only; else empty).
    pub fixed: Map<String, Value>,
}

/// What the connection a call goes out on changes in its params.
pub struct Changes<'a> {
    /// The gateway's progress token for the upstream, in place of the host's.
    pub progress: Option<&'a str>,
    /// `Some`: the 2026-07-28 envelope, set (a 2026-07-28 upstream); `None`: the envelope's
    /// keys taken off (a 2025 upstream).
    pub envelope: Option<&'a Map<String, Value>>,
    /// A round of questions' answers (`None`: the member is taken away).
    pub answered: &'a [(&'a str, Option<Value>)],
}

impl<'a> Outgoing<'a> {
    /// The params as a `Map`, for transports that take one.
    pub fn build(&self, changes: &Changes) -> Map<String, Value> {
        let mut p = self.host.cloned().unwrap_or_default();
        p.insert(self.replace.0.into(), self.replace.1.clone());
        if !self.fixed.is_empty() {
            let args = p
                .entry("arguments")
                .or_insert_with(|| Value::Object(Map::new()));
            if args.is_null() {
                *args = Value::Object(Map::new());
            }
            if let Some(args) = args.as_object_mut() {
                args.extend(self.fixed.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        }
        if let Some(key) = changes.progress {
            p["_meta"][PROGRESS_TOKEN] = Value::from(key);
        }
        match changes.envelope {
            Some(envelope) => set_envelope(&mut p, envelope),
            None => strip_envelope(&mut p),
        }
        for (k, v) in changes.answered {
            match v {
                Some(v) => p.insert((*k).into(), v.clone()),
                None => p.remove(*k),
            };
        }
        p
    }

    /// The params as JSON, appended to `out`: the same as [`build`](Self::build)'s, written
    /// without a copy.
    pub fn write(&self, changes: &Changes, out: &mut Vec<u8>) {
        let params = Written {
            outgoing: self,
            changes,
        };
        // Writing to a Vec cannot fail, and every value is JSON already.
        let _ = serde_json::to_writer(out, &params);
    }

    /// What HTTP headers repeat of the written params of a `method` request.
    pub fn routing(&'a self, method: &'a str, changes: &Changes<'a>) -> Routing<'a> {
        let name = Routing::name_member(method).and_then(|k| {
            if k == self.replace.0 {
                self.replace.1.as_str()
            } else {
                self.host?.get(k)?.as_str()
            }
        });
        let meta = self
            .host
            .and_then(|h| h.get("_meta"))
            .and_then(Value::as_object);
        let version = changes
            .envelope
            .and_then(|e| e.get(PROTOCOL_VERSION))
            .and_then(Value::as_str);
        // A `_meta` that is no object is replaced by the envelope: no trace context then.
        let trace = |k: &str| meta?.get(k)?.as_str();
        Routing {
            method,
            version,
            name,
            traceparent: trace("traceparent"),
            tracestate: trace("tracestate"),
        }
    }
}

/// The 2026-07-28 envelope on the params: its entries win over the host's, except the client's
/// name, which a 2026-07-28 host gives itself.
fn set_envelope(params: &mut Map<String, Value>, envelope: &Map<String, Value>) {
    match params.get_mut("_meta").and_then(Value::as_object_mut) {
        Some(meta) => {
            for (k, v) in envelope.iter() {
                if k == CLIENT_INFO {
                    meta.entry(k.as_str()).or_insert_with(|| v.clone());
                } else {
                    meta.insert(k.clone(), v.clone());
                }
            }
        }
        None => {
            params.insert("_meta".into(), Value::Object(envelope.clone()));
        }
    }
}

/// What only 2026-07-28 servers understand, taken off a request to a 2025 upstream.
fn strip_envelope(params: &mut Map<String, Value>) {
    for k in ROUND_KEYS {
        params.remove(k);
    }
    if let Some(meta) = params.get_mut("_meta").and_then(Value::as_object_mut) {
        for k in STATELESS_KEYS {
            meta.remove(k);
        }
        if meta.is_empty() {
            params.remove("_meta");
        }
    }
}

struct Written<'a, 'b> {
    outgoing: &'b Outgoing<'a>,
    changes: &'b Changes<'b>,
}

impl Serialize for Written<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (o, ch) = (self.outgoing, self.changes);
        let strip = ch.envelope.is_none();
        let mut m = s.serialize_map(None)?;
        let (mut replaced, mut args_done, mut meta_done) = (false, false, false);
        for (k, v) in o.host.into_iter().flatten() {
            let k = k.as_str();
            if k == o.replace.0 {
                m.serialize_entry(k, &o.replace.1)?;
                replaced = true;
            } else if ch.answered.iter().any(|(a, _)| *a == k) || (strip && ROUND_KEYS.contains(&k))
            {
                // Written with the answers below, or taken off.
            } else if k == "arguments" && !o.fixed.is_empty() {
                args_done = true;
                match v {
                    Value::Object(args) => m.serialize_entry(k, &Merged(args, &o.fixed))?,
                    Value::Null => m.serialize_entry(k, &o.fixed)?,
                    // Arguments that are no object are left as the host sent them.
                    other => m.serialize_entry(k, other)?,
                }
            } else if k == "_meta" {
                meta_done = true;
                match (v, ch.envelope) {
                    (Value::Object(meta), envelope) => {
                        let meta = Meta {
                            host: meta,
                            progress: ch.progress,
                            envelope,
                        };
                        if !meta.is_empty() {
                            m.serialize_entry(k, &meta)?;
                        }
                    }
                    (_, Some(envelope)) => m.serialize_entry(k, envelope)?,
                    (other, None) => m.serialize_entry(k, other)?,
                }
            } else {
                m.serialize_entry(k, v)?;
            }
        }
        if !replaced {
            m.serialize_entry(o.replace.0, &o.replace.1)?;
        }
        if !args_done && !o.fixed.is_empty() {
            m.serialize_entry("arguments", &o.fixed)?;
        }
        if let (false, Some(envelope)) = (meta_done, ch.envelope) {
            m.serialize_entry("_meta", envelope)?;
        }
        for (k, v) in ch.answered {
            if let Some(v) = v {
                m.serialize_entry(k, v)?;
            }
        }
        m.end()
    }
}

/// The host's arguments with the operator's fixed ones over them.
struct Merged<'a>(&'a Map<String, Value>, &'a Map<String, Value>);

impl Serialize for Merged<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (host, fixed) = (self.0, self.1);
        let mut m = s.serialize_map(None)?;
        for (k, v) in host {
            m.serialize_entry(k, fixed.get(k).unwrap_or(v))?;
        }
        for (k, v) in fixed {
            if !host.contains_key(k) {
                m.serialize_entry(k, v)?;
            }
        }
        m.end()
    }
}

/// The host's `_meta` with the gateway's progress token and the envelope set or taken off.
struct Meta<'a> {
    host: &'a Map<String, Value>,
    progress: Option<&'a str>,
    envelope: Option<&'a Map<String, Value>>,
}

impl Meta<'_> {
    /// The host's own member `k` as written: `None` when it is taken off or the envelope's
    /// wins.
    fn own<'v>(&self, k: &str, v: &'v Value) -> Option<&'v Value> {
        match self.envelope {
            Some(e) if k != CLIENT_INFO && e.contains_key(k) => None,
            None if STATELESS_KEYS.contains(&k) => None,
            _ => Some(v),
        }
    }

    /// Whether nothing is left (a 2025 upstream's request then has no `_meta`).
    fn is_empty(&self) -> bool {
        self.envelope.is_none()
            && self.progress.is_none()
            && self.host.iter().all(|(k, v)| self.own(k, v).is_none())
    }
}

impl Serialize for Meta<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        let mut progress_done = false;
        for (k, v) in self.host {
            if k == PROGRESS_TOKEN {
                if let Some(p) = self.progress {
                    m.serialize_entry(k, p)?;
                    progress_done = true;
                    continue;
                }
            }
            if let Some(v) = self.own(k, v) {
                m.serialize_entry(k, v)?;
            }
        }
        if let (false, Some(p)) = (progress_done, self.progress) {
            m.serialize_entry(PROGRESS_TOKEN, p)?;
        }
        for (k, v) in self.envelope.into_iter().flatten() {
            if k != CLIENT_INFO || !self.host.contains_key(k) {
                m.serialize_entry(k, v)?;
            }
        }
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => panic!("not an object"),
        }
    }

    fn envelope() -> Map<String, Value> {
        obj(json!({
            PROTOCOL_VERSION: "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"sampling": {}},
            "io.modelcontextprotocol/logLevel": "debug",
            CLIENT_INFO: {"name": "mcp-gateway", "version": "1"},
        }))
    }

    /// Every combination of what the host sent and what the gateway changes: the written
    /// params are the built ones, and the headers' members are the built params' own.
    #[test]
    fn written_params_are_the_built_ones() {
        let hosts = [
            None,
            Some(json!({})),
            Some(json!({"name": "gw_tool", "arguments": {"a": 1, "key": "host's"}})),
            Some(json!({"arguments": null, "name": "x", "extra": [1, {"b": null}]})),
            Some(json!({"name": "x", "arguments": "not an object"})),
            Some(
                json!({"name": "x", "_meta": {"progressToken": 7, "traceparent": "00-ab-cd-01",
                "tracestate": "k=v", CLIENT_INFO: {"name": "host"}, PROTOCOL_VERSION: "old",
                "io.modelcontextprotocol/logLevel": "info"}}),
            ),
            Some(json!({"uri": "file:///a", "_meta": {PROTOCOL_VERSION: "2026-07-28"}})),
            Some(json!({"_meta": "no object", "inputResponses": {"q": 1}, "requestState": "s"})),
            Some(json!({"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a"}})),
        ];
        let replaces = [
            ("name", json!("tool")),
            ("uri", json!("file:///upstream")),
            ("ref", json!({"type": "ref/prompt", "name": "up"})),
        ];
        let fixeds = [
            Map::new(),
            obj(json!({"key": "operator's", "region": "eu"})),
        ];
        let env = envelope();
        let answers = [
            vec![],
            vec![
                ("inputResponses", Some(json!({"q": {"ok": true}}))),
                ("requestState", None),
            ],
        ];
        let mut checked = 0;
        for host in &hosts {
            let host = host.clone().map(obj);
            for replace in &replaces {
                for fixed in &fixeds {
                    for envelope in [None, Some(&env)] {
                        for answered in &answers {
                            let has_progress = host
                                .as_ref()
                                .and_then(|h| h.get("_meta"))
                                .and_then(|m| m.get(PROGRESS_TOKEN))
                                .is_some();
                            let o = Outgoing {
                                host: host.as_ref(),
                                replace: replace.clone(),
                                fixed: fixed.clone(),
                            };
                            let ch = Changes {
                                progress: has_progress.then_some("gwp-1"),
                                envelope,
                                answered,
                            };
                            let built = Value::Object(o.build(&ch));
                            let mut out = Vec::new();
                            o.write(&ch, &mut out);
                            let written: Value = serde_json::from_slice(&out).unwrap();
                            assert_eq!(written, built, "host {host:?} replace {replace:?}");
                            for method in ["tools/call", "resources/read", "completion/complete"] {
                                let r = o.routing(method, &ch);
                                let meta = built.get("_meta");
                                let s =
                                    |k: &str| meta.and_then(|m| m.get(k)).and_then(Value::as_str);
                                let name = match method {
                                    "tools/call" => built.get("name"),
                                    "resources/read" => built.get("uri"),
                                    _ => None,
                                };
                                assert_eq!(
                                    r,
                                    Routing {
                                        method,
                                        version: s(PROTOCOL_VERSION),
                                        name: name.and_then(Value::as_str),
                                        traceparent: s("traceparent"),
                                        tracestate: s("tracestate"),
                                    },
                                    "{method} {built}"
                                );
                            }
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(checked, hosts.len() * 3 * 2 * 2 * 2);
    }
}
