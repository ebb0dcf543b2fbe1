//! `runlet fmt FILE…`: prints each file in canonical layout; `--write` rewrites the files and
//! `--check` only reports which differ (exit 1). Files with syntax errors are left alone (exit 1).

use std::path::PathBuf;
use std::process::ExitCode;

use runlet::diag::render_text;

use crate::failure::{Failure, Shape};
use crate::files::{FileKind, read_text};
use crate::output::write_file;
use crate::report::{Format, summary};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The Runlet source files.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Only report whether the files are formatted; exit 1 when one is not.
    #[arg(long, conflicts_with = "write")]
    check: bool,
    /// Rewrite the files in place.
    #[arg(long)]
    write: bool,
}

pub fn run(args: &Args) -> ExitCode {
    execute(args).unwrap_or_else(|failure| failure.report(Format::Text, Shape::Diagnostics))
}

fn execute(args: &Args) -> Result<ExitCode, Failure> {
    let mut failed = false;
    for path in &args.files {
        let file = read_text(path, FileKind::Source)?;
        let formatted = match runlet::syntax::format(&file.text) {
            Ok(formatted) => formatted,
            Err(diagnostics) => {
                // On stderr: stdout carries formatted source only.
                errln!("error: `{}` has syntax errors and was not formatted", file.display_name());
                err!("{}", render_text(&file.text, &file.display_name(), &diagnostics));
                errln!("{}", summary(&diagnostics));
                failed = true;
                continue;
            }
        };
        if args.check {
            if formatted != file.text {
                errln!("{} is not formatted", file.display_name());
                failed = true;
            }
        } else if args.write {
            if formatted != file.text {
                write_file(path, &formatted)?;
            }
        } else {
            out!("{formatted}");
        }
    }
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
