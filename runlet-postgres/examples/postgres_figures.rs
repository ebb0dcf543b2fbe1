//! The PostgreSQL figures of BENCHMARKS.md, all in one process, rounds interleaved:
//!
//! - (a) durable fan-out: one run of `for n in numbers() limit 64 { return noop(n) }` over 10,000
//!   numbers on the PostgreSQL journal beside the same on an SQLite file (`Durability::Full`),
//!   µs per call;
//! - (b) durable sequential chain: one run of a `fold` over 1,000 steps, one no-op call each, on
//!   the same two journals, µs per step;
//! - (c) worker throughput: 1,000 submitted runs of the Appendix A program
//!   (`examples/appendix-a`, its fixtures answering at once) drained by 1, 2 and 4 [`Worker`]s,
//!   each its own runtime and journal (concurrency 16), runs per second.
//!
//! `cargo run --release -p runlet-postgres --example postgres_figures -- [URL] [rounds=N]`, the
//! server's URL given or in `RUNLET_BENCH_POSTGRES_URL` (`scripts/postgres start DIR` prints one);
//! 5 rounds unless told. Each round measures every variant once, in an order that rotates from
//! round to round, each on a fresh runtime and a fresh database (or journal file); medians are
//! over the rounds. Every line names its journal's durability. Runtimes and the server share
//! the machine's cores.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use runlet::analyze::Inputs;
use runlet::engine::{Outcome, ToolCall, ToolError, ToolExecutor, ToolOutput};
use runlet::journal::{Durability, Journal, SqliteJournal};
use runlet::registry::{Registry, RegistryOptions};
use runlet::runtime::{RunOptions, Runtime};
use runlet::scripted::ScriptedExecutor;
use runlet::value::{List, Value};
use runlet_postgres::{Handled, PostgresJournal, PostgresOptions, Worker, WorkerOptions};
use tokio_util::sync::CancellationToken;

const REGISTRY: &str = r#"{"tools": [
    {"name": "numbers", "params": [], "outputSchema": {"type": "array", "items": {"type": "integer"}}, "execution": "pure"},
    {"name": "noop", "params": [{"name": "n", "schema": {"type": "integer"}}], "outputSchema": {"type": "integer"}, "execution": "pure"}
]}"#;
const FAN_OUT_CALLS: usize = 10_000;
const FAN_OUT: &str = "return for n in numbers() limit 64 {\n    return noop(n)\n}\n";
const CHAIN_STEPS: usize = 1_000;
const CHAIN: &str = "return fold acc = 0 for n in numbers() {\n    return noop(acc + n)\n}\n";

const APPENDIX_SOURCE: &str = include_str!("../../examples/appendix-a/main.run");
const APPENDIX_REGISTRY: &str = include_str!("../../examples/appendix-a/registry.json");
const APPENDIX_INPUTS: &str = include_str!("../../examples/appendix-a/inputs.json");
const APPENDIX_TOOLS: &str = include_str!("../../examples/appendix-a/tools.json");
const SUBMITTED_RUNS: usize = 1_000;
const WORKER_COUNTS: [usize; 3] = [1, 2, 4];

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

/// Runs `statement` on the database at `url`; the first column of every row it returns.
fn sql(url: &str, statement: &str) -> Vec<String> {
    let pool = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio");
    pool.block_on(async {
        let (client, connection) =
            tokio_postgres::connect(url, tokio_postgres::NoTls).await.expect("connects");
        let driver = tokio::spawn(connection);
        let messages =
            client.simple_query(statement).await.unwrap_or_else(|err| panic!("{statement}: {err}"));
        drop(client);
        let _ = driver.await;
        messages
            .iter()
            .filter_map(|message| match message {
                tokio_postgres::SimpleQueryMessage::Row(row) => row.get(0).map(str::to_owned),
                _ => None,
            })
            .collect()
    })
}

/// A fresh database on the server for one measurement, dropped with it.
struct Database {
    server: String,
    name: String,
    url: String,
}

static NEXT: AtomicU64 = AtomicU64::new(1);

