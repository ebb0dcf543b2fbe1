//! The Rust host: runs a fixture in this process through runlet-core's public API — a
//! `ToolExecutor` over the fixture's scripted tools that counts what it is asked, and a memory
//! or SQLite journal that can stop taking appends to crash the runtime.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use parking_lot::Mutex;
use runlet::analyze::Inputs;
use runlet::diag::render_json;
use runlet::engine::{
    Limits, Outcome as RunOutcome, RecoveryOutcome, RecoveryRequest, ToolCall, ToolCapabilities, ToolError,
    ToolExecutor, ToolOutput,
};
use runlet::journal::{
    Blob, Durability, Journal, JournalError, JournalErrorKind, MemoryJournal, Record, RunEntry, RunHeader,
    RunId, Snapshot, SqliteJournal,
};
use runlet::observe::ViewPolicy;
use runlet::registry::{Registry, RegistryOptions};
use runlet::runtime::{Executable, Runtime};
use runlet::scripted::ScriptedExecutor;
use runlet::value::{Value, to_presentation_json};
use runlet_postgres::{PostgresJournal, PostgresOptions};
use serde_json::Value as Json;

use crate::fixture::Fixture;
use crate::observation::{Invocation, Observation, Outcome, SeenEvent};

/// The journal a Rust host run keeps its run in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RustJournal {
    Memory,
    Sqlite,
    /// The database `RUNLET_TEST_POSTGRES_URL` names (runs of all fixtures side by side).
    Postgres,
}

/// The variable naming the PostgreSQL database of the `rust/postgres` host.
pub const POSTGRES_URL: &str = "RUNLET_TEST_POSTGRES_URL";

impl RustJournal {
    pub fn host_name(self) -> &'static str {
        match self {
            RustJournal::Memory => "rust/memory",
            RustJournal::Sqlite => "rust/sqlite",
            RustJournal::Postgres => "rust/postgres",
        }
    }
}

/// The digest key both runtimes of a crashing fixture share, as two processes of one host would.
const DIGEST_KEY: (&str, &[u8]) = ("conformance", b"the key of the conformance hosts");

/// Runs `fixture` and reports what was seen.
pub fn run(fixture: &Fixture, journal: RustJournal) -> Observation {
    match Host::new(fixture, journal).and_then(|host| host.observe(fixture)) {
        Ok(observation) => observation,
        Err(message) => Observation::host_error(message),
    }
}

/// What outlives a crash: the tools (their `times` counters and the counts) and the store.
struct Host {
    registry: String,
    limits: Limits,
    tools: Arc<Counted>,
    store: Store,
}

/// Where the journal's bytes are, so that a fresh runtime can open them again.
enum Store {
    Memory(Arc<MemoryJournal>),
    Sqlite { _dir: tempfile::TempDir, path: std::path::PathBuf },
    Postgres { url: String },
}

impl Store {
    fn open(&self) -> Result<Arc<dyn Journal>, String> {
        match self {
            Store::Memory(journal) => Ok(journal.clone()),
            Store::Sqlite { path, .. } => SqliteJournal::open(path, Durability::Normal)
                .map(|journal| Arc::new(journal) as Arc<dyn Journal>)
                .map_err(|e| format!("the SQLite journal does not open: {e}")),
            Store::Postgres { url } => PostgresJournal::connect(url, PostgresOptions::default())
                .map(|journal| Arc::new(journal) as Arc<dyn Journal>)
                .map_err(|e| format!("the PostgreSQL journal does not open: {e}")),
        }
    }
}

