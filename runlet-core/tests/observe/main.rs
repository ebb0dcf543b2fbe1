//! The observability API end to end: subscriptions opened mid-run or left lagging see every
//! event exactly once, snapshots rebuilt from the journal equal the live ones, journals the state
//! machine refuses are reported, large loops fold into iteration ranges, and secrets stay hidden.

mod closure;
mod redaction;

#[path = "../common/examples.rs"]
mod examples;

use std::sync::Arc;

use async_trait::async_trait;
use examples::{example, inputs, registry};
use runlet::analyze::Inputs;
use runlet::engine::event::Event;
use runlet::engine::{LimitKey, Limits, Outcome, ToolCall, ToolError, ToolExecutor, ToolOutput};
use runlet::journal::{Bytes, Journal, MemoryJournal, Record};
use runlet::observe::{
    BlockedOn, GraphEvent, GraphSnapshot, JournalFold, NodeKind, NodeState, SnapshotOptions, Subscription,
    ViewPolicy, events_from_journal, snapshot_from_journal,
};
use runlet::runtime::{RunOptions, Runtime, RuntimeBuilder};
use runlet::scripted::ScriptedExecutor;
use runlet::value::{Value, parse_json};
use tokio::sync::watch;

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio").block_on(future)
}

/// Every event of a subscription until it ends.
fn drain(mut subscription: Subscription) -> Vec<GraphEvent> {
    block_on(async move {
        let mut events = Vec::new();
        while let Some(event) = subscription.next().await {
            events.push(event.expect("the journal reads back"));
        }
        events
    })
}

fn seqs(events: &[GraphEvent]) -> Vec<u64> {
    events.iter().map(|e| e.seq).collect()
}

/// Holds every call until the gate opens.
struct Gated {
    inner: ScriptedExecutor,
    gate: watch::Receiver<bool>,
}

#[async_trait]
impl ToolExecutor for Gated {
    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        let mut gate = self.gate.clone();
        let _ = gate.wait_for(|open| *open).await;
        self.inner.dispatch(call).await
    }
}

struct AppendixA {
    runtime: Runtime,
    journal: Arc<MemoryJournal>,
    program: runlet::runtime::Executable,
    inputs: Inputs,
}

fn appendix_a(executor: impl FnOnce(ScriptedExecutor) -> Arc<dyn ToolExecutor>, buffer: usize) -> AppendixA {
    appendix_a_built(executor, |builder| builder.observer_buffer(buffer))
}

/// Appendix A on a runtime over a memory journal, its builder finished by `finish`.
fn appendix_a_built(
    executor: impl FnOnce(ScriptedExecutor) -> Arc<dyn ToolExecutor>,
    finish: impl FnOnce(RuntimeBuilder) -> RuntimeBuilder,
) -> AppendixA {
    let journal = Arc::new(MemoryJournal::new());
    let scripted = ScriptedExecutor::from_json_str(&example("appendix-a", "tools.json")).expect("fixtures");
    let builder = Runtime::builder()
        .registry(registry(&example("appendix-a", "registry.json")))
        .executor(executor(scripted))
        .journal(journal.clone());
    let runtime = finish(builder).build().expect("runtime");
    let inputs = inputs(&example("appendix-a", "inputs.json"));
    let program = runtime.compile(&example("appendix-a", "main.run"), &inputs).expect("compiles");
    AppendixA { runtime, journal, program, inputs }
}

#[test]
fn subscriptions_opened_mid_run_see_every_event_exactly_once() {
    let (open, gate) = watch::channel(false);
    let setup = appendix_a(|inner| Arc::new(Gated { inner, gate }), 1024);
    let mut run = setup.runtime.start(&setup.program, &setup.inputs).expect("starts");
    let observer = run.observer();
    while !matches!(run.events().blocking_recv(), Some((_, Event::CallDispatchPrepared { .. })) | None) {}
    let snapshot = observer.snapshot(&ViewPolicy::default());
    assert!(snapshot.seq > 0);
    assert!(snapshot.nodes.iter().any(|n| n.state == NodeState::Dispatching), "a call is in flight");
    let from_start = observer.subscribe(0, ViewPolicy::default());
    let from_snapshot = observer.subscribe(snapshot.seq, ViewPolicy::default());
    open.send_replace(true);
    let all = drain(from_start);
    let rest = drain(from_snapshot);
    assert!(matches!(run.wait().expect("journal"), Outcome::Succeeded(_)));
    let last = observer.seq();
    assert_eq!(seqs(&all), (1..=last).collect::<Vec<_>>(), "contiguous from 1, no duplicate");
    assert_eq!(seqs(&rest), (snapshot.seq + 1..=last).collect::<Vec<_>>(), "continues the snapshot");
    assert_eq!(all.last().map(|e| e.kind), Some("RunSucceeded"));
    assert!(all.iter().all(|e| e.at_ms.is_some()), "live events carry their publication time");
    let prepared = all.iter().find(|e| e.kind == "CallDispatchPrepared").expect("a dispatch");
    assert!(prepared.tool.is_some() && prepared.node.is_some());
}

