//! `runlet resume RUN_ID --journal J --tools T.json [--events OUT.jsonl] [--format json]`:
//! continues an interrupted run from its journal. The program, registry, inputs, limits and
//! digest key id come from the run header; finished calls are not dispatched again. A run whose
//! uncertain operations are unresolved ends at once (exit 1, `RL6109`, each one listed) and
//! nothing is journaled; a run that has ended prints how it ended. Exit statuses as `run`.

use std::path::PathBuf;
use std::process::ExitCode;

use runlet::diag::codes;
use runlet::journal::RunId;
use runlet::runtime::UncertainOperation;
use serde_json::json;

use crate::events::EventsFile;
use crate::failure::{Failure, Shape};
use crate::follow::{Followed, follow};
use crate::report::Format;
use crate::run::{load_fixtures, report};
use crate::runs::uncertain_json;
use crate::stored::{JournalArgs, OpenJournal};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run's id (`r-…`), as `runlet run` printed it.
    run_id: String,
    #[command(flatten)]
    journal: JournalArgs,
    /// The tool fixture file that answers the calls the run still makes.
    #[arg(long)]
    tools: PathBuf,
    /// How many journaled events the resumed run's snapshots are at least apart (0: none;
    /// default 10000).
    #[arg(long, value_name = "N")]
    snapshot_every: Option<u64>,
    /// Write the run's events to this file, all of them from its first, the new ones as they
    /// happen.
    #[arg(long, value_name = "OUT.jsonl")]
    events: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(args: &Args) -> ExitCode {
    execute(args).unwrap_or_else(|failure| failure.report(args.format, Shape::Run))
}

fn execute(args: &Args) -> Result<ExitCode, Failure> {
    let executor = load_fixtures(&args.tools)?;
    let events = args.events.as_deref().map(EventsFile::create).transpose()?;
    let journal = OpenJournal::open(&args.journal)?;
    let run = RunId::new(args.run_id.as_str());
    journal.not_running_elsewhere(&run)?;
    let stored = journal.stored(&run, executor, args.snapshot_every)?;
    let recovery = stored.recovery()?;
    if let Some(outcome) = recovery.outcome() {
        eprintln!("run {run} has already ended");
        return Ok(report(&run, outcome, args.format));
    }
    let uncertain: Vec<_> =
        recovery.uncertain_operations().into_iter().filter(UncertainOperation::needs_decision).collect();
    if !uncertain.is_empty() {
        return Ok(report_unresolved(&run, &uncertain, args.format));
    }
    let Followed { outcome, .. } = follow(recovery.resume(), events, true)?;
    Ok(report(&run, &outcome, args.format))
}

/// The run stops before it resumes: its uncertain operations need a decision first.
fn report_unresolved(run: &RunId, uncertain: &[UncertainOperation], format: Format) -> ExitCode {
    let first = &uncertain[0];
    let message = format!(
        "run `{run}` left {} operation{} uncertain: a call was prepared for dispatch and its outcome was never journaled; decide each with `runlet resolve`, then resume",
        uncertain.len(),
        if uncertain.len() == 1 { "" } else { "s" }
    );
    match format {
        Format::Json => {
            let operations = uncertain_json(uncertain);
            let error = json!({
                "code": codes::UNCERTAIN_OUTCOME.to_string(),
                "message": message,
                "retryable": false,
                "tool": first.tool,
                "node_id": first.node_id,
                "attempt": 0,
                "details": {"operations": operations.clone()},
                "causes": [],
                "uncertain": true,
            });
            println!(
                "{}",
                json!({"status": "failed", "run_id": run.as_str(), "error": error, "uncertain": operations})
            );
        }
        Format::Text => {
            eprintln!("error[{}]: {message}", codes::UNCERTAIN_OUTCOME);
            for operation in uncertain {
                eprintln!(
                    "  {} (`{}`, {}, node {}): runlet resolve {run} {} --journal … (--applied JSON | --not-applied | --failed JSON | --fresh-generation)",
                    operation.operation_id,
                    operation.tool,
                    operation.class.as_str(),
                    operation.node_id,
                    operation.operation_id
                );
            }
        }
    }
    ExitCode::from(1)
}
