//! `runlet heal FILE`: applies only safe insertion repairs and prints the healed source (text) or
//! `{"source", "changed", "notes"}` (JSON). Exit 0 when healed or unchanged, 1 when not healable.

use std::path::PathBuf;
use std::process::ExitCode;

use runlet::diag::{render_text, report_json, source_digest};
use serde_json::json;

use crate::input::{SourceFile, read_text};
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
    let file = match read_text(&args.file) {
        Ok(file) => file,
        Err(status) => return status,
    };
    let healed = runlet::syntax::heal(&file.text);
    let healed_file = SourceFile { path: file.path.clone(), text: healed.source.clone() };
    match args.format {
        Format::Json => {
            let notes = &report_json(&healed.source, &healed.notes)["diagnostics"];
            let remaining = &report_json(&healed.source, &healed.remaining)["diagnostics"];
            let out = json!({
                "source": healed.source,
                "changed": healed.changed,
                "notes": notes,
                "healed": healed.is_healed(),
                "remaining": remaining,
                "source_digest": source_digest(&healed.source),
            });
            println!("{out}");
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
