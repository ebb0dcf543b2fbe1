//! `runlet check FILE [--registry R.json] [--inputs I.json]`: parses and analyzes the program
//! against the registry (an empty one without `--registry`) and prints its diagnostics.
//! Exit 0 without errors (warnings allowed), 1 with errors, 2 on usage or I/O problems
//! (including a registry or inputs file with errors).

use std::path::PathBuf;
use std::process::ExitCode;

use runlet::analyze::{AnalyzeOptions, analyze};

use crate::input::read_text;
use crate::registry::{load_inputs, load_registry};
use crate::report::{Format, print_diagnostics};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The Runlet source file.
    file: PathBuf,
    /// The registry file (tools and host input schemas); without it, no tool is known.
    #[arg(long)]
    registry: Option<PathBuf>,
    /// A JSON object of host input names to values; their schemas are inferred from the values
    /// unless the registry declares them.
    #[arg(long)]
    inputs: Option<PathBuf>,
    /// How to print diagnostics.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(args: &Args) -> ExitCode {
    let file = match read_text(&args.file) {
        Ok(file) => file,
        Err(status) => return status,
    };
    let registry = match load_registry(args.registry.as_deref(), args.format) {
        Ok(registry) => registry,
        Err(status) => return status,
    };
    let inputs = match load_inputs(args.inputs.as_deref(), &registry) {
        Ok(inputs) => inputs,
        Err(status) => return status,
    };
    let analysis = analyze(&file.text, &registry, &inputs, &AnalyzeOptions::default());
    print_diagnostics(&file, &analysis.diagnostics, args.format);
    if analysis.has_errors() { ExitCode::from(1) } else { ExitCode::SUCCESS }
}
