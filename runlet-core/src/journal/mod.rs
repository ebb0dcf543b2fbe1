//! The journal (spec §5.1–5.2, §5.5): the authoritative, append-only record of every run, and
//! the [`Journal`] trait each store implements. It sits below the engine and knows nothing of
//! events: a [`Record`] is a sequence number and opaque bytes, which the engine frames in an
//! [`Envelope`] (version, sequence number, event kind, payload, CRC-32C).
//!
//! ```text
//!  engine shell ──create_run, append(run, expected_seq, records)──▶ Journal (memory, SQLite, host)
//!                                                                     │ header, read(run, after, limit)
//!                                     ┌───────────────────────────────┴──────────┐
//!            observe: lagging subscriptions, snapshot_from_journal     runtime: recovery, replay
//! ```
//!
//! A run starts with [`Journal::create_run`], which stores its [`RunHeader`]: what the run is
//! pinned to (source, registry, inputs and configuration digests, versions, digest key id),
//! checked before it is resumed. Its records are numbered 1, 2, 3, … without gaps.
//! [`Journal::append`] is atomic and optimistic: `expected_seq` is the last sequence number the
//! writer saw, and a writer that is behind gets [`JournalErrorKind::SequenceConflict`] and writes
//! nothing, so two workers cannot interleave one run. Errors carry `RL7xxx` codes
//! ([`JournalError::code`]). [`Journal::durability`] says what an acknowledged append survives,
//! for reports.
//!
//! # Which store
//!
//! - [`MemoryJournal`]: what a `Runtime` uses when given none. Nothing survives the process:
//!   for tests, one-shot runs and as the reference implementation.
//! - [`SqliteJournal::open`] with a [`Durability`]: runs, records, snapshots and blobs in one
//!   SQLite file (WAL). Appends are committed on the journal's own writer thread, those that
//!   queue while a commit is on the disk together in the next transaction (a savepoint per
//!   batch); its other statements run on tokio's blocking pool. It [keeps blobs](Journal::keeps_blobs): values
//!   above the runtime's threshold are stored apart from the records that name them, by the
//!   SHA-256 of their bytes, in the records' transaction, shared by every run that records
//!   them, and deleted by [`Journal::collect_blobs`] once [`Journal::delete_run`] removed the
//!   last run naming them. [`Durability::Full`]
//!   has each commit on stable storage before `append` returns; [`Durability::Normal`] survives
//!   a process crash, but a power loss may drop the last commits. Opening refuses a damaged file
//!   (`RL7008`), and several processes may open and write one file at once (a busy connection
//!   waits for the lock). `open_in_memory` is for tests.
//! - Your own [`Journal`] impl (an `async_trait`; the C ABI's journal vtable is one) when runs
//!   live in the host's storage or are shared between processes. It acknowledges an append only
//!   once its bytes are durable, and keeps them exactly as given.
//!
//! Appends of many runs share commits (group commit): the SQLite journal's writer thread takes
//! the appends that queue while a commit is on the disk into its next transaction, and
//! [`GroupCommit`] does the same in front of any other store — one writer task takes every
//! run's appends and hands those that queued to the store together in one `append_many`. The
//! runtime puts one in front of a store that commits batches together
//! ([`Journal::commits_batches_together`]: PostgreSQL) and does not group appends itself
//! ([`Journal::groups_appends`]), unless told otherwise.
//!
//! Every implementation must pass [`suite::check`], the shared conformance suite: the in-memory
//! and SQLite journals and the group-commit writer in front of each run it in their tests, and the C ABI runs it against a host's vtable
//! journal (`runlet_journal_conformance_check`). It panics on the first violation. Snapshots
//! ([`Journal::store_snapshot`]) are part of the contract and the suite: a runtime writes one
//! per run every so many events (`RuntimeBuilder::snapshot_every`) and a resume restores the
//! latest that verifies, replaying only the records after it (`engine::snapshot`).
//!
//! ```
//! use runlet::journal::{
//!     Bytes, Journal, JournalErrorKind, MemoryJournal, Record, RunHeader, RunId, SqliteJournal, suite,
//! };
//!
//! let digest = String::from("sha256:doc");
//! let header = RunHeader {
//!     run_id: RunId::new("doc-run"), language_version: 1, runtime_version: "doc".into(),
//!     source_digest: digest.clone(), registry_digest: digest.clone(), inputs_digest: digest.clone(),
//!     config_digest: digest, keyed_digest: "hmac-sha256:doc".into(),
//!     value_encoding_version: 1, event_encoding_version: 1, retained: None,
//! };
//! let record = |seq| Record { seq, bytes: Bytes::from_static(b"opaque") };
//! let pool = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio");
//! pool.block_on(async {
//!     let journal = SqliteJournal::open_in_memory().expect("opens");
//!     journal.create_run(&header).await.expect("a new run");
//!     assert_eq!(journal.append(&header.run_id, 0, &[record(1), record(2)]).await.expect("appends"), 2);
//!     // A writer that had not seen record 2 is refused, and writes nothing.
//!     let stale = journal.append(&header.run_id, 1, &[record(2)]).await.expect_err("conflict");
//!     assert_eq!(stale.kind, JournalErrorKind::SequenceConflict { expected: 1, actual: 2 });
//!     assert_eq!(journal.read(&header.run_id, 0, 10).await.expect("reads").len(), 2);
//!
//!     suite::check(&journal).await;
//!     suite::check(&MemoryJournal::new()).await;
//! });
//! ```

