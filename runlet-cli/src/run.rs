//! `runlet run FILE --registry R.json --tools T.json | --mcp … [--inputs I.json] [--input NAME=JSON]…
//! [--limit KEY=N]… [--journal memory|sqlite:PATH] [--durability full|normal] [--snapshot-every N] [--events OUT.jsonl]
//! [--record TRANSCRIPT.json] [--digest-key-file PATH] [--format text|json]`: compiles the
//! program and runs it with the scripted tools of a fixture file and/or the tools of MCP servers
//! (`--mcp`, `--mcp-config`; `--registry` then optional and laid over them), optionally writing its events
//! and recording a tool transcript. With an SQLite journal the run id comes first on stderr
//! (`run r-…`), for `runlet runs`, `resume`, `resolve` and `cancel`. Output paths are checked
//! before anything runs. Exit 0 when it succeeds, 1 on a compile error or a failed or cancelled
//! run, 2 on usage or I/O. `runlet graph` takes the same options.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use runlet::analyze::WorkflowIdentity;
use runlet::diag::codes;
use runlet::engine::{Outcome, RunError, Sampler, SystemSampler, ToolExecutor};
use runlet::journal::RunId;
use runlet::observe::RunObserver;
use runlet::runtime::{RunOptions, Runtime};
use runlet::scripted::{RecordingExecutor, ScriptedExecutor, ToolFixtures};
use runlet::value::{Value, to_presentation_json};
use runlet_mcp::{McpClient, Routed};

use crate::events::EventsFile;
use crate::failure::{Failure, Shape};
use crate::files::{FileKind, read_text};
use crate::follow::{Followed, follow};
use crate::journal_spec::{DurabilityArg, JournalSpec};
use crate::limits::parse_limits;
use crate::mcp::{McpArgs, no_tools};
use crate::output::{refuse_clobbering, unwritable, write_file};
use crate::registry::{RegistryWarnings, load_inputs, load_registry_reporting, load_registry_with};
use crate::report::{Format, print_diagnostics, print_run_diagnostics, registry_member};
use crate::serve::LiveServer;

/// How many events the `--events` subscription may hold before the file takes them: without
/// a bound that matters (queued events are allocated only as they come).
const EVENTS_QUEUE: usize = 1 << 32;

/// The options `run` and `replay` share: the program, what it is checked and run against, and how
/// the result is printed.
#[derive(Debug, clap::Args)]
pub struct ProgramArgs {
    /// The Runlet source file.
    file: PathBuf,
    /// The registry file (tools and host input schemas). With MCP servers it is optional and
    /// overrides what it names of their tools.
    #[arg(long)]
    registry: Option<PathBuf>,
    /// A JSON object of host input names to values.
    #[arg(long)]
    inputs: Option<PathBuf>,
    /// One host input as NAME=JSON; overrides the same name from `--inputs`.
    #[arg(long = "input", value_name = "NAME=JSON")]
    input: Vec<String>,
    /// One execution limit as KEY=N (an inclusive maximum); repeat for several.
    #[arg(long = "limit", value_name = "KEY=N")]
    limit: Vec<String>,
    /// Where the run is journaled: `memory` (default) or `sqlite:PATH`, whose runs `runlet
    /// runs` lists and `runlet resume` continues.
    #[arg(long, default_value = "memory")]
    journal: String,
    /// What an acknowledged append of an SQLite journal survives.
    #[arg(long, value_enum, default_value_t)]
    durability: DurabilityArg,
    /// How many journaled events the run's snapshots are at least apart (0: none); `runlet
    /// resume` restores the latest and replays only what follows it. Default: 10000 for an
    /// SQLite journal, none in memory.
    #[arg(long, value_name = "N")]
    snapshot_every: Option<u64>,
    /// Write the run's events to this file, one JSON object per line in sequence order.
    #[arg(long, value_name = "OUT.jsonl")]
    events: Option<PathBuf>,
    /// The key digests of sensitive or secret values are keyed with (default: the file
    /// `RUNLET_DIGEST_KEY_FILE` names; without either, an SQLite journal's own key file
    /// `PATH.digest-key`, or a random key of this process). A recorded run replays, and a
    /// journaled run resumes, only under the key it ran with.
    #[arg(long, value_name = "PATH")]
    digest_key_file: Option<PathBuf>,
    /// How to print the result.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    program: ProgramArgs,
    /// The tool fixture file that answers the program's calls (beside MCP servers: the calls
    /// of the tools it scripts).
    #[arg(long)]
    tools: Option<PathBuf>,
    #[command(flatten)]
    mcp: McpArgs,
    /// Write the run's tool transcript to this file, for `runlet replay`.
    #[arg(long, value_name = "TRANSCRIPT.json")]
    record: Option<PathBuf>,
    /// Serve the run's live graph page at ADDR (default 127.0.0.1:0), print its address on
    /// stderr before the run starts, and keep serving after it ends until interrupted.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, require_equals = true,
          default_missing_value = runlet_web::DEFAULT_ADDR)]
    serve: Option<String>,
}

