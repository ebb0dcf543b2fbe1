//! A run of a durable journal, rebuilt from its header alone for the run manager (`runs`,
//! `resume`, `resolve`, `cancel`): the retained source compiled against the retained registry
//! file with the retained inputs, under a runtime with the run's limits and digest key, so the
//! header's pins hold and the journal replays.

use std::path::PathBuf;
use std::sync::Arc;

use runlet::diag::codes;
use runlet::engine::{ToolCall, ToolError, ToolExecutor, ToolOutput};
use runlet::journal::{Durability, Journal, RunHeader, RunId};
use runlet::registry::RegistryOptions;
use runlet::runtime::{Executable, Recovery, RetainedProgram, RunOptions, RunStatus, Runtime, run_listing};

use crate::failure::Failure;
use crate::journal_spec::{DurabilityArg, JournalSpec, OpenedJournal};

/// The options every run manager command takes: the journal and its digest key.
#[derive(Debug, clap::Args)]
pub struct JournalArgs {
    /// The journal the runs were written to: `sqlite:PATH` or `postgres://…`.
    #[arg(long)]
    pub journal: String,
    /// What an acknowledged append survives.
    #[arg(long, value_enum, default_value_t)]
    pub durability: DurabilityArg,
    /// The key the runs' digests of sensitive values were keyed with (default: the file
    /// `RUNLET_DIGEST_KEY_FILE` names, else the journal's own `PATH.digest-key`).
    #[arg(long, value_name = "PATH")]
    pub digest_key_file: Option<PathBuf>,
}

/// What the run manager commands about one run take: the run and its journal.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The run's id (`r-…`).
    pub run_id: String,
    #[command(flatten)]
    pub journal: JournalArgs,
    #[arg(long, value_enum, default_value_t)]
    pub format: crate::report::Format,
}

/// An opened durable journal.
pub struct OpenJournal {
    pub spec: JournalSpec,
    pub journal: Arc<dyn Journal>,
    opened: OpenedJournal,
    digest_key_file: Option<PathBuf>,
    reactor: tokio::runtime::Runtime,
}

