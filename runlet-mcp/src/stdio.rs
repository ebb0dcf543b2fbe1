//! The process of a stdio server: started in a process group of its own with piped standard
//! streams, its standard error kept as a short tail for error messages, and a bounded shutdown —
//! standard input closed, a grace period, `SIGTERM` to the group, another, then `SIGKILL`.

use std::collections::{BTreeMap, VecDeque};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::error::McpError;

/// How many lines of a server's standard error are kept for messages.
const STDERR_LINES: usize = 20;

/// How many bytes of each kept line: a server may write megabytes without a line break (a
/// progress bar redrawn with `\r`, a dump), and a message quotes only the start of each line.
const STDERR_LINE_BYTES: usize = 400;

/// The last lines of a server's standard error, each cut to [`STDERR_LINE_BYTES`]: bounded
/// however much the server writes. `\r` ends a line as `\n` does.
#[derive(Debug, Default)]
struct StderrTail {
    lines: VecDeque<String>,
    current: Vec<u8>,
    /// Bytes of the current line past the cut.
    cut: bool,
}

impl StderrTail {
    fn push(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            match byte {
                b'\n' | b'\r' => self.end_line(),
                _ if self.current.len() < STDERR_LINE_BYTES => self.current.push(byte),
                _ => self.cut = true,
            }
        }
    }

    fn end_line(&mut self) {
        if self.current.is_empty() && !self.cut {
            return;
        }
        let mut line = String::from_utf8_lossy(&self.current).into_owned();
        if std::mem::take(&mut self.cut) {
            line.push('…');
        }
        self.current.clear();
        if self.lines.len() == STDERR_LINES {
            self.lines.pop_front();
        }
        self.lines.push_back(line);
    }

    /// The kept lines and the one being written, joined.
    fn text(&self) -> String {
        let mut lines: Vec<String> = self.lines.iter().cloned().collect();
        if !self.current.is_empty() {
            let mut line = String::from_utf8_lossy(&self.current).into_owned();
            if self.cut {
                line.push('…');
            }
            lines.push(line);
        }
        lines.join("\n")
    }
}

/// A running stdio server process.
#[derive(Debug)]
pub(crate) struct ServerProcess {
    child: Child,
    /// The process group the server and its children are in (the child's own pid).
    group: Option<i32>,
    stderr: Arc<Mutex<StderrTail>>,
    /// The task reading standard error; it ends when the stream does.
    reader: Option<tokio::task::JoinHandle<()>>,
}

/// How a server process ended at shutdown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// It exited by itself once its standard input closed (or had exited before).
    Exited,
    /// It needed `SIGTERM`.
    Terminated,
    /// It needed `SIGKILL`.
    Killed,
}

impl ServerProcess {
    /// Starts `command args…` with `env` added to this process's environment; returns the process
    /// and the server's standard output and input, for the transport.
    pub(crate) fn spawn(
        server: &str,
        command: &str,
        args: &[String],
        env: &BTreeMap<String, String>,
    ) -> Result<(ServerProcess, ChildStdout, ChildStdin), McpError> {
        let mut child = Command::new(command)
            .args(args)
            .envs(env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .map_err(|error| McpError::start(server, format!("`{command}` cannot be started: {error}")))?;
        let group = child.id().and_then(|pid| i32::try_from(pid).ok());
        let (Some(stdout), Some(stdin), Some(stderr)) =
            (child.stdout.take(), child.stdin.take(), child.stderr.take())
        else {
            unreachable!("all three streams were asked to be piped")
        };
        let tail = Arc::new(Mutex::new(StderrTail::default()));
        let kept = tail.clone();
        let reader = tokio::spawn(async move {
            let mut stderr = stderr;
            let mut chunk = [0u8; 8192];
            while let Ok(read @ 1..) = stderr.read(&mut chunk).await {
                kept.lock().push(&chunk[..read]);
            }
        });
        Ok((ServerProcess { child, group, stderr: tail, reader: Some(reader) }, stdout, stdin))
    }

    /// The last lines the server wrote to its standard error, joined.
    pub(crate) fn stderr_tail(&self) -> String {
        self.stderr.lock().text()
    }

    /// How the process ended, waiting up to `wait` for it to (a server whose pipe closed is
    /// usually exiting) and as long again for the rest of its standard error.
    pub(crate) async fn ended(&mut self, wait: Duration) -> Option<String> {
        let status = tokio::time::timeout(wait, self.child.wait()).await.ok()?.ok()?;
        self.stop_group();
        if let Some(reader) = self.reader.take() {
            let _ = tokio::time::timeout(wait, reader).await;
        }
        Some(status.to_string())
    }

    /// Stops the process whose standard input the caller has closed: waits `grace` for it to
    /// exit, then signals its group with `SIGTERM`, waits `grace` again, then `SIGKILL`. What
    /// the server left of its group once it exited (a child it started and did not stop) is
    /// killed too.
    pub(crate) async fn shutdown(mut self, grace: Duration) -> Stopped {
        let stopped = if self.wait(grace).await {
            Stopped::Exited
        } else {
            self.signal(libc::SIGTERM);
            if self.wait(grace).await {
                Stopped::Terminated
            } else {
                self.signal(libc::SIGKILL);
                let _ = self.child.wait().await;
                Stopped::Killed
            }
        };
        self.stop_group();
        stopped
    }

    /// Kills what is left of the group of a server that has exited, once, right as its exit is
    /// seen: its id is then forgotten, since a later process may lead a group of that id.
    fn stop_group(&mut self) {
        self.signal(libc::SIGKILL);
        self.group = None;
    }

    async fn wait(&mut self, grace: Duration) -> bool {
        tokio::time::timeout(grace, self.child.wait()).await.is_ok()
    }

    fn signal(&self, signal: libc::c_int) {
        if let Some(group) = self.group {
            // SAFETY: `killpg` only sends a signal; the group is the one the child leads.
            unsafe {
                libc::killpg(group, signal);
            }
        }
    }
}

impl Drop for ServerProcess {
    /// A process not shut down (the client dropped without `shutdown`) is killed with its group,
    /// and so is what is left of the group of one that exited unseen.
    fn drop(&mut self) {
        self.signal(libc::SIGKILL);
    }
}

/// Blocks `SIGPIPE` on the calling thread (the client's runtime threads, which write to the
/// servers' pipes): a write to a server that exited then fails with `EPIPE` — and the call with
/// it — instead of the signal ending the host process, whatever the host's disposition of it.
pub(crate) fn block_sigpipe() {
    #[cfg(unix)]
    // SAFETY: the set is initialized by `sigemptyset` before use; changing this thread's mask
    // has no other effect.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stderr_tail_is_bounded_whatever_the_server_writes() {
        let mut tail = StderrTail::default();
        for _ in 0..1_000 {
            tail.push(&[b'E'; 8192]);
        }
        tail.push(b"\rdone\r\n");
        for n in 0..30 {
            tail.push(format!("line {n}\n").as_bytes());
        }
        tail.push(b"last, unfinished");
        let text = tail.text();
        assert!(text.len() < STDERR_LINES * (STDERR_LINE_BYTES + 4), "{} bytes", text.len());
        assert!(text.starts_with("line 10\n"), "{text}");
        assert!(text.ends_with("line 29\nlast, unfinished"), "{text}");
        let mut cut = StderrTail::default();
        cut.push(&[b'x'; 1000]);
        cut.push(b"\n");
        assert_eq!(cut.text(), format!("{}…", "x".repeat(STDERR_LINE_BYTES)));
    }
}
