use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use super::*;
use crate::journal::Bytes;
use crate::journal::suite;

/// A directory of its own under the system's temporary directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(label: &str) -> Scratch {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("runlet-sqlite-{label}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        Scratch(dir)
    }

    fn file(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn header(run: &str) -> RunHeader {
    RunHeader {
        run_id: RunId::new(run),
        language_version: 1,
        runtime_version: "test".into(),
        source_digest: "s".into(),
        registry_digest: "r".into(),
        inputs_digest: "i".into(),
        config_digest: "c".into(),
        keyed_digest: "hmac-sha256:k".into(),
        value_encoding_version: 1,
        event_encoding_version: 1,
        retained: None,
    }
}

#[tokio::test]
async fn passes_the_shared_journal_suite_in_memory() {
    suite::check(&SqliteJournal::open_in_memory().expect("open")).await;
}

#[tokio::test]
async fn passes_the_shared_journal_suite_on_disk_and_survives_reopening() {
    let scratch = Scratch::new("suite");
    let path = scratch.file("journal.db");
    let journal = SqliteJournal::open(&path, Durability::Normal).expect("open");
    suite::check(&journal).await;
    let header = header("reopened");
    journal.create_run(&header).await.expect("create");
    let record = Record { seq: 1, bytes: Bytes::from_static(b"kept") };
    journal.append(&header.run_id, 0, std::slice::from_ref(&record)).await.expect("append");
    drop(journal);
    let reopened = SqliteJournal::open(&path, Durability::Full).expect("reopen");
    assert_eq!(reopened.header(&header.run_id).await.expect("header"), header);
    assert_eq!(reopened.read(&header.run_id, 0, 10).await.expect("read"), vec![record]);
}

#[test]
fn the_durability_asked_for_is_the_one_reported() {
    let scratch = Scratch::new("durability");
    let full = SqliteJournal::open(scratch.file("full.db"), Durability::Full).expect("open");
    assert_eq!(full.durability(), Some("sqlite-wal-full"));
    let normal = SqliteJournal::open(scratch.file("normal.db"), Durability::Normal).expect("open");
    assert_eq!(normal.durability(), Some("sqlite-wal-normal"));
    let level: i64 =
        normal.connection.lock().pragma_query_value(None, "synchronous", |row| row.get(0)).expect("pragma");
    assert_eq!(level, 1, "NORMAL");
    let mode: String =
        full.connection.lock().pragma_query_value(None, "journal_mode", |row| row.get(0)).expect("pragma");
    assert_eq!(mode, "wal");
    assert_eq!(SqliteJournal::open_in_memory().expect("open").durability(), Some("sqlite-memory"));
}

/// The interval at which `journal` checkpoints its WAL, in pages.
fn checkpoint_interval(journal: &SqliteJournal) -> i64 {
    journal
        .connection
        .lock()
        .pragma_query_value(None, "wal_autocheckpoint", |row| row.get(0))
        .expect("pragma")
}

#[test]
fn only_a_full_journal_checkpoints_sooner_than_sqlite_s_default() {
    let scratch = Scratch::new("intervals");
    let full = SqliteJournal::open(scratch.file("full.db"), Durability::Full).expect("open");
    assert_eq!(checkpoint_interval(&full), SqliteJournal::WAL_PAGES_BEFORE_CHECKPOINT);
    let normal = SqliteJournal::open(scratch.file("normal.db"), Durability::Normal).expect("open");
    assert_eq!(checkpoint_interval(&normal), 1_000, "NORMAL keeps SQLite's default");
}

#[tokio::test]
async fn a_full_journal_reuses_its_wal_after_its_checkpoint_interval() {
    let scratch = Scratch::new("checkpoints");
    let path = scratch.file("journal.db");
    let journal = SqliteJournal::open(&path, Durability::Full).expect("open");
    let header = header("steps");
    journal.create_run(&header).await.expect("create");
    // Each append is a transaction that writes two or three pages to the WAL (the row's page
    // and its key's): three times the interval of them would grow a WAL checkpointed only at
    // SQLite's default of 1,000 pages to over 800 pages.
    let appends = 3 * SqliteJournal::WAL_PAGES_BEFORE_CHECKPOINT as u64;
    for seq in 1..=appends {
        let record = Record { seq, bytes: Bytes::from(vec![b'x'; 200]) };
        journal.append(&header.run_id, seq - 1, &[record]).await.expect("append");
    }
    let page: i64 =
        journal.connection.lock().pragma_query_value(None, "page_size", |row| row.get(0)).expect("pragma");
    let wal = std::fs::metadata(format!("{}-wal", path.display())).expect("the WAL file").len();
    // A WAL frame is a page and a 24-byte header; the file has a 32-byte header of its own. The
    // commit that crosses the interval runs past it before its checkpoint starts the WAL again.
    let most = 32 + (SqliteJournal::WAL_PAGES_BEFORE_CHECKPOINT + 64) as u64 * (page as u64 + 24);
    assert!(wal <= most, "the WAL holds {wal} bytes after {appends} appends, more than {most}");
    assert_eq!(journal.read(&header.run_id, 0, usize::MAX).await.expect("read").len() as u64, appends);
}

/// A file at `path` of layout `version` holding `run`'s header: the tables every layout since 3
/// keeps as they are, and `tables`, the ones of that version's own.
fn old_layout(path: &std::path::Path, version: i64, tables: &str, run: &RunHeader) -> Connection {
    let connection = Connection::open(path).expect("create");
    connection
        .execute_batch(&format!(
            "CREATE TABLE runs (run_id TEXT PRIMARY KEY, header TEXT NOT NULL);
             CREATE TABLE snapshots (run_id TEXT PRIMARY KEY, upto_seq INTEGER NOT NULL, bytes BLOB NOT NULL);
             CREATE TABLE owners (run_id TEXT PRIMARY KEY, owner TEXT NOT NULL,
                 cancel_requested INTEGER NOT NULL) WITHOUT ROWID;
             CREATE TABLE blobs (digest BLOB PRIMARY KEY, bytes BLOB NOT NULL) WITHOUT ROWID;
             CREATE TABLE blob_refs (run_id TEXT NOT NULL, digest BLOB NOT NULL,
                 PRIMARY KEY (run_id, digest)) WITHOUT ROWID;
             {tables}
             PRAGMA user_version = {version};"
        ))
        .expect("the old layout's tables");
    let text = serde_json::to_string(run).expect("header");
    connection.execute("INSERT INTO runs VALUES (?1, ?2)", params![run.run_id.as_str(), text]).expect("run");
    connection
}

/// The `lengths` column of a row holding `records`.
fn lengths_of(records: &[Record]) -> Vec<u8> {
    lengths_column(&records.iter().map(|record| record.bytes.len() as u32).collect::<Vec<_>>())
}

/// A file of layout version 3 (a row per record) opens as the current layout: its records move
/// into `batches`, read back unchanged, and the run goes on from its end.
#[tokio::test]
async fn a_layout_3_file_is_migrated_to_one_row_per_append() {
    let scratch = Scratch::new("layout-3");
    let path = scratch.file("old.db");
    let old = header("from-layout-3");
    // The last record is large enough to be packed as it moves into `batches`.
    let stored: Vec<Record> = (1..=5)
        .map(|seq| Record {
            seq,
            bytes: Bytes::from(vec![seq as u8; if seq == 5 { 4096 } else { seq as usize }]),
        })
        .collect();
    {
        let connection = old_layout(
            &path,
            3,
            "CREATE TABLE records (run_id TEXT NOT NULL, seq INTEGER NOT NULL, bytes BLOB NOT NULL,
                 PRIMARY KEY (run_id, seq)) WITHOUT ROWID;
             CREATE TABLE appends (run_id TEXT PRIMARY KEY, at_ms INTEGER NOT NULL) WITHOUT ROWID;",
            &old,
        );
        connection
            .execute("INSERT INTO appends VALUES (?1, 1234)", [old.run_id.as_str()])
            .expect("append time");
        for record in &stored {
            connection
                .execute(
                    "INSERT INTO records VALUES (?1, ?2, ?3)",
                    params![old.run_id.as_str(), record.seq as i64, &record.bytes[..]],
                )
                .expect("record");
        }
    }
    let journal = SqliteJournal::open(&path, Durability::Normal).expect("migrates");
    let listed = journal.runs().await.expect("runs");
    assert_eq!((listed[0].last_seq, listed[0].last_append_unix_ms), (5, Some(1234)), "{listed:?}");
    assert_eq!(journal.read(&old.run_id, 0, 10).await.expect("read"), stored);
    assert_eq!(journal.read(&old.run_id, 3, 1).await.expect("read"), stored[3..4]);
    let next = Record { seq: 6, bytes: Bytes::from_static(b"after") };
    assert_eq!(journal.append(&old.run_id, 5, std::slice::from_ref(&next)).await, Ok(6));
    let connection = journal.connection.lock();
    let version: i64 =
        connection.pragma_query_value(None, "user_version", |row| row.get(0)).expect("version");
    assert_eq!(version, open::SCHEMA_VERSION);
    let old_table: i64 = connection
        .query_row("SELECT COUNT(*) FROM sqlite_schema WHERE name IN ('records', 'appends')", [], |row| {
            row.get(0)
        })
        .expect("schema");
    assert_eq!(old_table, 0, "the row-per-record table and the append times' table are gone");
    drop(connection);
    let codecs: Vec<i64> = stored_rows(&journal).iter().map(|row| row.0).collect();
    assert_eq!(codecs, [0, 0, 0, 0, 1, 0], "the large record was packed as it moved");
}

