//! `runlet explain CODE`: prints a catalogue entry from the text embedded in the library.
//! Exit 0 when the code is known, 2 when it is not.

use std::process::ExitCode;

use runlet::diag::catalogue;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A diagnostic code such as RL1017.
    code: String,
}

pub fn run(args: &Args) -> ExitCode {
    match catalogue::lookup(&args.code) {
        Some(entry) => {
            print!("{}", entry.text);
            ExitCode::SUCCESS
        }
        None => {
            eprintln!(
                "error: unknown diagnostic code `{}`; codes look like RL1017 (see docs/diagnostics/)",
                args.code
            );
            ExitCode::from(2)
        }
    }
}
