//! The runs of a journal as an operator lists them (INTERFACES.md §4.1): each run's id, program
//! digest, when it started and last changed, and its status read off its last event and its
//! owner. Whether an unended run needs a host decision takes its program
//! (`Recovery::uncertain_operations`). A run whose header or last record cannot be read is
//! listed as damaged, with the reason, so that one damaged run hides no other.

use crate::diag::{Code, codes};
use crate::engine::event::Event;
use crate::journal::{Journal, JournalError, JournalErrorKind, RunEntry, RunHeader, RunId, owner};

/// Where a run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum RunStatus {
    /// Not ended, and a live process owns it.
    Running,
    /// Not ended, and no live process owns it: resume it.
    Interrupted,
    Succeeded,
    Failed,
    Cancelled,
    /// Not ended, and some of its calls were left dispatching with an outcome only the host can
    /// settle: resolve them, then resume it.
    NeedsResolution,
    /// Its header or last record cannot be read: the store is damaged there
    /// ([`RunListing::damage`] says how). Nothing can resume it.
    Damaged,
}

impl RunStatus {
    /// Every status, in the order of INTERFACES.md §4.1, then `damaged`.
    pub const ALL: [RunStatus; 7] = [
        RunStatus::Running,
        RunStatus::Interrupted,
        RunStatus::Succeeded,
        RunStatus::Failed,
        RunStatus::Cancelled,
        RunStatus::NeedsResolution,
        RunStatus::Damaged,
    ];

    /// The status named `name` (`needs_resolution`, …).
    pub fn named(name: &str) -> Option<RunStatus> {
        RunStatus::ALL.into_iter().find(|status| status.as_str() == name)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Succeeded => "succeeded",
            RunStatus::Failed => "failed",
            RunStatus::Cancelled => "cancelled",
            RunStatus::NeedsResolution => "needs_resolution",
            RunStatus::Damaged => "damaged",
        }
    }

    /// Whether the run has ended (its journal holds its last event).
    pub fn has_ended(self) -> bool {
        matches!(self, RunStatus::Succeeded | RunStatus::Failed | RunStatus::Cancelled)
    }

    /// The status a run's last event gives it: ended, or `Interrupted` for a run whose
    /// journal stops before its end.
    pub fn after(last: Option<&Event>) -> RunStatus {
        match last {
            Some(Event::RunSucceeded) => RunStatus::Succeeded,
            Some(Event::RunFailed { .. }) => RunStatus::Failed,
            Some(Event::RunCancelled) => RunStatus::Cancelled,
            _ => RunStatus::Interrupted,
        }
    }
}

impl serde::Serialize for RunStatus {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One run of a journal, summarized; as JSON the entry of `runlet runs --format json`:
/// `{"run_id", "status", "program_digest", "started_ms", "last_seq", "last_event_ms"}`, and
/// `"damage": {"code", "message"}` for a damaged run.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RunListing {
    pub run_id: RunId,
    /// From the journal: ended ([`RunStatus::after`]), else `Running` while the process that
    /// claimed it lives (or lives where this process cannot tell), else `Interrupted`;
    /// `Damaged` when its header or last record cannot be read.
    pub status: RunStatus,
    /// The digest of the program's source (`sha256:…`); `None` when its header is damaged.
    pub program_digest: Option<String>,
    /// When the run was created, in Unix milliseconds (headers that retain it).
    #[serde(rename = "started_ms")]
    pub started_unix_ms: Option<u64>,
    pub last_seq: u64,
    /// When its last records were appended, in Unix milliseconds (stores that keep it).
    #[serde(rename = "last_event_ms")]
    pub last_event_unix_ms: Option<u64>,
    /// Why a `Damaged` run's journal cannot be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub damage: Option<RunDamage>,
}

/// What the journal answered when a damaged run's header or last record was read: its code
/// (`RL7008`, or `RL7004` for records that break the journal's rules) and message.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RunDamage {
    pub code: Code,
    pub message: String,
}

