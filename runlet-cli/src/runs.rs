//! `runlet runs --journal J [--status S] [--format json]` lists a journal's runs: id, program
//! digest, status, when it started and last changed. `runlet runs show RUN_ID --journal J
//! [--events] [--format json]` shows one: its header, status, result or error, and the
//! operations it left uncertain; `--events` prints its journal as the JSONL of `run --events`.
//! `runlet runs delete RUN_ID` removes an ended or damaged run (`delete.rs`).
//! Exit 0, or 2 on usage or I/O (INTERFACES.md §4.1).

use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use runlet::diag::{Code, codes};
use runlet::engine::Outcome;
use runlet::journal::{RunHeader, RunId};
use runlet::observe::ViewPolicy;
use runlet::runtime::{Recovery, RunListing, RunStatus, UncertainOperation, list_runs, run_listing};
use runlet::schema::ExecutionClass;
use serde_json::{Value as Json, json};

use crate::failure::{Failure, Shape};
use crate::report::Format;
use crate::run::presentation;
use crate::stored::{JournalArgs, OpenJournal};

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct Args {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    journal: Option<JournalArgs>,
    /// List only the runs with this status (`running`, `interrupted`, `succeeded`, `failed`,
    /// `cancelled`, `needs_resolution`, `damaged`).
    #[arg(long, value_parser = parse_status)]
    status: Option<RunStatus>,
    /// How to print the list.
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Show one run: its header, status, result or error, and uncertain operations.
    Show(ShowArgs),
    /// Delete an ended (or damaged) run, and the blobs no other run names.
    Delete(crate::delete::Args),
}

