//! The journal's writer: a thread of its own per opened journal that commits appends from any
//! number of runs and tasks — all but those of a run appending alone (below). While one transaction is
//! on the disk (or another statement holds the connection), the appends that arrive queue, and
//! the writer takes them all into its next transaction: group commit in the store itself.
//!
//! An append of the run that appended last, which finds nothing queued and the connection free,
//! commits on its own thread instead, when that thread is a worker of a runtime with others to
//! run the rest meanwhile: a run appending alone then pays its commit and no hand-off to the
//! writer and back (each a wake-up of a parked thread, which on a virtual machine costs tens of
//! microseconds). Runs appending by turns go to the writer, whose transactions they share, and
//! whatever arrives while a commit holds the connection queues for it; so does an append that
//! finds the file locked by another process (the writer waits for the lock, a worker never).
//! No append waits for tokio's blocking pool or for a task in front of the store.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::Mutex;
use rusqlite::Connection;
use tokio::sync::{mpsc, oneshot};

use super::open::BUSY_TIMEOUT;
use super::{commit_batches, in_file, storage};
use crate::journal::group::GROUP_BATCHES;
use crate::journal::{AppendBatch, JournalError, RunId};

type Answers = Vec<Result<u64, JournalError>>;

/// Appends waiting for the writer, and where their answers go.
struct Queued {
    batches: Vec<AppendBatch>,
    answer: oneshot::Sender<Answers>,
}

/// A journal's writer thread and the queue in front of it. Dropping it lets the thread answer
/// what was queued, close its hold on the connection and end, and waits for that.
#[derive(Debug)]
pub(super) struct Writer {
    queue: Option<mpsc::UnboundedSender<Queued>>,
    thread: Option<JoinHandle<()>>,
    connection: Arc<Mutex<Connection>>,
    location: Arc<str>,
    /// Appends sent to the thread and not answered yet.
    queued: Arc<AtomicUsize>,
    /// The run whose records the last append held, if they were one run's.
    last_run: Mutex<Option<RunId>>,
    commits: Arc<AtomicU64>,
    /// Of those, the commits made on the appending thread.
    own_commits: AtomicU64,
}