mod envelope;
mod error;
mod group;
mod header;
mod memory;
pub mod owner;
mod sqlite;
pub mod suite;

/// The bytes of a [`Record`]: shared, and sliced without copying.
pub use bytes::Bytes;
pub use envelope::{ENVELOPE_VERSION, Envelope, EnvelopeError};
pub use error::{JournalError, JournalErrorKind};
pub use group::GroupCommit;
pub use header::{RetainedRun, RunEntry, RunHeader};
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

/// One journal entry: its sequence number (1, 2, 3, … per run, no gaps) and the encoded
/// [`Envelope`] bytes. Stores keep the bytes opaque. The records of one append are slices of
/// one shared buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub seq: u64,
    pub bytes: Bytes,
}

/// One run's records for [`Journal::append_many`]: what one [`Journal::append_with_blobs`]
/// takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppendBatch {
    pub run: RunId,
    pub expected_seq: u64,
    pub records: Vec<Record>,
    /// The blobs the records name, committed with them.
    pub blobs: Vec<Blob>,
}

/// A large value's bytes kept apart from the record that names it (spec §5.2), addressed by
/// the SHA-256 of the bytes: runs that record the same value share one blob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob {
    pub digest: [u8; 32],
    pub bytes: Arc<[u8]>,
}

impl Blob {
    /// The blob of `bytes`.
    pub fn of(bytes: &[u8]) -> Blob {
        Blob { digest: Blob::digest_of(bytes), bytes: Arc::from(bytes) }
    }

    /// The digest a blob of `bytes` is addressed by.
    pub fn digest_of(bytes: &[u8]) -> [u8; 32] {
        use sha2::Digest as _;
        sha2::Sha256::digest(bytes).into()
    }
}

/// A state snapshot covering every record up to and including `upto_seq`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub upto_seq: u64,
    pub bytes: Arc<[u8]>,
}

