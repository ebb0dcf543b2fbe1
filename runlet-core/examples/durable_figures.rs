//! The durable-journal figures of BENCHMARKS.md: runs journaled to an SQLite file beside the
//! same runs with the in-memory journal, and a sequential chain beside the floor SQLite itself
//! sets for one commit per step, all measured in one process, rounds interleaved.
//!
//! `cargo run --release -p runlet-core --example durable_figures [fanout] [chain] [rounds=N]`
//! prints the named figures (both without arguments; 5 rounds unless told). Each round runs
//! every variant once, one after another, each on a fresh runtime and a fresh journal file, so
//! load changes hit every variant alike; medians are over the rounds. Every line names its
//! journal's durability.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use async_trait::async_trait;
use runlet::analyze::Inputs;
use runlet::engine::{Outcome, ToolCall, ToolError, ToolExecutor, ToolOutput};
use runlet::journal::{
    Durability, Journal, JournalError, MemoryJournal, Record, RunHeader, RunId, Snapshot, SqliteJournal,
};
use runlet::registry::{Registry, RegistryOptions};
use runlet::runtime::Runtime;
use runlet::value::{List, Value};

const REGISTRY: &str = r#"{"tools": [
    {"name": "numbers", "params": [], "outputSchema": {"type": "array", "items": {"type": "integer"}}, "execution": "pure"},
    {"name": "noop", "params": [{"name": "n", "schema": {"type": "integer"}}], "outputSchema": {"type": "integer"}, "execution": "pure"}
]}"#;

const FAN_OUT_CALLS: usize = 10_000;
const FAN_OUT: &str = "return for n in numbers() limit 64 {\n    return noop(n)\n}\n";
const CHAIN_STEPS: usize = 1_000;
const CHAIN: &str = "return fold acc = 0 for n in numbers() {\n    return noop(acc + n)\n}\n";

/// Answers `numbers` with 0..count and `noop` with its argument, at once.
struct Tools {
    count: usize,
}

#[async_trait]
impl ToolExecutor for Tools {
    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::new(match call.tool.as_ref() {
            "numbers" => {
                let count = i64::try_from(self.count).expect("count fits i64");
                List::new((0..count).map(Value::Int).collect()).expect("a flat list").into()
            }
            _ => call.arguments.iter().next().cloned().unwrap_or(Value::Null),
        }))
    }
}

/// Passes everything to the journal it wraps, counting appends, records and the time the
/// appends took.
struct Counting {
    inner: Arc<dyn Journal>,
    appends: AtomicU64,
    records: AtomicU64,
    append_nanos: AtomicU64,
}

#[async_trait]
impl Journal for Counting {
    async fn create_run(&self, header: &RunHeader) -> Result<(), JournalError> {
        self.inner.create_run(header).await
    }

    async fn header(&self, run: &RunId) -> Result<RunHeader, JournalError> {
        self.inner.header(run).await
    }

    async fn append(&self, run: &RunId, expected_seq: u64, records: &[Record]) -> Result<u64, JournalError> {
        self.appends.fetch_add(1, Ordering::Relaxed);
        self.records.fetch_add(records.len() as u64, Ordering::Relaxed);
        let started = Instant::now();
        let appended = self.inner.append(run, expected_seq, records).await;
        self.append_nanos.fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
        appended
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

/// One way of journaling a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Store {
    Memory,
    SqliteFull,
}

impl Store {
    fn label(self) -> &'static str {
        match self {
            Store::Memory => "in-memory journal",
            Store::SqliteFull => "SQLite FULL",
        }
    }

    fn open(self, file: &Path) -> Arc<dyn Journal> {
        match self {
            Store::Memory => Arc::new(MemoryJournal::new()),
            Store::SqliteFull => Arc::new(SqliteJournal::open(file, Durability::Full).expect("open")),
        }
    }
}

/// A fresh journal file's path in the scratch directory; any earlier one is removed.
fn fresh_file(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    path
}

/// What one run measured.
struct Measured {
    seconds: f64,
    appends: u64,
    records: u64,
    /// Time spent awaiting appends, summed over the run's appends.
    append_seconds: f64,
    durability: String,
}

/// Runs `source` over `count` numbers once on a fresh runtime over `store`.
fn run_once(store: Store, source: &str, count: usize, file: &Path) -> Measured {
    let journal = Arc::new(Counting {
        inner: store.open(file),
        appends: AtomicU64::new(0),
        records: AtomicU64::new(0),
        append_nanos: AtomicU64::new(0),
    });
    let durability = journal.durability().unwrap_or("unreported").to_owned();
    let runtime = Runtime::builder()
        .registry(Registry::from_json_str(REGISTRY, &RegistryOptions::default()).expect("registry").registry)
        .executor(Arc::new(Tools { count }))
        .journal(journal.clone())
        .worker_threads(2)
        .build()
        .expect("runtime");
    let program = runtime.compile(source, &Inputs::new()).expect("compiles");
    let started = Instant::now();
    let outcome = runtime.start(&program, &Inputs::new()).expect("starts").wait().expect("journal");
    let seconds = started.elapsed().as_secs_f64();
    assert!(matches!(outcome, Outcome::Succeeded(_)), "{outcome:?}");
    runtime.shutdown();
    let (appends, records) =
        (journal.appends.load(Ordering::Relaxed), journal.records.load(Ordering::Relaxed));
    let append_seconds = journal.append_nanos.load(Ordering::Relaxed) as f64 / 1e9;
    Measured { seconds, appends, records, append_seconds, durability }
}

