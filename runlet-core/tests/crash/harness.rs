//! One program's crash points. Two processes share the lab: one runs the program and crashes
//! where told, the other recovers the run from what its journal holds — deciding its uncertain
//! operations the way a host would after asking the provider — and resumes it. After each crash
//! point the harness checks what the resumed run did against the crash-free run.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use runlet::analyze::Inputs;
use runlet::diag::codes;
use runlet::engine::event::Event;
use runlet::engine::{Limits, Outcome, Resolution, RunSettings, ToolExecutor, replay};
use runlet::journal::{Journal, JournalError, RunId};
use runlet::registry::{Registry, RegistryOptions};
use runlet::runtime::{Executable, RunHandle, RunOptions, Runtime, SnapshotUse};
use runlet::schema::ExecutionClass;
use runlet::value::to_presentation_json;

use crate::audit::{LoopBounds, completed, left_dispatching};
use crate::lab::{Lab, Trial};
use crate::world::{Worker, World};

/// How long a run may take before the harness calls it stuck.
const STUCK: Duration = Duration::from_secs(20);

/// A program to crash: its source, registry, host inputs, per-run limits, settings, and its
/// tools (a fresh deterministic executor for each run's world).
pub struct Case {
    pub name: String,
    pub source: String,
    pub registry: String,
    /// A JSON object of host inputs.
    pub inputs: String,
    pub limits: Limits,
    pub settings: RunSettings,
    pub tools: Box<dyn Fn() -> Arc<dyn ToolExecutor> + Send + Sync>,
}

impl std::fmt::Debug for Case {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Case").field("name", &self.name).finish_non_exhaustive()
    }
}

/// What the crash-free run of a case did.
pub struct Reference {
    pub ending: String,
    /// How many appends its journal took: the crash points are 0 (after `create_run` only)
    /// through this.
    pub appends: usize,
}

/// What the crash points of a case exercised, for the test's report.
#[derive(Debug, Default, Clone, Copy)]
pub struct Tally {
    pub points: usize,
    /// Crash points where calls were left dispatching.
    pub with_calls_in_flight: usize,
    /// Operations the host resolved or gave a fresh generation.
    pub decisions: usize,
    /// Calls left dispatching that the resumed worker dispatched again.
    pub redispatched: usize,
    /// Crash points whose recovery restored a snapshot and replayed only what followed it.
    pub from_snapshot: usize,
}

impl Tally {
    pub fn add(&mut self, other: Tally) {
        self.points += other.points;
        self.with_calls_in_flight += other.with_calls_in_flight;
        self.decisions += other.decisions;
        self.redispatched += other.redispatched;
        self.from_snapshot += other.from_snapshot;
    }
}

/// One process: a runtime over the lab, as `worker`, with the case compiled on it.
struct Process {
    runtime: Runtime,
    program: Executable,
    inputs: Inputs,
    options: RunOptions,
    /// Its journal stops taking appends at the lab's budget.
    crashes: bool,
}

impl Process {
    fn new(case: &Case, lab: &Arc<Lab>, worker: Worker) -> Process {
        let crashes = worker != Worker::Resumed;
        let registry = Registry::from_json_str(&case.registry, &RegistryOptions::default())
            .unwrap_or_else(|e| panic!("{}: the registry loads: {e}", case.name))
            .registry;
        let inputs = Inputs::from_json(&case.inputs, &registry)
            .unwrap_or_else(|e| panic!("{}: the inputs load: {e}", case.name));
        let runtime = Runtime::builder()
            .registry(registry)
            .executor(lab.tools(worker))
            .journal(lab.journal(crashes))
            .settings(case.settings.clone())
            .digest_key("crash", b"the key every worker of these runs shares")
            // As often as they may be written: most crash points then resume from a snapshot.
            .snapshot_every(1)
            .worker_threads(1)
            .build()
            .expect("runtime");
        let program = runtime
            .compile(&case.source, &inputs)
            .unwrap_or_else(|d| panic!("{} compiles: {d:?}\n{}", case.name, case.source));
        Process {
            runtime,
            program,
            inputs,
            options: RunOptions { limits: case.limits.clone(), ..RunOptions::default() },
            crashes,
        }
    }

    fn start(&self) -> RunHandle {
        self.runtime.start_with(&self.program, &self.inputs, self.options.clone()).expect("starts")
    }

    /// The run's end, or why it has none.
    fn wait(&self, run: RunHandle) -> Result<Result<Outcome, JournalError>, String> {
        let waited =
            self.runtime.handle().block_on(async { tokio::time::timeout(STUCK, run.outcome()).await });
        waited.map_err(|_| format!("the run did not end within {STUCK:?}"))
    }

