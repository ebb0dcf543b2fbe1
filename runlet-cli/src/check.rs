//! `runlet check FILE`: parses the program and prints its diagnostics.
//! Exit 0 without errors (warnings allowed), 1 with errors, 2 on usage or I/O problems.

use std::path::PathBuf;
use std::process::ExitCode;

use runlet::diag::Diagnostic;

use crate::input::read_source;
use crate::report::{Format, print_diagnostics};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The Runlet source file.
    file: PathBuf,
    /// How to print diagnostics.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(args: &Args) -> ExitCode {
    let file = match read_source(&args.file) {
        Ok(file) => file,
        Err(status) => return status,
    };
    let diagnostics = runlet::syntax::parse(&file.text).diagnostics;
    print_diagnostics(&file, &diagnostics, args.format);
    if diagnostics.iter().any(Diagnostic::is_error) { ExitCode::from(1) } else { ExitCode::SUCCESS }
}
