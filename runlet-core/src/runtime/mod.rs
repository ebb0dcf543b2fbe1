//! The embedding API (spec §7.1, §5.3, §6.1): a [`Runtime`] built once from a registry, a tool
//! executor and a journal; it compiles sources into immutable programs and starts any number of
//! runs of them. It is the top of the pipeline, where engine, journal, observers and executors meet:
//!
//! ```text
//!  source ─compile─▶ Executable ─start─▶ RunHandle ─wait / outcome─▶ engine::Outcome
//!                    (analyze, plan)       │  the run: engine::drive on the runtime's tokio pool
//!                                          ├─ events()    the engine's events, unredacted, from seq 1
//!                                          └─ observer()  snapshots and subscriptions under a ViewPolicy
//! ```
//!
//! [`Runtime::builder`] needs a registry and an executor; the journal defaults to an in-memory
//! one, and limits, retry policy, the digest key and the sampler are optional. Concurrent runs
//! share commits: the SQLite journal groups their appends itself, and in front of another
//! journal that commits batches together (PostgreSQL) the runtime puts a [`GroupCommit`]
//! ([`RuntimeBuilder::group_commit`]); [`Runtime::durability`] names what a commit survives. [`Runtime::compile`]
//! returns an [`Executable`] (or the diagnostics), which only the runtime that compiled it runs
//! (`RL8104`). [`Runtime::start`] (or [`Runtime::start_with`] with per-run [`RunOptions`])
//! validates the host inputs, never blocks, and returns a [`RunHandle`]: [`RunHandle::wait`]
//! blocks for the [`Outcome`], [`RunHandle::outcome`] awaits it, and [`RunHandle::cancel`] or a
//! [`RunCanceller`] cancels the run.
//!
//! [`RunHandle::events`] yields the engine's own `(seq, Event)` pairs, for the Rust host that acts
//! on them; [`RunHandle::observer`] (or [`Runtime::observer`] by run id, while the handle or an
//! observer of the run is held) gives what may be shown, redacted by a [`ViewPolicy`]. Every
//! event is published to the observer before the outcome is delivered.
//! [`Runtime::journal_snapshot`] rebuilds the graph of a run no observer follows from the journal.
//!
//! A run interrupted by a crash comes back from the journal with [`Runtime::resume`]; through
//! [`Runtime::recovery`] the host first lists the calls left uncertain
//! ([`Recovery::uncertain_operations`]) and journals decisions about them ([`Recovery::resolve`],
//! [`Recovery::authorize_fresh_generation`]) before [`Recovery::resume`]. A header that pins
//! another source, registry, version, configuration or digest key is refused (`RL7301`).
//! [`Runtime::runs`] lists the journal's runs with their status ([`RunListing`], [`RunStatus`]:
//! ended, `running` while the process that claimed it lives, else `interrupted`), and
//! [`RetainedProgram::from_header`] rebuilds a run from its header alone, for an operator's
//! process that has nothing but the run id (`runlet resume`); [`Recovery::cancel`] journals the
//! cancellation of an interrupted run.
//! [`Runtime::shutdown`] cancels every run not yet ended and waits for their ends and for tasks
//! attached with [`Runtime::spawn_attached`]. `wait`, `journal_snapshot`, `recovery`, `resume` and
//! `shutdown` block the calling thread: not for use inside an async task.
//!
//! ```
//! use std::sync::Arc;
//! use runlet::analyze::Inputs;
//! use runlet::engine::Outcome;
//! use runlet::runtime::Runtime;
//! use runlet::scripted::ScriptedExecutor;
//! use runlet::registry::{Registry, RegistryOptions};
//!
//! let registry = Registry::from_json_str(
//!     r#"{"tools": [{"name": "weather.now", "params": [{"name": "city", "schema": {"type": "string"}}],
//!         "outputSchema": {"type": "object", "properties": {"celsius": {"type": "number"}},
//!                          "required": ["celsius"]}, "execution": "pure"}]}"#,
//!     &RegistryOptions::default(),
//! )
//! .expect("registry loads")
//! .registry;
//! let tools = ScriptedExecutor::from_json_str(r#"{"weather.now": [{"result": {"celsius": 21.5}}]}"#)
//!     .expect("fixtures load");
//! let runtime = Runtime::builder().registry(registry).executor(Arc::new(tools)).build().expect("runtime");
//!
//! let program = runtime.compile("w = weather.now(\"Lisbon\")\nreturn w.celsius\n", &Inputs::new())
//!     .expect("compiles");
//! let mut run = runtime.start(&program, &Inputs::new()).expect("starts");
//! let (seq, first) = run.events().blocking_recv().expect("the run's first event");
//! assert_eq!((seq, first.kind()), (1, "RunCreated"));
//! match run.wait().expect("journal works") {
//!     Outcome::Succeeded(value) => {
//!         assert_eq!(runlet::value::to_presentation_json(value.value()).expect("json"), "21.5")
//!     }
//!     other => panic!("{other:?}"),
//! }
//! runtime.shutdown();
//! assert_eq!(runtime.running(), 0);
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::FutureExt;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::engine::event::{Event, unix_ms};
use crate::engine::metrics::Metrics;
use crate::engine::snapshot::SnapshotPolicy;
use crate::engine::{
    Backoff, CommittedBatch, HostData, LimitKey, Limits, Outcome, PermitWaits, Permits, ResourceKey,
    RetryClassifier, RunCore, RunEnvironment, RunPermits, RunSettings, Sampler, SharedCaps, SharedPermits,
    SystemSampler, ToolError, ToolExecutor, ToolTable, Workflow, drive, tool_keys,
};
use crate::engine::{panic_message, trace, w3c};
use crate::plan::Plan;

mod live;
mod recovery;
mod restart;
mod retain;
mod runs;
mod submit;
use crate::analyze::{CompiledProgram, Inputs, analyze};
use crate::diag::{Code, Diagnostic, codes};
use crate::journal::{
    GroupCommit, Journal, JournalError, JournalErrorKind, MemoryJournal, RunHeader, RunId, owner,
};
use crate::observe::{
    GraphContext, GraphEvent, GraphSnapshot, ObserveError, ObserverIndex, ProgramGraph, RunObserver,
    SnapshotOptions, Subscription, ViewPolicy, events_from_journal, snapshot_from_journal,
};
use crate::registry::Registry;
use crate::schema::{ExecutionClass, validate};
use crate::value::{DigestKey, Labelled, List, Value, ValueError, sha256};
use live::{Live, LiveEntry};
pub use recovery::{Recovery, RecoveryError, SnapshotUse, UncertainOperation};
pub use restart::{NEEDS_DECISION, Recovered};
use retain::retain;
pub use retain::{RetainError, RetainedProgram};
pub use runs::{RunDamage, RunListing, RunStatus, list_runs, run_listing};