#[test]
fn a_subscriber_that_falls_behind_catches_up_from_the_journal() {
    let setup = appendix_a(|inner| Arc::new(inner), 1);
    let run = setup.runtime.start(&setup.program, &setup.inputs).expect("starts");
    let observer = run.observer();
    let lagging = observer.subscribe(0, ViewPolicy::default());
    assert!(matches!(run.wait().expect("journal"), Outcome::Succeeded(_)));
    let events = drain(lagging);
    assert!(observer.seq() > 10);
    assert_eq!(seqs(&events), (1..=observer.seq()).collect::<Vec<_>>());
    let reconnected = drain(observer.subscribe(observer.seq() - 3, ViewPolicy::default()));
    assert_eq!(seqs(&reconnected), (observer.seq() - 2..=observer.seq()).collect::<Vec<_>>());
}

/// A journal that appends but has lost every record by the time anyone reads one back.
struct Forgetful(MemoryJournal);

#[async_trait]
impl Journal for Forgetful {
    async fn create_run(
        &self,
        header: &runlet::journal::RunHeader,
    ) -> Result<(), runlet::journal::JournalError> {
        self.0.create_run(header).await
    }
    async fn header(
        &self,
        run: &runlet::journal::RunId,
    ) -> Result<runlet::journal::RunHeader, runlet::journal::JournalError> {
        self.0.header(run).await
    }
    async fn append(
        &self,
        run: &runlet::journal::RunId,
        expected_seq: u64,
        records: &[Record],
    ) -> Result<u64, runlet::journal::JournalError> {
        self.0.append(run, expected_seq, records).await
    }
    async fn read(
        &self,
        _: &runlet::journal::RunId,
        _: u64,
        _: usize,
    ) -> Result<Vec<Record>, runlet::journal::JournalError> {
        Ok(Vec::new())
    }
    async fn load_snapshot(
        &self,
        run: &runlet::journal::RunId,
    ) -> Result<Option<runlet::journal::Snapshot>, runlet::journal::JournalError> {
        self.0.load_snapshot(run).await
    }
    async fn store_snapshot(
        &self,
        run: &runlet::journal::RunId,
        snapshot: runlet::journal::Snapshot,
    ) -> Result<(), runlet::journal::JournalError> {
        self.0.store_snapshot(run, snapshot).await
    }
}

#[test]
fn a_subscriber_whose_journal_lost_records_gets_an_error_not_a_gap() {
    let scripted = ScriptedExecutor::from_json_str(&example("appendix-a", "tools.json")).expect("fixtures");
    let runtime = Runtime::builder()
        .registry(registry(&example("appendix-a", "registry.json")))
        .executor(Arc::new(scripted))
        .journal(Arc::new(Forgetful(MemoryJournal::new())))
        .observer_buffer(1)
        .build()
        .expect("runtime");
    let inputs = inputs(&example("appendix-a", "inputs.json"));
    let program = runtime.compile(&example("appendix-a", "main.run"), &inputs).expect("compiles");
    let run = runtime.start(&program, &inputs).expect("starts");
    let mut lagging = run.observer().subscribe(0, ViewPolicy::default());
    assert!(matches!(run.wait().expect("journal"), Outcome::Succeeded(_)));
    let delivered: Vec<_> = block_on(async {
        let mut delivered = Vec::new();
        while let Some(event) = lagging.next().await {
            delivered.push(event);
        }
        delivered
    });
    let (last, error) = match delivered.as_slice() {
        [events @ .., Err(error)] => (events.len() as u64, error.clone()),
        other => panic!("the subscription ended without an error: {} events", other.len()),
    };
    assert!(delivered[..last as usize].iter().all(Result::is_ok));
    assert_eq!(error.code(), runlet::diag::codes::JOURNAL_INVALID_RECORD);
    assert!(error.to_string().contains(&format!("does not hold record {}", last + 1)), "{error}");
}

fn without_times(mut snapshot: GraphSnapshot) -> GraphSnapshot {
    for node in &mut snapshot.nodes {
        node.timestamps.planned_at_ms = None;
        node.timestamps.started_at_ms = None;
        node.timestamps.finished_at_ms = None;
    }
    snapshot
}