#[derive(Debug, clap::Args)]
struct ShowArgs {
    /// The run's id (`r-…`), as `runlet run` printed it.
    run_id: String,
    #[command(flatten)]
    journal: JournalArgs,
    /// Print the run's journal as JSON lines (the format of `run --events`) instead.
    #[arg(long)]
    events: bool,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

/// `--status`: one of [`RunStatus::ALL`] by name.
fn parse_status(text: &str) -> Result<RunStatus, String> {
    RunStatus::named(text).ok_or_else(|| {
        let names: Vec<&str> = RunStatus::ALL.iter().map(|status| status.as_str()).collect();
        format!("`{text}` is not a run status; use one of {}", names.join(", "))
    })
}

pub fn run(args: &Args) -> ExitCode {
    match &args.command {
        Some(Command::Show(show)) => {
            execute_show(show).unwrap_or_else(|failure| failure.report(show.format, Shape::Diagnostics))
        }
        Some(Command::Delete(delete)) => crate::delete::run(delete),
        None => execute_list(args).unwrap_or_else(|failure| failure.report(args.format, Shape::Diagnostics)),
    }
}

fn execute_list(args: &Args) -> Result<ExitCode, Failure> {
    let Some(journal) = &args.journal else {
        return Err(Failure::new(codes::INVALID_ARGUMENT, "`runlet runs` needs `--journal sqlite:PATH`"));
    };
    let journal = OpenJournal::open(journal)?;
    let summaries = journal.block_on(list_runs(journal.journal.as_ref())).map_err(journal_failure)?;
    let mut listed = Vec::new();
    for mut summary in summaries {
        summary.status = settled_status(&journal, &summary);
        if args.status.is_none_or(|wanted| wanted == summary.status) {
            listed.push(summary);
        }
    }
    match args.format {
        Format::Json => {
            let runs: Vec<Json> = listed.iter().map(summary_json).collect();
            outln!("{}", json!({ "runs": runs }));
        }
        Format::Text => {
            if listed.is_empty() {
                outln!("no runs");
            }
            for summary in &listed {
                let damage =
                    summary.damage.as_ref().map(|damage| format!("  {}: {}", damage.code, damage.message));
                outln!(
                    "{}  {:<16}  {}  started {}  last seq {} at {}{}",
                    summary.run_id,
                    summary.status.as_str(),
                    summary.program_digest.as_deref().map_or("-", short_digest),
                    time_text(summary.started_unix_ms),
                    summary.last_seq,
                    time_text(summary.last_event_unix_ms),
                    damage.unwrap_or_default(),
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn execute_show(args: &ShowArgs) -> Result<ExitCode, Failure> {
    let journal = OpenJournal::open(&args.journal)?;
    let run = RunId::new(args.run_id.as_str());
    let mut summary =
        journal.block_on(run_listing(journal.journal.as_ref(), &run)).map_err(journal_failure)?;
    let stored = match journal.inspected(&run) {
        Ok(stored) => stored,
        // Listed all the same, with why nothing can resume it.
        Err(failure) if !args.events && failure.is(codes::RUN_RETAINED_UNREADABLE) => {
            let (code, message) = failure.first().unwrap_or((codes::RUN_RETAINED_UNREADABLE, ""));
            print_unbuildable(&summary, code, message, args.format);
            return Ok(ExitCode::SUCCESS);
        }
        Err(failure) => return Err(failure),
    };
    if args.events {
        let events = stored
            .runtime
            .journal_events(&stored.program, &run, &ViewPolicy::default())
            .map_err(|error| Failure::new(error.code(), error.to_string()))?;
        for event in events {
            outln!("{}", serde_json::to_string(&event).expect("an event serializes"));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let recovery = match stored.recovery() {
        Ok(recovery) => recovery,
        Err(failure) if failure.is(codes::RUN_NOT_STARTED) => {
            print_never_started(&summary, &stored.header, args.format);
            return Ok(ExitCode::SUCCESS);
        }
        Err(failure) => return Err(failure),
    };
    // The calls of a run a live process drives are in flight there, not uncertain.
    let uncertain =
        if summary.status == RunStatus::Running { Vec::new() } else { recovery.uncertain_operations() };
    if summary.status == RunStatus::Interrupted && uncertain.iter().any(UncertainOperation::needs_decision) {
        summary.status = RunStatus::NeedsResolution;
    }
    match args.format {
        Format::Json => outln!("{}", show_json(&summary, &stored.header, &recovery, &uncertain)),
        Format::Text => print_show(&summary, &stored.header, &recovery, &uncertain),
    }
    Ok(ExitCode::SUCCESS)
}

/// A run the journal alone calls interrupted needs resolution when its program, rebuilt,
/// says some of its calls await a host decision. A run that cannot be rebuilt stays as the
/// journal has it (`runs show` says why).
fn settled_status(journal: &OpenJournal, summary: &RunListing) -> RunStatus {
    if summary.status != RunStatus::Interrupted {
        return summary.status;
    }
    let Ok(stored) = journal.inspected(&summary.run_id) else { return summary.status };
    match stored.recovery() {
        Ok(recovery) if recovery.uncertain_operations().iter().any(UncertainOperation::needs_decision) => {
            RunStatus::NeedsResolution
        }
        _ => summary.status,
    }
}

fn summary_json(summary: &RunListing) -> Json {
    serde_json::to_value(summary).expect("a run listing serializes")
}

/// The operations a run left uncertain, as `runs show` and `resume` list them.
pub fn uncertain_json(uncertain: &[UncertainOperation]) -> Json {
    serde_json::to_value(uncertain).expect("uncertain operations serialize")
}

/// The header as `runs show` prints it: the retained inputs (which may hold sensitive values)
/// are left out.
fn header_json(header: &RunHeader) -> Json {
    let mut header = serde_json::to_value(header).expect("a header serializes");
    if let Some(retained) = header.get_mut("retained").and_then(Json::as_object_mut) {
        retained.remove("inputs");
    }
    header
}

fn show_json(
    summary: &RunListing,
    header: &RunHeader,
    recovery: &Recovery<'_>,
    uncertain: &[UncertainOperation],
) -> Json {
    let mut shown = summary_json(summary);
    shown["header"] = header_json(header);
    match recovery.outcome() {
        Some(Outcome::Succeeded(value)) => shown["value"] = parsed(&presentation(value.value())),
        Some(Outcome::Failed(error)) => shown["error"] = parsed(&presentation(&error.to_value())),
        Some(Outcome::Cancelled) | None => {}
    }
    let (decide, redispatch): (Vec<_>, Vec<_>) =
        uncertain.iter().cloned().partition(UncertainOperation::needs_decision);
    shown["uncertain"] = uncertain_json(&decide);
    shown["in_flight"] = uncertain_json(&redispatch);
    shown["abandoned"] = uncertain_json(&recovery.abandoned_operations());
    shown
}

/// Presentation JSON text as a JSON value.
fn parsed(text: &str) -> Json {
    serde_json::from_str(text).unwrap_or_else(|_| Json::String(text.to_owned()))
}

/// A run whose retained program this runtime cannot rebuild: its listing, and why.
fn print_unbuildable(summary: &RunListing, code: Code, message: &str, format: Format) {
    match format {
        Format::Json => {
            let mut shown = summary_json(summary);
            shown["unbuildable"] = json!({"code": code.to_string(), "message": message});
            outln!("{shown}");
        }
        Format::Text => {
            outln!("run {}: {}", summary.run_id, summary.status);
            outln!("  cannot be rebuilt: {code}: {message}");
        }
    }
}

/// A run whose journal holds its header alone: nothing ran, and nothing is uncertain.
fn print_never_started(summary: &RunListing, header: &RunHeader, format: Format) {
    let run = &summary.run_id;
    let what = format!(
        "it never started: nothing ran; `runlet resume {run}` starts it from the inputs its header retains, `runlet runs delete {run}` removes it"
    );
    match format {
        Format::Json => {
            let mut shown = summary_json(summary);
            shown["header"] = header_json(header);
            shown["never_started"] = Json::Bool(true);
            shown["note"] = Json::String(what);
            for list in ["uncertain", "in_flight", "abandoned"] {
                shown[list] = Json::Array(Vec::new());
            }
            outln!("{shown}");
        }
        Format::Text => {
            outln!("run {run}: {}", summary.status);
            outln!("  program: {}", header.source_digest);
            outln!("  registry: {}", header.registry_digest);
            outln!("  {what}");
        }
    }
}

fn print_show(
    summary: &RunListing,
    header: &RunHeader,
    recovery: &Recovery<'_>,
    uncertain: &[UncertainOperation],
) {
    outln!("run {}: {}", summary.run_id, summary.status);
    outln!("  program: {}", header.source_digest);
    outln!("  registry: {}", header.registry_digest);
    outln!("  runtime: {}", header.runtime_version);
    outln!("  started: {}", time_text(summary.started_unix_ms));
    outln!("  last event: seq {} at {}", summary.last_seq, time_text(summary.last_event_unix_ms));
    match recovery.outcome() {
        Some(Outcome::Succeeded(value)) => outln!("  value: {}", presentation(value.value())),
        Some(Outcome::Failed(error)) => outln!("  error: {}: {}", error.code, error.message),
        Some(Outcome::Cancelled) | None => {}
    }
    for operation in uncertain.iter().filter(|operation| !operation.needs_decision()) {
        let resume = match operation.class {
            // Its executor is asked first; one that cannot tell fails it as uncertain (RL6109).
            ExecutionClass::Recoverable => {
                "a resume asks its executor whether it took effect and sends it again if it did not; an executor that cannot tell fails it as uncertain (RL6109)"
            }
            _ => "a resume sends it again",
        };
        outln!(
            "  in flight: {} ({} `{}`, node {}): {resume}",
            operation.operation_id,
            operation.class.as_str(),
            operation.tool,
            operation.node_id,
        );
    }
    for operation in uncertain.iter().filter(|operation| operation.needs_decision()) {
        outln!(
            "  uncertain: {} ({} `{}`, node {}, prepared at seq {}): resolve it with `runlet resolve {} {} --journal …`",
            operation.operation_id,
            operation.class.as_str(),
            operation.tool,
            operation.node_id,
            operation.prepared_seq,
            summary.run_id,
            operation.operation_id,
        );
    }
    for operation in recovery.abandoned_operations() {
        outln!(
            "  abandoned: {} ({} `{}`, node {}, prepared at seq {}): the run ended before it was answered; whether it took effect is unknown",
            operation.operation_id,
            operation.class.as_str(),
            operation.tool,
            operation.node_id,
            operation.prepared_seq,
        );
    }
}

fn journal_failure(error: runlet::journal::JournalError) -> Failure {
    Failure::new(error.code(), error.to_string())
}

fn short_digest(digest: &str) -> &str {
    digest.get(..19).unwrap_or(digest)
}

/// A Unix-millisecond time as RFC 3339 (UTC), or `-` when unknown. A time RFC 3339 cannot
/// write (past the year 9999, from a damaged journal) is shown as the number it is.
fn time_text(unix_ms: Option<u64>) -> String {
    /// 9999-12-31T23:59:59.999Z.
    const LAST_WRITABLE_MS: u64 = 253_402_300_799_999;
    match unix_ms {
        None => "-".to_owned(),
        Some(ms) if ms > LAST_WRITABLE_MS => format!("{ms} ms after the Unix epoch"),
        Some(ms) => {
            humantime::format_rfc3339_millis(SystemTime::UNIX_EPOCH + Duration::from_millis(ms)).to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::time_text;

    #[test]
    fn every_time_is_shown_however_far_off() {
        assert_eq!(time_text(None), "-");
        assert_eq!(time_text(Some(0)), "1970-01-01T00:00:00.000Z");
        assert_eq!(time_text(Some(253_402_300_799_999)), "9999-12-31T23:59:59.999Z");
        assert_eq!(time_text(Some(253_402_300_800_000)), "253402300800000 ms after the Unix epoch");
        assert_eq!(time_text(Some(u64::MAX)), format!("{} ms after the Unix epoch", u64::MAX));
    }
}