/// How many ended runs the in-memory journal of a runtime built without one keeps: the latest
/// to end. Older ones are forgotten (listings no longer show them).
pub const ENDED_RUNS_KEPT_IN_MEMORY: usize = 1024;

/// Tells runtimes apart, so a program runs only on the runtime that compiled it.
static NEXT_RUNTIME: AtomicU64 = AtomicU64::new(1);

/// Configures a [`Runtime`].
#[derive(Default)]
pub struct RuntimeBuilder {
    registry: Option<Arc<Registry>>,
    executor: Option<Arc<dyn ToolExecutor>>,
    journal: Option<Arc<dyn Journal>>,
    group_commit: Option<bool>,
    settings: RunSettings,
    limits: Limits,
    worker_threads: Option<usize>,
    observer_buffer: Option<usize>,
    live_graph: Option<bool>,
    retry_classifier: Option<RetryClassifier>,
    prohibit_unsafe_tools: bool,
    sampler: Option<Arc<dyn Sampler>>,
    /// The host's key for digests of sensitive values, or why it is unusable.
    digest_key: Option<Result<DigestKey, ValueError>>,
    snapshot_every: Option<u64>,
    blob_threshold: Option<usize>,
    owner: Option<String>,
    shared_permits: Option<Arc<dyn SharedPermits>>,
    meter: Option<opentelemetry::metrics::Meter>,
}

impl std::fmt::Debug for RuntimeBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeBuilder")
            .field("settings", &self.settings)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// Why a runtime could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("a runtime needs a registry: call `registry(...)`")]
    MissingRegistry,
    #[error("a runtime needs a tool executor: call `executor(...)`")]
    MissingExecutor,
    #[error("the runtime's worker threads could not start: {0}")]
    Threads(#[from] std::io::Error),
    #[error(
        "RL8017: tool `{tool}` is `unsafe` and this runtime prohibits unsafe tools: declare a safer execution class or remove it"
    )]
    UnsafeToolProhibited { tool: String },
    #[error("{0}")]
    InvalidDigestKey(ValueError),
}

impl BuildError {
    pub fn code(&self) -> Code {
        match self {
            BuildError::MissingRegistry | BuildError::MissingExecutor | BuildError::Threads(_) => {
                codes::RUNTIME_UNAVAILABLE
            }
            BuildError::UnsafeToolProhibited { .. } => codes::UNSAFE_TOOL_PROHIBITED,
            BuildError::InvalidDigestKey(error) => error.code(),
        }
    }
}

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("RL8104: the program was compiled by another runtime: compile it with the runtime that runs it")]
    ForeignProgram,
    #[error("RL8018: host input `{name}` is missing")]
    MissingInput { name: String },
    #[error("RL8018: host input `{name}` does not match its schema: {reason}")]
    InvalidInput { name: String, reason: String },
    #[error("RL8107: the run's trace context is invalid: {reason}")]
    InvalidTraceContext { reason: String },
    /// Only [`Runtime::submit`], which journals the run's header before returning.
    #[error(transparent)]
    Journal(#[from] JournalError),
}

impl StartError {
    pub fn code(&self) -> Code {
        match self {
            StartError::ForeignProgram => codes::FOREIGN_PROGRAM,
            StartError::MissingInput { .. } | StartError::InvalidInput { .. } => codes::INVALID_HOST_INPUT,
            StartError::InvalidTraceContext { .. } => codes::INVALID_TRACE_CONTEXT,
            StartError::Journal(error) => error.code(),
        }
    }
}

/// A run ready to start: what [`Runtime::prepare`] makes and [`Runtime::begin`] starts.
struct PreparedRun {
    header: Arc<RunHeader>,
    core: RunCore,
    inputs: Vec<Labelled>,
    driving: Driving,
}

/// How this process drives a run, beside its program and header: its limits, its own cap on
/// calls in flight, and the host's data for its calls.
struct Driving {
    limits: Limits,
    own_concurrency: Option<u64>,
    host_data: Option<HostData>,
}

impl RuntimeBuilder {
    pub fn registry(mut self, registry: Registry) -> Self {
        self.registry = Some(Arc::new(registry));
        self
    }

    pub fn executor(mut self, executor: Arc<dyn ToolExecutor>) -> Self {
        self.executor = Some(executor);
        self
    }

    /// Where runs are journaled; when not set, an in-memory journal that keeps the latest
    /// [`ENDED_RUNS_KEPT_IN_MEMORY`] runs to end (and every run that has not), so a long-lived
    /// host's memory stays flat however many runs it has run.
    pub fn journal(mut self, journal: Arc<dyn Journal>) -> Self {
        self.journal = Some(journal);
        self
    }

    /// Whether the runs' appends share commits through a [`GroupCommit`] in front of the
    /// journal: while one commit is on the disk, the appends of every run that arrive meanwhile
    /// go together in the next. By default it is on for a journal whose `append_many` commits
    /// batches together and that does not group appends itself (PostgreSQL), and off otherwise
    /// (the SQLite journal's writer thread groups them already).
    pub fn group_commit(mut self, on: bool) -> Self {
        self.group_commit = Some(on);
        self
    }

    /// The key that digests of sensitive or secret values are keyed with (spec §6.2): operation
    /// ids and iteration keys of calls and items carrying such labels. Run headers pin
    /// `hmac-sha256` and `key_id`, never the key, so a journal replays only under the same key id.
    /// Without one, the runtime makes a random key when built (`local-<hex>`): its runs'
    /// keyed ids cannot be recomputed by any other process. An id outside 1 to 64 characters
    /// of `A-Z a-z 0-9 . _ -` or an empty key fails `build` with `RL8102`.
    pub fn digest_key(mut self, key_id: &str, key: &[u8]) -> Self {
        self.digest_key = Some(DigestKey::new(key_id, key));
        self
    }

    pub fn settings(mut self, settings: RunSettings) -> Self {
        self.settings = settings;
        self
    }

