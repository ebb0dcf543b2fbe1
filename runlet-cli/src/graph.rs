//! `runlet graph FILE …the options of run… [--dot OUT.dot]`: runs the program like `run`, then
//! prints the executed graph as JSON (and writes it as Graphviz DOT with `--dot`). Exit statuses
//! are those of `run`.

use std::path::PathBuf;
use std::process::ExitCode;

use runlet::engine::Outcome;
use runlet::observe::{ViewPolicy, to_dot};

use crate::input::usage_error;
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
    match execute(args) {
        Ok(status) | Err(status) => status,
    }
}

fn execute(args: &GraphArgs) -> Result<ExitCode, ExitCode> {
    let finished = run::execute(&args.run)?;
    let snapshot = finished.observer.snapshot(&ViewPolicy::default());
    if let Some(path) = &args.dot {
        std::fs::write(path, to_dot(&snapshot))
            .map_err(|error| usage_error(format!("cannot write `{}`: {error}", path.display())))?;
    }
    let json = serde_json::to_string_pretty(&snapshot)
        .map_err(|error| usage_error(format!("the graph does not serialize: {error}")))?;
    println!("{json}");
    Ok(match finished.outcome {
        Outcome::Succeeded(_) => ExitCode::SUCCESS,
        Outcome::Failed(_) | Outcome::Cancelled => ExitCode::from(1),
    })
}
