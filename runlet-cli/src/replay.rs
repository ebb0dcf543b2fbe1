//! `runlet replay FILE --registry R.json --transcript TRANSCRIPT.json [--inputs I.json] …`: runs
//! the program with every call answered from a recorded transcript (docs/transcripts.md), calling
//! no tool, and every sampled intrinsic given its recorded value. Drift or unconsumed entries fail
//! the replay, led by `RL8103` when the transcript was recorded under another digest key
//! (`--digest-key-file`). Exit statuses as `run`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use runlet::scripted::{ReplayExecutor, ReplayMismatch, Transcript};

use crate::failure::{Failure, Shape};
use crate::files::{FileKind, read_text};
use crate::report::Format;
use crate::run::{ProgramArgs, Showing, compile_and_run, report};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    program: ProgramArgs,
    /// The transcript written by `runlet run --record`.
    #[arg(long, value_name = "TRANSCRIPT.json")]
    transcript: PathBuf,
}

pub fn run(args: &Args) -> ExitCode {
    execute(args).unwrap_or_else(|failure| failure.report(args.program.format, Shape::Run))
}

fn execute(args: &Args) -> Result<ExitCode, Failure> {
    let format = args.program.format;
    let file = read_text(&args.transcript, FileKind::Transcript)?;
    let transcript = match Transcript::from_json_str(&file.text) {
        Ok(transcript) => transcript,
        Err(error) => return Err(Failure::in_file(FileKind::Transcript.what(), file, error.diagnostics)),
    };
    let replay = Arc::new(ReplayExecutor::new(transcript.clone()));
    let checked = |workflow: &_| match transcript.check_workflow(workflow) {
        Ok(()) => true,
        Err(mismatch) => {
            print_mismatches(&[mismatch], format);
            false
        }
    };
    let Some(finished) =
        compile_and_run(&args.program, None, replay.clone(), replay.clone(), Showing::default(), checked)?
    else {
        return Ok(ExitCode::from(1));
    };
    let mismatches = replay.mismatches_under_key(&finished.digest_key);
    if mismatches.is_empty() {
        return Ok(report(&finished, format));
    }
    Ok(print_mismatches(&mismatches, format))
}

/// Prints why the replay failed — as `{"status": "replay_mismatch", "mismatches": [...]}` with
/// `--format json` — and returns exit status 1.
fn print_mismatches(mismatches: &[ReplayMismatch], format: Format) -> ExitCode {
    match format {
        Format::Json => {
            let mismatches: Vec<serde_json::Value> = mismatches
                .iter()
                .map(|mismatch| {
                    let mut entry = serde_json::json!({
                        "code": mismatch.code().to_string(),
                        "message": mismatch.to_string(),
                    });
                    if let Some(key) = mismatch.key() {
                        entry["call_site"] = key.call_site.as_ref().into();
                        entry["dynamic_key"] = key.dynamic_key.as_ref().into();
                        entry["attempt"] = key.attempt.into();
                    }
                    entry
                })
                .collect();
            outln!("{}", serde_json::json!({"status": "replay_mismatch", "mismatches": mismatches}));
        }
        Format::Text => {
            for mismatch in mismatches {
                errln!("error[{}]: {mismatch}", mismatch.code());
            }
            let count = mismatches.len();
            errln!(
                "the replay does not match its transcript ({count} mismatch{})",
                if count == 1 { "" } else { "es" }
            );
        }
    }
    ExitCode::from(1)
}
