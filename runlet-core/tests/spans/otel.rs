//! The OpenTelemetry spans of runs, through `tracing-opentelemetry` into the in-memory exporter:
//! one trace per run rooted at its `runlet.run` anchor, sessions of every process under it,
//! boundary attempts and loops as spans, dispatches under their calls with the `traceparent` the
//! tool saw, a host's parent span, and no value in any attribute.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use opentelemetry::trace::{SpanId, TraceId};
use opentelemetry_sdk::trace::SpanData;
use runlet::analyze::Inputs;
use runlet::engine::event::Event;
use runlet::engine::{RecoveryOutcome, RecoveryRequest, ToolCall, ToolError, ToolExecutor, ToolOutput};
use runlet::journal::{Journal, MemoryJournal, RunId};
use runlet::runtime::{RunOptions, Runtime, StartError};
use runlet::scripted::ScriptedExecutor;
use runlet::value::{Value, sha256};

use super::examples::{example, inputs, registry};
use super::recorders;

/// Forwards to scripted tools and keeps the trace context each dispatch was handed.
struct Seen {
    inner: ScriptedExecutor,
    traces: Mutex<Vec<(String, BTreeMap<String, String>)>>,
}

#[async_trait]
impl ToolExecutor for Seen {
    async fn dispatch(&self, call: ToolCall) -> Result<ToolOutput, ToolError> {
        let entry = (call.context.dispatch_id.to_string(), call.context.trace.clone());
        self.traces.lock().unwrap().push(entry);
        self.inner.dispatch(call).await
    }

    async fn recover(&self, request: RecoveryRequest) -> Result<RecoveryOutcome, ToolError> {
        self.inner.recover(request).await
    }
}

fn seen(fixtures: &str) -> Arc<Seen> {
    let inner = ScriptedExecutor::from_json_str(fixtures).expect("fixtures");
    Arc::new(Seen { inner, traces: Mutex::default() })
}

fn appendix_runtime(executor: Arc<dyn ToolExecutor>, journal: Arc<MemoryJournal>) -> Runtime {
    Runtime::builder()
        .registry(registry(&example("appendix-a", "registry.json")))
        .executor(executor)
        .journal(journal)
        .digest_key("tests", b"0123456789abcdef0123456789abcdef")
        .build()
        .expect("runtime")
}

/// Runs Appendix A with `tools` under `options` to its end: its id and its executor.
fn run_appendix(tools: &str, options: RunOptions) -> (RunId, Arc<Seen>, Arc<MemoryJournal>) {
    let executor = seen(&example("appendix-a", tools));
    let journal = Arc::new(MemoryJournal::new());
    let runtime = appendix_runtime(executor.clone(), journal.clone());
    let inputs = inputs(&example("appendix-a", "inputs.json"));
    let program = runtime.compile(&example("appendix-a", "main.run"), &inputs).expect("compiles");
    let run = runtime.start_with(&program, &inputs, options).expect("starts");
    let run_id = run.run_id().clone();
    run.wait().expect("the journal works");
    (run_id, executor, journal)
}

fn attribute(span: &SpanData, key: &str) -> Option<String> {
    span.attributes.iter().find(|kv| kv.key.as_str() == key).map(|kv| kv.value.as_str().into_owned())
}

/// The exported spans of the trace whose anchor is run `run`'s, and the anchor.
fn trace_of(run: &RunId) -> (SpanData, Vec<SpanData>) {
    let all = recorders().exporter.get_finished_spans().expect("exported");
    let anchor = all
        .iter()
        .find(|s| s.name == "runlet.run" && attribute(s, "runlet.run.id").as_deref() == Some(run.as_str()))
        .cloned()
        .unwrap_or_else(|| panic!("the anchor of {run} was exported"));
    let trace = anchor.span_context.trace_id();
    let spans = all.into_iter().filter(|s| s.span_context.trace_id() == trace).collect();
    (anchor, spans)
}

fn by_id(spans: &[SpanData], id: SpanId) -> &SpanData {
    spans.iter().find(|s| s.span_context.span_id() == id).expect("the parent is in the trace")
}

fn named<'a>(spans: &'a [SpanData], name: &str) -> Vec<&'a SpanData> {
    spans.iter().filter(|s| s.name == name).collect()
}

