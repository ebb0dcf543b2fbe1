//! The spans a run emits (INTERFACES.md §4.5), seen through the process's one subscriber (so
//! this is its own test binary): a recording `tracing` layer, and `tracing-opentelemetry` into
//! `opentelemetry_sdk`'s in-memory exporter ([`otel`]). Here, through the recording layer:
//! Appendix A with `shop.orders` failing three times, retried by `boundary retry 2`, then caught.

mod metrics;
mod otel;

#[path = "../common/examples.rs"]
mod examples;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

use examples::{example, inputs, registry};
use runlet::runtime::Runtime;
use runlet::scripted::ScriptedExecutor;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// One recorded span: its name, its parent's index in the record, and its fields as text.
#[derive(Debug, Clone)]
struct Recorded {
    name: String,
    parent: Option<usize>,
    fields: BTreeMap<String, String>,
}

/// Every span opened in the process, in order; a span's extension holds its index.
#[derive(Default, Clone)]
struct Recording(Arc<Mutex<Vec<Recorded>>>);

struct Index(usize);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Recording {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let span = ctx.span(id).expect("a new span");
        let parent = span.parent().and_then(|p| p.extensions().get::<Index>().map(|i| i.0));
        let mut fields = BTreeMap::new();
        attrs.record(&mut Fields(&mut fields));
        let mut all = self.0.lock().unwrap();
        all.push(Recorded { name: attrs.metadata().name().to_owned(), parent, fields });
        span.extensions_mut().insert(Index(all.len() - 1));
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let Some(index) = ctx.span(id).and_then(|s| s.extensions().get::<Index>().map(|i| i.0)) else {
            return;
        };
        values.record(&mut Fields(&mut self.0.lock().unwrap()[index].fields));
    }
}

/// What the process's subscriber records: every span through the recording layer, and the
/// OpenTelemetry spans the in-memory exporter has when they end.
struct Recorders {
    recording: Recording,
    exporter: opentelemetry_sdk::trace::InMemorySpanExporter,
}

fn recorders() -> &'static Recorders {
    static RECORDERS: OnceLock<Recorders> = OnceLock::new();
    RECORDERS.get_or_init(|| {
        let recording = Recording::default();
        let exporter = opentelemetry_sdk::trace::InMemorySpanExporter::default();
        let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
            .with_simple_exporter(exporter.clone())
            .build();
        let tracer = opentelemetry::trace::TracerProvider::tracer(&provider, "runlet-tests");
        let subscriber = tracing_subscriber::registry()
            .with(recording.clone())
            .with(tracing_opentelemetry::layer().with_tracer(tracer));
        tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");
        Recorders { recording, exporter }
    })
}

fn recording() -> &'static Recording {
    &recorders().recording
}

#[test]
fn a_retried_call_has_one_execute_tool_span_per_attempt_each_with_its_dispatch() {
    let recording = recording();
    let tools = ScriptedExecutor::from_json_str(&example("appendix-a", "tools-orders-failing.json"))
        .expect("fixtures");
    let runtime = Runtime::builder()
        .registry(registry(&example("appendix-a", "registry.json")))
        .executor(Arc::new(tools))
        .build()
        .expect("runtime");
    let inputs = inputs(&example("appendix-a", "inputs.json"));
    let program = runtime.compile(&example("appendix-a", "main.run"), &inputs).expect("compiles");
    let run = runtime.start(&program, &inputs).expect("starts");
    let run_id = run.run_id().as_str().to_owned();
    run.wait().expect("the journal works");
    let spans = recording.0.lock().unwrap().clone();

    let sessions: Vec<usize> = (0..spans.len())
        .filter(|&i| spans[i].name == "runlet.session" && spans[i].fields["runlet.run.id"] == run_id)
        .collect();
    let [session] = sessions[..] else { panic!("one session span: {spans:#?}") };
    assert_eq!(spans[session].fields["runlet.run.id"], run_id);
    assert_eq!(spans[session].fields["runlet.resumed"], "false");

    let calls: Vec<&Recorded> =
        spans.iter().filter(|s| s.name == "execute_tool" && s.fields["runlet.run.id"] == run_id).collect();
    let boundary_attempts = (0..spans.len())
        .filter(|&i| spans[i].name == "runlet.boundary.attempt" && spans[i].parent == Some(session))
        .count();
    assert_eq!(boundary_attempts, 3, "retry 2 is three attempts under the session: {spans:#?}");
    for call in &calls {
        let expected = match call.fields["gen_ai.tool.name"].as_str() {
            "shop.orders" => "runlet.boundary.attempt",
            _ => "runlet.session",
        };
        assert_eq!(spans[call.parent.expect("a parent")].name, expected, "{call:#?}");
    }
    let tools: Vec<&str> = calls.iter().map(|c| c.fields["gen_ai.tool.name"].as_str()).collect();
    for once in ["crm.customer", "billing.limits", "support.tickets", "ai.summarize"] {
        assert_eq!(tools.iter().filter(|t| **t == once).count(), 1, "{once}: {tools:?}");
    }
    let orders: Vec<&&Recorded> =
        calls.iter().filter(|c| c.fields["gen_ai.tool.name"] == "shop.orders").collect();
    assert_eq!(orders.len(), 3, "retry 2 is three attempts, each its own call span");
    let operation = &orders[0].fields["gen_ai.tool.call.id"];
    assert!(operation.starts_with("op:"), "{operation}");
    assert!(
        orders.iter().all(|c| &c.fields["gen_ai.tool.call.id"] == operation),
        "one operation: {orders:#?}"
    );
    let attempts: Vec<&str> = orders.iter().map(|c| c.fields["runlet.attempt"].as_str()).collect();
    assert_eq!(attempts, ["1", "2", "3"]);
    assert!(
        orders.iter().all(|c| c.fields.get("error.type").is_some_and(|t| t == "UNAVAILABLE")),
        "{orders:#?}"
    );
    assert_eq!(calls[0].fields["otel.name"], format!("execute_tool {}", calls[0].fields["gen_ai.tool.name"]));

    let dispatches: Vec<&Recorded> = spans
        .iter()
        .filter(|s| {
            s.name == "runlet.dispatch"
                && s.parent.is_some_and(|p| spans[p].fields.get("runlet.run.id") == Some(&run_id))
        })
        .collect();
    assert_eq!(dispatches.len(), calls.len(), "one dispatch per call, none a recovery");
    for dispatch in &dispatches {
        let parent = &spans[dispatch.parent.expect("a dispatch has its call as parent")];
        assert_eq!(parent.name, "execute_tool");
        assert_eq!(dispatch.fields["runlet.recovery"], "false");
        assert!(dispatch.fields["runlet.dispatch.id"].starts_with("dispatch:"), "{dispatch:?}");
    }
    let values = ["Ada", "c-42"];
    let leaked: Vec<&Recorded> =
        spans.iter().filter(|s| s.fields.values().any(|v| values.iter().any(|x| v.contains(x)))).collect();
    assert!(leaked.is_empty(), "no value reaches an attribute: {leaked:#?}");
}