#[test]
fn the_snapshot_rebuilt_from_the_journal_equals_the_live_one() {
    let setup = appendix_a(|inner| Arc::new(inner), 1024);
    let run = setup.runtime.start(&setup.program, &setup.inputs).expect("starts");
    let run_id = run.run_id().clone();
    let held = run.observer();
    assert!(matches!(run.wait().expect("journal"), Outcome::Succeeded(_)));
    let view = ViewPolicy::everything();
    let observer = setup.runtime.observer(&run_id).expect("the runtime knows the run while it is observed");
    let live = observer.snapshot(&view);
    drop((held, observer));
    assert!(setup.runtime.observer(&run_id).is_none(), "nothing keeps an unobserved run's graph alive");
    let rebuilt = setup
        .runtime
        .journal_snapshot(&setup.program, &run_id, &view, &SnapshotOptions::default())
        .expect("journal reads");
    assert!(live.integrity_errors.is_empty(), "{:?}", live.integrity_errors);
    assert_eq!(without_times(rebuilt), without_times(live.clone()));
    assert!(live.nodes.iter().all(|n| n.state.is_terminal()), "a finished run leaves nothing pending");
    let kinds: Vec<NodeKind> = live.nodes.iter().map(|n| n.kind).collect();
    for kind in [NodeKind::Root, NodeKind::Call, NodeKind::Loop, NodeKind::Boundary, NodeKind::External] {
        assert!(kinds.contains(&kind), "{kind:?} missing from {kinds:?}");
    }
    assert!(
        live.not_materialized.iter().any(|r| r.arm == "catch"),
        "the unused catch block shows as not materialized"
    );
}

/// A runtime built without a live graph delivers the same events, tells the run's state and
/// says why its snapshots hold no nodes; the journal still gives the whole graph.
#[test]
fn a_runtime_without_a_live_graph_delivers_every_event_and_says_what_its_snapshots_lack() {
    let events_of = |live_graph: bool| {
        let setup = appendix_a_built(|inner| Arc::new(inner), |builder| builder.live_graph(live_graph));
        let (runtime, program) = (&setup.runtime, &setup.program);
        let mut run = runtime.start(program, &setup.inputs).expect("starts");
        let run_id = run.run_id().clone();
        let observer = run.observer();
        let mut events = Vec::new();
        while let Some((seq, event)) = run.events().blocking_recv() {
            events.push((seq, event.kind_number()));
        }
        assert!(matches!(run.wait().expect("journal"), Outcome::Succeeded(_)));
        let snapshot = observer.snapshot(&ViewPolicy::everything());
        let view = ViewPolicy::everything();
        let rebuilt = runtime.journal_snapshot(program, &run_id, &view, &SnapshotOptions::default());
        (events, snapshot, rebuilt.expect("journal reads"), observer.seq())
    };
    let (live_events, live, _, _) = events_of(true);
    let (events, snapshot, rebuilt, seq) = events_of(false);
    assert_eq!(events, live_events, "the same events, in order");
    assert_eq!(seq, live.seq);
    assert_eq!((snapshot.seq, &snapshot.run), (live.seq, &live.run), "the run's own state is told");
    assert!(snapshot.nodes.is_empty() && snapshot.edges.is_empty());
    assert_eq!(snapshot.integrity_errors.len(), 1);
    assert!(snapshot.integrity_errors[0].contains("live_graph(false)"), "{:?}", snapshot.integrity_errors);
    // Another run, so other node ids: the same nodes, in the same states.
    let nodes = |snapshot: &GraphSnapshot| -> Vec<_> {
        snapshot.nodes.iter().map(|n| (n.identity.syntax_path.clone(), n.kind, n.state)).collect()
    };
    assert!(!rebuilt.nodes.is_empty());
    assert_eq!(nodes(&rebuilt), nodes(&live), "the journal gives the whole graph");
}

/// Appendix A run to its end: the setup, the run's id and every record its journal holds.
fn appendix_a_journaled() -> (AppendixA, runlet::journal::RunId, Vec<Record>) {
    let setup = appendix_a(|inner| Arc::new(inner), 1024);
    let run = setup.runtime.start(&setup.program, &setup.inputs).expect("starts");
    let run_id = run.run_id().clone();
    assert!(matches!(run.wait().expect("journal"), Outcome::Succeeded(_)));
    let records = block_on(setup.journal.read(&run_id, 0, usize::MAX)).expect("read");
    (setup, run_id, records)
}