fn tool_spans<'a>(spans: &'a [SpanData], tool: &str) -> Vec<&'a SpanData> {
    spans
        .iter()
        .filter(|s| s.name == format!("execute_tool {tool}").as_str())
        .filter(|s| attribute(s, "gen_ai.tool.name").as_deref() == Some(tool))
        .collect()
}

#[test]
fn a_run_is_one_trace_from_its_anchor_with_a_call_span_per_attempt() {
    let (run, executor, _) = run_appendix("tools-orders-failing.json", RunOptions::default());
    let (anchor, spans) = trace_of(&run);
    assert_eq!(anchor.parent_span_id, SpanId::INVALID, "the anchor is the trace's root");
    assert!(
        spans.iter().all(|s| attribute(s, "runlet.run.id").is_none_or(|id| id == run.as_str())),
        "only this run's spans are in its trace"
    );

    let [session] = named(&spans, "runlet.session")[..] else { panic!("one session: {spans:#?}") };
    assert_eq!(session.parent_span_id, anchor.span_context.span_id());
    assert!(anchor.end_time <= session.end_time, "the anchor ends first, once the run is created");

    let attempts = named(&spans, "runlet.boundary.attempt");
    assert_eq!(attempts.len(), 3, "retry 2: three attempts");
    assert!(attempts.iter().all(|a| a.parent_span_id == session.span_context.span_id()));
    let orders = tool_spans(&spans, "shop.orders");
    assert_eq!(orders.len(), 3);
    let mut parents: Vec<SpanId> = orders.iter().map(|o| o.parent_span_id).collect();
    parents.sort_by_key(|id| u64::from_be_bytes(id.to_bytes()));
    parents.dedup();
    assert_eq!(parents.len(), 3, "one call span under each boundary attempt");
    for order in &orders {
        assert_eq!(by_id(&spans, order.parent_span_id).name, "runlet.boundary.attempt");
        assert_eq!(attribute(order, "error.type").as_deref(), Some("UNAVAILABLE"));
        assert!(matches!(order.status, opentelemetry::trace::Status::Error { .. }), "{:?}", order.status);
    }
    let operation = attribute(orders[0], "gen_ai.tool.call.id").expect("an operation id");
    assert!(orders.iter().all(|o| attribute(o, "gen_ai.tool.call.id").as_ref() == Some(&operation)));
    let attempt_numbers: Vec<String> =
        attempts.iter().map(|a| attribute(a, "runlet.attempt").expect("attempt")).collect();
    assert!(attempt_numbers.iter().all(|n| ["1", "2", "3"].contains(&n.as_str())), "{attempt_numbers:?}");

    // The caught failure: the summary of the catch arm is a call at the top of the run.
    let summaries = tool_spans(&spans, "ai.summarize");
    assert_eq!(summaries.len(), 1);
    assert_eq!(summaries[0].parent_span_id, session.span_context.span_id());

    let dispatches = named(&spans, "runlet.dispatch");
    let calls = spans.iter().filter(|s| s.name.starts_with("execute_tool ")).count();
    assert_eq!(dispatches.len(), calls, "one dispatch per call");
    let traces = executor.traces.lock().unwrap().clone();
    assert_eq!(traces.len(), dispatches.len());
    for dispatch in &dispatches {
        assert!(by_id(&spans, dispatch.parent_span_id).name.starts_with("execute_tool "));
        let id = attribute(dispatch, "runlet.dispatch.id").expect("a dispatch id");
        let (_, trace) = traces.iter().find(|(seen, _)| *seen == id).expect("the tool saw this dispatch");
        let context = &dispatch.span_context;
        let expected = format!(
            "00-{:032x}-{:016x}-{:02x}",
            context.trace_id(),
            context.span_id(),
            context.trace_flags().to_u8()
        );
        assert_eq!(trace.get("traceparent"), Some(&expected), "the tool's traceparent is its dispatch span");
    }
}

#[test]
fn calls_in_a_loop_are_children_of_the_loop_inside_its_attempt() {
    let (run, _, _) = run_appendix("tools.json", RunOptions::default());
    let (_, spans) = trace_of(&run);
    let [for_loop] = named(&spans, "runlet.loop")[..] else { panic!("one loop: {spans:#?}") };
    assert_eq!(by_id(&spans, for_loop.parent_span_id).name, "runlet.boundary.attempt");
    let items: usize = attribute(for_loop, "runlet.loop.items").expect("items").parse().expect("a number");
    let scores = tool_spans(&spans, "fraud.score");
    assert_eq!(scores.len(), items, "one call per order");
    assert!(scores.iter().all(|s| s.parent_span_id == for_loop.span_context.span_id()));
    assert!(
        named(&spans, "runlet.boundary.attempt").iter().all(|a| attribute(a, "error.type").is_none()),
        "the attempt succeeded"
    );
}