/// A `batches` row whose lengths do not add up is a damaged journal, not a short read.
#[tokio::test]
async fn a_batch_row_that_does_not_add_up_is_corrupt() {
    let journal = SqliteJournal::open_in_memory().expect("open");
    let run = header("damaged-row");
    journal.create_run(&run).await.expect("create");
    let records: Vec<Record> =
        (1..=3).map(|seq| Record { seq, bytes: Bytes::from(vec![seq as u8; 4]) }).collect();
    journal.append(&run.run_id, 0, &records).await.expect("append");
    for (damage, why) in [
        ("UPDATE batches SET lengths = x'04000000'", "their lengths do not match their sequence numbers"),
        (
            "UPDATE batches SET lengths = x'040000000400000005000000'",
            "add up to 13 bytes, and the row holds 12",
        ),
        (
            "UPDATE batches SET lengths = x'040000000400000003000000'",
            "add up to 11 bytes, and the row holds 12",
        ),
        (
            "UPDATE batches SET first_seq = -9223372036854775807 - 1, last_seq = 9223372036854775807",
            "their lengths do not match their sequence numbers",
        ),
    ] {
        journal.connection.lock().execute(damage, []).expect("damage");
        let err = journal.read(&run.run_id, 0, 10).await.expect_err(why);
        assert_eq!(err.kind, JournalErrorKind::Corrupt, "{damage}");
        assert!(err.message.contains(why) && err.message.contains("of run `damaged-row`"), "{}", err.message);
    }
}

/// Records that a wide round might hold: alike but for their numbers, as events are.
fn alike_records(count: u64) -> Vec<Record> {
    (1..=count)
        .map(|seq| Record {
            seq,
            bytes: Bytes::from(format!("{{\"kind\":\"CallSucceeded\",\"seq\":{seq}}}")),
        })
        .collect()
}

/// `count` records of `size` bytes that do not compress (from a fixed-seed xorshift generator).
fn noisy_records(count: u64, size: usize) -> Vec<Record> {
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    (1..=count)
        .map(|seq| {
            let bytes: Vec<u8> = (0..size)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state as u8
                })
                .collect();
            Record { seq, bytes: Bytes::from(bytes) }
        })
        .collect()
}

