//! End-to-end tests of the `runlet` binary: exit statuses and output shapes of INTERFACES.md §4
//! for `check` (with registries and inputs), `fmt`, `heal`, `explain`, `run` and `replay`.

use std::path::PathBuf;
use std::process::{Command, Output};

fn runlet(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_runlet")).args(args).output().expect("run the runlet binary")
}

/// `runlet run PROGRAM --registry REGISTRY --tools TOOLS --format json EXTRA…`.
fn run_json(program: &Scratch, registry: &Scratch, tools: &Scratch, extra: &[&str]) -> Output {
    let mut args = vec!["run", program.path(), "--registry", registry.path(), "--tools", tools.path()];
    args.extend(["--format", "json"]);
    args.extend_from_slice(extra);
    runlet(&args)
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8")
}

/// A scratch file holding `text`, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str, text: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("runlet-cli-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch dir");
        let path = dir.join(name);
        std::fs::write(&path, text).expect("write scratch file");
        Scratch(path)
    }

    fn path(&self) -> &str {
        self.0.to_str().expect("UTF-8 path")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

const VALID: &str = "customer = crm.customer(customer_id)\nreturn customer.email\n";
/// A registry with the tools `MISSING_LOOP_RETURN` calls, for checking it once healed.
const TOOLS_REGISTRY: &str = r#"{"tools": [
  {"name": "tools.list", "outputSchema": {"type": "array", "items": {"type": "string"}}, "execution": "pure"},
  {"name": "tools.score", "params": [{"name": "item", "schema": {"type": "string"}}], "outputSchema": {"type": "number"}, "execution": "pure"}
]}"#;

/// A file of the repository's `examples/` directory.
fn example(relative: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(relative)
        .to_str()
        .expect("UTF-8 path")
        .to_owned()
}
const MISSING_LOOP_RETURN: &str = "xs = tools.list()\nys = for x in xs {\n    tools.score(x)\n}\nreturn ys\n";

#[test]
fn explain_prints_a_known_code_and_rejects_an_unknown_one() {
    let known = runlet(&["explain", "RL1017"]);
    assert!(known.status.success());
    assert!(stdout(&known).starts_with("# RL1017:"), "{}", stdout(&known));
    assert_eq!(runlet(&["explain", "RL9999"]).status.code(), Some(2));
}