    /// The run's journaled events after the first `after`.
    fn events(&self, trial: &Trial, run: &RunId, after: usize) -> Vec<Event> {
        let read = trial.store.read(run, after as u64, usize::MAX);
        let records = self.runtime.handle().block_on(read).expect("reads");
        records.iter().map(|r| Event::decode_record(r).expect("decodes")).collect()
    }

    /// The execution class of each tool, by name.
    fn classes(&self) -> BTreeMap<String, ExecutionClass> {
        self.runtime.registry().tools().map(|(_, tool)| (tool.name.to_string(), tool.execution)).collect()
    }
}

/// The run's end as the harness compares it.
fn ending(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Succeeded(value) => {
            let json = to_presentation_json(value.value()).unwrap_or_else(|e| e.to_string());
            format!("succeeded with {json} ({:?})", value.max_sensitivity())
        }
        // Which call of several failing alike fails the run first depends on the order calls
        // complete in, which a crash changes: the node is not compared.
        Outcome::Failed(error) => format!("failed {}: {}", error.code, error.message),
        Outcome::Cancelled => "cancelled".into(),
    }
}

/// Whether a host must decide about an uncertain operation of `class` for the run to go on as
/// it would have (spec §5.4): the others are recovered by class.
fn needs_decision(class: ExecutionClass) -> bool {
    matches!(class, ExecutionClass::AtMostOnce | ExecutionClass::Unsafe)
}

/// What the journal held when a worker took a run over, and the run it resumed.
struct Takeover {
    /// The resumed run; `None` when the worker crashed while it journaled its decisions.
    handle: Option<RunHandle>,
    prefix: Vec<Event>,
    /// The calls left dispatching, by node, with their tool.
    in_flight: BTreeMap<String, String>,
}

/// The calls (by node) `later` sent that completed before it took the run over, whose journal
/// then held `prefix`: none may have, by node or by operation; else the ones it sent again.
fn repeats(
    world: &World,
    prefix: &[Event],
    earlier: &[Worker],
    later: Worker,
) -> Result<Vec<String>, String> {
    let received = world.received();
    let completed = completed(prefix);
    let completed_operations: BTreeSet<_> = received
        .iter()
        .filter(|r| earlier.contains(&r.from) && completed.contains(&r.node))
        .map(|r| r.operation)
        .collect();
    let mut sent = Vec::new();
    for call in received.into_iter().filter(|r| r.from == later) {
        if completed.contains(&call.node) || completed_operations.contains(&call.operation) {
            return Err(format!(
                "`{}` ({}) completed before the crash and was dispatched again",
                call.node, call.tool
            ));
        }
        sent.push(call.node);
    }
    Ok(sent)
}

/// The processes crash points of one case run on: one that crashes, one that takes a run over
/// and crashes again (for double crashes), and one that resumes it to its end.
pub struct Bench<'c> {
    case: &'c Case,
    lab: Arc<Lab>,
    crashing: Process,
    interrupting: Process,
    resuming: Process,
    classes: BTreeMap<String, ExecutionClass>,
    bounds: LoopBounds,
}

