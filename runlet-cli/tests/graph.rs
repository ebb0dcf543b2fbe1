//! End-to-end tests of `runlet graph` and `runlet run --events`: golden graphs (JSON and DOT) of
//! the spec's appendix programs, a golden event file, and the event file's contract (INTERFACES.md
//! §4). Run ids and times vary between runs and are normalised before comparing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn runlet(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_runlet")).args(args).output().expect("run the runlet binary")
}

fn example(relative: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(relative)
        .to_str()
        .expect("UTF-8")
        .to_owned()
}

/// A fresh directory for one test's output files.
fn scratch_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("runlet-graph-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Writes `text` to the file `name` in `dir` and returns its path.
fn write_in(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path
}

fn path_text(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

/// `runlet graph` of an example with `--dot` and `--events` into `dir`: (stdout, DOT, events).
fn graph_example(name: &str, dir: &Path) -> (String, String, String) {
    let file = |f: &str| example(&format!("{name}/{f}"));
    let (main, registry, tools, inputs) =
        (file("main.run"), file("registry.json"), file("tools.json"), file("inputs.json"));
    let (dot, events) = (dir.join("graph.dot"), dir.join("events.jsonl"));
    let mut args = vec!["graph", main.as_str(), "--registry", registry.as_str(), "--tools", tools.as_str()];
    if Path::new(&inputs).exists() {
        args.extend(["--inputs", inputs.as_str()]);
    }
    args.extend(["--dot", path_text(&dot), "--events", path_text(&events)]);
    let output = runlet(&args);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let read = |p: &Path| std::fs::read_to_string(p).expect("output file");
    (String::from_utf8(output.stdout).expect("UTF-8"), read(&dot), read(&events))
}

/// Replaces the run id by `RUN` and every time by 0.
fn normalised(text: &str, run_id: &str) -> String {
    let text = text.replace(run_id, "RUN");
    let mut value: Value = match serde_json::from_str(&text) {
        Ok(value) => value,
        Err(_) => return text,
    };
    zero_times(&mut value);
    serde_json::to_string_pretty(&value).expect("JSON")
}

fn zero_times(value: &mut Value) {
    match value {
        Value::Object(object) => {
            for (key, item) in object.iter_mut() {
                if key.ends_with("_ms") && !item.is_null() {
                    *item = Value::from(0);
                } else {
                    zero_times(item);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(zero_times),
        _ => {}
    }
}

fn run_id(graph: &str) -> String {
    let value: Value = serde_json::from_str(graph).expect("the graph is JSON");
    value["run_id"].as_str().expect("run_id").to_owned()
}

/// Every line is one event; sequence numbers run 1, 2, 3, … and each line has the contract's keys.
fn check_event_file(events: &str) -> Vec<Value> {
    let lines: Vec<Value> =
        events.lines().map(|line| serde_json::from_str(line).expect("a JSON line")).collect();
    assert!(!lines.is_empty());
    for (index, event) in lines.iter().enumerate() {
        assert_eq!(event["seq"].as_u64(), Some(index as u64 + 1), "{event}");
        assert!(event["kind"].is_string() && event["at_ms"].is_u64(), "{event}");
        let kind = event["kind"].as_str().unwrap_or_default();
        if kind.starts_with("Node") || kind.starts_with("Call") {
            assert!(event["node"].is_string(), "{event}");
        }
        if kind.starts_with("Call") {
            assert!(event["tool"].is_string(), "{event}");
        }
    }
    lines
}

#[test]
fn appendix_a_graph_json_and_dot_match_their_goldens() {
    let dir = scratch_dir("appendix-a");
    let (graph, dot, events) = graph_example("appendix-a", &dir);
    let run = run_id(&graph);
    let lines = check_event_file(&events);
    assert_eq!(lines.last().map(|e| e["kind"].clone()), Some(Value::from("RunSucceeded")));
    insta::assert_snapshot!("appendix_a_graph_json", normalised(&graph, &run));
    insta::assert_snapshot!("appendix_a_graph_dot", normalised(&dot, &run));
}

#[test]
fn appendix_b_graph_json_and_dot_match_their_goldens() {
    let dir = scratch_dir("appendix-b");
    let (graph, dot, events) = graph_example("appendix-b", &dir);
    let run = run_id(&graph);
    check_event_file(&events);
    insta::assert_snapshot!("appendix_b_graph_json", normalised(&graph, &run));
    insta::assert_snapshot!("appendix_b_graph_dot", normalised(&dot, &run));
}

const STEPS_REGISTRY: &str = r#"{"tools": [
  {"name": "steps.first", "params": [], "execution": "pure",
   "outputSchema": {"type": "object", "required": ["next"], "properties": {"next": {"type": "string"}}}},
  {"name": "steps.second", "params": [{"name": "key", "schema": {"type": "string"}}], "execution": "pure",
   "outputSchema": {"type": "object", "required": ["done", "pin"], "properties": {
     "done": {"type": "boolean"}, "pin": {"type": "string", "x-runlet-sensitivity": "secret"}}}}
]}"#;

const STEPS_TOOLS: &str = r#"{
  "steps.first": [{"result": {"next": "k-1"}}],
  "steps.second": [{"args": ["k-1"], "result": {"done": true, "pin": "4921"}}]
}"#;

#[test]
fn run_events_of_a_sequential_program_match_their_golden() {
    let dir = scratch_dir("steps");
    let write = |name: &str, text: &str| write_in(&dir, name, text);
    let program = write("main.run", "a = steps.first()\nb = steps.second(a.next)\nreturn b.done\n");
    let registry = write("registry.json", STEPS_REGISTRY);
    let tools = write("tools.json", STEPS_TOOLS);
    let events = dir.join("events.jsonl");
    let args = [
        "run",
        path_text(&program),
        "--registry",
        path_text(&registry),
        "--tools",
        path_text(&tools),
        "--events",
        path_text(&events),
        "--format",
        "json",
    ];
    let output = runlet(&args);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let text = std::fs::read_to_string(&events).expect("events file");
    assert!(!text.contains("4921"), "the secret pin never reaches the event file");
    let lines = check_event_file(&text);
    let node = lines.iter().find_map(|e| e["node"].as_str()).expect("a node event");
    let run = node.split('/').next().expect("the run id leads the node id");
    let normalised: Vec<String> = text
        .lines()
        .map(|line| {
            let mut value: Value = serde_json::from_str(&line.replace(run, "RUN")).expect("JSON");
            zero_times(&mut value);
            value.to_string()
        })
        .collect();
    insta::assert_snapshot!("sequential_run_events", normalised.join("\n"));
}

#[test]
fn graph_reports_a_failed_run_with_status_1_and_still_prints_the_graph() {
    let dir = scratch_dir("failing");
    let write = |name: &str, text: &str| write_in(&dir, name, text);
    let program = write("main.run", "a = steps.first()\nb = steps.second(a.next)\nreturn b.done\n");
    let registry = write("registry.json", STEPS_REGISTRY);
    let tools = write(
        "tools.json",
        r#"{"steps.first": [{"error": {"code": "DOWN", "message": "unavailable", "retryable": false}}]}"#,
    );
    let output = runlet(&[
        "graph",
        path_text(&program),
        "--registry",
        path_text(&registry),
        "--tools",
        path_text(&tools),
    ]);
    assert_eq!(output.status.code(), Some(1));
    let graph: Value = serde_json::from_slice(&output.stdout).expect("the graph is JSON");
    assert_eq!(graph["run"]["state"], "failed");
    let nodes = graph["nodes"].as_array().expect("nodes");
    let failed = nodes.iter().find(|n| n["state"] == "failed").expect("the failed call");
    assert_eq!(failed["failure"]["code"], "DOWN");
    assert_eq!(failed["failure"]["uncertain"], false);
    assert!(
        nodes.iter().any(|n| n["state"] == "pruned" && n["blocked_on"].is_null()),
        "the call that never became eligible is pruned: {nodes:?}"
    );
}

/// A reader that stops early (`runlet graph … | head`) ends the command quietly, never with a
/// panic about the broken pipe.
#[test]
fn a_closed_stdout_ends_graph_without_a_panic() {
    use std::io::Read;
    use std::process::Stdio;
    let file = |f: &str| example(&format!("appendix-a/{f}"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_runlet"))
        .args(["graph", &file("main.run"), "--registry", &file("registry.json")])
        .args(["--tools", &file("tools.json"), "--inputs", &file("inputs.json")])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the runlet binary");
    let mut first = [0u8; 1];
    child.stdout.take().expect("stdout").read_exact(&mut first).expect("the graph starts");
    let output = child.wait_with_output().expect("runlet ends");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    // The graph is larger than a pipe's buffer, so the write really met the closed pipe.
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(output.status.signal(), Some(libc::SIGPIPE), "ended by SIGPIPE: {:?}", output.status);
    }
}
