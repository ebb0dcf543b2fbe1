//! An in-memory journal: the default store for runs that need no durability, and the reference
//! implementation the shared journal suite is checked against first.

use std::collections::BTreeMap;

use async_trait::async_trait;
use parking_lot::Mutex;

use super::{
    Journal, JournalError, JournalErrorKind, Record, RunEntry, RunHeader, RunId, Snapshot, check_contiguous,
    now_unix_ms,
};

#[derive(Debug)]
struct RunLog {
    /// Its place in the order runs were created.
    created: u64,
    header: RunHeader,
    last_append_unix_ms: Option<u64>,
    /// The owning process and whether its cancellation was requested.
    owner: Option<(String, bool)>,
    records: Vec<Record>,
    snapshot: Option<Snapshot>,
}

/// A journal kept in process memory. Appends are atomic under one lock per journal.
#[derive(Debug, Default)]
pub struct MemoryJournal {
    runs: Mutex<BTreeMap<RunId, RunLog>>,
}

impl MemoryJournal {
    pub fn new() -> Self {
        Self::default()
    }
}

fn unowned(run: &RunId) -> JournalError {
    JournalError::new(JournalErrorKind::NotOwned, format!("no process owns run `{run}`"))
}

fn unknown(run: &RunId) -> JournalError {
    JournalError::new(JournalErrorKind::UnknownRun, format!("run `{run}` is not in this journal"))
}

#[async_trait]
impl Journal for MemoryJournal {
    async fn create_run(&self, header: &RunHeader) -> Result<(), JournalError> {
        let mut runs = self.runs.lock();
        if runs.contains_key(&header.run_id) {
            return Err(JournalError::new(
                JournalErrorKind::RunExists,
                format!("run `{}` already exists in this journal", header.run_id),
            ));
        }
        let created = runs.len() as u64;
        let log = RunLog {
            created,
            header: header.clone(),
            last_append_unix_ms: None,
            owner: None,
            records: Vec::new(),
            snapshot: None,
        };
        runs.insert(header.run_id.clone(), log);
        Ok(())
    }

    async fn header(&self, run: &RunId) -> Result<RunHeader, JournalError> {
        self.runs.lock().get(run).map(|log| log.header.clone()).ok_or_else(|| unknown(run))
    }

    async fn append(&self, run: &RunId, expected_seq: u64, records: &[Record]) -> Result<u64, JournalError> {
        let mut runs = self.runs.lock();
        let log = runs.get_mut(run).ok_or_else(|| unknown(run))?;
        let actual = log.records.len() as u64;
        if actual != expected_seq {
            return Err(JournalError::new(
                JournalErrorKind::SequenceConflict { expected: expected_seq, actual },
                format!("append to run `{run}` expected last sequence {expected_seq}, journal has {actual}"),
            ));
        }
        check_contiguous(expected_seq, records)?;
        log.records.extend_from_slice(records);
        log.last_append_unix_ms = Some(now_unix_ms());
        Ok(log.records.len() as u64)
    }

    async fn read(&self, run: &RunId, after: u64, limit: usize) -> Result<Vec<Record>, JournalError> {
        let runs = self.runs.lock();
        let log = runs.get(run).ok_or_else(|| unknown(run))?;
        let start = usize::try_from(after).unwrap_or(usize::MAX).min(log.records.len());
        Ok(log.records[start..].iter().take(limit).cloned().collect())
    }

    async fn load_snapshot(&self, run: &RunId) -> Result<Option<Snapshot>, JournalError> {
        let runs = self.runs.lock();
        Ok(runs.get(run).ok_or_else(|| unknown(run))?.snapshot.clone())
    }

    async fn store_snapshot(&self, run: &RunId, snapshot: Snapshot) -> Result<(), JournalError> {
        let mut runs = self.runs.lock();
        let log = runs.get_mut(run).ok_or_else(|| unknown(run))?;
        if snapshot.upto_seq > log.records.len() as u64 {
            return Err(JournalError::new(
                JournalErrorKind::InvalidRecord,
                format!(
                    "snapshot of run `{run}` covers sequence {} but the journal ends at {}",
                    snapshot.upto_seq,
                    log.records.len()
                ),
            ));
        }
        log.snapshot = Some(snapshot);
        Ok(())
    }

    fn durability(&self) -> Option<&str> {
        Some("memory")
    }

    async fn runs(&self) -> Result<Vec<RunEntry>, JournalError> {
        let runs = self.runs.lock();
        let mut logs: Vec<_> = runs.values().collect();
        logs.sort_by_key(|log| log.created);
        Ok(logs
            .into_iter()
            .map(|log| RunEntry {
                run_id: log.header.run_id.clone(),
                last_seq: log.records.len() as u64,
                last_append_unix_ms: log.last_append_unix_ms,
                owner: log.owner.as_ref().map(|(owner, _)| owner.clone()),
            })
            .collect())
    }

    fn keeps_owners(&self) -> bool {
        true
    }

    async fn claim(&self, run: &RunId, owner: &str) -> Result<(), JournalError> {
        let mut runs = self.runs.lock();
        runs.get_mut(run).ok_or_else(|| unknown(run))?.owner = Some((owner.to_owned(), false));
        Ok(())
    }

    async fn release(&self, run: &RunId, owner: &str) -> Result<(), JournalError> {
        let mut runs = self.runs.lock();
        let log = runs.get_mut(run).ok_or_else(|| unknown(run))?;
        if log.owner.as_ref().is_some_and(|(current, _)| current == owner) {
            log.owner = None;
        }
        Ok(())
    }

    async fn request_cancel(&self, run: &RunId) -> Result<(), JournalError> {
        let mut runs = self.runs.lock();
        match runs.get_mut(run).ok_or_else(|| unknown(run))?.owner.as_mut() {
            Some((_, requested)) => {
                *requested = true;
                Ok(())
            }
            None => Err(unowned(run)),
        }
    }

    async fn cancel_requests(&self, owner: &str) -> Result<Vec<RunId>, JournalError> {
        let runs = self.runs.lock();
        Ok(runs
            .iter()
            .filter(|(_, log)| log.owner.as_ref().is_some_and(|(o, requested)| o == owner && *requested))
            .map(|(run, _)| run.clone())
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn passes_the_shared_journal_suite() {
        super::super::suite::check(&MemoryJournal::new()).await;
    }
}
