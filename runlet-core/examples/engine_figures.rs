//! The engine figures of BENCHMARKS.md that criterion cannot take: memory per node (a counting
//! global allocator), loop growth and RSS per input length, tail latency of one call, and the
//! cost of a whole run of one call by the size of the registry.
//!
//! `cargo run --release -p runlet-core --example engine_figures [a] [a-no-graph] [b] [c] [c-runtime]
//! [d] [d-fixed] [e]` prints the named figures (all without arguments; `a-no-graph` is (a) with
//! `RuntimeBuilder::live_graph(false)`, `d-fixed` is (d) without its tool's sleep). It is an
//! example rather than a bench or a bin so that its global allocator counts only this process,
//! it builds with the workspace's own checks, and the library ships no extra binary. The loop
//! figures re-run this binary once per input length (`loop N`, `runtime-loop N`), so each RSS
//! peak is its own.

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use runlet::analyze::Inputs;
use runlet::engine::{
    CallHandle, Effect, Input, Outcome, RunCore, ToolCall, ToolCapabilities, ToolError, ToolExecutor,
    ToolOutput,
};
use runlet::journal::{Journal, JournalError, JournalErrorKind, Record, RunHeader, RunId, Snapshot};
use runlet::registry::{Registry, RegistryOptions};
use runlet::runtime::{Executable, RunOptions, Runtime, RuntimeBuilder};
use runlet::value::{Labelled, List, Value};

/// Counts the bytes currently allocated through it, and every allocation made, while
/// [`COUNTING`] is on.
struct CountingAllocator;

static LIVE_BYTES: AtomicUsize = AtomicUsize::new(0);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
/// Off while a figure is timed: two threads adding to the same counters on every allocation
/// cost a fifth of figure (a)'s time. Live bytes drift while it is off, so the figures that
/// read them take differences (or run in a process of their own).
static COUNTING: AtomicBool = AtomicBool::new(true);

