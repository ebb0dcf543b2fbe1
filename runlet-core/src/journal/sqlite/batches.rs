//! How records are kept: each append's records as one row of the `batches` table — the records
//! `first_seq ..= last_seq` of one run, their bytes end to end in `bytes`, each one's length in
//! `lengths` (4 bytes, little-endian, per record) and when they were appended (`at_ms`, Unix
//! milliseconds; unknown for records older journals kept without it). An append is then one
//! insert however many records it holds, the file holds no per-record key, and a run's last
//! append time is its last row's. A row of [`PACK_FROM`] bytes or more keeps them as one LZ4 block
//! (`codec` 1) when that is smaller: records spell out their field names, so a wide round's
//! bytes shrink about fivefold, and the commit writes (and syncs) that much less. A row that
//! does not add up (its lengths against its span and its bytes, or bytes that do not unpack to
//! its lengths) is reported as a damaged journal, never read past. Processes that share a file
//! run one layout: a process of layout 4 that had the file open when another moved it to 5 reads
//! packed rows as damaged (nothing is lost; upgrade every process sharing the file together).

use rusqlite::{Connection, OptionalExtension, params};

use super::{corrupt, seq_param, sql};
use crate::journal::{AppendTime, Bytes, JournalError, JournalErrorKind, Record};

/// The table, created for a fresh file and by the migration from layout version 3.
pub(super) const CREATE: &str = "
    CREATE TABLE IF NOT EXISTS batches (
        run_id TEXT NOT NULL, last_seq INTEGER NOT NULL, first_seq INTEGER NOT NULL,
        lengths BLOB NOT NULL, bytes BLOB NOT NULL, at_ms INTEGER, codec INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (run_id, last_seq));";

/// What layout version 5 adds to a file of version 4: how each row keeps its bytes.
pub(super) const ADD_CODEC: &str = "ALTER TABLE batches ADD COLUMN codec INTEGER NOT NULL DEFAULT 0;";

const LENGTH: usize = 4;

/// `codec` of a row whose `bytes` are its records' bytes as they are.
const RAW: i64 = 0;
/// `codec` of a row whose `bytes` are its records' bytes as one LZ4 block.
const LZ4: i64 = 1;

/// Rows of fewer bytes are kept as they are: a small round (a chain's step) shrinks little, and
/// would pay for the packing on every commit.
const PACK_FROM: usize = 512;

/// An LZ4 block unpacks to less than 255 times its size (a match token of one byte adds at most
/// 255 bytes); a row whose lengths claim more than this many times its size is damaged, and is
/// given no more memory than that before it is found so.
const MOST_UNPACKED_PER_BYTE: usize = 256;