/// Each row's codec and stored size, in order.
fn stored_rows(journal: &SqliteJournal) -> Vec<(i64, usize)> {
    let connection = journal.connection.lock();
    let mut select =
        connection.prepare("SELECT codec, length(bytes) FROM batches ORDER BY last_seq").expect("select");
    select
        .query_map([], |row| Ok((row.get(0)?, row.get::<_, i64>(1)? as usize)))
        .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
        .expect("rows")
}

/// A wide append is kept as one LZ4 block, a small one and one that does not compress as they
/// are; all read back unchanged.
#[tokio::test]
async fn a_wide_append_is_kept_packed_and_reads_back_unchanged() {
    let journal = SqliteJournal::open_in_memory().expect("open");
    let run = header("packed");
    journal.create_run(&run).await.expect("create");
    let wide = alike_records(40);
    let raw_size: usize = wide.iter().map(|record| record.bytes.len()).sum();
    let small: Vec<Record> =
        alike_records(41).split_off(40).into_iter().map(|record| Record { seq: 41, ..record }).collect();
    let noisy: Vec<Record> =
        noisy_records(20, 64).into_iter().map(|record| Record { seq: record.seq + 41, ..record }).collect();
    journal.append(&run.run_id, 0, &wide).await.expect("wide");
    journal.append(&run.run_id, 40, &small).await.expect("small");
    journal.append(&run.run_id, 41, &noisy).await.expect("noisy");
    let rows = stored_rows(&journal);
    assert_eq!(rows[0].0, 1, "the wide append is packed");
    assert!(rows[0].1 * 3 < raw_size, "packed to {} of {raw_size} bytes", rows[0].1);
    assert_eq!(rows[1], (0, small[0].bytes.len()), "a small append is kept as it is");
    assert_eq!(rows[2], (0, 20 * 64), "bytes that do not compress are kept as they are");
    let everything: Vec<Record> = wide.iter().chain(&small).chain(&noisy).cloned().collect();
    assert_eq!(journal.read(&run.run_id, 0, 100).await.expect("read"), everything);
    assert_eq!(journal.read(&run.run_id, 38, 2).await.expect("read within"), everything[38..40]);
}

/// A packed row whose bytes do not unpack to its lengths is a damaged journal: read as such,
/// with no panic and no allocation of what a damaged length claims.
#[tokio::test]
async fn a_packed_row_that_does_not_unpack_is_corrupt() {
    let journal = SqliteJournal::open_in_memory().expect("open");
    let run = header("damaged-pack");
    journal.create_run(&run).await.expect("create");
    journal.append(&run.run_id, 0, &alike_records(40)).await.expect("append");
    let packed: Vec<u8> = journal
        .connection
        .lock()
        .query_row("SELECT bytes FROM batches", [], |row| row.get(0))
        .expect("packed bytes");
    let mut flipped = packed.clone();
    for byte in flipped.iter_mut().step_by(7) {
        *byte ^= 0xa5;
    }
    let huge_last = {
        let mut lengths = vec![0u8; 40 * 4];
        lengths[39 * 4..].copy_from_slice(&u32::MAX.to_le_bytes());
        lengths
    };
    for (column, value, why) in [
        ("bytes", rusqlite::types::Value::Blob(flipped), "unpack"),
        ("bytes", rusqlite::types::Value::Blob(packed[..packed.len() / 2].to_vec()), "unpack"),
        ("lengths", rusqlite::types::Value::Blob(huge_last), "packed bytes can hold"),
        ("codec", rusqlite::types::Value::Integer(7), "unknown way (codec 7)"),
        ("codec", rusqlite::types::Value::Text("lz4".into()), "their codec is not a number"),
    ] {
        let damage = format!("UPDATE batches SET {column} = ?1");
        journal.connection.lock().execute(&damage, [&value]).expect("damage");
        let err = journal.read(&run.run_id, 0, 100).await.expect_err(why);
        assert_eq!(err.kind, JournalErrorKind::Corrupt, "{column}");
        assert!(
            err.message.contains(why) && err.message.contains("of run `damaged-pack`"),
            "{}",
            err.message
        );
        let restore = "UPDATE batches SET bytes = ?1, lengths = ?2, codec = 1";
        let lengths = lengths_of(&alike_records(40));
        journal.connection.lock().execute(restore, params![packed, lengths]).expect("restore");
    }
    assert_eq!(journal.read(&run.run_id, 0, 100).await.expect("restored"), alike_records(40));
}

/// What a damaged `batches` row may hold: lengths, bytes and a codec of any kind, raw bytes
/// exactly as long as its lengths claim, or a packed row of real records with bytes changed
/// and perhaps its end cut off.
#[derive(Debug, Clone)]
enum DamagedRow {
    Arbitrary { lengths: Vec<u32>, bytes: Vec<u8>, codec: i64 },
    Consistent { lengths: Vec<u32>, bytes: Vec<u8> },
    Edited { edits: Vec<(usize, u8)>, kept: Option<usize> },
}

fn damaged_rows() -> impl proptest::strategy::Strategy<Value = DamagedRow> {
    use proptest::collection::vec;
    use proptest::prelude::*;
    prop_oneof![
        (
            vec(prop_oneof![0..64u32, any::<u32>()], 1..24),
            vec(any::<u8>(), 0..1024),
            prop_oneof![Just(0i64), Just(1i64), any::<i64>()],
        )
            .prop_map(|(lengths, bytes, codec)| DamagedRow::Arbitrary { lengths, bytes, codec }),
        vec(0..64u32, 1..24).prop_flat_map(|lengths| {
            let size = lengths.iter().sum::<u32>() as usize;
            vec(any::<u8>(), size)
                .prop_map(move |bytes| DamagedRow::Consistent { lengths: lengths.clone(), bytes })
        }),
        (vec((any::<usize>(), 1..=255u8), 0..8), proptest::option::of(any::<usize>()))
            .prop_map(|(edits, kept)| DamagedRow::Edited { edits, kept }),
    ]
}

