//! `runlet explain CODE`: prints a catalogue entry from the text embedded in the library, found by
//! code (`RL1017`) or by name (`FOR_BODY_MISSING_RETURN`, `TOOL_OUTPUT_SCHEMA_MISMATCH`).
//! Exit 0 when the code is known, 2 (`RL8507`) when it is not.

use std::process::ExitCode;

use runlet::diag::{catalogue, codes};

use crate::failure::{Failure, Shape};
use crate::report::Format;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A diagnostic code such as RL1017, or its name such as FOR_BODY_MISSING_RETURN.
    code: String,
}

pub fn run(args: &Args) -> ExitCode {
    match catalogue::lookup(&args.code) {
        Some(entry) => {
            out!("{}", entry.text);
            ExitCode::SUCCESS
        }
        None => {
            let message = format!("unknown diagnostic code `{}`", args.code);
            Failure::new(codes::UNKNOWN_DIAGNOSTIC_CODE, message)
                .with_help("codes look like RL1017 or FOR_BODY_MISSING_RETURN (see docs/diagnostics/)")
                .report(Format::Text, Shape::Diagnostics)
        }
    }
}
