//! The async shell around one run's core: it appends each event batch to the journal and only
//! after the commit publishes the events and dispatches calls (invariant 7); tool answers come
//! back to the core through one channel, so the run's journal writes stay serialized.

use std::collections::BTreeMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use futures_util::FutureExt;
use futures_util::future::Either;
use smallvec::SmallVec;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::call_permits::CallPermits;
use super::core::{
    BUFFER_KEPT, CallHandle, CallRequest, Effect, Input, Outcome, RunCore, SampleRequest, TimerHandle,
};
use super::event::{Event, unix_ms};
use super::executor::{
    CallContext, HostData, RecoveryOutcome, RecoveryRequest, ToolCall, ToolError, ToolExecutor, ToolOutput,
};
use super::identity::{OperationComponents, OperationId};
use super::metrics::Metrics;
use super::permits::{PermitRequest, PermitWaits, RunPermits};
use super::progress::{Heartbeat, Reports};
use super::replay::{Ledger, Resumed};
use super::retry::{RetryClassifier, classify, panicked_error, timeout_error, uncertain_error};
use super::sampler::Sampler;
use super::snapshot::{SnapshotPolicy, Snapshots};
use super::trace;
use crate::analyze::WorkflowIdentity;
use crate::diag::codes;
use crate::journal::{Blob, Bytes, Journal, JournalError, JournalErrorKind, Record, RunId};
use crate::registry::Registry;
use crate::schema::{ExecutionClass, SchemaArena, ToolDescriptor, labels_of, validate};
use crate::value::{Labelled, List};

/// Everything outside the core that one run talks to.
#[derive(Clone)]
pub struct RunEnvironment {
    pub run_id: RunId,
    pub workflow: Arc<WorkflowIdentity>,
    pub registry: Arc<Registry>,
    pub journal: Arc<dyn Journal>,
    pub executor: Arc<dyn ToolExecutor>,
    /// Receives every committed batch of events, in order, with the sequence number of its
    /// first. Bounded: a run never gets further ahead of its observer than the channel holds.
    pub observer: Option<mpsc::Sender<CommittedBatch>>,
    /// Fired by the host to cancel the run.
    pub cancel: CancellationToken,
    /// The run's `wall_clock_ms` limit: past it, the core is told the time is up.
    pub wall_clock: Option<Duration>,
    /// The permits each call must hold while it runs (spec §4.5); `None` when nothing is capped.
    pub permits: Option<RunPermits>,
    /// Told which calls wait for permits, so observers can tell them from calls waiting for data
    /// (spec §6.3); waits for permits are not journaled.
    pub permit_waits: Option<Arc<dyn PermitWaits>>,
    /// The host's retryable classification of tool errors, applied before they are journaled.
    pub retry_classifier: Option<RetryClassifier>,
    /// Samples the run's nondeterministic intrinsics.
    pub sampler: Arc<dyn Sampler>,
    /// When to write snapshots of the run (spec §5.3); `None` writes none.
    pub snapshots: Option<SnapshotPolicy>,
    /// Values of more than this many bytes go to the journal as blobs apart from their records
    /// (a journal that [keeps blobs](Journal::keeps_blobs)); `None` keeps every value inline.
    pub blobs_above: Option<usize>,
    /// The span of the process driving the run (`runlet.session`); its calls' spans are its
    /// children. [`Span::none`](tracing::Span::none) when the host does not trace.
    pub span: tracing::Span,
    /// The runtime's metrics instruments.
    pub metrics: Arc<Metrics>,
    /// The host's data for the run's calls ([`CallContext::host_data`]).
    pub host_data: Option<HostData>,
}

impl std::fmt::Debug for RunEnvironment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunEnvironment").field("run_id", &self.run_id).finish_non_exhaustive()
    }
}

/// Drives `core` from `Start { inputs }` to its end. A journal failure stops the run: nothing
/// that was not committed is acted on. Under a `wall_clock_ms` limit the clock's start is
/// journaled first thing after the start, so a resumed run keeps counting from it.
pub async fn drive(
    core: RunCore,
    env: RunEnvironment,
    inputs: Vec<Labelled>,
) -> Result<Outcome, JournalError> {
    let shell = Shell::new(env, 0, Duration::ZERO, Ledger::default());
    if shell.env.wall_clock.is_some() {
        let started_unix_ms = unix_ms(SystemTime::now());
        let _ = shell.answers.send(Input::WallClockStarted { started_unix_ms });
    }
    // Boxed, the shell's future (some 6 KB) is moved once, not with every future around it.
    Box::pin(shell.run(core, Input::Start { inputs })).await
}

/// Continues a run that [`replay`](super::replay) brought up to its journal's end, appending
/// after it. A run the journal records as ended (a cancelled run included) stays ended and
/// dispatches nothing; otherwise pending timers keep their journaled deadlines (spec §5.3),
/// unanswered samples are taken now, and calls left dispatching are recovered by execution
/// class (spec §5.4). The `wall_clock_ms` limit counts from the run's start as the journal
/// records it (from the resumption for a journal that does not): a run whose time is already
/// up fails at once, recovering nothing.
pub async fn resume(resumed: Resumed, env: RunEnvironment) -> Result<Outcome, JournalError> {
    if let Some(outcome) = resumed.outcome {
        return Ok(outcome);
    }
    let already_ran = resumed.started_unix_ms.map_or(Duration::ZERO, |started| {
        Duration::from_millis(unix_ms(SystemTime::now()).saturating_sub(started))
    });
    let mut shell = Shell::new(env, resumed.last_seq, already_ran, resumed.ledger);
    let first = match shell.env.wall_clock {
        Some(cap) if already_ran > cap => {
            // The core ends the run before recovering anything, and then ignores the `Resume`.
            let _ = shell.answers.send(Input::Resume);
            Input::WallClockExpired { elapsed_ms: whole_ms(already_ran) }
        }
        _ => Input::Resume,
    };
    for pending in resumed.timers {
        let remaining = match pending.deadline_unix_ms {
            Some(deadline) => Duration::from_millis(deadline.saturating_sub(unix_ms(SystemTime::now()))),
            None => {
                shell.arm(pending.timer, pending.delay);
                pending.delay
            }
        };
        shell.schedule(pending.timer, remaining);
    }
    for request in resumed.unsampled {
        shell.sample(request);
    }
    Box::pin(shell.run(resumed.core, first)).await
}

/// Events the journal has committed, with the sequence number of the first: what the shell
/// hands the run's observer after each append.
pub type CommittedBatch = (u64, Vec<Event>);

/// At most this many inputs are reacted to before their events are appended.
const ROUND_INPUTS: usize = 256;

/// The most room a round's encoding buffer starts with; a larger round's buffer grows as it
/// fills.
const ENCODING_ROOM_MAX: usize = 1 << 20;

/// What the inputs of one round caused: their events, in order, and their other effects, in
/// order, which act once the events have committed.
#[derive(Default)]
struct Round {
    inputs: usize,
    events: Vec<Event>,
    effects: Vec<Effect>,
    /// Calls the round's inputs granted permits to.
    granted: Vec<CallHandle>,
}

impl Round {
    /// A round with room for as many events and effects as `last` had: rounds of a loop are
    /// alike, and a batch grown event by event moves itself again at every doubling.
    fn like(last: (usize, usize)) -> Round {
        let (events, effects) = last;
        Round { events: Vec::with_capacity(events), effects: Vec::with_capacity(effects), ..Round::default() }
    }
}

/// A round's append on its way to the disk: the journal's answer, and what waits for it.
type Commit = std::pin::Pin<Box<dyn Future<Output = Result<(Record, usize), JournalError>> + Send>>;

