//! Connections to upstream MCP servers and their supervision.
//!
//! | module | transport |
//! |---|---|
//! | [`stdio`] | child process, newline-delimited JSON-RPC, own process group |
//! | [`http`] | Streamable HTTP (POST + SSE, GET stream, resumption) |
//! | [`post`] | how its POSTs go out: hyper's client direct, or reqwest |
//! | [`h1`] | the direct path's HTTP/1 connections, driven by their callers |
//! | [`drain`] | an answer dropped before its end, read to the end so its connection is kept |
//! | [`sse`] | legacy HTTP+SSE (2024-11-05) |
//! | [`oauth`] | the gateway's own OAuth token for an upstream (client credentials) |
//! | [`dpop`] | DPoP proofs (RFC 9449) for tokens bound to a key of the gateway's |
//! | [`credentials`] | the gateway as an OAuth client of an upstream's authorization server, for a user |
//! | [`pinning`] | tool pinning's rules: pin hashes, what each policy serves, argument checks |
//! | [`limits`] | bounded reads: HTTP answers, SSE events, stdio lines |
//! | [`connection`] | transport-independent: ids, pending calls, routing context |
//! | [`manager`] | supervision (restart with backoff), health, per-session connections, catalog sync |

pub mod assertion;
pub mod connection;
pub mod credentials;
pub mod dpop;
pub mod drain;
pub mod h1;
pub mod http;
pub mod limits;
pub mod manager;
pub mod oauth;
pub mod pinning;
pub mod post;
pub mod sse;
pub mod stdio;

pub use connection::{Attribution, CallCtx, CallError, Connection, InboundSink, ProgressRoute};
pub use manager::{Caller, Health, PendingTool, ReviewError, Transition, Upstreams};

/// What can go wrong reaching an upstream.
#[derive(Debug, thiserror::Error, Clone)]
pub enum UpstreamError {
    /// The spec cannot be turned into a connection (a missing secret, a bad header).
    #[error("configuration: {0}")]
    Config(String),
    #[error("cannot connect: {0}")]
    Connect(String),
    #[error("handshake failed: {0}")]
    Handshake(String),
    #[error("upstream {0} is unavailable")]
    Unavailable(String),
    #[error("unknown upstream {0}")]
    Unknown(String),
    /// A `user_oauth` upstream, and the caller has not connected their account there (or it
    /// no longer works).
    #[error("upstream {upstream} needs the caller to connect their account")]
    NeedsConnect { upstream: String, holder: String },
}
