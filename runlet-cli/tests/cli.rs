//! End-to-end tests of the `runlet` binary: exit statuses and output shapes of INTERFACES.md §4
//! for `check`, `fmt`, `heal` and `explain`.

use std::path::PathBuf;
use std::process::{Command, Output};

fn runlet(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_runlet")).args(args).output().expect("run the runlet binary")
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
    let output = runlet(&["check", ok.path()]);
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
    assert_eq!(runlet(&["check", check.path()]).status.code(), Some(0));
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