/// A round whose events are being appended, and the effects that wait for their commit.
struct InFlight {
    commit: Commit,
    /// A snapshot is due once this commit returns, so no input is reacted to meanwhile.
    quiet: bool,
    effects: Vec<Effect>,
    granted: Vec<CallHandle>,
}

/// What woke a shell waiting for its next input.
enum Woken {
    Cancelled,
    Expired,
    Input(Input),
}

/// What the core is told from outside its inputs, once each: the host cancelled the run, or its
/// `wall_clock_ms` limit passed.
struct Interrupts {
    started: tokio::time::Instant,
    already_ran: Duration,
    /// The limit, inclusive: the run may take exactly the cap, so the timer fires one
    /// millisecond past it.
    cap: Option<Duration>,
    /// Fires at the cap; never without one.
    deadline: std::pin::Pin<Box<dyn Future<Output = ()> + Send>>,
    cancel_sent: bool,
    deadline_sent: bool,
}

impl Interrupts {
    fn new(wall_clock: Option<Duration>, already_ran: Duration) -> Interrupts {
        let started = tokio::time::Instant::now();
        let cap = wall_clock.map(|cap| cap + Duration::from_millis(1));
        let deadline: std::pin::Pin<Box<dyn Future<Output = ()> + Send>> = match cap {
            Some(cap) => Box::pin(tokio::time::sleep_until(started + cap.saturating_sub(already_ran))),
            None => Box::pin(std::future::pending()),
        };
        Interrupts { started, already_ran, cap, deadline, cancel_sent: false, deadline_sent: false }
    }

    fn cancelled(&mut self) -> Input {
        self.cancel_sent = true;
        Input::CancelRequested
    }

    fn expired(&mut self) -> Input {
        self.deadline_sent = true;
        Input::WallClockExpired { elapsed_ms: whole_ms(self.elapsed()) }
    }

    /// The host's cancellation or the deadline when either is due and not told yet, without
    /// waiting: a run whose inputs never run out (calls answered inline, commits on its own
    /// thread) never waits in [`Shell::next_input`].
    fn due(&mut self, cancel: &CancellationToken) -> Option<Input> {
        if !self.cancel_sent && cancel.is_cancelled() {
            return Some(self.cancelled());
        }
        let ran = self.already_ran.saturating_add(self.started.elapsed());
        if !self.deadline_sent && self.cap.is_some_and(|cap| ran >= cap) {
            return Some(self.expired());
        }
        None
    }

    /// How long the run has run, counted as at least its cap once the deadline fired.
    fn elapsed(&self) -> Duration {
        self.already_ran.saturating_add(self.started.elapsed()).max(self.cap.unwrap_or_default())
    }
}

/// One run's effect executor: its journal position, the tokens of its calls and its timers.
struct Shell {
    /// Shared with each round's append on its way to the disk.
    env: Arc<RunEnvironment>,
    answers: mpsc::UnboundedSender<Input>,
    incoming: mpsc::UnboundedReceiver<Input>,
    tokens: BTreeMap<CallHandle, CancellationToken>,
    /// How many calls went to tasks of their own (still pending after their first poll, or
    /// their executor does not answer inline).
    calls_on_tasks: u64,
    /// Calls whose executor does not support cancellation, with their tool's name: cancelling
    /// one detaches it at once instead of waiting for an acknowledgement (spec §4.6).
    undeliverable: BTreeMap<CallHandle, Arc<str>>,
    timers: BTreeMap<TimerHandle, JoinHandle<()>>,
    /// The calls waiting for permits, and permits granted and not yet dispatched.
    permits: CallPermits,
    /// The last record handed to the journal (committed, or in the commit on its way).
    last_seq: u64,
    /// The host's cancellation and the wall-clock deadline.
    interrupts: Interrupts,
    /// How many bytes an event of the last append took, on average: the next append's buffer
    /// starts that large for each of its events, and a little more.
    bytes_per_event: usize,
    /// The effects of the reaction being applied, other than its events (which the core
    /// records straight into the round's batch).
    reacted: Vec<Effect>,
    /// How many events and effects the last round appended had.
    last_round: (usize, usize),
    snapshots: Option<Snapshots>,
    /// The progress its calls reported and it has not yet reacted to.
    reports: Arc<Reports>,
    /// The spans of the run's open boundary attempts and loops.
    scopes: trace::ScopeSpans,
}

impl Shell {
    /// The shell of a run whose journal ends at `last_seq`, where replay kept `ledger`.
    fn new(env: RunEnvironment, last_seq: u64, already_ran: Duration, ledger: Ledger) -> Shell {
        let (answers, incoming) = mpsc::unbounded_channel::<Input>();
        let (tokens, timers) = (BTreeMap::new(), BTreeMap::new());
        let permits =
            CallPermits::new(env.permits.clone(), env.permit_waits.clone(), Arc::clone(&env.metrics));
        let snapshots = env.snapshots.clone().map(|policy| Snapshots::new(policy, ledger));
        let reports = Reports::new(answers.clone());
        let scopes = trace::ScopeSpans::new(&env.span);
        let interrupts = Interrupts::new(env.wall_clock, already_ran);
        Shell {
            reports,
            scopes,
            snapshots,
            permits,
            env: Arc::new(env),
            answers,
            incoming,
            tokens,
            calls_on_tasks: 0,
            undeliverable: BTreeMap::new(),
            timers,
            last_seq,
            interrupts,
            bytes_per_event: 0,
            reacted: Vec::new(),
            last_round: (0, 0),
        }
    }

    /// Drives the core from `first` to its end. While one round's events are on the disk, the
    /// inputs that arrive meanwhile are reacted to, so the next round is ready to append as
    /// soon as that commit returns; every effect still waits for the commit of its own round and
    /// of every round before it.
    async fn run(mut self, mut core: RunCore, first: Input) -> Result<Outcome, JournalError> {
        let mut next = Some(first);
        let mut in_flight: Option<InFlight> = None;
        loop {
            let mut round = Round::like(self.last_round);
            if in_flight.is_none() {
                let input = match next.take() {
                    Some(input) => input,
                    None => match self.next_input().await {
                        Some(input) => input,
                        None => return Ok(Outcome::Cancelled),
                    },
                };
                self.react(&mut core, input, &mut round);
            }
            if let Some(flight) = in_flight.take() {
                let committed = if flight.quiet {
                    // A snapshot follows this commit: it must see the core as the commit left it.
                    Some(flight.commit.await)
                } else {
                    self.react_until(&mut core, &mut round, flight.commit).await
                };
                let Some(committed) = committed else { return Ok(Outcome::Cancelled) };
                let (last, bytes) = committed?;
                if let Some(snapshots) = &mut self.snapshots {
                    let journal = self.env.journal.as_ref();
                    snapshots.after_commit(journal, &self.env.run_id, &core, &last, bytes).await;
                }
                self.scopes.apply(&self.env.span);
                let dispatches = flight.effects.iter().any(|effect| matches!(effect, Effect::Dispatch(_)));
                let on_tasks = self.calls_on_tasks;
                if let Some(outcome) = self.settle(flight.effects, flight.granted) {
                    return Ok(outcome);
                }
                if dispatches {
                    // Calls on tasks of their own whose executor answers at once do so now;
                    // those that answered in their first poll have sent their answers already,
                    // and the run yields only once its cooperative budget is spent. Either way
                    // the answers share the next commit instead of waiting for the one after it.
                    if self.calls_on_tasks > on_tasks {
                        tokio::task::yield_now().await;
                    } else {
                        tokio::task::coop::consume_budget().await;
                    }
                    self.drain(&mut core, &mut round);
                }
            } else {
                self.drain(&mut core, &mut round);
            }
            if round.events.is_empty() {
                if let Some(outcome) = self.settle(round.effects, round.granted) {
                    return Ok(outcome);
                }
            } else {
                in_flight = Some(self.start_append(round));
            }
        }
    }