impl Database {
    fn fresh(server: &str) -> Database {
        let name = format!("runlet_figures_{}_{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        sql(server, &format!("CREATE DATABASE {name}"));
        let base = server.rsplit_once('/').map_or(server, |(base, _)| base);
        Database { server: server.to_owned(), url: format!("{base}/{name}"), name }
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        sql(&self.server, &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name));
    }
}

/// Where one measurement journals: a fresh PostgreSQL database, or a fresh SQLite file (FULL).
#[derive(Debug, Clone, Copy)]
enum Store {
    Sqlite,
    Postgres,
}

/// An open journal and the database it lives in, if any (kept until the journal is done).
struct Opened {
    journal: Arc<dyn Journal>,
    _database: Option<Database>,
}

impl Store {
    fn label(self) -> &'static str {
        match self {
            Store::Sqlite => "SQLite FULL, group commit on",
            Store::Postgres => "PostgreSQL, group commit on",
        }
    }

    fn open(self, server: &str, dir: &Path) -> Opened {
        match self {
            Store::Sqlite => {
                let file = dir.join(format!("{}.db", NEXT.fetch_add(1, Ordering::Relaxed)));
                let journal = SqliteJournal::open(&file, Durability::Full).expect("opens the file");
                Opened { journal: Arc::new(journal), _database: None }
            }
            Store::Postgres => {
                let database = Database::fresh(server);
                let journal =
                    PostgresJournal::connect(&database.url, PostgresOptions::default()).expect("connects");
                Opened { journal: Arc::new(journal), _database: Some(database) }
            }
        }
    }
}

/// What one round of one variant measured.
struct Measured {
    seconds: f64,
    durability: String,
}

fn durability_of(journal: &dyn Journal) -> String {
    journal.durability().unwrap_or("unreported").to_owned()
}

/// One run of `source` over `count` numbers on a fresh runtime (2 worker threads, the default
/// group commit) journaling to a fresh `store`.
fn run_once(store: Store, source: &str, count: usize, server: &str, dir: &Path) -> Measured {
    let opened = store.open(server, dir);
    let runtime = Runtime::builder()
        .registry(Registry::from_json_str(REGISTRY, &RegistryOptions::default()).expect("registry").registry)
        .executor(Arc::new(Tools { count }))
        .journal(Arc::clone(&opened.journal))
        .worker_threads(2)
        .build()
        .expect("runtime");
    let program = runtime.compile(source, &Inputs::new()).expect("compiles");
    let started = Instant::now();
    let outcome = runtime.start(&program, &Inputs::new()).expect("starts").wait().expect("journal");
    let seconds = started.elapsed().as_secs_f64();
    assert!(matches!(outcome, Outcome::Succeeded(_)), "{outcome:?}");
    runtime.shutdown();
    Measured { seconds, durability: durability_of(opened.journal.as_ref()) }
}

/// The Appendix A fixtures with every delay removed, so each tool answers at once.
fn appendix_executor() -> Arc<ScriptedExecutor> {
    let mut fixtures: serde_json::Value = serde_json::from_str(APPENDIX_TOOLS).expect("fixtures");
    for cases in fixtures.as_object_mut().expect("an object of tools").values_mut() {
        for case in cases.as_array_mut().expect("a list of cases") {
            case.as_object_mut().expect("a case").remove("delay_ms");
        }
    }
    Arc::new(ScriptedExecutor::from_json_str(&fixtures.to_string()).expect("fixtures"))
}

/// A runtime running Appendix A's registry as `owner` over a journal of its own at `url`.
fn appendix_runtime(url: &str, owner: &str) -> (Arc<Runtime>, PostgresJournal) {
    let journal = PostgresJournal::connect(url, PostgresOptions::default()).expect("connects");
    let registry = Registry::from_json_str(APPENDIX_REGISTRY, &RegistryOptions::default()).expect("registry");
    let runtime = Runtime::builder()
        .registry(registry.registry)
        .executor(appendix_executor())
        .journal(Arc::new(journal.clone()))
        .digest_key("figures", b"the key every worker shares")
        .owner(owner)
        .worker_threads(2)
        .build()
        .expect("runtime");
    (Arc::new(runtime), journal)
}

