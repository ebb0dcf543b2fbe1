//! End to end through the `runlet` binary against real MCP servers started locally (INTERFACES.md
//! §4.2): the filesystem, memory and everything reference servers over stdio, and the Python lab
//! server over Streamable HTTP and stdio. Parallel calls to one server and to several, failing
//! tools, a server dying mid-run, cancellation reaching the server, progress, the run's deadline,
//! output schemas, `_meta`, fixtures beside servers, registry overrides and configuration files.

#[path = "receiver/mod.rs"]
mod receiver;
#[path = "../../tests/mcp-servers/support.rs"]
mod support;

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};
use support::{scratch, servers};

fn runlet(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_runlet")).args(args).output().expect("run the runlet binary")
}

/// Runs `source` with `args` and returns the JSON report and stderr.
fn run(dir: &Path, source: &str, args: &[&str]) -> (Value, String) {
    let program = dir.join("main.run");
    std::fs::write(&program, source).expect("write the program");
    let mut all = vec!["run", program.to_str().expect("UTF-8"), "--format", "json"];
    all.extend_from_slice(args);
    let output = runlet(&all);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let report = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!("not a JSON report ({e}): {}\n{stderr}", String::from_utf8_lossy(&output.stdout))
    });
    (report, stderr)
}

/// The registry `runlet tools ARGS --format json` prints.
fn registry_of(args: &[&str]) -> Value {
    let mut all = vec!["tools", "--format", "json"];
    all.extend_from_slice(args);
    let output = runlet(&all);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("a registry file")
}

fn flag(name: &str, command: &str) -> String {
    format!("{name}={command}")
}

