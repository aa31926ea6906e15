//! Tool pinning's rules, without state: the pin hash of a tool definition (what a user relies
//! on when they trust a tool), where a listed tool stands against its pin, what is served for
//! it under each policy, and the check of a call's arguments against an approved input schema.

use serde_json::{Map, Value};

use crate::config::Pinning;

/// The fields a pin covers: what hosts show users and models read. Other fields (`icons`,
/// `_meta`, `execution`) may change without a review.
pub const PINNED_FIELDS: [&str; 6] = [
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
];

/// Where the key of the flag a served definition carries under `warn` goes in its `_meta`.
pub const FLAG: &str = "dev.mcp-gateway/pinning";

/// sha256 (hex) of the pinned fields, with object keys in sorted order (an upstream that
/// reorders keys has changed nothing).
pub fn pin_hash(definition: &Value) -> String {
    let mut pinned = Map::new();
    for f in PINNED_FIELDS {
        if let Some(v) = definition.get(f) {
            pinned.insert(f.to_string(), sorted(v));
        }
    }
    let text = serde_json::to_string(&Value::Object(pinned)).expect("JSON");
    registry::hash::text_hash(&text)
}

fn sorted(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&m[k])))
                    .collect(),
            )
        }
        Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// A listed tool against its pin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// As approved.
    Approved,
    /// Changed since approved, not reviewed yet.
    Changed,
    /// Never approved, not reviewed yet.
    New,
    /// Changed, and this change was rejected (the approved definition stands).
    RejectedChange,
    /// Never approved, and this definition was rejected.
    RejectedNew,
}

impl Standing {
    /// `approved_hash`: the pin's (none when never approved); `rejected_hash`: the change an
    /// admin rejected last.
    pub fn of(current: &str, approved_hash: Option<&str>, rejected_hash: Option<&str>) -> Self {
        let rejected = rejected_hash == Some(current);
        match approved_hash {
            Some(a) if a == current => Standing::Approved,
            Some(_) if rejected => Standing::RejectedChange,
            Some(_) => Standing::Changed,
            None if rejected => Standing::RejectedNew,
            None => Standing::New,
        }
    }

    /// Waiting for an admin.
    pub fn pending(self) -> bool {
        matches!(self, Standing::Changed | Standing::New)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Standing::Approved => "approved",
            Standing::Changed => "changed",
            Standing::New => "new",
            Standing::RejectedChange => "rejected_change",
            Standing::RejectedNew => "rejected_new",
        }
    }
}

/// What hosts get of a listed tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Serve {
    /// The definition the upstream lists, untouched.
    Listed,
    /// The listed definition, with a flag in its `_meta` saying how it stands.
    Flagged,
    /// The approved definition instead of the listed one.
    Approved,
    /// Nothing: the tool is not listed, and calling it answers as for an unknown tool.
    Hidden,
}

/// What `policy` serves for a tool that stands as `standing`.
pub fn serve(policy: Pinning, standing: Standing) -> Serve {
    match (policy, standing) {
        (Pinning::Off, _) | (_, Standing::Approved) => Serve::Listed,
        (Pinning::Warn, _) => Serve::Flagged,
        (Pinning::Hold, Standing::Changed | Standing::RejectedChange) => Serve::Approved,
        (Pinning::Hold, Standing::New | Standing::RejectedNew) => Serve::Hidden,
    }
}

/// The listed definition with the flag of its standing in `_meta`.
pub fn flagged(definition: &Value, standing: Standing) -> Value {
    let mut d = definition.clone();
    if let Some(obj) = d.as_object_mut() {
        let meta = obj
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(meta) = meta.as_object_mut() {
            meta.insert(
                FLAG.into(),
                serde_json::json!({ "status": standing.as_str(), "approved": false }),
            );
        }
    }
    d
}

/// Checks a call's arguments against an approved input schema, at its top level: an object,
/// its `required` properties present, each property's `type` and `enum`, and none outside
/// `properties` unless the schema says `additionalProperties` (true or a schema). Stricter than
/// JSON Schema's default on purpose: the call goes to a tool that now asks for something else,
/// and an argument the approved definition never named is what a rug pull smuggles out. Nested
/// schemas are the upstream's to check. The error says what is wrong.
pub fn check_arguments(schema: &Value, arguments: Option<&Value>) -> Result<(), String> {
    let empty = Value::Object(Map::new());
    let args = arguments.unwrap_or(&empty);
    let Some(args) = args.as_object() else {
        return Err("arguments must be an object".into());
    };
    let props = schema.get("properties").and_then(Value::as_object);
    for r in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !args.contains_key(r) {
            return Err(format!("missing required argument {r:?}"));
        }
    }
    let closed = matches!(
        schema.get("additionalProperties"),
        None | Some(Value::Bool(false)) | Some(Value::Null)
    );
    for (k, v) in args {
        let Some(p) = props.and_then(|p| p.get(k)) else {
            if closed {
                return Err(format!(
                    "unexpected argument {k:?}: the approved definition does not take it"
                ));
            }
            continue;
        };
        if let Some(t) = p.get("type") {
            let types: Vec<&str> = match t {
                Value::String(s) => vec![s.as_str()],
                Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            if !types.is_empty() && !types.iter().any(|t| is_type(v, t)) {
                return Err(format!(
                    "argument {k:?} must be of type {}",
                    types.join(" or ")
                ));
            }
        }
        if let Some(allowed) = p.get("enum").and_then(Value::as_array) {
            if !allowed.contains(v) {
                return Err(format!(
                    "argument {k:?} must be one of {}",
                    Value::from(allowed.clone())
                ));
            }
        }
    }
    Ok(())
}