    /// Reacts to the host's cancellation or the deadline if due, then to the inputs that are
    /// already queued, up to a round's worth.
    fn drain(&mut self, core: &mut RunCore, round: &mut Round) {
        if !core.is_finished()
            && let Some(interrupt) = self.interrupts.due(&self.env.cancel)
        {
            self.react(core, interrupt, round);
        }
        while round.inputs < ROUND_INPUTS && !core.is_finished() {
            match self.incoming.try_recv() {
                Ok(input) => self.react(core, input, round),
                Err(_) => break,
            }
        }
    }

    /// Waits for `commit`, reacting meanwhile (up to a round's worth) to the inputs that
    /// arrive; `None` once nothing can send inputs any more.
    async fn react_until(
        &mut self,
        core: &mut RunCore,
        round: &mut Round,
        mut commit: Commit,
    ) -> Option<Result<(Record, usize), JournalError>> {
        self.drain(core, round);
        loop {
            let open = round.inputs < ROUND_INPUTS && !core.is_finished();
            let input = tokio::select! {
                biased;
                committed = &mut commit => return Some(committed),
                input = self.next_input(), if open => input?,
            };
            self.react(core, input, round);
            self.drain(core, round);
        }
    }

    /// Waits for the run's next input: the host's cancellation and the wall-clock deadline
    /// first (each told once), then what its calls, timers and permits sent. `None` once
    /// nothing can send any more.
    async fn next_input(&mut self) -> Option<Input> {
        let interrupts = &mut self.interrupts;
        let woken = tokio::select! {
            biased;
            _ = self.env.cancel.cancelled(), if !interrupts.cancel_sent => Woken::Cancelled,
            _ = interrupts.deadline.as_mut(), if !interrupts.deadline_sent => Woken::Expired,
            answer = self.incoming.recv() => Woken::Input(answer?),
        };
        Some(match woken {
            Woken::Cancelled => interrupts.cancelled(),
            Woken::Expired => interrupts.expired(),
            Woken::Input(input) => input,
        })
    }

    /// Hands `round`'s events to the journal; what the round caused waits in the answer.
    fn start_append(&mut self, round: Round) -> InFlight {
        self.last_round = (round.events.len(), round.effects.len());
        self.scopes.follow(&round.events);
        // Rounds differ in size more than in the kinds of their events: room for each event as
        // large as the last round's average, and an eighth more, seldom has to grow. One large
        // value must not make every later round reserve room for as many.
        let capacity = (round.events.len() * self.bytes_per_event * 9 / 8).min(ENCODING_ROOM_MAX);
        let (records, blobs) = records_after(self.last_seq, &round.events, capacity, self.env.blobs_above);
        let bytes = records.iter().map(|record| record.bytes.len()).sum();
        self.bytes_per_event = bytes / records.len().max(1);
        let after = self.last_seq;
        self.last_seq += records.len() as u64;
        let quiet = self.snapshots.as_ref().is_some_and(|snapshots| snapshots.due(self.last_seq, bytes));
        let commit = Box::pin(append(Arc::clone(&self.env), after, round.events, records, blobs, bytes));
        InFlight { commit, quiet, effects: round.effects, granted: round.granted }
    }

    /// Carries out `effects`, whose events have committed; the run's outcome once it ends.
    fn settle(&mut self, effects: Vec<Effect>, granted: Vec<CallHandle>) -> Option<Outcome> {
        for effect in effects {
            if let Some(outcome) = self.act(effect) {
                return Some(outcome);
            }
        }
        // A grant the core did not dispatch (the call was cancelled meanwhile, or crossed a
        // limit) gives its permits back.
        for call in granted {
            self.permits.withdraw(call);
        }
        None
    }

    /// Applies `input` to the core, adding its events and its other effects to `round`.
    fn react(&mut self, core: &mut RunCore, mut input: Input, round: &mut Round) {
        // A heartbeat carries the report that queued it; later ones replaced it meanwhile.
        if let Input::CallHeartbeat { call, progress } = &mut input
            && let Some(latest) = self.reports.take(*call)
        {
            *progress = latest;
        }
        if let Input::ToolCompleted { call, .. } | Input::ToolFailed { call, .. } = &input {
            self.tokens.remove(call);
            self.undeliverable.remove(call);
        }
        round.inputs += 1;
        if let Input::PermitsGranted { call } = &input {
            round.granted.push(*call);
        }
        if let Some(snapshots) = &mut self.snapshots {
            snapshots.reacting();
        }
        // The core records its events straight into the round's batch.
        let recorded = round.events.len();
        core.react_into(input, &mut round.events, &mut self.reacted);
        if let Some(snapshots) = &mut self.snapshots {
            snapshots.recorded(self.last_seq + recorded as u64, &round.events[recorded..]);
        }
        for effect in self.reacted.drain(..) {
            if let Some(snapshots) = &mut self.snapshots {
                snapshots.effect(&effect);
            }
            match effect {
                Effect::EnterScope { scope, node, parent, kind } => {
                    self.scopes.began(scope, node, parent, kind)
                }
                effect => round.effects.push(effect),
            }
        }
        // A wide loop's burst of dispatches is not kept for the rest of the run.
        self.reacted.shrink_to(BUFFER_KEPT);
    }

    /// Carries out one effect whose events have committed; the run's outcome once it ends.
    fn act(&mut self, effect: Effect) -> Option<Outcome> {
        match effect {
            // The core records its events into the round's one append (`react_into` makes no
            // `Append`), and `react` hands the scopes that began to the round's spans.
            Effect::Append(_) | Effect::EnterScope { .. } => {}
            Effect::Dispatch(request) => {
                let call = request.call;
                let name = &self.env.registry.tool(request.tool).name;
                let capabilities = self.env.executor.capabilities(name.as_str());
                let permit = self.permits.take(call);
                let heartbeat = self.reports.heartbeat(call);
                let parent = self.scopes.parent_of(request.scope, &self.env.span).clone();
                let answers = self.answers.clone();
                let inline = capabilities.answers_inline;
                // A call answered in its first poll has nothing left to cancel.
                if let Some(token) =
                    spawn_call(&self.env, &parent, request, heartbeat, permit, answers, inline)
                {
                    if !capabilities.cancellation {
                        self.undeliverable.insert(call, name.shared());
                    }
                    self.tokens.insert(call, token);
                    self.calls_on_tasks += 1;
                }
            }
            Effect::AwaitPermits { call, tool, node_id } => {
                self.permits.request(call, tool, node_id, &self.answers);
            }
            Effect::Cancel(call) => {
                self.permits.withdraw(call);
                if let Some(token) = self.tokens.remove(&call) {
                    token.cancel();
                }
                if let Some(tool) = self.undeliverable.remove(&call) {
                    let error = ToolError::cancellation_not_delivered(&tool);
                    let _ = self.answers.send(Input::ToolFailed { call, error });
                }
            }
            Effect::StartTimer { timer, delay } => {
                self.arm(timer, delay);
                self.schedule(timer, delay);
            }
            Effect::CancelTimer(timer) => {
                if let Some(task) = self.timers.remove(&timer) {
                    task.abort();
                }
            }
            Effect::Sample(request) => self.sample(request),
            // Sent through the channel, behind what already arrived, and read only after the
            // loop's checks of cancellation and the deadline.
            Effect::Yield => {
                let _ = self.answers.send(Input::Continue);
            }
            Effect::Finish(outcome) => {
                self.permits.withdraw_all();
                for token in self.tokens.values() {
                    token.cancel();
                }
                for task in self.timers.values() {
                    task.abort();
                }
                return Some(outcome);
            }
        }
        None
    }