impl Args {
    pub fn format(&self) -> Format {
        self.program.format
    }
}

pub fn run(args: &Args) -> ExitCode {
    match execute(args, false) {
        Ok(Some(mut finished)) => {
            let status = report(&finished, args.format());
            match finished.serving.take() {
                Some(server) => server.wait_for_signal(exit_status(&finished.outcome)),
                None => status,
            }
        }
        Ok(None) => ExitCode::from(1),
        Err(failure) => failure.report(args.format(), Shape::Run),
    }
}

/// Runs the program of `args` with its scripted tools and MCP servers, recording the transcript
/// when asked; `None` when it did not compile (reported, exit status 1). The servers are shut
/// down when the run has ended. `graph`: the caller shows the run's graph when it ends.
pub fn execute(args: &Args, graph: bool) -> Result<Option<Finished>, Failure> {
    refuse_clobbering_outputs(args)?;
    if let Some(path) = &args.record {
        check_writable(path)?;
    }
    let servers = args.mcp.attach()?;
    let tools = tools_of(args.tools.as_deref(), servers.as_ref(), "run")?;
    let finished = record_and_run(args, tools, servers.as_ref(), graph);
    if let Some(servers) = servers {
        servers.shutdown();
    }
    finished
}

/// The executor of a run: the fixtures of `--tools`, the MCP servers, or both (fixtures win
/// for the tools they script).
pub fn tools_of(
    fixtures: Option<&Path>,
    servers: Option<&McpClient>,
    command: &str,
) -> Result<Arc<dyn ToolExecutor>, Failure> {
    match (fixtures, servers) {
        (None, None) => Err(no_tools(command)),
        (Some(path), None) => load_fixtures(path),
        (None, Some(servers)) => Ok(Arc::new(servers.executor())),
        (Some(path), Some(servers)) => {
            let (scripted, names) = load_fixtures_named(path)?;
            Ok(Arc::new(Routed::new(scripted, names, Arc::new(servers.executor()))))
        }
    }
}

fn record_and_run(
    args: &Args,
    tools: Arc<dyn ToolExecutor>,
    servers: Option<&McpClient>,
    graph: bool,
) -> Result<Option<Finished>, Failure> {
    let showing = Showing { serve: args.serve.as_deref(), graph };
    let Some(path) = &args.record else {
        return compile_and_run(&args.program, servers, tools, Arc::new(SystemSampler), showing, |_| true);
    };
    let recorder = Arc::new(RecordingExecutor::new(tools));
    let Some(finished) =
        compile_and_run(&args.program, servers, recorder.clone(), recorder.clone(), showing, |_| true)?
    else {
        return Ok(None);
    };
    let text = recorder.transcript(finished.workflow.clone()).to_json().map_err(|error| {
        Failure::new(error.code(), format!("the transcript cannot be written as JSON: {}", error.message()))
    })?;
    write_file(path, text)?;
    Ok(Some(finished))
}

/// The scripted tools of the fixture file at `path`.
pub fn load_fixtures(path: &Path) -> Result<Arc<dyn ToolExecutor>, Failure> {
    load_fixtures_named(path).map(|(scripted, _)| scripted)
}

/// The scripted tools of the fixture file at `path`, and the names of the tools it scripts.
fn load_fixtures_named(path: &Path) -> Result<(Arc<dyn ToolExecutor>, BTreeSet<String>), Failure> {
    let file = read_text(path, FileKind::Fixtures)?;
    match ToolFixtures::from_json_str(&file.text) {
        Ok(fixtures) => {
            let names = fixtures.tools().map(|(name, _)| name.to_string()).collect();
            Ok((Arc::new(ScriptedExecutor::new(fixtures)), names))
        }
        Err(error) => Err(Failure::in_file(FileKind::Fixtures.what(), file, error.diagnostics)),
    }
}

/// A run that ended: its id, outcome, workflow identity, observer, the id of the key its
/// digests of sensitive values were keyed with, and the registry's warnings for a JSON report.
pub struct Finished {
    pub run_id: RunId,
    pub outcome: Outcome,
    pub workflow: WorkflowIdentity,
    pub observer: RunObserver,
    pub digest_key: String,
    pub warnings: Option<RegistryWarnings>,
    /// The page server of `--serve`, still serving.
    pub serving: Option<LiveServer>,
}

