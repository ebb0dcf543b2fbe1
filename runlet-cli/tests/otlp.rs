//! `runlet run` exporting its run over OTLP/HTTP (INTERFACES.md §4.5) to a receiver this test
//! starts on 127.0.0.1: `http/json` and `http/protobuf`, the trace a `TRACEPARENT` names, the
//! service name, the metrics, and a protocol it does not speak refused before anything runs.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message;

/// One request the receiver took: its path, content type and body.
#[derive(Debug, Clone)]
struct Received {
    path: String,
    content_type: String,
    body: Vec<u8>,
}

type Inbox = Arc<Mutex<Vec<Received>>>;

/// An OTLP/HTTP receiver on a free loopback port, answering every export with 200, for as long
/// as the test runs.
fn receiver() -> (SocketAddr, Inbox) {
    let inbox = Inbox::default();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    listener.set_nonblocking(true).expect("non-blocking");
    let address = listener.local_addr().expect("address");
    let kept = Arc::clone(&inbox);
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio");
        runtime.block_on(async move {
            async fn take(
                State(inbox): State<Inbox>,
                uri: Uri,
                headers: HeaderMap,
                body: Bytes,
            ) -> &'static str {
                let content_type =
                    headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
                inbox.lock().unwrap().push(Received {
                    path: uri.path().to_owned(),
                    content_type,
                    body: body.to_vec(),
                });
                ""
            }
            let app = axum::Router::new().fallback(take).with_state(kept);
            let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
            axum::serve(listener, app).await.expect("serve");
        });
    });
    (address, inbox)
}

fn example(file: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/appendix-a").join(file);
    path.to_str().expect("UTF-8 path").to_owned()
}

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";

/// Appendix A with `shop.orders` failing (retried twice, then caught), exported to `address`
/// over `protocol`, under the host span `TRACEPARENT` names.
fn traced_run(address: SocketAddr, protocol: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_runlet"))
        .args(["run", &example("main.run"), "--registry", &example("registry.json")])
        .args(["--tools", &example("tools-orders-failing.json"), "--inputs", &example("inputs.json")])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{address}"))
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
        .env("OTEL_SERVICE_NAME", "runlet-otlp-test")
        .env("TRACEPARENT", format!("00-{TRACE_ID}-00f067aa0ba902b7-01"))
        .output()
        .expect("run the runlet binary")
}

