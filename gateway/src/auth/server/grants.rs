//! The grants behind the access tokens this server issued, as each request checks them: read
//! from the store, trusted from memory for [`FRESH_FOR`], forgotten at once when any replica
//! revokes one (the registry announces it), and during a database outage trusted for
//! [`OUTAGE_GRACE`] if seen live before. The same rules as personal access tokens.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use registry::{GrantRecord, Registry};

use crate::auth::pat::{FRESH_FOR, OUTAGE_GRACE};

/// Why a grant does not stand.
#[derive(Debug, PartialEq, Eq)]
pub enum GrantRefusal {
    Unknown,
    Revoked,
    Unavailable,
}

#[derive(Default)]
pub struct GrantBook {
    seen: Mutex<HashMap<String, (Arc<GrantRecord>, Instant)>>,
}

impl GrantBook {
    /// The live grant `id`.
    pub async fn check(
        &self,
        registry: &dyn Registry,
        id: &str,
    ) -> Result<Arc<GrantRecord>, GrantRefusal> {
        let known = self.seen.lock().unwrap().get(id).cloned();
        if let Some((g, at)) = &known {
            if at.elapsed() < FRESH_FOR {
                return Ok(g.clone());
            }
        }
        match registry.get_grant(id).await {
            Ok(Some(g)) if g.revoked_at.is_none() => {
                let g = Arc::new(g);
                self.seen
                    .lock()
                    .unwrap()
                    .insert(id.to_string(), (g.clone(), Instant::now()));
                Ok(g)
            }
            Ok(Some(_)) => {
                self.forget(id);
                Err(GrantRefusal::Revoked)
            }
            Ok(None) => Err(GrantRefusal::Unknown),
            Err(e) if e.is_transient() => match known {
                Some((g, at)) if at.elapsed() < OUTAGE_GRACE => Ok(g),
                _ => Err(GrantRefusal::Unavailable),
            },
            Err(e) => {
                tracing::error!(error = %e, "cannot read a grant");
                Err(GrantRefusal::Unavailable)
            }
        }
    }

    /// Drops a grant (revoked here or on another replica).
    pub fn forget(&self, id: &str) {
        self.seen.lock().unwrap().remove(id);
    }

    /// After announcements may have been missed: every grant is read again.
    pub fn distrust_all(&self) {
        self.seen.lock().unwrap().clear();
    }
}
