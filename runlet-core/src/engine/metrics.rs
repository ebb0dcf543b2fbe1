//! The runtime's metrics (spec §6.2) through the OpenTelemetry meter API: counters and
//! histograms a host's meter provider exports, with no per-run attribute (a tool's name and
//! an outcome at most), so their cardinality stays that of the registry. The core sets up no
//! provider: without one every instrument is a no-op.
//!
//! | instrument | kind | unit | attributes |
//! |---|---|---|---|
//! | `runlet.tool.calls` | counter | `{call}` | `gen_ai.tool.name`, `runlet.outcome` (`ok`, `error`) |
//! | `runlet.tool.duration` | histogram | `s` | `gen_ai.tool.name` |
//! | `runlet.calls.running` | up-down counter | `{call}` | |
//! | `runlet.calls.waiting` | up-down counter | `{call}` | calls ready and waiting for permits |
//! | `runlet.calls.queue.duration` | histogram | `s` | how long a ready call waited for permits |
//! | `runlet.boundary.retries` | counter | `{retry}` | |
//! | `runlet.nodes.cancelled` | counter | `{node}` | |
//! | `runlet.graph.nodes` | counter | `{node}` | nodes materialised (the graph's expansion) |
//! | `runlet.journal.append.duration` | histogram | `s` | |
//! | `runlet.blob.bytes` | counter | `By` | bytes of values stored as blobs |

use std::sync::Arc;
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Counter, Histogram, Meter, UpDownCounter};

use super::event::Event;

/// The instruments of one runtime, made from the meter it was built with.
#[derive(Debug, Clone)]
pub struct Metrics {
    calls: Counter<u64>,
    call_duration: Histogram<f64>,
    running: UpDownCounter<i64>,
    waiting: UpDownCounter<i64>,
    queue_duration: Histogram<f64>,
    retries: Counter<u64>,
    cancelled: Counter<u64>,
    nodes: Counter<u64>,
    append_duration: Histogram<f64>,
    blob_bytes: Counter<u64>,
}

impl Metrics {
    /// The instruments of `meter`.
    pub fn new(meter: &Meter) -> Metrics {
        let seconds = |name: &'static str, description: &'static str| {
            meter.f64_histogram(name).with_unit("s").with_description(description).build()
        };
        let count = |name: &'static str, unit: &'static str, description: &'static str| {
            meter.u64_counter(name).with_unit(unit).with_description(description).build()
        };
        let gauge = |name: &'static str, description: &'static str| {
            meter.i64_up_down_counter(name).with_unit("{call}").with_description(description).build()
        };
        Metrics {
            calls: count("runlet.tool.calls", "{call}", "Tool dispatches that ended, by tool and outcome"),
            call_duration: seconds("runlet.tool.duration", "How long a tool dispatch took"),
            running: gauge("runlet.calls.running", "Tool calls being dispatched"),
            waiting: gauge("runlet.calls.waiting", "Ready tool calls waiting for permits"),
            queue_duration: seconds(
                "runlet.calls.queue.duration",
                "How long a ready call waited for permits",
            ),
            retries: count("runlet.boundary.retries", "{retry}", "Boundary retries scheduled"),
            cancelled: count("runlet.nodes.cancelled", "{node}", "Nodes cancelled"),
            nodes: count("runlet.graph.nodes", "{node}", "Nodes materialised"),
            append_duration: seconds("runlet.journal.append.duration", "How long a journal append took"),
            blob_bytes: count("runlet.blob.bytes", "By", "Bytes of values stored as blobs"),
        }
    }

    /// The instruments of the global meter provider's `runlet` meter, as it is now (a provider
    /// set later does not reach them).
    pub fn global() -> Metrics {
        Metrics::new(&opentelemetry::global::meter("runlet"))
    }

    /// A call of `tool` was handed to its executor.
    pub(crate) fn call_started(&self) {
        self.running.add(1, &[]);
    }

    /// A call of `tool` ended after `took`, `ok` or not.
    pub(crate) fn call_ended(&self, tool: &Arc<str>, took: Duration, ok: bool) {
        self.running.add(-1, &[]);
        let name = KeyValue::new("gen_ai.tool.name", Arc::clone(tool));
        self.call_duration.record(took.as_secs_f64(), std::slice::from_ref(&name));
        self.calls.add(1, &[name, KeyValue::new("runlet.outcome", if ok { "ok" } else { "error" })]);
    }

    /// A ready call began waiting for permits.
    pub(crate) fn permits_awaited(&self) {
        self.waiting.add(1, &[]);
    }

    /// A call that waited `waited` for permits stopped waiting (granted or withdrawn).
    pub(crate) fn permits_settled(&self, waited: Duration) {
        self.waiting.add(-1, &[]);
        self.queue_duration.record(waited.as_secs_f64(), &[]);
    }

    /// A journal append of `blob_bytes` bytes of blobs took `took`.
    pub(crate) fn appended(&self, took: Duration, blob_bytes: usize) {
        self.append_duration.record(took.as_secs_f64(), &[]);
        if blob_bytes > 0 {
            self.blob_bytes.add(blob_bytes as u64, &[]);
        }
    }

    /// Counts what a committed batch of `events` did to the graph.
    pub(crate) fn committed(&self, events: &[Event]) {
        let (mut planned, mut retries, mut cancelled) = (0, 0, 0);
        for event in events {
            match event {
                Event::NodePlanned { .. } => planned += 1,
                Event::BoundaryRetryScheduled { .. } => retries += 1,
                Event::NodeCancelled { .. } => cancelled += 1,
                _ => {}
            }
        }
        for (counter, n) in [(&self.nodes, planned), (&self.retries, retries), (&self.cancelled, cancelled)] {
            if n > 0 {
                counter.add(n, &[]);
            }
        }
    }
}
