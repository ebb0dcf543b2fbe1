//! `runlet resume RUN_ID --journal J --tools T.json | --mcp … [--events OUT.jsonl] [--format json]`:
//! continues an interrupted run from its journal. The program, registry, inputs, limits and
//! digest key id come from the run header; finished calls are not dispatched again. A run whose
//! uncertain operations are unresolved ends at once (exit 1, `RL6109`, each one listed) and
//! nothing is journaled; a run that has ended prints how it ended. Exit statuses as `run`.
//!
//! `runlet resume --interrupted [--max-resumes N] --journal J --tools T.json | --mcp …` does
//! what a host's recovery at start does for every interrupted run of the journal, in the order
//! they were created: resumes it, or parks it as failed (`RL7306`) once it was resumed N times
//! (default 3) without ending; runs that need a decision (`RL8405`), runs whose journal is damaged
//! (`RL7008`) and runs another process took first (`RL7010`) are left. One line per run
//! (`{"runs": [...]}` in JSON); exit 0 when every run resumed succeeded or goes on in another
//! process, 1 when one failed, was cancelled, parked or left for an operator.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use runlet::diag::{Code, codes};
use runlet::engine::{Outcome, ToolExecutor};
use runlet::journal::RunId;
use runlet::observe::ViewPolicy;
use runlet::runtime::{NEEDS_DECISION, Recovered, RunStatus, UncertainOperation, list_runs};
use runlet::schema::ExecutionClass;
use serde_json::json;

use crate::events::EventsFile;
use crate::failure::{Failure, Shape};
use crate::follow::{Followed, follow};
use crate::journal_spec::JournalSpec;
use crate::mcp::McpArgs;
use crate::output::refuse_clobbering;
use crate::report::Format;
use crate::run::{report_outcome, tools_of};
use crate::runs::uncertain_json;
use crate::stored::{JournalArgs, OpenJournal};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run's id (`r-…`), as `runlet run` printed it.
    #[arg(required_unless_present = "interrupted", conflicts_with = "interrupted")]
    run_id: Option<String>,
    /// Resume every interrupted run of the journal instead, parking those resumed
    /// `--max-resumes` times already.
    #[arg(long)]
    interrupted: bool,
    /// With `--interrupted`: how many resumes a run gets before it is parked as failed.
    #[arg(long, value_name = "N", default_value_t = 3, requires = "interrupted")]
    max_resumes: u32,
    #[command(flatten)]
    journal: JournalArgs,
    /// The tool fixture file that answers the calls the run still makes (beside MCP servers:
    /// the calls of the tools it scripts).
    #[arg(long)]
    tools: Option<PathBuf>,
    #[command(flatten)]
    mcp: McpArgs,
    /// How many journaled events the resumed run's snapshots are at least apart (0: none;
    /// default 10000).
    #[arg(long, value_name = "N")]
    snapshot_every: Option<u64>,
    /// Write the run's events to this file, all of them from its first, the new ones as they
    /// happen.
    #[arg(long, value_name = "OUT.jsonl", conflicts_with = "interrupted")]
    events: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(args: &Args) -> ExitCode {
    execute(args).unwrap_or_else(|failure| failure.report(args.format, Shape::Run))
}

fn execute(args: &Args) -> Result<ExitCode, Failure> {
    let servers = args.mcp.attach()?;
    let resumed = resume_with(args, servers.as_ref());
    if let Some(servers) = servers {
        servers.shutdown();
    }
    resumed
}

