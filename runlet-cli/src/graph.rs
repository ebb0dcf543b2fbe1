//! `runlet graph FILE …the options of run… [--dot OUT.dot]`: runs the program like `run`, then
//! prints the executed graph as JSON (and writes it as Graphviz DOT with `--dot`). Exit statuses
//! are those of `run`.

use std::path::PathBuf;
use std::process::ExitCode;

use runlet::observe::{ViewPolicy, to_dot};

use crate::failure::{Failure, Shape};
use crate::output::write_file;
use crate::run;

#[derive(Debug, clap::Args)]
pub struct GraphArgs {
    #[command(flatten)]
    run: run::Args,
    /// Also write the graph as Graphviz DOT to this file.
    #[arg(long, value_name = "OUT.dot")]
    dot: Option<PathBuf>,
}

pub fn run(args: &GraphArgs) -> ExitCode {
    execute(args).unwrap_or_else(|failure| failure.report(args.run.format(), Shape::Run))
}

fn execute(args: &GraphArgs) -> Result<ExitCode, Failure> {
    let Some(mut finished) = run::execute(&args.run, true)? else { return Ok(ExitCode::from(1)) };
    let snapshot = finished.observer.snapshot(&ViewPolicy::default());
    if let Some(path) = &args.dot {
        write_file(path, to_dot(&snapshot))?;
    }
    let json = serde_json::to_string_pretty(&snapshot).expect("a graph snapshot serializes");
    outln!("{json}");
    match finished.serving.take() {
        Some(server) => Ok(server.wait_for_signal(run::exit_status(&finished.outcome))),
        None => Ok(ExitCode::from(run::exit_status(&finished.outcome))),
    }
}