/// The exit status of a run that ended with `outcome`.
pub fn exit_status(outcome: &Outcome) -> u8 {
    match outcome {
        Outcome::Succeeded(_) => 0,
        Outcome::Failed(_) | Outcome::Cancelled => 1,
    }
}

/// Where a run's graph is shown: its live page at `serve`'s address, and (`graph`) a snapshot
/// once it ended. A run shown nowhere folds no live graph.
#[derive(Debug, Clone, Copy, Default)]
pub struct Showing<'a> {
    pub serve: Option<&'a str>,
    pub graph: bool,
}

/// Compiles the program of `args`, asks `check` about its workflow (false: refused, reported),
/// and runs it with `executor` answering its calls and `sampler` its sampled intrinsics, writing
/// `--events` as they happen and showing its graph where `showing` says. `None` when the program did not compile or `check` refused it
/// (both reported, exit status 1); problems with the files, inputs, journal or event file are
/// [`Failure`]s (exit 2).
pub fn compile_and_run(
    args: &ProgramArgs,
    servers: Option<&McpClient>,
    executor: Arc<dyn ToolExecutor>,
    sampler: Arc<dyn Sampler>,
    showing: Showing<'_>,
    check: impl FnOnce(&WorkflowIdentity) -> bool,
) -> Result<Option<Finished>, Failure> {
    let file = read_text(&args.file, FileKind::Source)?;
    if args.registry.is_none() && servers.is_none() {
        return Err(Failure::new(codes::INVALID_ARGUMENT, "`--registry FILE` is required without `--mcp`"));
    }
    // As JSON, the registry's warnings go into the report; as text, to stderr here.
    let (registry, warnings) = match args.format {
        Format::Text => (load_registry_with(args.registry.as_deref(), servers)?, None),
        Format::Json => load_registry_reporting(args.registry.as_deref(), servers)?,
    };
    let mut inputs = load_inputs(args.inputs.as_deref(), &registry)?;
    for assignment in &args.input {
        inputs
            .insert_assignment(assignment, &registry)
            .map_err(|error| Failure::new(error.code(), format!("`--input {assignment}`: {error}")))?;
    }
    let limits = parse_limits(&args.limit)?;
    let journal = JournalSpec::parse(&args.journal)?;
    let events = args.events.as_deref().map(EventsFile::create).transpose()?;
    let opened = journal.open(args.durability)?;
    let serving =
        showing.serve.map(|addr| LiveServer::start(addr, Arc::clone(&opened.journal))).transpose()?;
    let mut builder = opened
        .attach(Runtime::builder())
        .registry(registry)
        .executor(executor)
        .sampler(sampler)
        .limits(limits)
        // One run, as `runlet resume` runs one: its task does nearly all the work, and a second
        // worker would mostly cost wake-ups between threads (BENCHMARKS.md, the per-call path).
        .worker_threads(1)
        // Folding every event into a graph nobody will see is a third of a long loop's work.
        .live_graph(showing.serve.is_some() || showing.graph);
    if let Some(key) = journal.digest_key(args.digest_key_file.as_deref())? {
        builder = builder.digest_key(&key.id, &key.secret);
    }
    if let Some(every) = args.snapshot_every {
        builder = builder.snapshot_every(every);
    }
    if events.is_some() {
        // The events file is written as fast as the disk takes it; its subscription holds what
        // the run publishes meanwhile rather than fall back to a journal that may have let go.
        builder = builder.observer_buffer(EVENTS_QUEUE);
    }
    let runtime = builder.build().map_err(|error| Failure::new(error.code(), error.to_string()))?;
    let program = match runtime.compile(&file.text, &inputs) {
        Ok(program) => program,
        Err(diagnostics) => {
            match args.format {
                Format::Json => {
                    print_run_diagnostics("compile_error", &file.text, &diagnostics, warnings.as_ref())
                }
                Format::Text => print_diagnostics(&file, &diagnostics, Format::Text),
            }
            return Ok(None);
        }
    };
    let workflow = program.compiled().identity().clone();
    if !check(&workflow) {
        return Ok(None);
    }
    let options = RunOptions { trace: crate::telemetry::parent_from_env(), ..RunOptions::default() };
    let run = runtime
        .start_with(&program, &inputs, options)
        .map_err(|error| Failure::new(error.code(), error.to_string()))?;
    let run_id = run.run_id().clone();
    if let Some(server) = &serving {
        server.show(&run_id, run.observer(), &file.text);
    }
    let Followed { outcome, observer } = follow(run, events, journal != JournalSpec::Memory)?;
    let digest_key = runtime.digest_key().id().to_owned();
    Ok(Some(Finished { run_id, outcome, workflow, observer, digest_key, warnings, serving }))
}

