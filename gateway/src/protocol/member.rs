//! One member of a JSON object, read without hashing its name when the object is small.
//!
//! `serde_json`'s maps (with `preserve_order`) hash every key looked up with SipHash: about 175
//! instructions for a key like `params`, and the gateway looked up 41 members per proxied call
//! (docs/benchmarks.md, "SSE answers on kept connections"). A JSON-RPC message has at most five members and most
//! params a handful; for those a scan of the members in order, which compares lengths first,
//! costs less than the hash alone.

use serde_json::{Map, Value};

/// Up to this many members an object is scanned rather than hashed into.
const SCAN_UP_TO: usize = 8;

pub trait Member {
    /// The member `key`; `None` when it is absent or `self` is not an object.
    fn member(&self, key: &str) -> Option<&Value>;
}

impl Member for Map<String, Value> {
    #[inline]
    fn member(&self, key: &str) -> Option<&Value> {
        if self.len() <= SCAN_UP_TO {
            self.iter().find(|(k, _)| k.as_str() == key).map(|(_, v)| v)
        } else {
            self.get(key)
        }
    }
}

impl Member for Value {
    #[inline]
    fn member(&self, key: &str) -> Option<&Value> {
        self.as_object()?.member(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_what_get_finds_in_small_and_large_objects() {
        let mut large = Map::new();
        for i in 0..40 {
            large.insert(format!("k{i}"), json!(i));
        }
        let objects = [
            json!({}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}}),
            json!({"a": 1, "ab": 2, "abc": 3, "b": null}),
            Value::Object(large),
        ];
        let keys = [
            "jsonrpc", "id", "method", "params", "a", "ab", "abc", "b", "k0", "k39", "k40", "",
        ];
        for o in &objects {
            for k in keys {
                assert_eq!(o.member(k), o.get(k), "{k} in {o}");
            }
        }
        assert_eq!(json!([1, 2]).member("0"), None);
        assert_eq!(json!("params").member("params"), None);
    }
}
