//! A durable journal in one SQLite file (WAL mode): runs, records (each append's as one row,
//! `batches`), snapshots and blobs (large values kept apart, shared by the runs that name them)
//! in their tables. Appends are committed on the journal's own writer thread, which gathers the
//! appends that queue while a commit is on the disk into its next transaction, or, for a run
//! appending alone, on the appending thread (`writer`); the other blocking SQLite calls run on
//! tokio's blocking pool; opening (integrity check, pragmas,
//! layout) is `open`'s.

mod batches;
mod open;
#[cfg(test)]
mod tests;
mod writer;

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use parking_lot::Mutex;
use rusqlite::ffi::ErrorCode;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::{
    AppendBatch, AppendTime, Blob, Journal, JournalError, JournalErrorKind, Record, RunEntry, RunHeader,
    RunId, Snapshot, check_contiguous, check_read, now_unix_ms, owner,
};
use open::Medium;

/// How long a commit waits for the disk: SQLite's `synchronous` level, set on every open and
/// read back, reported by [`Journal::durability`] (and with every benchmark figure).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// `synchronous=FULL`: a commit is on stable storage before `append` returns.
    Full,
    /// `synchronous=NORMAL` in WAL mode: survives a process crash; a power loss may drop the
    /// last commits.
    Normal,
}

impl Durability {
    /// The `synchronous` setting's name: `FULL` or `NORMAL`.
    pub fn as_str(self) -> &'static str {
        match self {
            Durability::Full => "FULL",
            Durability::Normal => "NORMAL",
        }
    }

    /// The number `PRAGMA synchronous` reads back.
    fn level(self) -> i64 {
        match self {
            Durability::Full => 2,
            Durability::Normal => 1,
        }
    }

    /// What [`Journal::durability`] reports for a file opened with this level.
    pub fn report(self) -> &'static str {
        match self {
            Durability::Full => "sqlite-wal-full",
            Durability::Normal => "sqlite-wal-normal",
        }
    }
}

/// A journal stored in one SQLite database file.
#[derive(Debug, Clone)]
pub struct SqliteJournal {
    connection: Arc<Mutex<Connection>>,
    /// The file, named in every storage and corruption error.
    location: Arc<str>,
    /// What [`Journal::durability`] reports.
    durability: &'static str,
    /// What commits the appends (on its thread, or on a lone run's own); shared by the
    /// journal's clones, and its thread stopped with the last of them.
    writer: Arc<writer::Writer>,
}

/// A journal error for an SQLite failure: `Corrupt` when SQLite finds the file damaged or not a
/// database, `Storage` otherwise. The caller's journal names the file.
fn sql(err: rusqlite::Error) -> JournalError {
    let kind = match err.sqlite_error_code() {
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => JournalErrorKind::Corrupt,
        _ => JournalErrorKind::Storage,
    };
    JournalError::new(kind, err.to_string())
}

fn storage(message: impl Into<String>) -> JournalError {
    JournalError::new(JournalErrorKind::Storage, message)
}

fn corrupt(message: impl Into<String>) -> JournalError {
    JournalError::new(JournalErrorKind::Corrupt, message)
}

fn unknown(run: &str) -> JournalError {
    JournalError::unknown_run(run)
}

/// The query of the runs' entries (their last append and owner) that `tail` selects and orders.
fn run_entries(tail: &str) -> String {
    format!(
        "SELECT runs.run_id, COALESCE(last.last_seq, 0), last.at_ms, owners.owner
         FROM runs
         LEFT JOIN batches AS last ON last.run_id = runs.run_id AND last.last_seq =
             (SELECT MAX(last_seq) FROM batches WHERE batches.run_id = runs.run_id)
         LEFT JOIN owners ON owners.run_id = runs.run_id
         {tail}"
    )
}

/// One row of [`run_entries`].
fn run_entry(row: &rusqlite::Row<'_>) -> rusqlite::Result<RunEntry> {
    Ok(RunEntry {
        run_id: RunId::new(row.get::<_, String>(0)?),
        last_seq: row.get::<_, i64>(1)? as u64,
        // A time before 1970 is damage, and unknown rather than a time far in the future.
        last_append_unix_ms: row.get::<_, Option<i64>>(2)?.and_then(|at| u64::try_from(at).ok()),
        owner: row.get(3)?,
    })
}

