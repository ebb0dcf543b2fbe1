//! The runs of a journal as an operator lists them (INTERFACES.md §4.1): each run's id, program
//! digest, when it started and last changed, and its status read off its last event and its
//! owner. Whether an unended run needs a host decision takes its program
//! (`Recovery::uncertain_operations`).

use super::owner;
use crate::engine::event::Event;
use crate::journal::{Journal, JournalError, RunEntry, RunId};

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
}

impl RunStatus {
    /// Every status, in the order of INTERFACES.md §4.1.
    pub const ALL: [RunStatus; 6] = [
        RunStatus::Running,
        RunStatus::Interrupted,
        RunStatus::Succeeded,
        RunStatus::Failed,
        RunStatus::Cancelled,
        RunStatus::NeedsResolution,
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
/// `{"run_id", "status", "program_digest", "started_ms", "last_seq", "last_event_ms"}`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RunListing {
    pub run_id: RunId,
    /// From the journal: ended ([`RunStatus::after`]), else `Running` while the process that
    /// claimed it lives (or lives where this process cannot tell), else `Interrupted`.
    pub status: RunStatus,
    /// The digest of the program's source (`sha256:…`).
    pub program_digest: String,
    /// When the run was created, in Unix milliseconds (headers that retain it).
    #[serde(rename = "started_ms")]
    pub started_unix_ms: Option<u64>,
    pub last_seq: u64,
    /// When its last records were appended, in Unix milliseconds (stores that keep it).
    #[serde(rename = "last_event_ms")]
    pub last_event_unix_ms: Option<u64>,
}

/// Every run of `journal`, in the order they were created.
pub async fn list_runs(journal: &dyn Journal) -> Result<Vec<RunListing>, JournalError> {
    let mut summaries = Vec::new();
    for entry in journal.runs().await? {
        summaries.push(summarize(journal, entry).await?);
    }
    Ok(summaries)
}

/// The summary of one run of `journal`.
pub async fn run_listing(journal: &dyn Journal, run: &RunId) -> Result<RunListing, JournalError> {
    summarize(journal, journal.run_entry(run).await?).await
}

async fn summarize(journal: &dyn Journal, entry: RunEntry) -> Result<RunListing, JournalError> {
    let header = journal.header(&entry.run_id).await?;
    let last = match entry.last_seq {
        0 => None,
        seq => journal.read(&entry.run_id, seq - 1, 1).await?.pop(),
    };
    // A last record that does not decode is not an end: the run is left for recovery to judge.
    let last = last.and_then(|record| Event::decode_record(&record).ok());
    let mut status = RunStatus::after(last.as_ref());
    if status == RunStatus::Interrupted
        && entry.owner.as_deref().is_some_and(|owner| owner::is_alive(owner) != Some(false))
    {
        status = RunStatus::Running;
    }
    Ok(RunListing {
        status,
        program_digest: header.source_digest,
        started_unix_ms: header.retained.map(|retained| retained.created_unix_ms),
        last_seq: entry.last_seq,
        last_event_unix_ms: entry.last_append_unix_ms,
        run_id: entry.run_id,
    })
}