/// A fold that reads a journal as it grows, or in pages, reads each record once, gives the events
/// a reading from the start gives, split where the reads fell, and ends with the same graph.
#[test]
fn a_journal_fold_reads_on_from_where_it_got_to() {
    let (setup, run_id, records) = appendix_a_journaled();
    let (view, options) = (ViewPolicy::default(), SnapshotOptions::default());
    let context = || setup.program.graph_context(&run_id);
    let whole =
        block_on(events_from_journal(context(), setup.journal.as_ref(), &run_id, &view)).expect("reads");
    let growing = Arc::new(MemoryJournal::new());
    block_on(growing.create_run(&block_on(setup.journal.header(&run_id)).expect("header"))).expect("create");
    let mut fold = JournalFold::new(context());
    let mut read = Vec::new();
    let (mut appended, mut last_seqs) = (0, Vec::new());
    for upto in [0, 3, 3, records.len() / 2, records.len()] {
        block_on(growing.append(&run_id, appended as u64, &records[appended..upto])).expect("append");
        appended = upto;
        let events = block_on(fold.read_on(growing.as_ref(), &run_id, &view, usize::MAX)).expect("reads on");
        assert_eq!(events.len(), upto - read.len(), "only the records appended since the last read");
        read.extend(events);
        last_seqs.push(fold.last_seq());
    }
    // Read in pages of five records, the same fold gives the same events and ends in the same place.
    let mut paged = JournalFold::new(context());
    let mut pages = Vec::new();
    loop {
        let page = block_on(paged.read_on(setup.journal.as_ref(), &run_id, &view, 5)).expect("reads a page");
        assert!(page.len() <= 5, "{}", page.len());
        if page.is_empty() {
            break;
        }
        pages.extend(page);
    }
    assert_eq!(paged.last_seq(), records.len() as u64);
    let graphs = |events: &[GraphEvent]| serde_json::to_value(events).expect("JSON");
    // The growing journal appended the records later than the run did: the same events, at other times.
    let untimed = |events: &[GraphEvent]| {
        let events: Vec<GraphEvent> =
            events.iter().cloned().map(|event| GraphEvent { at_ms: None, unix_ms: None, ..event }).collect();
        graphs(&events)
    };
    assert_eq!(untimed(&read), untimed(&whole), "the same events as one reading from the start");
    assert_eq!(graphs(&pages), graphs(&whole), "the same events, and times, read in pages");
    assert_eq!(last_seqs, [0, 3, 3, (records.len() / 2) as u64, records.len() as u64]);
    let rebuilt =
        block_on(snapshot_from_journal(context(), setup.journal.as_ref(), &run_id, &view, &options))
            .expect("reads");
    let folded = without_times(fold.snapshot(&view, &options));
    assert_eq!(
        serde_json::to_value(&folded).expect("JSON"),
        serde_json::to_value(without_times(rebuilt)).expect("JSON")
    );
}

/// Events read back from a journal are timed by when their records were appended, from the
/// run's creation: the times the run published them, to the millisecond of each commit.
#[test]
fn events_read_from_a_journal_carry_the_times_of_their_appends() {
    let setup = appendix_a(|inner| Arc::new(inner), 1024);
    let run = setup.runtime.start(&setup.program, &setup.inputs).expect("starts");
    let run_id = run.run_id().clone();
    let observer = run.observer();
    assert!(matches!(run.wait().expect("journal"), Outcome::Succeeded(_)));
    let mut subscription = observer.subscribe(0, ViewPolicy::default());
    let mut live = Vec::new();
    while let Some(event) = block_on(subscription.next()) {
        live.push(event.expect("an event"));
    }
    let context = setup.program.graph_context(&run_id);
    let read =
        block_on(events_from_journal(context, setup.journal.as_ref(), &run_id, &ViewPolicy::default()))
            .expect("reads");
    assert_eq!(read.len(), live.len());
    let created =
        block_on(setup.journal.header(&run_id)).expect("header").retained.expect("retained").created_unix_ms;
    let appends = block_on(setup.journal.append_times(&run_id, 0, read.len() as u64)).expect("append times");
    assert!(appends.len() > 1, "the run appended in several commits: {appends:?}");
    for (read, live) in read.iter().zip(&live) {
        let (at_ms, unix_ms) = (read.at_ms.expect("a time"), read.unix_ms.expect("a time"));
        let append = appends.iter().find(|append| append.through_seq >= read.seq).expect("its append");
        assert_eq!((unix_ms, at_ms), (append.unix_ms, append.unix_ms - created), "{read:?}");
        // Published once committed, so never before its append, and within the test's run.
        let published = live.at_ms.expect("live events are timed");
        assert!(
            at_ms <= published + 1 && published < at_ms + 5_000,
            "appended {at_ms}, published {published}"
        );
    }
    assert!(read.windows(2).all(|pair| pair[0].at_ms <= pair[1].at_ms), "in order");
}

