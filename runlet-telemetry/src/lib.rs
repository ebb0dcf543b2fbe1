//! OpenTelemetry export for the applications that run Runlet: the `runlet` command, and the C
//! library built with its `otlp` feature. Runlet's core only emits `tracing` spans and records
//! metrics through the OpenTelemetry API; exporting them is the application's choice, made here
//! from the standard variables and nothing else:
//!
//! - `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`): where to send; when
//!   neither is set, nothing is set up and nothing is exported.
//! - `OTEL_EXPORTER_OTLP_PROTOCOL`: `http/protobuf` (the default) or `http/json`.
//! - `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_EXPORTER_OTLP_HEADERS`,
//!   `OTEL_EXPORTER_OTLP_TIMEOUT` and the rest of the OTLP exporter's variables, as the
//!   OpenTelemetry SDK reads them.
//!
//! Spans go through a batch processor (whose queue holds 65,536 ended spans unless
//! `OTEL_BSP_MAX_QUEUE_SIZE` says otherwise) and metrics through a periodic reader, each on its own
//! thread; [`Telemetry::flush`] sends what is pending, and dropping the [`Telemetry`] flushes and
//! shuts both down.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{BatchConfigBuilder, BatchSpanProcessor, SdkTracerProvider};
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;

const ENDPOINT: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";
const TRACES_ENDPOINT: &str = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT";
const PROTOCOL: &str = "OTEL_EXPORTER_OTLP_PROTOCOL";
const SERVICE_NAME: &str = "OTEL_SERVICE_NAME";
const QUEUE_SIZE: &str = "OTEL_BSP_MAX_QUEUE_SIZE";

/// How many ended spans wait for export before the batch processor drops more.
const SPAN_QUEUE: usize = 1 << 16;

/// Why export could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    #[error(
        "{PROTOCOL}={0:?} is not supported: Runlet exports over OTLP/HTTP, `http/protobuf` or `http/json`"
    )]
    Protocol(String),
    #[error("the OTLP {signal} exporter cannot be built: {reason}")]
    Exporter { signal: &'static str, reason: String },
    #[error(
        "the process has a tracing subscriber already, so Runlet's spans cannot be exported through its own"
    )]
    SubscriberTaken,
}

/// The exporting providers of a process; export stops when it is dropped.
#[derive(Debug)]
pub struct Telemetry {
    traces: SdkTracerProvider,
    metrics: SdkMeterProvider,
}

impl Telemetry {
    /// Sets up export from the `OTEL_*` variables and installs it for the whole process: the
    /// global `tracing` subscriber (Runlet's spans, `runlet*` targets at `INFO` and above) and
    /// the global meter provider. `None` when no endpoint is set. `default_service` names the
    /// service when `OTEL_SERVICE_NAME` does not.
    pub fn install_from_env(default_service: &str) -> Result<Option<Telemetry>, TelemetryError> {
        let set = |name: &str| std::env::var_os(name).is_some_and(|value| !value.is_empty());
        if !set(ENDPOINT) && !set(TRACES_ENDPOINT) {
            return Ok(None);
        }
        let protocol = match std::env::var(PROTOCOL).unwrap_or_default().trim() {
            "" | "http/protobuf" => Protocol::HttpBinary,
            "http/json" => Protocol::HttpJson,
            other => return Err(TelemetryError::Protocol(other.to_owned())),
        };
        let resource = match set(SERVICE_NAME) {
            true => Resource::builder().build(),
            false => Resource::builder().with_service_name(default_service.to_owned()).build(),
        };
        let spans =
            opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_protocol(protocol)
                .build()
                .map_err(|error| TelemetryError::Exporter { signal: "trace", reason: error.to_string() })?;
        // The SDK's queue of 2,048 ended spans drops, silently, most of a long loop's (two spans
        // a call); this one holds a burst of 32,768 calls' unless the variable says otherwise.
        let mut batch = BatchConfigBuilder::default();
        if !set(QUEUE_SIZE) {
            batch = batch.with_max_queue_size(SPAN_QUEUE);
        }
        let processor = BatchSpanProcessor::builder(spans).with_batch_config(batch.build()).build();
        let traces = SdkTracerProvider::builder()
            .with_resource(resource.clone())
            .with_span_processor(processor)
            .build();
        let points = opentelemetry_otlp::MetricExporter::builder()
            .with_http()
            .with_protocol(protocol)
            .build()
            .map_err(|error| TelemetryError::Exporter { signal: "metrics", reason: error.to_string() })?;
        let metrics = SdkMeterProvider::builder()
            .with_resource(resource)
            .with_reader(PeriodicReader::builder(points).build())
            .build();

        let tracer = traces.tracer("runlet");
        let subscriber = tracing_subscriber::registry()
            .with(Targets::new().with_target("runlet", tracing::Level::INFO))
            .with(tracing_opentelemetry::layer().with_tracer(tracer));
        tracing::subscriber::set_global_default(subscriber).map_err(|_| TelemetryError::SubscriberTaken)?;
        opentelemetry::global::set_meter_provider(metrics.clone());
        Ok(Some(Telemetry { traces, metrics }))
    }

    /// Sends every span that has ended and the metrics so far, blocking until the exporters
    /// answer (or time out).
    pub fn flush(&self) {
        // An exporter that cannot reach its endpoint has nothing to tell the run.
        let _ = self.traces.force_flush();
        let _ = self.metrics.force_flush();
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        let _ = self.traces.shutdown();
        let _ = self.metrics.shutdown();
    }
}