impl SqliteJournal {
    /// How many WAL pages a FULL journal's commits may leave before SQLite copies them into the
    /// database and starts the WAL again from its beginning (SQLite's default, which NORMAL
    /// keeps, is 1,000). A FULL commit that writes past the WAL file's end waits for the file's
    /// new size as well as its bytes to reach the disk, which on the disks measured costs about
    /// half as much again as overwriting pages the file already holds. SQLite removes the WAL
    /// when the last connection to the file closes, so a journal opened afresh (every `runlet
    /// run --journal sqlite:`) grows a new one: with the default, its first 4 MB of commits;
    /// with 128 pages (512 KiB), about 60 small commits, after which it is written again from
    /// its start. A wide commit (tens of KiB) costs the same either way. The commit that
    /// crosses the interval runs the checkpoint, so about one small commit in a hundred takes
    /// about twice as long, while the mean falls by about a third. NORMAL commits wait for no
    /// disk, and would only pay for the more frequent checkpoints (BENCHMARKS.md, "The WAL
    /// reused sooner").
    pub const WAL_PAGES_BEFORE_CHECKPOINT: i64 = 128;

    /// Opens (creating if needed) the journal at `path`. A file that fails SQLite's quick
    /// integrity check or is not a database is refused (`RL7008`), as is a database that is not
    /// a Runlet journal or has a newer layout (`RL7005`); the check reads the whole file, so
    /// opening a large journal takes a moment. Several processes may open one file at once: a
    /// connection waits up to 10 s for another's lock before an operation fails (`RL7005`).
    /// A zero-length file is SQLite's empty database and opens as an empty journal.
    pub fn open(path: impl AsRef<Path>, durability: Durability) -> Result<Self, JournalError> {
        let path = path.as_ref();
        let location: Arc<str> = Arc::from(path.display().to_string());
        let open_once = || {
            Connection::open(path).map_err(sql).and_then(|mut connection| {
                open::prepare(&mut connection, Medium::File, durability)?;
                Ok(connection)
            })
        };
        // Connections opening one fresh file at once can meet SQLite's deadlock guard, which
        // answers "database is locked" without waiting; the open is tried again meanwhile.
        let started = std::time::Instant::now();
        let mut opened = open_once();
        while opened.as_ref().is_err_and(|error| error.message.contains("database is locked"))
            && started.elapsed() < open::BUSY_TIMEOUT
        {
            std::thread::sleep(std::time::Duration::from_millis(5));
            opened = open_once();
        }
        match opened {
            Ok(connection) => SqliteJournal::writing(connection, location, durability.report()),
            Err(error) => Err(in_file(&location, error)),
        }
    }

    /// A private journal in memory with the same SQL paths as a file; for tests.
    pub fn open_in_memory() -> Result<Self, JournalError> {
        let mut connection = Connection::open_in_memory().map_err(sql)?;
        open::prepare(&mut connection, Medium::Memory, Durability::Full)?;
        SqliteJournal::writing(connection, Arc::from(":memory:"), "sqlite-memory")
    }

    /// The journal over a prepared `connection`, with its writer thread started.
    fn writing(
        connection: Connection,
        location: Arc<str>,
        durability: &'static str,
    ) -> Result<SqliteJournal, JournalError> {
        let connection = Arc::new(Mutex::new(connection));
        let writer = writer::Writer::start(Arc::clone(&connection), Arc::clone(&location))
            .map_err(|error| in_file(&location, error))?;
        Ok(SqliteJournal { connection, location, durability, writer: Arc::new(writer) })
    }

    /// How many transactions this journal's appends have taken so far: fewer than its appends
    /// where appends of concurrent runs (or tasks) shared a commit.
    pub fn commits(&self) -> u64 {
        self.writer.commits()
    }

    /// How many of [`SqliteJournal::commits`] the appending thread made itself, finding the
    /// journal's writer idle (the rest were the writer's).
    pub fn commits_on_appending_threads(&self) -> u64 {
        self.writer.own_commits()
    }

    /// Runs `work` with the connection on the blocking pool; storage and corruption errors
    /// name the file.
    async fn with<T, F>(&self, work: F) -> Result<T, JournalError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, JournalError> + Send + 'static,
    {
        let connection = Arc::clone(&self.connection);
        tokio::task::spawn_blocking(move || work(&mut connection.lock()))
            .await
            .map_err(|err| storage(format!("journal task failed: {err}")))?
            .map_err(|error| in_file(&self.location, error))
    }
}

impl SqliteJournal {
    /// Appends `batches` in one transaction (on the writer, perhaps with others' appends, or on this thread) and
    /// answers each: a batch that fails is rolled back to its savepoint and fails alone; a failed
    /// commit fails every batch that had succeeded.
    async fn commit(&self, batches: Vec<AppendBatch>) -> Vec<Result<u64, JournalError>> {
        if batches.is_empty() {
            return Vec::new();
        }
        self.writer.commit(batches).await
    }
}