    /// Exponential backoff between boundary attempts (spec §2.8): retry *k* waits
    /// `min(cap, base × factorᵏ⁻¹)`; a tool's `retry_after` replaces it, capped by `cap`.
    pub fn retry_backoff(mut self, base: std::time::Duration, factor: u32, cap: std::time::Duration) -> Self {
        self.settings.retry_backoff = Some(Backoff { base, factor, cap });
        self
    }

    /// The host's retryable classification: called with the tool's name and each error it
    /// returns, after the registry's declared error codes; its answer is journaled.
    pub fn retry_classifier(
        mut self,
        classify: impl Fn(&str, &ToolError) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.retry_classifier = Some(Arc::new(classify));
        self
    }

    /// The deadline of each tool call; a call past it fails with the retryable `RL6102`.
    pub fn tool_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.settings.tool_timeout = Some(timeout);
        self
    }

    /// How long a failed attempt waits for its cancelled calls to acknowledge (default 5 s);
    /// `None` waits for every acknowledgement.
    pub fn cancellation_grace(mut self, grace: Option<std::time::Duration>) -> Self {
        self.settings.cancellation_grace = grace;
        self
    }

    /// Refuses to build over a registry with an `unsafe` tool (spec §5.4), whatever policy the
    /// registry was loaded with. Requiring a boundary around unsafe calls instead is the
    /// registry's `UnsafeToolPolicy::RequireBoundary`, which the analyzer enforces (`RL3001`).
    /// The name the runtime claims its runs under in its journal ([`Runtime::owner`]); this
    /// process's name (`linux:<boot id>:<pid namespace>:<pid>:<start time>`) unless set. Names
    /// must differ between runtimes that share a journal's runs (workers of a PostgreSQL
    /// journal); only a process name lets a journal tell that its owner ended.
    pub fn owner(mut self, name: impl Into<String>) -> Self {
        self.owner = Some(name.into());
        self
    }

    /// A store of permits this runtime shares with other processes (a PostgreSQL journal's:
    /// `runlet_postgres::PostgresJournal::permits`), so that tools' `max_concurrency` and
    /// resource groups' caps hold over all of them (spec §4.5); the runtime-wide and per-run
    /// caps stay this process's own. Without one, every cap holds per process.
    pub fn shared_permits(mut self, store: Arc<dyn SharedPermits>) -> Self {
        self.shared_permits = Some(store);
        self
    }

    pub fn prohibit_unsafe_tools(mut self) -> Self {
        self.prohibit_unsafe_tools = true;
        self
    }

    /// The execution limits of every run (each run may override them: [`Runtime::start_with`]).
    /// `concurrency` here caps the calls in flight over all runs together.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Threads of the runtime's own tokio pool (default: tokio's, one per core).
    pub fn worker_threads(mut self, threads: usize) -> Self {
        self.worker_threads = Some(threads.max(1));
        self
    }

    /// How many events a subscriber's queue holds before a slow subscriber is cut loose to
    /// catch up from the journal (default 1024).
    pub fn observer_buffer(mut self, events: usize) -> Self {
        self.observer_buffer = Some(events.max(1));
        self
    }

    /// Whether each run's observer folds its events into a live graph (default true), what
    /// `RunObserver::snapshot` and the graph page show while the run goes on. A host that never
    /// asks for a live snapshot saves that work on every event: its runs' observers still
    /// deliver every event and tell the run's state, their snapshots hold no nodes, and
    /// [`Runtime::journal_snapshot`] folds a run's graph from the journal.
    pub fn live_graph(mut self, live: bool) -> Self {
        self.live_graph = Some(live);
        self
    }

    /// Where `time.now()` and `number.random()` get their values (default: the system's
    /// clock and random source); a transcript recorder or replayer wraps or replaces it.
    pub fn sampler(mut self, sampler: Arc<dyn Sampler>) -> Self {
        self.sampler = Some(sampler);
        self
    }

    /// How many journaled events a run's snapshots are at least apart (spec §5.3; `0` writes
    /// none). A resume restores the latest snapshot that verifies and replays only the events
    /// after it. A snapshot holds the run's whole state, so one is also written only once the
    /// journal grew by the last one's size. By default every
    /// [`DEFAULT_SNAPSHOT_EVERY`] events, and none for a journal whose durability is `memory`.
    pub fn snapshot_every(mut self, events: u64) -> Self {
        self.snapshot_every = Some(events);
        self
    }

    /// Values of more than `bytes` (tool outputs, the host inputs) are journaled as blobs apart
    /// from the records that name them, in a journal that keeps blobs (SQLite): runs that
    /// record the same large value share one copy, and `Journal::collect_blobs` deletes those
    /// of deleted runs. Default [`DEFAULT_BLOB_THRESHOLD`].
    pub fn blob_threshold(mut self, bytes: usize) -> Self {
        self.blob_threshold = Some(bytes);
        self
    }

    /// The OpenTelemetry meter the runtime's metrics are recorded with
    /// ([`crate::engine::metrics`]). By default the global meter provider's `runlet` meter as it
    /// is when the runtime is built: set the global provider first, or pass a meter here.
    pub fn meter(mut self, meter: opentelemetry::metrics::Meter) -> Self {
        self.meter = Some(meter);
        self
    }

    pub fn build(self) -> Result<Runtime, BuildError> {
        let registry = self.registry.ok_or(BuildError::MissingRegistry)?;
        let executor = self.executor.ok_or(BuildError::MissingExecutor)?;
        if self.prohibit_unsafe_tools {
            if let Some((_, tool)) = registry.tools().find(|(_, t)| t.execution == ExecutionClass::Unsafe) {
                return Err(BuildError::UnsafeToolProhibited { tool: tool.name.to_string() });
            }
        }
        let digest_key =
            self.digest_key.unwrap_or_else(DigestKey::random).map_err(BuildError::InvalidDigestKey)?;
        let mut pool = tokio::runtime::Builder::new_multi_thread();
        pool.enable_all().thread_name("runlet-worker");
        if let Some(threads) = self.worker_threads {
            pool.worker_threads(threads);
        }
        let pool = pool.build()?;
        let journal = self
            .journal
            .unwrap_or_else(|| Arc::new(MemoryJournal::new().keeping_ended_runs(ENDED_RUNS_KEPT_IN_MEMORY)));
        let journal: Arc<dyn Journal> = match self
            .group_commit
            .unwrap_or_else(|| journal.commits_batches_together() && !journal.groups_appends())
        {
            true => Arc::new(GroupCommit::new(journal, pool.handle())),
            false => journal,
        };
        let started = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_millis());
        let owner: Arc<str> = Arc::from(self.owner.unwrap_or_else(owner::this_process));
        let live = Arc::<Live>::default();
        if journal.keeps_owners() {
            pool.spawn(answer_cancel_requests(Arc::clone(&journal), Arc::clone(&live), Arc::clone(&owner)));
        }
        let journal_keeps_blobs = journal.keeps_blobs();
        let snapshot_every = match self.snapshot_every {
            Some(0) => None,
            Some(every) => Some(every),
            None => (journal.durability() != Some("memory")).then_some(DEFAULT_SNAPSHOT_EVERY),
        };
        let runtime_cap = self.limits.get(LimitKey::Concurrency);
        let permits = Arc::new(Permits::for_registry(&registry, runtime_cap));
        let permit_keys = tool_keys(&registry, runtime_cap.is_some());
        let shared_caps = self.shared_permits.map(|store| SharedCaps::new(store, &registry));
        let own_config = config_digest(&self.settings, &self.limits);
        Ok(Runtime {
            tools: ToolTable::of(&registry),
            retry_classifier: self.retry_classifier,
            sampler: self.sampler.unwrap_or_else(|| Arc::new(SystemSampler)),
            registry,
            executor,
            journal,
            settings: self.settings,
            digest_key,
            observer_buffer: self.observer_buffer.unwrap_or(DEFAULT_OBSERVER_BUFFER),
            live_graph: self.live_graph.unwrap_or(true),
            observers: ObserverIndex::default(),
            recovering: parking_lot::Mutex::default(),
            config_digest: own_config,
            limits: self.limits,
            permits,
            permit_keys,
            shared_caps,
            pool,
            run_prefix: run_prefix(started),
            next_run: AtomicU64::new(1),
            id: NEXT_RUNTIME.fetch_add(1, Ordering::Relaxed),
            live,
            owner,
            snapshot_every,
            blobs_above: journal_keeps_blobs.then(|| self.blob_threshold.unwrap_or(DEFAULT_BLOB_THRESHOLD)),
            metrics: Arc::new(self.meter.as_ref().map_or_else(Metrics::global, Metrics::new)),
        })
    }
}