/// The `lengths` column of a row whose records are `lengths` bytes long.
fn lengths_column(lengths: &[u32]) -> Vec<u8> {
    lengths.iter().flat_map(|length| length.to_le_bytes()).collect()
}

/// The lengths a `lengths` column claims, one per record.
fn claimed_lengths(lengths: &[u8]) -> Vec<usize> {
    lengths
        .chunks_exact(4)
        .map(|length| u32::from_le_bytes(length.try_into().expect("four bytes")) as usize)
        .collect()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

    /// Reading a damaged row never panics: it gives back records of the lengths the row claims,
    /// or reports the journal damaged (`RL7008`). A row whose bytes are as long as its lengths
    /// claim and kept raw always reads back.
    #[test]
    fn a_damaged_row_reads_as_the_lengths_it_claims_or_as_corrupt(row in damaged_rows()) {
        let records = alike_records(40);
        let readable = matches!(row, DamagedRow::Consistent { .. });
        let (lengths, bytes, codec) = match row {
            DamagedRow::Arbitrary { lengths, bytes, codec } => (lengths_column(&lengths), bytes, codec),
            DamagedRow::Consistent { lengths, bytes } => (lengths_column(&lengths), bytes, 0),
            DamagedRow::Edited { edits, kept } => {
                let raw: Vec<u8> = records.iter().flat_map(|record| record.bytes.iter().copied()).collect();
                let mut packed = lz4_flex::block::compress(&raw);
                for (at, flip) in edits {
                    let at = at % packed.len();
                    packed[at] ^= flip;
                }
                if let Some(kept) = kept {
                    packed.truncate(kept % (packed.len() + 1));
                }
                (lengths_of(&records), packed, 1)
            }
        };
        let claimed = claimed_lengths(&lengths);
        let pool = tokio::runtime::Builder::new_current_thread().build().expect("tokio");
        let journal = SqliteJournal::open_in_memory().expect("open");
        let run = header("fuzzed");
        let read = pool.block_on(async {
            journal.create_run(&run).await.expect("create");
            journal.append(&run.run_id, 0, &records).await.expect("append");
            journal
                .connection
                .lock()
                .execute(
                    "UPDATE batches SET first_seq = 1, last_seq = ?1, lengths = ?2, bytes = ?3, codec = ?4",
                    params![claimed.len() as i64, lengths, bytes, codec],
                )
                .expect("damage");
            journal.read(&run.run_id, 0, usize::MAX).await
        });
        match read {
            Ok(read) => {
                let lengths: Vec<usize> = read.iter().map(|record| record.bytes.len()).collect();
                proptest::prop_assert_eq!(lengths, claimed);
                let seqs: Vec<u64> = read.iter().map(|record| record.seq).collect();
                proptest::prop_assert_eq!(seqs, (1..=read.len() as u64).collect::<Vec<_>>());
                if readable {
                    let read: Vec<u8> = read.iter().flat_map(|record| record.bytes.iter().copied()).collect();
                    proptest::prop_assert_eq!(read, bytes, "a raw row reads back as it was written");
                }
            }
            Err(error) => {
                proptest::prop_assert!(!readable, "a consistent raw row failed: {}", error.message);
                proptest::prop_assert_eq!(error.kind, JournalErrorKind::Corrupt, "{}", error.message);
            }
        }
    }
}

/// A file of layout 4 (every row's bytes as they are, no `codec`) gains the column when opened;
/// its rows read back unchanged and new appends are packed.
#[tokio::test]
async fn a_layout_4_file_gains_packed_rows() {
    let scratch = Scratch::new("layout-4");
    let path = scratch.file("old.db");
    let old = header("from-layout-4");
    let stored = alike_records(40);
    {
        let connection = old_layout(
            &path,
            4,
            "CREATE TABLE batches (run_id TEXT NOT NULL, last_seq INTEGER NOT NULL, first_seq INTEGER NOT NULL,
                 lengths BLOB NOT NULL, bytes BLOB NOT NULL, at_ms INTEGER, PRIMARY KEY (run_id, last_seq));",
            &old,
        );
        let lengths = lengths_of(&stored);
        let bytes: Vec<u8> = stored.iter().flat_map(|record| record.bytes.to_vec()).collect();
        connection
            .execute(
                "INSERT INTO batches VALUES (?1, 40, 1, ?2, ?3, 1234)",
                params![old.run_id.as_str(), lengths, bytes],
            )
            .expect("row");
    }
    let journal = SqliteJournal::open(&path, Durability::Normal).expect("migrates");
    assert_eq!(journal.read(&old.run_id, 0, 100).await.expect("read"), stored);
    let next: Vec<Record> = alike_records(80).split_off(40).into_iter().collect();
    assert_eq!(journal.append(&old.run_id, 40, &next).await, Ok(80));
    assert_eq!(stored_rows(&journal).iter().map(|row| row.0).collect::<Vec<_>>(), [0, 1]);
    let version: i64 = journal
        .connection
        .lock()
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .expect("version");
    assert_eq!(version, open::SCHEMA_VERSION);
}

#[test]
fn refuses_a_database_with_a_newer_layout() {
    let scratch = Scratch::new("layout");
    let path = scratch.file("future.db");
    Connection::open(&path).expect("create").execute_batch("PRAGMA user_version = 99;").expect("set version");
    let err = SqliteJournal::open(&path, Durability::Full).expect_err("newer layout");
    assert_eq!(err.kind, JournalErrorKind::Storage);
    assert!(err.message.contains("layout version 99"), "{}", err.message);
}

