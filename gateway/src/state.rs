//! What handlers and middleware share, below all of them: [`AppState`] and the parts a handler
//! may take alone (axum substates through `FromRef`), so that a handler names only what it uses
//! and no handler module depends on the application that assembles them.

use std::sync::Arc;

use axum::extract::FromRef;
use registry::Registry;

use crate::auth::Authenticator;
use crate::config::Config;
use crate::mcp::dispatch::Dispatcher;
use crate::mcp::hub::Hub;
use crate::metrics::Metrics;
use crate::routing::ToolRouter;

/// State shared by all handlers: one `Arc`, because axum clones the state for every extractor
/// and layer of every request, and five reference counts shared by every core were the
/// gateway's hottest symbol under load (`drop_in_place<AppState>`, 4% of samples).
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

/// What [`AppState`] holds: flat, each part shared with whoever else needs it.
pub struct Shared {
    pub config: Arc<Config>,
    pub registry: Arc<dyn Registry>,
    pub hub: Arc<Hub>,
    pub dispatcher: Arc<Dispatcher>,
    pub auth: Arc<Authenticator>,
}

impl AppState {
    pub fn new(shared: Shared) -> Self {
        Self(Arc::new(shared))
    }
}

impl std::ops::Deref for AppState {
    type Target = Shared;
    fn deref(&self) -> &Shared {
        &self.0
    }
}

/// Each part as a substate, by the path it is reached at (metrics and routing are the
/// dispatcher's).
macro_rules! substate {
    ($($($path:ident).+: $ty:ty),* $(,)?) => {
        $(impl FromRef<AppState> for $ty {
            fn from_ref(state: &AppState) -> Self {
                state.$($path).+.clone()
            }
        })*
    };
}

substate!(
    config: Arc<Config>,
    registry: Arc<dyn Registry>,
    hub: Arc<Hub>,
    dispatcher: Arc<Dispatcher>,
    auth: Arc<Authenticator>,
    dispatcher.metrics: Arc<Metrics>,
    dispatcher.routing: Arc<ToolRouter>,
    dispatcher.audit: Arc<crate::audit::Auditor>,
);
