//! The page server over real runs: the event stream resumes by sequence number without losing
//! or repeating a record, a client that does not read never holds a run up, a secret value
//! appears in no response, and a server shown run after run holds a bounded number of them.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use runlet::analyze::Inputs;
use runlet::engine::{Outcome, ToolCall, ToolError, ToolExecutor, ToolOutput};
use runlet::journal::{JournalError, JournalErrorKind, MemoryJournal, Record, Snapshot};
use runlet::observe::ViewPolicy;
use runlet::registry::{Registry, RegistryOptions};
use runlet::runtime::{RunHandle, Runtime};
use runlet::value::{Value, parse_json};
use runlet_web::{Catalog, FINISHED_LIVE_KEPT, OPENED_KEPT};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

const TOOLS: &str = r#"{"tools": [
    {"name": "numbers", "params": [], "outputSchema": {"type": "array", "items": {"type": "integer"}}, "execution": "pure"},
    {"name": "square", "params": [{"name": "n", "schema": {"type": "integer"}}], "outputSchema": {"type": "integer"}, "execution": "pure"},
    {"name": "vault.token", "params": [], "execution": "pure",
     "outputSchema": {"type": "string", "x-runlet-sensitivity": "secret"}},
    {"name": "quota.check", "params": [], "execution": "pure", "outputSchema": {"type": "integer"},
     "errors": [{"code": "OVER_QUOTA", "retryable": false, "description": "Ask an admin to raise the quota."}]}
]}"#;

const SECRET: &str = "hunter2-do-not-show";

const PROGRAM: &str = "token = vault.token()\nsquares = for n in numbers() limit 4 {\n    return square(n)\n}\nreturn { token, squares }\n";

/// `numbers` is 0..count, `square(n)` is n² after `delay`, `vault.token` the secret.
struct Tools {
    count: i64,
    delay: Duration,
}

#[async_trait]
impl ToolExecutor for Tools {
    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        match (call.tool.as_ref(), call.arguments.iter().next()) {
            ("numbers", _) => {
                let items: Vec<String> = (0..self.count).map(|n| n.to_string()).collect();
                Ok(ToolOutput::new(parse_json(&format!("[{}]", items.join(","))).expect("JSON")))
            }
            ("square", Some(Value::Int(n))) => {
                tokio::time::sleep(self.delay).await;
                Ok(ToolOutput::new(Value::Int(n * n)))
            }
            ("vault.token", _) => Ok(ToolOutput::new(Value::from(SECRET))),
            ("quota.check", _) => Err(ToolError::new("OVER_QUOTA", "the quota is spent")),
            (tool, other) => Err(ToolError::new("BAD_ARGUMENT", format!("{tool}: {other:?}"))),
        }
    }
}

fn runtime(count: i64, delay: Duration, observer_buffer: usize) -> (Runtime, Arc<MemoryJournal>) {
    let registry = Registry::from_json_str(TOOLS, &RegistryOptions::default()).expect("loads").registry;
    let journal = Arc::new(MemoryJournal::new());
    let runtime = Runtime::builder()
        .registry(registry)
        .executor(Arc::new(Tools { count, delay }))
        .journal(journal.clone())
        .observer_buffer(observer_buffer)
        .build()
        .expect("builds");
    (runtime, journal)
}

fn start(runtime: &Runtime) -> RunHandle {
    let program = runtime.compile(PROGRAM, &Inputs::new()).expect("compiles");
    runtime.start(&program, &Inputs::new()).expect("starts")
}

/// A server of `catalog` on a loopback port of the current runtime; its address.
async fn serve(catalog: Arc<Catalog>) -> String {
    let server = runlet_web::bind("127.0.0.1:0").await.expect("binds");
    let addr = server.local_addr().to_string();
    tokio::spawn(server.serve(catalog));
    addr
}

/// A server of an empty journal's catalog; its address.
async fn serve_empty() -> String {
    serve(Arc::new(Catalog::new(Some(Arc::new(MemoryJournal::new())), ViewPolicy::default()))).await
}