/// Submits `SUBMITTED_RUNS` runs of Appendix A to the database at `url`, from four threads.
fn submit_appendix_runs(url: &str) {
    let (submitter, _journal) = appendix_runtime(url, "submitter");
    let inputs = Inputs::from_json(APPENDIX_INPUTS, submitter.registry()).expect("inputs");
    let program = submitter.compile(APPENDIX_SOURCE, &inputs).expect("compiles");
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..SUBMITTED_RUNS / 4 {
                    submitter.submit(&program, &inputs, RunOptions::default()).expect("submits");
                }
            });
        }
    });
}

/// What a worker reported of one run: whether this process is done with it (a run it lost goes
/// on elsewhere), and what it was when it did not succeed.
type Report = (bool, Option<String>);

fn report_of(done: &Handled) -> Report {
    match done {
        Handled::Ended { status: "succeeded", .. } => (true, None),
        Handled::Lost { .. } => (false, Some(format!("{done:?}"))),
        _ => (true, Some(format!("{done:?}"))),
    }
}

/// Starts a worker (concurrency 16) on its own thread, sending a [`Report`] of each run it
/// handled; stopping the token makes it drain and return.
fn spawn_worker(
    runtime: Arc<Runtime>,
    journal: PostgresJournal,
    stop: CancellationToken,
    handled: std::sync::mpsc::Sender<Report>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let options = WorkerOptions { concurrency: 16, ..WorkerOptions::default() };
        let worker = Worker::new(Arc::clone(&runtime), journal, options);
        let report = |done: &Handled| {
            let _ = handled.send(report_of(done));
        };
        runtime.handle().clone().block_on(worker.run(stop, report));
    })
}

/// `SUBMITTED_RUNS` runs submitted to a fresh database, then drained by `workers` workers: the
/// time from their start until the last run is handled. Runs that did not succeed are counted
/// and the first of them shown (shortened).
fn drain_once(workers: usize, server: &str) -> Measured {
    let database = Database::fresh(server);
    submit_appendix_runs(&database.url);
    let built: Vec<_> =
        (0..workers).map(|n| appendix_runtime(&database.url, &format!("worker-{n}"))).collect();
    let durability = durability_of(&built[0].1);
    let (stop, (sender, handled)) = (CancellationToken::new(), std::sync::mpsc::channel());
    let started = Instant::now();
    let threads: Vec<_> = built
        .into_iter()
        .map(|(runtime, journal)| spawn_worker(runtime, journal, stop.clone(), sender.clone()))
        .collect();
    let (mut ended, mut unexpected) = (0, Vec::new());
    while ended < SUBMITTED_RUNS {
        let (done, note) = handled.recv_timeout(Duration::from_secs(120)).expect("a run handled in time");
        ended += usize::from(done);
        unexpected.extend(note);
    }
    let seconds = started.elapsed().as_secs_f64();
    if let Some(first) = unexpected.first() {
        let shown: String = first.chars().take(300).collect();
        println!(
            "    ({workers} worker(s): {} reports other than success; the first: {shown})",
            unexpected.len()
        );
    }
    stop.cancel();
    for thread in threads {
        thread.join().expect("the worker thread");
    }
    Measured { seconds, durability }
}