    /// Samples a nondeterministic intrinsic once; the core journals the answer.
    fn sample(&self, request: SampleRequest) {
        let answer = self.env.sampler.sample(request.function, &request.node_id);
        let _ = self.answers.send(Input::Sampled { call: request.call, answer });
    }

    /// Tells the core the wall-clock deadline of `timer`, so the journal keeps it.
    fn arm(&self, timer: TimerHandle, delay: Duration) {
        // A delay past the clock's range (a tool may ask for any `retry_after`) never fires.
        let deadline_unix_ms = SystemTime::now().checked_add(delay).map_or(u64::MAX, unix_ms);
        let _ = self.answers.send(Input::TimerArmed { timer, deadline_unix_ms });
    }

    /// Fires `timer` after `delay` on the tokio clock.
    fn schedule(&mut self, timer: TimerHandle, delay: Duration) {
        let answers = self.answers.clone();
        let task = tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            let _ = answers.send(Input::TimerFired { timer });
        });
        self.timers.insert(timer, task);
    }
}

fn whole_ms(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// Appends `records` (at least one, `bytes` in all), the encoding of `events`, after `last_seq`,
/// then hands the events to the run's observer; answers the last record and `bytes`.
async fn append(
    env: Arc<RunEnvironment>,
    last_seq: u64,
    events: Vec<Event>,
    mut records: Vec<Record>,
    blobs: Vec<Blob>,
    bytes: usize,
) -> Result<(Record, usize), JournalError> {
    let started = std::time::Instant::now();
    let committed = env.journal.append_with_blobs(&env.run_id, last_seq, &records, &blobs).await?;
    env.metrics.appended(started.elapsed(), blobs.iter().map(|blob| blob.bytes.len()).sum());
    env.metrics.committed(&events);
    if let Some(observer) = &env.observer {
        // An observer that is gone has no one to tell.
        let _ = observer.send((last_seq + 1, events)).await;
    }
    let last =
        records.pop().ok_or_else(|| JournalError::new(JournalErrorKind::InvalidRecord, "an empty append"))?;
    debug_assert_eq!(last.seq, committed);
    Ok((last, bytes))
}

/// The journal records of `events` appended after sequence number `last_seq`, encoded one
/// after another into one buffer (started with `capacity`) whose slices they are, and the blobs
/// they name: values of more than `blobs_above` bytes, when given, are recorded as references
/// to blobs.
pub(crate) fn records_after(
    last_seq: u64,
    events: &[Event],
    capacity: usize,
    blobs_above: Option<usize>,
) -> (Vec<Record>, Vec<Blob>) {
    let mut blobs = Vec::new();
    let mut buffer = Vec::with_capacity(capacity);
    let mut ends = SmallVec::<[usize; 16]>::with_capacity(events.len());
    for (offset, event) in events.iter().enumerate() {
        let seq = last_seq + 1 + offset as u64;
        match blobs_above.and_then(|threshold| event.detached(threshold)) {
            Some((detached, blob)) => {
                detached.encode_appended(seq, &mut buffer);
                blobs.push(blob);
            }
            None => event.encode_appended(seq, &mut buffer),
        }
        ends.push(buffer.len());
    }
    let buffer = Bytes::from(buffer);
    let mut start = 0;
    let records = (last_seq + 1..)
        .zip(ends)
        .map(|(seq, end)| {
            let record = Record { seq, bytes: buffer.slice(start..end) };
            start = end;
            record
        })
        .collect();
    (records, blobs)
}

/// The operation id of `request`, a call of `workflow` to `tool` (spec §4.2).
pub(crate) fn operation_of(
    workflow: &WorkflowIdentity,
    tool: &ToolDescriptor,
    request: &CallRequest,
) -> OperationId {
    OperationId::derive(&OperationComponents {
        workflow,
        call_site: &request.call_site,
        dynamic_key: &request.dynamic_key,
        schema_version: &tool.schema_version,
        input_digest: &request.input_digest,
        generation: request.operation_generation,
    })
}

/// Checks resolved arguments against the tool's call shapes (spec §7.2: validated immediately
/// before dispatch): the single object argument, else the positional parameters.
fn check_arguments(schemas: &SchemaArena, tool: &ToolDescriptor, arguments: &List) -> Result<(), String> {
    let values = arguments.iter().as_slice();
    let mut failure = None;
    if let Some(object) = tool.input.object {
        match values {
            [] => return Ok(()),
            [only] => match validate(schemas, object, only) {
                Ok(()) => return Ok(()),
                Err(mismatch) => failure = Some(mismatch.to_string()),
            },
            _ => {}
        }
    }
    if let Some(params) = &tool.input.positional {
        if values.len() > params.len() {
            return Err(format!("{} arguments for {} parameters", values.len(), params.len()));
        }
        for (param, value) in params.iter().zip(values) {
            validate(schemas, param.schema, value)
                .map_err(|mismatch| format!("`{}` {mismatch}", param.name))?;
        }
        return Ok(());
    }
    Err(failure.unwrap_or_else(|| String::from("no call shape of the tool accepts them")))
}

/// Runs one call on its own task, holding its `permit` (granted before the core prepared the
/// dispatch) until it ends, and reports its answer to the core. The steps, in order: the call's
/// context ([`call_of`]), its arguments checked against the tool's input schema, the
/// executor's answer ([`answer_of`]: recovery first when the core asks for it, the host's
/// deadline around the dispatch), and that answer checked and labelled against the output
/// schema or classified as the host says ([`input_of`]). When the executor `answers_inline`
/// the call is polled once here first, and one whose answer is ready then has sent it and needs
/// no task. Answers the token that cancels it, or `None` when it answered in that first poll.
fn spawn_call(
    env: &RunEnvironment,
    parent: &tracing::Span,
    request: CallRequest,
    heartbeat: Heartbeat,
    permit: Option<PermitRequest>,
    answers: mpsc::UnboundedSender<Input>,
    answers_inline: bool,
) -> Option<CancellationToken> {
    // The task borrows the descriptor from the shared registry rather than copying it per call.
    let registry = Arc::clone(&env.registry);
    let handle = request.call;
    let (recover_first, timeout) = (request.recover_first, request.timeout);
    let call = call_of(env, registry.tool(request.tool), request, heartbeat);
    let token = call.context.cancellation.clone();
    let cancels = token.clone();
    let checked = check_arguments(registry.schemas(), registry.tool(call.tool_id), &call.arguments);
    let executor = Arc::clone(&env.executor);
    let classifier = env.retry_classifier.clone();
    let metrics = Arc::clone(&env.metrics);
    let span = trace::call_span(parent, &call);
    let traced = span.clone();
    let task = async move {
        let tool = registry.tool(call.tool_id);
        if let Err(reason) = checked {
            let error = ToolError::new(
                codes::TOOL_INPUT_SCHEMA_MISMATCH.name(),
                format!(
                    "the call to `{}` was not sent: its arguments do not match its input schema: {reason}",
                    call.tool
                ),
            );
            trace::record_error(&span, &error);
            let _ = answers.send(Input::ToolFailed { call: handle, error });
            return;
        }
        let name = Arc::clone(&call.tool);
        metrics.call_started();
        let started = std::time::Instant::now();
        // A panicking executor fails its call instead of ending the task (or, polled inline,
        // the run's task) with no answer.
        let answering = answer_of(executor.as_ref(), call, tool.execution, recover_first, timeout, &token);
        let answered = AssertUnwindSafe(answering)
            .catch_unwind()
            .await
            .unwrap_or_else(|panic| Err(panicked_error(&name, tool.execution, panic.as_ref())));
        metrics.call_ended(&name, started.elapsed(), answered.is_ok());
        let answer = input_of(handle, &name, &registry, tool, classifier.as_ref(), answered);
        trace::record_answer(&span, &answer);
        let _ = answers.send(answer);
        // The call's permits (if it needed any) are held until here.
        drop(permit);
    };
    let task = task.instrument(traced);
    if answers_inline {
        let mut task = Box::pin(task);
        // Nothing needs waking: a call still pending goes on in its own task, whose first poll
        // registers that task's waker wherever the call waits.
        let mut first_poll = std::task::Context::from_waker(std::task::Waker::noop());
        if task.as_mut().poll(&mut first_poll).is_ready() {
            return None;
        }
        tokio::spawn(task);
    } else {
        tokio::spawn(task);
    }
    Some(cancels)
}

/// The call `request` of `tool` as its executor receives it: its identities, deadline and a
/// fresh cancellation token.
fn call_of(
    env: &RunEnvironment,
    tool: &ToolDescriptor,
    request: CallRequest,
    heartbeat: Heartbeat,
) -> ToolCall {
    let operation = request.operation.unwrap_or_else(|| operation_of(&env.workflow, tool, &request));
    let mut context = CallContext::new(
        env.run_id.clone(),
        request.node_id,
        request.attempt,
        operation,
        operation.dispatch_id(request.dispatch_generation),
        Arc::clone(&tool.schema_version),
    )
    .with_call_site(request.call_site, request.dynamic_key)
    .with_digest_key(request.digest_key.clone())
    .with_heartbeat(heartbeat)
    .with_host_data(env.host_data.clone());
    if let Some(deadline) = request.timeout.and_then(|t| tokio::time::Instant::now().checked_add(t)) {
        context = context.with_deadline(deadline);
    }
    ToolCall { tool: tool.name.shared(), tool_id: request.tool, arguments: request.arguments, context }
}

/// What the executor answers `call`: its recovery by operation id first when `recover_first`
/// (a call left dispatching by an earlier process), else a dispatch under the host's deadline.
/// Every call's task holds this future, so the usual dispatch is a chain of combinators (no
/// `async fn` state around it) and the rare recovery is boxed.
fn answer_of<'a>(
    executor: &'a dyn ToolExecutor,
    call: ToolCall,
    class: ExecutionClass,
    recover_first: bool,
    timeout: Option<Duration>,
    token: &'a CancellationToken,
) -> impl Future<Output = Result<ToolOutput, ToolError>> + Send + 'a {
    if recover_first {
        Either::Left(Box::pin(recovered_or_dispatched(executor, call, class, timeout, token)))
    } else {
        Either::Right(dispatched(executor, call, class, timeout, token))
    }
}