impl RunDamage {
    /// The damage `error` reports, when it reports damage rather than a store that cannot be
    /// reached at all (which fails the whole listing).
    pub fn of(error: &JournalError) -> Option<RunDamage> {
        matches!(error.kind, JournalErrorKind::Corrupt | JournalErrorKind::InvalidRecord)
            .then(|| RunDamage { code: error.code(), message: error.message.clone() })
    }
}

/// Every run of `journal`, in the order they were created. A run whose header or last record
/// is damaged is listed as [`RunStatus::Damaged`] with the reason, and a run deleted while the
/// list is read is left out; any other failure to read fails the list.
pub async fn list_runs(journal: &dyn Journal) -> Result<Vec<RunListing>, JournalError> {
    let mut summaries = Vec::new();
    for entry in journal.runs().await? {
        let header = match journal.header(&entry.run_id).await {
            Ok(header) => header,
            Err(error) => {
                summaries.extend(unread(entry, None, error)?);
                continue;
            }
        };
        match last_event(journal, &entry).await {
            Ok(last) => summaries.push(summarize(entry, header, last.as_ref())),
            Err(error) => summaries.extend(unread(entry, Some(header), error)?),
        }
    }
    Ok(summaries)
}

/// The summary of one run of `journal`; a damaged run is the journal's error.
pub async fn run_listing(journal: &dyn Journal, run: &RunId) -> Result<RunListing, JournalError> {
    let entry = journal.run_entry(run).await?;
    let header = journal.header(run).await?;
    let last = last_event(journal, &entry).await?;
    Ok(summarize(entry, header, last.as_ref()))
}

/// A run's last event. One of a later runtime (a kind or envelope version this one does not
/// know) is not an end, and the run is left for recovery to judge; one that does not hold
/// together (a checksum, a payload) is damage.
async fn last_event(journal: &dyn Journal, entry: &RunEntry) -> Result<Option<Event>, JournalError> {
    let last = match entry.last_seq {
        0 => None,
        seq => journal.read(&entry.run_id, seq - 1, 1).await?.pop(),
    };
    match last.map(|record| Event::decode_record(&record)) {
        Some(Ok(event)) => Ok(Some(event)),
        Some(Err(error)) if error.code() != codes::JOURNAL_UNSUPPORTED_VERSION => Err(JournalError::new(
            JournalErrorKind::Corrupt,
            format!("the last record of run `{}` is damaged ({}): {error}", entry.run_id, error.code()),
        )),
        _ => Ok(None),
    }
}

fn summarize(entry: RunEntry, header: RunHeader, last: Option<&Event>) -> RunListing {
    let mut status = RunStatus::after(last);
    if status == RunStatus::Interrupted
        && entry.owner.as_deref().is_some_and(|owner| owner::is_alive(owner) != Some(false))
    {
        status = RunStatus::Running;
    }
    listed(entry, Some(header), status)
}

/// The entry of run `entry` whose `header` (when it could be read) or last record could not
/// be read: damaged, or nothing for a run deleted meanwhile, or `error` when the store itself
/// failed.
fn unread(
    entry: RunEntry,
    header: Option<RunHeader>,
    error: JournalError,
) -> Result<Option<RunListing>, JournalError> {
    if error.kind == JournalErrorKind::UnknownRun {
        return Ok(None);
    }
    let damage = RunDamage::of(&error).ok_or(error)?;
    Ok(Some(RunListing { damage: Some(damage), ..listed(entry, header, RunStatus::Damaged) }))
}

/// What `entry` and its `header` (where it could be read) tell of a run with `status`.
fn listed(entry: RunEntry, header: Option<RunHeader>, status: RunStatus) -> RunListing {
    let (program_digest, started_unix_ms) = match header {
        Some(header) => {
            (Some(header.source_digest), header.retained.map(|retained| retained.created_unix_ms))
        }
        None => (None, None),
    };
    RunListing {
        run_id: entry.run_id,
        status,
        program_digest,
        started_unix_ms,
        last_seq: entry.last_seq,
        last_event_unix_ms: entry.last_append_unix_ms,
        damage: None,
    }
}
