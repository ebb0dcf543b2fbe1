//! A durable journal in one SQLite file (WAL mode): runs, records and snapshots in three tables,
//! each append one transaction. Blocking SQLite calls run on tokio's blocking pool.

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use parking_lot::Mutex;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::{Journal, JournalError, JournalErrorKind, Record, RunHeader, RunId, Snapshot, check_contiguous};

/// The layout version this build writes, kept in SQLite's `user_version`.
const SCHEMA_VERSION: i64 = 1;

/// How long a commit waits for the disk (reported with every benchmark figure).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// `synchronous=FULL`: a commit is on stable storage before `append` returns.
    Full,
    /// `synchronous=NORMAL` in WAL mode: survives a process crash; a power loss may drop the
    /// last commits.
    Normal,
}

/// A journal stored in one SQLite database file.
#[derive(Debug, Clone)]
pub struct SqliteJournal {
    connection: Arc<Mutex<Connection>>,
    durability: Durability,
}

fn storage(err: impl std::fmt::Display) -> JournalError {
    JournalError::new(JournalErrorKind::Storage, format!("sqlite journal: {err}"))
}

fn unknown(run: &str) -> JournalError {
    JournalError::new(JournalErrorKind::UnknownRun, format!("run `{run}` is not in this journal"))
}

impl SqliteJournal {
    /// Opens (creating if needed) the journal at `path`.
    pub fn open(path: impl AsRef<Path>, durability: Durability) -> Result<Self, JournalError> {
        let connection = Connection::open(path.as_ref()).map_err(storage)?;
        Self::init(connection, durability)
    }

    /// A private journal in memory with the same SQL paths as a file; for tests.
    pub fn open_in_memory() -> Result<Self, JournalError> {
        Self::init(Connection::open_in_memory().map_err(storage)?, Durability::Full)
    }

    pub fn durability(&self) -> Durability {
        self.durability
    }

    fn init(connection: Connection, durability: Durability) -> Result<Self, JournalError> {
        let synchronous = match durability {
            Durability::Full => "FULL",
            Durability::Normal => "NORMAL",
        };
        connection
            .execute_batch(&format!("PRAGMA journal_mode=WAL; PRAGMA synchronous={synchronous};"))
            .map_err(storage)?;
        let version: i64 =
            connection.query_row("PRAGMA user_version", [], |row| row.get(0)).map_err(storage)?;
        match version {
            0 => connection
                .execute_batch(&format!(
                    "BEGIN;
                     CREATE TABLE runs (run_id TEXT PRIMARY KEY, header TEXT NOT NULL);
                     CREATE TABLE records (
                         run_id TEXT NOT NULL, seq INTEGER NOT NULL, bytes BLOB NOT NULL,
                         PRIMARY KEY (run_id, seq)) WITHOUT ROWID;
                     CREATE TABLE snapshots (
                         run_id TEXT PRIMARY KEY, upto_seq INTEGER NOT NULL, bytes BLOB NOT NULL);
                     PRAGMA user_version = {SCHEMA_VERSION};
                     COMMIT;"
                ))
                .map_err(storage)?,
            SCHEMA_VERSION => {}
            other => {
                return Err(JournalError::new(
                    JournalErrorKind::Storage,
                    format!("sqlite journal has layout version {other}; this runtime reads {SCHEMA_VERSION}"),
                ));
            }
        }
        Ok(SqliteJournal { connection: Arc::new(Mutex::new(connection)), durability })
    }

    /// Runs `work` with the connection on the blocking pool.
    async fn with<T, F>(&self, work: F) -> Result<T, JournalError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, JournalError> + Send + 'static,
    {
        let connection = Arc::clone(&self.connection);
        tokio::task::spawn_blocking(move || work(&mut connection.lock()))
            .await
            .map_err(|err| storage(format!("journal task failed: {err}")))?
    }
}

fn run_exists(connection: &Connection, run: &str) -> Result<bool, JournalError> {
    connection
        .query_row("SELECT 1 FROM runs WHERE run_id = ?1", [run], |_| Ok(()))
        .optional()
        .map(|found| found.is_some())
        .map_err(storage)
}

