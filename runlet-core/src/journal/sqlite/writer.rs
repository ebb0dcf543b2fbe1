//! The journal's writer: a thread of its own per opened journal that commits every append, from
//! any number of runs and tasks. While one transaction is on the disk (or another statement
//! holds the connection), the appends that arrive queue, and the writer takes them all into its
//! next transaction: group commit in the store itself. A sequential run pays one commit and one
//! hand-off to the thread and back per append; concurrent runs share their fsyncs; no append
//! waits for tokio's blocking pool or for a task in front of the store.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::JoinHandle;

use parking_lot::Mutex;
use rusqlite::Connection;
use tokio::sync::{mpsc, oneshot};

use super::{commit_batches, in_file, storage};
use crate::journal::group::GROUP_BATCHES;
use crate::journal::{AppendBatch, JournalError};

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
    commits: Arc<AtomicU64>,
}

impl Writer {
    /// Starts the writer of `connection`, whose errors name the journal file `location`.
    pub(super) fn start(
        connection: Arc<Mutex<Connection>>,
        location: Arc<str>,
    ) -> Result<Writer, JournalError> {
        let (queue, queued) = mpsc::unbounded_channel();
        let commits = Arc::new(AtomicU64::new(0));
        let counted = Arc::clone(&commits);
        let thread = std::thread::Builder::new()
            .name("runlet-sqlite-writer".into())
            .spawn(move || write(&connection, &location, queued, &counted))
            .map_err(|err| storage(format!("could not start the journal's writer thread: {err}")))?;
        Ok(Writer { queue: Some(queue), thread: Some(thread), commits })
    }

    /// Commits `batches` in one transaction, perhaps with other appends, and answers each as
    /// [`super::commit_batches`] does.
    pub(super) async fn commit(&self, batches: Vec<AppendBatch>) -> Answers {
        let count = batches.len();
        let (answer, answered) = oneshot::channel();
        // A writer that is gone drops the answer with the batches: `answered` then reports it.
        if let Some(queue) = &self.queue {
            let _ = queue.send(Queued { batches, answer });
        }
        answered
            .await
            .unwrap_or_else(|_| vec![Err(storage("the journal's writer thread has stopped")); count])
    }

    /// How many transactions the writer has committed (or tried to).
    pub(super) fn commits(&self) -> u64 {
        self.commits.load(Ordering::Relaxed)
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

/// The writer thread: waits for an append, takes the connection, then takes every append that
/// has queued meanwhile (up to [`GROUP_BATCHES`] batches) into the same transaction, and
/// answers them all once it has committed.
fn write(
    connection: &Mutex<Connection>,
    location: &str,
    mut queued: mpsc::UnboundedReceiver<Queued>,
    commits: &AtomicU64,
) {
    let mut batches: Vec<AppendBatch> = Vec::new();
    let mut waiting: Vec<(usize, oneshot::Sender<Answers>)> = Vec::new();
    while let Some(first) = queued.blocking_recv() {
        let mut connection = connection.lock();
        let mut next = Some(first);
        while let Some(Queued { batches: mut more, answer }) = next.take() {
            waiting.push((more.len(), answer));
            batches.append(&mut more);
            if batches.len() < GROUP_BATCHES {
                next = queued.try_recv().ok();
            }
        }
        let answers = match commit_batches(&mut connection, &batches) {
            Ok(answers) => {
                answers.into_iter().map(|answer| answer.map_err(|e| in_file(location, e))).collect()
            }
            Err(error) => vec![Err(in_file(location, error)); batches.len()],
        };
        drop(connection);
        commits.fetch_add(1, Ordering::Relaxed);
        batches.clear();
        let mut answers = answers.into_iter();
        for (count, answer) in waiting.drain(..) {
            let _ = answer.send(answers.by_ref().take(count).collect());
        }
    }
}