/// Refuses `--events` and `--record` paths that are files the run reads or keeps, or each other.
fn refuse_clobbering_outputs(args: &Args) -> Result<(), Failure> {
    let program = &args.program;
    let journal_files = JournalSpec::parse(&program.journal)?.files();
    let mut kept: Vec<(&str, &Path)> = vec![("the program", program.file.as_path())];
    kept.extend(program.registry.as_deref().map(|path| ("the registry", path)));
    kept.extend(program.inputs.as_deref().map(|path| ("the inputs file", path)));
    kept.extend(args.tools.as_deref().map(|path| ("the tool fixture file", path)));
    kept.extend(program.digest_key_file.as_deref().map(|path| ("the digest key file", path)));
    kept.extend(journal_files.iter().map(|(what, path)| (*what, path.as_path())));
    if let Some(events) = &program.events {
        let mut kept = kept.clone();
        kept.extend(args.record.as_deref().map(|path| ("the transcript", path)));
        refuse_clobbering("--events", events, &kept)?;
    }
    if let Some(record) = &args.record {
        kept.extend(program.events.as_deref().map(|path| ("the events file", path)));
        refuse_clobbering("--record", record, &kept)?;
    }
    Ok(())
}

/// Refuses an output path that cannot be written before anything runs. The file is created
/// when missing and otherwise left as it is until the run's end writes it.
fn check_writable(path: &Path) -> Result<(), Failure> {
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map(drop)
        .map_err(|error| unwritable(path, &error))
}

/// Prints the end of the run `finished` and returns its exit status.
pub fn report(finished: &Finished, format: Format) -> ExitCode {
    report_outcome(&finished.run_id, &finished.outcome, finished.warnings.as_ref(), format)
}

/// Prints a run's end and returns its exit status. Values print as canonical presentation
/// JSON (spec §3.3); the JSON report names the run (`run_id`) and carries the registry's
/// `warnings`, when it has any, as a `registry` report.
pub fn report_outcome(
    run_id: &RunId,
    outcome: &Outcome,
    warnings: Option<&RegistryWarnings>,
    format: Format,
) -> ExitCode {
    let id = serde_json::to_string(run_id.as_str()).expect("a string serializes");
    let registry = registry_member(warnings);
    match (outcome, format) {
        (Outcome::Succeeded(value), Format::Json) => {
            outln!(
                r#"{{"status":"succeeded","run_id":{id},"value":{}{registry}}}"#,
                presentation(value.value())
            );
            ExitCode::SUCCESS
        }
        (Outcome::Succeeded(value), Format::Text) => {
            outln!("{}", presentation(value.value()));
            ExitCode::SUCCESS
        }
        (Outcome::Failed(error), Format::Json) => {
            outln!(
                r#"{{"status":"failed","run_id":{id},"error":{}{registry}}}"#,
                presentation(&error.to_value())
            );
            ExitCode::from(1)
        }
        (Outcome::Failed(error), Format::Text) => {
            print_failure(error);
            ExitCode::from(1)
        }
        (Outcome::Cancelled, Format::Json) => {
            outln!(r#"{{"status":"cancelled","run_id":{id}{registry}}}"#);
            ExitCode::from(1)
        }
        (Outcome::Cancelled, Format::Text) => {
            errln!("the run was cancelled");
            ExitCode::from(1)
        }
    }
}

/// Canonical presentation JSON of `value`; a value holding bytes (which JSON cannot carry
/// without a chosen encoding) prints as a JSON string explaining so.
pub fn presentation(value: &Value) -> String {
    to_presentation_json(value).unwrap_or_else(|error| {
        serde_json::to_string(&format!("(not JSON-representable: {})", error.message())).expect("a string")
    })
}

fn print_failure(error: &RunError) {
    errln!("error[{}]: {}", error.code, error.message);
    if let Some(tool) = &error.tool {
        errln!("  tool: {tool}");
    }
    errln!("  node: {}", error.node_id);
    errln!("  attempt: {}, retryable: {}, uncertain: {}", error.attempt, error.retryable, error.uncertain);
    if !error.details.is_empty() {
        errln!("  details: {}", presentation(&Value::Object(error.details.clone())));
    }
    for cause in &error.causes {
        errln!("  also failed: {}: {} (node {})", cause.code, cause.message, cause.node_id);
    }
}