fn last_seq(connection: &Connection, run: &str) -> Result<u64, JournalError> {
    let last: i64 = connection
        .query_row("SELECT COALESCE(MAX(seq), 0) FROM records WHERE run_id = ?1", [run], |row| row.get(0))
        .map_err(storage)?;
    Ok(last as u64)
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
            let text = serde_json::to_string(&header).map_err(storage)?;
            let inserted = connection
                .execute(
                    "INSERT OR IGNORE INTO runs (run_id, header) VALUES (?1, ?2)",
                    params![header.run_id.as_str(), text],
                )
                .map_err(storage)?;
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
                .map_err(storage)?;
            let text = text.ok_or_else(|| unknown(run.as_str()))?;
            serde_json::from_str(&text)
                .map_err(|err| storage(format!("run header of `{run}` is unreadable: {err}")))
        })
        .await
    }

    async fn append(&self, run: &RunId, expected_seq: u64, records: &[Record]) -> Result<u64, JournalError> {
        check_contiguous(expected_seq, records)?;
        let (run, records) = (run.clone(), records.to_vec());
        self.with(move |connection| {
            let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate).map_err(storage)?;
            if !run_exists(&tx, run.as_str())? {
                return Err(unknown(run.as_str()));
            }
            let actual = last_seq(&tx, run.as_str())?;
            if actual != expected_seq {
                return Err(JournalError::new(
                    JournalErrorKind::SequenceConflict { expected: expected_seq, actual },
                    format!(
                        "append to run `{run}` expected last sequence {expected_seq}, journal has {actual}"
                    ),
                ));
            }
            {
                let mut insert = tx
                    .prepare_cached("INSERT INTO records (run_id, seq, bytes) VALUES (?1, ?2, ?3)")
                    .map_err(storage)?;
                for record in &records {
                    insert
                        .execute(params![run.as_str(), seq_param(record.seq)?, &record.bytes[..]])
                        .map_err(storage)?;
                }
            }
            tx.commit().map_err(storage)?;
            Ok(expected_seq + records.len() as u64)
        })
        .await
    }

    async fn read(&self, run: &RunId, after: u64, limit: usize) -> Result<Vec<Record>, JournalError> {
        let run = run.clone();
        self.with(move |connection| {
            if !run_exists(connection, run.as_str())? {
                return Err(unknown(run.as_str()));
            }
            let mut select = connection
                .prepare_cached(
                    "SELECT seq, bytes FROM records WHERE run_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
                )
                .map_err(storage)?;
            let after = i64::try_from(after).unwrap_or(i64::MAX);
            let limit = i64::try_from(limit).unwrap_or(i64::MAX);
            let rows = select
                .query_map(params![run.as_str(), after, limit], |row| {
                    let seq: i64 = row.get(0)?;
                    let bytes: Vec<u8> = row.get(1)?;
                    Ok(Record { seq: seq as u64, bytes: Arc::from(bytes) })
                })
                .map_err(storage)?;
            rows.collect::<Result<Vec<_>, _>>().map_err(storage)
        })
        .await
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
                .map_err(storage)
        })
        .await
    }

    async fn store_snapshot(&self, run: &RunId, snapshot: Snapshot) -> Result<(), JournalError> {
        let run = run.clone();
        self.with(move |connection| {
            let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate).map_err(storage)?;
            if !run_exists(&tx, run.as_str())? {
                return Err(unknown(run.as_str()));
            }
            let last = last_seq(&tx, run.as_str())?;
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
            .map_err(storage)?;
            tx.commit().map_err(storage)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn passes_the_shared_journal_suite_in_memory() {
        super::super::suite::check(&SqliteJournal::open_in_memory().expect("open")).await;
    }

    #[tokio::test]
    async fn passes_the_shared_journal_suite_on_disk_and_survives_reopening() {
        let dir = std::env::temp_dir().join(format!("runlet-sqlite-journal-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("journal.db");
        let _ = std::fs::remove_file(&path);
        let journal = SqliteJournal::open(&path, Durability::Normal).expect("open");
        super::super::suite::check(&journal).await;
        let header = RunHeader {
            run_id: RunId::new("reopened"),
            language_version: 1,
            runtime_version: "test".into(),
            source_digest: "s".into(),
            registry_digest: "r".into(),
            inputs_digest: "i".into(),
            config_digest: "c".into(),
            keyed_digest: "hmac-sha256:k".into(),
            value_encoding_version: 1,
            event_encoding_version: 1,
        };
        journal.create_run(&header).await.expect("create");
        let record = Record { seq: 1, bytes: Arc::from(&b"kept"[..]) };
        journal.append(&header.run_id, 0, std::slice::from_ref(&record)).await.expect("append");
        drop(journal);
        let reopened = SqliteJournal::open(&path, Durability::Full).expect("reopen");
        assert_eq!(reopened.header(&header.run_id).await.expect("header"), header);
        assert_eq!(reopened.read(&header.run_id, 0, 10).await.expect("read"), vec![record]);
        std::fs::remove_dir_all(&dir).expect("clean up");
    }

    #[test]
    fn refuses_a_database_with_a_newer_layout() {
        let dir = std::env::temp_dir().join(format!("runlet-sqlite-layout-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("future.db");
        let _ = std::fs::remove_file(&path);
        Connection::open(&path)
            .expect("create")
            .execute_batch("PRAGMA user_version = 99;")
            .expect("set version");
        let err = SqliteJournal::open(&path, Durability::Full).expect_err("newer layout");
        assert_eq!(err.kind, JournalErrorKind::Storage);
        assert!(err.message.contains("layout version 99"), "{}", err.message);
        std::fs::remove_dir_all(&dir).expect("clean up");
    }
}