/// Resumes the run with the fixtures and servers of `args`; the registry is the run header's.
fn resume_with(args: &Args, servers: Option<&runlet_mcp::McpClient>) -> Result<ExitCode, Failure> {
    if let Some(events) = &args.events {
        let journal_files = JournalSpec::parse(&args.journal.journal)?.files();
        let mut kept: Vec<(&str, &Path)> =
            journal_files.iter().map(|(what, path)| (*what, path.as_path())).collect();
        kept.extend(args.tools.as_deref().map(|path| ("the tool fixture file", path)));
        kept.extend(args.journal.digest_key_file.as_deref().map(|path| ("the digest key file", path)));
        refuse_clobbering("--events", events, &kept)?;
    }
    let executor = tools_of(args.tools.as_deref(), servers, "resume")?;
    let journal = OpenJournal::open(&args.journal)?;
    let Some(run_id) = &args.run_id else {
        return resume_interrupted(args, &journal, executor);
    };
    let events = args.events.as_deref().map(EventsFile::create).transpose()?;
    let run = RunId::new(run_id.as_str());
    journal.not_running_elsewhere(&run)?;
    let stored = journal.stored(&run, executor, args.snapshot_every)?;
    let recovery = match stored.recovery() {
        Ok(recovery) => recovery,
        // Nothing ran: the run starts from the inputs its header retains, as recovery does.
        Err(failure) if failure.is(codes::RUN_NOT_STARTED) => {
            return match stored.runtime.recover_run(&run, u32::MAX) {
                Recovered::Resumed(handle) => {
                    let Followed { outcome, .. } = follow(handle, events, true)?;
                    Ok(report_outcome(&run, &outcome, None, args.format))
                }
                Recovered::Parked { resumes, .. } => Err(Failure::new(
                    codes::RECOVERY_EXHAUSTED,
                    format!("run `{run}` was parked as failed after {resumes} resumes"),
                )),
                Recovered::Left { code, message, .. } => Err(Failure::new(code, message)),
            };
        }
        Err(failure) => return Err(failure),
    };
    let uncertain: Vec<_> =
        recovery.uncertain_operations().into_iter().filter(UncertainOperation::needs_decision).collect();
    if recovery.outcome().is_some() || !uncertain.is_empty() {
        // Nothing goes on: the events file gets what the journal holds.
        if let Some(events) = events {
            let view = ViewPolicy::default();
            let journaled = stored
                .runtime
                .journal_events(&stored.program, &run, &view)
                .map_err(|error| Failure::new(error.code(), error.to_string()))?;
            events.write_all(&journaled)?;
        }
        return Ok(match recovery.outcome() {
            Some(outcome) => {
                errln!("run {run} has already ended");
                report_outcome(&run, outcome, None, args.format)
            }
            None => report_unresolved(&run, &uncertain, args.format),
        });
    }
    let Followed { outcome, .. } = follow(recovery.resume(), events, true)?;
    Ok(report_outcome(&run, &outcome, None, args.format))
}