// SAFETY: every method forwards to `System` with the caller's arguments and only adds counting.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            LIVE_BYTES.fetch_add(layout.size(), Ordering::Relaxed);
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: forwarded unchanged; the caller upholds `alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if COUNTING.load(Ordering::Relaxed) {
            LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        // SAFETY: forwarded unchanged; the caller upholds `dealloc`'s contract.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            LIVE_BYTES.fetch_add(new_size, Ordering::Relaxed);
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
            LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        // SAFETY: forwarded unchanged; the caller upholds `realloc`'s contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

const REGISTRY: &str = r#"{"tools": [
    {"name": "numbers", "params": [], "outputSchema": {"type": "array", "items": {"type": "integer"}}, "execution": "pure"},
    {"name": "rows", "params": [], "outputSchema": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}}, "execution": "pure"},
    {"name": "noop", "params": [{"name": "n", "schema": {"type": "integer"}}], "outputSchema": {"type": "integer"}, "execution": "pure"},
    {"name": "sleepy", "params": [{"name": "n", "schema": {"type": "integer"}}], "outputSchema": {"type": "integer"}, "execution": "pure"}
]}"#;

fn registry() -> Registry {
    Registry::from_json_str(REGISTRY, &RegistryOptions::default()).expect("registry").registry
}

fn loop_source(limit: usize) -> String {
    format!("return for n in numbers() limit {limit} {{\n    return noop(n)\n}}\n")
}

fn numbers(count: usize) -> Value {
    let count = i64::try_from(count).expect("count fits i64");
    List::new((0..count).map(Value::Int).collect()).expect("a flat list").into()
}

/// How long the last `sleepy` call took inside its executor, in nanoseconds.
static SLEPT_NANOS: AtomicU64 = AtomicU64::new(0);

/// Answers `numbers` with 0..count, `noop` with its argument and `sleepy` after 1 ms; in-process
/// tools that never block, so the engine polls them on the run's task first.
struct Tools {
    count: usize,
}

#[async_trait]
impl ToolExecutor for Tools {
    fn capabilities(&self, _tool: &str) -> ToolCapabilities {
        ToolCapabilities { answers_inline: true, ..ToolCapabilities::default() }
    }

    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        let argument = call.arguments.iter().next().cloned().unwrap_or(Value::Null);
        Ok(ToolOutput::new(match call.tool.as_ref() {
            "numbers" => numbers(self.count),
            "sleepy" => {
                let started = Instant::now();
                tokio::time::sleep(Duration::from_millis(1)).await;
                SLEPT_NANOS.store(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
                argument
            }
            _ => argument,
        }))
    }
}

fn runtime(count: usize) -> Runtime {
    runtime_over(registry(), count)
}

/// A runtime of 2 worker threads over `registry` whose tools are [`Tools`] answering `numbers`
/// with 0..count.
fn runtime_over(registry: Registry, count: usize) -> Runtime {
    builder_over(registry, count).build().expect("runtime")
}

fn builder_over(registry: Registry, count: usize) -> RuntimeBuilder {
    Runtime::builder().registry(registry).executor(Arc::new(Tools { count })).worker_threads(2)
}

fn median(samples: &mut [f64]) -> f64 {
    percentile(samples, 50.0)
}

fn percentile(samples: &mut [f64], percent: f64) -> f64 {
    samples.sort_by(f64::total_cmp);
    let rank = ((percent / 100.0) * (samples.len() - 1) as f64).round() as usize;
    samples[rank]
}

/// (a) No-op calls through the whole runtime with the in-memory journal, against a bare
/// `tokio::spawn` of the same no-op on a pool of the same size; `live_graph`: whether the run's
/// observer folds a graph (the default) or, as `RuntimeBuilder::live_graph(false)`, does not.
fn throughput(live_graph: bool) {
    const CALLS: usize = 1_000;
    const RUNS: usize = 60;
    let runtime = builder_over(registry(), CALLS).live_graph(live_graph).build().expect("runtime");
    let program = runtime.compile(&loop_source(64), &Inputs::new()).expect("compiles");
    let run_once = || {
        let mut run = runtime.start(&program, &Inputs::new()).expect("starts");
        let mut received = 0;
        while let Some((_, event)) = run.events().blocking_recv() {
            received += 1;
            if matches!(event, runlet::engine::event::Event::RunSucceeded) {
                break;
            }
        }
        assert!(matches!(run.wait().expect("journal"), Outcome::Succeeded(_)));
        received
    };
    // The allocations are counted in one run of their own after a first, the timed runs
    // uncounted.
    run_once();
    let allocations_before = ALLOCATIONS.load(Ordering::Relaxed);
    let events = run_once();
    let allocations = (ALLOCATIONS.load(Ordering::Relaxed) - allocations_before) as f64 / CALLS as f64;
    COUNTING.store(false, Ordering::Relaxed);
    let mut seconds: Vec<f64> = (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            run_once();
            started.elapsed().as_secs_f64()
        })
        .collect();
    let engine = median(&mut seconds);
    let pool =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("pool");
    let mut baseline: Vec<f64> = (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            pool.block_on(async {
                let tasks: Vec<_> =
                    (0..CALLS).map(|n| tokio::spawn(async move { Value::Int(n as i64) })).collect();
                for task in tasks {
                    task.await.expect("task");
                }
            });
            started.elapsed().as_secs_f64()
        })
        .collect();
    let baseline = median(&mut baseline);
    COUNTING.store(true, Ordering::Relaxed);
    let graph = if live_graph { "live graph" } else { "no live graph" };
    println!(
        "(a) {CALLS} no-op calls per run, for … limit 64, in-memory journal, {graph}, 2 worker threads, median of {RUNS} runs"
    );
    println!(
        "    run: {:.3} ms; {events} journal events per run; {allocations:.1} heap allocations per call",
        engine * 1e3
    );
    println!(
        "    calls/s: {:.0} ({:.2} µs per call); transitions (journal events)/s: {:.0}",
        CALLS as f64 / engine,
        engine * 1e6 / CALLS as f64,
        events as f64 / engine
    );
    println!(
        "    baseline {CALLS} tokio::spawn no-ops: {:.3} ms ({:.0} tasks/s); engine/baseline time ratio {:.1}",
        baseline * 1e3,
        CALLS as f64 / baseline,
        engine / baseline
    );
}

/// A fresh run core of `source`.
fn core_of(source: &str) -> RunCore {
    let runtime = runtime(0);
    let program: Executable = runtime.compile(source, &Inputs::new()).expect("compiles");
    runtime.core(&program, &RunOptions::default())
}

/// The effects of `input` and of every `Continue` its reactions ask for, in order: a reaction
/// that starts a wide loop yields to its shell after `EVALUATIONS_PER_REACTION` nodes.
fn react_fully(core: &mut RunCore, input: Input) -> Vec<Effect> {
    let mut effects = core.react(input);
    while matches!(effects.last(), Some(Effect::Yield)) {
        effects.pop();
        effects.extend(core.react(Input::Continue));
    }
    effects
}

/// Keeps only what answering a dispatch needs: its handle and its (Integer) argument.
fn take_dispatches(effects: Vec<Effect>, pending: &mut VecDeque<(CallHandle, Value)>) -> Option<Outcome> {
    let mut outcome = None;
    for effect in effects {
        match effect {
            Effect::Dispatch(request) => {
                let argument = request.arguments.iter().next().cloned().unwrap_or(Value::Null);
                pending.push_back((request.call, argument));
            }
            Effect::Finish(end) => outcome = Some(end),
            Effect::Append(_)
            | Effect::Cancel(_)
            | Effect::StartTimer { .. }
            | Effect::CancelTimer(_)
            | Effect::AwaitPermits { .. }
            | Effect::EnterScope { .. }
            | Effect::Yield => {}
            Effect::Sample(request) => panic!("the figures programs sample nothing: {}", request.node_id),
        }
    }
    outcome
}

/// (b) Live heap bytes per materialized node: a `for … limit 16` over 100,000 items, driven
/// until 100,000 nodes beyond those before the list arrived exist (finished ones included, since
/// the core keeps them), measured against the heap right before the list arrived.
fn bytes_per_node() {
    const ROWS: usize = 100;
    const PER_ROW: usize = 1_000;
    // Both limits as large as their lists, so all 100,000 inner iterations start at once; no
    // call is answered, so every materialized node is still held when the heap is read.
    let source = format!(
        "return for row in rows() limit {ROWS} {{\n    return for n in row limit {PER_ROW} {{\n        return noop(n)\n    }}\n}}\n"
    );
    let mut core = core_of(&source);
    let mut pending = VecDeque::with_capacity(ROWS * PER_ROW);
    take_dispatches(react_fully(&mut core, Input::Start { inputs: Vec::new() }), &mut pending);
    let (rows_call, _) = pending.pop_front().expect("the rows call");
    let rows: Vec<Value> = (0..ROWS).map(|_| numbers(PER_ROW)).collect();
    let rows = Labelled::public(List::new(rows).expect("a list of rows").into());
    let held_before = core.held_nodes();
    let before = LIVE_BYTES.load(Ordering::Relaxed);
    take_dispatches(
        react_fully(&mut core, Input::ToolCompleted { call: rows_call, value: rows }),
        &mut pending,
    );
    let after = LIVE_BYTES.load(Ordering::Relaxed);
    let held = core.held_nodes() - held_before;
    let bytes = after.wrapping_sub(before);
    println!(
        "(b) {ROWS} rows × {PER_ROW} items, every iteration started: {} calls dispatched and unanswered, {held} more nodes held",
        pending.len()
    );
    println!(
        "    live heap growth {bytes} B: {:.0} B per held node; the rows' values moved in with the answer, {} B, are part of it",
        bytes as f64 / held as f64,
        ROWS * PER_ROW * std::mem::size_of::<Value>(),
    );
    drop(core);
}

/// Peak resident set size of this process, from `/proc/self/status`.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// (c), one input length: drives a `for … limit 16` over `count` items to its end, answering every
/// call at once, sampling live and materialized nodes about 200 times.
fn loop_growth(count: usize) {
    let mut core = core_of(&loop_source(16));
    let mut pending = VecDeque::new();
    let started = Instant::now();
    let mut outcome =
        take_dispatches(react_fully(&mut core, Input::Start { inputs: Vec::new() }), &mut pending);
    let (numbers_call, _) = pending.pop_front().expect("the numbers call");
    let effects = react_fully(
        &mut core,
        Input::ToolCompleted { call: numbers_call, value: Labelled::public(numbers(count)) },
    );
    outcome = outcome.or(take_dispatches(effects, &mut pending));
    let sample_every = (count / 200).max(1);
    let (mut peak_live, mut peak_held, mut steps) = (0, 0, 0usize);
    while outcome.is_none() {
        let Some((call, argument)) = pending.pop_front() else { break };
        let effects =
            react_fully(&mut core, Input::ToolCompleted { call, value: Labelled::public(argument) });
        outcome = take_dispatches(effects, &mut pending);
        steps += 1;
        if steps % sample_every == 0 {
            peak_live = peak_live.max(core.live_nodes());
            peak_held = peak_held.max(core.held_nodes());
        }
    }
    assert!(matches!(outcome, Some(Outcome::Succeeded(_))), "{outcome:?}");
    println!(
        "    {count:>9} items: peak live nodes {peak_live:>6}, peak held nodes {peak_held:>6}, materialized at the end {:>9} ({:.2} per item), live heap at the end {:>5} MiB, peak RSS {:>5} MiB, {:.2} s",
        core.materialized_nodes(),
        core.materialized_nodes() as f64 / count as f64,
        LIVE_BYTES.load(Ordering::Relaxed) >> 20,
        peak_rss_kib().unwrap_or(0) >> 10,
        started.elapsed().as_secs_f64()
    );
}

/// (c) and (c-runtime): each input length in its own process (`mode count`), so each RSS peak
/// is its own.
fn loop_figures(title: &str, mode: &str) {
    println!("{title}");
    let me = std::env::current_exe().expect("this binary");
    for count in ["10000", "100000", "1000000"] {
        let output =
            std::process::Command::new(&me).args([mode, count]).output().expect("re-run this binary");
        print!("{}", String::from_utf8_lossy(&output.stdout));
        if !output.status.success() {
            println!("    {count}: failed: {}", String::from_utf8_lossy(&output.stderr));
        }
    }
}

/// A journal that keeps one run's header and counts the records and bytes appended to it, so
/// the journal's own growth neither adds to the RSS of (c-runtime) nor goes unreported.
#[derive(Default)]
struct CountingJournal {
    header: std::sync::Mutex<Option<RunHeader>>,
    last_seq: AtomicU64,
    bytes: AtomicU64,
}

#[async_trait]
impl Journal for CountingJournal {
    async fn create_run(&self, header: &RunHeader) -> Result<(), JournalError> {
        *self.header.lock().expect("header lock") = Some(header.clone());
        Ok(())
    }

    async fn header(&self, _run: &RunId) -> Result<RunHeader, JournalError> {
        let header = self.header.lock().expect("header lock").clone();
        header.ok_or_else(|| JournalError::new(JournalErrorKind::UnknownRun, "no run was created"))
    }

    async fn append(&self, _run: &RunId, expected_seq: u64, records: &[Record]) -> Result<u64, JournalError> {
        let last = expected_seq + records.len() as u64;
        let bytes: usize = records.iter().map(|record| record.bytes.len()).sum();
        self.bytes.fetch_add(bytes as u64, Ordering::Relaxed);
        self.last_seq.store(last, Ordering::Relaxed);
        Ok(last)
    }

    async fn read(&self, _run: &RunId, _after: u64, _limit: usize) -> Result<Vec<Record>, JournalError> {
        Ok(Vec::new())
    }

    async fn load_snapshot(&self, _run: &RunId) -> Result<Option<Snapshot>, JournalError> {
        Ok(None)
    }

    async fn store_snapshot(&self, _run: &RunId, _snapshot: Snapshot) -> Result<(), JournalError> {
        Ok(())
    }
}

/// (c-runtime), one input length: the same loop through the whole `Runtime` (shell, observer)
/// with the counting journal, sampling the observer's node records every millisecond until the
/// run ends. (Reading the handle's events is no option here: a reader that falls behind catches
/// up from the journal, and this journal keeps nothing to read back.)
fn runtime_loop_growth(count: usize) {
    let journal = Arc::new(CountingJournal::default());
    let runtime = Runtime::builder()
        .registry(registry())
        .executor(Arc::new(Tools { count }))
        .journal(journal.clone())
        .worker_threads(2)
        .build()
        .expect("runtime");
    let program = runtime.compile(&loop_source(16), &Inputs::new()).expect("compiles");
    let started = Instant::now();
    let run = runtime.start(&program, &Inputs::new()).expect("starts");
    let observer = run.observer();
    let mut peak_records = 0usize;
    while runtime.running() > 0 {
        peak_records = peak_records.max(observer.retained_node_records());
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(matches!(run.wait().expect("journal"), Outcome::Succeeded(_)));
    let events = journal.last_seq.load(Ordering::Relaxed);
    println!(
        "    {count:>9} items: peak observer node records {peak_records:>9}, at the end {:>9}, live heap at the end {:>5} MiB, peak RSS {:>5} MiB; journal {events} records, {} MiB (counted, not kept); {:.2} s",
        observer.retained_node_records(),
        LIVE_BYTES.load(Ordering::Relaxed) >> 20,
        peak_rss_kib().unwrap_or(0) >> 10,
        journal.bytes.load(Ordering::Relaxed) >> 20,
        started.elapsed().as_secs_f64()
    );
}

/// (d) End-to-end latency of a run of one 1 ms call, against a bare tokio task that sleeps 1 ms,
/// both started from this thread and awaited by blocking on a channel; and each one's time
/// outside its call (end to end less the time the call took inside its executor, or the bare
/// task inside its sleep), which tokio's millisecond timer does not blur.
fn latency() {
    const RUNS: usize = 1_000;
    let runtime = runtime(0);
    let program = runtime.compile("return sleepy(1)\n", &Inputs::new()).expect("compiles");
    let mut around = Vec::with_capacity(RUNS);
    let mut engine: Vec<f64> = (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            let outcome = runtime.start(&program, &Inputs::new()).expect("starts").wait().expect("journal");
            assert!(matches!(outcome, Outcome::Succeeded(_)));
            let micros = started.elapsed().as_secs_f64() * 1e6;
            around.push(micros - SLEPT_NANOS.load(Ordering::Relaxed) as f64 / 1e3);
            micros
        })
        .collect();
    let pool =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("pool");
    let mut base_around = Vec::with_capacity(RUNS);
    let mut baseline: Vec<f64> = (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            let (done, wait) = tokio::sync::oneshot::channel();
            pool.spawn(async move {
                let slept = Instant::now();
                tokio::time::sleep(Duration::from_millis(1)).await;
                let _ = done.send(slept.elapsed());
            });
            let slept = wait.blocking_recv().expect("the task answers");
            let micros = started.elapsed().as_secs_f64() * 1e6;
            base_around.push(micros - slept.as_secs_f64() * 1e6);
            micros
        })
        .collect();
    let (engine_p50, engine_p99) = (percentile(&mut engine, 50.0), percentile(&mut engine, 99.0));
    let (base_p50, base_p99) = (percentile(&mut baseline, 50.0), percentile(&mut baseline, 99.0));
    println!("(d) one run of `return sleepy(1)` (the tool sleeps 1 ms), {RUNS} runs one after another");
    println!("    engine end to end: p50 {engine_p50:.0} µs, p99 {engine_p99:.0} µs");
    println!("    bare tokio task sleeping 1 ms: p50 {base_p50:.0} µs, p99 {base_p99:.0} µs");
    println!("    overhead: p50 {:.0} µs, p99 {:.0} µs", engine_p50 - base_p50, engine_p99 - base_p99);
    let (around_p50, around_p99) = (percentile(&mut around, 50.0), percentile(&mut around, 99.0));
    let (base_around_p50, base_around_p99) =
        (percentile(&mut base_around, 50.0), percentile(&mut base_around, 99.0));
    println!(
        "    time outside the call (end to end less the call's own time, per run): engine p50 {around_p50:.0} µs, p99 {around_p99:.0} µs; bare task p50 {base_around_p50:.0} µs, p99 {base_around_p99:.0} µs; overhead p50 {:.0} µs",
        around_p50 - base_around_p50
    );
}

/// (d) taken without its tool's sleep: a one-call run's fixed cost, `return noop(1)` answered
/// at once, run after run, against a bare task spawned on a pool of the same size that answers
/// a oneshot; and the heap allocations of a run.
fn fixed_cost() {
    const RUNS: usize = 20_000;
    let runtime = runtime(0);
    let program = runtime.compile("return noop(1)\n", &Inputs::new()).expect("compiles");
    let allocations_before = ALLOCATIONS.load(Ordering::Relaxed);
    let mut engine: Vec<f64> = (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            let outcome = runtime.start(&program, &Inputs::new()).expect("starts").wait().expect("journal");
            assert!(matches!(outcome, Outcome::Succeeded(_)));
            started.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    let allocations = (ALLOCATIONS.load(Ordering::Relaxed) - allocations_before) / RUNS;
    let pool =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("pool");
    let mut bare: Vec<f64> = (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            let (done, answer) = tokio::sync::oneshot::channel();
            pool.spawn(async move {
                let _ = done.send(());
            });
            answer.blocking_recv().expect("the task answers");
            started.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    let (engine_p50, bare_p50) = (median(&mut engine), median(&mut bare));
    println!("(d-fixed) one run of `return noop(1)` (answered at once), {RUNS} runs one after another");
    println!("    engine end to end: p50 {engine_p50:.1} µs, {allocations} heap allocations per run");
    println!("    bare tokio task answering a oneshot: p50 {bare_p50:.1} µs");
    println!("    a run's fixed cost: p50 {:.1} µs", engine_p50 - bare_p50);
}

fn main() {
    // With OTEL_EXPORTER_OTLP_ENDPOINT set, the runs' spans and metrics are exported as the
    // `runlet` command exports them: the cost of being traced.
    let _telemetry =
        runlet_telemetry::Telemetry::install_from_env("engine_figures").expect("the OTEL_* variables");
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [mode, count] = args.as_slice()
        && let Ok(count) = count.parse()
    {
        match mode.as_str() {
            "loop" => return loop_growth(count),
            "runtime-loop" => return runtime_loop_growth(count),
            _ => {}
        }
    }
    let wanted = |figure: &str| args.is_empty() || args.iter().any(|arg| arg == figure);
    if wanted("a") {
        throughput(true);
    }
    if wanted("a-no-graph") {
        throughput(false);
    }
    if wanted("b") {
        bytes_per_node();
    }
    if wanted("c") {
        loop_figures(
            "(c) for n in numbers() limit 16 { return noop(n) }, the core driven directly, every call answered at once",
            "loop",
        );
    }
    if wanted("c-runtime") {
        loop_figures(
            "(c-runtime) the same loop through the whole Runtime (observer on, sampled every millisecond), journal counting bytes without keeping them",
            "runtime-loop",
        );
    }
    if wanted("d") {
        latency();
    }
    if wanted("d-fixed") {
        fixed_cost();
    }
    if wanted("e") {
        whole_runs();
    }
}

/// (e) Whole runs of `return noop(1)`, one after another: `start` alone and start to outcome,
/// against this file's registry of 4 tools and against one of 1,000 (each header retains the
/// registry file its program was compiled against).
fn whole_runs() {
    const RUNS: usize = 2_000;
    let wide: Vec<String> = (0..1_000)
        .map(|i| {
            format!(
                r#"{{"name": "t{i}", "params": [{{"name": "n", "schema": {{"type": "integer", "description": "the number tool {i} answers"}}}}], "outputSchema": {{"type": "integer"}}, "execution": "pure"}}"#
            )
        })
        .chain(std::iter::once(
            r#"{"name": "noop", "params": [{"name": "n", "schema": {"type": "integer"}}], "outputSchema": {"type": "integer"}, "execution": "pure"}"#.to_owned(),
        ))
        .collect();
    let wide = format!(r#"{{"tools": [{}]}}"#, wide.join(","));
    println!("(e) whole runs of `return noop(1)`, {RUNS} one after another, 2 worker threads");
    for (label, json) in [("4 tools", REGISTRY.to_owned()), ("1,001 tools", wide)] {
        let registry =
            Registry::from_json_str(&json, &RegistryOptions::default()).expect("registry").registry;
        let runtime = runtime_over(registry, 0);
        let program = runtime.compile("return noop(1)\n", &Inputs::new()).expect("compiles");
        let (mut starts, mut runs) = (Vec::with_capacity(RUNS), Vec::with_capacity(RUNS));
        for _ in 0..RUNS {
            let started = Instant::now();
            let run = runtime.start(&program, &Inputs::new()).expect("starts");
            starts.push(started.elapsed().as_secs_f64() * 1e6);
            assert!(matches!(run.wait().expect("journal"), Outcome::Succeeded(_)));
            runs.push(started.elapsed().as_secs_f64() * 1e6);
        }
        println!(
            "    registry of {label} ({} KiB): start p50 {:.0} µs; start to outcome p50 {:.0} µs, p99 {:.0} µs",
            json.len() / 1024,
            percentile(&mut starts, 50.0),
            percentile(&mut runs, 50.0),
            percentile(&mut runs, 99.0)
        );
    }
}
