//! `runlet run` exporting its run over OTLP/HTTP (INTERFACES.md §4.5) to a receiver this test
//! starts on 127.0.0.1: `http/protobuf` and `http/json`, the trace a `TRACEPARENT` names, the
//! service name, the metrics, and a protocol it does not speak refused before anything runs.

#[path = "receiver/mod.rs"]
mod receiver;

use std::path::PathBuf;
use std::process::{Command, Output};

use receiver::{Exported, Receiver};

fn example(file: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/appendix-a").join(file);
    path.to_str().expect("UTF-8 path").to_owned()
}

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const HOST_SPAN: &str = "00f067aa0ba902b7";

/// Appendix A with `shop.orders` failing (retried twice, then caught), exported to `receiver`
/// over `protocol`, under the host span `TRACEPARENT` names.
fn traced_run(receiver: &Receiver, protocol: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_runlet"))
        .args(["run", &example("main.run"), "--registry", &example("registry.json")])
        .args(["--tools", &example("tools-orders-failing.json"), "--inputs", &example("inputs.json")])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
        .env("OTEL_SERVICE_NAME", "runlet-otlp-test")
        .env("TRACEPARENT", format!("00-{TRACE_ID}-{HOST_SPAN}-01"))
        .output()
        .expect("run the runlet binary")
}

fn assert_exported_run(exported: &Exported) {
    let spans = &exported.spans;
    assert!(spans.iter().all(|s| s.trace_id == TRACE_ID), "one trace, the TRACEPARENT's: {spans:?}");
    let named = |name: &str| spans.iter().filter(|s| s.name == name).collect::<Vec<_>>();
    let [anchor] = named("runlet.run")[..] else { panic!("one anchor: {spans:?}") };
    assert_eq!(anchor.parent_span_id, HOST_SPAN, "the run is a child of the host's span");
    let [session] = named("runlet.session")[..] else { panic!("one session: {spans:?}") };
    assert_eq!(session.parent_span_id, anchor.span_id);
    let attempts = named("runlet.boundary.attempt");
    assert_eq!(attempts.len(), 3, "retry 2");
    let orders = named("execute_tool shop.orders");
    assert_eq!(orders.len(), 3);
    for order in orders {
        assert!(attempts.iter().any(|a| a.span_id == order.parent_span_id), "each under its attempt");
    }
    let calls = spans.iter().filter(|s| s.name.starts_with("execute_tool ")).count();
    assert_eq!(named("runlet.dispatch").len(), calls);
    assert!(
        !exported.services.is_empty() && exported.services.iter().all(|s| s.contains("runlet-otlp-test")),
        "{:?}",
        exported.services
    );
    for name in ["runlet.tool.calls", "runlet.tool.duration", "runlet.boundary.retries"] {
        assert!(exported.metrics.iter().any(|m| m == name), "{name} in {:?}", exported.metrics);
    }
}

/// Runs the traced run over `protocol` and checks every export came as `content_type`.
fn exported_over(protocol: &str, content_type: &str) -> Exported {
    let receiver = Receiver::start();
    let output = traced_run(&receiver, protocol);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let traces = receiver.received("/v1/traces");
    assert!(!traces.is_empty() && traces.iter().all(|r| r.content_type == content_type), "{traces:?}");
    receiver.exported()
}

#[test]
fn a_run_is_exported_over_otlp_http_protobuf() {
    assert_exported_run(&exported_over("http/protobuf", "application/x-protobuf"));
}

#[test]
fn a_run_is_exported_over_otlp_http_json() {
    assert_exported_run(&exported_over("http/json", "application/json"));
}

#[test]
fn an_unsupported_protocol_and_a_bad_traceparent_are_refused() {
    let appendix = |command: &mut Command| {
        command
            .args(["run", &example("main.run"), "--registry", &example("registry.json")])
            .args(["--tools", &example("tools.json"), "--inputs", &example("inputs.json")])
            .output()
            .expect("run the runlet binary")
    };
    let output = appendix(
        Command::new(env!("CARGO_BIN_EXE_runlet"))
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
            .env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
    );
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("OTEL_EXPORTER_OTLP_PROTOCOL=\"grpc\" is not supported"), "{stderr}");

    let output = appendix(Command::new(env!("CARGO_BIN_EXE_runlet")).env("TRACEPARENT", "not-a-traceparent"));
    assert_eq!(output.status.code(), Some(2), "refused before the run starts, as bad input is");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("RL8107"), "{stderr}");
}

/// A loop of 3,000 calls ends 6,000 call and dispatch spans within a moment: every one is
/// exported, where the SDK's default queue of 2,048 dropped most of them.
#[test]
fn a_long_loop_s_spans_are_all_exported() {
    let scratch = std::env::temp_dir().join(format!("runlet-otlp-loop-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("scratch dir");
    let file = |name: &str, text: &str| {
        let path = scratch.join(name);
        std::fs::write(&path, text).expect("writes");
        path.to_str().expect("UTF-8 path").to_owned()
    };
    let program = file(
        "loop.run",
        "xs = list.range(0, 3000)\nys = for x in xs limit 64 { return t.echo(x) }\nreturn list.length(ys)\n",
    );
    let registry = file(
        "registry.json",
        r#"{"prelude": "standard", "tools": [{"name": "t.echo", "params": [{"name": "x", "schema": {"type": "integer"}}], "outputSchema": {"type": "integer"}, "execution": "pure"}]}"#,
    );
    let tools = file("tools.json", r#"{"t.echo": [{"result": 1, "times": 3000}]}"#);
    let receiver = Receiver::start();
    let output = Command::new(env!("CARGO_BIN_EXE_runlet"))
        .args(["run", &program, "--registry", &registry, "--tools", &tools])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
        .env_remove("OTEL_BSP_MAX_QUEUE_SIZE")
        .output()
        .expect("run the runlet binary");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let _ = std::fs::remove_dir_all(&scratch);
    let spans = receiver.exported().spans;
    let count = |name: &str| spans.iter().filter(|s| s.name == name).count();
    let names: std::collections::BTreeSet<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        (count("execute_tool t.echo"), count("runlet.dispatch")),
        (3000, 3000),
        "{names:?} {}",
        spans.len()
    );
}
