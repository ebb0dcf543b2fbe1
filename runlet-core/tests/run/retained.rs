//! What a run header retains and what an operator's process does with it: the run compiled again
//! from its header alone resumes with every pin holding, inputs come back exactly (bytes, large
//! integers, nested objects), run listings tell ended runs from running and interrupted ones,
//! and an interrupted run is cancelled from its journal.

use std::sync::Arc;

use async_trait::async_trait;
use runlet::analyze::Inputs;
use runlet::engine::{Outcome, ToolCall, ToolError, ToolExecutor, ToolOutput};
use runlet::journal::{Journal, JournalError, MemoryJournal, Record, RunEntry, RunHeader, RunId, Snapshot};
use runlet::registry::{Registry, RegistryOptions};
use runlet::runtime::{RecoveryError, RetainError, RetainedProgram, RunOptions, RunStatus, Runtime};
use runlet::value::{Value, parse_json, to_presentation_json};

const REGISTRY: &str = r#"{"tools": [{"name": "t.echo", "params": [{"name": "v", "schema": {}}],
    "outputSchema": {}, "execution": "idempotent"}]}"#;

/// Answers `t.echo(v)` with `v`.
struct Echo;

#[async_trait]
impl ToolExecutor for Echo {
    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::new(call.arguments.iter().next().cloned().unwrap_or(Value::Null)))
    }
}

fn runtime(registry: Registry, journal: Arc<dyn Journal>) -> Runtime {
    runtime_with(registry, journal, Arc::new(Echo))
}

fn runtime_with(registry: Registry, journal: Arc<dyn Journal>, executor: Arc<dyn ToolExecutor>) -> Runtime {
    builder(registry, journal, executor).build().expect("runtime")
}

fn builder(
    registry: Registry,
    journal: Arc<dyn Journal>,
    executor: Arc<dyn ToolExecutor>,
) -> runlet::runtime::RuntimeBuilder {
    Runtime::builder()
        .registry(registry)
        .executor(executor)
        .journal(journal)
        .limits(runlet::engine::Limits::new().with(runlet::engine::LimitKey::ToolCalls, 50))
        .digest_key("tenant-1", b"a key both processes share")
}

fn registry() -> Registry {
    Registry::from_json_str(REGISTRY, &RegistryOptions::default()).expect("registry").registry
}

