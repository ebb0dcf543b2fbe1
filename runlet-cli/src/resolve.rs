//! `runlet resolve RUN_ID OPERATION_ID --journal J (--applied JSON | --not-applied | --failed JSON
//! | --fresh-generation)`: journals a host decision about an operation a run left uncertain
//! (spec §5.4). `--applied` records JSON as the call's result (checked against the tool's output
//! schema), `--not-applied` lets the next resume dispatch it again, `--failed` records a tool
//! error `{code, message, retryable?, details?}`, `--fresh-generation` lets an `unsafe` call be
//! dispatched under a new operation id. Exit 0 when journaled, 2 when refused or on I/O.

use std::process::ExitCode;

use runlet::diag::codes;
use runlet::engine::{OperationId, Resolution, ToolError};
use runlet::journal::RunId;
use runlet::value::parse_json;
use serde_json::json;

use crate::failure::{Failure, Shape};
use crate::report::Format;
use crate::stored::{JournalArgs, OpenJournal};

#[derive(Debug, clap::Args)]
#[group(id = "decision", required = true, multiple = false, args = ["applied", "not_applied", "failed", "fresh_generation"])]
pub struct Args {
    /// The run's id (`r-…`).
    run_id: String,
    /// The uncertain operation (`op:…`), as `runlet runs show` or `resume` lists it.
    operation_id: String,
    #[command(flatten)]
    journal: JournalArgs,
    /// The operation took effect, with this JSON as its result.
    #[arg(long, value_name = "JSON")]
    applied: Option<String>,
    /// The operation did not take effect: the next resume dispatches it again.
    #[arg(long)]
    not_applied: bool,
    /// The operation failed with this tool error `{code, message, retryable?, details?}`.
    #[arg(long, value_name = "JSON")]
    failed: Option<String>,
    /// Dispatch the (`unsafe`) operation again under a new operation id.
    #[arg(long)]
    fresh_generation: bool,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(args: &Args) -> ExitCode {
    execute(args).unwrap_or_else(|failure| failure.report(args.format, Shape::Diagnostics))
}

fn execute(args: &Args) -> Result<ExitCode, Failure> {
    let operation: OperationId = args.operation_id.parse().map_err(|error| {
        Failure::new(codes::INVALID_ARGUMENT, format!("`{}`: {error}", args.operation_id))
    })?;
    let decision = decision(args)?;
    let journal = OpenJournal::open(&args.journal)?;
    let run = RunId::new(args.run_id.as_str());
    journal.not_running_elsewhere(&run)?;
    let stored = journal.decided(&run)?;
    let mut recovery = stored.recovery()?;
    let refused = |error: runlet::runtime::RecoveryError| Failure::new(error.code(), error.to_string());
    let (name, fresh) = match decision {
        Some(resolution) => {
            let name = match &resolution {
                Resolution::Applied(_) => "applied",
                Resolution::NotApplied => "not_applied",
                Resolution::Failed(_) => "failed",
            };
            recovery.resolve(&operation, resolution).map_err(refused)?;
            (name, None)
        }
        None => ("fresh_generation", Some(recovery.authorize_fresh_generation(&operation).map_err(refused)?)),
    };
    match args.format {
        Format::Json => {
            let mut report =
                json!({"run_id": run.as_str(), "operation_id": operation.to_string(), "decision": name});
            if let Some(fresh) = &fresh {
                report["fresh_operation_id"] = fresh.to_string().into();
            }
            outln!("{report}");
        }
        Format::Text => {
            match &fresh {
                Some(fresh) => {
                    outln!("authorized a fresh generation of {operation}: it is dispatched as {fresh}")
                }
                None => outln!("resolved {operation} as {name}"),
            }
            outln!(
                "continue the run with `runlet resume {run} --journal {} --tools …`",
                args.journal.journal
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The resolution the flags state; `None` for `--fresh-generation`.
fn decision(args: &Args) -> Result<Option<Resolution>, Failure> {
    let json = |flag: &str, text: &str| {
        parse_json(text).map_err(|error| {
            Failure::new(
                codes::INVALID_HOST_JSON,
                format!("`--{flag} {text}` is not JSON: {}", error.describe(text)),
            )
        })
    };
    if let Some(text) = &args.applied {
        return Ok(Some(Resolution::Applied(json("applied", text)?)));
    }
    if let Some(text) = &args.failed {
        let error = ToolError::from_value(&json("failed", text)?).map_err(|reason| {
            Failure::new(codes::INVALID_ARGUMENT, format!("`--failed {text}`: {reason}"))
        })?;
        return Ok(Some(Resolution::Failed(error)));
    }
    if args.not_applied {
        return Ok(Some(Resolution::NotApplied));
    }
    Ok(None)
}
