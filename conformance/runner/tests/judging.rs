//! The runner judged through its binary: fixtures that pass, that depart from their `expect` in
//! each checked way, that crash and resume, and files that are not fixtures, run on the Rust
//! host; the output must be `tests/judging.stdout` line for line, and the exit status failure.

use std::path::Path;
use std::process::Command;

#[test]
fn the_runner_reports_every_difference_and_counts_per_host() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let output = Command::new(env!("CARGO_BIN_EXE_runlet-conformance"))
        .current_dir(here)
        .args(["--host", "rust", "--jobs", "2", "tests/fixtures"])
        // The judge is under test, not the journals: the golden output has the memory and
        // SQLite hosts alone, wherever a PostgreSQL server is configured.
        .env_remove("RUNLET_TEST_POSTGRES_URL")
        .env_remove("CI")
        .output()
        .expect("the runner starts");
    let expected = std::fs::read_to_string(here.join("tests/judging.stdout")).expect("the golden output");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        expected,
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn a_host_program_that_is_missing_is_a_usage_error() {
    let output = Command::new(env!("CARGO_BIN_EXE_runlet-conformance"))
        .args(["--host", "c", "tests/fixtures"])
        .output()
        .expect("the runner starts");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("`--host c` needs `--c-host PATH`"));
}