/// A subscriber catching up on a run longer than the publication times an observer keeps
/// (65,536) gets the older events timed by their appends, so every event has its time.
#[test]
fn a_subscriber_catching_up_past_the_kept_publication_times_gets_append_times() {
    const ITEMS: i64 = 9_000;
    let runtime = Runtime::builder()
        .registry(registry(LOOPS))
        .executor(Arc::new(Squares { count: ITEMS, fail_at: None }))
        .build()
        .expect("runtime");
    let source = "return for n in numbers() limit 64 {\n    return square(n)\n}\n";
    let program = runtime.compile(source, &Inputs::new()).expect("compiles");
    let run = runtime.start(&program, &Inputs::new()).expect("starts");
    let observer = run.observer();
    assert!(matches!(run.wait().expect("journal"), Outcome::Succeeded(_)));
    let events = drain(observer.subscribe(0, ViewPolicy::default()));
    assert!(events.len() > 65_536 + 1_000, "{} events", events.len());
    let untimed: Vec<u64> =
        events.iter().filter(|event| event.at_ms.is_none()).map(|event| event.seq).collect();
    assert!(untimed.is_empty(), "{} events without a time, from {:?}", untimed.len(), untimed.first());
    // In order, but for the millisecond the two clocks may round apart where the times kept
    // take over from the appends' (an append is timed before its commit, a publication after).
    let at_ms: Vec<u64> = events.iter().filter_map(|event| event.at_ms).collect();
    assert!(at_ms.windows(2).all(|pair| pair[0] <= pair[1] + 1), "in order");
    assert!(events.iter().all(|event| event.unix_ms.is_some()));
}

#[test]
fn a_journal_the_state_machine_refuses_is_reported_not_accepted() {
    let (setup, run_id, records) = appendix_a_journaled();
    let succeeded = records
        .iter()
        .find_map(|r| match Event::decode(&r.bytes) {
            Ok((_, Event::NodeSucceeded { node })) => Some(node),
            _ => None,
        })
        .expect("a node succeeded");
    let tampered = Arc::new(MemoryJournal::new());
    let header = block_on(setup.journal.header(&run_id)).expect("header");
    block_on(tampered.create_run(&header)).expect("create");
    let last = records.len() as u64;
    let extra = Event::NodeCancelled { node: succeeded.clone() }.encode(last + 1);
    let mut copied: Vec<Record> = records.clone();
    copied.push(Record { seq: last + 1, bytes: Bytes::from(extra) });
    block_on(tampered.append(&run_id, 0, &copied)).expect("append");
    let context = setup.program.graph_context(&run_id);
    let snapshot = block_on(snapshot_from_journal(
        context,
        tampered.as_ref(),
        &run_id,
        &ViewPolicy::default(),
        &SnapshotOptions::default(),
    ))
    .expect("reads");
    assert_eq!(snapshot.integrity_errors.len(), 1, "{:?}", snapshot.integrity_errors);
    assert!(
        snapshot.integrity_errors[0].contains("from succeeded to cancelled"),
        "{:?}",
        snapshot.integrity_errors
    );
    let node = snapshot.nodes.iter().find(|n| n.identity.local() == *succeeded).expect("node");
    assert_eq!(node.state, NodeState::Succeeded, "the refused move left the state alone");
}

const LOOPS: &str = r#"{"tools": [
    {"name": "numbers", "params": [], "outputSchema": {"type": "array", "items": {"type": "integer"}}, "execution": "pure"},
    {"name": "square", "params": [{"name": "n", "schema": {"type": "integer"}}], "outputSchema": {"type": "integer"}, "execution": "pure"}
]}"#;

/// Answers `numbers` with 0..count and `square(n)` with n², failing for `fail_at`.
struct Squares {
    count: i64,
    fail_at: Option<i64>,
}

#[async_trait]
impl ToolExecutor for Squares {
    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        match (call.tool.as_ref(), call.arguments.iter().next()) {
            ("numbers", _) => Ok(ToolOutput::new(
                parse_json(&format!(
                    "[{}]",
                    (0..self.count).map(|n| n.to_string()).collect::<Vec<_>>().join(",")
                ))
                .expect("JSON"),
            )),
            (_, Some(Value::Int(n))) if Some(*n) == self.fail_at => {
                Err(ToolError::new("NO_SQUARE", "refused"))
            }
            (_, Some(Value::Int(n))) => Ok(ToolOutput::new(Value::Int(n * n))),
            (_, other) => Err(ToolError::new("BAD_ARGUMENT", format!("{other:?}"))),
        }
    }
}

fn run_squares(count: i64, fail_at: Option<i64>) -> (runlet::observe::RunObserver, Outcome) {
    let runtime = Runtime::builder()
        .registry(registry(LOOPS))
        .executor(Arc::new(Squares { count, fail_at }))
        .build()
        .expect("runtime");
    let source = "squares = boundary {\n    return for n in numbers() limit 8 {\n        return square(n)\n    }\n} catch err {\n    return []\n}\nreturn squares\n";
    let program = runtime.compile(source, &Inputs::new()).expect("compiles");
    let run = runtime.start(&program, &Inputs::new()).expect("starts");
    let observer = run.observer();
    (observer, run.wait().expect("journal"))
}