/// `--interrupted`: every interrupted run of `journal` resumed (to its end) or parked, and the
/// runs that need a decision or whose journal is damaged left, with the reason.
fn resume_interrupted(
    args: &Args,
    journal: &OpenJournal,
    executor: Arc<dyn ToolExecutor>,
) -> Result<ExitCode, Failure> {
    let listed = journal
        .block_on(list_runs(journal.journal.as_ref()))
        .map_err(|error| Failure::new(error.code(), error.to_string()))?;
    // The first SIGINT or SIGTERM also ends the sweep: the run being resumed is cancelled (its
    // own watch), and no other is started.
    let stopping = Arc::new(AtomicBool::new(false));
    let _sweep_watch = {
        let stopping = Arc::clone(&stopping);
        crate::signals::on_first_signal("stopping the sweep", move || stopping.store(true, Ordering::SeqCst))
    };
    let mut lines = Vec::new();
    let mut not_reached = 0;
    for listing in listed {
        let run = listing.run_id;
        if stopping.load(Ordering::SeqCst) {
            not_reached += usize::from(listing.status == RunStatus::Interrupted);
            continue;
        }
        let left = |code: Code, message: &str| {
            // Another process took it first (at its claim, or by writing to it meanwhile):
            // it runs there, and the other runs still go on.
            let status = match code {
                codes::RUN_OWNED_ELSEWHERE => RunStatus::Running,
                codes::RUN_NEEDS_RESOLUTION => RunStatus::NeedsResolution,
                _ => RunStatus::Interrupted,
            }
            .as_str();
            json!({
                "run_id": run.as_str(), "action": "left", "status": status,
                "code": code.to_string(), "message": message,
            })
        };
        let line = match listing.status {
            RunStatus::Interrupted => {
                // A run this command cannot rebuild (its retained program no longer compiles, or
                // its header retains none) is left with its reason, and the others still go on;
                // any other failure (the journal's, a flag's, the digest key's) ends the command.
                let stored = match journal.stored(&run, Arc::clone(&executor), args.snapshot_every) {
                    Ok(stored) => stored,
                    Err(failure) => match failure.first() {
                        Some((code, message))
                            if code == codes::RUN_RETAINED_UNREADABLE || code == codes::RUN_NOT_RETAINED =>
                        {
                            lines.push(left(code, message));
                            continue;
                        }
                        _ => return Err(failure),
                    },
                };
                match stored.runtime.recover_run(&run, args.max_resumes) {
                    Recovered::Resumed(handle) => match follow(handle, None, false) {
                        Ok(Followed { outcome, .. }) => {
                            json!({"run_id": run.as_str(), "action": "resumed", "status": status_of(&outcome)})
                        }
                        // Any other failure (the journal's) ends the command.
                        Err(failure) => match failure.first() {
                            Some((code, message)) if code == codes::RUN_OWNED_ELSEWHERE => {
                                left(code, message)
                            }
                            _ => return Err(failure),
                        },
                    },
                    Recovered::Parked { resumes, .. } => json!({
                        "run_id": run.as_str(), "action": "parked", "status": "failed",
                        "code": codes::RECOVERY_EXHAUSTED.to_string(), "resumes": resumes,
                    }),
                    Recovered::Left { code, message, .. } => left(code, &message),
                }
            }
            RunStatus::NeedsResolution => json!({
                "run_id": run.as_str(), "action": "left", "status": "needs_resolution",
                "code": codes::RUN_NEEDS_RESOLUTION.to_string(),
                "message": NEEDS_DECISION,
            }),
            RunStatus::Damaged => json!({
                "run_id": run.as_str(), "action": "left", "status": "damaged",
                "code": listing.damage.as_ref().map(|damage| damage.code.to_string()),
                "message": listing.damage.as_ref().map(|damage| damage.message.as_str()),
            }),
            _ => continue,
        };
        lines.push(line);
    }
    if not_reached > 0 {
        errln!("the sweep stopped at a signal: {not_reached} more interrupted runs were not resumed");
    }
    // Done when every run resumed succeeded or goes on in another process.
    let done = not_reached == 0
        && lines.iter().all(|line| matches!(line["status"].as_str(), Some("succeeded" | "running")));
    match args.format {
        Format::Json => outln!("{}", json!({"runs": lines})),
        Format::Text => {
            for line in &lines {
                let code = line["code"].as_str().map(|code| format!(" ({code})")).unwrap_or_default();
                outln!(
                    "run {}: {}, {}{code}",
                    line["run_id"].as_str().unwrap_or(""),
                    line["action"].as_str().unwrap_or(""),
                    line["status"].as_str().unwrap_or("")
                );
            }
        }
    }
    Ok(if done { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// How a run ended, as run listings name it.
fn status_of(outcome: &Outcome) -> &'static str {
    match outcome {
        Outcome::Succeeded(_) => RunStatus::Succeeded.as_str(),
        Outcome::Failed(_) => RunStatus::Failed.as_str(),
        Outcome::Cancelled => RunStatus::Cancelled.as_str(),
    }
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
            outln!(
                "{}",
                json!({"status": "failed", "run_id": run.as_str(), "error": error, "uncertain": operations})
            );
        }
        Format::Text => {
            errln!("error[{}]: {message}", codes::UNCERTAIN_OUTCOME);
            for operation in uncertain {
                errln!(
                    "  {} (`{}`, {}, node {}): runlet resolve {run} {} --journal … ({})",
                    operation.operation_id,
                    operation.tool,
                    operation.class.as_str(),
                    operation.node_id,
                    operation.operation_id,
                    decisions(operation.class),
                );
            }
        }
    }
    ExitCode::from(1)
}

/// The `resolve` decisions an uncertain operation of `class` takes: an `unsafe` one is never
/// sent again under its operation id, and only an `unsafe` one gets a fresh generation.
fn decisions(class: ExecutionClass) -> &'static str {
    match class {
        ExecutionClass::Unsafe => "--applied JSON | --failed JSON | --fresh-generation",
        _ => "--applied JSON | --not-applied | --failed JSON",
    }
}