/// The floor SQLite sets for a chain: `steps` transactions of one 256-byte INSERT and a COMMIT
/// each, straight through rusqlite, in a WAL file with `synchronous=FULL` and the journal's
/// record table.
fn sqlite_floor(steps: usize, file: &Path) -> f64 {
    let connection = rusqlite::Connection::open(file).expect("open");
    connection
        .execute_batch(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;
             CREATE TABLE records (run_id TEXT NOT NULL, seq INTEGER NOT NULL, bytes BLOB NOT NULL,
                 PRIMARY KEY (run_id, seq)) WITHOUT ROWID;",
        )
        .expect("layout");
    let bytes = vec![0x5a_u8; 256];
    let started = Instant::now();
    for seq in 1..=steps as i64 {
        connection.execute_batch("BEGIN IMMEDIATE").expect("begin");
        connection
            .prepare_cached("INSERT INTO records (run_id, seq, bytes) VALUES ('floor', ?1, ?2)")
            .and_then(|mut insert| insert.execute(rusqlite::params![seq, &bytes[..]]))
            .expect("insert");
        connection.execute_batch("COMMIT").expect("commit");
    }
    started.elapsed().as_secs_f64()
}

fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// The machine the figures were taken on: cores, CPU model and load average.
fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|line| line.strip_prefix("model name").and_then(|rest| rest.split(':').nth(1)))
        .map_or("unknown", str::trim)
        .to_owned();
    format!("{cores} cores, {model}, load average {}", load_average())
}

fn load_average() -> String {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    text.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
}

/// Medians of each variant over `rounds` interleaved rounds, per unit of work.
fn report(title: &str, unit: &str, per: usize, variants: &[(String, Vec<Measured>)], baseline: usize) {
    println!("{title}");
    let mut medians = Vec::new();
    for (_, runs) in variants {
        let mut seconds: Vec<f64> = runs.iter().map(|m| m.seconds).collect();
        medians.push(median(&mut seconds) * 1e6 / per as f64);
    }
    for ((label, runs), micros) in variants.iter().zip(&medians) {
        let counted = runs.iter().find(|m| m.appends > 0);
        let mut waits: Vec<f64> = runs.iter().map(|m| m.append_seconds).collect();
        let appends = counted.map_or(String::new(), |m| {
            format!(
                "; {:.2} appends and {:.1} records per {unit}, {:.1} µs per {unit} awaiting appends",
                m.appends as f64 / per as f64,
                m.records as f64 / per as f64,
                median(&mut waits) * 1e6 / per as f64,
            )
        });
        let durability = runs.first().map_or("", |m| m.durability.as_str());
        println!(
            "    {label:<44} {micros:>9.1} µs per {unit} (median of {}), {:.2}× {}; durability {durability}{appends}",
            runs.len(),
            micros / medians[baseline],
            variants[baseline].0,
        );
    }
}

fn fan_out(rounds: usize, dir: &Path) {
    let stores = [Store::Memory, Store::SqliteFull];
    let mut variants: Vec<(String, Vec<Measured>)> =
        stores.iter().map(|store| (store.label().to_owned(), Vec::new())).collect();
    for _ in 0..rounds {
        for (store, (_, runs)) in stores.iter().zip(variants.iter_mut()) {
            runs.push(run_once(*store, FAN_OUT, FAN_OUT_CALLS, &fresh_file(dir, "fanout.db")));
        }
    }
    report(
        &format!(
            "(e) durable fan-out: {FAN_OUT_CALLS} no-op calls, for … limit 64, one run, 2 worker threads"
        ),
        "call",
        FAN_OUT_CALLS,
        &variants,
        0,
    );
}

fn chain(rounds: usize, dir: &Path) {
    let stores = [Store::Memory, Store::SqliteFull];
    let mut variants: Vec<(String, Vec<Measured>)> =
        vec![("SQLite floor: one INSERT + COMMIT per step".to_owned(), Vec::new())];
    variants.extend(stores.iter().map(|store| (store.label().to_owned(), Vec::new())));
    for _ in 0..rounds {
        let seconds = sqlite_floor(CHAIN_STEPS, &fresh_file(dir, "floor.db"));
        let durability = "sqlite-wal-full".to_owned();
        variants[0].1.push(Measured { seconds, appends: 0, records: 0, append_seconds: 0.0, durability });
        for (store, (_, runs)) in stores.iter().zip(variants.iter_mut().skip(1)) {
            runs.push(run_once(*store, CHAIN, CHAIN_STEPS, &fresh_file(dir, "chain.db")));
        }
    }
    report(
        &format!("(f) durable sequential chain: fold over {CHAIN_STEPS} steps, one no-op call each, one run"),
        "step",
        CHAIN_STEPS,
        &variants,
        0,
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rounds = args
        .iter()
        .find_map(|arg| arg.strip_prefix("rounds=").and_then(|n| n.parse().ok()))
        .unwrap_or(5usize)
        .max(1);
    let wanted =
        |figure: &str| !args.iter().any(|a| !a.starts_with("rounds=")) || args.iter().any(|a| a == figure);
    let dir = std::env::temp_dir().join(format!("runlet-durable-figures-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    println!("machine: {}; journal files in {}", machine(), dir.display());
    if wanted("fanout") {
        fan_out(rounds, &dir);
    }
    if wanted("chain") {
        chain(rounds, &dir);
    }
    println!("load average at the end: {}", load_average());
    std::fs::remove_dir_all(&dir).expect("remove the scratch directory");
}