#[test]
fn large_loops_fold_into_iteration_ranges_with_state_counts() {
    let (observer, outcome) = run_squares(100, None);
    assert!(matches!(outcome, Outcome::Succeeded(_)));
    let options = SnapshotOptions { iteration_detail_limit: 10 };
    let folded = observer.snapshot_with(&ViewPolicy::default(), &options);
    let full =
        observer.snapshot_with(&ViewPolicy::default(), &SnapshotOptions { iteration_detail_limit: 1000 });
    assert!(full.iteration_ranges.is_empty());
    assert_eq!(folded.iteration_ranges.len(), 1, "{:?}", folded.iteration_ranges);
    let range = &folded.iteration_ranges[0];
    assert_eq!((range.first, range.last, range.iterations), (1, 99, 99));
    assert_eq!(range.iteration_states.get(&NodeState::Succeeded), Some(&99));
    let folded_nodes: usize = range.node_states.values().sum();
    let body = |s: &GraphSnapshot| s.nodes.iter().filter(|n| n.kind != NodeKind::Iteration).count();
    assert_eq!(body(&folded) + folded_nodes, body(&full), "every node is shown or counted");
    let iterations = |s: &GraphSnapshot| s.nodes.iter().filter(|n| n.kind == NodeKind::Iteration).count();
    assert_eq!((iterations(&full), iterations(&folded)), (100, 1), "only the first iteration is spelled out");
    let first = folded.nodes.iter().find(|n| n.kind == NodeKind::Iteration).expect("iteration 0");
    assert_eq!((first.label.as_str(), first.state), ("iteration 0", NodeState::Succeeded));
    assert!(folded.edges.iter().any(|e| e.kind == runlet::observe::EdgeKind::Contains && e.from == first.id));
    let calls = folded.nodes.iter().filter(|n| n.kind == NodeKind::Call).count();
    assert_eq!(calls, 2, "`numbers` and the first iteration's `square` stay visible");
    let loop_node = folded.nodes.iter().find(|n| n.kind == NodeKind::Loop).expect("the loop");
    assert_eq!(loop_node.loop_info.as_ref().map(|l| l.items), Some(100));
    assert_eq!(range.loop_node, loop_node.id);
}

/// A 5,000-item loop through the whole runtime: the observer's records stay bounded by the loop's
/// limit, not its length, and what it shows adds up to every item.
#[test]
fn a_long_loop_keeps_the_observer_flat_and_counts_every_iteration() {
    const ITEMS: usize = 5_000;
    let journal = Arc::new(MemoryJournal::new());
    let runtime = Runtime::builder()
        .registry(registry(LOOPS))
        .executor(Arc::new(Squares { count: ITEMS as i64, fail_at: None }))
        .journal(journal.clone())
        .build()
        .expect("runtime");
    let source = "return for n in numbers() limit 16 {\n    return square(n)\n}\n";
    let program = runtime.compile(source, &Inputs::new()).expect("compiles");
    let mut run = runtime.start(&program, &Inputs::new()).expect("starts");
    let run_id = run.run_id().clone();
    let observer = run.observer();
    let (mut events, mut peak) = (0, 0);
    while let Some((_, event)) = run.events().blocking_recv() {
        events += 1;
        peak = peak.max(observer.retained_node_records());
        if matches!(event, Event::RunSucceeded) {
            break;
        }
    }
    assert!(matches!(run.wait().expect("journal"), Outcome::Succeeded(_)));
    assert!(events > 5 * ITEMS, "{events} events");
    assert!(peak <= 150, "at most about `limit` iterations are held, not {peak} records");
    assert!(
        observer.retained_node_records() <= 10,
        "{} records at the end",
        observer.retained_node_records()
    );
    let view = ViewPolicy::everything();
    let live = observer.snapshot(&view);
    assert!(live.integrity_errors.is_empty(), "{:?}", live.integrity_errors);
    let shown = live.nodes.iter().filter(|n| n.kind == NodeKind::Iteration).count();
    let ranged: usize = live.iteration_ranges.iter().map(|r| r.iterations).sum();
    assert_eq!((shown, ranged), (1, ITEMS - 1), "{:?}", live.iteration_ranges);
    let folded_nodes: usize = live.iteration_ranges.iter().flat_map(|r| r.node_states.values()).sum();
    assert_eq!(folded_nodes, 2 * (ITEMS - 1), "each iteration's call and its argument");
    let rebuilt = runtime
        .journal_snapshot(&program, &run_id, &view, &SnapshotOptions::default())
        .expect("journal reads");
    assert_eq!(without_times(rebuilt), without_times(live));
}