impl Host {
    fn new(fixture: &Fixture, journal: RustJournal) -> Result<Host, String> {
        let registry = fixture.registry_json();
        let limits_text = fixture.limits_json();
        let limits = Limits::from_json(&limits_text).map_err(|e| format!("the limits are refused: {e}"))?;
        let scripted = ScriptedExecutor::from_json_str(&fixture.tools_json())
            .map_err(|e| format!("the tool fixtures do not load: {e}"))?;
        let store = match journal {
            RustJournal::Memory => Store::Memory(Arc::new(MemoryJournal::new())),
            RustJournal::Sqlite => {
                let dir = tempfile::tempdir().map_err(|e| format!("no temporary directory: {e}"))?;
                let path = dir.path().join("journal.db");
                Store::Sqlite { _dir: dir, path }
            }
            RustJournal::Postgres => Store::Postgres {
                url: std::env::var(POSTGRES_URL).map_err(|_| format!("`{POSTGRES_URL}` is not set"))?,
            },
        };
        Ok(Host { registry, limits, tools: Arc::new(Counted::new(scripted)), store })
    }

    /// A fresh runtime over the store, its journal stopping after `appends` when given.
    fn runtime(&self, appends: Option<u64>) -> Result<Runtime, String> {
        let mut journal = self.store.open()?;
        if let Some(appends) = appends {
            journal = Arc::new(Stopping { inner: journal, left: AtomicU64::new(appends) });
        }
        let registry = Registry::from_json_str(&self.registry, &RegistryOptions::default())
            .map_err(|e| format!("the registry does not load: {e}"))?
            .registry;
        Runtime::builder()
            .registry(registry)
            .executor(self.tools.clone())
            .journal(journal)
            .limits(self.limits.clone())
            .digest_key(DIGEST_KEY.0, DIGEST_KEY.1)
            .build()
            .map_err(|e| format!("the runtime does not build: {e}"))
    }

    fn observe(self, fixture: &Fixture) -> Result<Observation, String> {
        let crash = fixture.crash.map(|crash| crash.after_appends);
        let runtime = self.runtime(crash)?;
        let inputs = Inputs::from_json(&fixture.inputs_json(), runtime.registry())
            .map_err(|e| format!("the inputs are refused: {e}"))?;
        let program = match runtime.compile(&fixture.source, &inputs) {
            Ok(program) => program,
            Err(diagnostics) => {
                let report = render_json(&fixture.source, &diagnostics);
                let report =
                    serde_json::from_str(&report).map_err(|e| format!("the report is not JSON: {e}"))?;
                return Ok(self.observation(Outcome::CompileError { report }, Vec::new()));
            }
        };
        let handle = runtime.start(&program, &inputs).map_err(|e| format!("the run does not start: {e}"))?;
        let run = handle.run_id().clone();
        let mut ended = handle.wait();
        let (runtime, program) = if crash.is_some() {
            // The process is gone; a fresh one resumes the run from what the journal took.
            drop(runtime);
            let runtime = self.runtime(None)?;
            let program = runtime
                .compile(&fixture.source, &inputs)
                .map_err(|_| "the program does not compile again")?;
            let resumed =
                runtime.resume(&program, &run).map_err(|e| format!("the run does not resume: {e}"))?;
            ended = resumed.wait();
            (runtime, program)
        } else {
            (runtime, program)
        };
        let outcome = match ended {
            Ok(outcome) => outcome_of(&outcome)?,
            Err(error) => Outcome::HostError { message: format!("the journal failed: {error}") },
        };
        let events = journal_events(&runtime, &program, &run)?;
        Ok(self.observation(outcome, events))
    }

    fn observation(&self, outcome: Outcome, events: Vec<SeenEvent>) -> Observation {
        let counts = self.tools.counts.lock();
        Observation {
            outcome,
            invocations: counts.invocations.clone(),
            max_in_flight: counts.in_flight.iter().map(|(tool, (_, max))| (tool.clone(), *max)).collect(),
            events,
        }
    }
}

fn outcome_of(outcome: &RunOutcome) -> Result<Outcome, String> {
    let json = |value: &Value| -> Result<Json, String> {
        let text = to_presentation_json(value).map_err(|e| format!("the value has no JSON form: {e}"))?;
        serde_json::from_str(&text).map_err(|e| format!("presentation JSON does not parse: {e}"))
    };
    Ok(match outcome {
        RunOutcome::Succeeded(value) => Outcome::Succeeded { value: json(value.value())? },
        RunOutcome::Failed(error) => Outcome::Failed { error: json(&error.to_value())? },
        RunOutcome::Cancelled => Outcome::Cancelled,
    })
}

