//! How records are kept: each append's records as one row of the `batches` table — the records
//! `first_seq ..= last_seq` of one run, their bytes end to end in `bytes` and each one's length
//! in `lengths` (4 bytes, little-endian, per record). An append is then one insert however many
//! records it holds, and the file holds no per-record key. A row that does not add up (lengths
//! against its span and its bytes) is reported as a damaged journal, never read past.

use std::sync::Arc;

use rusqlite::{Connection, params};

use super::{corrupt, seq_param, sql};
use crate::journal::{JournalError, JournalErrorKind, Record};

/// The table, created for a fresh file and by the migration from layout version 3.
pub(super) const CREATE: &str = "
    CREATE TABLE IF NOT EXISTS batches (
        run_id TEXT NOT NULL, last_seq INTEGER NOT NULL, first_seq INTEGER NOT NULL,
        lengths BLOB NOT NULL, bytes BLOB NOT NULL,
        PRIMARY KEY (run_id, last_seq));";

const LENGTH: usize = 4;

/// Inserts `records` (contiguous, at least one) of `run` as one row.
pub(super) fn insert(connection: &Connection, run: &str, records: &[Record]) -> Result<(), JournalError> {
    let (Some(first), Some(last)) = (records.first(), records.last()) else {
        return Ok(());
    };
    let mut lengths = Vec::with_capacity(records.len() * LENGTH);
    let mut bytes = Vec::with_capacity(records.iter().map(|record| record.bytes.len()).sum());
    for record in records {
        let length = u32::try_from(record.bytes.len()).map_err(|_| {
            JournalError::new(
                JournalErrorKind::InvalidRecord,
                format!(
                    "record {} is {} bytes, more than a journal record may hold",
                    record.seq,
                    record.bytes.len()
                ),
            )
        })?;
        lengths.extend_from_slice(&length.to_le_bytes());
        bytes.extend_from_slice(&record.bytes);
    }
    let (first, last) = (seq_param(first.seq)?, seq_param(last.seq)?);
    connection
        .prepare_cached(
            "INSERT INTO batches (run_id, last_seq, first_seq, lengths, bytes) VALUES (?1, ?2, ?3, ?4, ?5)",
        )
        .and_then(|mut insert| insert.execute(params![run, last, first, lengths, bytes]))
        .map_err(sql)?;
    Ok(())
}

/// The last sequence number of `run` (0 before its first record), or `None` for an unknown run.
pub(super) fn run_end(connection: &Connection, run: &str) -> Result<Option<u64>, JournalError> {
    use rusqlite::OptionalExtension;
    connection
        .prepare_cached(
            "SELECT COALESCE((SELECT MAX(last_seq) FROM batches WHERE run_id = ?1), 0)
             FROM runs WHERE run_id = ?1",
        )
        .and_then(|mut select| select.query_row([run], |row| row.get::<_, i64>(0)).optional())
        .map(|last| last.map(|last| last as u64))
        .map_err(sql)
}

/// Up to `limit` records of `run` after sequence number `after`, in order.
pub(super) fn read(
    connection: &Connection,
    run: &str,
    after: u64,
    limit: usize,
) -> Result<Vec<Record>, JournalError> {
    let mut select = connection
        .prepare_cached(
            "SELECT first_seq, last_seq, lengths, bytes FROM batches
             WHERE run_id = ?1 AND last_seq > ?2 ORDER BY last_seq",
        )
        .map_err(sql)?;
    let mut rows = select.query(params![run, i64::try_from(after).unwrap_or(i64::MAX)]).map_err(sql)?;
    let mut records = Vec::new();
    while records.len() < limit {
        let Some(row) = rows.next().map_err(sql)? else { break };
        let (first, last): (i64, i64) = (row.get(0).map_err(sql)?, row.get(1).map_err(sql)?);
        let lengths = row.get_ref(2).and_then(|value| Ok(value.as_blob()?)).map_err(sql)?;
        let bytes = row.get_ref(3).and_then(|value| Ok(value.as_blob()?)).map_err(sql)?;
        let damaged =
            |why: &str| corrupt(format!("the records {first}..={last} of run `{run}` are damaged: {why}"));
        let count = usize::try_from(last - first + 1).ok().filter(|_| first >= 1 && last >= first);
        if count.is_none_or(|count| lengths.len() != count * LENGTH) {
            return Err(damaged("their lengths do not match their sequence numbers"));
        }
        let mut offset = 0usize;
        for (index, length) in lengths.chunks_exact(LENGTH).enumerate() {
            let length = u32::from_le_bytes(length.try_into().expect("chunks of LENGTH")) as usize;
            let frame = offset.checked_add(length).and_then(|end| bytes.get(offset..end));
            let frame = frame.ok_or_else(|| damaged("their lengths run past their bytes"))?;
            offset += length;
            let seq = first as u64 + index as u64;
            if seq > after && records.len() < limit {
                records.push(Record { seq, bytes: Arc::from(frame) });
            }
        }
        if offset != bytes.len() {
            return Err(damaged("their bytes run past their lengths"));
        }
    }
    Ok(records)
}

/// Moves the records of a layout-3 file, one row per record, into `batches` (a row each),
/// and drops their old table.
pub(super) fn migrate_records(connection: &Connection) -> Result<(), JournalError> {
    connection.execute_batch(CREATE).map_err(sql)?;
    let mut select =
        connection.prepare("SELECT run_id, seq, bytes FROM records ORDER BY run_id, seq").map_err(sql)?;
    let mut rows = select.query([]).map_err(sql)?;
    while let Some(row) = rows.next().map_err(sql)? {
        let run: String = row.get(0).map_err(sql)?;
        let seq: i64 = row.get(1).map_err(sql)?;
        let bytes: Vec<u8> = row.get(2).map_err(sql)?;
        let record = Record {
            seq: u64::try_from(seq).map_err(|_| corrupt(format!("record {seq} of run `{run}`")))?,
            bytes: bytes.into(),
        };
        insert(connection, &run, std::slice::from_ref(&record))?;
    }
    drop(rows);
    drop(select);
    connection.execute_batch("DROP TABLE records;").map_err(sql)
}