/// The part of a runtime's run ids before the run's number: when it started, in which process,
/// and 32 random bits (the runtime's number in the process when the system has no randomness).
fn run_prefix(started_ms: u128) -> String {
    let salt = getrandom::u32().unwrap_or_else(|_| NEXT_RUNTIME.load(Ordering::Relaxed) as u32);
    format!("r-{started_ms}-{}-{salt:08x}", std::process::id())
}

const DEFAULT_OBSERVER_BUFFER: usize = 1024;

/// How many journaled events a run's snapshots are at least apart unless the host says.
pub const DEFAULT_SNAPSHOT_EVERY: u64 = 10_000;

/// The size above which a value is journaled as a blob unless the host says.
pub const DEFAULT_BLOB_THRESHOLD: usize = 16 << 10;

/// How often a runtime asks its journal whether another process asked it to cancel a run.
const CANCEL_REQUEST_POLL: std::time::Duration = std::time::Duration::from_millis(250);

/// Cancels the runs of this runtime that another process asked the journal to cancel
/// (`runlet cancel`), while any run is live; lives as long as the runtime's pool. A journal that
/// cannot be asked is asked again at the next poll.
async fn answer_cancel_requests(journal: Arc<dyn Journal>, live: Arc<Live>, owner: Arc<str>) {
    loop {
        tokio::time::sleep(CANCEL_REQUEST_POLL).await;
        if live.runs() == 0 {
            continue;
        }
        if let Ok(requested) = journal.cancel_requests(&owner).await {
            live.cancel(&requested);
        }
    }
}

/// A compiled program with its plan: immutable, shareable, runnable many times at once.
#[derive(Debug, Clone)]
pub struct Executable {
    compiled: CompiledProgram,
    /// Its workflow identity, with the prefix of its runs' operation ids hashed once.
    workflow: Arc<Workflow>,
    plan: Arc<Plan>,
    /// The source it was compiled from, which its runs' headers retain.
    source: Arc<str>,
    /// What observers of its runs need to know about it.
    graph: Arc<ProgramGraph>,
    /// The id of the runtime that compiled it, the only one that runs it.
    runtime: u64,
}

impl Executable {
    pub fn compiled(&self) -> &CompiledProgram {
        &self.compiled
    }

    /// The source text it was compiled from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// What observers of the run `run` of this program need to know about it: for rebuilding
    /// its graph from the journal ([`crate::observe::snapshot_from_journal`]).
    pub fn graph_context(&self, run: &RunId) -> Arc<GraphContext> {
        Arc::new(GraphContext::new(run.as_str(), Arc::clone(&self.graph)))
    }
}

/// The environment runs execute in. Every run gets fresh state; runs share nothing mutable.
pub struct Runtime {
    registry: Arc<Registry>,
    /// The tools' names and execution classes, shared by every run's core.
    tools: ToolTable,
    retry_classifier: Option<RetryClassifier>,
    sampler: Arc<dyn Sampler>,
    executor: Arc<dyn ToolExecutor>,
    journal: Arc<dyn Journal>,
    settings: RunSettings,
    /// Keys digests of sensitive values for every run of this runtime (spec §6.2).
    digest_key: DigestKey,
    observer_buffer: usize,
    /// Whether runs' observers fold a live graph ([`RuntimeBuilder::live_graph`]).
    live_graph: bool,
    /// The observers of runs still referenced somewhere, for [`Runtime::observer`].
    observers: ObserverIndex,
    /// Runs opened for recovery ([`Runtime::recovery`]) and not yet resumed or let go.
    recovering: parking_lot::Mutex<BTreeSet<RunId>>,
    limits: Limits,
    /// The configuration digest of a run under this runtime's own limits (most runs), computed
    /// once.
    config_digest: String,
    /// Call permits shared by every run (spec §4.5).
    permits: Arc<Permits>,
    /// The permits each tool's calls need, by `ToolId` index.
    permit_keys: Arc<[Vec<ResourceKey>]>,
    /// The store of permits shared with other processes, and the keys each tool's calls take
    /// from it.
    shared_caps: Option<SharedCaps>,
    pool: tokio::runtime::Runtime,
    /// Run ids are this prefix (start time and process id) and a counter, so runs of different
    /// processes sharing one journal do not collide.
    run_prefix: String,
    next_run: AtomicU64,
    /// Tells this runtime's programs from others'.
    id: u64,
    /// The runs and attached tasks that have not ended, for [`Runtime::shutdown`].
    live: Arc<Live>,
    /// The name this process claims its runs under in the journal ([`owner::this_process`]).
    owner: Arc<str>,
    /// How many events a run's snapshots are at least apart; `None` writes none.
    snapshot_every: Option<u64>,
    /// Values larger than this are journaled as blobs; `None` when the journal keeps none.
    blobs_above: Option<usize>,
    metrics: Arc<Metrics>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime").field("settings", &self.settings).finish_non_exhaustive()
    }
}

