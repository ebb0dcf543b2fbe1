//! A memory journal whose appends fail as a test says: the stores of the tests of a worker that
//! stopped and of a journal that panics.

use std::sync::Arc;

use async_trait::async_trait;

use runlet::journal::{Journal, JournalError, MemoryJournal, Record, RunHeader, RunId, Snapshot};

/// Asks `fault` before each append (given the append's expected sequence number): an error it
/// answers is the append's, and `None` lets the append through to the memory journal, which
/// answers every other call.
pub struct FaultyAppends<F> {
    pub inner: Arc<MemoryJournal>,
    pub fault: F,
}

#[async_trait]
impl<F> Journal for FaultyAppends<F>
where
    F: Fn(u64) -> Option<JournalError> + Send + Sync,
{
    async fn create_run(&self, header: &RunHeader) -> Result<(), JournalError> {
        self.inner.create_run(header).await
    }

    async fn header(&self, run: &RunId) -> Result<RunHeader, JournalError> {
        self.inner.header(run).await
    }

    async fn append(&self, run: &RunId, expected_seq: u64, records: &[Record]) -> Result<u64, JournalError> {
        match (self.fault)(expected_seq) {
            Some(error) => Err(error),
            None => self.inner.append(run, expected_seq, records).await,
        }
    }

    async fn read(&self, run: &RunId, after: u64, limit: usize) -> Result<Vec<Record>, JournalError> {
        self.inner.read(run, after, limit).await
    }

    async fn load_snapshot(&self, run: &RunId) -> Result<Option<Snapshot>, JournalError> {
        self.inner.load_snapshot(run).await
    }

    async fn store_snapshot(&self, run: &RunId, snapshot: Snapshot) -> Result<(), JournalError> {
        self.inner.store_snapshot(run, snapshot).await
    }
}
