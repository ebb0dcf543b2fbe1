//! Group commit across runs: a [`GroupCommit`] in front of a store hands every run's appends to
//! one writer task; while a commit is on the disk, the appends that arrive meanwhile queue and
//! go to the store together in its next [`Journal::append_many`].

use std::sync::Arc;

use async_trait::async_trait;
use tokio::sync::{mpsc, oneshot};

use super::{
    AppendBatch, AppendTime, Blob, Journal, JournalError, JournalErrorKind, Record, RunEntry, RunHeader,
    RunId, Snapshot,
};

/// At most this many batches go to the store in one `append_many` (and, in the SQLite
/// journal's writer, into one transaction).
pub(super) const GROUP_BATCHES: usize = 1024;

/// A journal whose appends, from any number of runs, share the store's commits. Each append is
/// answered only once the commit holding it is durable, so "effects after their commit" holds
/// as with the store alone; the other operations go to the store directly. It pays where
/// [`Journal::commits_batches_together`] (PostgreSQL): in front of a store without it, it would
/// only put every run's appends in one line, and in front of one that
/// [`Journal::groups_appends`] (SQLite) it only adds a hand-off.
pub struct GroupCommit {
    inner: Arc<dyn Journal>,
    queue: mpsc::UnboundedSender<Queued>,
}

/// One batch waiting for the writer, and where its answer goes.
struct Queued {
    batch: AppendBatch,
    answer: oneshot::Sender<Result<u64, JournalError>>,
}

impl std::fmt::Debug for GroupCommit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupCommit").field("durability", &self.inner.durability()).finish_non_exhaustive()
    }
}

impl GroupCommit {
    /// Puts a writer in front of `inner`, its task on `pool`. The task ends once this journal
    /// is dropped and the appends it took are answered.
    pub fn new(inner: Arc<dyn Journal>, pool: &tokio::runtime::Handle) -> GroupCommit {
        let (queue, queued) = mpsc::unbounded_channel();
        pool.spawn(write(Arc::clone(&inner), queued));
        GroupCommit { inner, queue }
    }

    /// Queues `batch` for the writer; the receiver answers once its commit is durable.
    fn submit(&self, batch: AppendBatch) -> oneshot::Receiver<Result<u64, JournalError>> {
        let (answer, answered) = oneshot::channel();
        // A writer that is gone drops the answer with the batch: `answered` then reports it.
        let _ = self.queue.send(Queued { batch, answer });
        answered
    }
}

/// The writer: takes whatever has queued (up to [`GROUP_BATCHES`]) and appends it in one go.
async fn write(inner: Arc<dyn Journal>, mut queued: mpsc::UnboundedReceiver<Queued>) {
    let mut group = Vec::with_capacity(GROUP_BATCHES);
    while queued.recv_many(&mut group, GROUP_BATCHES).await > 0 {
        let (batches, answers): (Vec<AppendBatch>, Vec<_>) =
            group.drain(..).map(|queued| (queued.batch, queued.answer)).unzip();
        let mut results = inner.append_many(&batches).await.into_iter();
        for answer in answers {
            let result = results.next().unwrap_or_else(|| {
                Err(JournalError::new(JournalErrorKind::Storage, "the journal left an append unanswered"))
            });
            let _ = answer.send(result);
        }
    }
}

/// Why an append got no answer: the runtime that ran the writer has shut down.
fn writer_stopped() -> JournalError {
    JournalError::new(JournalErrorKind::Storage, "the journal's group-commit writer has stopped")
}

async fn answered(answer: oneshot::Receiver<Result<u64, JournalError>>) -> Result<u64, JournalError> {
    answer.await.unwrap_or_else(|_| Err(writer_stopped()))
}

#[async_trait]
impl Journal for GroupCommit {
    async fn create_run(&self, header: &RunHeader) -> Result<(), JournalError> {
        self.inner.create_run(header).await
    }

    async fn header(&self, run: &RunId) -> Result<RunHeader, JournalError> {
        self.inner.header(run).await
    }

