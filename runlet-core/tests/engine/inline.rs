//! Calls polled on the run's own task (`ToolCapabilities::answers_inline`): one that answers at
//! once completes there without a task of its own, one that waits goes on in a task of its own
//! and is woken there, and the run's result is the same either way; one still going when the
//! run ends goes on to its end.

use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use async_trait::async_trait;
use parking_lot::Mutex;
use tokio::sync::Notify;

use runlet::analyze::Inputs;
use runlet::engine::event::Event;
use runlet::engine::{Outcome, ToolCall, ToolCapabilities, ToolError, ToolExecutor, ToolOutput};
use runlet::registry::{Registry, RegistryOptions};
use runlet::runtime::Runtime;
use runlet::value::{Value, to_presentation_json};

/// `t.now` answers its argument at once; `t.later` says it was polled, then answers once
/// `release` is notified, and `t.sleepy` after 5 ms on the tokio clock. Each dispatch notes the
/// task its first poll ran on.
struct Tools {
    inline: bool,
    polled: Mutex<mpsc::Sender<()>>,
    release: Notify,
    first_polls: Mutex<Vec<(String, tokio::task::Id)>>,
}

#[async_trait]
impl ToolExecutor for Tools {
    fn capabilities(&self, _tool: &str) -> ToolCapabilities {
        ToolCapabilities { answers_inline: self.inline, ..ToolCapabilities::default() }
    }

    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        let task = tokio::task::id();
        self.first_polls.lock().push((call.tool.to_string(), task));
        match &*call.tool {
            "t.later" => {
                let _ = self.polled.lock().send(());
                self.release.notified().await;
            }
            "t.sleepy" => tokio::time::sleep(Duration::from_millis(5)).await,
            _ => {}
        }
        Ok(ToolOutput::new(call.arguments.iter().next().cloned().unwrap_or(Value::Null)))
    }
}

const PROGRAM: &str = "a = t.now(1)\nb = t.now(2)\nc = t.later(3)\nd = t.sleepy(4)\nreturn [a, b, c, d]\n";

