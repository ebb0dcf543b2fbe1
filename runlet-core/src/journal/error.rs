//! Errors a journal store reports, each with a stable RL7xxx code so hosts and the engine can
//! tell a sequence conflict from a missing run or a storage failure.

use crate::diag::{Code, codes};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JournalErrorKind {
    /// `create_run` for an id that already exists.
    RunExists,
    /// The run id is unknown to this journal.
    UnknownRun,
    /// `append` whose `expected_seq` is not the journal's last sequence number.
    SequenceConflict { expected: u64, actual: u64 },
    /// A record or snapshot that breaks the journal's rules (gap, bad snapshot position).
    InvalidRecord,
    /// The underlying storage failed.
    Storage,
    /// The store is damaged: it cannot be trusted to hold what was written to it.
    Corrupt,
    /// A cancellation was requested of a run no process owns.
    NotOwned,
    /// A claim of a run that another live process owns: it is running there.
    OwnedElsewhere,
    /// A record the store no longer keeps (a journal that keeps only each run's latest).
    Forgotten,
    /// The writer no longer holds the run: another process took it over, or the writer's own
    /// lease could not be renewed in time (a shared journal's leases). It wrote nothing.
    LeaseLost,
    /// Not the store's failure: the run's task panicked (a bug in the engine or in a Rust host's
    /// journal), and the run stopped as of its last commit. What a run's handle reports for it.
    RunPanicked,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct JournalError {
    pub kind: JournalErrorKind,
    pub message: String,
}

impl JournalError {
    pub fn new(kind: JournalErrorKind, message: impl Into<String>) -> Self {
        JournalError { kind, message: message.into() }
    }

    /// `run` is not in the journal (`UnknownRun`), in the words every store uses.
    pub fn unknown_run(run: impl std::fmt::Display) -> Self {
        JournalError::new(JournalErrorKind::UnknownRun, format!("run `{run}` is not in this journal"))
    }

    pub fn code(&self) -> Code {
        match self.kind {
            JournalErrorKind::RunExists => codes::JOURNAL_RUN_EXISTS,
            JournalErrorKind::UnknownRun => codes::JOURNAL_UNKNOWN_RUN,
            JournalErrorKind::SequenceConflict { .. } => codes::JOURNAL_SEQUENCE_CONFLICT,
            JournalErrorKind::InvalidRecord => codes::JOURNAL_INVALID_RECORD,
            JournalErrorKind::Storage => codes::JOURNAL_STORAGE,
            JournalErrorKind::Corrupt => codes::JOURNAL_CORRUPT_STORE,
            JournalErrorKind::NotOwned => codes::JOURNAL_RUN_NOT_OWNED,
            JournalErrorKind::OwnedElsewhere => codes::RUN_OWNED_ELSEWHERE,
            JournalErrorKind::Forgotten => codes::JOURNAL_RECORD_FORGOTTEN,
            JournalErrorKind::LeaseLost => codes::JOURNAL_LEASE_LOST,
            JournalErrorKind::RunPanicked => codes::RUN_TASK_PANICKED,
        }
    }
}