#[test]
fn a_host_traceparent_is_the_anchors_parent_and_a_bad_one_is_refused() {
    let (trace, parent) = ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7");
    let traceparent = format!("00-{trace}-{parent}-01");
    let options =
        RunOptions { trace: BTreeMap::from([("traceparent".into(), traceparent)]), ..RunOptions::default() };
    let (run, _, journal) = run_appendix("tools.json", options);
    let (anchor, _) = trace_of(&run);
    assert_eq!(anchor.span_context.trace_id(), TraceId::from_hex(trace).unwrap());
    assert_eq!(anchor.parent_span_id, SpanId::from_hex(parent).unwrap());
    assert!(anchor.parent_span_is_remote);
    let header = tokio_block_on(journal.header(&run)).expect("header");
    let kept = &header.retained.expect("retained").trace["traceparent"];
    assert!(kept.starts_with(&format!("00-{trace}-")), "the header keeps the anchor's context: {kept}");

    let runtime = appendix_runtime(seen("{}"), Arc::new(MemoryJournal::new()));
    let inputs = inputs(&example("appendix-a", "inputs.json"));
    let program = runtime.compile(&example("appendix-a", "main.run"), &inputs).expect("compiles");
    let bad = RunOptions {
        trace: BTreeMap::from([("traceparent".into(), format!("{trace}-{parent}"))]),
        ..RunOptions::default()
    };
    let Err(error) = runtime.start_with(&program, &inputs, bad) else {
        panic!("an invalid traceparent starts")
    };
    assert!(matches!(error, StartError::InvalidTraceContext { .. }), "{error}");
    assert_eq!(error.code().to_string(), "RL8107");
}

fn tokio_block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio").block_on(future)
}

