//! The PostgreSQL journal when the database or the network misbehaves: an append whose
//! acknowledgement is lost after its COMMIT (a loopback proxy cuts the connection) is read back,
//! not appended twice; a database restart in the middle of a run is ridden out by backing off;
//! the LISTEN connection terminated while a run appends loses no wake-up and leaves no gap.

mod support;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use parking_lot::Mutex;
use runlet::analyze::Inputs;
use runlet::engine::{ToolCall, ToolError, ToolExecutor, ToolOutput};
use runlet::journal::{Bytes, Journal, Record, RunId};
use runlet::registry::{Registry, RegistryOptions};
use runlet::runtime::{RunOptions, RunStatus, Runtime, list_runs};
use runlet::value::Value;
use runlet_postgres::{Handled, PostgresJournal, PostgresOptions, Worker, WorkerOptions};
use tokio_util::sync::CancellationToken;

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio").block_on(future)
}

/// A loopback TCP proxy to `upstream` that, once armed, forwards the first client message
/// holding `marker` to the server and cuts the connection: the server's answer never reaches
/// the client, which cannot tell whether the statement committed.
struct Proxy {
    port: u16,
    armed: Arc<AtomicBool>,
    cuts: Arc<AtomicUsize>,
}

fn proxy(upstream: String, marker: &'static [u8]) -> Proxy {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
    let port = listener.local_addr().expect("an address").port();
    let (armed, cuts) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicUsize::new(0)));
    let (armed_in, cuts_in) = (Arc::clone(&armed), Arc::clone(&cuts));
    std::thread::spawn(move || {
        for client in listener.incoming().map_while(Result::ok) {
            let Ok(server) = TcpStream::connect(&upstream) else { continue };
            let cut = Arc::new(AtomicBool::new(false));
            let (client_out, server_out) =
                (client.try_clone().expect("clone"), server.try_clone().expect("clone"));
            let (armed, cuts, cut_up) = (Arc::clone(&armed_in), Arc::clone(&cuts_in), Arc::clone(&cut));
            // Client to server: the marked message goes through, then both ends are cut.
            std::thread::spawn(move || pump_up(client, server_out, marker, &armed, &cuts, &cut_up));
            // Server to client: nothing once the cut is decided.
            std::thread::spawn(move || pump_down(server, client_out, &cut));
        }
    });
    Proxy { port, armed, cuts }
}

fn pump_up(
    mut from: TcpStream,
    mut to: TcpStream,
    marker: &[u8],
    armed: &AtomicBool,
    cuts: &AtomicUsize,
    cut: &AtomicBool,
) {
    let mut buffer = vec![0u8; 64 << 10];
    while let Ok(read) = from.read(&mut buffer) {
        if read == 0 {
            break;
        }
        let chunk = &buffer[..read];
        let marked = chunk.windows(marker.len()).any(|window| window == marker);
        if marked && armed.swap(false, Ordering::SeqCst) {
            cut.store(true, Ordering::SeqCst);
            cuts.fetch_add(1, Ordering::SeqCst);
            let _ = to.write_all(chunk);
            std::thread::sleep(Duration::from_millis(300));
            let _ = from.shutdown(Shutdown::Both);
            let _ = to.shutdown(Shutdown::Both);
            return;
        }
        if to.write_all(chunk).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Both);
}