impl OpenJournal {
    pub fn open(args: &JournalArgs) -> Result<OpenJournal, Failure> {
        let spec = JournalSpec::durable(&args.journal)?;
        let opened = spec.open(args.durability)?;
        let journal = Arc::clone(&opened.journal);
        let reactor = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|error| Failure::new(codes::JOURNAL_STORAGE, format!("no I/O reactor: {error}")))?;
        Ok(OpenJournal { spec, journal, opened, digest_key_file: args.digest_key_file.clone(), reactor })
    }

    /// Runs a journal operation to its end on this command's thread.
    pub fn block_on<F: std::future::Future>(&self, work: F) -> F::Output {
        self.reactor.block_on(work)
    }

    /// Where run `run` stands, from the journal alone ([`run_listing`]).
    pub fn status(&self, run: &RunId) -> Result<RunStatus, Failure> {
        self.block_on(run_listing(self.journal.as_ref(), run))
            .map(|summary| summary.status)
            .map_err(|error| Failure::new(error.code(), error.to_string()))
    }

    /// Refuses to drive or decide about run `run` while another live process runs it.
    pub fn not_running_elsewhere(&self, run: &RunId) -> Result<(), Failure> {
        match self.status(run)? {
            RunStatus::Running => Err(Failure::new(
                codes::RUN_OWNED_ELSEWHERE,
                format!(
                    "run `{run}` is running in another process: wait for it, or cancel it with `runlet cancel {run}`"
                ),
            )),
            _ => Ok(()),
        }
    }

    pub fn header(&self, run: &RunId) -> Result<RunHeader, Failure> {
        self.block_on(self.journal.header(run)).map_err(|error| Failure::new(error.code(), error.to_string()))
    }

    /// Rebuilds run `run` to resume it, with `executor` answering the calls it makes, writing
    /// snapshots `snapshot_every` events apart (the runtime's default when `None`).
    pub fn stored(
        &self,
        run: &RunId,
        executor: Arc<dyn ToolExecutor>,
        snapshot_every: Option<u64>,
    ) -> Result<StoredRun, Failure> {
        let stored = self.rebuilt(run, executor, snapshot_every)?;
        self.refuse_looser_durability(&stored.header)?;
        Ok(stored)
    }

    /// Rebuilds run `run` for a look: nothing it holds calls a tool.
    pub fn inspected(&self, run: &RunId) -> Result<StoredRun, Failure> {
        self.rebuilt(run, Arc::new(NoTools), None)
    }

    /// Rebuilds run `run` for a decision journaled about it (a cancellation, a resolution).
    pub fn decided(&self, run: &RunId) -> Result<StoredRun, Failure> {
        self.stored(run, Arc::new(NoTools), None)
    }

    /// Rebuilds run `run` from its header alone.
    fn rebuilt(
        &self,
        run: &RunId,
        executor: Arc<dyn ToolExecutor>,
        snapshot_every: Option<u64>,
    ) -> Result<StoredRun, Failure> {
        let header = self.header(run)?;
        let retained = RetainedProgram::from_header(&header, &RegistryOptions::default())
            .map_err(|error| Failure::new(error.code(), error.to_string()))?;
        let Some(registry) = retained.registry else {
            return Err(Failure::new(
                codes::RUN_NOT_RETAINED,
                format!(
                    "run `{run}` was started with a registry that was not read from a registry file, so its header retains no registry: resume it from the host that started it"
                ),
            ));
        };
        let mut builder = self
            .opened
            .attach(Runtime::builder())
            .registry(registry)
            .executor(executor)
            .limits(retained.limits)
            .worker_threads(1);
        if let Some(key) = self.spec.existing_digest_key(self.digest_key_file.as_deref())? {
            builder = builder.digest_key(&key.id, &key.secret);
        }
        if let Some(every) = snapshot_every {
            builder = builder.snapshot_every(every);
        }
        let runtime = builder.build().map_err(|error| Failure::new(error.code(), error.to_string()))?;
        let program = runtime.compile(&retained.source, &retained.inputs).map_err(|diagnostics| {
            let first = diagnostics
                .iter()
                .find(|d| d.is_error())
                .map_or_else(String::new, |d| format!(": {} {}", d.code, d.message));
            Failure::new(
                codes::RUN_RETAINED_UNREADABLE,
                format!(
                    "the program run `{run}` retains does not compile with this runtime{first}; nothing this runtime does can resume or cancel it, and `runlet runs delete {run}` removes it"
                ),
            )
        })?;
        Ok(StoredRun { run_id: run.clone(), header, runtime, program })
    }

    /// Refuses `--durability normal` for a run its header says was journaled `full`: a run's
    /// durability comes from its header, and a flag may not loosen it.
    fn refuse_looser_durability(&self, header: &RunHeader) -> Result<(), Failure> {
        let full = Durability::Full.report();
        let written = header.retained.as_ref().and_then(|retained| retained.durability.as_deref());
        match (written, self.journal.durability()) {
            (Some(written), Some(opened)) if written == full && opened != full => Err(Failure::new(
                codes::INVALID_ARGUMENT,
                format!(
                    "run `{}` was journaled with durability `full`, and `--durability normal` would loosen it: leave the flag out",
                    header.run_id
                ),
            )),
            _ => Ok(()),
        }
    }
}

/// The executor of a rebuilt run that is only looked at or decided about, never resumed.
pub struct NoTools;

#[async_trait::async_trait]
impl ToolExecutor for NoTools {
    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        Err(ToolError::new(
            codes::INVALID_ARGUMENT.to_string(),
            format!("`{}` is not called by a command that only reads or decides about a run", call.tool),
        ))
    }
}

/// A run rebuilt from its header.
pub struct StoredRun {
    pub run_id: RunId,
    pub header: RunHeader,
    pub runtime: Runtime,
    pub program: Executable,
}

impl StoredRun {
    /// The run replayed to its journal's end, its pins checked.
    pub fn recovery(&self) -> Result<Recovery<'_>, Failure> {
        self.runtime
            .recovery(&self.program, &self.run_id, RunOptions::default())
            .map_err(|error| Failure::new(error.code(), error.to_string()))
    }
}
