//! Workers sharing a PostgreSQL journal's runs: racing workers run every submitted run once, each
//! call dispatched once; a worker whose heartbeat stops loses its run to another, and its late
//! result never reaches the journal.

mod support;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use parking_lot::Mutex;
use runlet::analyze::Inputs;
use runlet::engine::{ToolCall, ToolError, ToolExecutor, ToolOutput};
use runlet::journal::{Journal, RunId};
use runlet::registry::{Registry, RegistryOptions};
use runlet::runtime::{RunOptions, RunStatus, Runtime, list_runs};
use runlet::value::Value;
use runlet_postgres::{Handled, PostgresJournal, PostgresOptions, Worker, WorkerOptions};
use tokio_util::sync::CancellationToken;

const REGISTRY: &str = r#"{"prelude": "standard", "tools": [
    {"name": "t.inc", "params": [{"name": "n", "schema": {"type": "integer"}}],
     "outputSchema": {"type": "integer"}, "execution": "at_most_once"},
    {"name": "t.held", "params": [{"name": "n", "schema": {"type": "integer"}}],
     "outputSchema": {"type": "integer"}, "execution": "at_most_once"},
    {"name": "t.held_again", "params": [{"name": "n", "schema": {"type": "integer"}}],
     "outputSchema": {"type": "integer"}, "execution": "idempotent"}]}"#;

const SOURCE: &str = "a = t.inc(n)\nb = t.inc(a)\nreturn t.inc(b)\n";

/// `t.inc(n)` answers `n + 1`; `t.held(n)` and `t.held_again(n)` answer `n` once the test lets
/// them go. Every dispatch
/// is counted by operation id and by the owner of the runtime that made it.
#[derive(Default)]
struct Counting {
    dispatches: Mutex<BTreeMap<String, Vec<String>>>,
    release: tokio::sync::Notify,
}

struct Tools {
    owner: String,
    counts: Arc<Counting>,
}

#[async_trait]
impl ToolExecutor for Tools {
    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        let operation = call.context.operation_id.to_string();
        self.counts.dispatches.lock().entry(operation).or_default().push(self.owner.clone());
        let Some(Value::Int(n)) = call.arguments.iter().next().cloned() else {
            return Err(ToolError::new("BAD_ARGUMENT", "an integer"));
        };
        if call.tool.starts_with("t.held") {
            self.counts.release.notified().await;
            return Ok(ToolOutput::new(Value::Int(n)));
        }
        Ok(ToolOutput::new(Value::Int(n + 1)))
    }
}

fn runtime(
    url: &str,
    owner: &str,
    counts: &Arc<Counting>,
    lease: Duration,
) -> (Arc<Runtime>, PostgresJournal) {
    let options = PostgresOptions { lease, ..PostgresOptions::default() };
    let journal = PostgresJournal::connect(url, options).expect("connects");
    let registry = Registry::from_json_str(REGISTRY, &RegistryOptions::default()).expect("registry").registry;
    let runtime = Runtime::builder()
        .registry(registry)
        .executor(Arc::new(Tools { owner: owner.to_owned(), counts: Arc::clone(counts) }))
        .journal(Arc::new(journal.clone()) as Arc<dyn Journal>)
        .digest_key("workers", b"the key every worker shares")
        .owner(owner)
        .worker_threads(1)
        .build()
        .expect("runtime");
    (Arc::new(runtime), journal)
}

/// What workers reported, as `worker: handled`.
type Reports = Arc<Mutex<Vec<String>>>;

/// Starts a worker on its own thread, reporting into `reports`; stopping the token makes it
/// drain and return.
fn spawn_worker(
    runtime: Arc<Runtime>,
    journal: PostgresJournal,
    stop: CancellationToken,
    reports: &Reports,
) -> std::thread::JoinHandle<()> {
    let reports = Arc::clone(reports);
    std::thread::spawn(move || {
        let options =
            WorkerOptions { concurrency: 8, poll: Duration::from_millis(100), ..WorkerOptions::default() };
        let worker = Worker::new(Arc::clone(&runtime), journal, options);
        let owner = runtime.owner().to_owned();
        let report = |done: &Handled| reports.lock().push(format!("{owner}: {done:?}"));
        runtime.handle().clone().block_on(worker.run(stop, report));
    })
}