/// [`answer_of`] of a call left dispatching by an earlier process: its recovery by operation
/// id, then a dispatch if the executor tells that it was not applied.
async fn recovered_or_dispatched(
    executor: &dyn ToolExecutor,
    mut call: ToolCall,
    class: ExecutionClass,
    timeout: Option<Duration>,
    token: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let name = Arc::clone(&call.tool);
    let span = trace::dispatch_span(&mut call, true);
    let recovered = traced(executor.recover(RecoveryRequest { call: call.clone() }), span).await;
    match recovered {
        Ok(RecoveryOutcome::Succeeded(output)) => Ok(output),
        Ok(RecoveryOutcome::NotApplied) => dispatched(executor, call, class, timeout, token).await,
        Ok(RecoveryOutcome::Unknown | RecoveryOutcome::Unsupported) => {
            Err(uncertain_error(&name, "and recovery by operation id could not tell"))
        }
        Err(error) => Err(error),
    }
}

/// The executor's dispatch of `call` under its span, bounded by `timeout` when given (which
/// cancels the call's `token` as it fails it).
fn dispatched<'a>(
    executor: &'a dyn ToolExecutor,
    mut call: ToolCall,
    class: ExecutionClass,
    timeout: Option<Duration>,
    token: &'a CancellationToken,
) -> impl Future<Output = Result<ToolOutput, ToolError>> + Send + 'a {
    let span = trace::dispatch_span(&mut call, false);
    let name = Arc::clone(&call.tool);
    let dispatch = executor.dispatch(call);
    let bounded = match timeout {
        Some(timeout) => Either::Left(tokio::time::timeout(timeout, dispatch).map(move |answer| {
            answer.unwrap_or_else(|_| {
                token.cancel();
                Err(timeout_error(&name, class, timeout))
            })
        })),
        None => Either::Right(dispatch),
    };
    traced(bounded, span)
}

/// `invocation` of the executor under its dispatch `span`, which records a failure. A combinator
/// rather than an `async fn`, whose future would hold `invocation` twice (as its argument and
/// inside its instrumented state): every call's task holds this.
fn traced<T>(
    invocation: impl Future<Output = Result<T, ToolError>>,
    span: tracing::Span,
) -> impl Future<Output = Result<T, ToolError>> {
    let recorder = span.clone();
    invocation.instrument(span).inspect(move |answer| {
        if let Err(error) = answer {
            trace::record_error(&recorder, error);
        }
    })
}

/// The core's input for the answer to call `handle` of `tool`: an output its schema accepts,
/// labelled by that schema (spec §6.2), or the error, classified retryable or not by the
/// registry's declared codes and the host's classifier.
fn input_of(
    handle: CallHandle,
    name: &str,
    registry: &Registry,
    tool: &ToolDescriptor,
    classifier: Option<&RetryClassifier>,
    answered: Result<ToolOutput, ToolError>,
) -> Input {
    let schemas = registry.schemas();
    match answered {
        Ok(output) => match validate(schemas, tool.output, &output.value) {
            Ok(()) => {
                let labels = labels_of(schemas, tool.output, &output.value);
                Input::ToolCompleted { call: handle, value: Labelled::new(output.value, labels) }
            }
            Err(mismatch) => Input::ToolFailed {
                call: handle,
                error: ToolError::new(
                    codes::TOOL_OUTPUT_SCHEMA_MISMATCH.name(),
                    format!("`{name}` returned a value its output schema does not accept: {mismatch}"),
                )
                .with_details(mismatch.details()),
            },
        },
        Err(error) => Input::ToolFailed { call: handle, error: classify(tool, classifier, error) },
    }
}

#[cfg(test)]
mod tests {
    use async_trait::async_trait;

    use super::*;
    use crate::engine::core::{RunSettings, ToolTable};
    use crate::engine::executor::ToolOutput;
    use crate::engine::limits::{LimitKey, Limits};
    use crate::engine::testing::{appendix_b, list};
    use crate::journal::{MemoryJournal, RunHeader};
    use crate::plan::Plan;
    use crate::scripted::ScriptedExecutor;
    use crate::value::{DigestKey, Value, sha256};