fn request(host: &str, path: &str, headers: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n{headers}\r\n")
}

/// The response to GET `path`, asked for as the page on `localhost` asks: its status line and
/// its body, de-chunked.
async fn get(addr: &str, path: &str, headers: &str) -> (String, String) {
    get_from(addr, "localhost", path, headers).await
}

/// The response to GET `path` with `Host: host`.
async fn get_from(addr: &str, host: &str, path: &str, headers: &str) -> (String, String) {
    let mut stream = TcpStream::connect(addr).await.expect("connects");
    stream.write_all(request(host, path, headers).as_bytes()).await.expect("writes");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.expect("reads");
    split_response(&raw)
}

fn split_response(raw: &[u8]) -> (String, String) {
    let text = String::from_utf8_lossy(raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").expect("a complete head");
    let status = head.lines().next().unwrap_or_default().to_owned();
    if head.to_ascii_lowercase().contains("transfer-encoding: chunked") {
        (status, dechunk(body).0)
    } else {
        (status, body.to_owned())
    }
}

/// The data of the complete chunks of `body`, and whether the last chunk was seen.
fn dechunk(mut body: &str) -> (String, bool) {
    let mut data = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else { break };
        if size == 0 {
            return (data, true);
        }
        if rest.len() < size + 2 {
            break;
        }
        data.push_str(&rest[..size]);
        body = &rest[size + 2..];
    }
    (data, false)
}

/// The `id`s of the `record` messages of an event stream's text, in order.
fn record_ids(stream: &str) -> Vec<u64> {
    stream
        .split("\n\n")
        .filter(|message| message.lines().any(|line| line == "event: record"))
        .filter_map(|message| message.lines().find_map(|line| line.strip_prefix("id: ")))
        .map(|id| id.parse().expect("a sequence number"))
        .collect()
}

fn multi_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("tokio")
}

#[test]
fn a_reconnect_resumes_after_the_last_record_without_losing_or_repeating_one() {
    let (runtime, journal) = runtime(12, Duration::from_millis(40), 1024);
    let run = start(&runtime);
    let catalog = Arc::new(Catalog::new(Some(journal), ViewPolicy::default()));
    catalog.add_live(run.observer(), PROGRAM);
    let id = run.run_id().to_string();
    let observer = run.observer();
    let pool = multi_thread();
    let (first, second, by_query) = pool.block_on(async {
        let addr = serve(Arc::clone(&catalog)).await;
        // The first connection reads some records mid-run, then drops.
        let mut stream = TcpStream::connect(&addr).await.expect("connects");
        let path = format!("/api/runs/{id}/events?after=0");
        stream.write_all(request("localhost", &path, "").as_bytes()).await.expect("writes");
        let mut raw = Vec::new();
        let first = loop {
            let mut buffer = [0; 4096];
            let read = stream.read(&mut buffer).await.expect("reads");
            assert!(read > 0, "the stream ended before the run did");
            raw.extend_from_slice(&buffer[..read]);
            let text = String::from_utf8_lossy(&raw).into_owned();
            if let Some((_, body)) = text.split_once("\r\n\r\n") {
                let ids = record_ids(&dechunk(body).0);
                if ids.len() >= 10 {
                    break ids;
                }
            }
        };
        drop(stream);
        let last = *first.last().expect("records");
        let resumed = format!("/api/runs/{id}/events");
        let (status, second) = get(&addr, &resumed, &format!("Last-Event-ID: {last}\r\n")).await;
        assert!(status.contains("200"), "{status}");
        let (_, by_query) = get(&addr, &format!("/api/runs/{id}/events?after={last}"), "").await;
        (first, record_ids(&second), record_ids(&by_query))
    });
    let outcome = run.wait().expect("journal works");
    assert!(matches!(outcome, Outcome::Succeeded(_)));
    let last = observer.seq();
    assert!(*first.last().expect("records") < last, "the first connection dropped mid-run");
    let mut all = first.clone();
    all.extend(&second);
    assert_eq!(all, (1..=last).collect::<Vec<_>>(), "every record once, in order");
    assert_eq!(by_query, second, "`?after=` resumes where `Last-Event-ID` does");
}

