//! Readers that follow a run another process drives ([`Journal::appended`]): a reader marks the
//! run followed (`runs.followed_until`, [`FOLLOWED_FOR`] on the database clock, renewed while it
//! keeps waiting), and every append to a followed run NOTIFYs `runlet_records` with the run's id
//! in the same statement — appends to runs nobody follows send nothing. A LISTEN connection of
//! the journal's own (opened by the first reader that waits) wakes the readers of that run. A
//! notification only wakes: the reader reads the records after its last sequence number again.
//! A reader first arms its wake-up and then reads the run's last sequence number (marking it
//! followed), so an append between its read and its wait is never missed once the mark holds;
//! after the connection breaks it is opened again and every reader wakes (something may have
//! been missed); a reader whose wake-up never comes reads again after its timeout anyway, so
//! polling alone works too.
//!
//! [`Journal::appended`]: runlet::journal::Journal::appended

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::journal::PostgresJournal;
use crate::journal::retrying;

/// The runs readers wait on, each with the wake-up its readers share.
type Waiting = Arc<Mutex<BTreeMap<String, Arc<Notify>>>>;

/// How long a reader's mark keeps a run's appends notifying, on the database clock.
pub(crate) const FOLLOWED_FOR: Duration = Duration::from_secs(60);

/// Marks a run followed for `$2` more milliseconds (a later mark never shortens it), and reads
/// its last sequence number.
const MARK_FOLLOWED: &str = "UPDATE runlet.runs
    SET followed_until = greatest(followed_until, now() + $2::bigint * interval '1 millisecond')
    WHERE run_id = $1 RETURNING last_seq";

const LAST_SEQ: &str = "SELECT last_seq FROM runlet.runs WHERE run_id = $1";

/// The journal's readers of other processes' runs.
#[derive(Debug, Default)]
pub(crate) struct Followers {
    waiting: Waiting,
    /// The runs this journal marked followed, and until when (this process's clock, half of
    /// [`FOLLOWED_FOR`] after the mark) it need not mark them again.
    marked: Mutex<BTreeMap<String, Instant>>,
    listening: std::sync::OnceLock<()>,
    stop: CancellationToken,
}

impl Drop for Followers {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl PostgresJournal {
    /// Waits until `run` has records after `after`, a notification says it may, or `within`.
    pub(crate) async fn wait_for_records(&self, run: &str, after: u64, within: Duration) {
        let followers = &self.shared.followers;
        self.listen_for_appends();
        let wake = Arc::clone(followers.waiting.lock().entry(run.to_owned()).or_default());
        {
            let notified = wake.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let appended = self.follow(run).await.is_some_and(|last| last > after);
            if !appended {
                let _ = tokio::time::timeout(within, notified).await;
            }
        }
        drop(wake);
        let mut waiting = followers.waiting.lock();
        // Only this map holds it: no reader of the run is waiting any more.
        if waiting.get(run).is_some_and(|wake| Arc::strong_count(wake) == 1) {
            waiting.remove(run);
        }
    }

    /// Opens the LISTEN connection on `runlet_records`, once.
    fn listen_for_appends(&self) {
        let shared = &self.shared;
        shared.followers.listening.get_or_init(|| {
            let waiting = Arc::clone(&shared.followers.waiting);
            let wake = move |payload: Option<&str>| {
                let waiting = waiting.lock();
                match payload {
                    Some(run) => waiting.get(run).into_iter().for_each(|wake| wake.notify_waiters()),
                    None => waiting.values().for_each(|wake| wake.notify_waiters()),
                }
            };
            let listen = crate::wake::listen(
                shared.config.clone(),
                crate::wake::RECORDS,
                wake,
                shared.followers.stop.clone(),
            );
            if let Some(io) = shared.io() {
                io.spawn(listen);
            }
        });
    }

    /// The run's last sequence number, if it can be read now, marking the run followed when
    /// this journal's mark is about to lapse.
    async fn follow(&self, run: &str) -> Option<u64> {
        let now = Instant::now();
        let mark = {
            let mut marked = self.shared.followers.marked.lock();
            marked.retain(|_, until| *until > now);
            !marked.contains_key(run)
        };
        let followed_ms = i64::try_from(FOLLOWED_FOR.as_millis()).unwrap_or(i64::MAX);
        let (shared, owned) = (Arc::clone(&self.shared), run.to_owned());
        let read = self.on_io(async move {
            retrying(&shared, |client| {
                let run = owned.clone();
                async move {
                    match mark {
                        true => client.query_opt(MARK_FOLLOWED, &[&run, &followed_ms]).await,
                        false => client.query_opt(LAST_SEQ, &[&run]).await,
                    }
                }
            })
            .await
        });
        let row = read.await.ok().flatten()?;
        if mark {
            self.shared.followers.marked.lock().insert(run.to_owned(), now + FOLLOWED_FOR / 2);
        }
        u64::try_from(row.get::<_, i64>(0)).ok()
    }
}