impl Writer {
    /// Starts the writer of `connection`, whose errors name the journal file `location`.
    pub(super) fn start(
        connection: Arc<Mutex<Connection>>,
        location: Arc<str>,
    ) -> Result<Writer, JournalError> {
        let (queue, received) = mpsc::unbounded_channel();
        let (queued, commits) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicU64::new(0)));
        let thread = {
            let (connection, location) = (Arc::clone(&connection), Arc::clone(&location));
            let (queued, commits) = (Arc::clone(&queued), Arc::clone(&commits));
            std::thread::Builder::new()
                .name("runlet-sqlite-writer".into())
                .spawn(move || write(&connection, &location, received, &queued, &commits))
                .map_err(|err| storage(format!("could not start the journal's writer thread: {err}")))?
        };
        Ok(Writer {
            queue: Some(queue),
            thread: Some(thread),
            connection,
            location,
            queued,
            last_run: Mutex::new(None),
            commits,
            own_commits: AtomicU64::new(0),
        })
    }

    /// Commits `batches` in one transaction, perhaps with other appends, and answers each as
    /// [`super::commit_batches`] does: on this thread when they continue the run that appended
    /// last, nothing is queued, the connection is free and the runtime has another worker;
    /// else on the writer.
    pub(super) async fn commit(&self, batches: Vec<AppendBatch>) -> Answers {
        if let Some(answers) = self.commit_here(&batches) {
            return answers;
        }
        let count = batches.len();
        let (answer, answered) = oneshot::channel();
        // A writer that is gone drops the answer with the batches: `answered` then reports it.
        if let Some(queue) = &self.queue {
            self.queued.fetch_add(1, Ordering::AcqRel);
            if queue.send(Queued { batches, answer }).is_err() {
                self.queued.fetch_sub(1, Ordering::AcqRel);
            }
        }
        answered
            .await
            .unwrap_or_else(|_| vec![Err(storage("the journal's writer thread has stopped")); count])
    }

    /// [`Writer::commit`] on this thread, when it may: `None` leaves `batches` to the writer,
    /// as does a transaction that cannot begin at once (another process holding the file's
    /// write lock is waited for by the writer, never by a runtime's worker).
    fn commit_here(&self, batches: &[AppendBatch]) -> Option<Answers> {
        if !(self.same_run_as_last(batches)
            && self.queued.load(Ordering::Acquire) == 0
            && another_worker_runs_the_rest())
        {
            return None;
        }
        let mut connection = self.connection.try_lock()?;
        connection.busy_timeout(Duration::ZERO).ok()?;
        let committed = commit_batches(&mut connection, batches);
        let restored = connection.busy_timeout(BUSY_TIMEOUT);
        drop(connection);
        let answers = committed.ok()?;
        self.commits.fetch_add(1, Ordering::Relaxed);
        self.own_commits.fetch_add(1, Ordering::Relaxed);
        if let Err(error) = restored {
            // The records are committed; a later statement on a locked file fails at once.
            tracing::warn!(journal = %self.location, %error, "could not restore the journal's busy timeout");
        }
        Some(answers.into_iter().map(|answer| answer.map_err(|e| in_file(&self.location, e))).collect())
    }

    /// Whether `batches` are all of the run the last append was of; they are the last append
    /// from now on.
    fn same_run_as_last(&self, batches: &[AppendBatch]) -> bool {
        let run =
            batches.first().map(|batch| &batch.run).filter(|run| batches.iter().all(|b| b.run == **run));
        let mut last = self.last_run.lock();
        let same = run.is_some() && last.as_ref() == run;
        if !same {
            *last = run.cloned();
        }
        same
    }

    /// How many transactions the journal has committed (or tried to).
    pub(super) fn commits(&self) -> u64 {
        self.commits.load(Ordering::Relaxed)
    }

    /// How many appends wait for the writer now.
    #[cfg(test)]
    pub(super) fn queued(&self) -> usize {
        self.queued.load(Ordering::Acquire)
    }

    /// How many of those the appending thread committed itself.
    pub(super) fn own_commits(&self) -> u64 {
        self.own_commits.load(Ordering::Relaxed)
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        drop(self.queue.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Whether this thread may block for a commit: it is a worker of a runtime with other workers
/// (which run the other tasks meanwhile), or no runtime's worker at all (a host's thread in
/// `block_on`). A current-thread runtime's one thread does not: its other tasks would wait.
fn another_worker_runs_the_rest() -> bool {
    tokio::runtime::Handle::try_current().map_or(true, |runtime| runtime.metrics().num_workers() > 1)
}

/// [`super::commit_batches`] of `batches`, every error naming the journal file `location`.
fn committed(connection: &mut Connection, location: &str, batches: &[AppendBatch]) -> Answers {
    match commit_batches(connection, batches) {
        Ok(answers) => answers.into_iter().map(|answer| answer.map_err(|e| in_file(location, e))).collect(),
        Err(error) => vec![Err(in_file(location, error)); batches.len()],
    }
}

/// The writer thread: waits for an append, takes the connection, then takes every append that
/// has queued meanwhile (up to [`GROUP_BATCHES`] batches) into the same transaction, and
/// answers them all once it has committed.
fn write(
    connection: &Mutex<Connection>,
    location: &str,
    mut received: mpsc::UnboundedReceiver<Queued>,
    queued: &AtomicUsize,
    commits: &AtomicU64,
) {
    let mut batches: Vec<AppendBatch> = Vec::new();
    let mut waiting: Vec<(usize, oneshot::Sender<Answers>)> = Vec::new();
    while let Some(first) = received.blocking_recv() {
        let mut connection = connection.lock();
        let mut next = Some(first);
        while let Some(Queued { batches: mut more, answer }) = next.take() {
            waiting.push((more.len(), answer));
            batches.append(&mut more);
            if batches.len() < GROUP_BATCHES {
                next = received.try_recv().ok();
            }
        }
        let answers = committed(&mut connection, location, &batches);
        drop(connection);
        commits.fetch_add(1, Ordering::Relaxed);
        batches.clear();
        let mut answers = answers.into_iter();
        for (count, answer) in waiting.drain(..) {
            queued.fetch_sub(1, Ordering::AcqRel);
            let _ = answer.send(answers.by_ref().take(count).collect());
        }
    }
}