impl<'c> Bench<'c> {
    pub fn new(case: &'c Case) -> Bench<'c> {
        let lab = Lab::new((case.tools)());
        let crashing = Process::new(case, &lab, Worker::Crashed);
        let interrupting = Process::new(case, &lab, Worker::Interrupted);
        let resuming = Process::new(case, &lab, Worker::Resumed);
        let classes = crashing.classes();
        let bounds = LoopBounds::of(crashing.program.compiled().program(), case.settings.default_loop_limit);
        Bench { case, lab, crashing, interrupting, resuming, classes, bounds }
    }

    /// Runs the case without a crash; resuming the ended run dispatches nothing.
    pub fn reference(&self) -> Reference {
        let world = World::new((self.case.tools)());
        self.lab.prepare(world.clone(), None);
        let handle = self.crashing.start();
        let run = handle.run_id().clone();
        let outcome = match self.crashing.wait(handle) {
            Ok(Ok(outcome)) => outcome,
            other => {
                panic!("{}: the crash-free run did not end: {other:?}\n{}", self.case.name, self.case.source)
            }
        };
        world.stop(Worker::Crashed);
        let resumed =
            self.resuming.runtime.recovery(&self.resuming.program, &run, self.resuming.options.clone());
        let resumed = self.resuming.wait(resumed.expect("the ended run recovers").resume());
        match resumed {
            Ok(Ok(again)) => assert_eq!(ending(&again), ending(&outcome), "{}", self.case.name),
            other => panic!("{}: resuming the ended run: {other:?}", self.case.name),
        }
        let calls = world.received().into_iter().filter(|r| r.from == Worker::Resumed).count();
        assert_eq!(calls, 0, "{}: resuming the ended run dispatched calls", self.case.name);
        let appends = self.lab.trial(&run).accepted();
        self.lab.forget(&run);
        Reference { ending: ending(&outcome), appends }
    }

    /// Crashes the case after append `point`, recovers and resumes the run, and checks it.
    pub fn crash_at(&self, reference: &Reference, point: usize) -> Result<Tally, String> {
        let world = World::new((self.case.tools)());
        self.lab.prepare(world.clone(), Some(point));
        let handle = self.crashing.start();
        let run = handle.run_id().clone();
        let checked = self.crashed(reference, &run, handle, &world, None);
        self.lab.forget(&run);
        checked
    }

    /// Crashes the case after append `point`, lets another worker take the run over and crash
    /// `second` appends later, then recovers and resumes the run, and checks it.
    pub fn crash_twice_at(
        &self,
        reference: &Reference,
        point: usize,
        second: usize,
    ) -> Result<Tally, String> {
        let world = World::new((self.case.tools)());
        self.lab.prepare(world.clone(), Some(point));
        let handle = self.crashing.start();
        let run = handle.run_id().clone();
        let checked = self.crashed(reference, &run, handle, &world, Some(second));
        self.lab.forget(&run);
        checked
    }

    fn crashed(
        &self,
        reference: &Reference,
        run: &RunId,
        handle: RunHandle,
        world: &World,
        second: Option<usize>,
    ) -> Result<Tally, String> {
        self.crashing.wait(handle).map_err(|e| format!("before the crash: {e}"))?.ok();
        // The process is gone, and with it every call it had not handed to the tools.
        world.stop(Worker::Crashed);
        let trial = self.lab.trial(run);
        let mut tally = Tally { points: 1, ..Tally::default() };
        let mut earlier = vec![Worker::Crashed];
        if let Some(more) = second {
            // Another worker takes the run over and crashes `more` appends later.
            trial.allow(more);
            let Some(takeover) = self.take_over(&self.interrupting, run, world, &mut tally)? else {
                return self.start_again(reference, world).map(|()| tally);
            };
            if let Some(handle) = takeover.handle {
                let _ = self.interrupting.wait(handle)?;
            }
            world.stop(Worker::Interrupted);
            repeats(world, &takeover.prefix, &earlier, Worker::Interrupted)
                .map_err(|e| format!("after the first crash: {e}"))?;
            earlier.push(Worker::Interrupted);
        }
        let Some(takeover) = self.take_over(&self.resuming, run, world, &mut tally)? else {
            return self.start_again(reference, world).map(|()| tally);
        };
        let Takeover { handle, prefix, in_flight } = takeover;
        let handle = handle.ok_or("the resuming worker's journal does not crash")?;
        let resumed = match self.resuming.wait(handle)? {
            Ok(outcome) => ending(&outcome),
            Err(error) => return Err(format!("the resumed run's journal failed: {error}")),
        };
        // The resuming process is done with the run: calls its run prepared before it ended reach
        // the tools no more.
        world.stop(Worker::Resumed);
        if resumed != reference.ending {
            return Err(format!("the resumed run {resumed}, the crash-free one {}", reference.ending));
        }
        let again = repeats(world, &prefix, &earlier, Worker::Resumed)?;
        tally.redispatched += again.iter().filter(|node| in_flight.contains_key(*node)).count();
        let mut sent: BTreeMap<_, Vec<String>> = BTreeMap::new();
        for call in world.received().into_iter().filter(|r| needs_decision(self.classes[r.tool.as_str()])) {
            sent.entry(call.operation).or_default().push(call.node);
        }
        if let Some((operation, nodes)) = sent.iter().find(|(_, nodes)| nodes.len() > 1) {
            return Err(format!(
                "the at-most-once or unsafe operation {operation} was dispatched {} times: {nodes:?}",
                nodes.len()
            ));
        }
        let mut whole = prefix;
        whole.extend(self.resuming.events(&trial, run, whole.len()));
        self.bounds.check(&whole)?;
        let core = self.resuming.runtime.core(&self.resuming.program, &self.resuming.options);
        let replayed =
            replay(core, &whole).map_err(|e| format!("the resumed journal does not replay: {e}"))?;
        let calls: Vec<&str> = replayed.in_flight.iter().map(|r| &*r.node_id).collect();
        match replayed.outcome.as_ref().map(ending) {
            Some(end) if end == reference.ending && calls.is_empty() => Ok(tally),
            end => Err(format!(
                "{}\nreplaying the resumed journal ends {end:?} with calls {calls:?} to dispatch",
                whole
                    .iter()
                    .enumerate()
                    .map(|(i, e)| format!("{} {e:?}", i + 1))
                    .collect::<Vec<_>>()
                    .join("\n")
            )),
        }
    }

    /// `process` takes the run over as a host would: it recovers the run from what the journal
    /// holds (checking that exactly the at-most-once and unsafe calls prepared without an
    /// outcome are reported uncertain), decides those the way a host does after asking the
    /// provider, and resumes it. `None` for a run whose start was never committed.
    fn take_over(
        &self,
        process: &Process,
        run: &RunId,
        world: &World,
        tally: &mut Tally,
    ) -> Result<Option<Takeover>, String> {
        let prefix = process.events(&self.lab.trial(run), run, 0);
        let in_flight = left_dispatching(&prefix);
        tally.with_calls_in_flight = usize::from(tally.with_calls_in_flight > 0 || !in_flight.is_empty());
        let mut recovery = match process.runtime.recovery(&process.program, run, process.options.clone()) {
            Ok(recovery) => recovery,
            Err(refused) if refused.code() == codes::RUN_NOT_STARTED && prefix.is_empty() => return Ok(None),
            Err(refused) => return Err(format!("recovery refused the journal: {refused}")),
        };
        match recovery.snapshot() {
            SnapshotUse::Restored { .. } => tally.from_snapshot = 1,
            SnapshotUse::None => {}
            SnapshotUse::Refused { upto_seq, reason } => {
                return Err(format!("the run's own snapshot at {upto_seq} was refused: {reason}"));
            }
        }
        let uncertain = recovery.uncertain_operations();
        let expected: BTreeSet<&str> = in_flight
            .iter()
            .filter(|(_, tool)| needs_decision(self.classes[tool.as_str()]))
            .map(|(node, _)| node.as_str())
            .collect();
        let reported: BTreeSet<&str> =
            uncertain.iter().filter(|op| needs_decision(op.class)).map(|op| op.node_id.as_str()).collect();
        if expected != reported {
            return Err(format!(
                "the at-most-once and unsafe calls prepared without an outcome are {expected:?}, but recovery reports {reported:?} uncertain"
            ));
        }
        for operation in uncertain.iter().filter(|op| needs_decision(op.class)) {
            let id = &operation.operation_id;
            let decided = match world.outcome_of(id) {
                Some(Ok(value)) => recovery.resolve(id, Resolution::Applied(value)),
                Some(Err(error)) => recovery.resolve(id, Resolution::Failed(error)),
                None if operation.class == ExecutionClass::AtMostOnce => {
                    recovery.resolve(id, Resolution::NotApplied)
                }
                None => recovery.authorize_fresh_generation(id).map(|_| ()),
            };
            match decided {
                Ok(()) => tally.decisions += 1,
                // A worker whose journal crashes may crash while it journals its decisions.
                Err(crash) if crash.code() == codes::JOURNAL_STORAGE && process.crashes => {
                    return Ok(Some(Takeover { handle: None, prefix, in_flight }));
                }
                Err(e) => {
                    return Err(format!(
                        "the host's decision about `{}` was refused: {e}",
                        operation.node_id
                    ));
                }
            }
        }
        Ok(Some(Takeover { handle: Some(recovery.resume()), prefix, in_flight }))
    }

    /// What a host does with a run that never started: nothing reached its tools, so it starts
    /// the run again.
    fn start_again(&self, reference: &Reference, world: &World) -> Result<(), String> {
        if let Some(call) = world.received().first() {
            return Err(format!("`{}` was dispatched by a run whose start was never committed", call.node));
        }
        let again = World::new((self.case.tools)());
        self.lab.prepare(again, None);
        let handle = self.crashing.start();
        let run = handle.run_id().clone();
        let ended = self.crashing.wait(handle);
        self.lab.forget(&run);
        match ended? {
            Ok(outcome) if ending(&outcome) == reference.ending => Ok(()),
            other => Err(format!(
                "started again, the run ended {other:?}, the crash-free one {}",
                reference.ending
            )),
        }
    }
}