fn inputs() -> Inputs {
    let mut inputs = Inputs::new();
    inputs.insert("big", Value::Int(i64::MAX));
    inputs.insert("blob", Value::bytes(vec![0u8, 255, 7]));
    inputs.insert("nested", parse_json(r#"{"b": [1, 2.5, "ü"], "a": null}"#).expect("JSON"));
    inputs
}

const SOURCE: &str = "x = t.echo(big)\ny = t.echo(nested)\nreturn [x, y, blob]\n";

/// A runtime on a fresh memory journal, its compiled program, and a run of it that succeeded.
fn finished_run() -> (Arc<dyn Journal>, Runtime, runlet::runtime::Executable, RunId) {
    let journal: Arc<dyn Journal> = Arc::new(MemoryJournal::new());
    let runtime = runtime(registry(), Arc::clone(&journal));
    let program = runtime.compile(SOURCE, &inputs()).expect("compiles");
    let run = runtime.start(&program, &inputs()).expect("starts");
    let run_id = run.run_id().clone();
    assert!(matches!(run.wait().expect("journal"), Outcome::Succeeded(_)));
    (journal, runtime, program, run_id)
}

/// A run's header, as a process given only the journal reads it.
fn header_of(journal: &dyn Journal, run: &RunId) -> RunHeader {
    let pool = tokio::runtime::Builder::new_current_thread().build().expect("tokio");
    pool.block_on(journal.header(run)).expect("header")
}

#[test]
fn a_run_compiled_again_from_its_header_resumes_under_every_pin() {
    let journal: Arc<dyn Journal> = Arc::new(MemoryJournal::new());
    let first = runtime(registry(), Arc::clone(&journal));
    let program = first.compile(SOURCE, &inputs()).expect("compiles");
    let run = first.start(&program, &inputs()).expect("starts");
    let run_id = run.run_id().clone();
    let expected = match run.wait().expect("journal") {
        Outcome::Succeeded(value) => to_presentation_json(value.value()).ok(),
        other => panic!("{other:?}"),
    };

    let header = header_of(journal.as_ref(), &run_id);
    let retained = header.retained.as_ref().expect("the header retains the run");
    assert_eq!(&*retained.source, SOURCE);
    // The header shares the registry file with the runtime's registry: a run does not copy it.
    let file = first.registry().file().expect("read from a file");
    assert!(Arc::ptr_eq(retained.registry.as_ref().expect("retained"), file));
    assert_eq!(retained.limits.get("tool_calls"), Some(&50));
    assert_eq!(retained.durability.as_deref(), Some("memory"));
    assert_eq!(retained.prelude_version, "runlet.prelude/1");

    let rebuilt = RetainedProgram::from_header(&header, &RegistryOptions::default()).expect("reads back");
    for name in ["big", "blob", "nested"] {
        assert_eq!(rebuilt.inputs.get(name), inputs().get(name), "{name} comes back exactly");
    }
    let second = Runtime::builder()
        .registry(rebuilt.registry.expect("a registry read from a file is retained"))
        .executor(Arc::new(Echo))
        .journal(Arc::clone(&journal))
        .limits(rebuilt.limits)
        .digest_key("tenant-1", b"a key both processes share")
        .build()
        .expect("runtime");
    let again = second.compile(&rebuilt.source, &rebuilt.inputs).expect("the retained program compiles");
    let recovery = second.recovery(&again, &run_id, RunOptions::default()).expect("every pin holds");
    let outcome = match recovery.outcome() {
        Some(Outcome::Succeeded(value)) => to_presentation_json(value.value()).ok(),
        other => panic!("{other:?}"),
    };
    assert_eq!(outcome, expected, "the journal replays to the same result");
}

#[test]
fn a_header_without_retained_parts_or_with_damaged_ones_is_refused_with_its_code() {
    let (journal, _runtime, _program, run_id) = finished_run();
    let header = header_of(journal.as_ref(), &run_id);

    let old = RunHeader { retained: None, ..header.clone() };
    let error =
        RetainedProgram::from_header(&old, &RegistryOptions::default()).expect_err("nothing retained");
    assert!(matches!(error, RetainError::NotRetained { .. }));
    assert_eq!(error.code().to_string(), "RL7302");

    let mut damaged = header.clone();
    damaged.retained.as_mut().expect("retained").inputs = "zz".into();
    assert_eq!(
        RetainedProgram::from_header(&damaged, &RegistryOptions::default())
            .expect_err("bad hex")
            .code()
            .to_string(),
        "RL7303"
    );
    let mut unknown_limit = header;
    unknown_limit.retained.as_mut().expect("retained").limits.insert("tool_callz".into(), 1);
    let error =
        RetainedProgram::from_header(&unknown_limit, &RegistryOptions::default()).expect_err("bad key");
    assert!(error.to_string().contains("tool_callz"), "{error}");
}

/// Never answers: a run calling it stays in flight until its runtime goes away.
struct Hangs;

#[async_trait]
impl ToolExecutor for Hangs {
    async fn dispatch(&self, _call: ToolCall) -> Result<ToolOutput, ToolError> {
        std::future::pending().await
    }
}

/// A run of `SOURCE` in `journal` left with a call in flight when its runtime went away, as a
/// crash leaves it (its owner, this process, still recorded).
fn crashed_run(journal: &Arc<dyn Journal>) -> RunId {
    let hanging = runtime_with(registry(), Arc::clone(journal), Arc::new(Hangs));
    let mut left =
        hanging.start(&hanging.compile(SOURCE, &inputs()).expect("compiles"), &inputs()).expect("starts");
    let crashed = left.run_id().clone();
    while let Some((_, event)) = left.events().blocking_recv() {
        if event.kind() == "CallDispatchPrepared" {
            break;
        }
    }
    drop((left, hanging));
    crashed
}

#[test]
fn listings_tell_ended_running_and_interrupted_runs_and_an_interrupted_run_is_cancelled() {
    let (journal, runtime, program, done_id) = finished_run();

    let crashed = crashed_run(&journal);

    let listed = runtime.runs().expect("runs");
    let status = |listed: &[runlet::runtime::RunListing], run: &RunId| {
        listed.iter().find(|s| s.run_id == *run).map(|s| s.status)
    };
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[0].run_id, done_id, "in the order they were created");
    assert_eq!(status(&listed, &done_id), Some(RunStatus::Succeeded));
    assert_eq!(status(&listed, &crashed), Some(RunStatus::Running), "its owner, this process, lives");
    assert!(listed[0].started_unix_ms.is_some() && listed[0].last_seq > 2);

    // Once no live process owns it, it is interrupted.
    let pool = tokio::runtime::Builder::new_current_thread().build().expect("tokio");
    pool.block_on(async {
        journal.claim(&crashed, "a process that let it go").await.expect("claim");
        journal.release(&crashed, "a process that let it go").await.expect("release");
    });
    assert_eq!(runtime.run_listing(&crashed).expect("summary").status, RunStatus::Interrupted);

    let mut recovery = runtime.recovery(&program, &crashed, RunOptions::default()).expect("recovers");
    recovery.cancel().expect("cancels");
    drop(recovery);
    assert_eq!(runtime.run_listing(&crashed).expect("summary").status, RunStatus::Cancelled);
    let mut again = runtime.recovery(&program, &crashed, RunOptions::default()).expect("recovers");
    let refused = again.cancel().expect_err("an ended run stays as it ended");
    assert!(matches!(refused, RecoveryError::Ended { .. }), "{refused}");
    assert_eq!(refused.code().to_string(), "RL8404");
    let mut ended = runtime.recovery(&program, &done_id, RunOptions::default()).expect("recovers");
    assert_eq!(ended.cancel().expect_err("succeeded").code().to_string(), "RL8404");
}

#[test]
fn a_run_written_by_a_runtime_outside_the_replay_compatibility_is_refused_with_both_versions() {
    let (journal, runtime, program, done_id) = finished_run();
    for (version, accepted) in
        [("0.0.9", false), ("9.0.0", false), ("0.1", false), (env!("CARGO_PKG_VERSION"), true)]
    {
        let run = RunId::new(format!("written-by-{version}"));
        let pool = tokio::runtime::Builder::new_current_thread().build().expect("tokio");
        pool.block_on(async {
            let mut header = journal.header(&done_id).await.expect("header");
            header.run_id = run.clone();
            header.runtime_version = version.to_owned();
            journal.create_run(&header).await.expect("create");
        });
        // The header has no event after it: past the version check, a run is refused only for
        // never having started.
        let error = runtime.recovery(&program, &run, RunOptions::default()).expect_err("no event");
        if accepted {
            assert_eq!(error.code().to_string(), "RL7305", "{version}: {error}");
        } else {
            assert_eq!(error.code().to_string(), "RL7304", "{version}: {error}");
            assert!(error.to_string().contains(version), "{error}");
        }
    }
}

#[test]
fn a_resumed_run_is_observed_from_its_first_record() {
    let (journal, runtime, program, _) = finished_run();
    let crashed = crashed_run(&journal);
    let pool = tokio::runtime::Builder::new_current_thread().build().expect("tokio");
    pool.block_on(journal.release(&crashed, "nobody")).expect("release");

    let mut resumed = runtime.resume(&program, &crashed).expect("resumes");
    let (first, _) = resumed.events().blocking_recv().expect("an event");
    assert_eq!(first, 1, "the handle's events start at the run's first record");
    let observer = resumed.observer();
    assert!(matches!(resumed.wait().expect("journal"), Outcome::Succeeded(_)));
    let view = runlet::observe::ViewPolicy::default();
    let live = observer.snapshot(&view);
    assert!(live.integrity_errors.is_empty(), "{:?}", live.integrity_errors);
    let from_journal = runtime
        .journal_snapshot(&program, &crashed, &view, &runlet::observe::SnapshotOptions::default())
        .expect("snapshot");
    assert_eq!(live.seq, from_journal.seq);
    let states = |snapshot: &runlet::observe::GraphSnapshot| {
        snapshot.nodes.iter().map(|node| (node.id.clone(), node.state, node.attempt)).collect::<Vec<_>>()
    };
    assert_eq!(states(&live), states(&from_journal), "the live graph holds every node the journal records");
}

/// A resumed run's events are timed from the run's first start, as its first process timed
/// them, not from the resume.
#[test]
fn a_resumed_run_times_its_events_from_its_first_start() {
    let (journal, runtime, program, _) = finished_run();
    let crashed = crashed_run(&journal);
    let pool = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio");
    pool.block_on(journal.release(&crashed, "nobody")).expect("release");
    std::thread::sleep(std::time::Duration::from_millis(300));

    // What the journal held before the resume; the run may have ended before its observer is
    // asked anything.
    let journaled = runtime.run_listing(&crashed).expect("listing").last_seq;
    let resumed = runtime.resume(&program, &crashed).expect("resumes");
    let observer = resumed.observer();
    assert!(matches!(resumed.wait().expect("journal"), Outcome::Succeeded(_)));
    let mut after_resume = observer.subscribe(journaled, runlet::observe::ViewPolicy::default());
    let first = pool.block_on(after_resume.next()).expect("an event").expect("readable");
    let at_ms = first.at_ms.expect("a published event carries its time");
    assert!(at_ms >= 300, "{at_ms} ms after the run started, which was at least 300 ms before its resume");
}

/// Lets run `run` go as a process that died would: no live process owns it any more.
fn let_go(journal: &Arc<dyn Journal>, run: &RunId) {
    let pool = tokio::runtime::Builder::new_current_thread().build().expect("tokio");
    pool.block_on(async {
        journal.claim(run, "a process that died").await.expect("claim");
        journal.release(run, "a process that died").await.expect("release");
    });
}

#[test]
fn recovery_at_start_resumes_interrupted_runs_and_parks_those_resumed_too_often() {
    let (journal, _, _, done_id) = finished_run();
    let crashed = crashed_run(&journal);
    let_go(&journal, &crashed);
    let again = crashed_run(&journal);
    // Resumed twice, each time by a process that died before the run ended.
    for _ in 0..2 {
        let hanging = runtime_with(registry(), Arc::clone(&journal), Arc::new(Hangs));
        let program = hanging.compile(SOURCE, &inputs()).expect("compiles");
        let_go(&journal, &again);
        let journaled = hanging.run_listing(&again).expect("listing").last_seq;
        let mut resumed = hanging.resume(&program, &again).expect("resumes");
        // Past the journal's end: the call in flight, dispatched again after `RunResumed`.
        while let Some((seq, event)) = resumed.events().blocking_recv() {
            if seq > journaled && event.kind() == "CallDispatchPrepared" {
                break;
            }
        }
        drop((resumed, hanging));
    }
    let_go(&journal, &again);

    let restarted = runtime(registry(), Arc::clone(&journal));
    let recovered = restarted.recover_interrupted(2).expect("the journal lists its runs");
    let ids: Vec<&RunId> = recovered.iter().map(|r| r.run_id()).collect();
    assert_eq!(ids, [&crashed, &again], "interrupted runs in creation order; {done_id} has ended");
    let mut recovered = recovered.into_iter();
    match recovered.next() {
        Some(runlet::runtime::Recovered::Resumed(handle)) => {
            assert!(matches!(handle.wait().expect("journal"), Outcome::Succeeded(_)))
        }
        other => panic!("the interrupted run is resumed: {other:?}"),
    }
    match recovered.next() {
        Some(runlet::runtime::Recovered::Parked { resumes: 2, .. }) => {}
        other => panic!("the run resumed twice is parked: {other:?}"),
    }
    assert_eq!(restarted.run_listing(&again).expect("listing").status, RunStatus::Failed);
    let program = restarted.compile(SOURCE, &inputs()).expect("compiles");
    let parked = restarted.recovery(&program, &again, RunOptions::default()).expect("recovers");
    match parked.outcome() {
        Some(Outcome::Failed(error)) => {
            assert_eq!(error.code, "RL7306");
            assert!(error.message.contains("resumed 2 times"), "{}", error.message);
        }
        other => panic!("{other:?}"),
    }
    assert!(restarted.recover_interrupted(2).expect("lists").is_empty(), "nothing is left to recover");
}

#[test]
fn recovery_at_start_leaves_runs_of_another_registry_with_the_reason() {
    let (journal, _, _, _) = finished_run();
    let crashed = crashed_run(&journal);
    let_go(&journal, &crashed);
    let other = Registry::from_json_str(
        r#"{"tools": [{"name": "t.echo", "params": [{"name": "v", "schema": {}}],
            "outputSchema": {}, "execution": "pure"}]}"#,
        &RegistryOptions::default(),
    )
    .expect("registry")
    .registry;
    let elsewhere = runtime(other, Arc::clone(&journal));
    match elsewhere.recover_interrupted(3).expect("lists").as_slice() {
        [runlet::runtime::Recovered::Left { run, code, message }] => {
            assert_eq!((run, code.to_string().as_str()), (&crashed, "RL7301"));
            assert!(message.contains("registry"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(elsewhere.run_listing(&crashed).expect("listing").status, RunStatus::Interrupted);
}

/// A run another living process claimed after it was listed is left with the journal's refusal
/// (RL7010), journaling nothing, rather than reported resumed and then failed: recovery claims
/// a run before it goes on. Once that process ended, the run resumes.
#[test]
fn recovery_leaves_a_run_another_living_process_claimed_meanwhile() {
    let dir = std::env::temp_dir().join(format!("runlet-claimed-recovery-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let journal: Arc<dyn Journal> = Arc::new(
        runlet::journal::SqliteJournal::open(dir.join("runs.db"), runlet::journal::Durability::Full)
            .expect("journal"),
    );
    let crashed = crashed_run(&journal);
    let mut other = std::process::Command::new("sleep").arg("60").spawn().expect("a process to own the run");
    let name = runlet::journal::owner::of_process(other.id());
    let pool = tokio::runtime::Builder::new_current_thread().build().expect("tokio");
    pool.block_on(journal.claim(&crashed, &name)).expect("the other process claims it");

    let restarted = runtime(registry(), Arc::clone(&journal));
    let journaled = restarted.run_listing(&crashed).expect("listing").last_seq;
    match restarted.recover_run(&crashed, 3) {
        runlet::runtime::Recovered::Left { run, code, message } => {
            assert_eq!((&run, code.to_string().as_str()), (&crashed, "RL7010"), "{message}");
            assert!(message.contains(&name), "{message}");
        }
        other => panic!("left for the process that holds it: {other:?}"),
    }
    assert_eq!(restarted.run_listing(&crashed).expect("listing").last_seq, journaled, "nothing journaled");
    assert_eq!(restarted.run_listing(&crashed).expect("listing").status, RunStatus::Running);

    other.kill().expect("kill");
    other.wait().expect("reaped");
    match restarted.recover_run(&crashed, 3) {
        runlet::runtime::Recovered::Resumed(handle) => {
            assert!(matches!(handle.wait().expect("journal"), Outcome::Succeeded(_)));
        }
        other => panic!("resumed once its owner ended: {other:?}"),
    }
    drop(restarted);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A memory journal that, at the first claim under `owner`, first lets `meanwhile` run: what
/// another process does between a recovery's replay and its claim.
struct ClaimedAfter {
    inner: MemoryJournal,
    owner: String,
    meanwhile: parking_lot::Mutex<Option<Box<dyn FnOnce() + Send>>>,
}

#[async_trait]
impl Journal for ClaimedAfter {
    async fn create_run(&self, header: &RunHeader) -> Result<(), JournalError> {
        self.inner.create_run(header).await
    }

    async fn header(&self, run: &RunId) -> Result<RunHeader, JournalError> {
        self.inner.header(run).await
    }

    async fn append(&self, run: &RunId, expected_seq: u64, records: &[Record]) -> Result<u64, JournalError> {
        self.inner.append(run, expected_seq, records).await
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

    async fn runs(&self) -> Result<Vec<RunEntry>, JournalError> {
        self.inner.runs().await
    }

    fn keeps_owners(&self) -> bool {
        true
    }

    async fn claim(&self, run: &RunId, owner: &str) -> Result<(), JournalError> {
        let meanwhile = if owner == self.owner { self.meanwhile.lock().take() } else { None };
        if let Some(meanwhile) = meanwhile {
            // Another runtime blocks on its own pool: not inside this one's.
            std::thread::spawn(meanwhile).join().expect("the other process's work");
        }
        self.inner.claim(run, owner).await
    }

    async fn release(&self, run: &RunId, owner: &str) -> Result<(), JournalError> {
        self.inner.release(run, owner).await
    }
}

/// Another process resumes a run to its end between a recovery's replay and its claim: the
/// recovery replays what that process journaled rather than going on from where its first
/// replay ended (where the journal's sequence check would fail it), and sends nothing again.
#[test]
fn recovery_replays_again_what_another_process_journaled_before_its_claim() {
    let journal = Arc::new(ClaimedAfter {
        inner: MemoryJournal::new(),
        owner: runlet::journal::owner::this_process(),
        meanwhile: parking_lot::Mutex::new(None),
    });
    let shared: Arc<dyn Journal> = journal.clone();
    let crashed = crashed_run(&shared);
    let (other_journal, run) = (Arc::clone(&shared), crashed.clone());
    *journal.meanwhile.lock() = Some(Box::new(move || {
        let other = builder(registry(), other_journal, Arc::new(Echo)).owner("another process").build();
        let other = other.expect("runtime");
        let program = other.compile(SOURCE, &inputs()).expect("compiles");
        let resumed = other.resume(&program, &run).expect("the other process resumes it");
        assert!(matches!(resumed.wait().expect("journal"), Outcome::Succeeded(_)));
    }));

    let restarted = runtime(registry(), Arc::clone(&shared));
    // One resume allowed: the other process's counts, and a run it ended is not parked.
    match restarted.recover_run(&crashed, 1) {
        runlet::runtime::Recovered::Resumed(handle) => match handle.wait() {
            Ok(Outcome::Succeeded(_)) => {}
            other => panic!("the run the other process ended stays ended: {other:?}"),
        },
        other => panic!("{other:?}"),
    }
    assert!(journal.meanwhile.lock().is_none(), "the other process ran between replay and claim");
    let records = restarted.run_listing(&crashed).expect("listing").last_seq;
    let pool = tokio::runtime::Builder::new_current_thread().build().expect("tokio");
    let events = pool.block_on(shared.read(&crashed, 0, usize::MAX)).expect("records");
    assert_eq!(events.len() as u64, records);
    let ended: Vec<_> = events
        .iter()
        .map(|record| runlet::engine::event::Event::decode_record(record).expect("decodes").kind())
        .filter(|kind| *kind == "RunSucceeded")
        .collect();
    assert_eq!(ended.len(), 1, "ended once, by the other process");
}

#[test]
fn recovery_at_start_leaves_a_damaged_run_with_the_reason_and_resumes_the_others() {
    let dir = std::env::temp_dir().join(format!("runlet-damaged-recovery-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let path = dir.join("runs.db");
    let open = || -> Arc<dyn Journal> {
        Arc::new(
            runlet::journal::SqliteJournal::open(&path, runlet::journal::Durability::Full).expect("journal"),
        )
    };
    let journal = open();
    let damaged = crashed_run(&journal);
    let crashed = crashed_run(&journal);
    // As if this process had died: its runs are no longer owned.
    let pool = tokio::runtime::Builder::new_current_thread().build().expect("tokio");
    for run in [&damaged, &crashed] {
        pool.block_on(journal.release(run, &runlet::journal::owner::this_process())).expect("release");
    }
    drop(journal);
    rusqlite::Connection::open(&path)
        .expect("the journal file")
        .execute("UPDATE runs SET header = 'not JSON' WHERE run_id = ?1", [damaged.as_str()])
        .expect("a header overwritten");

    let restarted = runtime(registry(), open());
    let listed = restarted.runs().expect("a damaged run fails no listing");
    let statuses: Vec<(&RunId, RunStatus)> = listed.iter().map(|run| (&run.run_id, run.status)).collect();
    assert_eq!(statuses, [(&damaged, RunStatus::Damaged), (&crashed, RunStatus::Interrupted)]);
    assert_eq!(listed[0].damage.as_ref().map(|damage| damage.code.to_string()).as_deref(), Some("RL7008"));

    let mut recovered = restarted.recover_interrupted(3).expect("the journal lists its runs").into_iter();
    match recovered.next() {
        Some(runlet::runtime::Recovered::Left { run, code, message }) => {
            assert_eq!((&run, code.to_string().as_str()), (&damaged, "RL7008"));
            assert!(message.contains("header"), "{message}");
        }
        other => panic!("the damaged run is left with the reason: {other:?}"),
    }
    match recovered.next() {
        Some(runlet::runtime::Recovered::Resumed(handle)) => {
            assert_eq!(handle.run_id(), &crashed);
            assert!(matches!(handle.wait().expect("journal"), Outcome::Succeeded(_)));
        }
        other => panic!("the interrupted run is resumed: {other:?}"),
    }
    assert!(recovered.next().is_none());
    drop(restarted);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A run whose last record does not hold together (its checksum) is listed as damaged, the
/// record named, rather than as interrupted.
#[test]
fn a_run_whose_last_record_is_damaged_is_listed_as_damaged() {
    let (journal, _, _, run) = finished_run();
    let pool = tokio::runtime::Builder::new_current_thread().build().expect("tokio");
    let copy: Arc<dyn Journal> = Arc::new(MemoryJournal::new());
    pool.block_on(async {
        let mut records = journal.read(&run, 0, usize::MAX).await.expect("records");
        let last = records.last_mut().expect("a record");
        let mut bytes = last.bytes.to_vec();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x55;
        last.bytes = bytes.into();
        copy.create_run(&journal.header(&run).await.expect("header")).await.expect("created");
        copy.append(&run, 0, &records).await.expect("appended");
    });
    let listed = pool.block_on(runlet::runtime::list_runs(copy.as_ref())).expect("a listing");
    assert_eq!(listed[0].status, RunStatus::Damaged);
    let damage = listed[0].damage.as_ref().expect("the damage");
    let seq = listed[0].last_seq;
    assert!(damage.message.contains(&format!("journal record {seq}")), "{}", damage.message);
    assert!(damage.message.contains("RL7006"), "{}", damage.message);
}