    async fn append(&self, run: &RunId, expected_seq: u64, records: &[Record]) -> Result<u64, JournalError> {
        self.append_with_blobs(run, expected_seq, records, &[]).await
    }

    async fn append_with_blobs(
        &self,
        run: &RunId,
        expected_seq: u64,
        records: &[Record],
        blobs: &[Blob],
    ) -> Result<u64, JournalError> {
        let batch =
            AppendBatch { run: run.clone(), expected_seq, records: records.to_vec(), blobs: blobs.to_vec() };
        answered(self.submit(batch)).await
    }

    fn keeps_blobs(&self) -> bool {
        self.inner.keeps_blobs()
    }

    async fn blob(&self, digest: &[u8; 32]) -> Result<Option<Arc<[u8]>>, JournalError> {
        self.inner.blob(digest).await
    }

    async fn delete_run(&self, run: &RunId) -> Result<(), JournalError> {
        self.inner.delete_run(run).await
    }

    async fn collect_blobs(&self) -> Result<u64, JournalError> {
        self.inner.collect_blobs().await
    }

    async fn append_many(&self, batches: &[AppendBatch]) -> Vec<Result<u64, JournalError>> {
        let pending: Vec<_> = batches.iter().map(|batch| self.submit(batch.clone())).collect();
        let mut answers = Vec::with_capacity(pending.len());
        for answer in pending {
            answers.push(answered(answer).await);
        }
        answers
    }

    fn commits_batches_together(&self) -> bool {
        self.inner.commits_batches_together()
    }

    fn groups_appends(&self) -> bool {
        true
    }

    async fn read(&self, run: &RunId, after: u64, limit: usize) -> Result<Vec<Record>, JournalError> {
        self.inner.read(run, after, limit).await
    }

    async fn append_times(
        &self,
        run: &RunId,
        after: u64,
        through: u64,
    ) -> Result<Vec<AppendTime>, JournalError> {
        self.inner.append_times(run, after, through).await
    }

    async fn load_snapshot(&self, run: &RunId) -> Result<Option<Snapshot>, JournalError> {
        self.inner.load_snapshot(run).await
    }

    async fn store_snapshot(&self, run: &RunId, snapshot: Snapshot) -> Result<(), JournalError> {
        self.inner.store_snapshot(run, snapshot).await
    }

    async fn runs(&self) -> Result<Vec<RunEntry>, JournalError> {
        self.inner.runs().await
    }

    async fn run_entry(&self, run: &RunId) -> Result<RunEntry, JournalError> {
        self.inner.run_entry(run).await
    }

    fn keeps_owners(&self) -> bool {
        self.inner.keeps_owners()
    }

    async fn claim(&self, run: &RunId, owner: &str) -> Result<(), JournalError> {
        self.inner.claim(run, owner).await
    }

    async fn release(&self, run: &RunId, owner: &str) -> Result<(), JournalError> {
        self.inner.release(run, owner).await
    }

    async fn end(&self, run: &RunId, owner: &str) -> Result<(), JournalError> {
        self.inner.end(run, owner).await
    }

    async fn request_cancel(&self, run: &RunId) -> Result<(), JournalError> {
        self.inner.request_cancel(run).await
    }

    async fn cancel_requests(&self, owner: &str) -> Result<Vec<RunId>, JournalError> {
        self.inner.cancel_requests(owner).await
    }

    fn durability(&self) -> Option<&str> {
        self.inner.durability()
    }

