//! Runs journaled to an SQLite file through the `Runtime`: a damaged record is reported with its
//! `RL7006` when the run is read back (recovery, journal snapshots), never replayed; concurrent
//! runs share commits through the runtime's group commit, on by default for SQLite.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use parking_lot::Mutex;

use runlet::analyze::Inputs;
use runlet::engine::Outcome;
use runlet::journal::{
    AppendBatch, Durability, Journal, JournalError, Record, RunHeader, RunId, Snapshot, SqliteJournal,
};
use runlet::observe::{SnapshotOptions, ViewPolicy};
use runlet::registry::{Registry, RegistryOptions};
use runlet::runtime::{Executable, RunOptions, Runtime};
use runlet::scripted::ScriptedExecutor;

mod blobs;

/// A directory of its own under the system's temporary directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(label: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("runlet-journal-{label}-{}", std::process::id()));
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

const MARKER: &str = "a-marker-only-this-output-holds";

/// A runtime over `journal` whose one tool answers with [`MARKER`], and `return echo.say()`.
fn runtime(journal: Arc<dyn Journal>) -> (Runtime, Executable) {
    runtime_with(journal, None)
}

/// [`runtime`] with group commit as asked (`None`: the runtime's default).
fn runtime_with(journal: Arc<dyn Journal>, group_commit: Option<bool>) -> (Runtime, Executable) {
    let registry = Registry::from_json_str(
        r#"{"tools": [{"name": "echo.say", "params": [], "outputSchema": {"type": "string"}, "execution": "pure"}]}"#,
        &RegistryOptions::default(),
    )
    .expect("registry")
    .registry;
    let fixtures = format!(r#"{{"echo.say": [{{"result": "{MARKER}"}}]}}"#);
    let mut builder = Runtime::builder()
        .registry(registry)
        .executor(Arc::new(ScriptedExecutor::from_json_str(&fixtures).expect("fixtures")))
        .journal(journal)
        .digest_key("journal-tests", b"one key for every runtime of these tests")
        .worker_threads(1);
    if let Some(on) = group_commit {
        builder = builder.group_commit(on);
    }
    let runtime = builder.build().expect("runtime");
    let program = runtime.compile("return echo.say()\n", &Inputs::new()).expect("compiles");
    (runtime, program)
}

/// Runs the program once into the SQLite file at `path` and closes the journal.
fn journaled_run(path: &std::path::Path) -> RunId {
    let journal = Arc::new(SqliteJournal::open(path, Durability::Full).expect("open"));
    let (runtime, program) = runtime(journal);
    let run = runtime.start(&program, &Inputs::new()).expect("starts");
    let run_id = run.run_id().clone();
    assert!(matches!(run.wait().expect("journal"), Outcome::Succeeded(_)));
    runtime.shutdown();
    run_id
}

/// The codes reading `run` back gives: through recovery and through a journal snapshot.
fn read_back_codes(path: &std::path::Path, run: &RunId) -> (String, String) {
    let journal = Arc::new(SqliteJournal::open(path, Durability::Full).expect("SQLite checks no content"));
    let (runtime, program) = runtime(journal);
    let recovery =
        runtime.recovery(&program, run, RunOptions::default()).expect_err("a damaged record is refused");
    let snapshot = runtime
        .journal_snapshot(&program, run, &ViewPolicy::default(), &SnapshotOptions::default())
        .expect_err("a damaged record is refused");
    (recovery.code().to_string(), snapshot.code().to_string())
}

#[test]
fn a_flipped_byte_inside_a_record_fails_its_checksum_when_read_back() {
    let scratch = Scratch::new("flipped-record");
    let path = scratch.file("runs.db");
    let run = journaled_run(&path);
    let mut bytes = std::fs::read(&path).expect("the journal file");
    let at = bytes.windows(MARKER.len()).position(|w| w == MARKER.as_bytes()).expect("the output is stored");
    bytes[at + 3] ^= 0x01;
    std::fs::write(&path, &bytes).expect("write");
    assert_eq!(read_back_codes(&path, &run), ("RL7006".to_owned(), "RL7006".to_owned()));
}

#[test]
fn a_record_moved_to_another_position_is_corrupt() {
    let scratch = Scratch::new("moved-record");
    let path = scratch.file("runs.db");
    let run = journaled_run(&path);
    // The run is written again with record 2 a copy of record 1: a whole envelope with a valid
    // checksum, out of place.
    let journal = SqliteJournal::open(&path, Durability::Full).expect("open");
    let pool = tokio::runtime::Builder::new_current_thread().build().expect("tokio");
    pool.block_on(async {
        let header = journal.header(&run).await.expect("header");
        let mut records = journal.read(&run, 0, usize::MAX).await.expect("records");
        records[1].bytes = records[0].bytes.clone();
        journal.delete_run(&run).await.expect("delete");
        journal.create_run(&header).await.expect("create again");
        journal.append(&run, 0, &records).await.expect("append the moved record");
    });
    drop(journal);
    assert_eq!(read_back_codes(&path, &run), ("RL7006".to_owned(), "RL7006".to_owned()));
}

/// An SQLite journal that records how its appends arrive: one by one, or as groups; and says
/// it groups appends itself (as SQLite's writer does) only when `groups_itself`.
struct Watched {
    inner: SqliteJournal,
    groups_itself: bool,
    singles: Mutex<usize>,
    groups: Mutex<Vec<usize>>,
}

#[async_trait]
impl Journal for Watched {
    async fn create_run(&self, header: &RunHeader) -> Result<(), JournalError> {
        self.inner.create_run(header).await
    }

    async fn header(&self, run: &RunId) -> Result<RunHeader, JournalError> {
        self.inner.header(run).await
    }

    async fn append(&self, run: &RunId, expected_seq: u64, records: &[Record]) -> Result<u64, JournalError> {
        *self.singles.lock() += 1;
        self.inner.append(run, expected_seq, records).await
    }

    async fn append_many(&self, batches: &[AppendBatch]) -> Vec<Result<u64, JournalError>> {
        self.groups.lock().push(batches.len());
        self.inner.append_many(batches).await
    }

    fn commits_batches_together(&self) -> bool {
        self.inner.commits_batches_together()
    }

    fn groups_appends(&self) -> bool {
        self.groups_itself
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

    fn durability(&self) -> Option<&str> {
        self.inner.durability()
    }
}

/// Runs the program eight times at once over a watched SQLite journal; returns the journal
/// and what the runtime reports as its durability.
fn eight_runs(
    path: &std::path::Path,
    groups_itself: bool,
    group_commit: Option<bool>,
) -> (Arc<Watched>, Option<String>) {
    let journal = Arc::new(Watched {
        inner: SqliteJournal::open(path, Durability::Normal).expect("open"),
        groups_itself,
        singles: Mutex::new(0),
        groups: Mutex::new(Vec::new()),
    });
    let (runtime, program) = runtime_with(journal.clone(), group_commit);
    let runs: Vec<_> = (0..8).map(|_| runtime.start(&program, &Inputs::new()).expect("starts")).collect();
    for run in runs {
        assert!(matches!(run.wait().expect("journal"), Outcome::Succeeded(_)));
    }
    let durability = runtime.durability().map(str::to_owned);
    runtime.shutdown();
    (journal, durability)
}

#[test]
fn the_sqlite_journal_groups_appends_itself_so_no_group_commit_goes_in_front() {
    let scratch = Scratch::new("itself");
    let (journal, durability) = eight_runs(&scratch.file("runs.db"), true, None);
    assert_eq!(durability.as_deref(), Some("sqlite-wal-normal"));
    assert!(journal.groups.lock().is_empty(), "{:?}", journal.groups.lock());
    assert_eq!(*journal.singles.lock(), 8 * 2, "each run appends twice (start, answer)");
    assert!(journal.inner.commits() <= 8 * 2, "{} commits", journal.inner.commits());
}

#[test]
fn a_store_that_commits_batches_together_gets_a_group_commit_by_default() {
    let scratch = Scratch::new("grouped");
    let (journal, _) = eight_runs(&scratch.file("runs.db"), false, None);
    assert_eq!(*journal.singles.lock(), 0, "every append came through the group commit");
    let groups = journal.groups.lock().clone();
    assert_eq!(groups.iter().sum::<usize>(), 8 * 2, "each run appends twice (start, answer): {groups:?}");
}

#[test]
fn group_commit_can_be_turned_off_and_on() {
    let scratch = Scratch::new("ungrouped");
    let (journal, _) = eight_runs(&scratch.file("runs.db"), false, Some(false));
    assert!(journal.groups.lock().is_empty(), "{:?}", journal.groups.lock());
    assert_eq!(*journal.singles.lock(), 8 * 2);
    let (journal, _) = eight_runs(&scratch.file("more-runs.db"), true, Some(true));
    assert_eq!(*journal.singles.lock(), 0, "asked for, it goes in front all the same");
}