#[test]
fn refuses_a_database_that_is_not_a_journal() {
    let scratch = Scratch::new("foreign");
    let path = scratch.file("app.db");
    Connection::open(&path)
        .expect("create")
        .execute_batch("CREATE TABLE users (id INTEGER);")
        .expect("table");
    let err = SqliteJournal::open(&path, Durability::Full).expect_err("not a journal");
    assert_eq!((err.kind, err.code().to_string()), (JournalErrorKind::Storage, "RL7005".to_owned()));
    assert!(err.message.contains("not a Runlet journal (it has a table `users`)"), "{}", err.message);
    assert!(err.message.contains("app.db"), "names the file: {}", err.message);
    // Nor when the program keeps a version in `user_version` as a journal does; and its file
    // is left in its journal mode.
    Connection::open(&path).expect("open").execute_batch("PRAGMA user_version = 2;").expect("a version");
    let before = std::fs::read(&path).expect("its bytes");
    let err = SqliteJournal::open(&path, Durability::Full).expect_err("not a journal");
    assert!(err.message.contains("it has a table `users`"), "{}", err.message);
    assert_eq!(std::fs::read(&path).expect("its bytes"), before, "left as it was");
}

#[test]
fn refuses_a_file_that_is_not_a_database_naming_it() {
    let scratch = Scratch::new("garbage");
    let path = scratch.file("notes.db");
    std::fs::write(&path, b"these are my notes, not a database; ".repeat(200)).expect("write");
    let err = SqliteJournal::open(&path, Durability::Full).expect_err("garbage");
    assert_eq!((err.kind, err.code().to_string()), (JournalErrorKind::Corrupt, "RL7008".to_owned()));
    assert!(err.message.contains(&path.display().to_string()), "names the file: {}", err.message);
    assert_eq!(
        std::fs::read(&path).expect("read"),
        b"these are my notes, not a database; ".repeat(200),
        "and leaves it as it was"
    );
}

#[test]
fn an_empty_file_opens_as_an_empty_journal() {
    let scratch = Scratch::new("empty");
    let path = scratch.file("empty.db");
    std::fs::write(&path, b"").expect("write");
    SqliteJournal::open(&path, Durability::Full).expect("SQLite's empty database");
}

#[test]
fn stored_records_out_of_sequence_are_corrupt() {
    let pool = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio");
    let journal = SqliteJournal::open_in_memory().expect("open");
    let run = header("renumbered");
    pool.block_on(async {
        journal.create_run(&run).await.expect("create");
        for seq in 1..=3 {
            let record = Record { seq, bytes: Bytes::from(vec![seq as u8]) };
            journal.append(&run.run_id, seq - 1, &[record]).await.expect("append");
        }
    });
    journal
        .connection
        .lock()
        .execute("UPDATE batches SET first_seq = 7, last_seq = 7 WHERE last_seq = 2", [])
        .expect("renumber");
    let err = pool.block_on(journal.read(&run.run_id, 0, 10)).expect_err("a gap");
    assert_eq!(err.kind, JournalErrorKind::Corrupt);
    assert!(err.message.contains("numbered 3 where 2 should be"), "{}", err.message);
    assert_eq!(pool.block_on(journal.read(&run.run_id, 0, 1)).expect("before the gap").len(), 1);
}

/// A journal file of one run with `count` records of 1 KiB each (bytes that do not compress,
/// so the file is as large as its records), closed.
fn written_file(path: &std::path::Path, count: u64) -> (RunHeader, Vec<Record>) {
    let pool = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio");
    let run = header("written");
    let records = noisy_records(count, 1024);
    pool.block_on(async {
        let journal = SqliteJournal::open(path, Durability::Full).expect("open");
        journal.create_run(&run).await.expect("create");
        for chunk in records.chunks(10) {
            journal.append(&run.run_id, chunk[0].seq - 1, chunk).await.expect("append");
        }
    });
    (run, records)
}

/// A row ending below record 1 is passed over by reads after a record and by the run's end, so
/// an append would write past it: appends and reads from the run's start refuse the run. A row
/// numbered backwards above 0 is refused by the read that meets it.
#[test]
fn rows_numbered_below_one_or_backwards_are_refused() {
    let pool = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio");
    for (damage, why) in [
        ("last_seq = -5", "ends at record -5"),
        ("first_seq = 3, last_seq = 2", "their lengths do not match their sequence numbers"),
    ] {
        let journal = SqliteJournal::open_in_memory().expect("open");
        let run = header("backwards");
        let records: Vec<Record> =
            (1..=2).map(|seq| Record { seq, bytes: Bytes::from(vec![seq as u8; 4]) }).collect();
        pool.block_on(async {
            journal.create_run(&run).await.expect("create");
            journal.append(&run.run_id, 0, &records).await.expect("append");
        });
        journal.connection.lock().execute(&format!("UPDATE batches SET {damage}"), []).expect("damage");
        let read = pool.block_on(journal.read(&run.run_id, 0, 10)).expect_err(damage);
        assert_eq!(read.kind, JournalErrorKind::Corrupt, "{damage}");
        assert!(read.message.contains(why) && read.message.contains("`backwards`"), "{}", read.message);
        if damage.starts_with("last_seq") {
            let next = Record { seq: 1, bytes: Bytes::from_static(b"x") };
            let append =
                pool.block_on(journal.append(&run.run_id, 0, &[next])).expect_err("no append past it");
            assert_eq!(append.kind, JournalErrorKind::Corrupt, "{}", append.message);
        }
    }
}

#[test]
fn a_truncated_file_is_refused() {
    let scratch = Scratch::new("truncated");
    let whole = scratch.file("whole.db");
    written_file(&whole, 200);
    let bytes = std::fs::read(&whole).expect("read");
    assert!(bytes.len() > 200 * 1024, "the records are in the main file: {}", bytes.len());
    for cut in [50, 100, 4096, 3 * 4096 + 17, bytes.len() / 2, bytes.len() - 4096] {
        let path = scratch.file(&format!("cut-{cut}.db"));
        std::fs::write(&path, &bytes[..cut]).expect("write");
        let err = SqliteJournal::open(&path, Durability::Full).expect_err("truncated");
        assert_eq!(err.kind, JournalErrorKind::Corrupt, "cut at {cut}: {}", err.message);
        assert!(err.message.contains(&format!("cut-{cut}.db")), "names the file: {}", err.message);
        assert_eq!(std::fs::read(&path).expect("read").len(), cut, "nothing is appended to it");
    }
}