impl Runtime {
    pub fn builder() -> RuntimeBuilder {
        RuntimeBuilder::default()
    }

    /// The key this runtime's runs key digests of sensitive values with: a replaying core needs
    /// the same one.
    pub fn digest_key(&self) -> &DigestKey {
        &self.digest_key
    }

    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The journal this runtime's runs are journaled in: what a host lists or shows them from
    /// (the graph page's catalog, say).
    pub fn journal(&self) -> &Arc<dyn Journal> {
        &self.journal
    }

    /// What an acknowledged append of this runtime's journal survives ([`Journal::durability`]):
    /// part of the configuration every report of a run's figures should name.
    pub fn durability(&self) -> Option<&str> {
        self.journal.durability()
    }

    /// The runtime's own tokio pool, for hosts that run their own tasks beside its runs (the C
    /// ABI forwards each run's events from there).
    pub fn handle(&self) -> &tokio::runtime::Handle {
        self.pool.handle()
    }

    /// Parses and analyzes `source` against this runtime's registry; `inputs` supply the values
    /// whose schemas the registry does not declare. Errors come back as diagnostics.
    pub fn compile(&self, source: &str, inputs: &Inputs) -> Result<Executable, Vec<Diagnostic>> {
        let options = self.limits.analyze_options();
        let analysis = analyze(source, &self.registry, inputs, &options);
        match analysis.hir {
            Some(hir) if !analysis.has_errors() => {
                let plan = Arc::new(Plan::new(&hir));
                let compiled = CompiledProgram::new(analysis.identity, hir);
                let graph = Arc::new(ProgramGraph::new(
                    &compiled.identity().source_digest,
                    compiled.shared_program(),
                    Arc::clone(&plan),
                    Arc::clone(&self.registry),
                ));
                let workflow = Arc::new(Workflow::new(compiled.identity().clone()));
                Ok(Executable {
                    compiled,
                    workflow,
                    plan,
                    source: Arc::from(source),
                    graph,
                    runtime: self.id,
                })
            }
            _ => Err(analysis.diagnostics),
        }
    }

    /// The observer of run `run` (spec §6.1), while its handle or another observer of it is held.
    pub fn observer(&self, run: &RunId) -> Option<RunObserver> {
        self.observers.get(run)
    }

    /// The graph of run `run` of `program` as this runtime's journal records it, for runs no
    /// observer follows any more (another process's, or a finished one). Blocks the calling
    /// thread; not for use inside an async task.
    pub fn journal_snapshot(
        &self,
        program: &Executable,
        run: &RunId,
        view: &ViewPolicy,
        options: &SnapshotOptions,
    ) -> Result<GraphSnapshot, ObserveError> {
        let context = program.graph_context(run);
        self.pool.block_on(snapshot_from_journal(context, self.journal.as_ref(), run, view, options))
    }

    /// Every run of this runtime's journal, in the order they were created, with its status as
    /// the journal alone tells it ([`RunListing`]). Blocks the calling thread; not for use
    /// inside an async task.
    pub fn runs(&self) -> Result<Vec<RunListing>, JournalError> {
        self.pool.block_on(list_runs(self.journal.as_ref()))
    }

    /// The summary of run `run` of this runtime's journal. Blocks like [`Runtime::runs`].
    pub fn run_listing(&self, run: &RunId) -> Result<RunListing, JournalError> {
        self.pool.block_on(run_listing(self.journal.as_ref(), run))
    }

    /// The header of run `run` of this runtime's journal: what it pins and what it retains
    /// ([`RetainedProgram::from_header`]). Blocks like [`Runtime::runs`].
    pub fn run_header(&self, run: &RunId) -> Result<RunHeader, JournalError> {
        self.pool.block_on(self.journal.header(run))
    }

    /// The events of run `run` of `program` as this runtime's journal records them, in their
    /// public form under `view` (what a subscription from the start delivers), each timed by
    /// when its record was appended where the journal keeps that. Blocks like
    /// [`Runtime::journal_snapshot`].
    pub fn journal_events(
        &self,
        program: &Executable,
        run: &RunId,
        view: &ViewPolicy,
    ) -> Result<Vec<GraphEvent>, ObserveError> {
        let context = program.graph_context(run);
        self.pool.block_on(events_from_journal(context, self.journal.as_ref(), run, view))
    }

    /// Starts a run of `program` with `inputs`, validated against the program's input schemas.
    /// Never blocks: the run (creating its journal entry first) proceeds on the runtime's pool.
    pub fn start(&self, program: &Executable, inputs: &Inputs) -> Result<RunHandle, StartError> {
        self.start_with(program, inputs, RunOptions::default())
    }

    /// [`Runtime::start`] with per-run options: `options.limits` override the runtime's limits
    /// for this run only. A run's own `concurrency` caps its calls in flight, under the
    /// runtime-wide cap.
    pub fn start_with(
        &self,
        program: &Executable,
        inputs: &Inputs,
        options: RunOptions,
    ) -> Result<RunHandle, StartError> {
        let (run_id, anchor) = self.new_run(&options)?;
        let prepared =
            self.prepare(program, inputs, &options, run_id, unix_ms(std::time::SystemTime::now()), &anchor)?;
        Ok(self.begin(program, prepared, Some(anchor)))
    }

    /// A new run's id and its anchor span, under the host's trace context `options.trace`
    /// once that checks (RL8107).
    fn new_run(&self, options: &RunOptions) -> Result<(RunId, tracing::Span), StartError> {
        w3c::check(&options.trace).map_err(|reason| StartError::InvalidTraceContext { reason })?;
        let run_id = self.next_run_id();
        let anchor = trace::run_span(&run_id, &options.trace);
        Ok((run_id, anchor))
    }