fn pump_down(mut from: TcpStream, mut to: TcpStream, cut: &AtomicBool) {
    let mut buffer = vec![0u8; 64 << 10];
    while let Ok(read) = from.read(&mut buffer) {
        if read == 0 || cut.load(Ordering::SeqCst) || to.write_all(&buffer[..read]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Both);
}

#[test]
fn an_append_whose_acknowledgement_is_lost_is_read_back_not_appended_twice() {
    let Some(db) = support::database("ambiguous") else { return };
    let (authority, name) = {
        let rest = db.url.split_once('@').expect("a user").1;
        let (authority, name) = rest.split_once('/').expect("a database");
        (authority.to_owned(), name.to_owned())
    };
    let proxy = proxy(authority, b"AMBIGUOUS-COMMIT");
    let url = format!("postgres://postgres@127.0.0.1:{}/{name}", proxy.port);
    let journal =
        PostgresJournal::connect(&url, PostgresOptions::default()).expect("connects through the proxy");
    let run = RunId::new("ambiguous");
    let record = |seq: u64, text: &str| Record { seq, bytes: Bytes::copy_from_slice(text.as_bytes()) };
    block_on(async {
        journal.create_run(&support::header("ambiguous")).await.expect("create");
        journal.append(&run, 0, &[record(1, "before")]).await.expect("append");
        proxy.armed.store(true, Ordering::SeqCst);
        let batch = [record(2, "AMBIGUOUS-COMMIT 2"), record(3, "AMBIGUOUS-COMMIT 3")];
        assert_eq!(journal.append(&run, 1, &batch).await.expect("settled by reading back"), 3);
        assert_eq!(proxy.cuts.load(Ordering::SeqCst), 1, "the proxy cut the acknowledgement");
        journal.append(&run, 3, &[record(4, "after")]).await.expect("the journal goes on");
        let stored = journal.read(&run, 0, 100).await.expect("reads");
        let texts: Vec<_> = stored.iter().map(|r| String::from_utf8_lossy(&r.bytes).into_owned()).collect();
        assert_eq!(texts, ["before", "AMBIGUOUS-COMMIT 2", "AMBIGUOUS-COMMIT 3", "after"]);
    });
}

const REGISTRY: &str = r#"{"prelude": "standard", "tools": [
    {"name": "t.step", "params": [{"name": "n", "schema": {"type": "integer"}}],
     "outputSchema": {"type": "integer"}, "execution": "at_most_once"}]}"#;

/// `t.step(n)` answers `n + 1` after `delay`, counting its dispatches.
struct Steps {
    delay: Duration,
    dispatches: Arc<Mutex<Vec<String>>>,
}

#[async_trait]
impl ToolExecutor for Steps {
    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        self.dispatches.lock().push(call.context.operation_id.to_string());
        tokio::time::sleep(self.delay).await;
        match call.arguments.iter().next() {
            Some(Value::Int(n)) => Ok(ToolOutput::new(Value::Int(n + 1))),
            other => Err(ToolError::new("BAD_ARGUMENT", format!("{other:?}"))),
        }
    }
}

fn runtime(
    url: &str,
    owner: &str,
    delay: Duration,
    dispatches: &Arc<Mutex<Vec<String>>>,
) -> (Arc<Runtime>, PostgresJournal) {
    let journal = PostgresJournal::connect(url, PostgresOptions::default()).expect("connects");
    let registry = Registry::from_json_str(REGISTRY, &RegistryOptions::default()).expect("registry").registry;
    let runtime = Runtime::builder()
        .registry(registry)
        .executor(Arc::new(Steps { delay, dispatches: Arc::clone(dispatches) }))
        .journal(Arc::new(journal.clone()) as Arc<dyn Journal>)
        .digest_key("faults", b"the key of these runs")
        .owner(owner)
        .worker_threads(1)
        .build()
        .expect("runtime");
    (Arc::new(runtime), journal)
}

/// Ten steps one after another, 10 + 10 = 20.
const CHAIN: &str = "return fold acc = 10 for n in list.range(0, 10) { return t.step(acc) }\n";

fn submit(url: &str, source: &str, dispatches: &Arc<Mutex<Vec<String>>>) -> RunId {
    let (submitter, _) = runtime(url, "submitter", Duration::ZERO, dispatches);
    let program = submitter.compile(source, &Inputs::new()).expect("compiles");
    submitter.submit(&program, &Inputs::new(), RunOptions::default()).expect("submits")
}

