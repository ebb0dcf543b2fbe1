//! `runlet check FILE [--registry R.json] [--inputs I.json] [--limit KEY=N]…`: parses and
//! analyzes the program against the registry (an empty one without `--registry`), within the
//! compile-time limits (`parse_nesting`, `operator_chain`, `analysis_work`, `diagnostics`, the
//! value-size caps), and prints its diagnostics.
//! With `--format json`, the registry file's warnings come as a `registry` report beside the
//! program's (`{"source_digest", "diagnostics"}` about the registry's text); as text, on stderr.
//! Exit 0 without errors (warnings allowed), 1 with errors, 2 on usage or I/O problems
//! (including a registry or inputs file with errors).

use std::path::PathBuf;
use std::process::ExitCode;

use runlet::analyze::analyze;

use crate::failure::{Failure, Shape};
use crate::files::{FileKind, read_text};
use crate::limits::parse_limits;
use crate::registry::{load_inputs, load_registry, load_registry_reporting};
use crate::report::{Format, print_diagnostics, print_diagnostics_with_registry};

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
    /// One limit as KEY=N (an inclusive maximum); repeat for several.
    #[arg(long = "limit", value_name = "KEY=N")]
    limit: Vec<String>,
    /// How to print diagnostics.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(args: &Args) -> ExitCode {
    execute(args).unwrap_or_else(|failure| failure.report(args.format, Shape::Diagnostics))
}

fn execute(args: &Args) -> Result<ExitCode, Failure> {
    let file = read_text(&args.file, FileKind::Source)?;
    let registry = match args.format {
        Format::Text => (load_registry(args.registry.as_deref())?, None),
        Format::Json => load_registry_reporting(args.registry.as_deref())?,
    };
    let (registry, registry_warnings) = registry;
    let inputs = load_inputs(args.inputs.as_deref(), &registry)?;
    let options = parse_limits(&args.limit)?.analyze_options();
    let analysis = analyze(&file.text, &registry, &inputs, &options);
    match &registry_warnings {
        Some(warnings) => print_diagnostics_with_registry(&file, &analysis.diagnostics, warnings),
        None => print_diagnostics(&file, &analysis.diagnostics, args.format),
    }
    Ok(if analysis.has_errors() { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