    /// A run id no other run has: `r-<start ms>-<pid>-<8 random hex>-<n>`, so the runtimes of
    /// one process, and the processes of many machines, that share a journal never meet.
    fn next_run_id(&self) -> RunId {
        RunId::new(format!("{}-{}", self.run_prefix, self.next_run.fetch_add(1, Ordering::Relaxed)))
    }

    /// The name this runtime claims its runs under in its journal: which process it is
    /// (`linux:<boot id>:<pid namespace>:<pid>:<start time>` on Linux). Workers of a shared
    /// journal take runs over under it.
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// Everything a run of `program` with `inputs` under `options` starts from, as run `run_id`
    /// created at `created_unix_ms` under the anchor span `anchor`: its header, its core and
    /// its labelled inputs.
    fn prepare(
        &self,
        program: &Executable,
        inputs: &Inputs,
        options: &RunOptions,
        run_id: RunId,
        created_unix_ms: u64,
        anchor: &tracing::Span,
    ) -> Result<PreparedRun, StartError> {
        if !self.compiled(program) {
            return Err(StartError::ForeignProgram);
        }
        let hir = program.compiled.shared_program();
        let mut values = Vec::with_capacity(hir.inputs.len());
        for input in &hir.inputs {
            let value = inputs
                .get(&input.name)
                .ok_or_else(|| StartError::MissingInput { name: input.name.clone() })?;
            validate(&hir.schemas, input.schema, value).map_err(|e| StartError::InvalidInput {
                name: input.name.clone(),
                reason: e.showing_value(),
            })?;
            values.push(value.clone());
        }
        let limits = self.limits.overridden_by(&options.limits);
        let identity = program.compiled.identity();
        let core = self.core_for(program, &limits);
        let named: Vec<(&str, &Value)> =
            hir.inputs.iter().map(|input| input.name.as_str()).zip(&values).collect();
        let retained = retain(
            &program.source,
            &self.registry,
            &named,
            &limits,
            self.journal.durability(),
            created_unix_ms,
            w3c::of_span(anchor),
        );
        let inputs = core.labelled_inputs(values);
        let inputs_digest = Labelled::list(inputs.clone())
            .map_or_else(|_| sha256(&Value::Null), |inputs| inputs.digest(&self.digest_key));

        let header = RunHeader {
            run_id,
            language_version: identity.language_version,
            runtime_version: env!("CARGO_PKG_VERSION").to_owned(),
            source_digest: identity.source_digest.to_string(),
            registry_digest: identity.registry_digest.to_string(),
            inputs_digest: inputs_digest.to_string(),
            config_digest: if limits == self.limits {
                self.config_digest.clone()
            } else {
                config_digest(&self.settings, &limits)
            },
            keyed_digest: self.digest_key.pinned(),
            value_encoding_version: 1,
            event_encoding_version: 1,
            retained: Some(retained),
        };
        let driving = Driving {
            limits,
            own_concurrency: options.limits.get(LimitKey::Concurrency),
            host_data: options.host_data.clone(),
        };
        Ok(PreparedRun { header: Arc::new(header), core, inputs, driving })
    }

    /// Starts the prepared run on the pool: its header goes to the journal first when it has
    /// its `anchor` span (a new run), which ends once the header is stored; else the header is
    /// there already (a submitted run). Then this runtime claims the run and drives it.
    fn begin(&self, program: &Executable, prepared: PreparedRun, anchor: Option<tracing::Span>) -> RunHandle {
        let PreparedRun { header, core, inputs, driving } = prepared;
        let owner = Arc::clone(&self.owner);
        let pinned = Arc::clone(&header);
        self.launch(program, &pinned, driving, 0, move |env| async move {
            if let Some(anchor) = anchor {
                env.journal.create_run(&header).await?;
                drop(anchor);
            }
            env.journal.claim(&env.run_id, &owner).await?;
            drive(core, env, inputs).await
        })
    }

    /// Whether this runtime compiled `program` (its registry, tool table and permits are the
    /// ones the program's ids refer to).
    fn compiled(&self, program: &Executable) -> bool {
        program.runtime == self.id
    }

    /// Cancels every run that has not ended (and any started from now on), then blocks until
    /// each has journaled its end and every task attached to a run ([`Runtime::spawn_attached`])
    /// has finished. Idempotent. Blocks the calling thread; not for use inside an async task.
    pub fn shutdown(&self) {
        self.live.shut_down();
    }

    /// How many runs of this runtime have not ended.
    pub fn running(&self) -> usize {
        self.live.runs()
    }