/// The body of [`SqliteJournal::commit`], on the writer thread or the appending one. A lone batch needs no
/// savepoint: the transaction is all or nothing already.
fn commit_batches(
    connection: &mut Connection,
    batches: &[AppendBatch],
) -> Result<Vec<Result<u64, JournalError>>, JournalError> {
    let mut tx = connection.transaction_with_behavior(TransactionBehavior::Immediate).map_err(sql)?;
    let mut answers: Vec<_> = match batches {
        [only] => vec![append_batch(&tx, only)],
        _ => batches.iter().map(|batch| append_under_savepoint(&mut tx, batch)).collect(),
    };
    if answers.iter().any(Result::is_ok) {
        if let Err(error) = tx.commit() {
            let error = sql(error);
            for answer in answers.iter_mut().filter(|answer| answer.is_ok()) {
                *answer = Err(error.clone());
            }
        }
    }
    Ok(answers)
}

/// Appends one batch of several in `tx` under a savepoint: all of its records, or none.
fn append_under_savepoint(
    tx: &mut rusqlite::Transaction<'_>,
    batch: &AppendBatch,
) -> Result<u64, JournalError> {
    let savepoint = tx.savepoint().map_err(sql)?;
    let appended = append_batch(&savepoint, batch)?;
    savepoint.commit().map_err(sql)?;
    Ok(appended)
}

/// Checks one batch against the run's end and inserts its blobs, then its records.
fn append_batch(connection: &Connection, batch: &AppendBatch) -> Result<u64, JournalError> {
    let AppendBatch { run, expected_seq, records, blobs } = batch;
    check_contiguous(*expected_seq, records)?;
    let actual = batches::run_end(connection, run.as_str())?.ok_or_else(|| unknown(run.as_str()))?;
    if actual != *expected_seq {
        return Err(JournalError::new(
            JournalErrorKind::SequenceConflict { expected: *expected_seq, actual },
            format!("append to run `{run}` expected last sequence {expected_seq}, journal has {actual}"),
        ));
    }
    for blob in blobs {
        connection
            .prepare_cached("INSERT OR IGNORE INTO blobs (digest, bytes) VALUES (?1, ?2)")
            .and_then(|mut insert| insert.execute(params![&blob.digest[..], &blob.bytes[..]]))
            .map_err(sql)?;
        connection
            .prepare_cached("INSERT OR IGNORE INTO blob_refs (run_id, digest) VALUES (?1, ?2)")
            .and_then(|mut insert| insert.execute(params![run.as_str(), &blob.digest[..]]))
            .map_err(sql)?;
    }
    batches::insert(connection, run.as_str(), records, now_unix_ms())?;
    Ok(expected_seq + records.len() as u64)
}

/// `error`, its message prefixed with the journal file when it is about the store itself.
fn in_file(location: &str, error: JournalError) -> JournalError {
    match error.kind {
        JournalErrorKind::Storage | JournalErrorKind::Corrupt => {
            JournalError { message: format!("sqlite journal `{location}`: {}", error.message), ..error }
        }
        _ => error,
    }
}

fn run_exists(connection: &Connection, run: &str) -> Result<bool, JournalError> {
    connection
        .prepare_cached("SELECT 1 FROM runs WHERE run_id = ?1")
        .and_then(|mut select| select.query_row([run], |_| Ok(())).optional())
        .map(|found| found.is_some())
        .map_err(sql)
}

fn seq_param(seq: u64) -> Result<i64, JournalError> {
    i64::try_from(seq).map_err(|_| {
        JournalError::new(
            JournalErrorKind::InvalidRecord,
            format!("sequence number {seq} exceeds the sqlite range"),
        )
    })
}

#[async_trait]
impl Journal for SqliteJournal {
    async fn create_run(&self, header: &RunHeader) -> Result<(), JournalError> {
        let header = header.clone();
        self.with(move |connection| {
            let text = serde_json::to_string(&header).map_err(|err| storage(err.to_string()))?;
            let inserted = connection
                .execute(
                    "INSERT OR IGNORE INTO runs (run_id, header) VALUES (?1, ?2)",
                    params![header.run_id.as_str(), text],
                )
                .map_err(sql)?;
            if inserted == 0 {
                return Err(JournalError::new(
                    JournalErrorKind::RunExists,
                    format!("run `{}` already exists in this journal", header.run_id),
                ));
            }
            Ok(())
        })
        .await
    }