#[test]
fn a_failed_iteration_of_a_large_loop_stays_expanded() {
    let (observer, outcome) = run_squares(60, Some(41));
    assert!(matches!(outcome, Outcome::Succeeded(_)), "the catch block answers");
    let snapshot =
        observer.snapshot_with(&ViewPolicy::default(), &SnapshotOptions { iteration_detail_limit: 10 });
    assert!(snapshot.integrity_errors.is_empty(), "{:?}", snapshot.integrity_errors);
    let failed = snapshot
        .nodes
        .iter()
        .find(|n| n.state == NodeState::Failed && n.kind == NodeKind::Call)
        .expect("the failed call is shown");
    assert!(failed.identity.dynamic_key.starts_with("i41~"), "{}", failed.identity.dynamic_key);
    assert_eq!(failed.failure.as_ref().map(|f| f.code.as_str()), Some("NO_SQUARE"));
    assert!(!failed.failure.as_ref().is_some_and(|f| f.uncertain), "a known failure, not an uncertain one");
    assert!(snapshot.iteration_ranges.iter().all(|r| r.first > 41 || r.last < 41));
    assert!(
        snapshot.edges.iter().any(|e| e.kind == runlet::observe::EdgeKind::FallbackOf && e.from == failed.id)
    );
    let boundary = snapshot.nodes.iter().find(|n| n.kind == NodeKind::Boundary).expect("boundary");
    assert!(boundary.retry.as_ref().is_some_and(|r| r.catch_selected));
    let cancelled = snapshot.nodes.iter().filter(|n| n.cancellation.is_some()).count();
    let ranges_cancelled: usize = snapshot
        .iteration_ranges
        .iter()
        .map(|r| {
            r.node_states.get(&NodeState::Cancelled).copied().unwrap_or(0)
                + r.node_states.get(&NodeState::Pruned).copied().unwrap_or(0)
        })
        .sum();
    assert!(cancelled + ranges_cancelled > 0, "the loop's other running iterations were cancelled");
}

#[test]
fn a_call_waiting_for_permits_is_told_apart_from_one_waiting_for_data() {
    let (open, gate) = watch::channel(false);
    let setup = appendix_a(|inner| Arc::new(Gated { inner, gate }), 1024);
    let options =
        RunOptions { limits: Limits::new().with(LimitKey::Concurrency, 1), ..RunOptions::default() };
    let mut run = setup.runtime.start_with(&setup.program, &setup.inputs, options).expect("starts");
    let observer = run.observer();
    while !matches!(run.events().blocking_recv(), Some((_, Event::CallDispatchPrepared { .. })) | None) {}
    let permit_wait = BlockedOn::Permits { resources: vec![format!("run:{}", run.run_id().as_str())] };
    let calls_in_flight = |snapshot: &GraphSnapshot| {
        snapshot.nodes.iter().filter(|n| n.state == NodeState::Dispatching).count()
    };
    let waits = |snapshot: &GraphSnapshot| {
        snapshot.nodes.iter().filter(|n| n.blocked_on.as_ref() == Some(&permit_wait)).count()
    };
    // Appendix A's three lookups are ready together; the run's single permit lets one be
    // prepared and dispatched, and the shell reports the other two waiting for it.
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let snapshot = loop {
        let snapshot = observer.snapshot(&ViewPolicy::default());
        if waits(&snapshot) == 2 {
            break snapshot;
        }
        assert!(std::time::Instant::now() < give_up, "calls are not shown waiting for permits");
        std::thread::sleep(std::time::Duration::from_millis(1));
    };
    assert_eq!(calls_in_flight(&snapshot), 1, "only the call holding the permit is dispatched");
    let waiting_for_permits: Vec<_> =
        snapshot.nodes.iter().filter(|n| n.blocked_on.as_ref() == Some(&permit_wait)).collect();
    assert!(
        waiting_for_permits.iter().all(|n| n.state == NodeState::Ready && n.kind == NodeKind::Call),
        "a call waiting for its permit is ready, and nothing about its dispatch is journaled yet"
    );
    let prepared = block_on(setup.journal.read(run.run_id(), 0, usize::MAX))
        .expect("reads")
        .iter()
        .filter(|r| matches!(Event::decode(&r.bytes), Ok((_, Event::CallDispatchPrepared { .. }))))
        .count();
    assert_eq!(prepared, 1, "calls waiting for permits have no CallDispatchPrepared to be uncertain about");
    let waiting_for_data = snapshot
        .nodes
        .iter()
        .find(|n| n.state == NodeState::Blocked && n.kind == NodeKind::Call)
        .expect("a call waiting for another's output");
    match &waiting_for_data.blocked_on {
        Some(BlockedOn::Data { producers }) => assert!(!producers.is_empty()),
        other => panic!("expected data producers, got {other:?}"),
    }
    open.send_replace(true);
    assert!(matches!(run.wait().expect("journal"), Outcome::Succeeded(_)));
}

