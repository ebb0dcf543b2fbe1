//! `runlet heal FILE [--registry R.json] [--inputs I.json] [--insertions-only]`: applies safe
//! repairs and prints the healed source (text) or `{"source", "changed", "notes"}` (JSON). Without
//! a registry (or with `--insertions-only`) the repairs are the syntax front end's insertions;
//! with one, also the machine-applicable fixes of analysis it can prove safe (`analyze::heal`).
//! Exit 0 when healed or unchanged, 1 when not healable, 2 on usage or I/O problems.

use std::path::PathBuf;
use std::process::ExitCode;

use runlet::analyze::AnalyzeOptions;
use runlet::diag::{JsonDiagnostics, json_diagnostics, render_text, source_digest};
use serde::Serialize;

use crate::failure::Shape;
use crate::files::{FileKind, SourceFile, read_text};
use crate::registry::{load_inputs, load_registry_with};
use crate::report::{Format, print_diagnostics, summary};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The Runlet source file.
    file: PathBuf,
    /// The registry file: with it, the machine-applicable fixes of analysis that are safe are
    /// applied too.
    #[arg(long)]
    registry: Option<PathBuf>,
    /// A JSON object of host input names to values, as for `check`.
    #[arg(long)]
    inputs: Option<PathBuf>,
    /// Apply only the insertion repairs of the syntax front end, even with a registry.
    #[arg(long)]
    insertions_only: bool,
    /// How to print the result.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(args: &Args) -> ExitCode {
    let file = match read_text(&args.file, FileKind::Source) {
        Ok(file) => file,
        Err(failure) => return failure.report(args.format, Shape::Diagnostics),
    };
    let healed = match (&args.registry, args.insertions_only) {
        (Some(path), false) => {
            let registry = match load_registry_with(Some(path.as_path()), None) {
                Ok(registry) => registry,
                Err(failure) => return failure.report(args.format, Shape::Diagnostics),
            };
            let inputs = match load_inputs(args.inputs.as_deref(), &registry) {
                Ok(inputs) => inputs,
                Err(failure) => return failure.report(args.format, Shape::Diagnostics),
            };
            runlet::analyze::heal(&file.text, &registry, &inputs, &AnalyzeOptions::default())
        }
        _ => runlet::syntax::heal(&file.text),
    };
    let healed_file = SourceFile { path: file.path.clone(), text: healed.source.clone() };
    match args.format {
        Format::Json => {
            let out = JsonHealed {
                source: &healed.source,
                changed: healed.changed,
                notes: json_diagnostics(&healed.source, &healed.notes),
                healed: healed.is_healed(),
                remaining: json_diagnostics(&healed.source, &healed.remaining),
                source_digest: source_digest(&healed.source),
            };
            outln!("{}", serde_json::to_string(&out).expect("heal output serializes"));
        }
        Format::Text if healed.is_healed() => {
            out!("{}", healed.source);
            if !healed.notes.is_empty() {
                err!("{}", render_text(&healed.source, &healed_file.display_name(), &healed.notes));
                errln!("healed: {}", summary(&healed.notes));
            }
        }
        Format::Text => {
            errln!("error: `{}` cannot be healed by safe repairs alone", file.display_name());
            print_diagnostics(&healed_file, &healed.remaining, Format::Text);
        }
    }
    if healed.is_healed() { ExitCode::SUCCESS } else { ExitCode::from(1) }
}

/// `--format json` output, fields in the order of INTERFACES.md §4 (`source`, `changed`, `notes`)
/// followed by the extensions; each diagnostic is in the order of §1.
#[derive(Serialize)]
struct JsonHealed<'a> {
    source: &'a str,
    changed: bool,
    notes: JsonDiagnostics<'a>,
    healed: bool,
    remaining: JsonDiagnostics<'a>,
    source_digest: String,
}