/// Runs a worker on its own thread until `stop`, collecting what it handled.
fn spawn_worker(
    runtime: Arc<Runtime>,
    journal: PostgresJournal,
    poll: Duration,
    stop: CancellationToken,
    handled: &Arc<Mutex<Vec<String>>>,
) -> std::thread::JoinHandle<()> {
    let handled = Arc::clone(handled);
    std::thread::spawn(move || {
        let options = WorkerOptions { poll, ..WorkerOptions::default() };
        let worker = Worker::new(Arc::clone(&runtime), journal, options);
        let report = |done: &Handled| handled.lock().push(format!("{done:?}"));
        runtime.handle().clone().block_on(worker.run(stop, report));
    })
}

fn wait_for(what: &str, within: Duration, done: impl Fn() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < within, "{what} did not happen within {within:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A server of this test's own, restarted while a worker is in the middle of a chain: the
/// worker's appends and heartbeats back off and go on, and every step is sent once.
#[test]
fn a_database_restart_in_the_middle_of_a_run_is_ridden_out() {
    if support::database("restart_probe").is_none() {
        return;
    }
    let server = support::Server::start("restart");
    let dispatches = Arc::new(Mutex::new(Vec::new()));
    let run = submit(&server.url, CHAIN, &dispatches);
    let (worker_runtime, journal) = runtime(&server.url, "worker", Duration::from_millis(150), &dispatches);
    let (stop, handled) = (CancellationToken::new(), Arc::new(Mutex::new(Vec::new())));
    let thread = spawn_worker(worker_runtime, journal, Duration::from_millis(100), stop.clone(), &handled);
    wait_for("three steps", Duration::from_secs(30), || dispatches.lock().len() >= 3);
    server.restart();
    wait_for("the run's end", Duration::from_secs(60), || !handled.lock().is_empty());
    stop.cancel();
    thread.join().expect("the worker");
    let handled = handled.lock();
    assert!(handled[0].contains("Ended") && handled[0].contains("succeeded"), "{handled:?}");
    let dispatches = dispatches.lock();
    assert_eq!(dispatches.len(), 10, "each step sent once: {dispatches:?}");
    let observer = PostgresJournal::connect(&server.url, PostgresOptions::default()).expect("connects");
    let records = block_on(observer.read(&run, 0, usize::MAX)).expect("reads without a gap");
    assert!(!records.is_empty());
}

/// The worker's LISTEN connection is terminated by the server while a run appends: the run
/// goes on without a gap, and a run submitted afterwards is picked up at once by the
/// notification on the connection opened again (the poll is a minute away).
#[test]
fn a_terminated_listen_connection_loses_no_wake_up_and_no_record() {
    let Some(db) = support::database("listener") else { return };
    let dispatches = Arc::new(Mutex::new(Vec::new()));
    let first = submit(&db.url, CHAIN, &dispatches);
    let (worker_runtime, journal) =
        runtime(&db.url, "listening-worker", Duration::from_millis(50), &dispatches);
    let (stop, handled) = (CancellationToken::new(), Arc::new(Mutex::new(Vec::new())));
    let thread = spawn_worker(worker_runtime, journal, Duration::from_secs(60), stop.clone(), &handled);
    // The first poll happens at once and claims the first run.
    wait_for("two steps", Duration::from_secs(30), || dispatches.lock().len() >= 2);
    support::execute(
        &db.url,
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query ILIKE 'LISTEN%' AND pid <> pg_backend_pid()",
    );
    wait_for("the first run's end", Duration::from_secs(30), || handled.lock().len() == 1);
    // Give the listener its reconnection, then submit: only a notification can wake the worker.
    std::thread::sleep(Duration::from_millis(500));
    let second = submit(&db.url, CHAIN, &dispatches);
    wait_for("the second run's end", Duration::from_secs(20), || handled.lock().len() == 2);
    stop.cancel();
    thread.join().expect("the worker");
    let observer = PostgresJournal::connect(&db.url, PostgresOptions::default()).expect("connects");
    let listed = block_on(list_runs(&observer)).expect("runs");
    assert!(listed.iter().all(|run| run.status == RunStatus::Succeeded), "{listed:?}");
    for run in [&first, &second] {
        block_on(observer.read(run, 0, usize::MAX)).expect("every record, in sequence");
    }
    assert_eq!(dispatches.lock().len(), 20, "each step of both runs sent once");
}
