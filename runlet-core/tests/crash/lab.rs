//! Where crashed runs live: each run has its own in-memory store and world, assigned when the
//! run is created. The crashing worker's journal takes a set number of the run's appends and
//! then fails every later one, as a worker that crashed would: nothing after the crash point
//! reaches the store, and the run stops at its next append (a budget the harness may extend
//! for a worker that resumes the run and crashes again). Each worker's tools route a call to
//! its run's world.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use parking_lot::Mutex;
use runlet::engine::{
    RecoveryOutcome, RecoveryRequest, ToolCall, ToolCapabilities, ToolError, ToolExecutor, ToolOutput,
};
use runlet::journal::{
    Journal, JournalError, JournalErrorKind, MemoryJournal, Record, RunHeader, RunId, Snapshot,
};

use crate::world::{Worker, World};

/// One run under test: its store, its world, and how many appends reach the store.
#[derive(Clone)]
pub struct Trial {
    pub store: Arc<MemoryJournal>,
    pub world: Arc<World>,
    /// Appends the crashing workers' journals accept in all; `usize::MAX` never crashes.
    budget: Arc<AtomicUsize>,
    accepted: Arc<AtomicUsize>,
}

impl Trial {
    /// How many appends of the crashing workers reached the store.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }

    /// The next crashing worker's journal takes `more` appends, then crashes too.
    pub fn allow(&self, more: usize) {
        self.budget.store(self.accepted() + more, Ordering::SeqCst);
    }
}

/// The runs under test, by id.
pub struct Lab {
    /// What the tools can do, for workers asking before any call.
    capabilities: Arc<dyn ToolExecutor>,
    next: Mutex<Option<Trial>>,
    runs: Mutex<BTreeMap<RunId, Trial>>,
}

impl Lab {
    pub fn new(capabilities: Arc<dyn ToolExecutor>) -> Arc<Lab> {
        Arc::new(Lab { capabilities, next: Mutex::default(), runs: Mutex::default() })
    }

    /// The run created next lives in a fresh store and `world`, and crashes after `budget`
    /// appends.
    pub fn prepare(&self, world: Arc<World>, budget: Option<usize>) {
        let budget = Arc::new(AtomicUsize::new(budget.unwrap_or(usize::MAX)));
        let trial = Trial { store: Arc::new(MemoryJournal::new()), world, budget, accepted: Arc::default() };
        *self.next.lock() = Some(trial);
    }

    pub fn trial(&self, run: &RunId) -> Trial {
        self.find(run).unwrap_or_else(|| panic!("run `{run}` is not under test"))
    }

    fn find(&self, run: &RunId) -> Option<Trial> {
        self.runs.lock().get(run).cloned()
    }

    /// Lets go of a run's store and world.
    pub fn forget(&self, run: &RunId) {
        self.runs.lock().remove(run);
    }

    /// The journal of a worker; `crashes` for those whose appends stop at the budget.
    pub fn journal(self: &Arc<Self>, crashes: bool) -> Arc<dyn Journal> {
        Arc::new(LabJournal { lab: Arc::clone(self), crashes })
    }

    /// The tools of `worker`.
    pub fn tools(self: &Arc<Self>, worker: Worker) -> Arc<dyn ToolExecutor> {
        Arc::new(LabTools { lab: Arc::clone(self), worker })
    }
}

struct LabJournal {
    lab: Arc<Lab>,
    crashes: bool,
}

#[async_trait]
impl Journal for LabJournal {
    async fn create_run(&self, header: &RunHeader) -> Result<(), JournalError> {
        let trial = self.lab.next.lock().take().expect("a run prepared before it starts");
        trial.store.create_run(header).await?;
        self.lab.runs.lock().insert(header.run_id.clone(), trial);
        Ok(())
    }

    async fn header(&self, run: &RunId) -> Result<RunHeader, JournalError> {
        self.lab.trial(run).store.header(run).await
    }

    async fn append(&self, run: &RunId, expected_seq: u64, records: &[Record]) -> Result<u64, JournalError> {
        let trial = self.lab.trial(run);
        if self.crashes && trial.accepted() >= trial.budget.load(Ordering::SeqCst) {
            return Err(JournalError::new(JournalErrorKind::Storage, "the worker crashed"));
        }
        let last = trial.store.append(run, expected_seq, records).await?;
        if self.crashes {
            trial.accepted.fetch_add(1, Ordering::SeqCst);
        }
        Ok(last)
    }

    async fn read(&self, run: &RunId, after: u64, limit: usize) -> Result<Vec<Record>, JournalError> {
        self.lab.trial(run).store.read(run, after, limit).await
    }

    async fn load_snapshot(&self, run: &RunId) -> Result<Option<Snapshot>, JournalError> {
        self.lab.trial(run).store.load_snapshot(run).await
    }

    async fn store_snapshot(&self, run: &RunId, snapshot: Snapshot) -> Result<(), JournalError> {
        self.lab.trial(run).store.store_snapshot(run, snapshot).await
    }
}

struct LabTools {
    lab: Arc<Lab>,
    worker: Worker,
}

#[async_trait]
impl ToolExecutor for LabTools {
    fn capabilities(&self, tool: &str) -> ToolCapabilities {
        self.lab.capabilities.capabilities(tool)
    }

    /// A call of a run already forgotten comes from a worker long gone.
    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        match self.lab.find(&call.context.run_id) {
            Some(trial) => trial.world.dispatch(self.worker, call),
            None => Err(ToolError::new("WORKER_STOPPED", "the worker that sent this call is gone")),
        }
    }

    async fn recover(&self, request: RecoveryRequest) -> Result<RecoveryOutcome, ToolError> {
        let context = &request.call.context;
        Ok(self.lab.trial(&context.run_id).world.recover(&context.operation_id))
    }
}
