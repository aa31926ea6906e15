//! Errors of the registry, mapped from storage errors by constraint, never by message text.

/// What went wrong in the registry.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("{0} not found")]
    NotFound(String),
    #[error("{0} already exists")]
    AlreadyExists(String),
    #[error("invalid: {0}")]
    Invalid(String),
    /// The database cannot be reached; a retry later may succeed.
    #[error("database unavailable")]
    Unavailable(#[source] sqlx::Error),
    #[error("database error")]
    Database(#[source] sqlx::Error),
    #[error("migration failed")]
    Migration(#[from] sqlx::migrate::MigrateError),
}

impl RegistryError {
    /// Whether a retry may help (the database went away, a pool timed out).
    pub fn is_transient(&self) -> bool {
        matches!(self, RegistryError::Unavailable(_))
    }

    /// Maps a sqlx error, naming `what` when a uniqueness constraint was hit.
    pub(crate) fn from_sqlx(err: sqlx::Error, what: &str) -> Self {
        match &err {
            sqlx::Error::Database(db) if db.is_unique_violation() => {
                RegistryError::AlreadyExists(what.to_string())
            }
            sqlx::Error::Io(_)
            | sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::Tls(_)
            | sqlx::Error::WorkerCrashed => RegistryError::Unavailable(err),
            // Postgres class 57 (operator intervention: shutdown) and 08 (connection exception).
            sqlx::Error::Database(db)
                if db
                    .code()
                    .is_some_and(|c| c.starts_with("57") || c.starts_with("08")) =>
            {
                RegistryError::Unavailable(err)
            }
            _ => RegistryError::Database(err),
        }
    }
}

pub type Result<T, E = RegistryError> = std::result::Result<T, E>;
