//! The C and Go hosts: programs of their own, linked against librunlet or built on the Go
//! binding, that read a plan ([`crate::plan`]) on standard input, run it through their
//! language's public API, and print their [`Observation`] as JSON on standard output.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use wait_timeout::ChildExt;

use crate::fixture::Fixture;
use crate::observation::Observation;
use crate::plan::plan;

/// How long one fixture may take in a host program before it counts as hung.
const FIXTURE_TIMEOUT: Duration = Duration::from_secs(60);

/// A host program and the name its results are reported under.
#[derive(Debug, Clone)]
pub struct HostProgram {
    pub name: &'static str,
    pub path: PathBuf,
}

impl HostProgram {
    /// Runs `fixture` in a fresh process of the program.
    pub fn run(&self, fixture: &Fixture) -> Observation {
        match plan(fixture).and_then(|plan| self.observe(&plan)) {
            Ok(observation) => observation,
            Err(message) => Observation::host_error(message),
        }
    }

    fn observe(&self, plan: &[u8]) -> Result<Observation, String> {
        let mut child = Command::new(&self.path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("`{}` does not start: {e}", self.path.display()))?;
        let mut stdin = child.stdin.take().expect("stdin is piped");
        let plan = plan.to_vec();
        let writer = std::thread::spawn(move || stdin.write_all(&plan));
        let stdout = drain(child.stdout.take().expect("stdout is piped"));
        let stderr = drain(child.stderr.take().expect("stderr is piped"));
        let status =
            match child.wait_timeout(FIXTURE_TIMEOUT).map_err(|e| format!("waiting for the host: {e}"))? {
                Some(status) => status,
                None => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(format!("the host did not finish within {} s", FIXTURE_TIMEOUT.as_secs()));
                }
            };
        let _ = writer.join();
        let (stdout, stderr) = (stdout.join().unwrap_or_default(), stderr.join().unwrap_or_default());
        let stderr = String::from_utf8_lossy(&stderr);
        if !status.success() {
            return Err(format!("the host program failed ({status}): {}", tail(&stderr)));
        }
        serde_json::from_slice(&stdout).map_err(|e| {
            format!("the host printed no observation ({e}): {}", tail(&String::from_utf8_lossy(&stdout)))
        })
    }
}

/// Reads a pipe to its end on a thread of its own.
fn drain(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
}

/// The last lines of a program's output, for a failure line.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.trim_end().lines().collect();
    lines[lines.len().saturating_sub(5)..].join(" | ")
}
