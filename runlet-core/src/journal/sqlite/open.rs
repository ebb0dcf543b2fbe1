//! Opening an SQLite journal: a damaged file is refused (`PRAGMA quick_check`), a locked one
//! waited for (busy timeout), WAL and the chosen `synchronous` level are read back, and the
//! tables are created once even when several connections open a fresh file at the same moment.

use std::time::Duration;

use rusqlite::{Connection, TransactionBehavior};

use super::{Durability, SqliteJournal, batches, sql};
use crate::journal::{JournalError, JournalErrorKind};

/// The layout version this build writes, kept in SQLite's `user_version`. Files of version 1
/// (no `owners` table), 2 (no blobs), 3 (a row per record, the last append's time in a table
/// of its own) and 4 (every row's bytes as they are, with no `codec`) are brought up to it when
/// opened.
pub(super) const SCHEMA_VERSION: i64 = 5;

/// How long a statement waits for another connection's lock before failing with `RL7005`.
pub(super) const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The tables of the current layout.
const TABLES: [&str; 6] = ["runs", "batches", "snapshots", "owners", "blobs", "blob_refs"];

/// The tables of earlier layouts that the current one no longer has (a row per record and the
/// last append's time, before layout 4).
const FORMER_TABLES: [&str; 2] = ["records", "appends"];

/// The table version 2 adds: which process owns each run (with a cancellation requested of it),
/// for run listings and `runlet cancel`.
const CREATE_OWNERS: &str = "
    CREATE TABLE IF NOT EXISTS owners (
        run_id TEXT PRIMARY KEY, owner TEXT NOT NULL, cancel_requested INTEGER NOT NULL) WITHOUT ROWID;";

/// The tables version 3 adds: large values kept apart from the records that name them, by the
/// SHA-256 of their bytes, and which runs name each (a blob no run names is garbage).
const CREATE_BLOBS: &str = "
    CREATE TABLE IF NOT EXISTS blobs (digest BLOB PRIMARY KEY, bytes BLOB NOT NULL) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS blob_refs (
        run_id TEXT NOT NULL, digest BLOB NOT NULL, PRIMARY KEY (run_id, digest)) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS blob_refs_by_digest ON blob_refs (digest);";

const CREATE_TABLES: &str = "
    CREATE TABLE IF NOT EXISTS runs (run_id TEXT PRIMARY KEY, header TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS snapshots (
        run_id TEXT PRIMARY KEY, upto_seq INTEGER NOT NULL, bytes BLOB NOT NULL);";

/// Whether the connection is to a file (WAL, durability as asked) or private memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Medium {
    File,
    Memory,
}

/// Makes `connection` a journal: checks the file, sets the pragmas and creates or checks the
/// layout. Errors are plain (the caller names the file).
pub(super) fn prepare(
    connection: &mut Connection,
    medium: Medium,
    durability: Durability,
) -> Result<(), JournalError> {
    connection.busy_timeout(BUSY_TIMEOUT).map_err(sql)?;
    check_integrity(connection)?;
    // Before WAL is set, which would change another program's database.
    refuse_foreign(connection)?;
    if medium == Medium::File {
        let mode: String =
            connection.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0)).map_err(sql)?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(JournalError::new(
                JournalErrorKind::Storage,
                format!("SQLite kept journal mode `{mode}` where WAL was asked for"),
            ));
        }
        if durability == Durability::Full {
            connection
                .pragma_update(None, "wal_autocheckpoint", SqliteJournal::WAL_PAGES_BEFORE_CHECKPOINT)
                .map_err(sql)?;
        }
    }
    connection.pragma_update(None, "synchronous", durability.as_str()).map_err(sql)?;
    let level: i64 = connection.pragma_query_value(None, "synchronous", |row| row.get(0)).map_err(sql)?;
    if level != durability.level() {
        return Err(JournalError::new(
            JournalErrorKind::Storage,
            format!("SQLite reports synchronous level {level} where {} was asked for", durability.as_str()),
        ));
    }
    create_layout(connection)
}

/// Refuses a file SQLite's quick integrity check finds damaged, or that is no database.
fn check_integrity(connection: &Connection) -> Result<(), JournalError> {
    let corrupt = |detail: String| {
        JournalError::new(
            JournalErrorKind::Corrupt,
            format!("the file fails SQLite's integrity check: {detail}"),
        )
    };
    let mut check = connection.prepare("PRAGMA quick_check").map_err(sql)?;
    let findings = check
        .query_map([], |row| row.get::<_, String>(0))
        .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
        .map_err(|err| match sql(err) {
            error if error.kind == JournalErrorKind::Corrupt => corrupt(error.message),
            error => error,
        })?;
    match findings.as_slice() {
        [only] if only == "ok" => Ok(()),
        [] => Err(corrupt("it reported nothing".into())),
        findings => Err(corrupt(findings.iter().take(3).cloned().collect::<Vec<_>>().join("; "))),
    }
}

/// Refuses an SQLite database of another program: one with a table no journal layout has
/// (whatever its `user_version`, which other programs set too).
fn refuse_foreign(connection: &Connection) -> Result<(), JournalError> {
    let mut tables = connection
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
        .map_err(sql)?;
    let names = tables
        .query_map([], |row| row.get::<_, String>(0))
        .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
        .map_err(sql)?;
    let known =
        |name: &str| TABLES.contains(&name) || FORMER_TABLES.contains(&name) || name.starts_with("sqlite_");
    match names.into_iter().find(|name| !known(name)) {
        Some(table) => Err(JournalError::new(
            JournalErrorKind::Storage,
            format!("the file is an SQLite database but not a Runlet journal (it has a table `{table}`)"),
        )),
        None => Ok(()),
    }
}

/// Creates the tables of a fresh file or checks the layout of an existing one, in one
/// `IMMEDIATE` transaction: a second connection opening the same fresh file waits for it and
/// then finds the layout in place.
fn create_layout(connection: &mut Connection) -> Result<(), JournalError> {
    let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate).map_err(sql)?;
    let version: i64 = tx.pragma_query_value(None, "user_version", |row| row.get(0)).map_err(sql)?;
    match version {
        0 => {
            refuse_foreign(&tx)?;
            tx.execute_batch(CREATE_TABLES).map_err(sql)?;
            tx.execute_batch(batches::CREATE).map_err(sql)?;
            tx.execute_batch(CREATE_OWNERS).map_err(sql)?;
            tx.execute_batch(CREATE_BLOBS).map_err(sql)?;
            tx.pragma_update(None, "user_version", SCHEMA_VERSION).map_err(sql)?;
        }
        1..=3 => {
            tx.execute_batch(CREATE_OWNERS).map_err(sql)?;
            tx.execute_batch(CREATE_BLOBS).map_err(sql)?;
            batches::migrate_records(&tx)?;
            tx.pragma_update(None, "user_version", SCHEMA_VERSION).map_err(sql)?;
        }
        4 => {
            tx.execute_batch(batches::ADD_CODEC).map_err(sql)?;
            tx.pragma_update(None, "user_version", SCHEMA_VERSION).map_err(sql)?;
        }
        SCHEMA_VERSION => {}
        other => {
            return Err(JournalError::new(
                JournalErrorKind::Storage,
                format!("the journal has layout version {other}; this runtime reads {SCHEMA_VERSION}"),
            ));
        }
    }
    tx.commit().map_err(sql)
}