/// Waits until every run of `journal` has ended (at most `within`).
fn wait_until_all_end(journal: &PostgresJournal, runs: usize, within: Duration) -> Vec<RunStatus> {
    let pool = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio");
    let started = Instant::now();
    loop {
        let listed = pool.block_on(list_runs(journal)).expect("runs");
        let statuses: Vec<RunStatus> = listed.iter().map(|listing| listing.status).collect();
        if statuses.len() == runs && statuses.iter().all(|status| status.has_ended()) {
            return statuses;
        }
        assert!(started.elapsed() < within, "runs still going after {within:?}: {statuses:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn submit_runs(url: &str, counts: &Arc<Counting>, source: &str, count: i64) -> Vec<RunId> {
    let (submitter, _journal) = runtime(url, "submitter", counts, Duration::from_secs(10));
    let mut inputs = Inputs::new();
    (0..count)
        .map(|n| {
            inputs.insert("n", Value::Int(n * 10));
            let program = submitter.compile(source, &inputs).expect("compiles");
            submitter.submit(&program, &inputs, RunOptions::default()).expect("submits")
        })
        .collect()
}

fn racing_workers_run_every_run_once(workers: usize) {
    let Some(db) = support::database(&format!("race_{workers}")) else { return };
    let counts = Arc::new(Counting::default());
    let runs = submit_runs(&db.url, &counts, SOURCE, 24);
    let stop = CancellationToken::new();
    let reports = Reports::default();
    let threads: Vec<_> = (0..workers)
        .map(|n| {
            let (runtime, journal) =
                runtime(&db.url, &format!("worker-{n}"), &counts, Duration::from_secs(10));
            spawn_worker(runtime, journal, stop.clone(), &reports)
        })
        .collect();
    let observer = PostgresJournal::connect(&db.url, PostgresOptions::default()).expect("connects");
    let statuses = wait_until_all_end(&observer, runs.len(), Duration::from_secs(60));
    stop.cancel();
    for thread in threads {
        thread.join().expect("the worker thread");
    }
    assert!(statuses.iter().all(|status| *status == RunStatus::Succeeded), "{statuses:?}");
    let reports = reports.lock();
    assert_eq!(reports.len(), runs.len(), "each run handled once: {reports:#?}");
    assert!(reports.iter().all(|report| report.contains("Ended")), "{reports:#?}");
    let dispatches = counts.dispatches.lock();
    assert_eq!(dispatches.len(), runs.len() * 3, "three operations per run");
    for (operation, by) in dispatches.iter() {
        assert_eq!(by.len(), 1, "operation {operation} was dispatched by {by:?}");
    }
    // Every run answered what its own inputs give.
    let pool = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio");
    for run in &runs {
        let records = pool.block_on(observer.read(run, 0, usize::MAX)).expect("reads");
        let last =
            runlet::engine::event::Event::decode_record(records.last().expect("a record")).expect("decodes");
        assert!(matches!(last, runlet::engine::event::Event::RunSucceeded), "{run}: {last:?}");
    }
}

#[test]
fn two_racing_workers_run_every_run_once() {
    racing_workers_run_every_run_once(2);
}

#[test]
fn four_racing_workers_run_every_run_once() {
    racing_workers_run_every_run_once(4);
}

/// A worker whose heartbeat stops reaching the database (its process lives: a zombie) loses
/// its run once the lease runs out; the other worker resumes it from the journal, and the
/// zombie's late result is refused by the fence, so the journal holds the run's one end.
#[test]
fn a_zombie_worker_cannot_append_after_its_run_was_taken_over() {
    let Some(db) = support::database("zombie") else { return };
    let counts = Arc::new(Counting::default());
    let runs = submit_runs(&db.url, &counts, "return t.held(n)\n", 1);
    let lease = Duration::from_millis(800);
    let (zombie, zombie_journal) = runtime(&db.url, "zombie", &counts, lease);
    let stop_zombie = CancellationToken::new();
    let reports = Reports::default();
    let zombie_thread = spawn_worker(zombie, zombie_journal, stop_zombie.clone(), &reports);
    // Wait until the zombie dispatched the held call.
    let started = Instant::now();
    while counts.dispatches.lock().is_empty() {
        assert!(started.elapsed() < Duration::from_secs(30), "the zombie never dispatched");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Its renewals stop reaching the database.
    support::execute(
        &db.url,
        "CREATE FUNCTION runlet.hold_zombie() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN IF NEW.owner = 'zombie' THEN RETURN NULL; END IF; RETURN NEW; END $$;
         CREATE TRIGGER hold_zombie BEFORE UPDATE ON runlet.workers FOR EACH ROW EXECUTE FUNCTION runlet.hold_zombie();",
    );
    let (rescuer, rescuer_journal) = runtime(&db.url, "rescuer", &counts, Duration::from_secs(10));
    let stop_rescuer = CancellationToken::new();
    let rescuer_thread = spawn_worker(rescuer, rescuer_journal, stop_rescuer.clone(), &reports);
    // The rescuer takes the run over once the zombie's lease ran out and, `t.held` being
    // at-most-once and left dispatching, leaves it for an operator rather than sending it again.
    let started = Instant::now();
    while !reports.lock().iter().any(|report| report.starts_with("rescuer: Left")) {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the rescuer never took the run: {:?}",
            reports.lock()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let observer = PostgresJournal::connect(&db.url, PostgresOptions::default()).expect("connects");
    let pool = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio");
    let before = pool.block_on(observer.read(&runs[0], 0, usize::MAX)).expect("reads").len();
    // The zombie's call answers now; its append is fenced off.
    counts.release.notify_waiters();
    std::thread::sleep(Duration::from_millis(500));
    let after = pool.block_on(observer.read(&runs[0], 0, usize::MAX)).expect("reads").len();
    assert_eq!(before, after, "the zombie's late result reached the journal");
    assert_eq!(counts.dispatches.lock().values().map(Vec::len).sum::<usize>(), 1, "dispatched once");
    let started = Instant::now();
    while !reports.lock().iter().any(|report| report.starts_with("zombie: Lost")) {
        assert!(started.elapsed() < Duration::from_secs(30), "the zombie went on: {:?}", reports.lock());
        std::thread::sleep(Duration::from_millis(50));
    }
    stop_zombie.cancel();
    stop_rescuer.cancel();
    zombie_thread.join().expect("zombie");
    rescuer_thread.join().expect("rescuer");
}

/// A run taken over more often than `max_recoveries` allows is parked as failed (`RL7306`)
/// instead of resumed once more: here the database says it was taken over 99 times already.
#[test]
fn a_run_taken_over_too_often_is_parked_as_failed() {
    let Some(db) = support::database("parked") else { return };
    let counts = Arc::new(Counting::default());
    let runs = submit_runs(&db.url, &counts, "return t.held_again(n)\n", 1);
    let reports = Reports::default();
    let (first, first_journal) = runtime(&db.url, "first", &counts, Duration::from_secs(10));
    let stop_first = CancellationToken::new();
    let first_thread = spawn_worker(first, first_journal, stop_first.clone(), &reports);
    let started = Instant::now();
    while counts.dispatches.lock().is_empty() {
        assert!(started.elapsed() < Duration::from_secs(30), "the run never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    // The first worker is gone as far as the journal knows, and the run has a long history.
    support::execute(&db.url, "UPDATE runlet.runs SET owner = NULL, recovery_attempts = 99");
    let (second, second_journal) = runtime(&db.url, "second", &counts, Duration::from_secs(10));
    let stop_second = CancellationToken::new();
    let second_thread = spawn_worker(second, second_journal, stop_second.clone(), &reports);
    while !reports.lock().iter().any(|report| report.starts_with("second: Parked")) {
        assert!(started.elapsed() < Duration::from_secs(30), "not parked: {:?}", reports.lock());
        std::thread::sleep(Duration::from_millis(20));
    }
    counts.release.notify_waiters();
    stop_first.cancel();
    stop_second.cancel();
    first_thread.join().expect("first");
    second_thread.join().expect("second");
    let observer = PostgresJournal::connect(&db.url, PostgresOptions::default()).expect("connects");
    let pool = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio");
    let listing = pool.block_on(runlet::runtime::run_listing(&observer, &runs[0])).expect("listing");
    assert_eq!(listing.status, RunStatus::Failed);
    let records = pool.block_on(observer.read(&runs[0], 0, usize::MAX)).expect("reads");
    let last =
        runlet::engine::event::Event::decode_record(records.last().expect("records")).expect("decodes");
    assert!(format!("{last:?}").contains("RL7306"), "{last:?}");
    assert_eq!(counts.dispatches.lock().values().map(Vec::len).sum::<usize>(), 1, "not sent again");
}
