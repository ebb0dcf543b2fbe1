//! The journal: the authoritative, append-only record of a run (spec §5.1–5.2). It owns the
//! `Journal` trait every store implements, the checksummed record envelope, and the in-memory store.

mod envelope;
mod error;
mod memory;
mod sqlite;
pub mod suite;

pub use envelope::{ENVELOPE_VERSION, Envelope, EnvelopeError};
pub use error::{JournalError, JournalErrorKind};
pub use memory::MemoryJournal;
pub use sqlite::{Durability, SqliteJournal};

use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

/// Identifies one run within a journal.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RunId(Arc<str>);

impl RunId {
    pub fn new(id: impl Into<Arc<str>>) -> Self {
        RunId(id.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for RunId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What a run is pinned to (spec §5.5). Stored once by `create_run`; recovery refuses a run whose
/// header does not match the program and runtime at hand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunHeader {
    pub run_id: RunId,
    pub language_version: u32,
    pub runtime_version: String,
    pub source_digest: String,
    pub registry_digest: String,
    pub inputs_digest: String,
    pub config_digest: String,
    /// The keyed-digest algorithm and key id digests of sensitive values use,
    /// `hmac-sha256:<key id>` (spec §5.5); the key itself never enters the journal. Empty in
    /// headers written before runs pinned it.
    #[serde(default)]
    pub keyed_digest: String,
    pub value_encoding_version: u32,
    pub event_encoding_version: u32,
}

/// One journal entry: its sequence number (1, 2, 3, … per run, no gaps) and the encoded
/// [`Envelope`] bytes. Stores keep the bytes opaque.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub seq: u64,
    pub bytes: Arc<[u8]>,
}

/// A state snapshot covering every record up to and including `upto_seq`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub upto_seq: u64,
    pub bytes: Arc<[u8]>,
}

/// The persistence contract of spec §5.1. Appends are atomic per call and checked optimistically:
/// `expected_seq` is the last sequence number the caller saw (0 for a new run), and the records
/// must continue it without a gap. An implementation acknowledges only durable bytes.
#[async_trait]
pub trait Journal: Send + Sync {
    /// Registers a new run. A second call for the same id fails with `RunExists`.
    async fn create_run(&self, header: &RunHeader) -> Result<(), JournalError>;

    /// The header stored by `create_run`.
    async fn header(&self, run: &RunId) -> Result<RunHeader, JournalError>;

    /// Appends `records` (sequence numbers `expected_seq + 1 ..`) and returns the new last
    /// sequence number. Nothing is written unless all of them are.
    async fn append(&self, run: &RunId, expected_seq: u64, records: &[Record]) -> Result<u64, JournalError>;

    /// Up to `limit` records with sequence numbers greater than `after`, in order.
    async fn read(&self, run: &RunId, after: u64, limit: usize) -> Result<Vec<Record>, JournalError>;

    /// The latest stored snapshot, if any.
    async fn load_snapshot(&self, run: &RunId) -> Result<Option<Snapshot>, JournalError>;

    /// Stores a snapshot; it must not cover records the journal does not have.
    async fn store_snapshot(&self, run: &RunId, snapshot: Snapshot) -> Result<(), JournalError>;
}

/// Checks that `records` continue `expected_seq` without a gap: the rule every store enforces.
pub(crate) fn check_contiguous(expected_seq: u64, records: &[Record]) -> Result<(), JournalError> {
    for (offset, record) in records.iter().enumerate() {
        let message = match expected_seq.checked_add(1 + offset as u64) {
            Some(want) if record.seq == want => continue,
            Some(want) => format!(
                "record {offset} of the batch has sequence number {} where {want} was expected",
                record.seq
            ),
            None => format!("record {offset} of the batch would pass the largest sequence number"),
        };
        return Err(JournalError::new(JournalErrorKind::InvalidRecord, message));
    }
    Ok(())
}