/// Runs [`PROGRAM`] with the tools answering inline or not: its result, and the task of each
/// call's first poll by tool name.
fn run(inline: bool) -> (String, Vec<(String, tokio::task::Id)>) {
    let tool = |name: &str| format!(r#"{{"name": "{name}", "params": [{{"name": "x", "schema": {{}}}}]}}"#);
    let text = format!(r#"{{"tools": [{}, {}, {}]}}"#, tool("t.now"), tool("t.later"), tool("t.sleepy"));
    let registry = Registry::from_json_str(&text, &RegistryOptions::default()).expect("registry").registry;
    let (polled, was_polled) = mpsc::channel();
    let tools = Arc::new(Tools {
        inline,
        polled: Mutex::new(polled),
        release: Notify::new(),
        first_polls: Mutex::default(),
    });
    let runtime = Runtime::builder().registry(registry).executor(tools.clone()).build().expect("runtime");
    let program = runtime.compile(PROGRAM, &Inputs::new()).expect("compiles");
    let run = runtime.start(&program, &Inputs::new()).expect("starts");
    was_polled.recv_timeout(Duration::from_secs(30)).expect("t.later is dispatched");
    tools.release.notify_one();
    let Outcome::Succeeded(value) = run.wait().expect("journal works") else { panic!("the run fails") };
    let mut first_polls = tools.first_polls.lock().clone();
    first_polls.sort_by(|a, b| a.0.cmp(&b.0));
    (to_presentation_json(value.value()).expect("json"), first_polls)
}

#[test]
fn calls_polled_inline_answer_on_the_run_task_and_waiting_ones_are_woken_in_their_own() {
    let (result, first_polls) = run(true);
    assert_eq!(result, "[1,2,3,4]");
    let tasks: Vec<_> = first_polls.iter().map(|(_, task)| *task).collect();
    assert_eq!(tasks.len(), 4, "one dispatch per call: {first_polls:?}");
    assert!(
        tasks.iter().all(|task| *task == tasks[0]),
        "every call's first poll ran on the run's one task: {first_polls:?}"
    );
}

#[test]
fn calls_not_polled_inline_each_run_on_a_task_of_their_own_with_the_same_result() {
    let (result, first_polls) = run(false);
    assert_eq!(result, "[1,2,3,4]");
    let tasks: std::collections::HashSet<_> = first_polls.iter().map(|(_, task)| *task).collect();
    assert_eq!(tasks.len(), 4, "four calls on four tasks: {first_polls:?}");
}
/// `t.stuck` cannot be cancelled: it answers once `release` is notified, and says so on `ended`.
struct Stuck {
    release: Notify,
    ended: Mutex<mpsc::Sender<()>>,
}

#[async_trait]
impl ToolExecutor for Stuck {
    fn capabilities(&self, _tool: &str) -> ToolCapabilities {
        ToolCapabilities { answers_inline: true, ..ToolCapabilities::default() }
    }

    async fn dispatch(&self, _call: ToolCall) -> Result<ToolOutput, ToolError> {
        self.release.notified().await;
        let _ = self.ended.lock().send(());
        Ok(ToolOutput::new(Value::Null))
    }
}

#[test]
fn a_call_polled_inline_still_going_when_the_run_ends_goes_on_detached() {
    let text = r#"{"tools": [{"name": "t.stuck", "params": []}]}"#;
    let registry = Registry::from_json_str(text, &RegistryOptions::default()).expect("registry").registry;
    let (ended, has_ended) = mpsc::channel();
    let tools = Arc::new(Stuck { release: Notify::new(), ended: Mutex::new(ended) });
    let runtime = Runtime::builder().registry(registry).executor(tools.clone()).build().expect("runtime");
    let program = runtime.compile("return t.stuck()\n", &Inputs::new()).expect("compiles");
    let mut run = runtime.start(&program, &Inputs::new()).expect("starts");
    while let Some((_, event)) = run.events().blocking_recv() {
        if matches!(event, Event::CallDispatchPrepared { .. }) {
            break;
        }
    }
    run.cancel();
    assert!(matches!(run.wait().expect("journal works"), Outcome::Cancelled));
    tools.release.notify_one();
    has_ended.recv_timeout(Duration::from_secs(30)).expect("the detached call ran to its end");
}

/// A run whose inputs never run out — every call answered inline, every commit on the run's own
/// thread — still hears the host's cancellation and its wall-clock deadline, on the SQLite
/// journal and the in-memory one.
#[test]
fn a_run_of_inline_answers_hears_cancellation_and_its_deadline() {
    use runlet::engine::{LimitKey, Limits, RunError};
    use runlet::journal::{Durability, Journal, MemoryJournal, SqliteJournal};
    use runlet::runtime::RunOptions;

    let dir = std::env::temp_dir().join(format!("runlet-inline-interrupts-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let text = r#"{"tools": [{"name": "t.now", "params": [{"name": "x", "schema": {}}]},
        {"name": "t.numbers", "params": [], "outputSchema": {"type": "array", "items": {"type": "integer"}}}]}"#;
    let source = "return fold acc = 0 for n in t.numbers() {\n    return t.now(acc + n)\n}\n";
    let journals: Vec<(&str, Arc<dyn Journal>)> = vec![
        ("sqlite", Arc::new(SqliteJournal::open(dir.join("runs.db"), Durability::Normal).expect("open"))),
        ("memory", Arc::new(MemoryJournal::new())),
    ];
    for (name, journal) in journals {
        let runtime = Runtime::builder()
            .registry(Registry::from_json_str(text, &RegistryOptions::default()).expect("registry").registry)
            .executor(Arc::new(Counting))
            .journal(journal)
            .worker_threads(2)
            .build()
            .expect("runtime");
        let program = runtime.compile(source, &Inputs::new()).expect("compiles");

        let mut run = runtime.start(&program, &Inputs::new()).expect("starts");
        let mut answered = 0;
        while answered < 100 {
            match run.events().blocking_recv() {
                Some((_, Event::CallCompleted { .. })) => answered += 1,
                Some(_) => {}
                None => panic!("{name}: the run ended before it was cancelled"),
            }
        }
        run.cancel();
        assert!(matches!(run.wait().expect("journal"), Outcome::Cancelled), "{name}: cancelled");

        let options =
            RunOptions { limits: Limits::new().with(LimitKey::WallClockMs, 50), ..RunOptions::default() };
        let outcome = runtime.start_with(&program, &Inputs::new(), options).expect("starts").wait();
        let error: RunError = match outcome.expect("journal") {
            Outcome::Failed(error) => error,
            other => panic!("{name}: expected the deadline to fail the run, got {other:?}"),
        };
        assert_eq!(error.code, "RL4104", "{name}: {error:?}");
        runtime.shutdown();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `t.numbers` answers 0..200,000 and `t.now` its argument, both at once in the run's task.
struct Counting;

#[async_trait]
impl ToolExecutor for Counting {
    fn capabilities(&self, _tool: &str) -> ToolCapabilities {
        ToolCapabilities { answers_inline: true, ..ToolCapabilities::default() }
    }

    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::new(match &*call.tool {
            "t.numbers" => {
                runlet::value::List::new((0..200_000).map(Value::Int).collect()).expect("flat").into()
            }
            _ => call.arguments.iter().next().cloned().unwrap_or(Value::Null),
        }))
    }
}