/// Inserts `records` (contiguous, at least one) of `run`, appended at `at_ms` when known, as one
/// row.
pub(super) fn insert(
    connection: &Connection,
    run: &str,
    records: &[Record],
    at_ms: impl Into<Option<u64>>,
) -> Result<(), JournalError> {
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
    let at_ms = at_ms.into().map(|at| i64::try_from(at).unwrap_or(i64::MAX));
    let (bytes, codec) = packed(bytes);
    connection
        .prepare_cached(
            "INSERT INTO batches (run_id, last_seq, first_seq, lengths, bytes, at_ms, codec)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )
        .and_then(|mut insert| insert.execute(params![run, last, first, lengths, bytes, at_ms, codec]))
        .map_err(sql)?;
    Ok(())
}

/// `bytes` as a row keeps them, with their codec: one LZ4 block when they are [`PACK_FROM`]
/// bytes or more and that is smaller, else as they are.
fn packed(bytes: Vec<u8>) -> (Vec<u8>, i64) {
    if bytes.len() >= PACK_FROM {
        let block = lz4_flex::block::compress(&bytes);
        if block.len() < bytes.len() {
            return (block, LZ4);
        }
    }
    (bytes, RAW)
}

/// The records' bytes a row of `codec` keeps as `stored`, `size` bytes in all by its lengths.
fn unpacked(stored: &[u8], codec: i64, size: usize) -> Result<Bytes, String> {
    match codec {
        RAW if stored.len() == size => Ok(Bytes::copy_from_slice(stored)),
        RAW => Err(format!("their lengths add up to {size} bytes, and the row holds {}", stored.len())),
        LZ4 if size > stored.len().saturating_mul(MOST_UNPACKED_PER_BYTE) => Err(format!(
            "their lengths add up to {size} bytes, more than {} packed bytes can hold",
            stored.len()
        )),
        LZ4 => {
            let mut unpacked = vec![0; size];
            match lz4_flex::block::decompress_into(stored, &mut unpacked) {
                Ok(written) if written == size => Ok(Bytes::from(unpacked)),
                Ok(written) => {
                    Err(format!("they unpack to {written} bytes, and their lengths add up to {size}"))
                }
                Err(error) => Err(format!("they do not unpack: {error}")),
            }
        }
        other => Err(format!("they are kept in an unknown way (codec {other})")),
    }
}

/// The last sequence number of `run` (0 before its first record), or `None` for an unknown run.
/// A row ending below record 1 is damage that reads and this end would otherwise pass over (they
/// go by `last_seq`), so that an append would write past it: it is refused here, and by a read
/// from the run's start. Every other row a read meets is checked whole.
pub(super) fn run_end(connection: &Connection, run: &str) -> Result<Option<u64>, JournalError> {
    refuse_rows_ending_below_one(connection, run)?;
    connection
        .prepare_cached(
            "SELECT COALESCE((SELECT MAX(last_seq) FROM batches WHERE run_id = ?1), 0)
             FROM runs WHERE run_id = ?1",
        )
        .and_then(|mut select| select.query_row([run], |row| row.get::<_, i64>(0)).optional())
        .map(|last| last.map(|last| last as u64))
        .map_err(sql)
}

/// Refuses `run` when a row of it ends below record 1 (see [`run_end`]): one index seek.
fn refuse_rows_ending_below_one(connection: &Connection, run: &str) -> Result<(), JournalError> {
    let lowest: Option<i64> = connection
        .prepare_cached("SELECT MIN(last_seq) FROM batches WHERE run_id = ?1")
        .and_then(|mut select| select.query_row([run], |row| row.get(0)))
        .map_err(sql)?;
    match lowest {
        Some(lowest) if lowest < 1 => Err(corrupt(format!(
            "a row of the records of run `{run}` ends at record {lowest}: the stored records are damaged (numbers start at 1)"
        ))),
        _ => Ok(()),
    }
}

/// Up to `limit` records of `run` after sequence number `after`, in order.
pub(super) fn read(
    connection: &Connection,
    run: &str,
    after: u64,
    limit: usize,
) -> Result<Vec<Record>, JournalError> {
    if after == 0 {
        refuse_rows_ending_below_one(connection, run)?;
    }
    let mut select = connection
        .prepare_cached(
            "SELECT first_seq, last_seq, lengths, bytes, codec FROM batches
             WHERE run_id = ?1 AND last_seq > ?2 ORDER BY last_seq",
        )
        .map_err(sql)?;
    let mut rows = select.query(params![run, i64::try_from(after).unwrap_or(i64::MAX)]).map_err(sql)?;
    let mut records = Vec::new();
    while records.len() < limit {
        let Some(row) = rows.next().map_err(sql)? else { break };
        let (first, last): (i64, i64) = (row.get(0).map_err(sql)?, row.get(1).map_err(sql)?);
        let lengths = row.get_ref(2).and_then(|value| Ok(value.as_blob()?)).map_err(sql)?;
        let stored = row.get_ref(3).and_then(|value| Ok(value.as_blob()?)).map_err(sql)?;
        let damaged =
            |why: &str| corrupt(format!("the records {first}..={last} of run `{run}` are damaged: {why}"));
        let codec: i64 = row.get(4).map_err(|_| damaged("their codec is not a number"))?;
        let span = (first >= 1 && last >= first).then(|| last - first + 1);
        let expected = span.and_then(|count| usize::try_from(count).ok()?.checked_mul(LENGTH));
        if expected != Some(lengths.len()) {
            return Err(damaged("their lengths do not match their sequence numbers"));
        }
        let lengths = lengths
            .chunks_exact(LENGTH)
            .map(|length| u32::from_le_bytes(length.try_into().expect("chunks of LENGTH")) as usize);
        let size = lengths.clone().try_fold(0usize, |sum, length| sum.checked_add(length));
        let size = size.ok_or_else(|| damaged("their lengths add up past the address space"))?;
        // The row's records are slices of one copy of its bytes.
        let shared = unpacked(stored, codec, size).map_err(|why| damaged(&why))?;
        let mut offset = 0usize;
        for (index, length) in lengths.enumerate() {
            let end = offset + length;
            let seq = first as u64 + index as u64;
            if seq > after && records.len() < limit {
                records.push(Record { seq, bytes: shared.slice(offset..end) });
            }
            offset = end;
        }
    }
    Ok(records)
}

/// When the rows of `run` holding the records after `after` up to `through` were appended, in
/// order, up to the first row kept without a time (a file of an older layout): the times given
/// are those of consecutive appends. At most one row per record is read.
pub(super) fn append_times(
    connection: &Connection,
    run: &str,
    after: u64,
    through: u64,
) -> Result<Vec<AppendTime>, JournalError> {
    let rows = i64::try_from(through.saturating_sub(after)).unwrap_or(i64::MAX);
    let mut select = connection
        .prepare_cached(
            "SELECT last_seq, at_ms FROM batches WHERE run_id = ?1 AND last_seq > ?2
             ORDER BY last_seq LIMIT ?3",
        )
        .map_err(sql)?;
    let mut found =
        select.query(params![run, i64::try_from(after).unwrap_or(i64::MAX), rows]).map_err(sql)?;
    let mut times = Vec::new();
    while let Some(row) = found.next().map_err(sql)? {
        let (last, at_ms): (i64, Option<i64>) = (row.get(0).map_err(sql)?, row.get(1).map_err(sql)?);
        let Some(unix_ms) = at_ms.and_then(|at| u64::try_from(at).ok()) else { break };
        let through_seq = u64::try_from(last).unwrap_or(0);
        times.push(AppendTime { through_seq, unix_ms });
        if through_seq >= through {
            break;
        }
    }
    Ok(times)
}

/// Moves the records of a file of layout 1 to 3, one row per record, into `batches` (a row
/// each; the run's last one takes the time layouts 2 and 3 kept of the run's last append), and
/// drops their old tables.
pub(super) fn migrate_records(connection: &Connection) -> Result<(), JournalError> {
    connection.execute_batch(CREATE).map_err(sql)?;
    let kept_times: bool = connection
        .query_row(
            "SELECT COUNT(*) > 0 FROM sqlite_schema WHERE type = 'table' AND name = 'appends'",
            [],
            |row| row.get(0),
        )
        .map_err(sql)?;
    let select = if kept_times {
        "SELECT records.run_id, records.seq, records.bytes,
                CASE WHEN records.seq = (SELECT MAX(seq) FROM records AS later WHERE later.run_id = records.run_id)
                     THEN appends.at_ms END
         FROM records LEFT JOIN appends ON appends.run_id = records.run_id"
    } else {
        "SELECT run_id, seq, bytes, NULL FROM records"
    };
    let mut select = connection.prepare(select).map_err(sql)?;
    let mut rows = select.query([]).map_err(sql)?;
    while let Some(row) = rows.next().map_err(sql)? {
        let run: String = row.get(0).map_err(sql)?;
        let seq: i64 = row.get(1).map_err(sql)?;
        let bytes: Vec<u8> = row.get(2).map_err(sql)?;
        let at_ms: Option<i64> = row.get(3).map_err(sql)?;
        let seq =
            u64::try_from(seq).map_err(|_| corrupt(format!("run `{run}` has a record numbered {seq}")))?;
        let record = Record { seq, bytes: bytes.into() };
        insert(connection, &run, std::slice::from_ref(&record), at_ms.and_then(|at| u64::try_from(at).ok()))?;
    }
    drop(rows);
    drop(select);
    connection.execute_batch("DROP TABLE records; DROP TABLE IF EXISTS appends;").map_err(sql)
}
