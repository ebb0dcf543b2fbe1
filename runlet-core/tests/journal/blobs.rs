//! Large values as blobs (spec §5.2): in an SQLite journal a tool output above the threshold is
//! kept apart from its record, shared by the runs that record it, read back for a resume and for
//! observers, and collected once no run names it; a record whose blob is gone fails the resume
//! with `RL7008` rather than replaying something else.

use std::sync::Arc;

use async_trait::async_trait;
use runlet::analyze::Inputs;
use runlet::engine::event::{Event, RecordedValue};
use runlet::engine::{Outcome, ToolCall, ToolError, ToolExecutor, ToolOutput};
use runlet::journal::{Durability, Journal, RunId, SqliteJournal};

use super::Scratch;
use runlet::registry::{Registry, RegistryOptions};
use runlet::runtime::{Executable, RunOptions, Runtime};
use runlet::value::Value;

const REGISTRY: &str = r#"{"prelude": "standard", "tools": [
    {"name": "t.page", "params": [{"name": "n", "schema": {"type": "integer"}}],
     "outputSchema": {"type": "string"}, "execution": "idempotent"}]}"#;

/// `t.page(n)`: `n` kilobytes of text.
struct Pages;

#[async_trait]
impl ToolExecutor for Pages {
    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        match call.arguments.iter().next() {
            Some(Value::Int(n)) => Ok(ToolOutput::new(Value::from("x".repeat(*n as usize * 1024)))),
            other => Err(ToolError::new("BAD_ARGUMENT", format!("{other:?}"))),
        }
    }
}

const SOURCE: &str = "big = t.page(40)\nsmall = t.page(1)\nreturn text.length(big) + text.length(small)\n";

fn runtime(journal: &Arc<SqliteJournal>) -> Runtime {
    let registry = Registry::from_json_str(REGISTRY, &RegistryOptions::default()).expect("registry").registry;
    Runtime::builder()
        .registry(registry)
        .executor(Arc::new(Pages))
        .journal(Arc::clone(journal) as Arc<dyn Journal>)
        .digest_key("blobs", b"the key of these runs")
        .build()
        .expect("runtime")
}

fn finished(runtime: &Runtime) -> (Executable, RunId) {
    let program = runtime.compile(SOURCE, &Inputs::new()).expect("compiles");
    let run = runtime.start(&program, &Inputs::new()).expect("starts");
    let id = run.run_id().clone();
    match run.wait().expect("journal") {
        Outcome::Succeeded(value) => assert_eq!(value.value(), &Value::Int(41 * 1024)),
        other => panic!("{other:?}"),
    }
    (program, id)
}

fn block_on<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread().build().expect("tokio").block_on(future)
}

/// The outputs the run's records hold, as they hold them.
fn recorded_outputs(journal: &SqliteJournal, run: &RunId) -> Vec<(usize, RecordedValue)> {
    let records = block_on(journal.read(run, 0, usize::MAX)).expect("reads");
    records
        .iter()
        .filter_map(|record| match Event::decode_record(record).expect("decodes") {
            Event::CallCompleted { output, .. } => Some((record.bytes.len(), output)),
            _ => None,
        })
        .collect()
}

#[test]
fn a_large_output_is_a_blob_shared_by_runs_read_back_on_resume_and_collected_with_its_runs() {
    let scratch = Scratch::new("blobs-shared");
    let journal = Arc::new(SqliteJournal::open(scratch.file("runs.db"), Durability::Normal).expect("open"));
    let runtime = runtime(&journal);
    let (program, first) = finished(&runtime);

    let outputs = recorded_outputs(&journal, &first);
    let blob = outputs.iter().find_map(|(size, output)| match output {
        RecordedValue::Blob { digest, len } => Some((*size, *digest, *len)),
        RecordedValue::Inline(_) => None,
    });
    let (record_size, digest, len) = blob.expect("the 40 KiB output is a blob");
    assert!(record_size < 512 && len > 40 * 1024, "a {record_size}-byte record names {len} bytes");
    assert!(
        outputs
            .iter()
            .any(|(_, output)| matches!(output, RecordedValue::Inline(bytes) if bytes.len() > 1024)),
        "the 1 KiB output stays inline"
    );

    // The ended run recovers from its journal, the blob read back into its record.
    let recovery = runtime.recovery(&program, &first, RunOptions::default()).expect("recovers");
    assert!(matches!(recovery.outcome(), Some(Outcome::Succeeded(_))));
    let events = runtime.journal_events(&program, &first, &Default::default()).expect("events");
    assert!(
        events.iter().any(|e| e.kind == "CallCompleted" && e.value.is_some()),
        "observers see the output"
    );

    let (_, second) = finished(&runtime);
    let shared = |run: &RunId| {
        recorded_outputs(&journal, run)
            .iter()
            .any(|(_, o)| matches!(o, RecordedValue::Blob { digest: d, .. } if *d == digest))
    };
    assert!(shared(&second), "the second run names the same blob");

    block_on(journal.delete_run(&first)).expect("deletes");
    assert_eq!(block_on(journal.collect_blobs()).expect("collects"), 0, "the second run still names it");
    assert!(block_on(journal.blob(&digest)).expect("reads").is_some());
    block_on(journal.delete_run(&second)).expect("deletes");
    assert_eq!(block_on(journal.collect_blobs()).expect("collects"), 1);
    assert!(block_on(journal.blob(&digest)).expect("reads").is_none());
}

#[test]
fn a_record_whose_blob_is_gone_fails_recovery_with_rl7008() {
    let scratch = Scratch::new("blobs-gone");
    let path = scratch.file("runs.db");
    let journal = Arc::new(SqliteJournal::open(&path, Durability::Normal).expect("open"));
    let runtime = runtime(&journal);
    let (program, run) = finished(&runtime);
    let connection = rusqlite::Connection::open(&path).expect("opens the file");
    assert_eq!(connection.execute("DELETE FROM blobs", []).expect("deletes"), 1);
    let error = runtime.recovery(&program, &run, RunOptions::default()).expect_err("the blob is gone");
    assert_eq!(error.code().to_string(), "RL7008", "{error}");
    assert!(error.to_string().contains("does not have"), "{error}");
}
