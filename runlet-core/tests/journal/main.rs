//! Runs journaled to an SQLite file through the `Runtime`: a damaged record is reported with its
//! `RL7006` when the run is read back (recovery, journal snapshots), never replayed.

use std::path::PathBuf;
use std::sync::Arc;

use runlet::analyze::Inputs;
use runlet::engine::Outcome;
use runlet::journal::{Durability, Journal, RunId, SqliteJournal};
use runlet::observe::{SnapshotOptions, ViewPolicy};
use runlet::registry::{Registry, RegistryOptions};
use runlet::runtime::{Executable, RunOptions, Runtime};
use runlet::scripted::ScriptedExecutor;

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
    let registry = Registry::from_json_str(
        r#"{"tools": [{"name": "echo.say", "params": [], "outputSchema": {"type": "string"}, "execution": "pure"}]}"#,
        &RegistryOptions::default(),
    )
    .expect("registry")
    .registry;
    let fixtures = format!(r#"{{"echo.say": [{{"result": "{MARKER}"}}]}}"#);
    let runtime = Runtime::builder()
        .registry(registry)
        .executor(Arc::new(ScriptedExecutor::from_json_str(&fixtures).expect("fixtures")))
        .journal(journal)
        .digest_key("journal-tests", b"one key for every runtime of these tests")
        .worker_threads(1)
        .build()
        .expect("runtime");
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
    let sql = rusqlite::Connection::open(&path).expect("open");
    // Record 2 becomes a copy of record 1: a whole envelope with a valid checksum, out of place.
    sql.execute(
        "UPDATE records SET bytes = (SELECT bytes FROM records WHERE run_id = ?1 AND seq = 1)
         WHERE run_id = ?1 AND seq = 2",
        [run.as_str()],
    )
    .expect("copy");
    drop(sql);
    assert_eq!(read_back_codes(&path, &run), ("RL7006".to_owned(), "RL7006".to_owned()));
}