/// Flipping one byte anywhere in a journal file is refused when the file is opened, reported
/// when the damaged part is read, or lands where it changes nothing read back: it never
/// panics and never reads back altered record bytes.
#[test]
fn a_flipped_byte_is_refused_reported_or_harmless() {
    let scratch = Scratch::new("flipped");
    let whole = scratch.file("whole.db");
    let (run, records) = written_file(&whole, 40);
    let bytes = std::fs::read(&whole).expect("read");
    let pool = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio");
    let (mut refused, mut reported, mut harmless) = (0, 0, 0);
    let path = scratch.file("flipped.db");
    for offset in (0..bytes.len()).step_by(97) {
        let mut damaged = bytes.clone();
        damaged[offset] ^= 0x5a;
        std::fs::write(&path, &damaged).expect("write");
        let journal = match SqliteJournal::open(&path, Durability::Full) {
            Ok(journal) => journal,
            Err(err) => {
                assert!(err.code().to_string().starts_with("RL700"), "offset {offset}: {err:?}");
                refused += 1;
                continue;
            }
        };
        let read = pool.block_on(async {
            let header = journal.header(&run.run_id).await?;
            Ok::<_, JournalError>((header, journal.read(&run.run_id, 0, usize::MAX).await?))
        });
        match read {
            Ok((_, read)) if read == records => harmless += 1,
            Ok((_, read)) => {
                let altered = read.iter().zip(&records).filter(|(a, b)| a != b).count();
                assert_eq!(read.len(), records.len(), "offset {offset}: records lost without an error");
                // SQLite checks no content: the bytes of one record changed, which the
                // envelope's checksum in the engine reports (RL7006).
                assert_eq!(altered, 1, "offset {offset}");
                reported += 1;
            }
            Err(err) => {
                assert!(err.code().to_string().starts_with("RL700"), "offset {offset}: {err:?}");
                reported += 1;
            }
        }
        std::fs::remove_file(&path).expect("remove");
    }
    assert!(refused > 0 && reported > 0 && harmless > 0, "{refused} {reported} {harmless}");
}

/// Two connections opening one fresh file at the same moment both get a journal with one
/// layout, and each sees what the other writes.
#[test]
fn two_opens_of_one_fresh_file_race_safely() {
    let scratch = Scratch::new("race");
    for round in 0..20 {
        let path = scratch.file(&format!("fresh-{round}.db"));
        let barrier = std::sync::Barrier::new(2);
        let journals: Vec<SqliteJournal> = std::thread::scope(|scope| {
            let open = || {
                barrier.wait();
                SqliteJournal::open(&path, Durability::Full)
            };
            let (a, b) = (scope.spawn(open), scope.spawn(open));
            [a, b].map(|t| t.join().expect("no panic").expect("both opens succeed")).into()
        });
        let pool = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio");
        pool.block_on(async {
            let run = header("raced");
            journals[0].create_run(&run).await.expect("create through one");
            assert_eq!(journals[1].header(&run.run_id).await.expect("seen through the other"), run);
            assert_eq!(
                journals[1].create_run(&run).await.expect_err("once").kind,
                JournalErrorKind::RunExists
            );
        });
    }
}

/// Two connections to one file append to one run from two threads, each from where it last saw
/// the run: every sequence number is won by exactly one of them, the other is told of the
/// conflict, and no append fails for the lock the other holds.
#[test]
fn two_connections_racing_on_one_run_win_each_sequence_number_once() {
    let scratch = Scratch::new("writers");
    let path = scratch.file("shared.db");
    let run = header("shared");
    let first = SqliteJournal::open(&path, Durability::Normal).expect("open");
    let pool = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio");
    pool.block_on(first.create_run(&run)).expect("create");
    let second = SqliteJournal::open(&path, Durability::Normal).expect("open again");
    let barrier = std::sync::Barrier::new(2);
    let writer = |journal: &SqliteJournal, name: u8| {
        let pool = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio");
        let (mut last, mut won, mut conflicts) = (0, Vec::new(), 0);
        barrier.wait();
        for _ in 0..60 {
            let record = Record { seq: last + 1, bytes: Bytes::from(vec![name]) };
            match pool.block_on(journal.append(&run.run_id, last, &[record])) {
                Ok(committed) => {
                    won.push(committed);
                    last = committed;
                }
                Err(JournalError { kind: JournalErrorKind::SequenceConflict { actual, .. }, .. }) => {
                    conflicts += 1;
                    last = actual;
                }
                Err(other) => panic!("writer {name}: {other:?}"),
            }
        }
        assert!(conflicts < 60, "writer {name} never won");
        won
    };
    let won: Vec<Vec<u64>> = std::thread::scope(|scope| {
        let a = scope.spawn(|| writer(&first, b'a'));
        let b = scope.spawn(|| writer(&second, b'b'));
        vec![a.join().expect("writer a"), b.join().expect("writer b")]
    });
    let records = pool.block_on(first.read(&run.run_id, 0, usize::MAX)).expect("read");
    let total = won[0].len() + won[1].len();
    assert_eq!(records.len(), total, "every win is a record, and nothing else is");
    for (writer, seqs) in [b'a', b'b'].iter().zip(&won) {
        for seq in seqs {
            assert_eq!(&records[*seq as usize - 1].bytes[..], &[*writer], "seq {seq} is the winner's");
        }
    }
}