#[test]
fn a_client_that_does_not_read_never_holds_the_run_up_and_catches_up_afterwards() {
    // Small observer queues, a long run without delays, and a client whose socket buffer is
    // small and which reads nothing until the run has ended.
    let (runtime, journal) = runtime(3000, Duration::ZERO, 8);
    let run = start(&runtime);
    let catalog = Arc::new(Catalog::new(Some(journal), ViewPolicy::default()));
    catalog.add_live(run.observer(), PROGRAM);
    let id = run.run_id().to_string();
    let observer = run.observer();
    let pool = multi_thread();
    let mut stalled = pool.block_on(async {
        let addr = serve(Arc::clone(&catalog)).await;
        let socket = TcpSocket::new_v4().expect("socket");
        socket.set_recv_buffer_size(2048).expect("buffer size");
        let mut stream = socket.connect(addr.parse().expect("address")).await.expect("connects");
        stream
            .write_all(request("localhost", &format!("/api/runs/{id}/events"), "").as_bytes())
            .await
            .expect("writes");
        stream
    });
    let started = Instant::now();
    let outcome = run.wait().expect("journal works");
    assert!(matches!(outcome, Outcome::Succeeded(_)));
    assert!(started.elapsed() < Duration::from_secs(60), "the run took {:?}", started.elapsed());
    let last = observer.seq();
    let ids = pool.block_on(async {
        let mut raw = Vec::new();
        stalled.read_to_end(&mut raw).await.expect("reads");
        record_ids(&split_response(&raw).1)
    });
    assert_eq!(ids, (1..=last).collect::<Vec<_>>(), "the stalled client caught up from the journal");
}

#[test]
fn a_secret_output_is_in_no_response() {
    let (runtime, journal) = runtime(3, Duration::from_millis(10), 1024);
    let run = start(&runtime);
    let catalog = Arc::new(Catalog::new(Some(journal), ViewPolicy::default()));
    catalog.add_live(run.observer(), PROGRAM);
    let id = run.run_id().to_string();
    let pool = multi_thread();
    let bodies = pool.block_on(async {
        let addr = serve(Arc::clone(&catalog)).await;
        let stream = get(&addr, &format!("/api/runs/{id}/events"), "").await.1;
        let mut bodies = vec![stream];
        for path in ["/api/runs".to_owned(), format!("/api/runs/{id}"), format!("/runs/{id}")] {
            bodies.push(get(&addr, &path, "").await.1);
        }
        bodies
    });
    assert!(matches!(run.wait().expect("journal works"), Outcome::Succeeded(_)));
    assert!(bodies[0].contains("<redacted:secret>"), "the stream shows the value redacted");
    assert!(bodies[2].contains("<redacted:secret>"), "the snapshot shows the value redacted");
    for body in &bodies {
        assert!(!body.contains(SECRET), "{body}");
    }
}