    const FIXTURES: &str = r#"{
        "github.me": [{ "result": { "login": "octo" }, "delay_ms": 5 }],
        "linear.me": [{ "result": { "id": "u1" } }],
        "linear.issues": [{ "args": [{ "owner": "u1" }], "result": ["i1", "i2"] }],
        "github.prs": [{ "args": [{ "owner": "octo" }], "result": ["p1"] }]
    }"#;

    /// Checks, at every dispatch, that the call's `CallDispatchPrepared` is already in the journal.
    struct CommittedFirst<E> {
        journal: Arc<MemoryJournal>,
        run: RunId,
        inner: E,
    }

    #[async_trait]
    impl<E: ToolExecutor> ToolExecutor for CommittedFirst<E> {
        async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
            let records = self.journal.read(&self.run, 0, usize::MAX).await.expect("read journal");
            let prepared = records.iter().any(|record| {
                matches!(Event::decode(&record.bytes), Ok((_, Event::CallDispatchPrepared { node, .. })) if *node == *call.context.node_id)
            });
            assert!(
                prepared,
                "{} was dispatched before its CallDispatchPrepared was committed",
                call.context.node_id
            );
            self.inner.dispatch(call).await
        }
    }

    /// A core for `program`, an environment around it with a fresh in-memory journal holding
    /// the run's header, and that journal.
    async fn prepared(
        program: &Arc<crate::analyze::hir::Program>,
        registry: &Arc<Registry>,
        run: &str,
        executor: impl FnOnce(Arc<MemoryJournal>) -> Arc<dyn ToolExecutor>,
    ) -> (RunCore, RunEnvironment, Arc<MemoryJournal>) {
        let core = fresh(program, registry);
        let run_id = RunId::new(run);
        let journal = Arc::new(MemoryJournal::new());
        let digest = sha256(&Value::Null);
        let header = RunHeader {
            run_id: run_id.clone(),
            language_version: 1,
            runtime_version: "test".into(),
            source_digest: digest.to_string(),
            registry_digest: registry.digest().to_string(),
            inputs_digest: digest.to_string(),
            config_digest: digest.to_string(),
            keyed_digest: core.digest_key().pinned(),
            value_encoding_version: 1,
            event_encoding_version: 1,
            retained: None,
        };
        journal.create_run(&header).await.expect("create run");
        let env = RunEnvironment {
            run_id,
            workflow: Arc::new(WorkflowIdentity {
                source_digest: digest,
                registry_digest: registry.digest().clone(),
                language_version: 1,
            }),
            registry: Arc::clone(registry),
            journal: journal.clone(),
            executor: executor(journal.clone()),
            observer: None,
            cancel: CancellationToken::new(),
            wall_clock: None,
            permits: None,
            permit_waits: None,
            retry_classifier: None,
            sampler: Arc::new(crate::engine::SystemSampler),
            snapshots: None,
            blobs_above: None,
            span: tracing::Span::none(),
            metrics: Arc::new(Metrics::global()),
            host_data: None,
        };
        (core, env, journal)
    }

    /// Gives `env` an observer (a channel of `capacity` batches) whose events, numbered, the
    /// returned task collects until the run ends.
    fn observe(env: &mut RunEnvironment, capacity: usize) -> JoinHandle<Vec<(u64, Event)>> {
        let (observer, mut observed) = mpsc::channel::<CommittedBatch>(capacity);
        env.observer = Some(observer);
        tokio::spawn(async move {
            let mut seen = Vec::new();
            while let Some((first, events)) = observed.recv().await {
                seen.extend(events.into_iter().enumerate().map(|(i, event)| (first + i as u64, event)));
            }
            seen
        })
    }

    /// Every event `journal` holds of `run`, with its sequence number.
    async fn numbered_events(journal: &MemoryJournal, run: &RunId) -> Vec<(u64, Event)> {
        let records = journal.read(run, 0, usize::MAX).await.expect("read");
        records.iter().map(|record| Event::decode(&record.bytes).expect("decodes")).collect()
    }

    #[tokio::test]
    async fn appendix_b_runs_with_every_event_journaled_before_it_is_seen() {
        let (program, registry) = appendix_b();
        let (core, mut env, journal) = prepared(&program, &registry, "appendix-b", |journal| {
            let inner = ScriptedExecutor::from_json_str(FIXTURES).expect("fixtures");
            Arc::new(CommittedFirst { journal, run: RunId::new("appendix-b"), inner })
        })
        .await;
        let run = env.run_id.clone();
        let collected = observe(&mut env, 1);
        match drive(core, env, Vec::new()).await.expect("journal works") {
            Outcome::Succeeded(value) => {
                assert_eq!(value.value(), &list(vec!["i1".into(), "i2".into(), "p1".into()]))
            }
            other => panic!("expected success, got {other:?}"),
        }
        let journaled = numbered_events(&journal, &run).await;
        let seen = collected.await.expect("collected");
        assert_eq!(seen, journaled, "observers see exactly the committed events, in order");
        assert!(
            journaled.iter().enumerate().all(|(i, (seq, _))| *seq == i as u64 + 1),
            "sequence has no gap"
        );
        assert!(matches!(journaled.first(), Some((_, Event::RunCreated { .. }))));
        assert_eq!(journaled.last().map(|(_, e)| e), Some(&Event::RunSucceeded));
        let dispatched =
            journaled.iter().filter(|(_, e)| matches!(e, Event::CallDispatchPrepared { .. })).count();
        assert_eq!(dispatched, 4);
    }

    /// Answers `numbers` with 0..20 and any other call with its first argument, at once.
    struct Echo;

    #[async_trait]
    impl ToolExecutor for Echo {
        async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
            Ok(ToolOutput::new(match call.tool.as_ref() {
                "numbers" => list((0..20).map(Value::Int).collect()),
                _ => call.arguments.iter().next().cloned().unwrap_or(Value::Null),
            }))
        }
    }

    /// A journal whose appends each spend a while on their way to the memory journal it wraps,
    /// as a disk's commits do, counting the events of each kind per append.
    struct Slow {
        inner: Arc<MemoryJournal>,
        completions_per_append: parking_lot::Mutex<Vec<usize>>,
    }

    #[async_trait]
    impl Journal for Slow {
        async fn create_run(&self, header: &RunHeader) -> Result<(), JournalError> {
            self.inner.create_run(header).await
        }

        async fn header(&self, run: &RunId) -> Result<RunHeader, JournalError> {
            self.inner.header(run).await
        }

        async fn append(
            &self,
            run: &RunId,
            expected_seq: u64,
            records: &[Record],
        ) -> Result<u64, JournalError> {
            tokio::time::sleep(Duration::from_millis(2)).await;
            let completions = records
                .iter()
                .filter(|record| matches!(Event::decode(&record.bytes), Ok((_, Event::CallCompleted { .. }))))
                .count();
            self.completions_per_append.lock().push(completions);
            self.inner.append(run, expected_seq, records).await
        }

        async fn read(&self, run: &RunId, after: u64, limit: usize) -> Result<Vec<Record>, JournalError> {
            self.inner.read(run, after, limit).await
        }

        async fn load_snapshot(&self, run: &RunId) -> Result<Option<crate::journal::Snapshot>, JournalError> {
            self.inner.load_snapshot(run).await
        }

        async fn store_snapshot(
            &self,
            run: &RunId,
            snapshot: crate::journal::Snapshot,
        ) -> Result<(), JournalError> {
            self.inner.store_snapshot(run, snapshot).await
        }
    }

    /// While a commit is on its way, the answers that arrive are reacted to and go to the
    /// journal together in the next append; still no call is sent before its prepare record
    /// committed, observers see exactly the committed events, and snapshots are still written.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn answers_that_arrive_during_a_commit_go_together_and_wait_for_nothing_uncommitted() {
        let registry_json = r#"{"tools": [
            {"name": "numbers", "params": [], "outputSchema": {"type": "array", "items": {"type": "integer"}}, "execution": "pure"},
            {"name": "noop", "params": [{"name": "n", "schema": {"type": "integer"}}], "outputSchema": {"type": "integer"}, "execution": "pure"}
        ]}"#;
        let source = "return for n in numbers() limit 8 {\n    return noop(n)\n}\n";
        let registry =
            Arc::new(Registry::from_json_str(registry_json, &Default::default()).expect("registry").registry);
        let analysis = crate::analyze::analyze(source, &registry, &Default::default(), &Default::default());
        let program = Arc::new(analysis.hir.expect("compiles"));
        let (core, mut env, memory) = prepared(&program, &registry, "pipelined", |journal| {
            Arc::new(CommittedFirst { journal, run: RunId::new("pipelined"), inner: Echo })
        })
        .await;
        let slow = Arc::new(Slow { inner: Arc::clone(&memory), completions_per_append: Default::default() });
        env.journal = slow.clone();
        let header = Arc::new(memory.header(&env.run_id).await.expect("header"));
        env.snapshots = Some(SnapshotPolicy { every: 10, header });
        let run = env.run_id.clone();
        let collected = observe(&mut env, 4);
        match drive(core, env, Vec::new()).await.expect("journal works") {
            Outcome::Succeeded(value) => assert_eq!(value.value(), &list((0..20).map(Value::Int).collect())),
            other => panic!("expected success, got {other:?}"),
        }
        let journaled = numbered_events(&memory, &run).await;
        assert_eq!(collected.await.expect("collected"), journaled, "observers see the committed events");
        let per_append = slow.completions_per_append.lock().clone();
        assert_eq!(per_append.iter().sum::<usize>(), 21, "numbers() and 20 noop calls: {per_append:?}");
        assert!(
            per_append.iter().any(|&completions| completions > 1),
            "answers that arrived during a commit share the next: {per_append:?}"
        );
        let snapshot = memory.load_snapshot(&run).await.expect("load").expect("a snapshot was due and taken");
        assert!(snapshot.upto_seq >= 10 && snapshot.upto_seq <= journaled.len() as u64);
    }

    /// The program `return TOOL({})` over a registry of that one tool, which answers an Integer.
    fn returning_one_call(tool: &str) -> (Arc<crate::analyze::hir::Program>, Arc<Registry>) {
        let json = format!(
            r#"{{"tools": [{{"name": "{tool}", "inputSchema": {{"type": "object"}}, "outputSchema": {{"type": "integer"}}}}]}}"#
        );
        let registry =
            Arc::new(Registry::from_json_str(&json, &Default::default()).expect("registry").registry);
        let mut builder = crate::engine::testing::Builder::with_registry(Arc::clone(&registry));
        let root = crate::analyze::hir::RegionId(0);
        let call = builder.call(root, tool, vec![]);
        builder.result(root, call);
        builder.finish()
    }

    #[tokio::test]
    async fn a_tool_output_its_schema_rejects_fails_the_call() {
        let (program, registry) = returning_one_call("counter");
        let (core, env, _) = prepared(&program, &registry, "bad-output", |_| {
            Arc::new(
                ScriptedExecutor::from_json_str(r#"{"counter": [{"result": "seven"}]}"#).expect("fixtures"),
            )
        })
        .await;
        match drive(core, env, Vec::new()).await.expect("journal works") {
            Outcome::Failed(error) => {
                assert_eq!(error.code, "TOOL_OUTPUT_SCHEMA_MISMATCH");
                assert!(!error.retryable);
                assert_eq!(error.tool.as_deref(), Some("counter"));
            }
            other => panic!("expected a failed run, got {other:?}"),
        }
    }

    /// Reports progress three times, waits for the run to take a report, then answers.
    struct Reporting;

    #[async_trait]
    impl ToolExecutor for Reporting {
        async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
            let heartbeat = &call.context.heartbeat;
            for step in 1..=3 {
                let message = format!("step {step}");
                let progress = crate::engine::Progress::new(f64::from(step), Some(3.0), Some(&message));
                assert!(heartbeat.report(progress.expect("finite")));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
            Ok(ToolOutput::new(Value::from(7)))
        }
    }

    #[tokio::test]
    async fn progress_a_call_reports_is_journaled_coalesced_and_replays() {
        let (program, registry) = returning_one_call("slow");
        let (core, env, _) = prepared(&program, &registry, "progress", |_| Arc::new(Reporting)).await;
        let journal_env = (env.journal.clone(), env.run_id.clone());
        let outcome = drive(core, env, Vec::new()).await.expect("journal works");
        assert!(matches!(outcome, Outcome::Succeeded(_)), "{outcome:?}");
        let records = journal_env.0.read(&journal_env.1, 0, usize::MAX).await.expect("read");
        let events: Vec<Event> =
            records.iter().map(|r| Event::decode(&r.bytes).expect("decodes").1).collect();
        let beats: Vec<&crate::engine::Progress> = events
            .iter()
            .filter_map(|e| match e {
                Event::CallHeartbeat { progress, .. } => Some(progress),
                _ => None,
            })
            .collect();
        assert!(!beats.is_empty() && beats.len() <= 3, "coalesced: {beats:?}");
        let last = beats.last().expect("one heartbeat");
        assert_eq!(
            (last.progress.get(), last.message.as_deref()),
            (3.0, Some("step 3")),
            "the latest report"
        );
        let completed = events.iter().position(|e| matches!(e, Event::CallCompleted { .. }));
        let heartbeat = events.iter().position(|e| matches!(e, Event::CallHeartbeat { .. }));
        assert!(heartbeat < completed, "heartbeats precede the answer");
        let replayed = crate::engine::replay(fresh(&program, &registry), &events).expect("replays");
        assert!(matches!(replayed.outcome, Some(Outcome::Succeeded(_))));
    }

    /// Records every call's tool, operation id and dispatch id, then answers from `inner`.
    struct Recording {
        seen: std::sync::Mutex<Vec<(String, OperationId, crate::engine::DispatchId)>>,
        inner: ScriptedExecutor,
    }

    #[async_trait]
    impl ToolExecutor for Recording {
        async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
            let entry = (call.tool.to_string(), call.context.operation_id, call.context.dispatch_id);
            self.seen.lock().expect("not poisoned").push(entry);
            self.inner.dispatch(call).await
        }
    }

    const CLASSES: &str = r#"{"tools": [
        {"name": "t.idem", "params": [{"name": "x", "schema": {"type": "integer"}}], "outputSchema": {"type": "integer"}, "execution": "idempotent"},
        {"name": "t.once", "params": [{"name": "x", "schema": {"type": "integer"}}], "outputSchema": {"type": "integer"}, "execution": "at_most_once"}
    ]}"#;

    const RESUMED: &str = "a = t.idem(1)\nb = boundary {\n    return t.once(2)\n} catch e {\n    return e.code\n}\nreturn [a, b]\n";

    /// Compiles `source` against `registry_json`, reacts to `Start` (and `then`, when given)
    /// without running any call — a worker that stops there — and journals what it appended.
    async fn crashed(
        registry_json: &str,
        source: &str,
        then: Option<Input>,
    ) -> (Arc<crate::analyze::hir::Program>, Arc<Registry>, RunEnvironment, Arc<Recording>, Vec<CallRequest>)
    {
        let registry =
            Arc::new(Registry::from_json_str(registry_json, &Default::default()).expect("registry").registry);
        let analysis = crate::analyze::analyze(source, &registry, &Default::default(), &Default::default());
        let program = Arc::new(analysis.hir.expect("compiles"));
        let recording = Arc::new(Recording {
            seen: std::sync::Mutex::new(Vec::new()),
            inner: ScriptedExecutor::from_json_str(
                r#"{"t.idem": [{"result": 10}], "t.once": [{"result": 20}]}"#,
            )
            .expect("fixtures"),
        });
        let executor: Arc<dyn ToolExecutor> = recording.clone();
        let (mut core, env, _) = prepared(&program, &registry, "crashed", |_| executor).await;
        let mut seq = 0;
        let mut sent = Vec::new();
        for input in std::iter::once(Input::Start { inputs: Vec::new() }).chain(then) {
            for effect in core.react(input) {
                match effect {
                    Effect::Append(events) => {
                        let (records, blobs) = records_after(seq, &events, 0, None);
                        let appended = append(Arc::new(env.clone()), seq, events, records, blobs, 0).await;
                        seq = appended.expect("journal").0.seq
                    }
                    Effect::Dispatch(request) => sent.push(request),
                    _ => {}
                }
            }
        }
        (program, registry, env, recording, sent)
    }

    async fn journaled(env: &RunEnvironment) -> Vec<Event> {
        let records = env.journal.read(&env.run_id, 0, usize::MAX).await.expect("read");
        records.iter().map(|r| Event::decode(&r.bytes).expect("decodes").1).collect()
    }

    fn fresh(program: &Arc<crate::analyze::hir::Program>, registry: &Registry) -> RunCore {
        let key = DigestKey::new("test", b"test key").expect("valid key");
        RunCore::new(
            Arc::clone(program),
            Arc::new(Plan::new(program)),
            ToolTable::of(registry),
            RunSettings::default(),
            key,
        )
    }

    #[tokio::test]
    async fn a_crashed_run_resumes_redispatching_idempotent_calls_and_surfacing_at_most_once_ones() {
        let (program, registry, env, recording, before) = crashed(CLASSES, RESUMED, None).await;
        assert_eq!(before.len(), 2, "both calls were dispatching when the worker stopped");
        let events = journaled(&env).await;
        let resumed = crate::engine::replay(fresh(&program, &registry), &events).expect("replays");
        assert_eq!(resumed.last_seq, events.len() as u64);
        let outcome = resume(resumed, env.clone()).await.expect("journal works");
        match outcome {
            Outcome::Succeeded(value) => assert_eq!(
                crate::value::to_presentation_json(value.value()).expect("json"),
                r#"[10,"RL6109"]"#,
                "the idempotent call is sent again; the at-most-once one is uncertain and caught"
            ),
            other => panic!("expected success, got {other:?}"),
        }
        let seen = recording.seen.lock().expect("not poisoned").clone();
        assert_eq!(seen.len(), 1, "only the idempotent call is sent again: {seen:?}");
        let idem =
            before.iter().find(|r| registry.tool(r.tool).name.to_string() == "t.idem").expect("t.idem");
        let tool = registry.tool(idem.tool);
        let operation = OperationId::derive(&OperationComponents {
            workflow: &env.workflow,
            call_site: &idem.call_site,
            dynamic_key: &idem.dynamic_key,
            schema_version: &tool.schema_version,
            input_digest: &idem.input_digest,
            generation: 0,
        });
        assert_eq!(seen[0].1, operation, "the same operation id");
        assert_eq!(seen[0].2, operation.dispatch_id(2), "the second dispatch of it");
        let whole = journaled(&env).await;
        assert!(whole.contains(&Event::RunResumed));
        let replayed =
            crate::engine::replay(fresh(&program, &registry), &whole).expect("the resumed journal replays");
        assert!(matches!(replayed.outcome, Some(Outcome::Succeeded(_))));
    }

    #[tokio::test]
    async fn the_wall_clock_start_is_journaled_once_and_replays() {
        let (program, registry) = appendix_b();
        let (core, mut env, _) = prepared(&program, &registry, "clocked", |_| {
            Arc::new(ScriptedExecutor::from_json_str(FIXTURES).expect("fixtures"))
        })
        .await;
        env.wall_clock = Some(Duration::from_secs(3600));
        let before = unix_ms(SystemTime::now());
        assert!(matches!(drive(core, env.clone(), Vec::new()).await, Ok(Outcome::Succeeded(_))));
        let after = unix_ms(SystemTime::now());
        let events = journaled(&env).await;
        let starts: Vec<u64> = events
            .iter()
            .filter_map(|e| match e {
                Event::WallClockStarted { started_unix_ms } => Some(*started_unix_ms),
                _ => None,
            })
            .collect();
        assert_eq!(starts.len(), 1, "{events:?}");
        assert!((before..=after).contains(&starts[0]), "{before} <= {} <= {after}", starts[0]);
        let replayed = crate::engine::replay(fresh(&program, &registry), &events).expect("replays");
        assert!(matches!(replayed.outcome, Some(Outcome::Succeeded(_))));
        assert_eq!(replayed.started_unix_ms, Some(starts[0]));
    }

    #[tokio::test]
    async fn a_resumed_run_whose_wall_clock_ran_out_before_the_crash_fails_at_once() {
        // The run started in 1970: whatever the machine's clock says now, its second is spent.
        let started = Some(Input::WallClockStarted { started_unix_ms: 1_000 });
        let (program, registry, mut env, recording, _) = crashed(CLASSES, RESUMED, started).await;
        env.wall_clock = Some(Duration::from_millis(1000));
        let limits = Limits::new().with(LimitKey::WallClockMs, 1000);
        let core = || fresh(&program, &registry).with_limits(limits.clone(), 0);
        let resumed = crate::engine::replay(core(), &journaled(&env).await).expect("replays");
        assert_eq!(resumed.started_unix_ms, Some(1_000));
        let error = match resume(resumed, env.clone()).await.expect("journal works") {
            Outcome::Failed(error) => error,
            other => panic!("expected the wall clock to fail the run, got {other:?}"),
        };
        assert_eq!(error.code, "RL4104");
        let detail = |key: &str| error.details.get(key).cloned();
        assert_eq!(detail("cap"), Some(Value::Int(1000)));
        assert!(
            matches!(detail("current"), Some(Value::Int(elapsed)) if elapsed > 1_000_000_000),
            "counted from the journaled start: {:?}",
            detail("current")
        );
        assert!(recording.seen.lock().expect("not poisoned").is_empty(), "nothing is dispatched again");
        let whole = journaled(&env).await;
        assert!(!whole.contains(&Event::RunResumed), "the run ends before it resumes");
        assert_eq!(whole.last(), Some(&Event::RunFailed { code: "RL4104".into() }));
        let replayed = crate::engine::replay(core(), &whole).expect("replays");
        assert!(matches!(replayed.outcome, Some(Outcome::Failed(e)) if e == error));
    }

    #[tokio::test]
    async fn a_resumed_run_with_wall_clock_left_goes_on() {
        let started = Some(Input::WallClockStarted { started_unix_ms: unix_ms(SystemTime::now()) });
        let (program, registry, mut env, recording, _) = crashed(CLASSES, RESUMED, started).await;
        env.wall_clock = Some(Duration::from_secs(3600));
        let resumed =
            crate::engine::replay(fresh(&program, &registry), &journaled(&env).await).expect("replays");
        match resume(resumed, env.clone()).await.expect("journal works") {
            Outcome::Succeeded(value) => assert_eq!(
                crate::value::to_presentation_json(value.value()).expect("json"),
                r#"[10,"RL6109"]"#
            ),
            other => panic!("expected success, got {other:?}"),
        }
        assert_eq!(
            recording.seen.lock().expect("not poisoned").len(),
            1,
            "the idempotent call is sent again"
        );
    }

    #[tokio::test]
    async fn a_cancelled_run_stays_cancelled_when_resumed() {
        let (program, registry, env, recording, _) =
            crashed(CLASSES, RESUMED, Some(Input::CancelRequested)).await;
        let resumed =
            crate::engine::replay(fresh(&program, &registry), &journaled(&env).await).expect("replays");
        assert!(matches!(resume(resumed, env.clone()).await, Ok(Outcome::Cancelled)));
        assert!(recording.seen.lock().expect("not poisoned").is_empty(), "nothing is dispatched");
        assert_eq!(journaled(&env).await.last(), Some(&Event::RunCancelled), "nothing is appended");
    }
}