    /// Spawns `task` on the runtime's pool as part of a run's life (a host forwarding its
    /// events, say): [`Runtime::shutdown`] waits for it as it waits for runs. The task must end
    /// by itself once its run has ended.
    pub fn spawn_attached<F>(&self, task: F)
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        let entry = self.live.add_task();
        self.pool.spawn(async move {
            task.await;
            drop(entry);
        });
    }

    /// A fresh core for a run of `program` exactly as this runtime starts one with `options`
    /// (its tools, settings, limits and digest key), for replaying a journal into it or driving
    /// a run by hand. Nothing is started or journaled.
    pub fn core(&self, program: &Executable, options: &RunOptions) -> RunCore {
        self.core_for(program, &self.limits.overridden_by(&options.limits))
    }

    /// A fresh core for a run of `program` under `limits`.
    fn core_for(&self, program: &Executable, limits: &Limits) -> RunCore {
        let hir = program.compiled.shared_program();
        RunCore::new(
            hir,
            Arc::clone(&program.plan),
            self.tools.clone(),
            self.settings.clone(),
            self.digest_key.clone(),
        )
        .with_limits(limits.clone(), program.source.len() as u64)
        .with_workflow(Arc::clone(&program.workflow))
    }

    /// Spawns the run of `program` whose header is `header` on the pool with its permits,
    /// observer, cancellation and snapshots: `run` drives its core in the environment given to
    /// it (starting or resuming the run). The observer first folds in the `journaled` records
    /// the journal holds already (a resume, which blocks for it; a start has none and never
    /// blocks).
    fn launch<F, R>(
        &self,
        program: &Executable,
        header: &Arc<RunHeader>,
        driving: Driving,
        journaled: u64,
        run: F,
    ) -> RunHandle
    where
        F: FnOnce(RunEnvironment) -> R + Send + 'static,
        R: std::future::Future<Output = Result<Outcome, JournalError>> + Send + 'static,
    {
        let Driving { limits, own_concurrency, host_data } = driving;
        let run_id = header.run_id.clone();
        if let Some(cap) = own_concurrency {
            self.permits.start_run(&run_id, cap);
        }
        let capped = own_concurrency.is_some() || self.permit_keys.iter().any(|keys| !keys.is_empty());
        let permits = capped.then(|| {
            let own = own_concurrency.is_some().then_some(&run_id);
            let permits = RunPermits::new(Arc::clone(&self.permits), Arc::clone(&self.permit_keys), own);
            match &self.shared_caps {
                Some(caps) => permits.sharing(caps.clone()),
                None => permits,
            }
        });
        let (observer, committed) = mpsc::channel(COMMITTED_BATCHES);
        let observing = RunObserver::new(
            program.graph_context(&run_id),
            Arc::clone(&self.journal),
            run_id.clone(),
            header.retained.as_ref().map(|retained| retained.created_unix_ms),
            self.observer_buffer,
            self.live_graph,
        );
        self.observers.insert(&observing);
        if journaled > 0 {
            // Records that do not fold in leave the graph short of them; recovery read them already.
            let _ = self.pool.block_on(observing.load_journaled(journaled));
        }
        let published = publish(committed, Finishing(observing.clone()));
        let cancel = CancellationToken::new();
        let live = self.live.add_run(&run_id, &cancel);
        // This process's share of the run (its first start, or a resume): its calls' spans are
        // children of it.
        let no_trace = BTreeMap::new();
        let stored = header.retained.as_ref().map_or(&no_trace, |retained| &retained.trace);
        let session = trace::session_span(&run_id, journaled, stored);
        let env = RunEnvironment {
            run_id: run_id.clone(),
            workflow: Arc::new(program.compiled.identity().clone()),
            registry: Arc::clone(&self.registry),
            journal: Arc::clone(&self.journal),
            executor: Arc::clone(&self.executor),
            observer: Some(observer),
            cancel: cancel.clone(),
            wall_clock: limits.get(LimitKey::WallClockMs).map(std::time::Duration::from_millis),
            permits,
            permit_waits: Some(Arc::new(observing.clone())),
            retry_classifier: self.retry_classifier.clone(),
            sampler: Arc::clone(&self.sampler),
            snapshots: self.snapshot_every.map(|every| SnapshotPolicy { every, header: Arc::clone(header) }),
            blobs_above: self.blobs_above,
            span: session.clone(),
            metrics: Arc::clone(&self.metrics),
            host_data,
        };
        let (done, outcome) = oneshot::channel();
        let shared_permits = Arc::clone(&self.permits);
        let ended_run = own_concurrency.map(|_| run_id.clone());
        let (journal, owner, owned_run) =
            (Arc::clone(&self.journal), Arc::clone(&self.owner), run_id.clone());
        // A run's future is large (its core and shell live in it across awaits, some 18 KB):
        // boxed, it is moved once, and the task that carries it — which tokio moves whole as
        // it creates the task and each time it sets the task's stage — stays small.
        let run = Box::pin(run(env).instrument(session));
        self.pool.spawn(async move {
            // The run and the publishing of its events share one task: a committed batch
            // reaches the observer, and the last one the outcome, with no hand-off to another
            // task (and thread) and back. A panic in either half ends both, and is reported.
            let joined = AssertUnwindSafe(async move { tokio::join!(run, published).0 }).catch_unwind().await;
            let outcome = joined.unwrap_or_else(|panic| Err(run_panicked(&owned_run, panic.as_ref())));
            if let Some(run) = ended_run {
                shared_permits.end_run(&run);
            }
            let ended = outcome.is_ok();
            let _ = done.send(outcome);
            // After the outcome, which need not wait for it. Advisory: a run whose owner stays
            // recorded after its end is listed by its end.
            let _ = match ended {
                true => journal.end(&owned_run, &owner).await,
                false => journal.release(&owned_run, &owner).await,
            };
            drop::<LiveEntry>(live);
        });
        RunHandle {
            run_id,
            cancel,
            outcome,
            observer: observing,
            events: None,
            pool: self.pool.handle().clone(),
        }
    }
}

/// The error a run's handle reports when the run's task panicked (a bug in the engine or in a
/// Rust host's journal): the run stopped where its last commit left it, and is resumable.
fn run_panicked(run: &RunId, panic: &(dyn std::any::Any + Send)) -> JournalError {
    JournalError::new(
        JournalErrorKind::RunPanicked,
        format!(
            "run `{run}` stopped: its task panicked ({}); the journal keeps it as of its last commit, and resuming it retries from there",
            panic_message(panic)
        ),
    )
}

/// Publishes a run's committed events to its observer, the one stream every consumer of them
/// reads (handles, `--events`, the C listener, snapshots); ends when the shell drops its sender.
/// It runs in the run's own task, beside the shell.
async fn publish(mut committed: mpsc::Receiver<CommittedBatch>, observer: Finishing) {
    while let Some((first, events)) = committed.recv().await {
        observer.0.publish(first, events);
    }
}

/// Finishes the observer it holds when dropped: after the run's last batch, and also when the
/// run's task panics or its runtime drops it (even before `publish` first ran, as it holds the
/// guard from its call), so subscriptions end and whoever keeps runs until they finish lets it
/// go.
struct Finishing(RunObserver);

impl Drop for Finishing {
    fn drop(&mut self) {
        self.0.finish();
    }
}

/// How many committed batches a run may be ahead of its observer's graph: the run waits for
/// the graph beyond that (a fast run of pure computation would otherwise queue without bound).
/// Subscribers never hold a run up; they catch up from the journal.
const COMMITTED_BATCHES: usize = 8;

/// The observer hears of permit waits from the shell, which knows nothing of observers.
impl PermitWaits for RunObserver {
    fn waiting(&self, node: &str, resources: Vec<String>) {
        self.waiting_for_permits(node, resources);
    }

    fn granted(&self, node: &str) {
        self.permits_granted(node);
    }
}

/// Per-run choices for [`Runtime::start_with`].
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Limits for this run; each cap set here replaces the runtime's.
    pub limits: Limits,
    /// The W3C trace context (`traceparent`, and `tracestate` when there is one) of the host's
    /// span the run's trace continues. Empty: the run's anchor span is a child of the current
    /// `tracing` span.
    pub trace: BTreeMap<String, String>,
    /// The host's data for the run's calls, which its executor finds in each call's
    /// [`CallContext::host_data`](crate::engine::CallContext::host_data): a request's context,
    /// say, there from the run's first call on (a map by run id would miss the calls
    /// dispatched before the start returned). Given to a start or a resume; never journaled.
    pub host_data: Option<HostData>,
}