#[test]
fn unknown_runs_and_bad_sequence_numbers_are_json_errors() {
    let pool = multi_thread();
    pool.block_on(async {
        let addr = serve_empty().await;
        let (status, body) = get(&addr, "/api/runs/r-missing", "").await;
        assert!(status.contains("404"), "{status}");
        assert!(body.contains(r#""code":"unknown_run""#), "{body}");
        // A signed number too: `+` arrives as a space.
        for after in ["soon", "+5", "%2B5", "-1"] {
            let (status, body) = get(&addr, &format!("/api/runs/r-missing/events?after={after}"), "").await;
            assert!(status.contains("400"), "{after}: {status}");
            assert!(body.contains(r#""code":"bad_request""#), "{after}: {body}");
        }
        let (status, _) = get(&addr, "/no/such/page", "").await;
        assert!(status.contains("404"), "{status}");
        // What the router itself refuses is a JSON error too: an id that is not UTF-8, a
        // parameter given twice, a method other than GET.
        for path in ["/api/runs/%ff", "/api/runs/%ff/events", "/api/runs/r-1?detail=1&detail=2"] {
            let (status, body) = get(&addr, path, "").await;
            assert!(status.contains("400"), "{path}: {status}");
            assert!(body.contains(r#""code":"bad_request""#), "{path}: {body}");
        }
        let mut stream = TcpStream::connect(&addr).await.expect("connects");
        stream
            .write_all(
                b"POST /api/runs HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
            )
            .await
            .expect("writes");
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).await.expect("reads");
        let (status, body) = split_response(&raw);
        assert!(
            status.contains("405") && body.contains(r#""code":"method_not_allowed""#),
            "{status}: {body}"
        );
        let taken = runlet_web::bind(&addr).await.expect_err("the address is taken");
        assert!(taken.to_string().contains("in use"), "{taken}");
    });
}

#[test]
fn a_loopback_server_answers_only_requests_for_a_loopback_host() {
    let pool = multi_thread();
    pool.block_on(async {
        let addr = serve_empty().await;
        // A page that pointed its own name at 127.0.0.1 (DNS rebinding) sends that name.
        for host in ["attacker.example", &format!("attacker.example:{}", addr.rsplit(':').next().unwrap())] {
            for path in ["/api/runs", "/runs", "/api/runs/r-1/events"] {
                let (status, body) = get_from(&addr, host, path, "").await;
                assert!(status.contains("403"), "{host} {path}: {status}");
                assert!(body.contains(r#""code":"host_not_allowed""#), "{body}");
            }
        }
        for host in ["localhost", addr.as_str(), "[::1]:1"] {
            let (status, body) = get_from(&addr, host, "/api/runs", "").await;
            assert!(status.contains("200") && body.contains(r#""runs":[]"#), "{host}: {status} {body}");
        }
    });
}

/// A connection that never finishes its request head, or never starts one, is closed once
/// `HEAD_READ_TIMEOUT` passes, instead of being held for ever; a complete request is answered.
#[test]
fn a_connection_that_never_finishes_a_request_is_closed() {
    let pool = multi_thread();
    pool.block_on(async {
        let addr = serve_empty().await;
        let mut partial = TcpStream::connect(&addr).await.expect("connects");
        partial.write_all(b"GET /api/runs HTTP/1.1\r\nHost: localhost\r\n").await.expect("writes");
        let mut idle = TcpStream::connect(&addr).await.expect("connects");
        let (status, _) = get(&addr, "/api/runs", "").await;
        assert!(status.contains("200"), "{status}");
        let bound = runlet_web::HEAD_READ_TIMEOUT * 6;
        for (what, stream) in [("a partial head", &mut partial), ("an idle connection", &mut idle)] {
            let mut rest = Vec::new();
            let closed = tokio::time::timeout(bound, stream.read_to_end(&mut rest)).await;
            assert!(closed.is_ok(), "{what} is still open after {bound:?}");
            assert!(!String::from_utf8_lossy(&rest).contains("200 OK"), "{what} got an answer");
        }
    });
}

/// The run's snapshot as the page first loads it (`/api/runs/{id}` plus `query`): the status
/// line, the body's size and the body.
async fn snapshot(addr: &str, id: &str, query: &str) -> (String, usize, serde_json::Value) {
    let (status, body) = get(addr, &format!("/api/runs/{id}{query}"), "").await;
    let parsed = serde_json::from_str(&body).unwrap_or(serde_json::Value::Null);
    (status, body.len(), parsed)
}

/// A run of more than 100,000 journaled events is drawn from a snapshot whose size does not grow
/// with the loop (finished iterations folded into ranges), and the stream from the snapshot's
/// seq sends no record again: the page never receives every node or every record.
#[test]
fn a_run_of_100000_journaled_events_is_drawn_from_a_bounded_snapshot() {
    let pool = multi_thread();
    let mut sizes = Vec::new();
    for count in [2_500, 25_000] {
        let (runtime, journal) = runtime(count, Duration::ZERO, 1024);
        let run = start(&runtime);
        let id = run.run_id().to_string();
        assert!(matches!(run.wait().expect("journal works"), Outcome::Succeeded(_)));
        // Shown from the journal, as `runlet serve` shows a finished run.
        let catalog = Arc::new(Catalog::new(Some(journal), ViewPolicy::default()));
        let (status, size, view, stream, whole) = pool.block_on(async {
            let addr = serve(catalog).await;
            let (status, size, view) = snapshot(&addr, &id, "").await;
            let seq = view["snapshot"]["seq"].as_u64().unwrap_or(0);
            let (_, stream) = get(&addr, &format!("/api/runs/{id}/events?after={seq}"), "").await;
            let whole = if count == 2_500 {
                get(&addr, &format!("/api/runs/{id}/events"), "").await.1
            } else {
                String::new()
            };
            (status, size, view, stream, whole)
        });
        assert!(status.contains("200"), "{status}");
        let seq = view["snapshot"]["seq"].as_u64().expect("a seq");
        if count == 2_500 {
            // The whole run from its start, read from the journal a page at a time.
            assert!(seq > 10_000, "the run journaled {seq} events");
            assert_eq!(record_ids(&whole), (1..=seq).collect::<Vec<_>>(), "every record once, in order");
            assert_eq!(whole.matches("event: end").count(), 1, "one end");
            let last_graph = whole.rsplit("event: graph").next().expect("a graph");
            assert!(last_graph.contains(&format!(r#""seq":{seq}"#)), "the last graph is the whole run's");
        }
        if count == 25_000 {
            assert!(seq > 100_000, "the run journaled {seq} events");
        }
        let ranges = view["snapshot"]["iteration_ranges"].as_array().expect("ranges");
        let folded: u64 = ranges.iter().filter_map(|range| range["iterations"].as_u64()).sum();
        assert!(folded + 32 >= count as u64, "the loop is folded into ranges: {ranges:?}");
        assert!(record_ids(&stream).is_empty(), "the stream after the snapshot repeats no record");
        assert!(stream.contains("event: end"), "{stream}");
        sizes.push(size);
    }
    // Ten times the loop; the snapshot grows only by the loop's result (its 22,500 more
    // squares in the run's output value), not by nodes.
    assert!(sizes[1] < sizes[0] + 250_000, "snapshot bytes for 2,500 and 25,000 iterations: {sizes:?}");
}

/// `?detail=N` draws a loop of up to N items in full, on the snapshot and on the stream's
/// `graph` messages; more than the observer keeps is refused.
#[test]
fn detail_draws_a_loop_in_full_up_to_what_the_observer_keeps() {
    let (runtime, journal) = runtime(100, Duration::ZERO, 1024);
    let run = start(&runtime);
    let id = run.run_id().to_string();
    let catalog = Arc::new(Catalog::new(Some(journal), ViewPolicy::default()));
    catalog.add_live(run.observer(), PROGRAM);
    assert!(matches!(run.wait().expect("journal works"), Outcome::Succeeded(_)));
    let pool = multi_thread();
    let (folded, full, stream, refused) = pool.block_on(async {
        let addr = serve(catalog).await;
        let folded = snapshot(&addr, &id, "").await.2;
        let full = snapshot(&addr, &id, "?detail=1024").await.2;
        let stream = get(&addr, &format!("/api/runs/{id}/events?detail=1024"), "").await.1;
        let refused = snapshot(&addr, &id, "?detail=1025").await;
        (folded, full, stream, refused)
    });
    let nodes = |view: &serde_json::Value| view["snapshot"]["nodes"].as_array().map_or(0, Vec::len);
    let ranges =
        |view: &serde_json::Value| view["snapshot"]["iteration_ranges"].as_array().map_or(0, Vec::len);
    assert!(ranges(&folded) > 0, "100 items fold by default");
    assert_eq!(ranges(&full), 0, "with ?detail=1024 no iteration is folded");
    assert!(
        nodes(&full) >= nodes(&folded) + 99,
        "every iteration drawn: {} against {}",
        nodes(&full),
        nodes(&folded)
    );
    let last_graph =
        stream.split("\n\n").filter(|message| message.contains("event: graph")).last().expect("a graph");
    let data = last_graph.lines().find_map(|line| line.strip_prefix("data: ")).expect("data");
    let graph: serde_json::Value = serde_json::from_str(data).expect("JSON");
    assert_eq!(
        graph["snapshot"]["iteration_ranges"].as_array().map_or(1, Vec::len),
        0,
        "the stream's graph too"
    );
    assert!(refused.0.contains("400"), "{}", refused.0);
    assert_eq!(refused.2["error"]["code"], "bad_request");
}

/// A failure's view carries the tool's remediation text: its registry entry's description of
/// the declared error.
#[test]
fn a_failure_view_carries_the_tools_remediation_text() {
    let (runtime, journal) = runtime(1, Duration::ZERO, 1024);
    let program = runtime.compile("return quota.check()\n", &Inputs::new()).expect("compiles");
    let run = runtime.start(&program, &Inputs::new()).expect("starts");
    let id = run.run_id().to_string();
    assert!(matches!(run.wait().expect("journal works"), Outcome::Failed(_)));
    let catalog = Arc::new(Catalog::new(Some(journal), ViewPolicy::default()));
    let view = multi_thread().block_on(async {
        let addr = serve(catalog).await;
        snapshot(&addr, &id, "").await.2
    });
    let failures = view["failures"].as_array().expect("failure views");
    let call = failures.iter().find(|failure| failure["tool"] == "quota.check").expect("the call's failure");
    assert_eq!(call["code"], "OVER_QUOTA");
    assert_eq!(call["remediation"], "Ask an admin to raise the quota.");
}

/// A catalog shown run after run (a long-lived host's page server) keeps only the latest
/// finished ones live and the journal runs watched most recently opened; a run it let go of
/// is drawn from the journal again, the same as before, live or not.
#[test]
fn a_catalog_holds_a_bounded_number_of_runs_and_reopens_the_rest_from_the_journal() {
    let (slow, _) = runtime(3, Duration::from_secs(600), 1024);
    let (runtime, journal) = runtime(3, Duration::ZERO, 1024);
    let catalog = Arc::new(Catalog::new(Some(journal), ViewPolicy::default()));
    let unfinished = start(&slow);
    catalog.add_live(unfinished.observer(), PROGRAM);
    let mut ids = Vec::new();
    let let_go = OPENED_KEPT + 8;
    for _ in 0..FINISHED_LIVE_KEPT + let_go {
        let run = start(&runtime);
        let (id, observer) = (run.run_id().to_string(), run.observer());
        assert!(matches!(run.wait().expect("journal works"), Outcome::Succeeded(_)));
        ids.push(id);
        catalog.add_live(observer, PROGRAM);
    }
    assert_eq!(catalog.held(), (FINISHED_LIVE_KEPT + 1, 0), "the unfinished run and the latest finished");
    let pool = multi_thread();
    let (oldest, newest, reopened) = pool.block_on(async {
        let addr = serve(Arc::clone(&catalog)).await;
        let oldest = snapshot(&addr, &ids[0], "").await.2;
        let newest = snapshot(&addr, ids.last().expect("runs"), "").await.2;
        for id in &ids[..let_go] {
            let (status, ..) = snapshot(&addr, id, "").await;
            assert!(status.contains("200"), "{id}: {status}");
        }
        (oldest, newest, snapshot(&addr, &ids[0], "").await.2)
    });
    assert_eq!(catalog.held(), (FINISHED_LIVE_KEPT + 1, OPENED_KEPT));
    assert_eq!(oldest["live"], false, "the oldest finished run was let go and opened from the journal");
    assert_eq!(newest["live"], true);
    let nodes = |view: &serde_json::Value| view["snapshot"]["nodes"].as_array().map_or(0, Vec::len);
    assert!(
        nodes(&oldest) > 0 && nodes(&oldest) == nodes(&newest),
        "{} against {}",
        nodes(&oldest),
        nodes(&newest)
    );
    assert_eq!(reopened["snapshot"], oldest["snapshot"], "opened again after it was dropped, the same");
    unfinished.cancel();
}

/// A run this server does not follow live (as far as it knows, another process's) is streamed
/// from its journal as the run grows: every record once and in order, the graph redrawn as
/// records arrive, the last graph the whole run's, then `end`.
#[test]
fn a_journal_run_is_streamed_as_it_grows_each_record_once() {
    let (runtime, journal) = runtime(12, Duration::from_millis(400), 1024);
    let run = start(&runtime);
    let id = run.run_id().to_string();
    let observer = run.observer();
    let catalog = Arc::new(Catalog::new(Some(journal), ViewPolicy::default()));
    let stream = multi_thread().block_on(async {
        let addr = serve(catalog).await;
        get(&addr, &format!("/api/runs/{id}/events"), "").await.1
    });
    assert!(matches!(run.wait().expect("journal works"), Outcome::Succeeded(_)));
    assert_eq!(record_ids(&stream), (1..=observer.seq()).collect::<Vec<_>>(), "every record once, in order");
    let graphs: Vec<serde_json::Value> = stream
        .split("\n\n")
        .filter(|message| message.contains("event: graph"))
        .filter_map(|message| message.lines().find_map(|line| line.strip_prefix("data: ")))
        .map(|data| serde_json::from_str(data).expect("JSON"))
        .collect();
    assert!(graphs.len() >= 2, "the graph is redrawn as the run grows: {} graphs", graphs.len());
    assert_eq!(graphs.last().expect("a graph")["snapshot"]["seq"], observer.seq());
    assert!(stream.trim_end().ends_with("data: {}") && stream.contains("event: end"), "{stream}");
}

/// A journal that fails every read, as a damaged or vanished file does.
struct Unreadable;

#[async_trait]
impl runlet::journal::Journal for Unreadable {
    async fn create_run(&self, _: &runlet::journal::RunHeader) -> Result<(), JournalError> {
        Err(broken())
    }
    async fn header(&self, _: &runlet::journal::RunId) -> Result<runlet::journal::RunHeader, JournalError> {
        Err(broken())
    }
    async fn append(&self, _: &runlet::journal::RunId, _: u64, _: &[Record]) -> Result<u64, JournalError> {
        Err(broken())
    }
    async fn read(&self, _: &runlet::journal::RunId, _: u64, _: usize) -> Result<Vec<Record>, JournalError> {
        Err(broken())
    }
    async fn load_snapshot(&self, _: &runlet::journal::RunId) -> Result<Option<Snapshot>, JournalError> {
        Err(broken())
    }
    async fn store_snapshot(&self, _: &runlet::journal::RunId, _: Snapshot) -> Result<(), JournalError> {
        Err(broken())
    }
}

fn broken() -> JournalError {
    JournalError::new(JournalErrorKind::Storage, "database disk image is malformed")
}

/// A journal that cannot be read is the journal's error (500, `journal`), not an unknown run.
#[test]
fn a_journal_that_cannot_be_read_is_a_journal_error_not_an_unknown_run() {
    let catalog = Arc::new(Catalog::new(Some(Arc::new(Unreadable)), ViewPolicy::default()));
    let (status, view) = multi_thread().block_on(async {
        let addr = serve(catalog).await;
        let (status, _, view) = snapshot(&addr, "r-1", "").await;
        (status, view)
    });
    assert!(status.contains("500"), "{status}");
    assert_eq!(view["error"]["code"], "journal", "{view}");
    assert!(view["error"]["message"].as_str().is_some_and(|m| m.contains("malformed")), "{view}");
}