    async fn appended(&self, run: &RunId, after: u64, within: std::time::Duration) {
        self.inner.appended(run, after, within).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::Bytes;
    use crate::journal::{MemoryJournal, SqliteJournal, suite};

    #[tokio::test]
    async fn passes_the_shared_journal_suite_in_front_of_memory_and_sqlite() {
        let pool = tokio::runtime::Handle::current();
        suite::check(&GroupCommit::new(Arc::new(MemoryJournal::new()), &pool)).await;
        let sqlite = Arc::new(SqliteJournal::open_in_memory().expect("open"));
        suite::check(&GroupCommit::new(sqlite, &pool)).await;
    }

    /// What its store keeps of a run, a group commit gives as the store does: its append times too.
    #[tokio::test]
    async fn the_store_s_append_times_come_through() {
        let grouped = GroupCommit::new(Arc::new(MemoryJournal::new()), &tokio::runtime::Handle::current());
        let header = suite::fresh_run("grouped-times");
        grouped.create_run(&header).await.expect("create");
        let record = Record { seq: 1, bytes: Bytes::from_static(b"r1") };
        grouped.append(&header.run_id, 0, &[record]).await.expect("append");
        let times = grouped.append_times(&header.run_id, 0, 1).await.expect("times");
        assert_eq!(times.iter().map(|time| time.through_seq).collect::<Vec<_>>(), [1]);
    }

    /// Appends of many runs that arrive while a commit is on the disk go together in the next.
    #[tokio::test]
    async fn appends_that_queue_during_a_commit_share_the_next() {
        let store = Arc::new(Gated::default());
        let journal = GroupCommit::new(store.clone(), &tokio::runtime::Handle::current());
        let batch = |n: usize| AppendBatch {
            blobs: Vec::new(),
            run: RunId::new(format!("run-{n}")),
            expected_seq: 0,
            records: vec![record(1)],
        };
        let first = journal.submit(batch(0));
        store.entered.notified().await;
        // The first commit is on the disk: these four queue behind it.
        let rest: Vec<_> = (1..5).map(|n| journal.submit(batch(n))).collect();
        store.release.notify_one();
        assert_eq!(answered(first).await, Ok(1));
        store.entered.notified().await;
        store.release.notify_one();
        for answer in rest {
            assert_eq!(answered(answer).await, Ok(1));
        }
        assert_eq!(*store.calls.lock(), [1, 4], "one commit for the first, one for the four queued");
    }

    #[test]
    fn appends_after_the_writer_stopped_fail_with_rl7005() {
        let pool = tokio::runtime::Builder::new_current_thread().build().expect("the writer's runtime");
        let journal = GroupCommit::new(Arc::new(MemoryJournal::new()), pool.handle());
        drop(pool);
        let caller = tokio::runtime::Builder::new_current_thread().build().expect("the caller's runtime");
        let error =
            caller.block_on(journal.append(&RunId::new("late"), 0, &[record(1)])).expect_err("no writer");
        assert_eq!(error.code().to_string(), "RL7005");
        assert!(error.message.contains("group-commit writer has stopped"), "{}", error.message);
    }

    fn record(seq: u64) -> Record {
        Record { seq, bytes: Bytes::from_static(b"r") }
    }

    /// A store whose `append_many` waits for the test's go-ahead, recording each call's size.
    #[derive(Default)]
    struct Gated {
        calls: parking_lot::Mutex<Vec<usize>>,
        entered: tokio::sync::Notify,
        release: tokio::sync::Notify,
    }

    #[async_trait]
    impl Journal for Gated {
        async fn create_run(&self, _header: &RunHeader) -> Result<(), JournalError> {
            Ok(())
        }

        async fn header(&self, run: &RunId) -> Result<RunHeader, JournalError> {
            Err(JournalError::new(JournalErrorKind::UnknownRun, run.to_string()))
        }

        async fn append(&self, _run: &RunId, seq: u64, records: &[Record]) -> Result<u64, JournalError> {
            Ok(seq + records.len() as u64)
        }

        async fn append_many(&self, batches: &[AppendBatch]) -> Vec<Result<u64, JournalError>> {
            self.calls.lock().push(batches.len());
            self.entered.notify_one();
            self.release.notified().await;
            batches.iter().map(|b| Ok(b.expected_seq + b.records.len() as u64)).collect()
        }

        async fn read(&self, _run: &RunId, _after: u64, _limit: usize) -> Result<Vec<Record>, JournalError> {
            Ok(Vec::new())
        }

        async fn load_snapshot(&self, _run: &RunId) -> Result<Option<Snapshot>, JournalError> {
            Ok(None)
        }

        async fn store_snapshot(&self, _run: &RunId, _snapshot: Snapshot) -> Result<(), JournalError> {
            Ok(())
        }
    }
}
