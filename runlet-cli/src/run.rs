//! `runlet run FILE --registry R.json --tools T.json [--inputs I.json] [--input NAME=JSON]…
//! [--limit KEY=N]… [--journal memory|sqlite:PATH] [--events OUT.jsonl] [--record TRANSCRIPT.json]
//! [--digest-key-file PATH] [--format text|json]`: compiles the program and runs it with the
//! scripted tools of a fixture file, optionally writing its events and recording a tool
//! transcript. Exit 0 when it succeeds, 1 on a compile error or a failed run, 2 on usage or I/O.
//! `runlet graph` takes the same options.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use runlet::analyze::WorkflowIdentity;
use runlet::diag::{json_diagnostics, source_digest};
use runlet::engine::{Limits, Outcome, RunError, Sampler, SystemSampler, ToolExecutor};
use runlet::journal::{Durability, Journal, MemoryJournal, SqliteJournal};
use runlet::observe::RunObserver;
use runlet::runtime::Runtime;
use runlet::scripted::{RecordingExecutor, ScriptedExecutor};
use runlet::value::{Value, to_presentation_json};

use crate::digest_key;
use crate::events::write_events;
use crate::input::{read_text, usage_error};
use crate::registry::{load_inputs, load_registry};
use crate::report::{Format, print_diagnostics};

/// The options `run` and `replay` share: the program, what it is checked and run against, and how
/// the result is printed.
#[derive(Debug, clap::Args)]
pub struct ProgramArgs {
    /// The Runlet source file.
    file: PathBuf,
    /// The registry file (tools and host input schemas).
    #[arg(long)]
    registry: PathBuf,
    /// A JSON object of host input names to values.
    #[arg(long)]
    inputs: Option<PathBuf>,
    /// One host input as NAME=JSON; overrides the same name from `--inputs`.
    #[arg(long = "input", value_name = "NAME=JSON")]
    input: Vec<String>,
    /// One execution limit as KEY=N (an inclusive maximum); repeat for several.
    #[arg(long = "limit", value_name = "KEY=N")]
    limit: Vec<String>,
    /// Where the run is journaled: `memory` (default) or `sqlite:PATH`.
    #[arg(long, default_value = "memory")]
    journal: String,
    /// Write the run's events to this file, one JSON object per line in sequence order.
    #[arg(long, value_name = "OUT.jsonl")]
    events: Option<PathBuf>,
    /// The key digests of sensitive or secret values are keyed with (default: the file
    /// `RUNLET_DIGEST_KEY_FILE` names; without either, a random key of this process). A recorded
    /// run replays only under the key it was recorded with.
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
    /// The tool fixture file that answers the program's calls.
    #[arg(long)]
    tools: PathBuf,
    /// Write the run's tool transcript to this file, for `runlet replay`.
    #[arg(long, value_name = "TRANSCRIPT.json")]
    record: Option<PathBuf>,
}

pub fn run(args: &Args) -> ExitCode {
    match execute(args) {
        Ok(finished) => report(&finished.outcome, args.program.format),
        Err(status) => status,
    }
}

/// Runs the program of `args` with its scripted tools, recording the transcript when asked.
pub fn execute(args: &Args) -> Result<Finished, ExitCode> {
    let format = args.program.format;
    let fixtures = read_text(&args.tools)?;
    let scripted = ScriptedExecutor::from_json_str(&fixtures.text).map_err(|error| {
        print_diagnostics(&fixtures, &error.diagnostics, format);
        usage_error(format!("the tool fixture file `{}` has errors", fixtures.display_name()))
    })?;
    let scripted: Arc<dyn ToolExecutor> = Arc::new(scripted);
    let Some(path) = &args.record else {
        return compile_and_run(&args.program, scripted, Arc::new(SystemSampler), |_| Ok(()));
    };
    let recorder = Arc::new(RecordingExecutor::new(scripted));
    let finished = compile_and_run(&args.program, recorder.clone(), recorder.clone(), |_| Ok(()))?;
    let text = recorder.transcript(finished.workflow.clone()).to_json().map_err(|error| {
        usage_error(format!("the transcript cannot be written as JSON: {}", error.message()))
    })?;
    std::fs::write(path, text)
        .map_err(|error| usage_error(format!("cannot write `{}`: {error}", path.display())))?;
    Ok(finished)
}

/// A run that ended: its outcome, its workflow identity, its observer and the id of the key its
/// digests of sensitive values were keyed with.
pub struct Finished {
    pub outcome: Outcome,
    pub workflow: WorkflowIdentity,
    pub observer: RunObserver,
    pub digest_key: String,
}

