//! The MCP vocabulary, below every handler: message shapes, methods, revisions, the envelope's
//! keys and headers, and the one error with its HTTP status per revision.
//!
//! | module | holds |
//! |---|---|
//! | [`jsonrpc`] | JSON-RPC 2.0 on raw JSON values; the error codes |
//! | [`method`] | host methods parsed once ([`Method`]); what upstreams may ask hosts |
//! | [`revision`] | the revisions spoken with hosts and upstreams ([`Revision`]) |
//! | [`envelope`] | `_meta` keys and HTTP headers |
//! | [`member`] | one member of a JSON object, small objects without hashing ([`Member`]) |
//! | [`error`] | [`McpError`]: code, message, data, HTTP status, conversions |
//! | [`answer`] | a call's result, built or passed through as the upstream's text; the host's [`Reply`] |

pub mod answer;
pub mod envelope;
pub mod error;
pub mod jsonrpc;
pub mod member;
pub mod method;
pub mod revision;

pub use answer::{Answer, Reply};
pub use error::McpError;
pub use member::Member;
pub use method::Method;
pub use revision::Revision;