/// Each of `variants` once per round through `once`, starting one later in the list each
/// round; every variant's measurements, in the list's order.
fn interleaved(
    rounds: usize,
    variants: usize,
    mut once: impl FnMut(usize) -> Measured,
) -> Vec<Vec<Measured>> {
    let mut measured: Vec<Vec<Measured>> = (0..variants).map(|_| Vec::new()).collect();
    for round in 0..rounds {
        for at in (0..variants).map(|i| (i + round) % variants) {
            measured[at].push(once(at));
        }
    }
    measured
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn median_seconds(rounds: &[Measured]) -> f64 {
    median(rounds.iter().map(|m| m.seconds).collect())
}

/// The median and range of each round's ratio of `rounds` to `baseline`'s round.
fn per_round(rounds: &[Measured], baseline: &[Measured], invert: bool) -> String {
    let mut ratios: Vec<f64> = rounds
        .iter()
        .zip(baseline)
        .map(|(m, base)| if invert { base.seconds / m.seconds } else { m.seconds / base.seconds })
        .collect();
    ratios.sort_by(f64::total_cmp);
    let (low, high) = (ratios[0], ratios[ratios.len() - 1]);
    format!("per round: median {:.2}×, {low:.2}–{high:.2}×", median(ratios))
}

fn durability_line(rounds: &[Measured]) -> &str {
    rounds.first().map_or("", |m| m.durability.as_str())
}

/// (a) and (b): µs per `unit` on each store, and PostgreSQL against SQLite FULL.
fn store_figure(
    title: &str,
    unit: &str,
    (source, count): (&str, usize),
    rounds: usize,
    server: &str,
    dir: &Path,
) {
    let stores = [Store::Sqlite, Store::Postgres];
    let measured = interleaved(rounds, stores.len(), |at| run_once(stores[at], source, count, server, dir));
    println!("{title}");
    let baseline = median_seconds(&measured[0]);
    for (store, rounds) in stores.iter().zip(&measured) {
        let seconds = median_seconds(rounds);
        println!(
            "    {:<30} {:>8.1} µs per {unit} (median of {}), {:.2}× SQLite FULL ({}); durability {}",
            store.label(),
            seconds * 1e6 / count as f64,
            rounds.len(),
            seconds / baseline,
            per_round(rounds, &measured[0], false),
            durability_line(rounds),
        );
    }
}

/// (c): runs per second drained by 1, 2 and 4 workers, and each against one worker.
fn worker_figure(rounds: usize, server: &str) {
    let measured = interleaved(rounds, WORKER_COUNTS.len(), |at| drain_once(WORKER_COUNTS[at], server));
    println!(
        "(c) worker throughput: {SUBMITTED_RUNS} submitted runs of Appendix A (fixtures, no delays), each worker its own runtime and journal, concurrency 16, all on this machine's cores"
    );
    let one = median_seconds(&measured[0]);
    for (workers, rounds) in WORKER_COUNTS.iter().zip(&measured) {
        let seconds = median_seconds(rounds);
        println!(
            "    {workers} worker(s): {:>7.1} runs/s (median of {}), {:.2}× one worker ({}); durability {}",
            SUBMITTED_RUNS as f64 / seconds,
            rounds.len(),
            one / seconds,
            per_round(rounds, &measured[0], true),
            durability_line(rounds),
        );
    }
}

fn load_average() -> String {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    text.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
}

/// The machine and the server the figures were taken on.
fn describe(server: &str) {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    println!("machine: {cores} cores, kernel {}, load average {}", kernel.trim(), load_average());
    let setting = |name: &str| sql(server, &format!("SHOW {name}")).concat();
    println!(
        "server: {}; fsync {}, synchronous_commit {}",
        sql(server, "SELECT version()").concat(),
        setting("fsync"),
        setting("synchronous_commit"),
    );
}

fn scratch_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("runlet-postgres-figures-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rounds =
        args.iter().find_map(|arg| arg.strip_prefix("rounds=")?.parse().ok()).unwrap_or(5usize).max(1);
    let server = args
        .iter()
        .find(|arg| !arg.starts_with("rounds="))
        .cloned()
        .or_else(|| std::env::var("RUNLET_BENCH_POSTGRES_URL").ok())
        .expect("a server URL: the first argument or RUNLET_BENCH_POSTGRES_URL");
    describe(&server);
    let dir = scratch_dir();
    let title = format!(
        "(a) durable fan-out: {FAN_OUT_CALLS} no-op calls, for … limit 64, one run, 2 worker threads"
    );
    store_figure(&title, "call", (FAN_OUT, FAN_OUT_CALLS), rounds, &server, &dir);
    let title =
        format!("(b) durable sequential chain: fold over {CHAIN_STEPS} steps, one no-op call each, one run");
    store_figure(&title, "step", (CHAIN, CHAIN_STEPS), rounds, &server, &dir);
    worker_figure(rounds, &server);
    println!("load average at the end: {}", load_average());
    std::fs::remove_dir_all(&dir).expect("remove the scratch directory");
}
