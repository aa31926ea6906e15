//! Admin request bodies: JSON in which no object names a key twice. serde takes the last of
//! duplicates, so `{"tools": ["echo"], "tools": ["*"]}` granted everything while a reviewer
//! reading the request (or the audit row) saw `["echo"]` first.

use axum::extract::{FromRequest, Request};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::de::{Deserialize, Deserializer, Error, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::Value;

use super::error::AdminError;

/// A JSON body with no duplicate keys at any depth (else 400 naming the key).
pub struct Body(pub Value);

impl<S: Send + Sync> FromRequest<S> for Body {
    type Rejection = Response;

    async fn from_request(req: Request, state: &S) -> Result<Self, Response> {
        // axum's own checks first: content type, syntax, size.
        let Json(raw) = Json::<Box<RawValue>>::from_request(req, state)
            .await
            .map_err(IntoResponse::into_response)?;
        let bad = |e: serde_json::Error| {
            AdminError::BadRequest(format!("invalid JSON body: {e}")).into_response()
        };
        serde_json::from_str::<Unique>(raw.get()).map_err(bad)?;
        serde_json::from_str(raw.get()).map(Body).map_err(bad)
    }
}

/// Any JSON value, refused when an object in it has a key twice.
#[derive(Debug)]
struct Unique;

impl<'de> Deserialize<'de> for Unique {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UniqueVisitor)
    }
}

struct UniqueVisitor;

impl<'de> Visitor<'de> for UniqueVisitor {
    type Value = Unique;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("JSON")
    }

    fn visit_bool<E: Error>(self, _: bool) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_i64<E: Error>(self, _: i64) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_u64<E: Error>(self, _: u64) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_f64<E: Error>(self, _: f64) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_str<E: Error>(self, _: &str) -> Result<Unique, E> {
        Ok(Unique)
    }
    fn visit_unit<E: Error>(self) -> Result<Unique, E> {
        Ok(Unique)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Unique, A::Error> {
        while seq.next_element::<Unique>()?.is_some() {}
        Ok(Unique)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Unique, A::Error> {
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            map.next_value::<Unique>()?;
            if !seen.insert(key.clone()) {
                return Err(A::Error::custom(format!("the key {key:?} appears twice")));
            }
        }
        Ok(Unique)
    }
}

#[cfg(test)]
mod tests {
    use crate::admin::body::Unique;

    #[test]
    fn a_key_twice_at_any_depth_is_refused() {
        for ok in [r#"{"a":1,"b":[{"a":2},{"a":3}]}"#, "[]", "null", r#""x""#] {
            assert!(serde_json::from_str::<Unique>(ok).is_ok(), "{ok}");
        }
        for bad in [
            r#"{"tools":["echo"],"tools":["*"]}"#,
            r#"{"a":{"x":1,"x":2}}"#,
            r#"[{"n":1,"n":1}]"#,
            r#"{"\u0061":1,"a":2}"#,
        ] {
            let e = serde_json::from_str::<Unique>(bad).unwrap_err().to_string();
            assert!(e.contains("appears twice"), "{bad}: {e}");
        }
    }
}
