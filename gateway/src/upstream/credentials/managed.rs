//! What the token sources of an enterprise-managed upstream (`user_oauth.enterprise_managed`)
//! know of it: where it is and how the gateway is its client. [`super::enterprise`] makes its
//! users' tokens.

use std::sync::Arc;

use crate::config::{UpstreamSpec, UserOAuth};

/// An enterprise-managed upstream as its users' token sources see it.
#[derive(Debug)]
pub struct Managed {
    pub url: String,
    pub user: UserOAuth,
}

impl Managed {
    /// `spec`'s, when it is an enterprise-managed `user_oauth` upstream.
    pub fn of(spec: &UpstreamSpec) -> Option<Arc<Self>> {
        let e = spec.transport.endpoint()?;
        let user = e.user_oauth.as_ref().filter(|u| u.enterprise_managed)?;
        Some(Arc::new(Self {
            url: e.url.clone(),
            user: user.clone(),
        }))
    }
}