    async fn header(&self, run: &RunId) -> Result<RunHeader, JournalError> {
        let run = run.clone();
        self.with(move |connection| {
            let text: Option<String> = connection
                .query_row("SELECT header FROM runs WHERE run_id = ?1", [run.as_str()], |row| row.get(0))
                .optional()
                .map_err(sql)?;
            let text = text.ok_or_else(|| unknown(run.as_str()))?;
            serde_json::from_str(&text)
                .map_err(|err| corrupt(format!("the header of run `{run}` is unreadable: {err}")))
        })
        .await
    }

    async fn append(&self, run: &RunId, expected_seq: u64, records: &[Record]) -> Result<u64, JournalError> {
        self.append_with_blobs(run, expected_seq, records, &[]).await
    }

    /// The blobs go in before the records, in the records' transaction.
    async fn append_with_blobs(
        &self,
        run: &RunId,
        expected_seq: u64,
        records: &[Record],
        blobs: &[Blob],
    ) -> Result<u64, JournalError> {
        let batch =
            AppendBatch { run: run.clone(), expected_seq, records: records.to_vec(), blobs: blobs.to_vec() };
        let answer = self.commit(vec![batch]).await.pop();
        answer.unwrap_or_else(|| Err(storage("the append went unanswered")))
    }

    fn keeps_blobs(&self) -> bool {
        true
    }

    async fn blob(&self, digest: &[u8; 32]) -> Result<Option<Arc<[u8]>>, JournalError> {
        let digest = *digest;
        self.with(move |connection| {
            connection
                .prepare_cached("SELECT bytes FROM blobs WHERE digest = ?1")
                .and_then(|mut select| {
                    select.query_row([&digest[..]], |row| row.get::<_, Vec<u8>>(0)).optional()
                })
                .map(|bytes| bytes.map(Arc::from))
                .map_err(sql)
        })
        .await
    }

