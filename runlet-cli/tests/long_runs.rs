//! A long run through the real `runlet` binary with its default in-memory journal keeps flat
//! memory (spec §10): 100,000 calls of a `for … limit 16` end within a peak RSS (from
//! `getrusage` of the child, not a timing assertion) that a journal holding every record — about
//! 1.7 KB per call — would pass several times over. Its own test binary, so no other test's child
//! raises the peak it reads.

mod support;

use std::path::PathBuf;
use std::process::Command;

/// Well above what the run needs with a bounded journal (about 35 MiB in a debug build), well
/// below the 220 MiB that keeping every record in memory took (measured before it stopped).
const PEAK_RSS_BOUND_MIB: i64 = 96;

fn probe(name: &str) -> String {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "probes", name].iter().collect();
    path.to_string_lossy().into_owned()
}

#[test]
fn a_long_loop_keeps_flat_memory_with_the_default_journal() {
    let output = Command::new(env!("CARGO_BIN_EXE_runlet"))
        .args(["run", &probe("long_loop.run"), "--registry", &probe("long_loop.registry.json")])
        .args(["--tools", &probe("long_loop.tools.json"), "--format", "json"])
        .output()
        .expect("runs the binary");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("a JSON report");
    assert_eq!(report["value"], 100_000, "{report}");
    let peak_mib = support::peak_child_rss_mib();
    assert!(peak_mib < PEAK_RSS_BOUND_MIB, "`runlet run` of 100,000 calls peaked at {peak_mib} MiB");
}