/// What a run's journal header pins about its configuration: the default loop limit, and the
/// limits when any is set (a journal replays only under the configuration that wrote it).
/// The digest of the configuration a run header pins: everything besides source, registry and
/// inputs that decides the events a run records — the default loop limit, the limits, and the
/// failure policy (backoff, cancellation grace, tool deadline).
fn config_digest(settings: &RunSettings, limits: &Limits) -> String {
    let millis =
        |duration: std::time::Duration| Value::Int(i64::try_from(duration.as_millis()).unwrap_or(i64::MAX));
    let optional = |duration: Option<std::time::Duration>| duration.map_or(Value::Null, millis);
    let backoff = settings.retry_backoff.map_or(Value::Null, |b| {
        List::new(vec![millis(b.base), Value::Int(i64::from(b.factor)), millis(b.cap)])
            .map_or(Value::Null, Value::List)
    });
    let pinned = vec![
        Value::Int(i64::from(settings.default_loop_limit)),
        limits.to_value(),
        backoff,
        optional(settings.cancellation_grace),
        optional(settings.tool_timeout),
    ];
    sha256(&List::new(pinned).map_or(Value::Null, Value::List)).to_string()
}

/// One started run: its id, its committed events as they happen, cancellation and its outcome.
#[derive(Debug)]
pub struct RunHandle {
    run_id: RunId,
    cancel: CancellationToken,
    outcome: oneshot::Receiver<Result<Outcome, JournalError>>,
    observer: RunObserver,
    /// The run's events as the engine recorded them, once asked for (boxed: most handles never
    /// ask, and handles are moved about).
    events: Option<Box<EventStream>>,
    pool: tokio::runtime::Handle,
}

impl RunHandle {
    pub fn run_id(&self) -> &RunId {
        &self.run_id
    }

    /// Requests cancellation; idempotent, never blocks.
    pub fn cancel(&self) {
        self.cancel.cancel();
    }

    /// What cancels this run from anywhere, after the handle is gone too.
    pub fn canceller(&self) -> RunCanceller {
        RunCanceller(self.cancel.clone())
    }

    /// The run's committed events as the engine recorded them, from its first, in order: a
    /// subscription to the run's observer, so nothing is buffered for a handle that never asks.
    pub fn events(&mut self) -> &mut EventStream {
        let (observer, pool) = (&self.observer, &self.pool);
        self.events.get_or_insert_with(|| {
            Box::new(EventStream {
                subscription: observer.subscribe(0, ViewPolicy::default()),
                pool: pool.clone(),
                failure: None,
            })
        })
    }

    /// The run's observer: graph snapshots and event subscriptions (spec §6.1). Every event is
    /// published to it before the run's outcome is delivered.
    pub fn observer(&self) -> RunObserver {
        self.observer.clone()
    }

    /// Waits for the run's end from async code. An error says the journal failed, or the
    /// run's task panicked (`RL7307`, naming the panic): either way the run stopped as of its
    /// last commit, and resuming it retries from there. A run whose runtime was dropped before
    /// it ended reports `Cancelled`.
    pub async fn outcome(self) -> Result<Outcome, JournalError> {
        self.outcome.await.unwrap_or(Ok(Outcome::Cancelled))
    }

    /// Blocks the calling thread until the run ends, as [`RunHandle::outcome`] tells it. Not
    /// for use inside an async task.
    pub fn wait(self) -> Result<Outcome, JournalError> {
        self.outcome.blocking_recv().unwrap_or(Ok(Outcome::Cancelled))
    }
}

/// Cancels one run: a cheap clone of its handle's cancellation, for code that does not hold the
/// handle. Idempotent; never blocks.
#[derive(Debug, Clone)]
pub struct RunCanceller(CancellationToken);

impl RunCanceller {
    pub fn cancel(&self) {
        self.0.cancel();
    }
}

/// A run's committed events with their sequence numbers, each once and in order, as the engine
/// recorded them (unredacted: for the Rust host that runs the program, never for display; the
/// observer's `subscribe` gives the redacted public form). It falls behind without limit: past
/// the observer's buffer it catches up from the journal.
#[derive(Debug)]
pub struct EventStream {
    subscription: Subscription,
    pool: tokio::runtime::Handle,
    failure: Option<ObserveError>,
}

impl EventStream {
    /// The next event, or `None` after the run's last one (or after a failure to read the
    /// journal back, which [`EventStream::failure`] then holds).
    pub async fn recv(&mut self) -> Option<(u64, Event)> {
        if self.failure.is_some() {
            return None;
        }
        match self.subscription.next_record().await? {
            Ok(record) => Some(record),
            Err(error) => {
                self.failure = Some(error);
                None
            }
        }
    }

    /// [`EventStream::recv`] for synchronous code: blocks the calling thread. Not for use inside
    /// an async task.
    pub fn blocking_recv(&mut self) -> Option<(u64, Event)> {
        // What is queued already needs no trip into the runtime.
        if self.failure.is_none()
            && let Some(record) = self.subscription.queued()
        {
            return Some(record);
        }
        let pool = self.pool.clone();
        pool.block_on(self.recv())
    }

    /// Why the stream ended before the run's last event, if it did.
    pub fn failure(&self) -> Option<&ObserveError> {
        self.failure.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn the_configuration_digest_pins_the_failure_policy() {
        let base = RunSettings::default();
        let digest = |settings: &RunSettings| config_digest(settings, &Limits::default());
        let backoff = RunSettings {
            retry_backoff: Some(Backoff {
                base: Duration::from_millis(100),
                factor: 2,
                cap: Duration::from_secs(1),
            }),
            ..base.clone()
        };
        let grace = RunSettings { cancellation_grace: None, ..base.clone() };
        let timeout = RunSettings { tool_timeout: Some(Duration::from_secs(30)), ..base.clone() };
        let digests: std::collections::BTreeSet<String> =
            [&base, &backoff, &grace, &timeout].into_iter().map(digest).collect();
        assert_eq!(digests.len(), 4, "each policy change changes the pinned configuration");
        assert_eq!(digest(&base), digest(&RunSettings::default()), "and the digest is deterministic");
    }
}
