//! Snapshots (spec §5.3): a run writes them as it goes, a resume restores the latest one and
//! replays only what follows it, and a snapshot that does not verify — damaged bytes, another
//! run's, one past the journal's end — is refused with its reason while the resume replays the
//! whole journal and ends the same way.

use std::sync::Arc;

use async_trait::async_trait;
use runlet::analyze::Inputs;
use runlet::engine::{Outcome, ToolCall, ToolError, ToolExecutor, ToolOutput};
use runlet::journal::{Journal, MemoryJournal, RunId, Snapshot};
use runlet::registry::{Registry, RegistryOptions};
use runlet::runtime::{Executable, RunOptions, Runtime, SnapshotUse};
use runlet::value::{Value, to_presentation_json};

const REGISTRY: &str = r#"{"prelude": "standard", "tools": [{"name": "t.inc", "params": [{"name": "n", "schema": {"type": "integer"}}],
    "outputSchema": {"type": "integer"}, "execution": "idempotent"}]}"#;

const SOURCE: &str = "
xs = for n in list.range(0, 40) limit 4 { return t.inc(n) }
return fold acc = 0 for x in xs { return acc + x }
";

/// Answers `t.inc(n)` with `n + 1`.
struct Inc;

#[async_trait]
impl ToolExecutor for Inc {
    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        match call.arguments.iter().next() {
            Some(Value::Int(n)) => Ok(ToolOutput::new(Value::Int(n + 1))),
            other => Err(ToolError::new("BAD_ARGUMENT", format!("{other:?}"))),
        }
    }
}

fn runtime(journal: &Arc<MemoryJournal>, snapshot_every: u64) -> Runtime {
    let registry = Registry::from_json_str(REGISTRY, &RegistryOptions::default()).expect("registry").registry;
    Runtime::builder()
        .registry(registry)
        .executor(Arc::new(Inc))
        .journal(Arc::clone(journal) as Arc<dyn Journal>)
        .snapshot_every(snapshot_every)
        .digest_key("snapshots", b"the key of these runs")
        .build()
        .expect("runtime")
}

/// A finished run on `journal` written with snapshots every `every` events.
fn finished(journal: &Arc<MemoryJournal>, every: u64) -> (Runtime, Executable, RunId) {
    let runtime = runtime(journal, every);
    let program = runtime.compile(SOURCE, &Inputs::new()).expect("compiles");
    let run = runtime.start(&program, &Inputs::new()).expect("starts");
    let run_id = run.run_id().clone();
    assert_eq!(ending(&run.wait().expect("journal")), "820");
    (runtime, program, run_id)
}

fn ending(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Succeeded(value) => to_presentation_json(value.value()).expect("JSON"),
        other => format!("{other:?}"),
    }
}

/// How a recovery of `run` used its snapshot, and how the run it resumes ends.
fn recovered(runtime: &Runtime, program: &Executable, run: &RunId) -> (SnapshotUse, String) {
    let recovery = runtime.recovery(program, run, RunOptions::default()).expect("recovers");
    let used = recovery.snapshot().clone();
    let ended = ending(recovery.outcome().expect("the journal records the end"));
    (used, ended)
}

fn block_on<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread().build().expect("tokio").block_on(future)
}

#[test]
fn a_run_writes_snapshots_and_its_recovery_replays_only_what_follows_the_latest() {
    let journal = Arc::new(MemoryJournal::new());
    let (runtime, program, run) = finished(&journal, 8);
    let snapshot = block_on(journal.load_snapshot(&run)).expect("loads").expect("the run wrote a snapshot");
    let last = block_on(journal.read(&run, 0, usize::MAX)).expect("reads").len() as u64;
    assert!(snapshot.upto_seq > 8 && snapshot.upto_seq < last, "{} of {last}", snapshot.upto_seq);
    let (used, ended) = recovered(&runtime, &program, &run);
    assert_eq!(used, SnapshotUse::Restored { upto_seq: snapshot.upto_seq });
    assert_eq!(ended, "820");
}

#[test]
fn snapshots_are_off_when_asked_and_for_a_memory_journal_by_default() {
    let journal = Arc::new(MemoryJournal::new());
    let (_, _, run) = finished(&journal, 0);
    assert_eq!(block_on(journal.load_snapshot(&run)).expect("loads"), None);
    let registry = Registry::from_json_str(REGISTRY, &RegistryOptions::default()).expect("registry").registry;
    let journal = Arc::new(MemoryJournal::new());
    let by_default = Runtime::builder()
        .registry(registry)
        .executor(Arc::new(Inc))
        .journal(Arc::clone(&journal) as Arc<dyn Journal>)
        .build()
        .expect("runtime");
    let program = by_default.compile(SOURCE, &Inputs::new()).expect("compiles");
    let handle = by_default.start(&program, &Inputs::new()).expect("starts");
    let run = handle.run_id().clone();
    assert_eq!(ending(&handle.wait().expect("journal")), "820");
    assert_eq!(block_on(journal.load_snapshot(&run)).expect("loads"), None);
}

#[test]
fn a_snapshot_that_does_not_verify_is_refused_and_the_whole_journal_replays() {
    let journal = Arc::new(MemoryJournal::new());
    let (runtime, program, run) = finished(&journal, 8);
    let good = block_on(journal.load_snapshot(&run)).expect("loads").expect("a snapshot");

    let mut flipped = good.bytes.to_vec();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0x40;
    let store = |snapshot: Snapshot| block_on(journal.store_snapshot(&run, snapshot)).expect("stores");
    store(Snapshot { upto_seq: good.upto_seq, bytes: flipped.into() });
    let (used, ended) = recovered(&runtime, &program, &run);
    assert!(matches!(&used, SnapshotUse::Refused { reason, .. } if reason.contains("checksum")), "{used:?}");
    assert_eq!(ended, "820");

    // Another run of the same program: its snapshot is not this run's.
    let (_, _, other) = finished(&journal, 8);
    let theirs = block_on(journal.load_snapshot(&other)).expect("loads").expect("a snapshot");
    let upto = theirs.upto_seq.min(good.upto_seq);
    store(Snapshot { upto_seq: upto, bytes: theirs.bytes });
    let (used, ended) = recovered(&runtime, &program, &run);
    assert!(
        matches!(&used, SnapshotUse::Refused { reason, .. } if reason.contains("another run")
            || reason.contains("position")),
        "{used:?}"
    );
    assert_eq!(ended, "820");

    // Truncated below its checksum.
    store(Snapshot { upto_seq: good.upto_seq, bytes: Arc::from(&good.bytes[..16]) });
    let (used, _) = recovered(&runtime, &program, &run);
    assert!(matches!(used, SnapshotUse::Refused { .. }), "{used:?}");

    store(good.clone());
    assert_eq!(recovered(&runtime, &program, &run).0, SnapshotUse::Restored { upto_seq: good.upto_seq });
}
