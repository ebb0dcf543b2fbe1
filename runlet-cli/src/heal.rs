//! `runlet heal FILE`: applies only safe insertion repairs and prints the healed source (text) or
//! `{"source", "changed", "notes"}` (JSON). Exit 0 when healed or unchanged, 1 when not healable.

use std::path::PathBuf;
use std::process::ExitCode;

use runlet::diag::{JsonDiagnostics, json_diagnostics, render_text, source_digest};
use serde::Serialize;

use crate::failure::Shape;
use crate::files::{FileKind, SourceFile, read_text};
use crate::report::{Format, print_diagnostics, summary};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The Runlet source file.
    file: PathBuf,
    /// How to print the result.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(args: &Args) -> ExitCode {
    let file = match read_text(&args.file, FileKind::Source) {
        Ok(file) => file,
        Err(failure) => return failure.report(args.format, Shape::Diagnostics),
    };
    let healed = runlet::syntax::heal(&file.text);
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
            println!("{}", serde_json::to_string(&out).expect("heal output serializes"));
        }
        Format::Text if healed.is_healed() => {
            print!("{}", healed.source);
            if !healed.notes.is_empty() {
                eprint!("{}", render_text(&healed.source, &healed_file.display_name(), &healed.notes));
                eprintln!("healed: {}", summary(&healed.notes));
            }
        }
        Format::Text => {
            eprintln!("error: `{}` cannot be healed by insertions alone", file.display_name());
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
