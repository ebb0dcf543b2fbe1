//! The durable-journal figures of BENCHMARKS.md: runs journaled to an SQLite file (FULL with
//! group commit off and on; NORMAL, which does not wait for the disk, for what the journal costs
//! besides it) beside the same runs with the in-memory journal, and sequential chains — one, and
//! eight at once — beside the floor SQLite itself sets for one commit per step (one INSERT and a
//! COMMIT straight through rusqlite), all in one process, rounds interleaved. The tools answer at
//! once in the run's own task (`answers_inline`); one variant sends each call to a task of its
//! own instead.
//!
//! `cargo run --release -p runlet-core --example durable_figures [fanout] [chain] [chains]
//! [resume] [rounds=N]` prints the named figures (all without arguments; 5 rounds unless told). Each round runs
//! every variant once, one after another, each on a fresh runtime and a fresh journal file, so
//! load changes hit every variant alike; medians are over the rounds. Every line names its
//! journal's durability.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use async_trait::async_trait;
use runlet::analyze::Inputs;
use runlet::engine::{Outcome, ToolCall, ToolCapabilities, ToolError, ToolExecutor, ToolOutput};
use runlet::journal::{
    AppendBatch, Durability, Journal, JournalError, MemoryJournal, Record, RunHeader, RunId, Snapshot,
    SqliteJournal,
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
const CHAINS: usize = 8;

/// Answers `numbers` with 0..count and `noop` with its argument, at once: in the run's own task
/// (`answers_inline`, as an in-process tool that never waits declares), or, when not `inline`,
/// each call in a task of its own.
struct Tools {
    count: usize,
    inline: bool,
}

#[async_trait]
impl ToolExecutor for Tools {
    fn capabilities(&self, _tool: &str) -> ToolCapabilities {
        ToolCapabilities { answers_inline: self.inline, ..ToolCapabilities::default() }
    }

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

/// Passes everything to the journal it wraps, counting the calls that append (one per `append`,
/// one per `append_many`), the batches and records in them, and the time they took; the
/// commits are the store's own count where it has one (SQLite's writer gathers the appends that
/// queue while it commits), else one per call.
#[derive(Default)]
struct Counted {
    commits: AtomicU64,
    /// Of the store's commits, those the appending thread made (the SQLite writer was idle).
    own_commits: AtomicU64,
    batches: AtomicU64,
    records: AtomicU64,
    bytes: AtomicU64,
    commit_nanos: AtomicU64,
}

struct Counting {
    inner: Arc<dyn Journal>,
    /// The store, when it counts its own commits.
    sqlite: Option<SqliteJournal>,
    counted: Counted,
}

impl Counting {
    fn count<'a>(&self, batches: usize, records: impl Iterator<Item = &'a Record>, started: Instant) {
        let (mut count, mut bytes) = (0, 0);
        for record in records {
            count += 1;
            bytes += record.bytes.len() as u64;
        }
        if self.sqlite.is_none() {
            self.counted.commits.fetch_add(1, Ordering::Relaxed);
        }
        self.counted.batches.fetch_add(batches as u64, Ordering::Relaxed);
        self.counted.records.fetch_add(count, Ordering::Relaxed);
        self.counted.bytes.fetch_add(bytes, Ordering::Relaxed);
        self.counted.commit_nanos.fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }
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
        let started = Instant::now();
        let appended = self.inner.append(run, expected_seq, records).await;
        self.count(1, records.iter(), started);
        appended
    }

    async fn append_many(&self, batches: &[AppendBatch]) -> Vec<Result<u64, JournalError>> {
        let started = Instant::now();
        let appended = self.inner.append_many(batches).await;
        self.count(batches.len(), batches.iter().flat_map(|batch| &batch.records), started);
        appended
    }

    fn commits_batches_together(&self) -> bool {
        self.inner.commits_batches_together()
    }

    fn groups_appends(&self) -> bool {
        self.inner.groups_appends()
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

/// One way of journaling runs: the store, and whether the runtime puts a `GroupCommit` task
/// in front of it (the SQLite journal's writer groups appends without one); and whether the
/// tools answer in the run's task (all but one variant) or each call in a task of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    Memory,
    /// The in-memory journal with a snapshot every 10,000 events, as durable journals take them
    /// by default: what keeping the replay ledger and taking snapshots costs a run.
    MemorySnapshots,
    Sqlite {
        durability: Durability,
        group_commit_task: bool,
    },
    /// SQLite FULL with every call in a task of its own: two hand-offs between threads per call.
    SqliteToolsOnTasks,
}

impl Variant {
    const ALL: [Variant; 6] = [
        Variant::Memory,
        Variant::Sqlite { durability: Durability::Normal, group_commit_task: false },
        Variant::Sqlite { durability: Durability::Full, group_commit_task: false },
        Variant::Sqlite { durability: Durability::Full, group_commit_task: true },
        Variant::SqliteToolsOnTasks,
        Variant::MemorySnapshots,
    ];

    fn label(self) -> &'static str {
        match self {
            Variant::Memory => "in-memory journal",
            Variant::MemorySnapshots => "in-memory, snapshots every 10,000 events",
            Variant::Sqlite { durability: Durability::Normal, .. } => "SQLite NORMAL",
            Variant::Sqlite { group_commit_task: false, .. } => "SQLite FULL",
            Variant::Sqlite { group_commit_task: true, .. } => "SQLite FULL, GroupCommit in front",
            Variant::SqliteToolsOnTasks => "SQLite FULL, each call in a task of its own",
        }
    }

    /// A fresh journal in `file`, counted.
    fn open(self, file: &Path) -> Counting {
        let sqlite = match self {
            Variant::Memory | Variant::MemorySnapshots => None,
            Variant::Sqlite { durability, .. } => Some(SqliteJournal::open(file, durability).expect("open")),
            Variant::SqliteToolsOnTasks => Some(SqliteJournal::open(file, Durability::Full).expect("open")),
        };
        let inner: Arc<dyn Journal> = match &sqlite {
            Some(sqlite) => Arc::new(sqlite.clone()),
            None => Arc::new(MemoryJournal::new()),
        };
        Counting { inner, sqlite, counted: Counted::default() }
    }

    fn tools_inline(self) -> bool {
        self != Variant::SqliteToolsOnTasks
    }

    fn group_commit(self) -> bool {
        matches!(self, Variant::Sqlite { group_commit_task: true, .. })
    }

    /// How many events apart the runs' snapshots are (`0`: none); `None` for the default.
    fn snapshot_every(self) -> Option<u64> {
        matches!(self, Variant::MemorySnapshots).then_some(runlet::runtime::DEFAULT_SNAPSHOT_EVERY)
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

/// What one round of a variant measured.
struct Measured {
    seconds: f64,
    /// What the journal counted; `None` for the floor, which has no journal.
    counted: Option<Counted>,
    durability: String,
}

/// Starts `runs` runs of `source` over `count` numbers at once on a fresh runtime journaling
/// as `variant` does, and waits for them all.
fn run_once(variant: Variant, source: &str, count: usize, runs: usize, file: &Path) -> Measured {
    let journal = Arc::new(variant.open(file));
    let runtime = Runtime::builder()
        .registry(Registry::from_json_str(REGISTRY, &RegistryOptions::default()).expect("registry").registry)
        .executor(Arc::new(Tools { count, inline: variant.tools_inline() }))
        .journal(journal.clone())
        .group_commit(variant.group_commit())
        .worker_threads(2);
    let runtime = match variant.snapshot_every() {
        Some(every) => runtime.snapshot_every(every),
        None => runtime,
    };
    let runtime = runtime.build().expect("runtime");
    let durability = runtime.durability().unwrap_or("unreported").to_owned();
    let program = runtime.compile(source, &Inputs::new()).expect("compiles");
    let started = Instant::now();
    let handles: Vec<_> =
        (0..runs).map(|_| runtime.start(&program, &Inputs::new()).expect("starts")).collect();
    for handle in handles {
        let outcome = handle.wait().expect("journal");
        assert!(matches!(outcome, Outcome::Succeeded(_)), "{outcome:?}");
    }
    let seconds = started.elapsed().as_secs_f64();
    runtime.shutdown();
    drop(runtime);
    let counted = Arc::into_inner(journal).map(|journal| {
        if let Some(sqlite) = &journal.sqlite {
            journal.counted.commits.store(sqlite.commits(), Ordering::Relaxed);
            journal.counted.own_commits.store(sqlite.commits_on_appending_threads(), Ordering::Relaxed);
        }
        journal.counted
    });
    Measured { seconds, counted, durability }
}

/// The floor SQLite sets for a chain: `steps` transactions of one 256-byte INSERT and a COMMIT
/// each, straight through rusqlite, in a WAL file with `synchronous=FULL` and the journal's
/// record table; with SQLite's default checkpoints, or the journal's own
/// (`SqliteJournal::WAL_PAGES_BEFORE_CHECKPOINT`), which reuse the WAL file sooner.
fn sqlite_floor(steps: usize, file: &Path, checkpoints: Checkpoints) -> f64 {
    let connection = rusqlite::Connection::open(file).expect("open");
    connection
        .execute_batch(
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;
             CREATE TABLE records (run_id TEXT NOT NULL, seq INTEGER NOT NULL, bytes BLOB NOT NULL,
                 PRIMARY KEY (run_id, seq)) WITHOUT ROWID;",
        )
        .expect("layout");
    if checkpoints == Checkpoints::Journal {
        connection
            .pragma_update(None, "wal_autocheckpoint", SqliteJournal::WAL_PAGES_BEFORE_CHECKPOINT)
            .expect("checkpoints");
    }
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

/// When the floor's connection checkpoints its WAL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Checkpoints {
    /// SQLite's default: after 1,000 pages.
    Default,
    /// The SQLite journal's: after `SqliteJournal::WAL_PAGES_BEFORE_CHECKPOINT` pages.
    Journal,
}

/// What a round measures: a way of journaling runs, or SQLite's floor.
#[derive(Debug, Clone, Copy)]
enum Entry {
    Runs(Variant),
    Floor(Checkpoints),
}

impl Entry {
    fn label(self) -> &'static str {
        match self {
            Entry::Runs(variant) => variant.label(),
            Entry::Floor(Checkpoints::Default) => "SQLite floor (INSERT + COMMIT)",
            Entry::Floor(Checkpoints::Journal) => "SQLite floor, the journal's checkpoints",
        }
    }
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

/// Medians of each variant over the rounds, per unit of work (`per` units in a round), and
/// each against the variants at `baselines`.
fn report(title: &str, unit: &str, per: usize, variants: &[(String, Vec<Measured>)], baselines: &[usize]) {
    println!("{title}");
    let per_unit = |seconds: f64| seconds * 1e6 / per as f64;
    let medians: Vec<f64> = variants
        .iter()
        .map(|(_, rounds)| per_unit(median(&mut rounds.iter().map(|m| m.seconds).collect::<Vec<_>>())))
        .collect();
    for ((label, rounds), micros) in variants.iter().zip(&medians) {
        let counts: Vec<&Counted> = rounds.iter().filter_map(|m| m.counted.as_ref()).collect();
        let journal = match counts.first() {
            Some(first) => {
                let load = |n: &AtomicU64| n.load(Ordering::Relaxed) as f64 / per as f64;
                let mut in_commits: Vec<f64> =
                    counts.iter().map(|c| c.commit_nanos.load(Ordering::Relaxed) as f64 / 1e9).collect();
                format!(
                    "; per {unit}: {:.3} commits ({:.3} on the appending thread), {:.3} appends, {:.1} records of {:.0} B in all, {:.1} µs in the store's commits",
                    load(&first.commits),
                    load(&first.own_commits),
                    load(&first.batches),
                    load(&first.records),
                    load(&first.bytes),
                    per_unit(median(&mut in_commits)),
                )
            }
            None => String::new(),
        };
        let durability = rounds.first().map_or("", |m| m.durability.as_str());
        let against: Vec<String> = baselines
            .iter()
            .map(|&baseline| {
                let mut ratios: Vec<f64> = rounds
                    .iter()
                    .zip(&variants[baseline].1)
                    .map(|(m, base)| m.seconds / base.seconds)
                    .collect();
                format!(
                    "{:.2}× the {} (per-round ratios: median {:.2}×, {:.2}–{:.2}×)",
                    micros / medians[baseline],
                    variants[baseline].0,
                    median(&mut ratios),
                    ratios.first().copied().unwrap_or(f64::NAN),
                    ratios.last().copied().unwrap_or(f64::NAN),
                )
            })
            .collect();
        println!(
            "    {label:<34} {micros:>8.1} µs per {unit} (median of {}), {}; durability {durability}{journal}",
            rounds.len(),
            against.join(", "),
        );
    }
}

/// Each variant once per round, `runs` runs of `source` at once over `count` numbers, and the
/// floor of `floor_steps` commits when asked; each round starts one later in that list than the
/// round before, so no variant always follows the same one.
fn measure(
    rounds: usize,
    dir: &Path,
    (source, count, runs): (&str, usize, usize),
    floor_steps: Option<usize>,
) -> Vec<(String, Vec<Measured>)> {
    let mut entries: Vec<Entry> = Variant::ALL.iter().copied().map(Entry::Runs).collect();
    if floor_steps.is_some() {
        entries.splice(0..0, [Entry::Floor(Checkpoints::Default), Entry::Floor(Checkpoints::Journal)]);
    }
    let mut variants: Vec<(String, Vec<Measured>)> =
        entries.iter().map(|entry| (entry.label().to_owned(), Vec::new())).collect();
    for round in 0..rounds {
        for at in (0..entries.len()).map(|i| (i + round) % entries.len()) {
            let measured = match entries[at] {
                Entry::Runs(variant) => run_once(variant, source, count, runs, &fresh_file(dir, "runs.db")),
                Entry::Floor(checkpoints) => Measured {
                    seconds: sqlite_floor(
                        floor_steps.unwrap_or(count),
                        &fresh_file(dir, "floor.db"),
                        checkpoints,
                    ),
                    counted: None,
                    durability: "sqlite-wal-full".to_owned(),
                },
            };
            variants[at].1.push(measured);
        }
    }
    variants
}

fn fan_out(rounds: usize, dir: &Path) {
    let variants = measure(rounds, dir, (FAN_OUT, FAN_OUT_CALLS, 1), None);
    let title = format!(
        "(e) durable fan-out: {FAN_OUT_CALLS} no-op calls, for … limit 64, one run, 2 worker threads"
    );
    report(&title, "call", FAN_OUT_CALLS, &variants, &[0]);
}

fn chain(rounds: usize, dir: &Path) {
    let variants = measure(rounds, dir, (CHAIN, CHAIN_STEPS, 1), Some(CHAIN_STEPS));
    let title =
        format!("(f) durable sequential chain: fold over {CHAIN_STEPS} steps, one no-op call each, one run");
    report(&title, "step", CHAIN_STEPS, &variants, &[0, 1]);
}

fn chains(rounds: usize, dir: &Path) {
    let steps = CHAIN_STEPS / CHAINS;
    let variants = measure(rounds, dir, (CHAIN, steps, CHAINS), Some(CHAIN_STEPS));
    let title = format!(
        "(g) {CHAINS} sequential chains at once: {CHAINS} runs of a fold over {steps} steps, {CHAIN_STEPS} steps in all"
    );
    report(&title, "step", CHAIN_STEPS, &variants, &[0, 1]);
}

/// (h) Bringing back a finished run of about 100,000 journaled events from its SQLite file, as a
/// resume does before it goes on: open the file, read the records it needs, decode them and
/// replay them into a fresh core (`Runtime::recovery`) — for a run written without snapshots
/// (the whole journal replays) and for the same program written with the default snapshots
/// (the latest is restored and only the records after it replay). Beside them, in the same
/// rounds, reading every record alone.
fn resume(rounds: usize, dir: &Path) {
    const CALLS: usize = 12_500;
    let file = fresh_file(dir, "resume");
    let registry =
        || Registry::from_json_str(REGISTRY, &RegistryOptions::default()).expect("registry").registry;
    let build = |journal: Arc<dyn Journal>, snapshot_every: u64| {
        Runtime::builder()
            .registry(registry())
            .executor(Arc::new(Tools { count: CALLS, inline: true }))
            .journal(journal)
            .digest_key("figures", b"figures")
            .worker_threads(2)
            .snapshot_every(snapshot_every)
            .build()
            .expect("runtime")
    };
    let finished = |snapshot_every: u64| {
        let runtime =
            build(Arc::new(SqliteJournal::open(&file, Durability::Normal).expect("open")), snapshot_every);
        let program = runtime.compile(FAN_OUT, &Inputs::new()).expect("compiles");
        let run = runtime.start(&program, &Inputs::new()).expect("starts");
        let run_id = run.run_id().clone();
        assert!(matches!(run.wait().expect("journal"), Outcome::Succeeded(_)));
        let events = runtime.run_listing(&run_id).expect("summary").last_seq;
        runtime.shutdown();
        (run_id, events)
    };
    let (plain, events) = finished(0);
    let (snapshotted, _) = finished(runlet::runtime::DEFAULT_SNAPSHOT_EVERY);
    let recover = |run_id: &RunId| {
        let started = Instant::now();
        let runtime = build(Arc::new(SqliteJournal::open(&file, Durability::Full).expect("open")), 0);
        let program = runtime.compile(FAN_OUT, &Inputs::new()).expect("compiles");
        let recovery =
            runtime.recovery(&program, run_id, runlet::runtime::RunOptions::default()).expect("recovers");
        assert!(matches!(recovery.outcome(), Some(Outcome::Succeeded(_))));
        let used = recovery.snapshot().clone();
        (started.elapsed().as_secs_f64(), used)
    };
    let (mut whole, mut restored, mut read) = (Vec::new(), Vec::new(), Vec::new());
    let mut used = runlet::runtime::SnapshotUse::None;
    for _ in 0..rounds {
        whole.push(recover(&plain).0);
        let (took, snapshot) = recover(&snapshotted);
        restored.push(took);
        used = snapshot;
        let started = Instant::now();
        let journal = SqliteJournal::open(&file, Durability::Full).expect("open");
        let pool = tokio::runtime::Builder::new_current_thread().build().expect("tokio");
        let records = pool.block_on(journal.read(&plain, 0, usize::MAX)).expect("read");
        assert_eq!(records.len() as u64, events);
        read.push(started.elapsed().as_secs_f64());
    }
    let (whole, restored, read) = (median(&mut whole), median(&mut restored), median(&mut read));
    println!(
        "(h) recovery of a finished run of {events} journaled events ({CALLS} calls), SQLite, {rounds} rounds:"
    );
    println!(
        "    no snapshot: open + read + decode + replay all: {:.1} ms median ({:.2} µs per event)",
        whole * 1e3,
        whole * 1e6 / events as f64
    );
    println!(
        "    with snapshots every {} events ({used:?}): {:.1} ms median, {:.2}x the run without",
        runlet::runtime::DEFAULT_SNAPSHOT_EVERY,
        restored * 1e3,
        restored / whole
    );
    println!("    open + read every record alone (baseline): {:.1} ms median", read * 1e3);
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
    if wanted("chains") {
        chains(rounds, &dir);
    }
    if wanted("resume") {
        resume(rounds, &dir);
    }
    println!("load average at the end: {}", load_average());
    std::fs::remove_dir_all(&dir).expect("remove the scratch directory");
}