/// The records of run `run` once `done` holds for them, copied with its header into a fresh
/// journal: the journal of a process that stopped right then (each append is atomic, so a read
/// sees whole batches).
fn copy_once(journal: &MemoryJournal, run: &RunId, done: impl Fn(&[Event]) -> bool) -> Arc<MemoryJournal> {
    let copy = Arc::new(MemoryJournal::new());
    tokio_block_on(async {
        let records = loop {
            // The run's start is not committed until its header is.
            let records = journal.read(run, 0, usize::MAX).await.unwrap_or_default();
            let events: Vec<Event> =
                records.iter().map(|r| Event::decode(&r.bytes).expect("decodes").1).collect();
            if done(&events) {
                break records;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        };
        copy.create_run(&journal.header(run).await.expect("header")).await.expect("create");
        copy.append(run, 0, &records).await.expect("append");
    });
    copy
}

#[test]
fn a_resumed_run_joins_its_trace_and_replayed_records_open_no_spans() {
    // The first process stops while `support.tickets` is in flight, after two calls completed.
    let mut stalled: serde_json::Value =
        serde_json::from_str(&example("appendix-a", "tools.json")).expect("JSON");
    stalled["support.tickets"][0]["delay_ms"] = serde_json::json!(600_000);
    let journal = Arc::new(MemoryJournal::new());
    let first = appendix_runtime(seen(&stalled.to_string()), journal.clone());
    let inputs = inputs(&example("appendix-a", "inputs.json"));
    let program = first.compile(&example("appendix-a", "main.run"), &inputs).expect("compiles");
    let run = first.start(&program, &inputs).expect("starts");
    let run_id = run.run_id().clone();
    let completed =
        |events: &[Event]| events.iter().filter(|e| matches!(e, Event::CallCompleted { .. })).count();
    let crashed = copy_once(&journal, &run_id, |events| completed(events) >= 2);
    first.shutdown();

    let second = appendix_runtime(seen(&example("appendix-a", "tools.json")), crashed);
    let program = second.compile(&example("appendix-a", "main.run"), &inputs).expect("compiles");
    let outcome = second.resume(&program, &run_id).expect("resumes").wait().expect("the journal works");
    assert!(matches!(outcome, runlet::engine::Outcome::Succeeded(_)), "{outcome:?}");

    let (anchor, spans) = trace_of(&run_id);
    let sessions = named(&spans, "runlet.session");
    assert_eq!(sessions.len(), 2, "the start and the resume, in one trace");
    let resumed = sessions
        .iter()
        .find(|s| attribute(s, "runlet.resumed").as_deref() == Some("true"))
        .expect("the resumed session");
    assert_eq!(resumed.parent_span_id, anchor.span_context.span_id(), "parented through the journal");
    assert!(resumed.parent_span_is_remote, "the anchor came from the run header");

    // The session a span belongs to, following parents up.
    let session_of = |span: &SpanData| {
        let mut at = span;
        while at.name != "runlet.session" {
            at = by_id(&spans, at.parent_span_id);
        }
        at.span_context.span_id()
    };
    let resumed_tools: Vec<String> = spans
        .iter()
        .filter(|s| s.name.starts_with("execute_tool ") && session_of(s) == resumed.span_context.span_id())
        .map(|s| attribute(s, "gen_ai.tool.name").expect("tool"))
        .collect();
    assert!(resumed_tools.contains(&"support.tickets".to_owned()), "the call in flight is sent again");
    for done in ["crm.customer", "billing.limits"] {
        assert!(!resumed_tools.contains(&done.to_owned()), "{done} completed before: {resumed_tools:?}");
        assert_eq!(tool_spans(&spans, done).len(), 1, "{done}: one span, the first process's");
    }
}

/// A run with secret inputs and outputs: no exported attribute or event holds a secret or its
/// unkeyed digest.
#[test]
fn no_secret_or_its_digest_reaches_an_exported_span() {
    const SECRET: &str = "SECRETtoken4711";
    let registry_json = r#"{"inputs": {"key": {"type": "string", "x-runlet-sensitivity": "secret"}}, "tools": [
        {"name": "vault.get", "params": [{"name": "key", "schema": {"type": "string"}}],
         "execution": "pure",
         "outputSchema": {"type": "object", "required": ["token"], "properties": {
            "token": {"type": "string", "x-runlet-sensitivity": "secret"}}}},
        {"name": "svc.use", "params": [{"name": "text", "schema": {"type": "string"}}], "execution": "pure",
         "outputSchema": {"type": "string"}}
    ]}"#;
    let fixtures = serde_json::json!({
        "vault.get": [{"result": {"token": SECRET}}],
        "svc.use": [{"result": "ok"}]
    })
    .to_string();
    let runtime = Runtime::builder()
        .registry(registry(registry_json))
        .executor(seen(&fixtures))
        .digest_key("k1", b"0123456789abcdef0123456789abcdef")
        .build()
        .expect("runtime");
    let source = "s = vault.get(key)\nused = svc.use(s.token)\nparts = for t in [s.token, key] {\n    return svc.use(t)\n}\nreturn { used, parts }\n";
    let mut inputs = Inputs::new();
    inputs.insert("key", Value::from(format!("{SECRET}-input")));
    let program = runtime.compile(source, &inputs).expect("compiles");
    let run = runtime.start(&program, &inputs).expect("starts");
    let run_id = run.run_id().clone();
    let outcome = run.wait().expect("the journal works");
    assert!(matches!(outcome, runlet::engine::Outcome::Succeeded(_)), "{outcome:?}");

    let (_, spans) = trace_of(&run_id);
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_ref()).collect();
    assert!(names.contains(&"runlet.loop") && names.contains(&"execute_tool svc.use"), "traced: {names:?}");
    let forbidden = [
        SECRET.to_owned(),
        sha256(&Value::from(SECRET)).to_string(),
        sha256(&Value::from(format!("{SECRET}-input"))).to_string(),
    ];
    for span in &spans {
        let texts = span.attributes.iter().map(|kv| kv.value.as_str().into_owned()).chain(
            span.events.iter().flat_map(|e| {
                std::iter::once(e.name.to_string())
                    .chain(e.attributes.iter().map(|kv| kv.value.as_str().into_owned()))
            }),
        );
        for text in texts {
            assert!(!forbidden.iter().any(|f| text.contains(f.as_str())), "{} exports {text:?}", span.name);
        }
    }
}
