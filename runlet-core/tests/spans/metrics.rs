//! The runtime's metrics through a meter the host hands the builder, read back from
//! `opentelemetry_sdk`'s in-memory metric exporter: Appendix A with `shop.orders` failing,
//! retried twice, then caught.

use std::collections::BTreeMap;
use std::sync::Arc;

use opentelemetry::metrics::MeterProvider as _;
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData, ResourceMetrics};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use runlet::runtime::Runtime;
use runlet::scripted::ScriptedExecutor;

use super::examples::{example, inputs, registry};

/// Every data point of the export: (instrument, its attributes as `key=value` text) → the
/// sum's value or the histogram's count.
fn points(exported: &[ResourceMetrics]) -> BTreeMap<(String, String), f64> {
    let mut points = BTreeMap::new();
    for metric in exported.iter().flat_map(|r| r.scope_metrics()).flat_map(|s| s.metrics()) {
        let text = |attributes: &mut dyn Iterator<Item = &opentelemetry::KeyValue>| {
            let mut pairs: Vec<String> = attributes.map(|kv| format!("{}={}", kv.key, kv.value)).collect();
            pairs.sort();
            pairs.join(",")
        };
        let mut add = |attributes: String, value: f64| {
            *points.entry((metric.name().to_owned(), attributes)).or_insert(0.0) += value;
        };
        match metric.data() {
            AggregatedMetrics::U64(MetricData::Sum(sum)) => {
                sum.data_points().for_each(|p| add(text(&mut p.attributes()), p.value() as f64))
            }
            AggregatedMetrics::I64(MetricData::Sum(sum)) => {
                sum.data_points().for_each(|p| add(text(&mut p.attributes()), p.value() as f64))
            }
            AggregatedMetrics::F64(MetricData::Histogram(histogram)) => {
                histogram.data_points().for_each(|p| add(text(&mut p.attributes()), p.count() as f64))
            }
            other => panic!("{}: an instrument of an unexpected kind: {other:?}", metric.name()),
        }
    }
    points
}

#[test]
fn a_run_counts_its_calls_retries_nodes_and_appends() {
    let exporter = InMemoryMetricExporter::default();
    let provider =
        SdkMeterProvider::builder().with_reader(PeriodicReader::builder(exporter.clone()).build()).build();
    let tools = ScriptedExecutor::from_json_str(&example("appendix-a", "tools-orders-failing.json"))
        .expect("fixtures");
    let runtime = Runtime::builder()
        .registry(registry(&example("appendix-a", "registry.json")))
        .executor(Arc::new(tools))
        .meter(provider.meter("runlet"))
        .build()
        .expect("runtime");
    let inputs = inputs(&example("appendix-a", "inputs.json"));
    let program = runtime.compile(&example("appendix-a", "main.run"), &inputs).expect("compiles");
    runtime.start(&program, &inputs).expect("starts").wait().expect("the journal works");
    provider.force_flush().expect("flushed");
    let points = points(&exporter.get_finished_metrics().expect("exported"));
    let at = |name: &str, attributes: &str| points.get(&(name.to_owned(), attributes.to_owned())).copied();

    let calls = |tool: &str, outcome: &str| {
        at("runlet.tool.calls", &format!("gen_ai.tool.name={tool},runlet.outcome={outcome}"))
    };
    assert_eq!(calls("shop.orders", "error"), Some(3.0), "{points:#?}");
    assert_eq!(calls("crm.customer", "ok"), Some(1.0));
    assert_eq!(calls("ai.summarize", "ok"), Some(1.0), "the catch arm's summary");
    assert_eq!(
        at("runlet.tool.duration", "gen_ai.tool.name=shop.orders"),
        Some(3.0),
        "one duration per dispatch"
    );
    assert_eq!(at("runlet.boundary.retries", ""), Some(2.0));
    assert_eq!(at("runlet.calls.running", ""), Some(0.0), "every call ended");
    assert!(at("runlet.graph.nodes", "").is_some_and(|n| n > 10.0), "{points:#?}");
    assert!(at("runlet.journal.append.duration", "").is_some_and(|n| n >= 1.0));
    assert!(
        points.keys().all(|(_, attributes)| !attributes.contains("runlet.run.id")),
        "no per-run attribute"
    );
}