fn journal_events(runtime: &Runtime, program: &Executable, run: &RunId) -> Result<Vec<SeenEvent>, String> {
    let events = runtime
        .journal_events(program, run, &ViewPolicy::default())
        .map_err(|e| format!("the journal's events do not read: {e}"))?;
    Ok(events.into_iter().map(|event| SeenEvent { seq: event.seq, kind: event.kind.to_owned() }).collect())
}

/// The scripted tools, counting every invocation and the calls in flight per tool.
struct Counted {
    scripted: ScriptedExecutor,
    counts: Mutex<Counts>,
}

#[derive(Default)]
struct Counts {
    invocations: Vec<Invocation>,
    /// Per tool: calls in flight now, and the most there were.
    in_flight: BTreeMap<String, (u64, u64)>,
}

impl Counted {
    fn new(scripted: ScriptedExecutor) -> Counted {
        Counted { scripted, counts: Mutex::default() }
    }
}

/// Takes a call off its tool's in-flight count when it ends, also when it is dropped.
struct InFlight<'a> {
    counts: &'a Mutex<Counts>,
    tool: String,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if let Some((now, _)) = self.counts.lock().in_flight.get_mut(&self.tool) {
            *now -= 1;
        }
    }
}

#[async_trait]
impl ToolExecutor for Counted {
    fn capabilities(&self, tool: &str) -> ToolCapabilities {
        self.scripted.capabilities(tool)
    }

    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        let args = to_presentation_json(&Value::List(call.arguments.clone()))
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or(Json::Null);
        let tool = call.tool.to_string();
        let _in_flight = {
            let mut counts = self.counts.lock();
            counts.invocations.push(Invocation { tool: tool.clone(), args });
            let (now, max) = counts.in_flight.entry(tool.clone()).or_default();
            *now += 1;
            *max = (*max).max(*now);
            InFlight { counts: &self.counts, tool }
        };
        self.scripted.dispatch(call).await
    }

    async fn recover(&self, request: RecoveryRequest) -> Result<RecoveryOutcome, ToolError> {
        self.scripted.recover(request).await
    }
}

/// A journal that takes `left` more appends, then refuses every one, writing nothing: the
/// process stopped there.
struct Stopping {
    inner: Arc<dyn Journal>,
    left: AtomicU64,
}

impl Stopping {
    fn take_one(&self) -> Result<(), JournalError> {
        self.left
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| left.checked_sub(1))
            .map(drop)
            .map_err(|_| JournalError::new(JournalErrorKind::Storage, "the host stopped the runtime here"))
    }
}

#[async_trait]
impl Journal for Stopping {
    async fn create_run(&self, header: &RunHeader) -> Result<(), JournalError> {
        self.inner.create_run(header).await
    }

    async fn header(&self, run: &RunId) -> Result<RunHeader, JournalError> {
        self.inner.header(run).await
    }

    async fn append(&self, run: &RunId, expected_seq: u64, records: &[Record]) -> Result<u64, JournalError> {
        self.take_one()?;
        self.inner.append(run, expected_seq, records).await
    }

    fn keeps_blobs(&self) -> bool {
        self.inner.keeps_blobs()
    }

    async fn append_with_blobs(
        &self,
        run: &RunId,
        expected_seq: u64,
        records: &[Record],
        blobs: &[Blob],
    ) -> Result<u64, JournalError> {
        self.take_one()?;
        self.inner.append_with_blobs(run, expected_seq, records, blobs).await
    }

    async fn blob(&self, digest: &[u8; 32]) -> Result<Option<Arc<[u8]>>, JournalError> {
        self.inner.blob(digest).await
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
}