/// Compiles the program of `args`, asks `check` about its workflow, and runs it with `executor`
/// answering its calls and `sampler` its sampled intrinsics, writing `--events` as they happen.
/// A compile error is printed and gives exit status 1; problems with the files, inputs, journal
/// or event file exit 2.
pub fn compile_and_run(
    args: &ProgramArgs,
    executor: Arc<dyn ToolExecutor>,
    sampler: Arc<dyn Sampler>,
    check: impl FnOnce(&WorkflowIdentity) -> Result<(), ExitCode>,
) -> Result<Finished, ExitCode> {
    let file = read_text(&args.file)?;
    let registry = load_registry(Some(&args.registry), args.format)?;
    let mut inputs = load_inputs(args.inputs.as_deref(), &registry)?;
    for assignment in &args.input {
        inputs
            .insert_assignment(assignment, &registry)
            .map_err(|error| usage_error(format!("`--input {assignment}`: {error} ({})", error.code())))?;
    }
    let mut limits = Limits::new();
    for assignment in &args.limit {
        let (key, cap) = Limits::parse_assignment(assignment)
            .map_err(|error| usage_error(format!("`--limit {assignment}`: {error}")))?;
        limits = limits.with(key, cap);
    }
    let mut builder = Runtime::builder()
        .registry(registry)
        .executor(executor)
        .sampler(sampler)
        .journal(open_journal(&args.journal)?)
        .limits(limits);
    if let Some(key) = digest_key::load(args.digest_key_file.as_deref())? {
        builder = builder.digest_key(&key.id, &key.secret);
    }
    let runtime = builder.build().map_err(usage_error)?;
    let program = match runtime.compile(&file.text, &inputs) {
        Ok(program) => program,
        Err(diagnostics) => {
            match args.format {
                Format::Json => {
                    let diagnostics = serde_json::to_string(&json_diagnostics(&file.text, &diagnostics))
                        .expect("diagnostics serialize");
                    let digest = source_digest(&file.text);
                    println!(
                        r#"{{"status":"compile_error","source_digest":"{digest}","diagnostics":{diagnostics}}}"#
                    );
                }
                Format::Text => print_diagnostics(&file, &diagnostics, Format::Text),
            }
            return Err(ExitCode::from(1));
        }
    };
    let workflow = program.compiled().identity().clone();
    check(&workflow)?;
    let run = runtime.start(&program, &inputs).map_err(usage_error)?;
    let observer = run.observer();
    let written = args.events.as_deref().map(|path| write_events(&observer, path));
    let outcome = run.wait().map_err(|error| usage_error(format!("the journal failed: {error}")))?;
    written.transpose()?;
    let digest_key = runtime.digest_key().id().to_owned();
    Ok(Finished { outcome, workflow, observer, digest_key })
}

fn open_journal(spec: &str) -> Result<Arc<dyn Journal>, ExitCode> {
    if spec == "memory" {
        return Ok(Arc::new(MemoryJournal::new()));
    }
    match spec.strip_prefix("sqlite:") {
        Some(path) if !path.is_empty() => SqliteJournal::open(path, Durability::Full)
            .map(|journal| Arc::new(journal) as Arc<dyn Journal>)
            .map_err(|error| usage_error(format!("cannot open the journal: {}: {error}", error.code()))),
        _ => Err(usage_error(format!("`--journal {spec}`: use `memory` or `sqlite:PATH`"))),
    }
}

/// Prints the run's end and returns its exit status. Values print as canonical presentation
/// JSON (spec §3.3).
pub fn report(outcome: &Outcome, format: Format) -> ExitCode {
    match (outcome, format) {
        (Outcome::Succeeded(value), Format::Json) => {
            println!(r#"{{"status":"succeeded","value":{}}}"#, presentation(value.value()));
            ExitCode::SUCCESS
        }
        (Outcome::Succeeded(value), Format::Text) => {
            println!("{}", presentation(value.value()));
            ExitCode::SUCCESS
        }
        (Outcome::Failed(error), Format::Json) => {
            println!(r#"{{"status":"failed","error":{}}}"#, presentation(&error.to_value()));
            ExitCode::from(1)
        }
        (Outcome::Failed(error), Format::Text) => {
            print_failure(error);
            ExitCode::from(1)
        }
        (Outcome::Cancelled, Format::Json) => {
            println!(r#"{{"status":"cancelled"}}"#);
            ExitCode::from(1)
        }
        (Outcome::Cancelled, Format::Text) => {
            eprintln!("the run was cancelled");
            ExitCode::from(1)
        }
    }
}

/// Canonical presentation JSON of `value`; a value holding bytes (which JSON cannot carry
/// without a chosen encoding) prints as a JSON string explaining so.
fn presentation(value: &Value) -> String {
    to_presentation_json(value).unwrap_or_else(|error| {
        serde_json::to_string(&format!("(not JSON-representable: {})", error.message())).expect("a string")
    })
}

fn print_failure(error: &RunError) {
    eprintln!("error[{}]: {}", error.code, error.message);
    if let Some(tool) = &error.tool {
        eprintln!("  tool: {tool}");
    }
    eprintln!("  node: {}", error.node_id);
    eprintln!("  attempt: {}, retryable: {}, uncertain: {}", error.attempt, error.retryable, error.uncertain);
    if !error.details.is_empty() {
        eprintln!("  details: {}", presentation(&Value::Object(error.details.clone())));
    }
    for cause in &error.causes {
        eprintln!("  also failed: {}: {} (node {})", cause.code, cause.message, cause.node_id);
    }
}
