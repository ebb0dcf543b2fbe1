//! An in-memory journal: the default store for runs that need no durability, and the reference
//! implementation the shared journal suite is checked against first. One that keeps only each
//! run's latest records ([`MemoryJournal::keeping_last`]) holds a long run in flat memory, for
//! hosts that never read a run back (a one-shot command line run); one that keeps only the
//! latest ended runs ([`MemoryJournal::keeping_ended_runs`]) holds a long-lived host's runs in
//! flat memory however many it runs.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use parking_lot::Mutex;

use super::{
    AppendTime, Journal, JournalError, JournalErrorKind, Record, RunEntry, RunHeader, RunId, Snapshot,
    check_contiguous, now_unix_ms,
};

#[derive(Debug)]
struct RunLog {
    /// Its place in the order runs were created.
    created: u64,
    header: RunHeader,
    last_append_unix_ms: Option<u64>,
    /// The owning process and whether its cancellation was requested.
    owner: Option<(String, bool)>,
    records: KeptRecords,
    snapshot: Option<Snapshot>,
    /// It ended ([`Journal::end`]); counted among the ended runs kept.
    ended: bool,
}

impl RunLog {
    fn entry(&self) -> RunEntry {
        RunEntry {
            run_id: self.header.run_id.clone(),
            last_seq: self.records.last_seq,
            last_append_unix_ms: self.last_append_unix_ms,
            owner: self.owner.as_ref().map(|(owner, _)| owner.clone()),
        }
    }
}

/// A run's kept records, in the batches they were appended in: each append adds one
/// allocation of its own size, so a long run's log never grows by copying what it holds.
#[derive(Debug, Default)]
struct KeptRecords {
    /// In sequence order; the front one may begin with forgotten records.
    batches: VecDeque<Batch>,
    /// The run's records up to this sequence number are no longer kept.
    forgotten: u64,
    last_seq: u64,
}

/// The records of one append (at least one), and when it was made (Unix milliseconds).
#[derive(Debug)]
struct Batch {
    records: Box<[Record]>,
    unix_ms: u64,
}

impl Batch {
    fn last_seq(&self) -> u64 {
        self.records.last().map_or(0, |last| last.seq)
    }
}

impl KeptRecords {
    fn push(&mut self, records: &[Record], unix_ms: u64) {
        if let Some(last) = records.last() {
            self.last_seq = last.seq;
            self.batches.push_back(Batch { records: records.into(), unix_ms });
        }
    }

    /// Forgets all but the latest `keep` records.
    fn keep_last(&mut self, keep: usize) {
        self.forgotten = self.forgotten.max(self.last_seq.saturating_sub(keep as u64));
        while self.batches.front().is_some_and(|batch| batch.last_seq() <= self.forgotten) {
            self.batches.pop_front();
        }
    }

    /// Up to `limit` records after sequence number `after`, in order; the number of the first
    /// wanted record that is no longer kept, when one is.
    fn after(&self, after: u64, limit: usize) -> Result<Vec<Record>, u64> {
        if after < self.forgotten && after < self.last_seq && limit > 0 {
            return Err(after + 1);
        }
        let Some(first) = after.max(self.forgotten).checked_add(1) else {
            return Ok(Vec::new());
        };
        let batch = self.batches.partition_point(|batch| batch.last_seq() < first);
        Ok(self
            .batches
            .range(batch..)
            .flat_map(|batch| batch.records.iter())
            .skip_while(|record| record.seq < first)
            .take(limit)
            .cloned()
            .collect())
    }

    /// The times of the kept appends of the records after `after`, up to the one holding
    /// `through`.
    fn times(&self, after: u64, through: u64) -> Vec<AppendTime> {
        let batch = self.batches.partition_point(|batch| batch.last_seq() <= after);
        // The append that held record `after + 1` is forgotten: no time to give from there.
        let held = |batch: &Batch| batch.records.first().is_some_and(|first| first.seq <= after + 1);
        if through <= after || !self.batches.get(batch).is_some_and(held) {
            return Vec::new();
        }
        let mut times = Vec::new();
        for batch in self.batches.range(batch..) {
            times.push(AppendTime { through_seq: batch.last_seq(), unix_ms: batch.unix_ms });
            if batch.last_seq() >= through {
                break;
            }
        }
        times
    }
}

/// A journal kept in process memory. Appends are atomic under one lock per journal.
#[derive(Debug, Default)]
pub struct MemoryJournal {
    runs: Mutex<BTreeMap<RunId, RunLog>>,
    /// At most this many records are kept per run; `None` keeps them all.
    keep: Option<usize>,
    /// At most this many ended runs are kept, the latest to end; `None` keeps them all.
    keep_ended: Option<usize>,
    /// The kept runs that ended, in the order they did.
    ended: Mutex<VecDeque<RunId>>,
    /// How many runs were created: the next one's place in their order.
    created: AtomicU64,
}

impl MemoryJournal {
    pub fn new() -> Self {
        Self::default()
    }