#[test]
fn check_exit_status_follows_errors() {
    let ok = Scratch::new("ok.run", VALID);
    let registry = example("appendix-a/registry.json");
    let output = runlet(&["check", ok.path(), "--registry", &registry]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let bad = Scratch::new("bad.run", MISSING_LOOP_RETURN);
    assert_eq!(runlet(&["check", bad.path()]).status.code(), Some(1));
    assert_eq!(runlet(&["check", "/nonexistent/file.run"]).status.code(), Some(2));
}

#[test]
fn check_json_follows_the_diagnostics_contract() {
    let bad = Scratch::new("bad-json.run", MISSING_LOOP_RETURN);
    let output = runlet(&["check", bad.path(), "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("one JSON object");
    assert!(report["source_digest"].as_str().expect("digest").starts_with("sha256:"));
    let first = &report["diagnostics"][0];
    assert_eq!(first["code"], "RL1017");
    for field in ["severity", "message", "span", "labels", "help", "fixes", "candidates", "doc"] {
        assert!(first.get(field).is_some(), "diagnostic lacks `{field}`: {first}");
    }
    assert_eq!(first["fixes"][0]["applicability"], "machine_applicable");
}

#[test]
fn check_rejects_non_utf8_source_as_a_usage_error() {
    let dir = std::env::temp_dir().join(format!("runlet-cli-bytes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("latin1.run");
    std::fs::write(&path, b"return \"caf\xe9\"\n").expect("write");
    let output = runlet(&["check", path.to_str().expect("path")]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("not UTF-8"));
}

#[test]
fn fmt_prints_checks_and_writes() {
    let messy = Scratch::new("messy.run", "customer=crm.customer( customer_id )\nreturn customer . email\n");
    let printed = runlet(&["fmt", messy.path()]);
    assert!(printed.status.success());
    assert_eq!(stdout(&printed), VALID);
    assert_eq!(runlet(&["fmt", "--check", messy.path()]).status.code(), Some(1));
    assert!(runlet(&["fmt", "--write", messy.path()]).status.success());
    assert_eq!(std::fs::read_to_string(&messy.0).expect("read back"), VALID);
    assert_eq!(runlet(&["fmt", "--check", messy.path()]).status.code(), Some(0));
}

#[test]
fn fmt_refuses_source_with_syntax_errors() {
    let bad = Scratch::new("fmt-bad.run", MISSING_LOOP_RETURN);
    assert_eq!(runlet(&["fmt", "--write", bad.path()]).status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&bad.0).expect("unchanged"), MISSING_LOOP_RETURN);
}

#[test]
fn fmt_keeps_stdout_for_formatted_source() {
    let ok = Scratch::new("fmt-ok.run", VALID);
    let bad = Scratch::new("fmt-bad-stdout.run", MISSING_LOOP_RETURN);
    let output = runlet(&["fmt", ok.path(), bad.path()]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stdout(&output), VALID);
    assert!(String::from_utf8_lossy(&output.stderr).contains("RL1017"));
}

#[test]
fn heal_inserts_the_missing_return_and_reports_it() {
    let bad = Scratch::new("heal.run", MISSING_LOOP_RETURN);
    let output = runlet(&["heal", bad.path(), "--format", "json"]);
    assert_eq!(output.status.code(), Some(0));
    let healed: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("JSON");
    assert_eq!(healed["changed"], true);
    assert_eq!(
        healed["source"],
        "xs = tools.list()\nys = for x in xs {\n    return tools.score(x)\n}\nreturn ys\n"
    );
    assert_eq!(healed["notes"][0]["code"], "RL1017");
    let check = Scratch::new("healed.run", healed["source"].as_str().expect("source"));
    let registry = Scratch::new("tools.json", TOOLS_REGISTRY);
    let output = runlet(&["check", check.path(), "--registry", registry.path()]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
}

#[test]
fn heal_with_a_registry_applies_safe_machine_fixes_and_insertions_only_keeps_to_insertions() {
    // Two mistakes: `&&` (a machine-applicable replacement) and a loop body without `return`
    // (an insertion).
    let source = "xs = tools.list()\nys = for x in xs {\n    tools.score(x)\n}\nreturn ys != [] && true\n";
    let bad = Scratch::new("heal_both.run", source);
    let registry = Scratch::new("heal_tools.json", TOOLS_REGISTRY);
    let output = runlet(&["heal", bad.path(), "--registry", registry.path(), "--format", "json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let healed: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("JSON");
    assert_eq!(
        healed["source"],
        "xs = tools.list()\nys = for x in xs {\n    return tools.score(x)\n}\nreturn ys != [] and true\n"
    );
    let codes: Vec<&str> =
        healed["notes"].as_array().expect("notes").iter().filter_map(|n| n["code"].as_str()).collect();
    assert_eq!(codes, ["RL1017", "RL1036"], "{healed}");
    assert_eq!(healed["remaining"], serde_json::json!([]));
    let output =
        runlet(&["heal", bad.path(), "--registry", registry.path(), "--insertions-only", "--format", "json"]);
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    let healed: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("JSON");
    assert!(
        healed["source"].as_str().is_some_and(|s| s.contains("&&") && s.contains("return tools.score(x)"))
    );
}

/// True when each of `keys` appears in `json` as an object key, in this order.
fn keys_in_order(json: &str, keys: &[&str]) -> bool {
    let mut rest = json;
    keys.iter().all(|key| match rest.find(&format!("\"{key}\":")) {
        Some(at) => {
            rest = &rest[at + key.len() + 3..];
            true
        }
        None => false,
    })
}

const DIAGNOSTIC_KEYS: [&str; 17] = [
    "code",
    "severity",
    "message",
    "span",
    "start",
    "end",
    "line",
    "column",
    "labels",
    "help",
    "fixes",
    "message",
    "applicability",
    "edits",
    "replacement",
    "candidates",
    "doc",
];

#[test]
fn json_fields_come_in_contract_order() {
    let bad = Scratch::new("order.run", MISSING_LOOP_RETURN);
    let checked = stdout(&runlet(&["check", bad.path(), "--format", "json"]));
    assert!(checked.starts_with("{\"source_digest\":\"sha256:"), "{checked}");
    assert!(keys_in_order(&checked, &[&["diagnostics"][..], &DIAGNOSTIC_KEYS].concat()), "{checked}");
    let healed = stdout(&runlet(&["heal", bad.path(), "--format", "json"]));
    assert!(healed.starts_with("{\"source\":"), "{healed}");
    let note_keys =
        ["code", "severity", "message", "span", "start", "end", "line", "column", "labels", "help"];
    assert!(keys_in_order(&healed, &[&["changed", "notes"][..], &note_keys].concat()), "{healed}");
}

#[test]
fn heal_leaves_a_valid_program_unchanged() {
    let ok = Scratch::new("heal-ok.run", VALID);
    let output = runlet(&["heal", ok.path()]);
    assert!(output.status.success());
    assert_eq!(stdout(&output), VALID);
}

#[test]
fn heal_fails_when_no_insertion_repairs_it() {
    let hopeless = Scratch::new("hopeless.run", "x = = =\n");
    assert_eq!(runlet(&["heal", hopeless.path()]).status.code(), Some(1));
}

#[test]
fn the_spec_appendix_programs_check_clean_against_their_registries() {
    for (program, registry, inputs) in [
        ("appendix-a/main.run", "appendix-a/registry.json", Some("appendix-a/inputs.json")),
        ("appendix-b/main.run", "appendix-b/registry.json", None),
    ] {
        let (program, registry) = (example(program), example(registry));
        let mut args = vec!["check".to_owned(), program.clone(), "--registry".to_owned(), registry];
        if let Some(inputs) = inputs {
            args.extend(["--inputs".to_owned(), example(inputs)]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = runlet(&args);
        assert_eq!(output.status.code(), Some(0), "{program}:\n{}", stdout(&output));
        assert!(stdout(&output).contains("no problems found"), "{}", stdout(&output));
    }
}

#[test]
fn check_without_a_registry_knows_no_tool() {
    let ok = Scratch::new("no-registry.run", VALID);
    let output = runlet(&["check", ok.path(), "--format", "json"]);
    assert_eq!(output.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("one JSON object");
    let codes: Vec<&str> =
        report["diagnostics"].as_array().expect("list").iter().filter_map(|d| d["code"].as_str()).collect();
    assert_eq!(codes, ["RL2102", "RL2101"], "{report}");
}

#[test]
fn check_reports_analysis_diagnostics_with_fixes_as_json() {
    let typo = Scratch::new("typo.run", "customer = crm.customer(customer_id)\nreturn customer.emali\n");
    let registry = example("appendix-a/registry.json");
    let output = runlet(&["check", typo.path(), "--registry", &registry, "--format", "json"]);
    assert_eq!(output.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("one JSON object");
    let first = &report["diagnostics"][0];
    assert_eq!(first["code"], "RL2103");
    assert_eq!(first["fixes"][0]["edits"][0]["replacement"], "email");
    assert_eq!(first["fixes"][0]["applicability"], "machine_applicable");
}

#[test]
fn check_infers_input_schemas_from_values() {
    let program = Scratch::new("inputs.run", "return order.total + 1\n");
    let inputs = Scratch::new("inputs.json", r#"{"order": {"id": "o-1", "total": 12.5}}"#);
    let output = runlet(&["check", program.path(), "--inputs", inputs.path()]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let wrong = Scratch::new("inputs-wrong.run", "return order.totl\n");
    let output = runlet(&["check", wrong.path(), "--inputs", inputs.path()]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stdout(&output).contains("RL2103"), "{}", stdout(&output));
}

/// A pasted `tools/list` whose names are not identifiers loads with a warning per mapped name;
/// with `--format json` the warnings are a `registry` report about the registry file's text.
#[test]
fn check_reports_registry_warnings_in_json() {
    let program = Scratch::new("mapped.run", "return get_sum({ a: 1, b: 2 })\n");
    let registry = Scratch::new(
        "mapped.json",
        r#"{"tools": [{"name": "get-sum", "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}, "outputSchema": {"type": "number"}, "annotations": {"readOnlyHint": true}}]}"#,
    );
    let output = runlet(&["check", program.path(), "--registry", registry.path(), "--format", "json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    assert_eq!(String::from_utf8_lossy(&output.stderr), "", "nothing beside the JSON");
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("one JSON object");
    assert_eq!(report["diagnostics"], serde_json::json!([]));
    let text = std::fs::read_to_string(registry.path()).unwrap();
    let digest = report["registry"]["source_digest"].as_str().unwrap();
    assert_eq!(digest, runlet::diag::source_digest(&text));
    let warning = &report["registry"]["diagnostics"][0];
    assert_eq!((&warning["code"], &warning["severity"]), (&"RL8025".into(), &"warning".into()), "{report}");
    let start = warning["span"]["start"].as_u64().unwrap() as usize;
    assert!(text[start..].starts_with(r#""name": "get-sum""#), "{warning}");
    let as_text = runlet(&["check", program.path(), "--registry", registry.path()]);
    assert!(String::from_utf8_lossy(&as_text.stderr).contains("warning[RL8025]"));
    assert!(!stdout(&as_text).contains("RL8025"));
    let plain = runlet(&["check", program.path(), "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&stdout(&plain)).expect("one JSON object");
    assert!(report.get("registry").is_none(), "{report}");
}

/// `run --format json` carries the registry file's warnings as the same `registry` report, in
/// the result's report and in a compile error's; stderr stays empty.
#[test]
fn run_reports_registry_warnings_in_json() {
    let registry = Scratch::new(
        "mapped-run.json",
        r#"{"tools": [{"name": "get-sum", "inputSchema": {"type": "object"}, "outputSchema": {"type": "number"}, "execution": "pure"}]}"#,
    );
    let tools = Scratch::new("mapped-run-tools.json", r#"{"get_sum": [{"result": 3}]}"#);
    for (source, status) in [("return get_sum({})\n", "succeeded"), ("return get_sum(\n", "compile_error")] {
        let program = Scratch::new("mapped-run.run", source);
        let output = run_json(&program, &registry, &tools, &[]);
        assert_eq!(String::from_utf8_lossy(&output.stderr), "", "nothing beside the JSON");
        let report: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("one JSON object");
        assert_eq!(report["status"], status, "{report}");
        let warning = &report["registry"]["diagnostics"][0];
        assert_eq!(warning["code"], "RL8025", "{report}");
        let text = std::fs::read_to_string(registry.path()).unwrap();
        assert_eq!(report["registry"]["source_digest"], runlet::diag::source_digest(&text).as_str());
    }
}

/// In a String-or-List union, a list the list variant rejects is an error, not a JSON string:
/// at compile time for a literal, at run time for a tool's output.
#[test]
fn a_malformed_list_is_not_sent_as_a_string() {
    let registry = Scratch::new(
        "string-or-list.json",
        r#"{"tools": [
          {"name": "t.f", "params": [{"name": "x", "schema": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "integer"}}]}}], "execution": "pure"},
          {"name": "t.g", "params": [], "outputSchema": {"type": "array"}, "execution": "pure"}]}"#,
    );
    let tools = Scratch::new(
        "string-or-list-tools.json",
        r#"{"t.f": [{"result": 1}], "t.g": [{"result": [1, "a"]}]}"#,
    );
    let literal = Scratch::new("literal.run", "return t.f([1, \"a\"])\n");
    let output = runlet(&["check", literal.path(), "--registry", registry.path(), "--format", "json"]);
    assert_eq!(output.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("one JSON object");
    assert_eq!(report["diagnostics"][0]["code"], "RL5301", "{report}");
    let good = Scratch::new("good-list.run", "return [t.f([1, 2]), t.f(\"text\")]\n");
    let output = runlet(&["run", good.path(), "--registry", registry.path(), "--tools", tools.path()]);
    assert_eq!((output.status.code(), stdout(&output).trim()), (Some(0), "[1,1]"));
    let from_tool = Scratch::new("from-tool.run", "return t.f(t.g())\n");
    let args =
        ["run", from_tool.path(), "--registry", registry.path(), "--tools", tools.path(), "--format", "json"];
    let output = runlet(&args);
    assert_eq!(
        output.status.code(),
        Some(1),
        "{:?}: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("one JSON object");
    assert_eq!(report["status"], "failed", "{report}");
    assert_eq!(report["error"]["code"], "RL5301", "{report}");
    assert_eq!(report["error"]["details"]["path"], "$[1]", "{report}");
}

#[test]
fn a_registry_with_errors_is_a_usage_error_shown_in_the_registry_file() {
    let program = Scratch::new("bad-registry.run", VALID);
    let registry = Scratch::new(
        "bad-registry.json",
        r#"{"tools": [{"name": "crm.customer", "execution": "sometimes"}]}"#,
    );
    let output = runlet(&["check", program.path(), "--registry", registry.path()]);
    assert_eq!(output.status.code(), Some(2));
    let text = stdout(&output);
    assert!(text.contains("RL8006") && text.contains("bad-registry.json"), "{text}");
    let not_json = Scratch::new("not-json.json", "{ tools: ");
    assert_eq!(runlet(&["check", program.path(), "--registry", not_json.path()]).status.code(), Some(2));
}

#[test]
fn bad_inputs_are_usage_errors() {
    let program = Scratch::new("bad-inputs.run", VALID);
    let registry = example("appendix-a/registry.json");
    for (name, text) in [
        ("inputs-not-json.json", "{"),
        ("inputs-not-object.json", "[1]"),
        ("inputs-root.json", r#"{"crm": 1}"#),
        ("inputs-reserved.json", r#"{"return": 1}"#),
        ("inputs-mismatch.json", r#"{"customer_id": 42}"#),
    ] {
        let inputs = Scratch::new(name, text);
        let output = runlet(&["check", program.path(), "--registry", &registry, "--inputs", inputs.path()]);
        assert_eq!(output.status.code(), Some(2), "{name}: {}", String::from_utf8_lossy(&output.stderr));
    }
}

/// `runlet run` on an example directory, with extra arguments.
fn run_example(name: &str, extra: &[&str]) -> Output {
    let file = |f: &str| example(&format!("{name}/{f}"));
    let (main, registry, tools) = (file("main.run"), file("registry.json"), file("tools.json"));
    let mut args = vec!["run", main.as_str(), "--registry", registry.as_str(), "--tools", tools.as_str()];
    args.extend_from_slice(extra);
    runlet(&args)
}

#[test]
fn run_prints_the_result_of_appendix_a() {
    let inputs = example("appendix-a/inputs.json");
    let output = run_example("appendix-a", &["--inputs", &inputs]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(
        stdout(&output),
        "\"Ada (pro) has 3 recent orders, none risky, and one open high-priority refund ticket.\"\n"
    );
}

#[test]
fn appendix_a_with_shop_orders_failing_retries_twice_then_prints_the_catch_summary() {
    let inputs = example("appendix-a/inputs.json");
    let tools = example("appendix-a/tools-orders-failing.json");
    let (main, registry) = (example("appendix-a/main.run"), example("appendix-a/registry.json"));
    let output = runlet(&["run", &main, "--registry", &registry, "--tools", &tools, "--inputs", &inputs]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(
        stdout(&output),
        "\"Ada (pro) has one open high-priority refund ticket; her orders could not be loaded (the order service is unavailable).\"\n",
        "the catch summary is asked for with exactly customer, tickets and the error's message"
    );
}

#[test]
fn run_json_reports_success_with_the_value() {
    let output = run_example("appendix-b", &["--format", "json"]);
    assert_eq!(output.status.code(), Some(0));
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("JSON");
    assert_eq!(report["status"], "succeeded");
    let ids: Vec<&str> =
        report["value"].as_array().expect("a list").iter().map(|v| v["id"].as_str().expect("id")).collect();
    assert_eq!(ids, ["iss-1", "pr-77"], "issues first, then pull requests");
}

/// `runlet run --format json` of scratch files; checks the exit status and returns the report.
fn run_json_report(program: &Scratch, registry: &Scratch, tools: &Scratch, status: i32) -> serde_json::Value {
    let output = run_json(program, registry, tools, &[]);
    assert_eq!(output.status.code(), Some(status), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_str(&stdout(&output)).expect("one JSON object")
}

#[test]
fn run_reports_compile_errors_and_failed_runs_with_status_1() {
    let registry = Scratch::new("run-registry.json", TOOLS_REGISTRY);
    let program = Scratch::new("run-bad.run", "xs = tools.lst()\nreturn xs\n");
    let tools = Scratch::new(
        "run-tools.json",
        r#"{"tools.list": [{"error": {"code": "DOWN", "message": "offline", "retryable": false}}]}"#,
    );
    let report = run_json_report(&program, &registry, &tools, 1);
    assert_eq!(report["status"], "compile_error");
    assert!(report["diagnostics"][0]["code"].as_str().expect("code").starts_with("RL2"));

    let program = Scratch::new("run-fails.run", "xs = tools.list()\nreturn xs\n");
    let report = run_json_report(&program, &registry, &tools, 1);
    assert_eq!(report["status"], "failed");
    assert_eq!(report["error"]["code"], "DOWN");
    assert_eq!(report["error"]["tool"], "tools.list");
    for field in ["message", "retryable", "node_id", "attempt", "details", "causes", "uncertain"] {
        assert!(report["error"].get(field).is_some(), "error lacks `{field}`");
    }
}

#[test]
fn run_usage_problems_exit_2() {
    assert_eq!(run_example("appendix-a", &[]).status.code(), Some(2), "customer_id is missing");
    assert_eq!(run_example("appendix-b", &["--journal", "postgres:x"]).status.code(), Some(2));
    // Refused before any connection is tried (nothing listens on port 1).
    let normal = run_example(
        "appendix-b",
        &["--journal", "postgres://nobody@127.0.0.1:1/none", "--durability", "normal"],
    );
    assert_eq!(normal.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&normal.stderr);
    assert!(stderr.contains("--durability normal") && stderr.contains("synchronous_commit"), "{stderr}");
    assert_eq!(run_example("appendix-b", &["--input", "not-an-assignment"]).status.code(), Some(2));
    let bad_tools = Scratch::new(
        "bad-tools.json",
        r#"{"github.me": [{"result": 1, "error": {"code": "X", "message": "y"}}]}"#,
    );
    let main = example("appendix-b/main.run");
    let registry = example("appendix-b/registry.json");
    let output = runlet(&["run", &main, "--registry", &registry, "--tools", bad_tools.path()]);
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn run_journals_to_sqlite_when_asked() {
    let dir = std::env::temp_dir().join(format!("runlet-cli-journal-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("runs.db");
    let journal = format!("sqlite:{}", path.display());
    for _ in 0..2 {
        let output = run_example("appendix-b", &["--journal", &journal]);
        assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    }
    assert!(path.exists());
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn run_refuses_a_damaged_sqlite_journal_and_leaves_it_alone() {
    let dir = std::env::temp_dir().join(format!("runlet-cli-damaged-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("runs.db");
    let journal = format!("sqlite:{}", path.display());
    let output = run_example("appendix-b", &["--journal", &journal]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let whole = std::fs::read(&path).expect("the journal");
    std::fs::write(&path, &whole[..whole.len() / 2]).expect("truncate");
    let output = run_example("appendix-b", &["--journal", &journal]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("RL7008") && stderr.contains(&path.display().to_string()), "{stderr}");
    assert_eq!(std::fs::read(&path).expect("the journal").len(), whole.len() / 2, "nothing appended");
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn run_prints_values_as_canonical_presentation_json() {
    let registry = Scratch::new(
        "numbers-registry.json",
        r#"{"tools": [{"name": "n.pair", "params": [], "outputSchema": {"type": "array", "items": {"type": "number"}}, "execution": "pure"}]}"#,
    );
    let tools = Scratch::new("numbers-tools.json", r#"{"n.pair": [{"result": [2.0, 1e21, 0.1]}]}"#);
    let program = Scratch::new("numbers.run", "return n.pair()\n");
    let output = run_json(&program, &registry, &tools, &[]);
    let printed = stdout(&output);
    let run_id = serde_json::from_str::<serde_json::Value>(&printed).expect("JSON")["run_id"].clone();
    let run_id = run_id.as_str().expect("the report names its run").to_owned();
    assert_eq!(
        printed,
        format!("{{\"status\":\"succeeded\",\"run_id\":\"{run_id}\",\"value\":[2,1e+21,0.1]}}\n")
    );
}

#[test]
fn run_prints_the_result_of_the_stdlib_example() {
    let output = run_example("stdlib", &[]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(
        stdout(&output),
        concat!(
            r#"{"count":2,"rows":[{"id":"t-9","key":"66c61fd66856","opened":"2026-11-20T13:02:00.000Z","orders":["ORD-20417"],"priority":2,"subject":"REFUND ORD-20417 NOT"},"#,
            r#"{"id":"t-8","key":"dd825c6f6992","opened":"2026-11-19T08:00:00.000Z","orders":["ORD-20002"],"priority":1,"subject":"WRONG SIZE, CAFÉ ORD"}],"tags":"exchange, late, refund"}"#,
            "\n"
        )
    );
}

const ECHO_REGISTRY: &str =
    r#"{"tools": [{"name": "echo", "params": [{"name": "x", "schema": {}}], "execution": "idempotent"}]}"#;
const ECHO_TOOLS: &str = r#"{"echo": [{"result": 1}]}"#;
const THREE_CALLS: &str = "a = echo(1)\nb = echo(a)\nreturn echo(b)\n";

#[test]
fn run_limits_pass_at_the_cap_and_fail_past_it_with_their_details() {
    let program = Scratch::new("limits.run", THREE_CALLS);
    let registry = Scratch::new("limits-registry.json", ECHO_REGISTRY);
    let tools = Scratch::new("limits-tools.json", ECHO_TOOLS);
    let run = |limit: &str| run_json(&program, &registry, &tools, &["--limit", limit, "--limit", "depth=1"]);
    let at_cap = run("tool_calls=3");
    assert_eq!(at_cap.status.code(), Some(0), "{}", stdout(&at_cap));
    let past = run("tool_calls=2");
    assert_eq!(past.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_str(&stdout(&past)).expect("JSON");
    assert_eq!(json["status"], "failed");
    assert_eq!(json["error"]["code"], "RL4101");
    assert_eq!(json["error"]["tool"], "echo");
    let details = &json["error"]["details"];
    assert_eq!(
        (&details["limit"], &details["current"], &details["cap"]),
        (&"tool_calls".into(), &3.into(), &2.into())
    );
    let span = (details["span"]["start"].as_u64(), details["span"]["end"].as_u64());
    assert_eq!(span, (Some(31), Some(38)), "the span of `echo(b)`");
}

#[test]
fn run_rejects_an_unknown_limit_or_a_bad_number_naming_the_keys() {
    let program = Scratch::new("limits-usage.run", THREE_CALLS);
    let registry = Scratch::new("limits-usage-registry.json", ECHO_REGISTRY);
    let tools = Scratch::new("limits-usage-tools.json", ECHO_TOOLS);
    for limit in ["calls=3", "tool_calls=many", "tool_calls"] {
        let output = runlet(&[
            "run",
            program.path(),
            "--registry",
            registry.path(),
            "--tools",
            tools.path(),
            "--limit",
            limit,
        ]);
        assert_eq!(output.status.code(), Some(2), "--limit {limit}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("tool_calls") && stderr.contains(limit), "{stderr}");
    }
    let unknown = runlet(&[
        "run",
        program.path(),
        "--registry",
        registry.path(),
        "--tools",
        tools.path(),
        "--limit",
        "calls=3",
    ]);
    let stderr = String::from_utf8_lossy(&unknown.stderr);
    assert!(
        stderr.contains("wall_clock_ms") && stderr.contains("call_output_bytes"),
        "names every key: {stderr}"
    );
}

#[test]
fn replay_reproduces_a_recorded_run_and_fails_on_drift() {
    let transcript = Scratch::new("appendix-a.transcript.json", "");
    // Appendix A passes sensitive values to its tools: their operation ids are keyed, so the
    // recording and the replay share a key file.
    let key = Scratch::new("appendix-a.key", "appendix key material\n");
    let inputs = example("appendix-a/inputs.json");
    let keyed = ["--digest-key-file", key.path()];
    let recorded =
        run_example("appendix-a", &["--inputs", &inputs, "--record", transcript.path(), keyed[0], keyed[1]]);
    assert_eq!(recorded.status.code(), Some(0), "{}", String::from_utf8_lossy(&recorded.stderr));
    let (main, registry) = (example("appendix-a/main.run"), example("appendix-a/registry.json"));
    let replay = |extra: &[&str]| {
        let mut args = vec!["replay", main.as_str(), "--registry", registry.as_str()];
        args.extend_from_slice(&["--transcript", transcript.path()]);
        args.extend_from_slice(&keyed);
        args.extend_from_slice(extra);
        runlet(&args)
    };
    let replayed = replay(&["--inputs", &inputs]);
    assert_eq!(replayed.status.code(), Some(0), "{}", String::from_utf8_lossy(&replayed.stderr));
    assert_eq!(stdout(&replayed), stdout(&recorded));
    let drifted = replay(&["--input", r#"customer_id="c-43""#, "--format", "json"]);
    assert_eq!(drifted.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_str(&stdout(&drifted)).expect("one JSON object");
    assert_eq!(report["status"], "replay_mismatch");
    let first = &report["mismatches"][0];
    assert_eq!(first["code"], "RL8304");
    assert!(first["call_site"].as_str().expect("call site").starts_with("let:customer/value"), "{first}");
    let bad = Scratch::new("bad.transcript.json", r#"{"format": "runlet.transcript/9"}"#);
    let refused = runlet(&["replay", &main, "--registry", &registry, "--transcript", bad.path()]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(stdout(&refused).contains("RL8302"), "{}", stdout(&refused));
}

/// A registry whose answer carries a secret token, for runs whose call identities are keyed.
const VAULT_REGISTRY: &str = r#"{"tools": [
  {"name": "vault.get", "execution": "pure", "outputSchema": {"type": "object", "required": ["token"],
   "properties": {"token": {"type": "string", "x-runlet-sensitivity": "secret"}}}},
  {"name": "svc.use", "params": [{"name": "text", "schema": {"type": "string"}}], "outputSchema": {"type": "string"}, "execution": "pure"}
]}"#;
const VAULT_TOOLS: &str =
    r#"{"vault.get": [{"result": {"token": "T-4711"}}], "svc.use": [{"result": "ok"}]}"#;
const VAULT_PROGRAM: &str = "s = vault.get()\nused = svc.use(s.token)\nreturn used\n";

/// `runlet` with `args`, with `RUNLET_DIGEST_KEY_FILE` set to `key_file` or removed.
fn runlet_keyed(args: &[&str], key_file: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_runlet"));
    match key_file {
        Some(path) => command.env("RUNLET_DIGEST_KEY_FILE", path),
        None => command.env_remove("RUNLET_DIGEST_KEY_FILE"),
    };
    command.args(args).output().expect("run the runlet binary")
}

#[test]
fn a_keyed_recording_replays_only_under_its_key_file() {
    let main = Scratch::new("keyed.run", VAULT_PROGRAM);
    let registry = Scratch::new("keyed.registry.json", VAULT_REGISTRY);
    let tools = Scratch::new("keyed.tools.json", VAULT_TOOLS);
    let key = Scratch::new("keyed.tenant.key", "tenant key material\n");
    let other = Scratch::new("keyed.other.key", "other key material");
    let transcript = Scratch::new("keyed.transcript.json", "");
    let program = [main.path(), "--registry", registry.path()];
    let record = |key_flag: &[&str]| {
        let mut args = vec!["run"];
        args.extend_from_slice(&program);
        args.extend_from_slice(&["--tools", tools.path(), "--record", transcript.path()]);
        args.extend_from_slice(key_flag);
        let recorded = runlet_keyed(&args, None);
        assert_eq!(recorded.status.code(), Some(0), "{}", String::from_utf8_lossy(&recorded.stderr));
        std::fs::read_to_string(transcript.path()).expect("the transcript")
    };
    let replay = |key_flag: &[&str], key_file: Option<&str>| {
        let mut args = vec!["replay"];
        args.extend_from_slice(&program);
        args.extend_from_slice(&["--transcript", transcript.path()]);
        args.extend_from_slice(key_flag);
        let output = runlet_keyed(&args, key_file);
        (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
    };
    let text = record(&["--digest-key-file", key.path()]);
    let recorded: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let key_id = recorded["digest_key"].as_str().expect("the transcript names its key").to_owned();
    assert!(key_id.starts_with("fp-") && key_id.len() == 19, "{key_id}");
    assert!(!text.contains("tenant key material"), "the key itself is never written");

    assert_eq!(replay(&["--digest-key-file", key.path()], None).0, Some(0));
    assert_eq!(replay(&[], Some(key.path())).0, Some(0), "the environment variable names the key file");
    let (status, missing) = replay(&[], None);
    assert_eq!(status, Some(1));
    assert!(missing.starts_with("error[RL8103]"), "the key mismatch leads: {missing}");
    assert!(missing.contains(&key_id) && missing.contains("local-"), "names both keys: {missing}");
    assert!(missing.contains("--digest-key-file"), "says how to pass the key: {missing}");
    let (status, wrong) = replay(&["--digest-key-file", other.path()], None);
    assert_eq!(status, Some(1));
    assert!(wrong.contains(&key_id) && wrong.contains("not the one the run was recorded with"), "{wrong}");

    let text = record(&[]);
    let recorded: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    assert!(recorded["digest_key"].as_str().is_some_and(|id| id.starts_with("local-")), "{text}");
    let (status, random) = replay(&["--digest-key-file", key.path()], None);
    assert_eq!(status, Some(1));
    assert!(random.contains("record the run again with `--digest-key-file"), "{random}");
    let empty = Scratch::new("keyed.empty.key", "\n");
    assert_eq!(
        replay(&["--digest-key-file", empty.path()], None).0,
        Some(2),
        "an empty key is a usage error"
    );
}

#[test]
fn replay_gives_sampled_intrinsics_their_recorded_values() {
    let program = Scratch::new(
        "sampled.run",
        "t = time.now()\nr = number.random()\ne = echo.it([t, r])\nreturn [t, r, e]\n",
    );
    let registry = Scratch::new(
        "sampled.registry.json",
        r#"{"prelude": "standard", "tools": [{"name": "echo.it", "params": [{"name": "x", "schema": {}}], "execution": "pure"}]}"#,
    );
    let tools = Scratch::new("sampled.tools.json", r#"{"echo.it": [{"result": "ok"}]}"#);
    let transcript = Scratch::new("sampled.transcript.json", "");
    let (program_path, registry_path) = (program.path(), registry.path());
    let recorded = runlet(&[
        "run",
        program_path,
        "--registry",
        registry_path,
        "--tools",
        tools.path(),
        "--record",
        transcript.path(),
    ]);
    assert_eq!(recorded.status.code(), Some(0), "{}", String::from_utf8_lossy(&recorded.stderr));
    let text = std::fs::read_to_string(transcript.path()).expect("transcript written");
    let file: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let functions: Vec<&str> = file["samples"]
        .as_array()
        .expect("samples")
        .iter()
        .map(|s| s["function"].as_str().expect("name"))
        .collect();
    assert_eq!(functions.len(), 2, "{text}");
    assert!(functions.contains(&"time.now") && functions.contains(&"number.random"), "{text}");
    let replayed =
        runlet(&["replay", program_path, "--registry", registry_path, "--transcript", transcript.path()]);
    assert_eq!(replayed.status.code(), Some(0), "{}", String::from_utf8_lossy(&replayed.stderr));
    assert_eq!(stdout(&replayed), stdout(&recorded), "the recorded clock and random values come back");
    let without = Scratch::new("unsampled.transcript.json", &text.replace("\"samples\"", "\"unused\""));
    let refused =
        runlet(&["replay", program_path, "--registry", registry_path, "--transcript", without.path()]);
    assert_eq!(refused.status.code(), Some(2), "an unknown field is refused");
}

/// `runlet tools` shows a description's control characters escaped: a registry's (or an MCP
/// server's) text cannot clear the terminal or rewrite the line it is on.
#[test]
fn tools_shows_control_characters_of_descriptions_escaped() {
    let registry = Scratch::new(
        "escapes.json",
        r#"{"tools": [{"name": "t.echo", "description": "\u001b[2J\rFAKE [pure]\u0007", "outputSchema": {"type": "string"}, "execution": "unsafe"}]}"#,
    );
    let output = runlet(&["tools", "--registry", registry.path()]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let text = stdout(&output);
    assert!(text.starts_with("t.echo  [unsafe]  \\u{1b}[2J\\rFAKE [pure]\\u{7}\n"), "{text:?}");
    assert!(!text.contains('\u{1b}') && !text.contains('\r'), "{text:?}");
}
