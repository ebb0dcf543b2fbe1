//! PostgreSQL failures as journal errors (`RL7005` storage, with what was being done), and which
//! of them leave an operation's effect unknown: a failure the server did not report — the
//! connection broke or closed — may come after a commit, so the journal reads back before it
//! tries again (never appending twice), while one it reported with an SQLSTATE means nothing
//! was committed.

use runlet::journal::{JournalError, JournalErrorKind};

/// A journal error for a PostgreSQL failure.
pub fn sql(err: tokio_postgres::Error) -> JournalError {
    // The server's own message is more useful than the client's "db error" wrapper.
    let message = match err.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => err.to_string(),
    };
    JournalError::new(JournalErrorKind::Storage, message)
}

/// A journal error for a connection the pool could not give: the server's own reason (an
/// unknown database or role, a refused option) where it gave one, rather than the pool's
/// wrapper, which says only "db error".
pub fn unreachable(err: deadpool_postgres::PoolError) -> JournalError {
    let reason = match err {
        deadpool_postgres::PoolError::Backend(err) => sql(err).message,
        other => other.to_string(),
    };
    storage(format!("cannot connect: {reason}"))
}

/// Whether `err` may hide a committed effect or a server that went away: the connection failed
/// or closed (no SQLSTATE), or the server said it is shutting down or not yet accepting
/// connections (class 57P, and class 08, connection exceptions). Worth trying again.
pub fn is_transient(err: &tokio_postgres::Error) -> bool {
    match err.code() {
        None => true,
        Some(state) => {
            let code = state.code();
            code.starts_with("08") || code.starts_with("57P")
        }
    }
}

/// Whether `err` came without the server's answer, so what it was doing may have committed.
pub fn is_ambiguous(err: &tokio_postgres::Error) -> bool {
    err.code().is_none()
}

/// Adds what was being done to an error's message.
pub trait Context {
    fn context(self, doing: &str) -> Self;
}

impl<T> Context for Result<T, JournalError> {
    fn context(self, doing: &str) -> Self {
        self.map_err(|error| JournalError { message: format!("cannot {doing}: {}", error.message), ..error })
    }
}

pub fn storage(message: impl Into<String>) -> JournalError {
    JournalError::new(JournalErrorKind::Storage, message)
}

pub fn unknown(run: &str) -> JournalError {
    JournalError::unknown_run(run)
}