/// A batch that fails after its blob was inserted is rolled back to its savepoint, and the
/// batches beside it in the transaction still commit.
#[test]
fn a_batch_failing_halfway_is_rolled_back_alone() {
    let pool = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio");
    let journal = SqliteJournal::open_in_memory().expect("open");
    let (edge, plain) = (header("at-the-edge"), header("plain"));
    let last = i64::MAX as u64 - 1;
    pool.block_on(async {
        journal.create_run(&edge).await.expect("create");
        journal.create_run(&plain).await.expect("create");
    });
    journal
        .connection
        .lock()
        .execute(
            "INSERT INTO batches (run_id, last_seq, first_seq, lengths, bytes, at_ms)
             VALUES ('at-the-edge', ?1, ?1, x'01000000', x'00', 0)",
            [last as i64],
        )
        .expect("a record at the edge of SQLite's range");
    let record = |seq| Record { seq, bytes: Bytes::from_static(b"r") };
    let blob = Blob { digest: [7; 32], bytes: Arc::from(&b"a large value"[..]) };
    let answers = pool.block_on(journal.append_many(&[
        AppendBatch {
            run: edge.run_id.clone(),
            expected_seq: last,
            records: vec![record(last + 1), record(last + 2)],
            blobs: vec![blob],
        },
        AppendBatch {
            run: plain.run_id.clone(),
            expected_seq: 0,
            records: vec![record(1)],
            blobs: Vec::new(),
        },
    ]));
    assert_eq!(answers[0].as_ref().map_err(|e| e.kind), Err(JournalErrorKind::InvalidRecord));
    assert_eq!(answers[1], Ok(1));
    let count =
        |sql: &str| -> i64 { journal.connection.lock().query_row(sql, [], |row| row.get(0)).expect("count") };
    assert_eq!(count("SELECT COUNT(*) FROM batches WHERE run_id = 'at-the-edge'"), 1, "no record was added");
    assert_eq!(count("SELECT COUNT(*) FROM blobs"), 0, "the failed batch's blob was rolled back");
    assert_eq!(pool.block_on(journal.read(&plain.run_id, 0, 10)).expect("read"), vec![record(1)]);
}

/// Appends of several runs that queue while the connection is busy go to the disk in one
/// transaction, each answered as on its own; a conflicting one fails alone.
#[test]
fn appends_that_queue_while_the_writer_waits_share_one_commit() {
    use std::task::{Context, Waker};

    let pool = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio");
    let scratch = Scratch::new("writer");
    let journal = SqliteJournal::open(scratch.file("journal.db"), Durability::Normal).expect("open");
    let runs: Vec<RunHeader> = (0..8).map(|n| header(&format!("queued-{n}"))).collect();
    pool.block_on(async {
        for run in &runs {
            journal.create_run(run).await.expect("create");
        }
    });
    let record = |seq| Record { seq, bytes: Bytes::from_static(b"r") };
    let before = journal.commits();
    let busy = journal.connection.lock();
    let (first, fourth) = ([record(1)], [record(4)]);
    let mut appends: Vec<_> = runs
        .iter()
        .enumerate()
        // The last one continues records its run does not have.
        .map(|(n, run)| match n {
            7 => journal.append(&run.run_id, 3, &fourth),
            _ => journal.append(&run.run_id, 0, &first),
        })
        .collect();
    // Polled once, each append is queued for the writer, which waits for the connection.
    for append in &mut appends {
        assert!(append.as_mut().poll(&mut Context::from_waker(Waker::noop())).is_pending());
    }
    drop(busy);
    let answers: Vec<_> = pool.block_on(futures_util::future::join_all(appends));
    assert_eq!(journal.commits() - before, 1, "one transaction for the eight appends");
    assert_eq!(answers[..7], [Ok(1), Ok(1), Ok(1), Ok(1), Ok(1), Ok(1), Ok(1)]);
    let conflict = answers[7].as_ref().expect_err("a conflict");
    assert_eq!(conflict.kind, JournalErrorKind::SequenceConflict { expected: 3, actual: 0 });
    for run in &runs[..7] {
        assert_eq!(pool.block_on(journal.read(&run.run_id, 0, 10)).expect("read"), vec![record(1)]);
    }
}

/// Dropping the last handle of a journal stops its writer and closes the file: SQLite, closing
/// the last connection, folds the write-ahead log into the file and removes it.
#[test]
fn the_writer_ends_with_the_journal() {
    let pool = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio");
    let scratch = Scratch::new("writer-ends");
    let path = scratch.file("journal.db");
    let run = header("kept");
    let journal = SqliteJournal::open(&path, Durability::Full).expect("open");
    let clone = journal.clone();
    pool.block_on(async {
        journal.create_run(&run).await.expect("create");
        clone
            .append(&run.run_id, 0, &[Record { seq: 1, bytes: Bytes::from_static(b"r") }])
            .await
            .expect("append");
    });
    drop(journal);
    let answered =
        pool.block_on(clone.append(&run.run_id, 1, &[Record { seq: 2, bytes: Bytes::from_static(b"s") }]));
    assert_eq!(answered, Ok(2), "a clone keeps the writer");
    drop(clone);
    let wal = path.with_extension("db-wal");
    assert!(!wal.exists(), "the connection is closed once the journal is dropped");
    let again = SqliteJournal::open(&path, Durability::Full).expect("reopen");
    let read = pool.block_on(again.read(&run.run_id, 0, 10)).expect("read");
    assert_eq!(read.iter().map(|record| record.seq).collect::<Vec<_>>(), [1, 2]);
}

