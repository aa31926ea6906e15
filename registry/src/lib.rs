//! `registry`: the gateway's catalog. It stores upstream MCP servers and what each one offers
//! (tools, resources, resource templates, prompts, each with a content hash) in Postgres or an
//! embedded SQLite file, and turns the catalog into the names hosts see.
//!
//! It knows nothing of HTTP, MCP sessions or authentication: the gateway holds it as
//! `Arc<dyn Registry>`.
//!
//! | module | holds |
//! |---|---|
//! | [`store`] | the [`Registry`] trait |
//! | [`sql`] | its implementation over sqlx (Postgres and SQLite share the queries): the connection |
//! | `upstreams` | upstreams and their catalog on it |
//! | `tx` | write transactions whose connection is never reused unless they committed |
//! | [`change`] | what replicas tell each other they changed |
//! | [`model`] | records: upstreams, catalog entries, sync reports |
//! | [`view`] | exposed names and URIs, and resolution back to the upstream's own |
//! | [`hash`] | content hashes |
//! | [`access`] | roles and personal access tokens (hashes only) |
//! | [`oauth`] | the gateway's authorization server: keys, clients, consents, grants, codes |
//! | [`connections`] | users' own connections to upstreams (sealed tokens) |
//! | [`pins`] | approved tool definitions (rug-pull defence) |
//! | [`audit`] | the hash-chained audit log and its verification |
//! | [`backoff`] | the one jittered, never-ending retry policy of every loop (here and the gateway's) |

pub mod access;
pub mod audit;
pub mod backoff;
pub mod change;
pub mod connections;
pub mod error;
pub mod hash;
pub mod model;
pub mod oauth;
pub mod pins;
pub mod routing;
pub mod routing_store;
pub mod sql;
pub mod store;
mod tx;
mod upstreams;
pub mod view;

pub use access::{AccessStore, RoleRecord, TokenRecord};
pub use audit::{AuditEntry, AuditQuery, AuditRow, AuditStore, VerifyReport};
pub use change::Change;
pub use connections::{ConnectionRecord, ConnectionStore};
pub use error::{RegistryError, Result};
pub use model::{CatalogEntry, Definition, EntryKind, SyncReport, UpstreamRecord};
pub use oauth::{
    ClientRecord, CodeRecord, Forgotten, GrantRecord, GrantsOf, Lapsed, OAuthStore, Redeemed,
    SigningKeyRecord,
};
pub use pins::{PinRecord, PinStore};
pub use routing_store::{RoutingStore, VirtualServerRecord};
pub use sql::{now_ms, OpenOptions, SqlRegistry};
pub use store::Registry;
pub use view::{CatalogView, Exposed, PrefixMode};
