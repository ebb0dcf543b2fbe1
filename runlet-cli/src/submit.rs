//! `runlet submit FILE --journal postgres://… --registry R.json [--inputs I.json]
//! [--input NAME=JSON]… [--limit KEY=N]… [--digest-key-file PATH] [--format text|json]`
//! (INTERFACES.md §4.3): compiles the program and journals its run for a worker to run
//! (`runlet worker`); the header retains the source, the registry file and the inputs, so the
//! worker needs nothing else. Prints the run's id (`r-…`) alone on stdout. Exit 0 when
//! submitted, 1 on a compile error, 2 on usage, I/O or the journal.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use runlet::diag::codes;
use runlet::runtime::{RunOptions, Runtime};

use crate::failure::{Failure, Shape};
use crate::files::{FileKind, read_text};
use crate::journal_spec::JournalSpec;
use crate::limits::parse_limits;
use crate::registry::{load_inputs, load_registry_with};
use crate::report::{Format, print_diagnostics};
use crate::stored::{JournalArgs, NoTools};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The Runlet source file.
    file: PathBuf,
    /// The registry file (tools and host input schemas); the run's header retains it.
    #[arg(long)]
    registry: PathBuf,
    /// A JSON object of host input names to values.
    #[arg(long)]
    inputs: Option<PathBuf>,
    /// One host input as NAME=JSON; overrides the same name from `--inputs`.
    #[arg(long = "input", value_name = "NAME=JSON")]
    input: Vec<String>,
    /// One execution limit of the run as KEY=N; repeat for several.
    #[arg(long = "limit", value_name = "KEY=N")]
    limit: Vec<String>,
    #[command(flatten)]
    journal: JournalArgs,
    /// How to print a failure (the run id always prints alone).
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(args: &Args) -> ExitCode {
    execute(args).unwrap_or_else(|failure| failure.report(args.format, Shape::Diagnostics))
}

fn execute(args: &Args) -> Result<ExitCode, Failure> {
    let file = read_text(&args.file, FileKind::Source)?;
    let registry = load_registry_with(Some(&args.registry), None)?;
    let mut inputs = load_inputs(args.inputs.as_deref(), &registry)?;
    for assignment in &args.input {
        inputs
            .insert_assignment(assignment, &registry)
            .map_err(|error| Failure::new(error.code(), format!("`--input {assignment}`: {error}")))?;
    }
    let limits = parse_limits(&args.limit)?;
    let spec = JournalSpec::parse(&args.journal.journal)?;
    if !matches!(spec, JournalSpec::Postgres(_)) {
        return Err(Failure::new(
            codes::INVALID_ARGUMENT,
            "`runlet submit` journals a run for `runlet worker`, which runs the runs of a PostgreSQL journal (`--journal postgres://…`): to run a program into an SQLite journal, use `runlet run … --journal sqlite:PATH`",
        ));
    }
    let key = spec.digest_key(args.journal.digest_key_file.as_deref())?;
    let mut builder = spec
        .open(args.journal.durability)?
        .attach(Runtime::builder())
        .registry(registry)
        .executor(Arc::new(NoTools))
        .worker_threads(1);
    if let Some(key) = key {
        builder = builder.digest_key(&key.id, &key.secret);
    }
    let runtime = builder.build().map_err(|error| Failure::new(error.code(), error.to_string()))?;
    let program = match runtime.compile(&file.text, &inputs) {
        Ok(program) => program,
        Err(diagnostics) => {
            print_diagnostics(&file, &diagnostics, args.format);
            return Ok(ExitCode::from(1));
        }
    };
    let run = runtime
        .submit(
            &program,
            &inputs,
            RunOptions { limits, trace: crate::telemetry::parent_from_env(), host_data: None },
        )
        .map_err(|error| Failure::new(error.code(), error.to_string()))?;
    outln!("{run}");
    Ok(ExitCode::SUCCESS)
}