fn is_type(v: &Value, t: &str) -> bool {
    match t {
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "null" => v.is_null(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
        // A type this check does not know is not held against the call.
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_hash_covers_what_users_rely_on_and_not_key_order() {
        let a = json!({"name": "t", "description": "Adds", "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}});
        let reordered = json!({"inputSchema": {"properties": {"b": {"type": "number"}, "a": {"type": "number"}}, "type": "object"}, "description": "Adds", "name": "t"});
        assert_eq!(pin_hash(&a), pin_hash(&reordered));
        let mut icons = a.clone();
        icons["icons"] = json!([{"src": "https://x/i.png"}]);
        icons["_meta"] = json!({"k": 1});
        assert_eq!(pin_hash(&a), pin_hash(&icons), "fields outside the pin");
        for (field, value) in [
            (
                "description",
                json!("Adds, and mails your keys to evil.example"),
            ),
            ("title", json!("Add")),
            ("inputSchema", json!({"type": "object"})),
            ("outputSchema", json!({"type": "object"})),
            ("annotations", json!({"destructiveHint": true})),
        ] {
            let mut changed = a.clone();
            changed[field] = value;
            assert_ne!(pin_hash(&a), pin_hash(&changed), "{field}");
        }
    }

    #[test]
    fn each_policy_serves_what_it_promises() {
        use Standing::*;
        let case =
            |policy, approved, rejected| serve(policy, Standing::of("now", approved, rejected));
        for policy in [Pinning::Off, Pinning::Warn, Pinning::Hold] {
            assert_eq!(case(policy, Some("now"), None), Serve::Listed);
        }
        assert_eq!(case(Pinning::Off, Some("old"), None), Serve::Listed);
        assert_eq!(case(Pinning::Warn, Some("old"), None), Serve::Flagged);
        assert_eq!(case(Pinning::Warn, None, None), Serve::Flagged);
        assert_eq!(case(Pinning::Hold, Some("old"), None), Serve::Approved);
        assert_eq!(
            case(Pinning::Hold, Some("old"), Some("now")),
            Serve::Approved
        );
        assert_eq!(case(Pinning::Hold, None, None), Serve::Hidden);
        assert_eq!(case(Pinning::Hold, None, Some("now")), Serve::Hidden);
        assert!(Changed.pending() && New.pending());
        assert!(!RejectedChange.pending() && !RejectedNew.pending() && !Approved.pending());
        // A rejection is of one definition: the next change is pending again.
        assert_eq!(Standing::of("newer", Some("old"), Some("now")), Changed);
    }

    #[test]
    fn a_flag_goes_into_meta_and_keeps_what_was_there() {
        let d = json!({"name": "t", "_meta": {"k": 1}});
        let f = flagged(&d, Standing::Changed);
        assert_eq!(f["_meta"]["k"], 1);
        assert_eq!(f["_meta"][FLAG]["status"], "changed");
    }

    #[test]
    fn arguments_are_checked_against_the_approved_schema() {
        let schema = json!({"type": "object", "additionalProperties": false, "required": ["path"],
            "properties": {"path": {"type": "string"}, "n": {"type": "integer"},
                           "mode": {"enum": ["r", "w"]}, "x": {"type": ["string", "null"]}}});
        assert!(check_arguments(
            &schema,
            Some(&json!({"path": "/a", "n": 2, "mode": "r", "x": null}))
        )
        .is_ok());
        let err = |args| check_arguments(&schema, Some(&args)).unwrap_err();
        assert!(err(json!({})).contains("missing required argument \"path\""));
        assert!(err(json!({"path": "/a", "exfiltrate": true}))
            .contains("unexpected argument \"exfiltrate\""));
        assert!(err(json!({"path": 1})).contains("must be of type string"));
        assert!(err(json!({"path": "/a", "n": 1.5})).contains("integer"));
        assert!(err(json!({"path": "/a", "mode": "x"})).contains("one of"));
        assert!(check_arguments(&schema, Some(&json!([1]))).is_err());
        // Only a schema that says so takes what it does not name.
        let silent = json!({"type": "object", "properties": {}});
        assert!(check_arguments(&silent, Some(&json!({"anything": 1}))).is_err());
        assert!(check_arguments(&silent, None).is_ok());
        let open = json!({"type": "object", "additionalProperties": true});
        assert!(check_arguments(&open, Some(&json!({"anything": 1}))).is_ok());
        let typed = json!({"type": "object", "additionalProperties": {"type": "string"}});
        assert!(check_arguments(&typed, Some(&json!({"anything": "x"}))).is_ok());
    }
}
