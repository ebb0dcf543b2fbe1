//! Source is untrusted (spec §10, invariant 12): each probe under `tests/probes/` is a small
//! program built to exhaust the host. Through the real `runlet` binary each must end with its
//! limit's RL code, in a child process whose peak RSS (from `getrusage`) stays bounded — a
//! measure of memory, not of time.

mod support;

use std::path::PathBuf;
use std::process::{Command, Output};

/// Generous against the caps' defaults (64 MiB per value, a million elements per list): what
/// the probes would take without the caps is gigabytes.
const PEAK_RSS_BOUND_MIB: i64 = 512;

fn probe(name: &str) -> String {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "probes", name].iter().collect();
    path.to_string_lossy().into_owned()
}

/// Runs the binary to its end and returns its output and the peak RSS of the largest child this
/// test process has waited for (in MiB): this child, unless another test's was larger.
fn runlet(args: &[&str]) -> (Output, i64) {
    let output = Command::new(env!("CARGO_BIN_EXE_runlet")).args(args).output().expect("runs the binary");
    (output, support::peak_child_rss_mib())
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn check_probe(name: &str, code: &str) {
    let (output, peak_mib) = runlet(&["check", &probe(name), "--format", "json"]);
    assert_eq!(output.status.code(), Some(1), "{name}: {}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout(&output).contains(code), "{name} is refused with {code}: {}", stdout(&output));
    assert!(peak_mib < PEAK_RSS_BOUND_MIB, "{name}: `runlet check` peaked at {peak_mib} MiB");
}

#[test]
fn literal_folding_stops_at_the_caps_with_their_codes() {
    check_probe("list_doubling.run", "RL4114");
    check_probe("string_doubling.run", "RL4115");
}

/// `runlet run` of `name` with no tools: its JSON report, and the child's peak RSS in MiB.
fn run_probe(name: &str, extra: &[&str]) -> (serde_json::Value, i64) {
    let (registry, tools) = (probe("empty.registry.json"), probe("empty.tools.json"));
    let source = probe(name);
    let args = ["run", &source, "--registry", &registry, "--tools", &tools, "--format", "json"];
    let (output, peak_mib) = runlet(&[&args[..], extra].concat());
    assert_eq!(output.status.code(), Some(1), "{name}: {}", String::from_utf8_lossy(&output.stderr));
    (serde_json::from_str(&stdout(&output)).expect("a JSON report"), peak_mib)
}

#[test]
fn lists_that_share_their_parts_are_weighed_as_often_as_they_occur() {
    let (report, peak_mib) = run_probe("shared_nesting.run", &[]);
    assert_eq!(report["error"]["code"], "RL4113", "{report}");
    assert_eq!(report["error"]["details"]["limit"], "value_bytes");
    assert!(peak_mib < PEAK_RSS_BOUND_MIB, "`runlet run` peaked at {peak_mib} MiB");
}

#[test]
fn a_run_that_doubles_a_host_input_fails_with_the_list_length_limit() {
    let seed = ["--input", "seed=[1,2,3,4,5,6,7,8,9,10]"];
    let (report, peak_mib) = run_probe("input_doubling.run", &seed);
    assert_eq!(report["status"], "failed");
    assert_eq!(report["error"]["code"], "RL4114", "{report}");
    assert_eq!(report["error"]["details"]["limit"], "list_length");
    assert_eq!(report["error"]["details"]["cap"], 1_000_000);
    assert!(peak_mib < PEAK_RSS_BOUND_MIB, "`runlet run` peaked at {peak_mib} MiB");

    // A host that allows less stops it sooner, at the same code.
    let (report, _) = run_probe("input_doubling.run", &[&seed[..], &["--limit", "list_length=40"]].concat());
    assert_eq!(report["error"]["details"]["current"], 80, "{report}");
}

#[test]
fn a_wrong_argument_against_deeply_nested_shared_unions_is_one_short_error() {
    let registry = probe("deep_unions.registry.json");
    let (output, peak_mib) =
        runlet(&["check", &probe("deep_unions.run"), "--registry", &registry, "--format", "json"]);
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("a JSON report");
    let diagnostics = report["diagnostics"].as_array().expect("diagnostics");
    assert_eq!(diagnostics.len(), 1, "{report}");
    assert!(stdout(&output).len() < 4096, "the report stays small: {} bytes", stdout(&output).len());
    assert!(peak_mib < PEAK_RSS_BOUND_MIB, "`runlet check` peaked at {peak_mib} MiB");
}

#[test]
fn a_wrong_tool_output_against_deeply_nested_shared_unions_is_one_short_error_with_its_path() {
    let registry = probe("deep_output.registry.json");
    let tools = probe("deep_output.tools.json");
    let source = probe("deep_output.run");
    let (output, peak_mib) =
        runlet(&["run", &source, "--registry", &registry, "--tools", &tools, "--format", "json"]);
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("a JSON report");
    assert_eq!(report["error"]["code"], "TOOL_OUTPUT_SCHEMA_MISMATCH", "{report}");
    assert_eq!(report["error"]["details"]["path"], "$[\"v\"]", "the failing path as data: {report}");
    assert_eq!(report["error"]["details"]["found"], "Object");
    assert!(stdout(&output).len() < 4096, "the report stays small: {} bytes", stdout(&output).len());
    assert!(peak_mib < PEAK_RSS_BOUND_MIB, "`runlet run` peaked at {peak_mib} MiB");
}

/// The compile-time limits of §10 are limit keys like every other: `check` and `run` take them
/// with `--limit`, and the diagnostic names the key.
#[test]
fn compile_time_limits_are_set_with_limit_and_named_by_their_key() {
    let scratch = std::env::temp_dir().join(format!("runlet-compile-limits-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("scratch");
    let source = scratch.join("nested.run");
    std::fs::write(&source, "x = ((((((1))))))\ny = 1 + 2 + 3 + 4 + 5\nreturn [x, y]\n").expect("write");
    let source = source.to_string_lossy().into_owned();
    for (limit, code, key) in [
        ("parse_nesting=3", "RL4002", "parse_nesting"),
        ("operator_chain=2", "RL4002", "operator_chain"),
        ("analysis_work=2", "RL4004", "analysis_work"),
    ] {
        let (output, _) = runlet(&["check", &source, "--limit", limit, "--format", "json"]);
        assert_eq!(output.status.code(), Some(1), "{limit}: {}", stdout(&output));
        let report: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("JSON");
        let first = &report["diagnostics"][0];
        assert_eq!(first["code"], code, "{limit}: {report}");
        assert!(first["notes"].to_string().contains(key), "{limit}: the note names `{key}`: {report}");
    }
    let (output, _) = runlet(&["check", &source, "--limit", "parse_nesting=30", "--format", "json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let (output, _) = runlet(&["check", &source, "--limit", "parse_nestin=3", "--format", "json"]);
    assert_eq!(output.status.code(), Some(2), "an unknown key is a usage error");
    for limit in ["parse_nesting=5000", "operator_chain=5000"] {
        let (output, _) = runlet(&["check", &source, "--limit", limit, "--format", "json"]);
        assert_eq!(output.status.code(), Some(2), "{limit}: above its ceiling, a usage error");
        assert!(
            stdout(&output).contains("RL8105") && stdout(&output).contains("at most"),
            "{}",
            stdout(&output)
        );
    }
    std::fs::remove_dir_all(&scratch).expect("clean up");
}

/// Chains nested as each other's first operands, each within the chain bound and the brackets
/// within the nesting bound, still make one deep tree: `check` reports it (`RL4002`) where it
/// once overflowed its stack on an 8 KiB program.
#[test]
fn nested_chains_are_a_diagnostic_not_a_stack_overflow() {
    let scratch = std::env::temp_dir().join(format!("runlet-nested-chains-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("scratch");
    let mut expr = "1".to_owned();
    for _ in 0..20 {
        expr = format!("({expr}{})", "+1".repeat(200));
    }
    let source = scratch.join("nested.run");
    std::fs::write(&source, format!("return {expr}\n")).expect("write");
    let source = source.to_string_lossy().into_owned();
    for command in ["check", "fmt", "heal"] {
        let (output, _) = runlet(&[command, &source]);
        let printed = format!("{}{}", stdout(&output), String::from_utf8_lossy(&output.stderr));
        assert_eq!(output.status.code(), Some(1), "{command}: {printed}");
        assert!(printed.contains("RL4002"), "{command}: {printed}");
    }
    std::fs::remove_dir_all(&scratch).expect("clean up");
}