/// On a runtime with several workers, an append that continues the run that appended last and
/// finds the writer idle commits on its own thread; appends of many runs at once, whichever
/// thread commits them, each land once, in order, with the sequence number they asked for.
#[test]
fn appends_commit_on_their_own_thread_when_the_writer_is_idle() {
    let pool =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("tokio");
    let scratch = Scratch::new("own-thread");
    let journal =
        Arc::new(SqliteJournal::open(scratch.file("journal.db"), Durability::Normal).expect("open"));
    let lone = header("lone");
    let record = |seq| Record { seq, bytes: Bytes::from(format!("record {seq}")) };
    pool.block_on(async {
        journal.create_run(&lone).await.expect("create");
        let (commits, own) = (journal.commits(), journal.commits_on_appending_threads());
        for seq in 1..=5 {
            let appended = tokio::spawn({
                let (journal, run) = (Arc::clone(&journal), lone.run_id.clone());
                async move { journal.append(&run, seq - 1, &[record(seq)]).await }
            });
            assert_eq!(appended.await.expect("task"), Ok(seq));
        }
        assert_eq!(journal.commits() - commits, 5, "a transaction per append");
        assert_eq!(
            journal.commits_on_appending_threads() - own,
            4,
            "the run's first append on the writer, each later one on the appending worker"
        );
    });

    let runs: Vec<RunHeader> = (0..16).map(|n| header(&format!("busy-{n}"))).collect();
    pool.block_on(async {
        for run in &runs {
            journal.create_run(run).await.expect("create");
        }
        let tasks: Vec<_> = runs
            .iter()
            .map(|run| {
                let (journal, run) = (Arc::clone(&journal), run.run_id.clone());
                tokio::spawn(async move {
                    for seq in 1..=20 {
                        assert_eq!(journal.append(&run, seq - 1, &[record(seq)]).await, Ok(seq));
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.expect("every append answered as asked");
        }
        for run in &runs {
            let read = journal.read(&run.run_id, 0, 100).await.expect("read");
            assert_eq!(read, (1..=20).map(record).collect::<Vec<_>>(), "run {}", run.run_id);
        }
    });
}

/// A current-thread runtime's one thread never blocks for a commit: its appends go to the
/// writer, so its other tasks run meanwhile.
#[tokio::test]
async fn a_current_thread_runtime_leaves_commits_to_the_writer() {
    let scratch = Scratch::new("current-thread");
    let journal = SqliteJournal::open(scratch.file("journal.db"), Durability::Normal).expect("open");
    let run = header("current");
    journal.create_run(&run).await.expect("create");
    let record = Record { seq: 1, bytes: Bytes::from_static(b"r") };
    assert_eq!(journal.append(&run.run_id, 0, &[record]).await, Ok(1));
    assert_eq!(journal.commits(), 1);
    assert_eq!(journal.commits_on_appending_threads(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn passes_the_shared_journal_suite_committing_on_appending_threads() {
    let scratch = Scratch::new("suite-own-thread");
    let journal = SqliteJournal::open(scratch.file("journal.db"), Durability::Normal).expect("open");
    suite::check(&journal).await;
    assert!(
        journal.commits_on_appending_threads() > 0,
        "the suite's lone appends committed on their threads"
    );
}

/// While another process holds the file's write lock, an append that would commit on its own
/// thread leaves the wait to the writer (a runtime's worker never waits for the lock) and lands
/// once the lock is released.
#[test]
fn an_append_finding_the_file_locked_waits_on_the_writer() {
    let pool =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("tokio");
    let scratch = Scratch::new("locked");
    let path = scratch.file("journal.db");
    let journal = Arc::new(SqliteJournal::open(&path, Durability::Normal).expect("open"));
    let run = header("locked");
    let record = |seq| Record { seq, bytes: Bytes::from(format!("record {seq}")) };
    pool.block_on(async {
        journal.create_run(&run).await.expect("create");
        assert_eq!(journal.append(&run.run_id, 0, &[record(1)]).await, Ok(1));
    });
    let other = Connection::open(&path).expect("a second connection");
    other.execute_batch("BEGIN IMMEDIATE").expect("the write lock");
    let own = journal.commits_on_appending_threads();
    let appended = pool.spawn({
        let (journal, run) = (Arc::clone(&journal), run.run_id.clone());
        async move { journal.append(&run, 1, &[record(2)]).await }
    });
    while journal.writer.queued() == 0 {
        assert!(!appended.is_finished(), "the append went on while the file was locked");
        std::thread::yield_now();
    }
    other.execute_batch("COMMIT").expect("release");
    assert_eq!(pool.block_on(appended).expect("task"), Ok(2));
    assert_eq!(journal.commits_on_appending_threads(), own, "committed by the writer");
    assert_eq!(pool.block_on(journal.read(&run.run_id, 0, 10)).expect("read"), vec![record(1), record(2)]);
}

/// Two processes never drive one run: a claim is refused while another live process of this
/// machine owns the run, and takes it over from one that has ended or that it cannot tell of.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_claim_is_refused_while_another_live_process_owns_the_run() {
    use crate::journal::owner::{of_process, this_process};
    let journal = SqliteJournal::open_in_memory().expect("open");
    let run = header("owned-elsewhere");
    journal.create_run(&run).await.expect("create");
    let run = run.run_id;
    let mut other = std::process::Command::new("sleep").arg("30").spawn().expect("spawn `sleep`");
    let living = of_process(other.id());
    journal.claim(&run, &living).await.expect("an unowned run is claimed");
    journal.claim(&run, &living).await.expect("its owner claims it again");
    let me = this_process();
    let refused = journal.claim(&run, &me).await.expect_err("its owner lives");
    assert_eq!(refused.kind, JournalErrorKind::OwnedElsewhere);
    assert_eq!(refused.code(), crate::diag::codes::RUN_OWNED_ELSEWHERE);
    assert!(refused.message.contains(&living), "{refused}");
    assert_eq!(journal.run_entry(&run).await.expect("entry").owner.as_deref(), Some(living.as_str()));

    // Once it has ended (a zombie not yet reaped counts as ended), it is taken over from.
    other.kill().expect("kill");
    other.wait().expect("wait");
    journal.claim(&run, &me).await.expect("an ended owner is taken over from");
    // This process, under another name a runtime of it chose, is not another process; nor is
    // a name this process cannot tell of.
    journal.claim(&run, "host-chosen-name").await.expect("claimed from this process");
    journal.claim(&run, &me).await.expect("an owner this process cannot tell of is taken over from");
}