mod ordering {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]

        /// Whatever the queue size and wherever a subscriber starts, it sees every later record
        /// once, in order.
        #[test]
        fn every_subscription_is_contiguous(buffer in 1usize..8, items in 1i64..40, start in 0u64..60) {
            let runtime = Runtime::builder()
                .registry(registry(LOOPS))
                .executor(Arc::new(Squares { count: items, fail_at: None }))
                .observer_buffer(buffer)
                .build()
                .expect("runtime");
            let source = "return for n in numbers() limit 3 {\n    return square(n)\n}\n";
            let program = runtime.compile(source, &Inputs::new()).expect("compiles");
            let run = runtime.start(&program, &Inputs::new()).expect("starts");
            let observer = run.observer();
            let early = observer.subscribe(start, ViewPolicy::default());
            run.wait().expect("journal");
            let last = observer.seq();
            let expected: Vec<u64> = (start + 1..=last).collect();
            let snapshot = observer.snapshot(&ViewPolicy::default());
            prop_assert!(snapshot.integrity_errors.is_empty(), "{:?}", snapshot.integrity_errors);
            prop_assert_eq!(seqs(&drain(early)), expected.clone());
            prop_assert_eq!(seqs(&drain(observer.subscribe(start, ViewPolicy::default()))), expected);
        }
    }
}

const FLAKY: &str = r#"{"tools": [
    {"name": "seed", "params": [], "outputSchema": {"type": "integer"}, "execution": "pure"},
    {"name": "flaky", "params": [{"name": "n", "schema": {"type": "integer"}}], "outputSchema": {"type": "integer"}, "execution": "idempotent"}
]}"#;

/// `seed()` is 7; `flaky(n)` fails retryably the first time, then answers `n + 1`.
struct Flaky {
    calls: std::sync::atomic::AtomicUsize,
}

#[async_trait]
impl ToolExecutor for Flaky {
    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        match (call.tool.as_ref(), call.arguments.iter().next()) {
            ("seed", _) => Ok(ToolOutput::new(Value::Int(7))),
            (_, Some(Value::Int(n))) => {
                if self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                    Err(ToolError::retryable("BUSY", "try again"))
                } else {
                    Ok(ToolOutput::new(Value::Int(n + 1)))
                }
            }
            (_, other) => Err(ToolError::new("BAD_ARGUMENT", format!("{other:?}"))),
        }
    }
}

#[test]
fn a_retried_attempt_links_to_the_one_before_and_reuses_outer_work() {
    let runtime = Runtime::builder()
        .registry(registry(FLAKY))
        .executor(Arc::new(Flaky { calls: Default::default() }))
        .build()
        .expect("runtime");
    let source = "s = seed()\nr = boundary retry 1 {\n    t = seed()\n    return flaky(s + t)\n} catch err {\n    return 0\n}\nreturn r\n";
    let program = runtime.compile(source, &Inputs::new()).expect("compiles");
    let run = runtime.start(&program, &Inputs::new()).expect("starts");
    let observer = run.observer();
    assert!(matches!(run.wait().expect("journal"), Outcome::Succeeded(_)));
    let snapshot = observer.snapshot(&ViewPolicy::default());
    assert!(snapshot.integrity_errors.is_empty(), "{:?}", snapshot.integrity_errors);
    let calls: Vec<_> = snapshot.nodes.iter().filter(|n| n.label == "flaky").collect();
    assert_eq!(calls.len(), 2, "one call per attempt");
    let (first, second) = (calls[0], calls[1]);
    assert_eq!((first.attempt, first.state), (1, NodeState::Failed));
    assert_eq!((second.attempt, second.state), (2, NodeState::Succeeded));
    assert!(first.failure.as_ref().is_some_and(|f| f.retryable && !f.uncertain));
    use runlet::observe::EdgeKind;
    assert!(
        snapshot.edges.iter().any(|e| e.kind == EdgeKind::RetryOf && e.from == first.id && e.to == second.id),
        "the second attempt's call is a retry of the first's"
    );
    let inner: Vec<_> = snapshot.nodes.iter().filter(|n| n.label == "seed" && n.attempt > 0).collect();
    assert_eq!(inner.len(), 2, "the boundary's own seed call, once per attempt");
    assert_eq!(inner[0].reused_from, None, "the first attempt calls the tool");
    assert_eq!(inner[1].reused_from.as_deref(), Some(inner[0].id.as_str()), "the second reuses its result");
    assert_eq!(inner[1].state, NodeState::Succeeded);
    let seed = snapshot.nodes.iter().find(|n| n.label == "seed" && n.attempt == 0).expect("seed");
    let reads_seed: Vec<_> =
        snapshot.edges.iter().filter(|e| e.kind == EdgeKind::Data && e.from == seed.id).collect();
    assert!(reads_seed.iter().any(|e| e.reused), "the second attempt reuses the seed: {reads_seed:?}");
    assert!(reads_seed.iter().any(|e| !e.reused), "the first attempt reads it fresh: {reads_seed:?}");
    let boundary = snapshot.nodes.iter().find(|n| n.kind == NodeKind::Boundary).expect("boundary");
    let retry = boundary.retry.as_ref().expect("retry information");
    assert_eq!(
        (retry.attempt, retry.scheduled_attempts.as_slice(), retry.catch_selected),
        (2, &[2][..], false)
    );
    assert!(snapshot.not_materialized.iter().any(|r| r.arm == "catch"));
}