/// The exported spans: (trace id hex, name) of each, and the service name of each resource.
fn spans_of(requests: &[ExportTraceServiceRequest]) -> (Vec<(String, String)>, Vec<String>) {
    let mut spans = Vec::new();
    let mut services = Vec::new();
    for resource in requests.iter().flat_map(|r| &r.resource_spans) {
        let attributes = resource.resource.iter().flat_map(|r| &r.attributes);
        for attribute in attributes.filter(|a| a.key == "service.name") {
            services.push(format!("{:?}", attribute.value.as_ref().and_then(|v| v.value.as_ref())));
        }
        for span in resource.scope_spans.iter().flat_map(|s| &s.spans) {
            spans.push((hex(&span.trace_id), span.name.clone()));
        }
    }
    (spans, services)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn metric_names(requests: &[ExportMetricsServiceRequest]) -> Vec<String> {
    let resources = requests.iter().flat_map(|r| &r.resource_metrics);
    resources.flat_map(|r| &r.scope_metrics).flat_map(|s| &s.metrics).map(|m| m.name.clone()).collect()
}

fn assert_exported_run(spans: &[(String, String)], services: &[String], metrics: &[String]) {
    assert!(spans.iter().all(|(trace, _)| trace == TRACE_ID), "one trace, the TRACEPARENT's: {spans:?}");
    let count = |name: &str| spans.iter().filter(|(_, n)| n == name).count();
    assert_eq!(count("runlet.run"), 1, "{spans:?}");
    assert_eq!(count("runlet.session"), 1);
    assert_eq!(count("runlet.boundary.attempt"), 3, "retry 2");
    assert_eq!(count("execute_tool shop.orders"), 3);
    assert_eq!(
        count("runlet.dispatch"),
        spans.iter().filter(|(_, n)| n.starts_with("execute_tool ")).count()
    );
    assert!(services.iter().all(|s| s.contains("runlet-otlp-test")) && !services.is_empty(), "{services:?}");
    for name in ["runlet.tool.calls", "runlet.tool.duration", "runlet.boundary.retries"] {
        assert!(metrics.iter().any(|m| m == name), "{name} in {metrics:?}");
    }
}

fn received(inbox: &Inbox, path: &str) -> Vec<Received> {
    inbox.lock().unwrap().iter().filter(|r| r.path == path).cloned().collect()
}

#[test]
fn a_run_is_exported_over_otlp_http_protobuf() {
    let (address, inbox) = receiver();
    let output = traced_run(address, "http/protobuf");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let traces = received(&inbox, "/v1/traces");
    assert!(traces.iter().all(|r| r.content_type == "application/x-protobuf"), "{traces:?}");
    let decoded: Vec<ExportTraceServiceRequest> = traces
        .iter()
        .map(|r| ExportTraceServiceRequest::decode(r.body.as_slice()).expect("OTLP protobuf"))
        .collect();
    let metrics: Vec<ExportMetricsServiceRequest> = received(&inbox, "/v1/metrics")
        .iter()
        .map(|r| ExportMetricsServiceRequest::decode(r.body.as_slice()).expect("OTLP protobuf"))
        .collect();
    let (spans, services) = spans_of(&decoded);
    assert_exported_run(&spans, &services, &metric_names(&metrics));
}

#[test]
fn a_run_is_exported_over_otlp_http_json() {
    let (address, inbox) = receiver();
    let output = traced_run(address, "http/json");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let traces = received(&inbox, "/v1/traces");
    assert!(!traces.is_empty() && traces.iter().all(|r| r.content_type == "application/json"), "{traces:?}");
    // OTLP/JSON: ids are hex strings, enums and field names as the protobuf JSON mapping says.
    let mut spans = Vec::new();
    let mut services = Vec::new();
    for request in &traces {
        let json: serde_json::Value = serde_json::from_slice(&request.body).expect("OTLP JSON");
        for resource in json["resourceSpans"].as_array().expect("resourceSpans") {
            for attribute in resource["resource"]["attributes"].as_array().into_iter().flatten() {
                if attribute["key"] == "service.name" {
                    services.push(attribute["value"].to_string());
                }
            }
            for scope in resource["scopeSpans"].as_array().into_iter().flatten() {
                for span in scope["spans"].as_array().into_iter().flatten() {
                    let trace = span["traceId"].as_str().expect("a hex trace id").to_owned();
                    spans.push((trace, span["name"].as_str().expect("a name").to_owned()));
                }
            }
        }
    }
    let mut metrics = Vec::new();
    for request in received(&inbox, "/v1/metrics") {
        let json: serde_json::Value = serde_json::from_slice(&request.body).expect("OTLP JSON");
        for resource in json["resourceMetrics"].as_array().into_iter().flatten() {
            for scope in resource["scopeMetrics"].as_array().into_iter().flatten() {
                for metric in scope["metrics"].as_array().into_iter().flatten() {
                    metrics.push(metric["name"].as_str().expect("a name").to_owned());
                }
            }
        }
    }
    assert_exported_run(&spans, &services, &metrics);
}

#[test]
fn an_unsupported_protocol_and_a_bad_traceparent_are_refused() {
    let output = Command::new(env!("CARGO_BIN_EXE_runlet"))
        .args(["run", &example("main.run"), "--registry", &example("registry.json")])
        .args(["--tools", &example("tools.json"), "--inputs", &example("inputs.json")])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        .output()
        .expect("run the runlet binary");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("OTEL_EXPORTER_OTLP_PROTOCOL=\"grpc\" is not supported"), "{stderr}");

    let output = Command::new(env!("CARGO_BIN_EXE_runlet"))
        .args(["run", &example("main.run"), "--registry", &example("registry.json")])
        .args(["--tools", &example("tools.json"), "--inputs", &example("inputs.json")])
        .env("TRACEPARENT", "not-a-traceparent")
        .output()
        .expect("run the runlet binary");
    assert_ne!(output.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("RL8107"), "{stderr}");
}
