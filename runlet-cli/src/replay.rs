//! `runlet replay FILE --registry R.json --transcript TRANSCRIPT.json [--inputs I.json] …`: runs
//! the program with every call answered from a recorded transcript (docs/transcripts.md), calling
//! no tool, and every sampled intrinsic given its recorded value. Drift or unconsumed entries fail
//! the replay, led by `RL8103` when the transcript was recorded under another digest key
//! (`--digest-key-file`). Exit statuses as `run`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use runlet::scripted::{ReplayExecutor, ReplayMismatch, Transcript};

use crate::input::{read_text, usage_error};
use crate::report::{Format, print_diagnostics};
use crate::run::{ProgramArgs, compile_and_run, report};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    program: ProgramArgs,
    /// The transcript written by `runlet run --record`.
    #[arg(long, value_name = "TRANSCRIPT.json")]
    transcript: PathBuf,
}

pub fn run(args: &Args) -> ExitCode {
    match execute(args) {
        Ok(status) | Err(status) => status,
    }
}

fn execute(args: &Args) -> Result<ExitCode, ExitCode> {
    let format = args.program.format;
    let file = read_text(&args.transcript)?;
    let transcript = Transcript::from_json_str(&file.text).map_err(|error| {
        print_diagnostics(&file, &error.diagnostics, format);
        usage_error(format!("the transcript `{}` has errors", file.display_name()))
    })?;
    let replay = Arc::new(ReplayExecutor::new(transcript.clone()));
    let finished = compile_and_run(&args.program, replay.clone(), replay.clone(), |workflow| {
        transcript.check_workflow(workflow).map_err(|mismatch| print_mismatches(&[mismatch], format))
    })?;
    let mismatches = replay.mismatches_under_key(&finished.digest_key);
    if mismatches.is_empty() {
        return Ok(report(&finished.outcome, format));
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
            println!("{}", serde_json::json!({"status": "replay_mismatch", "mismatches": mismatches}));
        }
        Format::Text => {
            for mismatch in mismatches {
                eprintln!("error[{}]: {mismatch}", mismatch.code());
            }
            let count = mismatches.len();
            eprintln!(
                "the replay does not match its transcript ({count} mismatch{})",
                if count == 1 { "" } else { "es" }
            );
        }
    }
    ExitCode::from(1)
}