/// When a run's records were stored: every record after the previous `AppendTime`'s up to
/// `through_seq` was appended at `unix_ms` (Unix milliseconds). What events read back from a
/// journal are timed by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppendTime {
    pub through_seq: u64,
    pub unix_ms: u64,
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

    /// Appends several batches, each exactly as [`Journal::append_with_blobs`] would on its
    /// own, and answers each in order: a batch that fails (a sequence conflict, an unknown run,
    /// a gap) writes nothing and fails alone, and batches for one run continue each other in
    /// order. A store that commits the batches in one transaction overrides it (and says so in
    /// [`Journal::commits_batches_together`]); by default each batch is one append.
    async fn append_many(&self, batches: &[AppendBatch]) -> Vec<Result<u64, JournalError>> {
        let mut answers = Vec::with_capacity(batches.len());
        for batch in batches {
            answers.push(
                self.append_with_blobs(&batch.run, batch.expected_seq, &batch.records, &batch.blobs).await,
            );
        }
        answers
    }

    /// Whether the store keeps large values apart from their records: it takes blobs with
    /// [`Journal::append_with_blobs`], gives them back with [`Journal::blob`], and collects
    /// those no run names ([`Journal::delete_run`], [`Journal::collect_blobs`]). A store that
    /// does not keeps every value inline in its record.
    fn keeps_blobs(&self) -> bool {
        false
    }

    /// [`Journal::append`] of `records` with the `blobs` they name, committed together: no
    /// record is acknowledged before the blobs it names are stored. Without blobs it is
    /// `append`; a store that keeps no blobs refuses them.
    async fn append_with_blobs(
        &self,
        run: &RunId,
        expected_seq: u64,
        records: &[Record],
        blobs: &[Blob],
    ) -> Result<u64, JournalError> {
        if !blobs.is_empty() {
            return Err(JournalError::new(JournalErrorKind::Storage, "this journal keeps no blobs"));
        }
        self.append(run, expected_seq, records).await
    }

    /// The bytes of the blob `digest`, if the store has it.
    async fn blob(&self, digest: &[u8; 32]) -> Result<Option<Arc<[u8]>>, JournalError> {
        let _ = digest;
        Ok(None)
    }

    /// Removes run `run` — header, records, snapshot, owner — from the store; the blobs only it
    /// named become garbage for [`Journal::collect_blobs`]. A store that cannot delete runs
    /// keeps the default, which says so.
    async fn delete_run(&self, run: &RunId) -> Result<(), JournalError> {
        let _ = run;
        Err(JournalError::new(JournalErrorKind::Storage, "this journal cannot delete runs"))
    }

    /// Deletes the blobs no run of the store names, and answers how many it deleted.
    async fn collect_blobs(&self) -> Result<u64, JournalError> {
        Ok(0)
    }

    /// Whether [`Journal::append_many`] commits its batches together (one transaction, one
    /// flush to the disk), so that appends of many runs gathered by a [`GroupCommit`] cost
    /// about one commit.
    fn commits_batches_together(&self) -> bool {
        false
    }

    /// Whether the journal itself gathers the appends that arrive while a commit is on the
    /// disk into its next commit (SQLite's writer thread, a [`GroupCommit`]), so that another
    /// [`GroupCommit`] in front of it would only add a hand-off.
    fn groups_appends(&self) -> bool {
        false
    }

    /// Up to `limit` records with sequence numbers greater than `after`, in order.
    async fn read(&self, run: &RunId, after: u64, limit: usize) -> Result<Vec<Record>, JournalError>;

    /// When the records of `run` after sequence number `after`, up to `through`, were
    /// appended, in order: the times of consecutive appends, the first holding record
    /// `after + 1`, the last holding `through` (or the run's last record, when it has fewer).
    /// A store may stop short where it kept no time; one that keeps no times keeps the default,
    /// none, and the events read back from it carry no times.
    async fn append_times(
        &self,
        run: &RunId,
        after: u64,
        through: u64,
    ) -> Result<Vec<AppendTime>, JournalError> {
        let _ = (run, after, through);
        Ok(Vec::new())
    }

    /// The latest stored snapshot, if any.
    async fn load_snapshot(&self, run: &RunId) -> Result<Option<Snapshot>, JournalError>;

    /// Stores a snapshot; it must not cover records the journal does not have.
    async fn store_snapshot(&self, run: &RunId, snapshot: Snapshot) -> Result<(), JournalError>;

    /// What an acknowledged append survives, for reports and every benchmark figure: `memory`
    /// (nothing survives the process), `sqlite-wal-full` (a power loss), `sqlite-wal-normal` (a
    /// process crash), `sqlite-memory`; `None` when the store does not say.
    fn durability(&self) -> Option<&str> {
        None
    }

    /// Returns once records may have been appended to `run` after sequence number `after`, or
    /// once `within` has passed: how a reader that follows a run another process drives waits
    /// before it reads again. Only a hint — the reader always reads — so a store without
    /// notifications keeps the default, which waits `within` (polling).
    async fn appended(&self, run: &RunId, after: u64, within: std::time::Duration) {
        let _ = (run, after);
        tokio::time::sleep(within).await;
    }

    /// Every run of the journal, in the order they were created, with its last sequence number
    /// and the time of its last append: what an operator's run list is made of. A store that
    /// cannot enumerate its runs keeps the default, which says so (`RL7005`).
    async fn runs(&self) -> Result<Vec<RunEntry>, JournalError> {
        Err(JournalError::new(JournalErrorKind::Storage, "this journal cannot list its runs"))
    }

    /// The entry [`Journal::runs`] lists for `run` (`UnknownRun` when it lists none): what a
    /// reader that follows one run asks for again and again. By default it lists every run and
    /// picks one; a store that can look one up overrides it.
    async fn run_entry(&self, run: &RunId) -> Result<RunEntry, JournalError> {
        let entry = self.runs().await?.into_iter().find(|entry| entry.run_id == *run);
        entry.ok_or_else(|| JournalError::unknown_run(run))
    }

    /// Whether the store keeps run owners and cancellation requests ([`Journal::claim`],
    /// [`Journal::request_cancel`]); the runtime asks a store that does for its runs'
    /// cancellation requests.
    fn keeps_owners(&self) -> bool {
        false
    }

    /// Records that the process `owner` drives run `run` from now on, replacing an earlier
    /// owner and any cancellation requested of it. A store that processes share refuses it
    /// (`OwnedElsewhere`, RL7010) while the earlier owner is another live process: without
    /// leases (SQLite), one of this machine known to be alive
    /// ([`owner::is_another_living_process`]; on Linux, by the default owner names); with leases
    /// (PostgreSQL), one whose lease holds, unless it is known to have ended or the claiming
    /// journal renews that lease itself. Two processes never drive one run. A process that
    /// drops a runtime with runs in flight keeps them claimed until it ends. A store that keeps
    /// no owners forgets it.
    async fn claim(&self, run: &RunId, owner: &str) -> Result<(), JournalError> {
        let _ = (run, owner);
        Ok(())
    }

    /// `owner` stops driving run `run` (the run ended, or its process let it go); nothing
    /// changes when another process has claimed it since.
    async fn release(&self, run: &RunId, owner: &str) -> Result<(), JournalError> {
        let _ = (run, owner);
        Ok(())
    }

    /// `owner` drove run `run` to its end (its last event is durable): what
    /// [`Journal::release`] does, and a store that hands unended runs to workers stops
    /// offering this one.
    async fn end(&self, run: &RunId, owner: &str) -> Result<(), JournalError> {
        self.release(run, owner).await
    }

    /// Asks the process that owns run `run` to cancel it; it sees the request in
    /// [`Journal::cancel_requests`]. Fails with `UnknownRun` when no process owns the run.
    async fn request_cancel(&self, run: &RunId) -> Result<(), JournalError> {
        let _ = run;
        Err(JournalError::new(JournalErrorKind::Storage, "this journal keeps no run owners"))
    }

    /// The runs `owner` owns whose cancellation another process requested.
    async fn cancel_requests(&self, owner: &str) -> Result<Vec<RunId>, JournalError> {
        let _ = owner;
        Ok(Vec::new())
    }
}

/// The time of an append, as [`RunEntry::last_append_unix_ms`] and [`AppendTime`] keep it: now,
/// in Unix milliseconds by this process's clock (the one a run's creation time is taken by).
pub fn now_unix_ms() -> u64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    since.map_or(0, |since| u64::try_from(since.as_millis()).unwrap_or(u64::MAX))
}

/// Checks that `records` continue `expected_seq` without a gap: the rule every store enforces.
pub fn check_contiguous(expected_seq: u64, records: &[Record]) -> Result<(), JournalError> {
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

/// Checks that `records`, read after `after`, continue it without a gap: stored records that do
/// not mean the store lost or altered some.
pub fn check_read(run: &RunId, after: u64, records: &[Record]) -> Result<(), JournalError> {
    let misplaced = records.iter().zip(after + 1..).find(|(record, want)| record.seq != *want);
    match misplaced {
        Some((record, want)) => Err(JournalError::new(
            JournalErrorKind::Corrupt,
            format!(
                "run `{run}` has a record numbered {} where {want} should be: the stored records are out of sequence",
                record.seq
            ),
        )),
        None => Ok(()),
    }
}