/// The kinds and tools of the events in `path`, in order.
fn events(path: &Path) -> Vec<(String, String)> {
    std::fs::read_to_string(path)
        .expect("events written")
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("an event"))
        .map(|event| {
            (
                event["kind"].as_str().unwrap_or_default().to_owned(),
                event["tool"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// Whether all `calls` calls of `tool` were dispatched before any of them completed.
fn all_in_flight_together(events: &[(String, String)], tool: &str, calls: usize) -> bool {
    let of_tool: Vec<&str> = events
        .iter()
        .filter(|(kind, t)| t == tool && (kind == "CallDispatchPrepared" || kind == "CallCompleted"))
        .map(|(kind, _)| kind.as_str())
        .collect();
    let prepared = of_tool.iter().take_while(|kind| **kind == "CallDispatchPrepared").count();
    prepared == calls && of_tool.len() == 2 * calls
}

#[test]
fn the_registry_of_the_reference_servers_names_every_tool_and_server() {
    let s = servers();
    let dir = scratch("tools");
    let fs = flag("fs", &format!("{} {}", s.reference("filesystem"), dir.display()));
    let memory = flag("memory", &s.memory(&dir.join("memory.jsonl")));
    let everything = flag("everything", &s.reference("everything"));
    let registry = registry_of(&["--mcp", &fs, "--mcp", &memory, "--mcp", &everything]);
    let names: Vec<&str> =
        registry["tools"].as_array().expect("tools").iter().filter_map(|t| t["name"].as_str()).collect();
    for name in [
        "fs.read_text_file",
        "memory.create_entities",
        "everything.get_sum",
        "everything.trigger_long_running_operation",
    ] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    assert!(names.iter().all(|name| !name.contains('-')), "{names:?}");
    for (server, implementation) in [("fs", "secure-filesystem-server"), ("memory", "memory-server")] {
        let record = &registry["mcp_servers"][server];
        assert_eq!(record["protocol_version"], "2025-11-25", "{record}");
        assert_eq!(record["implementation"]["name"], implementation, "{record}");
    }
    // Untrusted servers' annotations are not believed; trusted ones' are.
    let class = |registry: &Value, name: &str| {
        registry["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .map(|t| t["execution"].clone())
    };
    assert_eq!(class(&registry, "fs.read_text_file"), Some(json!("unsafe")));
    let trusted = registry_of(&["--mcp", &fs, "--mcp-trust", "fs", "--mcp-default-class", "at-most-once"]);
    assert_eq!(class(&trusted, "fs.read_text_file"), Some(json!("pure")));
    assert_eq!(class(&trusted, "fs.move_file"), Some(json!("at_most_once")));
    // A host registry overrides what it names and adds its own tools.
    let host = dir.join("registry.json");
    std::fs::write(&host, r#"{"tools": [{"name": "fs.move_file", "execution": "idempotent"}]}"#).unwrap();
    let overridden = registry_of(&["--mcp", &fs, "--registry", host.to_str().unwrap(), "--mcp-trust", "fs"]);
    assert_eq!(class(&overridden, "fs.move_file"), Some(json!("idempotent")));
    // The printed registry loads as a registry file of its own.
    let saved = dir.join("saved.json");
    std::fs::write(&saved, serde_json::to_string(&registry).unwrap()).unwrap();
    let reloaded = runlet(&["tools", "--registry", saved.to_str().unwrap()]);
    assert!(reloaded.status.success(), "{}", String::from_utf8_lossy(&reloaded.stderr));
}

#[test]
fn the_protocol_version_and_server_enter_the_registry_digest() {
    let s = servers();
    let dir = scratch("digest");
    let fs = flag("fs", &format!("{} {}", s.reference("filesystem"), dir.display()));
    let registry = registry_of(&["--mcp", &fs]);
    let digest_of = |registry: &Value| {
        let path = dir.join("r.json");
        std::fs::write(&path, registry.to_string()).unwrap();
        let text =
            String::from_utf8(runlet(&["tools", "--registry", path.to_str().unwrap()]).stdout).unwrap();
        text.lines().last().unwrap_or_default().to_owned()
    };
    let mut other_version = registry.clone();
    other_version["mcp_servers"]["fs"]["protocol_version"] = json!("2025-06-18");
    let mut other_server = registry.clone();
    other_server["mcp_servers"]["fs"]["implementation"]["version"] = json!("0.0.1");
    let digests = [digest_of(&registry), digest_of(&other_version), digest_of(&other_server)];
    assert!(digests[0].starts_with("digest sha256:"), "{digests:?}");
    assert!(digests[0] != digests[1] && digests[0] != digests[2] && digests[1] != digests[2], "{digests:?}");
    let mut malformed = registry.clone();
    malformed["mcp_servers"]["fs"]["protocol_version"] = json!(20251125);
    let path = dir.join("malformed.json");
    std::fs::write(&path, malformed.to_string()).unwrap();
    let output = runlet(&["tools", "--registry", path.to_str().unwrap(), "--format", "json"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("RL8002"),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
}

#[test]
fn files_are_read_concurrently_and_a_knowledge_graph_is_built_across_servers() {
    let s = servers();
    let dir = scratch("graph");
    for (name, text) in [
        ("ada.txt", "Ada wrote the first program"),
        ("alan.txt", "Alan broke Enigma"),
        ("grace.txt", "Grace built a compiler"),
    ] {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let fs = flag("fs", &format!("{} {}", s.reference("filesystem"), dir.display()));
    let memory = flag("memory", &s.memory(&dir.join("memory.jsonl")));
    let events_file = dir.join("events.jsonl");
    let source = format!(
        r#"names = ["ada", "alan", "grace"]
texts = for name in names {{
    return fs.read_text_file({{path: "{dir}/" + name + ".txt"}}).content
}}
made = memory.create_entities({{entities: for i in [0, 1, 2] {{
    return {{name: names[i], entityType: "person", observations: [texts[i]]}}
}}}})
graph = memory.search_nodes({{query: made.entities[0].name}})
return {{texts: texts, created: made, found: graph}}
"#,
        dir = dir.display()
    );
    let (report, stderr) =
        run(&dir, &source, &["--mcp", &fs, "--mcp", &memory, "--events", events_file.to_str().unwrap()]);
    assert_eq!(report["status"], "succeeded", "{report}\n{stderr}");
    assert_eq!(
        report["value"]["texts"],
        json!(["Ada wrote the first program", "Alan broke Enigma", "Grace built a compiler"])
    );
    let events = events(&events_file);
    assert!(all_in_flight_together(&events, "fs.read_text_file", 3), "{events:?}");
    let stored =
        std::fs::read_to_string(dir.join("memory.jsonl")).expect("the memory server wrote its graph");
    assert!(stored.contains("Alan broke Enigma"), "{stored}");
}

#[test]
fn calls_to_one_http_server_run_in_parallel_and_carry_runlet_ids() {
    let s = servers();
    let lab = s.lab_http();
    let dir = scratch("parallel");
    let events_file = dir.join("events.jsonl");
    let source = r#"sums = for n in [1, 2, 3, 4] {
    return lab.add({a: n, b: 10})
}
seen = lab.meta({})
return {sums: sums, seen: seen}
"#;
    let (report, stderr) =
        run(&dir, source, &["--mcp", &flag("lab", &lab.url), "--events", events_file.to_str().unwrap()]);
    assert_eq!(report["status"], "succeeded", "{report}\n{stderr}");
    assert_eq!(
        report["value"]["sums"],
        json!([{"result": 11}, {"result": 12}, {"result": 13}, {"result": 14}])
    );
    assert!(all_in_flight_together(&events(&events_file), "lab.add", 4));
    let seen = &report["value"]["seen"];
    let operation = seen["runlet.dev/operation_id"].as_str().expect("the operation id reached the server");
    let dispatch = seen["runlet.dev/dispatch_id"].as_str().expect("the dispatch id reached the server");
    assert_eq!(seen["runlet.dev/attempt"], 0, "outside any boundary: {seen}");
    let prepared = std::fs::read_to_string(&events_file).unwrap();
    assert!(prepared.contains(operation), "the journal names operation {operation}");
    assert_ne!(operation, dispatch);
}

/// With export on, the server is handed the `traceparent` of the call's dispatch span, in the
/// trace a `TRACEPARENT` names.
#[test]
fn a_server_gets_the_traceparent_of_its_dispatch() {
    const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
    let s = servers();
    let lab = s.lab_http();
    let dir = scratch("traceparent");
    let receiver = receiver::Receiver::start();
    let program = dir.join("main.run");
    std::fs::write(&program, "return lab.meta({})\n").expect("write the program");
    let output = Command::new(env!("CARGO_BIN_EXE_runlet"))
        .args(["run", program.to_str().expect("UTF-8"), "--format", "json", "--mcp", &flag("lab", &lab.url)])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .env("TRACEPARENT", format!("00-{TRACE_ID}-00f067aa0ba902b7-01"))
        .output()
        .expect("run the runlet binary");
    let report: Value = serde_json::from_slice(&output.stdout).expect("a JSON report");
    assert_eq!(report["status"], "succeeded", "{report}\n{}", String::from_utf8_lossy(&output.stderr));
    let traceparent = report["value"]["traceparent"].as_str().expect("the server got a traceparent");
    let parts: Vec<&str> = traceparent.split('-').collect();
    assert_eq!((parts.len(), parts[0], parts[1]), (4, "00", TRACE_ID), "{traceparent}");
    let spans = receiver.exported().spans;
    let dispatch = spans.iter().find(|s| s.span_id == parts[2]).expect("the span it names was exported");
    assert_eq!(dispatch.name, "runlet.dispatch", "{spans:?}");
}

#[test]
fn a_failing_tool_is_a_tool_failure_with_the_servers_text() {
    let s = servers();
    let lab = s.lab_http();
    let dir = scratch("is-error");
    let lab_flag = flag("lab", &lab.url);
    let (report, _) = run(&dir, "return lab.fail_({reason: \"the disk is full\"})\n", &["--mcp", &lab_flag]);
    assert_eq!(report["status"], "failed");
    assert_eq!(report["error"]["code"], "RL6113", "{report}");
    assert_eq!(report["error"]["tool"], "lab.fail_", "a reserved word gets `_`");
    assert_eq!(report["error"]["retryable"], false);
    assert!(report["error"]["message"].as_str().unwrap().contains("the disk is full"), "{report}");
    let caught =
        "r = boundary { return lab.fail_({reason: \"nope\"}) } catch err { return err.code }\nreturn r\n";
    let (report, _) = run(&dir, caught, &["--mcp", &lab_flag]);
    assert_eq!(report["value"], "RL6113", "{report}");
}

#[test]
fn outputs_are_checked_against_the_output_schema() {
    let s = servers();
    let lab = s.lab_http();
    let dir = scratch("output-schema");
    let (report, _) = run(&dir, "return lab.reading({city: \"Oslo\"})\n", &["--mcp", &flag("lab", &lab.url)]);
    assert_eq!(report["status"], "failed", "{report}");
    assert_eq!(report["error"]["code"], "TOOL_OUTPUT_SCHEMA_MISMATCH", "{report}");
    // Structured content that matches its schema is the value; text content is a String.
    let everything = flag("everything", &s.reference("everything"));
    let source = "return {weather: everything.get_structured_content({location: \"New York\"}), echo: everything.echo({message: \"hi\"})}\n";
    let (report, stderr) = run(&dir, source, &["--mcp", &everything]);
    assert_eq!(report["status"], "succeeded", "{report}\n{stderr}");
    assert!(report["value"]["weather"]["temperature"].is_number(), "{report}");
    assert_eq!(report["value"]["echo"], "Echo: hi");
}

#[test]
fn a_server_that_dies_mid_run_fails_its_call_and_is_retried_only_by_class() {
    let s = servers();
    let dir = scratch("dies");
    let lab = flag("lab", &s.lab("stdio"));
    let events_file = dir.join("events.jsonl");
    let events_arg = events_file.to_str().unwrap();
    let source = "r = boundary retry 2 { return lab.die({code: 3}) } catch err { return err }\nreturn r\n";
    let (report, stderr) = run(&dir, source, &["--mcp", &lab, "--events", events_arg]);
    let error = &report["value"];
    assert_eq!(error["code"], "RL6111", "{report}\n{stderr}");
    assert_eq!(error["uncertain"], true, "{report}");
    assert!(error["message"].as_str().unwrap().contains("exit status: 3"), "{report}");
    let prepared = |events: &[(String, String)]| {
        events.iter().filter(|(kind, _)| kind == "CallDispatchPrepared").count()
    };
    assert_eq!(prepared(&events(&events_file)), 1, "an unsafe tool is not sent again");
    // An idempotent tool (trusted annotations) is sent again; the server stays dead.
    let source = "r = boundary retry 2 { return lab.die_idempotently({code: 3}) } catch err { return err }\nreturn r\n";
    let (report, _) = run(&dir, source, &["--mcp", &lab, "--mcp-trust", "lab", "--events", events_arg]);
    assert_eq!(report["value"]["code"], "RL6111", "{report}");
    assert_eq!(prepared(&events(&events_file)), 3, "the initial attempt and two retries");
}

/// The tags of the lab server's cancelled calls, asked until `tag` is among them (bounded).
fn wait_for_cancelled(dir: &Path, lab: &str, tag: &str) -> Value {
    for _ in 0..100 {
        let (report, _) = run(dir, "return lab.cancelled_tags({})\n", &["--mcp", lab]);
        if report["value"]["result"].as_array().is_some_and(|tags| tags.iter().any(|t| t == tag)) {
            return report["value"]["result"].clone();
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("the server never saw the cancellation of `{tag}`");
}

#[test]
fn cancellation_and_the_runs_deadline_reach_the_server() {
    let s = servers();
    let lab = s.lab_http();
    let dir = scratch("cancel");
    let lab_flag = flag("lab", &lab.url);
    // A failing sibling cancels the slow call inside the boundary.
    let source = r#"r = boundary {
    slow = lab.slow({tag: "sibling", seconds: 60})
    failed = lab.fail_({reason: "stop"})
    return [slow, failed]
} catch err {
    return err.code
}
return r
"#;
    let (report, stderr) = run(&dir, source, &["--mcp", &lab_flag]);
    assert_eq!(report["value"], "RL6113", "{report}\n{stderr}");
    wait_for_cancelled(&dir, &lab_flag, "sibling");
    // The run's wall-clock limit ends a slow call, and the server is told.
    let (report, _) = run(
        &dir,
        "return lab.slow({tag: \"deadline\", seconds: 60})\n",
        &["--mcp", &lab_flag, "--limit", "wall_clock_ms=1500"],
    );
    assert_eq!(report["status"], "failed", "{report}");
    assert_eq!(report["error"]["details"]["limit"], "wall_clock_ms", "{report}");
    wait_for_cancelled(&dir, &lab_flag, "deadline");
}

/// The `CallHeartbeat` events of the events file at `path`: their tool, progress, total and
/// message.
fn heartbeats(path: &Path) -> Vec<(String, f64, f64, String)> {
    let text = std::fs::read_to_string(path).expect("events written");
    let events = text.lines().map(|line| serde_json::from_str::<Value>(line).expect("an event"));
    events
        .filter(|event| event["kind"] == "CallHeartbeat")
        .map(|event| {
            (
                event["tool"].as_str().unwrap_or_default().to_owned(),
                event["progress"].as_f64().unwrap_or(-1.0),
                event["total"].as_f64().unwrap_or(-1.0),
                event["message"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[test]
fn progress_notifications_are_journaled_as_heartbeats() {
    let s = servers();
    let dir = scratch("progress");
    let events = dir.join("events.jsonl");
    let lab = flag("lab", &s.lab("stdio"));
    let args = ["--mcp", lab.as_str(), "--events", events.to_str().expect("UTF-8")];
    let (report, stderr) = run(&dir, "return lab.steps({count: 3})\n", &args);
    assert_eq!(report["value"], json!({"result": "3 steps"}), "{report}\n{stderr}");
    let beats = heartbeats(&events);
    // Reports coalesce while the run is busy; the last one always reaches the journal.
    let last = beats.last().cloned().unwrap_or_else(|| panic!("no heartbeat: {stderr}"));
    assert_eq!(last, ("lab.steps".to_owned(), 3.0, 3.0, "step 3".to_owned()));
    assert!(beats.windows(2).all(|w| w[0].1 < w[1].1), "{beats:?}");
    let everything = flag("everything", &s.reference("everything"));
    let source = "return everything.trigger_long_running_operation({duration: 1, steps: 2})\n";
    let args = ["--mcp", everything.as_str(), "--events", events.to_str().expect("UTF-8")];
    let (report, stderr) = run(&dir, source, &args);
    assert_eq!(report["status"], "succeeded", "{report}\n{stderr}");
    let beats = heartbeats(&events);
    assert!(
        beats
            .iter()
            .any(|(tool, _, total, _)| tool == "everything.trigger_long_running_operation" && *total == 2.0),
        "{beats:?}"
    );
}

#[test]
fn fixtures_beside_servers_answer_the_tools_they_script_and_configuration_files_name_servers() {
    let s = servers();
    let dir = scratch("config");
    let memory_file = dir.join("memory.jsonl");
    let config = json!({"mcpServers": {
        "memory": {"command": s.reference("memory"), "env": {"MEMORY_FILE_PATH": memory_file.to_str().unwrap()}},
        "everything": {"command": s.reference("everything")}
    }});
    let config_path = dir.join("mcp.json");
    std::fs::write(&config_path, config.to_string()).unwrap();
    let fixtures = dir.join("tools.json");
    std::fs::write(&fixtures, r#"{"everything.get_sum": [{"result": 1000}]}"#).unwrap();
    let source = r#"made = memory.create_entities({entities: [{name: "Runlet", entityType: "language", observations: []}]})
sum = everything.get_sum({a: 1, b: 2})
echo = everything.echo({message: made.entities[0].name})
return {sum: sum, echo: echo}
"#;
    let (report, stderr) = run(
        &dir,
        source,
        &["--mcp-config", config_path.to_str().unwrap(), "--tools", fixtures.to_str().unwrap()],
    );
    assert_eq!(report["status"], "succeeded", "{report}\n{stderr}");
    assert_eq!(report["value"], json!({"sum": 1000, "echo": "Echo: Runlet"}));
    assert!(std::fs::read_to_string(&memory_file).unwrap().contains("Runlet"), "the env reached the server");
}

#[test]
fn bad_servers_are_usage_errors_with_codes() {
    let dir = scratch("bad");
    let (report, _) = run(&dir, "return 1\n", &["--mcp", "not-a-name=ls"]);
    assert_eq!(report["status"], "usage_error", "{report}");
    assert_eq!(report["diagnostics"][0]["code"], "RL8601", "{report}");
    let (report, _) = run(&dir, "return 1\n", &["--mcp", "ghost=/nonexistent/mcp-server"]);
    assert_eq!(report["diagnostics"][0]["code"], "RL8602", "{report}");
    assert!(
        report["diagnostics"][0]["message"].as_str().unwrap().contains("/nonexistent/mcp-server"),
        "{report}"
    );
    let (report, _) = run(&dir, "return 1\n", &["--mcp", "quiet=sh -c 'echo broken >&2; exit 7'"]);
    let message = report["diagnostics"][0]["message"].as_str().unwrap();
    assert!(message.contains("broken") && message.contains("exit status: 7"), "{report}");
    let (report, _) = run(&dir, "return 1\n", &[]);
    assert_eq!(report["diagnostics"][0]["code"], "RL8501", "{report}");
}

#[test]
fn check_sees_the_servers_tools() {
    let s = servers();
    let dir = scratch("check");
    let program = dir.join("main.run");
    std::fs::write(&program, "return everything.get_summ({a: 1, b: 2})\n").unwrap();
    let everything = flag("everything", &s.reference("everything"));
    let output = runlet(&["check", program.to_str().unwrap(), "--mcp", &everything, "--format", "json"]);
    assert_eq!(output.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let text = report.to_string();
    assert!(text.contains("get_sum"), "the candidate names the real tool: {text}");
}

#[test]
fn the_mcp_example_builds_its_knowledge_graph() {
    let s = servers();
    let dir = scratch("example");
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/mcp");
    let notes = example.join("notes").canonicalize().expect("the example's notes");
    let fs = flag("fs", &format!("{} {}", s.reference("filesystem"), notes.display()));
    let memory = flag("memory", &s.memory(&dir.join("memory.jsonl")));
    let input = format!("dir={}", json!(notes.to_str().unwrap()));
    let program = example.join("main.run");
    let output = runlet(&[
        "run",
        program.to_str().unwrap(),
        "--mcp",
        &fs,
        "--mcp",
        &memory,
        "--mcp-trust",
        "fs",
        "--input",
        &input,
        "--format",
        "json",
    ]);
    let report: Value = serde_json::from_slice(&output.stdout).expect("a report");
    assert_eq!(report["status"], "succeeded", "{report}\n{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(report["value"]["notes"].as_array().map(Vec::len), Some(3));
    let relations = &report["value"]["graph"]["relations"];
    assert_eq!(relations[1], json!({"from": "alan", "relationType": "inspired", "to": "grace"}), "{report}");
}

#[test]
fn a_killed_run_resumes_against_the_servers() {
    let s = servers();
    let lab = s.lab_http();
    let dir = scratch("resume");
    let lab_flag = flag("lab", &lab.url);
    let program = dir.join("main.run");
    std::fs::write(&program, "first = lab.add({a: 1, b: 2})\nlate = lab.slow({tag: \"resumed\", seconds: 1})\nreturn [first, late]\n")
        .unwrap();
    let registry = dir.join("registry.json");
    let classes = r#"{"tools": [{"name": "lab.slow", "execution": "idempotent"}, {"name": "lab.add", "execution": "pure"}]}"#;
    std::fs::write(&registry, classes).unwrap();
    let journal = format!("sqlite:{}", dir.join("runs.db").display());
    let events = dir.join("events.jsonl");
    let mut child = Command::new(env!("CARGO_BIN_EXE_runlet"))
        .args([
            "run",
            program.to_str().unwrap(),
            "--mcp",
            &lab_flag,
            "--registry",
            registry.to_str().unwrap(),
        ])
        .args(["--journal", &journal, "--events", events.to_str().unwrap(), "--format", "json"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("runlet run starts");
    let started = std::time::Instant::now();
    while !std::fs::read_to_string(&events).unwrap_or_default().lines().any(|line| {
        serde_json::from_str::<Value>(line)
            .is_ok_and(|e| e["kind"] == "CallDispatchPrepared" && e["tool"] == "lab.slow")
    }) {
        if let Ok(Some(status)) = child.try_wait() {
            let mut stderr = String::new();
            let _ = std::io::Read::read_to_string(child.stderr.as_mut().expect("piped"), &mut stderr);
            panic!("the run ended ({status}) before the slow call was dispatched:\n{stderr}");
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(60), "the slow call was never dispatched");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child.kill().expect("kill the run");
    let output = child.wait_with_output().expect("its output");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let run = stderr
        .lines()
        .next()
        .and_then(|line| line.strip_prefix("run "))
        .expect("the run id first")
        .to_owned();
    let resumed = runlet(&["resume", &run, "--journal", &journal, "--mcp", &lab_flag, "--format", "json"]);
    let report: Value = serde_json::from_slice(&resumed.stdout).expect("a report");
    assert_eq!(report["status"], "succeeded", "{report}\n{}", String::from_utf8_lossy(&resumed.stderr));
    assert_eq!(report["value"], json!([{"result": 3}, {"result": "resumed"}]));
}

/// `--mcp-silence-timeout MS` ends a call whose server goes silent on it (here it garbles its
/// answer, which the transport drops) with `RL6102`, where the run waited for ever.
#[test]
fn a_call_the_server_goes_silent_on_fails_at_the_silence_timeout() {
    let s = servers();
    let dir = scratch("silence");
    let rogue = flag("rogue", &s.rogue("garbled-result"));
    let args = ["--mcp", &rogue, "--mcp-silence-timeout", "600"];
    let (report, stderr) = run(&dir, "return rogue.echo({})\n", &args);
    assert_eq!(report["status"], "failed", "{report}\n{stderr}");
    assert_eq!(report["error"]["code"], "RL6102", "{report}");
    assert!(report["error"]["message"].as_str().unwrap().contains("for 600 ms"), "{report}");
    // Zero would fail every call, or refuse every server, at once: a usage error.
    for zero in [["--mcp-silence-timeout", "0"], ["--mcp-startup-timeout", "0"]] {
        let output =
            runlet(&["run", dir.join("main.run").to_str().unwrap(), "--mcp", &rogue, zero[0], zero[1]]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("RL8501") && stderr.contains(zero[0]), "{stderr}");
    }
}

/// `--mcp-startup-timeout MS` bounds how long a server has to start: one that answers nothing
/// for 3 s is refused after 300 ms with `RL8602` naming the time it had.
#[test]
fn a_server_slower_than_the_startup_timeout_is_refused() {
    let s = servers();
    let dir = scratch("slow-start");
    std::fs::write(dir.join("main.run"), "return slow.echo({})\n").expect("writes the program");
    let slow = flag("slow", &s.rogue("slow-start 3"));
    let main = dir.join("main.run");
    let output = runlet(&["run", main.to_str().unwrap(), "--mcp", &slow, "--mcp-startup-timeout", "300"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("RL8602") && stderr.contains("within 300 ms"), "{stderr}");
}