    async fn delete_run(&self, run: &RunId) -> Result<(), JournalError> {
        let run = run.clone();
        self.with(move |connection| {
            let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate).map_err(sql)?;
            if !run_exists(&tx, run.as_str())? {
                return Err(unknown(run.as_str()));
            }
            for table in ["batches", "snapshots", "owners", "blob_refs", "runs"] {
                tx.execute(&format!("DELETE FROM {table} WHERE run_id = ?1"), [run.as_str()]).map_err(sql)?;
            }
            tx.commit().map_err(sql)
        })
        .await
    }

    async fn collect_blobs(&self) -> Result<u64, JournalError> {
        self.with(|connection| {
            connection
                .execute("DELETE FROM blobs WHERE digest NOT IN (SELECT digest FROM blob_refs)", [])
                .map(|deleted| deleted as u64)
                .map_err(sql)
        })
        .await
    }

    /// One transaction for every batch, each under a savepoint of its own.
    async fn append_many(&self, batches: &[AppendBatch]) -> Vec<Result<u64, JournalError>> {
        self.commit(batches.to_vec()).await
    }

    fn commits_batches_together(&self) -> bool {
        true
    }

    fn groups_appends(&self) -> bool {
        true
    }

    async fn read(&self, run: &RunId, after: u64, limit: usize) -> Result<Vec<Record>, JournalError> {
        let run = run.clone();
        self.with(move |connection| {
            if !run_exists(connection, run.as_str())? {
                return Err(unknown(run.as_str()));
            }
            let records = batches::read(connection, run.as_str(), after, limit)?;
            check_read(&run, after, &records)?;
            Ok(records)
        })
        .await
    }

    async fn append_times(
        &self,
        run: &RunId,
        after: u64,
        through: u64,
    ) -> Result<Vec<AppendTime>, JournalError> {
        let run = run.clone();
        self.with(move |connection| batches::append_times(connection, run.as_str(), after, through)).await
    }

    async fn load_snapshot(&self, run: &RunId) -> Result<Option<Snapshot>, JournalError> {
        let run = run.clone();
        self.with(move |connection| {
            if !run_exists(connection, run.as_str())? {
                return Err(unknown(run.as_str()));
            }
            connection
                .query_row("SELECT upto_seq, bytes FROM snapshots WHERE run_id = ?1", [run.as_str()], |row| {
                    let upto: i64 = row.get(0)?;
                    let bytes: Vec<u8> = row.get(1)?;
                    Ok(Snapshot { upto_seq: upto as u64, bytes: Arc::from(bytes) })
                })
                .optional()
                .map_err(sql)
        })
        .await
    }

    async fn store_snapshot(&self, run: &RunId, snapshot: Snapshot) -> Result<(), JournalError> {
        let run = run.clone();
        self.with(move |connection| {
            let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate).map_err(sql)?;
            let last = batches::run_end(&tx, run.as_str())?.ok_or_else(|| unknown(run.as_str()))?;
            if snapshot.upto_seq > last {
                return Err(JournalError::new(
                    JournalErrorKind::InvalidRecord,
                    format!(
                        "snapshot of run `{run}` covers sequence {} but the journal ends at {last}",
                        snapshot.upto_seq
                    ),
                ));
            }
            tx.execute(
                "INSERT INTO snapshots (run_id, upto_seq, bytes) VALUES (?1, ?2, ?3)
                 ON CONFLICT (run_id) DO UPDATE SET upto_seq = excluded.upto_seq, bytes = excluded.bytes",
                params![run.as_str(), seq_param(snapshot.upto_seq)?, &snapshot.bytes[..]],
            )
            .map_err(sql)?;
            tx.commit().map_err(sql)
        })
        .await
    }

    fn durability(&self) -> Option<&str> {
        Some(self.durability)
    }

    async fn runs(&self) -> Result<Vec<RunEntry>, JournalError> {
        self.with(|connection| {
            let mut select = connection.prepare_cached(&run_entries("ORDER BY runs.rowid")).map_err(sql)?;
            let rows = select.query_map([], run_entry).map_err(sql)?;
            rows.collect::<Result<Vec<_>, _>>().map_err(sql)
        })
        .await
    }

    async fn run_entry(&self, run: &RunId) -> Result<RunEntry, JournalError> {
        let run = run.clone();
        self.with(move |connection| {
            let mut select =
                connection.prepare_cached(&run_entries("WHERE runs.run_id = ?1")).map_err(sql)?;
            select
                .query_row([run.as_str()], run_entry)
                .optional()
                .map_err(sql)?
                .ok_or_else(|| unknown(run.as_str()))
        })
        .await
    }

    fn keeps_owners(&self) -> bool {
        true
    }

    async fn claim(&self, run: &RunId, owner: &str) -> Result<(), JournalError> {
        let (run, owner) = (run.clone(), owner.to_owned());
        self.with(move |connection| {
            // Immediate: of two processes claiming at once, the second reads the first's claim.
            let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate).map_err(sql)?;
            if !run_exists(&tx, run.as_str())? {
                return Err(unknown(run.as_str()));
            }
            let current: Option<String> = tx
                .query_row("SELECT owner FROM owners WHERE run_id = ?1", [run.as_str()], |row| row.get(0))
                .optional()
                .map_err(sql)?;
            if let Some(current) = current.filter(|current| *current != owner && owner::is_another_living_process(current)) {
                return Err(JournalError::new(
                    JournalErrorKind::OwnedElsewhere,
                    format!("run `{run}` is running in another process ({current}): wait for it, or cancel it with `runlet cancel {run}`"),
                ));
            }
            tx.execute(
                "INSERT INTO owners (run_id, owner, cancel_requested) VALUES (?1, ?2, 0)
                 ON CONFLICT (run_id) DO UPDATE SET owner = excluded.owner, cancel_requested = 0",
                params![run.as_str(), owner],
            )
            .map_err(sql)?;
            tx.commit().map_err(sql)
        })
        .await
    }

    async fn release(&self, run: &RunId, owner: &str) -> Result<(), JournalError> {
        let (run, owner) = (run.clone(), owner.to_owned());
        self.with(move |connection| {
            connection
                .execute("DELETE FROM owners WHERE run_id = ?1 AND owner = ?2", params![run.as_str(), owner])
                .map(drop)
                .map_err(sql)
        })
        .await
    }

    async fn request_cancel(&self, run: &RunId) -> Result<(), JournalError> {
        let run = run.clone();
        self.with(move |connection| {
            if !run_exists(connection, run.as_str())? {
                return Err(unknown(run.as_str()));
            }
            let marked = connection
                .execute("UPDATE owners SET cancel_requested = 1 WHERE run_id = ?1", [run.as_str()])
                .map_err(sql)?;
            match marked {
                0 => {
                    Err(JournalError::new(JournalErrorKind::NotOwned, format!("no process owns run `{run}`")))
                }
                _ => Ok(()),
            }
        })
        .await
    }

    async fn cancel_requests(&self, owner: &str) -> Result<Vec<RunId>, JournalError> {
        let owner = owner.to_owned();
        self.with(move |connection| {
            let mut select = connection
                .prepare_cached(
                    "SELECT run_id FROM owners WHERE owner = ?1 AND cancel_requested = 1 ORDER BY run_id",
                )
                .map_err(sql)?;
            let rows =
                select.query_map([owner], |row| Ok(RunId::new(row.get::<_, String>(0)?))).map_err(sql)?;
            rows.collect::<Result<Vec<_>, _>>().map_err(sql)
        })
        .await
    }
}
