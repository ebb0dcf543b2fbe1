//! An OTLP/HTTP receiver for the command's tests: it listens on a free 127.0.0.1 port, answers
//! every export with 200, and reads back the spans and metric names it took, from protobuf or
//! JSON bodies alike. Each test binary that includes it uses a part.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message;

/// One request the receiver took: its path, content type and body.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    pub content_type: String,
    pub body: Vec<u8>,
}

/// One exported span: its trace id, span id and parent span id in hex, and its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    pub trace_id: String,
    pub span_id: String,
    pub parent_span_id: String,
    pub name: String,
}

/// What an export held besides spans: the resources' service names and the metrics' names.
#[derive(Debug, Default)]
pub struct Exported {
    pub spans: Vec<Span>,
    pub services: Vec<String>,
    pub metrics: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Receiver {
    address: SocketAddr,
    inbox: Arc<Mutex<Vec<Received>>>,
}

impl Receiver {
    /// Starts a receiver on its own thread, for as long as the test runs.
    pub fn start() -> Receiver {
        let inbox: Arc<Mutex<Vec<Received>>> = Arc::default();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        listener.set_nonblocking(true).expect("non-blocking");
        let address = listener.local_addr().expect("address");
        let kept = Arc::clone(&inbox);
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio");
            runtime.block_on(async move {
                let app = axum::Router::new().fallback(take).with_state(kept);
                let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
                axum::serve(listener, app).await.expect("serve");
            });
        });
        Receiver { address, inbox }
    }

    /// The base URL for `OTEL_EXPORTER_OTLP_ENDPOINT`.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Every request taken at `path` so far.
    pub fn received(&self, path: &str) -> Vec<Received> {
        self.inbox.lock().unwrap().iter().filter(|r| r.path == path).cloned().collect()
    }

    /// The spans, services and metric names of every export so far, decoded by content type.
    pub fn exported(&self) -> Exported {
        let mut exported = Exported::default();
        for request in self.received("/v1/traces") {
            match request.content_type.as_str() {
                "application/x-protobuf" => {
                    let decoded =
                        ExportTraceServiceRequest::decode(request.body.as_slice()).expect("OTLP protobuf");
                    for resource in decoded.resource_spans {
                        let attributes = resource.resource.iter().flat_map(|r| r.attributes.iter());
                        for attribute in attributes.filter(|a| a.key == "service.name") {
                            exported.services.push(format!("{:?}", attribute.value));
                        }
                        for span in resource.scope_spans.into_iter().flat_map(|s| s.spans) {
                            exported.spans.push(Span {
                                trace_id: hex(&span.trace_id),
                                span_id: hex(&span.span_id),
                                parent_span_id: hex(&span.parent_span_id),
                                name: span.name,
                            });
                        }
                    }
                }
                "application/json" => {
                    // OTLP/JSON: ids are hex strings, fields as the protobuf JSON mapping names them.
                    let json: serde_json::Value = serde_json::from_slice(&request.body).expect("OTLP JSON");
                    for resource in json["resourceSpans"].as_array().into_iter().flatten() {
                        for attribute in resource["resource"]["attributes"].as_array().into_iter().flatten() {
                            if attribute["key"] == "service.name" {
                                exported.services.push(attribute["value"].to_string());
                            }
                        }
                        let scopes = resource["scopeSpans"].as_array().into_iter().flatten();
                        for span in scopes.flat_map(|s| s["spans"].as_array().into_iter().flatten()) {
                            let text = |key: &str| span[key].as_str().unwrap_or_default().to_owned();
                            exported.spans.push(Span {
                                trace_id: text("traceId"),
                                span_id: text("spanId"),
                                parent_span_id: text("parentSpanId"),
                                name: text("name"),
                            });
                        }
                    }
                }
                other => panic!("an export of content type {other:?}"),
            }
        }
        for request in self.received("/v1/metrics") {
            if request.content_type == "application/x-protobuf" {
                let decoded =
                    ExportMetricsServiceRequest::decode(request.body.as_slice()).expect("OTLP protobuf");
                let scopes = decoded.resource_metrics.into_iter().flat_map(|r| r.scope_metrics);
                exported.metrics.extend(scopes.flat_map(|s| s.metrics).map(|m| m.name));
            } else {
                let json: serde_json::Value = serde_json::from_slice(&request.body).expect("OTLP JSON");
                let resources = json["resourceMetrics"].as_array().into_iter().flatten();
                let scopes = resources.flat_map(|r| r["scopeMetrics"].as_array().into_iter().flatten());
                let metrics = scopes.flat_map(|s| s["metrics"].as_array().into_iter().flatten());
                exported.metrics.extend(metrics.map(|m| m["name"].as_str().unwrap_or_default().to_owned()));
            }
        }
        exported
    }
}

async fn take(
    State(inbox): State<Arc<Mutex<Vec<Received>>>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> &'static str {
    let content_type =
        headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    inbox.lock().unwrap().push(Received { path: uri.path().to_owned(), content_type, body: body.to_vec() });
    ""
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