    /// A journal that keeps each run's header and only its latest `records` records (at least
    /// one): reading older ones fails with `RL7011`, so nothing can recover or replay its runs,
    /// and a subscriber that falls further behind than that ends with the error. Memory stays
    /// flat however long a run is.
    pub fn keeping_last(records: usize) -> Self {
        MemoryJournal { keep: Some(records.max(1)), ..MemoryJournal::default() }
    }

    /// This journal, keeping only the latest `runs` runs to end (at least one): when one more
    /// ends ([`Journal::end`]), the run that ended longest ago is forgotten whole, as if it had
    /// never been journaled. Runs that have not ended are all kept.
    pub fn keeping_ended_runs(self, runs: usize) -> Self {
        MemoryJournal { keep_ended: Some(runs.max(1)), ..self }
    }
}

fn forgotten(run: &RunId, seq: u64) -> JournalError {
    JournalError::new(
        JournalErrorKind::Forgotten,
        format!(
            "record {seq} of run `{run}` is no longer kept: this journal keeps only each run's latest records"
        ),
    )
}

fn unowned(run: &RunId) -> JournalError {
    JournalError::new(JournalErrorKind::NotOwned, format!("no process owns run `{run}`"))
}

fn unknown(run: &RunId) -> JournalError {
    JournalError::unknown_run(run)
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
        let created = self.created.fetch_add(1, Ordering::Relaxed);
        let log = RunLog {
            created,
            header: header.clone(),
            last_append_unix_ms: None,
            owner: None,
            records: KeptRecords::default(),
            snapshot: None,
            ended: false,
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
        let actual = log.records.last_seq;
        if actual != expected_seq {
            return Err(JournalError::new(
                JournalErrorKind::SequenceConflict { expected: expected_seq, actual },
                format!("append to run `{run}` expected last sequence {expected_seq}, journal has {actual}"),
            ));
        }
        check_contiguous(expected_seq, records)?;
        let now = now_unix_ms();
        log.records.push(records, now);
        if let Some(keep) = self.keep {
            log.records.keep_last(keep);
        }
        log.last_append_unix_ms = Some(now);
        Ok(log.records.last_seq)
    }

    async fn read(&self, run: &RunId, after: u64, limit: usize) -> Result<Vec<Record>, JournalError> {
        let runs = self.runs.lock();
        let log = runs.get(run).ok_or_else(|| unknown(run))?;
        log.records.after(after, limit).map_err(|seq| forgotten(run, seq))
    }

    async fn append_times(
        &self,
        run: &RunId,
        after: u64,
        through: u64,
    ) -> Result<Vec<AppendTime>, JournalError> {
        let runs = self.runs.lock();
        Ok(runs.get(run).ok_or_else(|| unknown(run))?.records.times(after, through))
    }

    async fn load_snapshot(&self, run: &RunId) -> Result<Option<Snapshot>, JournalError> {
        let runs = self.runs.lock();
        Ok(runs.get(run).ok_or_else(|| unknown(run))?.snapshot.clone())
    }

    async fn store_snapshot(&self, run: &RunId, snapshot: Snapshot) -> Result<(), JournalError> {
        let mut runs = self.runs.lock();
        let log = runs.get_mut(run).ok_or_else(|| unknown(run))?;
        if snapshot.upto_seq > log.records.last_seq {
            return Err(JournalError::new(
                JournalErrorKind::InvalidRecord,
                format!(
                    "snapshot of run `{run}` covers sequence {} but the journal ends at {}",
                    snapshot.upto_seq, log.records.last_seq
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
        Ok(logs.into_iter().map(RunLog::entry).collect())
    }

    async fn run_entry(&self, run: &RunId) -> Result<RunEntry, JournalError> {
        self.runs.lock().get(run).map(RunLog::entry).ok_or_else(|| unknown(run))
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

    async fn end(&self, run: &RunId, owner: &str) -> Result<(), JournalError> {
        self.release(run, owner).await?;
        let Some(kept) = self.keep_ended else { return Ok(()) };
        let mut runs = self.runs.lock();
        let Some(log) = runs.get_mut(run) else { return Ok(()) };
        if std::mem::replace(&mut log.ended, true) {
            return Ok(());
        }
        let mut ended = self.ended.lock();
        ended.push_back(run.clone());
        while ended.len() > kept {
            if let Some(oldest) = ended.pop_front() {
                runs.remove(&oldest);
            }
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
    use crate::journal::Bytes;

    #[tokio::test]
    async fn passes_the_shared_journal_suite() {
        super::super::suite::check(&MemoryJournal::new()).await;
        // The suite reads back no more than a few records per run.
        super::super::suite::check(&MemoryJournal::keeping_last(64)).await;
    }

    #[tokio::test]
    async fn only_the_latest_ended_runs_are_kept() {
        let journal = MemoryJournal::new().keeping_ended_runs(2);
        let mut runs = Vec::new();
        for name in ["a", "b", "c", "d"] {
            let header = super::super::suite::fresh_run(name);
            journal.create_run(&header).await.expect("create");
            runs.push(header.run_id);
        }
        for run in [&runs[1], &runs[0], &runs[1], &runs[3]] {
            journal.end(run, "me").await.expect("end");
        }
        // b ended first and was forgotten as d ended; a second end of b did not count; c runs.
        let listed: Vec<RunId> = journal.runs().await.expect("runs").into_iter().map(|e| e.run_id).collect();
        assert_eq!(listed, [runs[0].clone(), runs[2].clone(), runs[3].clone()]);
        let fresh = super::super::suite::fresh_run("e");
        journal.create_run(&fresh).await.expect("create");
        let last = journal.runs().await.expect("runs").pop().expect("a run").run_id;
        assert_eq!(last, fresh.run_id, "a run created after others were forgotten is listed last");
    }

    /// Record `seq` of the tests' runs.
    fn record(seq: u64) -> Record {
        Record { seq, bytes: Bytes::from(format!("r{seq}")) }
    }

    /// Appends records 1 to 16 to `run` in appends of 1, 3, 0, 2, 5, 1 and 4 records (ending at
    /// records 1, 4, 6, 11, 12 and 16); answers the last.
    async fn append_batches(journal: &MemoryJournal, run: &RunId) -> u64 {
        let mut last = 0;
        for size in [1, 3, 0, 2, 5, 1, 4] {
            let batch: Vec<Record> = (last + 1..=last + size).map(record).collect();
            last = journal.append(run, last, &batch).await.expect("append");
        }
        last
    }

    #[tokio::test]
    async fn reads_from_any_point_cross_the_batches_records_were_appended_in() {
        for keep in [None, Some(7)] {
            let journal = MemoryJournal { keep, ..MemoryJournal::default() };
            let header = super::super::suite::fresh_run("batches");
            journal.create_run(&header).await.expect("create");
            let run = &header.run_id;
            let last = append_batches(&journal, run).await;
            assert_eq!(last, 16);
            let oldest_kept = keep.map_or(1, |keep| last - keep as u64 + 1);
            for after in 0..=last + 1 {
                for limit in [0, 1, 2, 6, 100] {
                    let read = journal.read(run, after, limit).await;
                    if after + 1 < oldest_kept && after < last && limit > 0 {
                        assert_eq!(read.expect_err("forgotten").kind, JournalErrorKind::Forgotten);
                        continue;
                    }
                    let want: Vec<Record> = (after + 1..=last).take(limit).map(record).collect();
                    assert_eq!(read.expect("kept"), want, "after {after}, limit {limit}, keep {keep:?}");
                }
            }
        }
    }

    #[tokio::test]
    async fn append_times_name_the_appends_that_hold_the_records_asked_for() {
        let journal = MemoryJournal::new();
        let header = super::super::suite::fresh_run("times");
        journal.create_run(&header).await.expect("create");
        let run = &header.run_id;
        append_batches(&journal, run).await;
        let journal = &journal;
        let ends = |after, through| async move {
            let times = journal.append_times(run, after, through).await.expect("times");
            times.iter().map(|time| time.through_seq).collect::<Vec<u64>>()
        };
        assert_eq!(ends(0, 1).await, [1]);
        assert_eq!(ends(0, 2).await, [1, 4]);
        assert_eq!(ends(1, 2).await, [4]);
        assert_eq!(ends(4, 12).await, [6, 11, 12]);
        assert_eq!(ends(12, 99).await, [16]);
        assert!(ends(16, 17).await.is_empty() && ends(3, 3).await.is_empty());

        // Once the append holding the first record asked for is forgotten, there is no time.
        let keeping = MemoryJournal::keeping_last(2);
        keeping.create_run(&header).await.expect("create");
        for seq in 1..=3 {
            keeping.append(run, seq - 1, &[record(seq)]).await.expect("append");
        }
        assert!(keeping.append_times(run, 0, 1).await.expect("times").is_empty());
        let kept: Vec<u64> = keeping
            .append_times(run, 1, 3)
            .await
            .expect("times")
            .iter()
            .map(|time| time.through_seq)
            .collect();
        assert_eq!(kept, [2, 3]);
    }

    #[tokio::test]
    async fn a_journal_keeping_the_latest_records_forgets_the_older_ones_only() {
        let journal = MemoryJournal::keeping_last(2);
        let header = super::super::suite::fresh_run("kept");
        journal.create_run(&header).await.expect("create");
        let run = &header.run_id;
        journal.append(run, 0, &[record(1), record(2), record(3)]).await.expect("append");
        journal.append(run, 3, &[record(4), record(5)]).await.expect("appends continue the sequence");
        let error = journal.read(run, 0, 10).await.expect_err("forgotten");
        assert_eq!(
            (error.kind, error.code().to_string()),
            (JournalErrorKind::Forgotten, "RL7011".to_owned())
        );
        assert_eq!(journal.read(run, 3, 10).await.expect("kept"), vec![record(4), record(5)]);
        assert_eq!(journal.read(run, 5, 10).await.expect("nothing after the end"), vec![]);
        assert_eq!(journal.runs().await.expect("runs")[0].last_seq, 5);
        let stale = journal.append(run, 4, &[record(5)]).await.expect_err("a stale writer");
        assert_eq!(stale.kind, JournalErrorKind::SequenceConflict { expected: 4, actual: 5 });
    }
}
