//! What the small end-to-end test files share: running the binary in a scratch directory of its
//! own, and reading what it printed under the error contract (INTERFACES.md §1, §4).

#![allow(dead_code)] // each test file uses the part it needs

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A fresh directory for one test, removed when dropped.
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn new(test: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("runlet-cli-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        Scratch(dir)
    }

    /// Writes `contents` to the file `name` and returns its path.
    pub fn file(&self, name: &str, contents: impl AsRef<[u8]>) -> String {
        let path = self.0.join(name);
        std::fs::write(&path, contents).expect("write scratch file");
        text(&path)
    }

    /// The path of `name` in the directory, without creating it.
    pub fn path(&self, name: &str) -> String {
        text(&self.0.join(name))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn text(path: &Path) -> String {
    path.to_str().expect("UTF-8 path").to_owned()
}

pub fn runlet(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_runlet")).args(args).output().expect("run the runlet binary")
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8")
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The one JSON object a `--format json` command printed on stdout.
pub fn json(output: &Output) -> serde_json::Value {
    serde_json::from_str(&stdout(output)).unwrap_or_else(|e| {
        panic!("stdout is not one JSON object ({e}): {}\nstderr: {}", stdout(output), stderr(output))
    })
}

/// Of two processes started at once to drive one run, checks that exactly one did (exit 0)
/// while the other refused with RL7010, and answers the report of the one that drove it.
pub fn one_drove_and_the_other_said_so(both: &[Output; 2]) -> serde_json::Value {
    let mut statuses: Vec<Option<i32>> = both.iter().map(|output| output.status.code()).collect();
    statuses.sort();
    assert_eq!(statuses, [Some(0), Some(2)], "{} / {}", stdout(&both[0]), stdout(&both[1]));
    let (drove, refused): (Vec<&Output>, Vec<&Output>) =
        both.iter().partition(|output| output.status.code() == Some(0));
    assert_eq!(failure_code(refused[0]), "RL7010", "{}", stdout(refused[0]));
    assert!(stdout(refused[0]).contains("is running in another process"), "{}", stdout(refused[0]));
    json(drove[0])
}

/// The code of the first diagnostic of a `--format json` failure, after checking the exit status
/// is 2 and the diagnostic has every field of §1.
pub fn failure_code(output: &Output) -> String {
    assert_eq!(output.status.code(), Some(2), "stdout: {}\nstderr: {}", stdout(output), stderr(output));
    let report = json(output);
    assert!(report["source_digest"].as_str().is_some_and(|d| d.starts_with("sha256:")), "{report}");
    let first = &report["diagnostics"][0];
    for field in ["code", "severity", "message", "span", "labels", "help", "fixes", "candidates", "doc"] {
        assert!(first.get(field).is_some(), "diagnostic lacks `{field}`: {first}");
    }
    assert_eq!(first["severity"], "error");
    first["code"].as_str().expect("a code").to_owned()
}

/// A program, registry and fixture file that run: `echo.say("hi")` answers `"hi"`.
pub const PROGRAM: &str = "said = echo.say(word)\nreturn said\n";
pub const REGISTRY: &str = r#"{"tools": [{"name": "echo.say", "params": [{"name": "text", "schema": {"type": "string"}}],
  "outputSchema": {"type": "string"}, "execution": "pure"}]}"#;
pub const TOOLS: &str = r#"{"echo.say": [{"result": "hi"}]}"#;
pub const INPUTS: &str = r#"{"word": "hi"}"#;

/// The peak RSS, in MiB, of the largest child this test process has waited for (`getrusage`):
/// a measure of memory, not of time.
pub fn peak_child_rss_mib() -> i64 {
    // SAFETY: getrusage writes one rusage struct into the zeroed value it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        assert_eq!(libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage), 0, "getrusage");
        usage
    };
    // Linux reports ru_maxrss in KiB.
    usage.ru_maxrss / 1024
}
