//! Shared by the MCP end-to-end tests of runlet-mcp and runlet-cli (each includes this file):
//! the test servers, installed once by scripts/install-mcp-servers (a test fails, never skips,
//! when they cannot be installed), the commands that start them, and the Streamable HTTP
//! server run for a test.

#![allow(dead_code)]

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The installed servers.
pub struct Servers {
    dir: PathBuf,
}

/// Installs the servers on first use; panics with the installer's output when it fails.
pub fn servers() -> &'static Servers {
    static SERVERS: OnceLock<Servers> = OnceLock::new();
    SERVERS.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace").to_owned();
        let output = Command::new(root.join("scripts/install-mcp-servers"))
            .output()
            .expect("scripts/install-mcp-servers runs (it needs bash, npm and python3)");
        assert!(
            output.status.success(),
            "the MCP test servers could not be installed:\n{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        Servers { dir: root.join("tests/mcp-servers") }
    })
}

impl Servers {
    /// The command of a reference server: `filesystem`, `memory` or `everything`.
    pub fn reference(&self, name: &str) -> String {
        path_text(&self.dir.join("node_modules/.bin").join(format!("mcp-server-{name}")))
    }

    /// The memory server keeping its graph in `file`.
    pub fn memory(&self, file: &Path) -> String {
        format!("env MEMORY_FILE_PATH={} {}", path_text(file), self.reference("memory"))
    }

    /// The Python lab server in `mode` (`stdio`, `stubborn`) as one command line.
    pub fn lab(&self, mode: &str) -> String {
        format!(
            "{} {} {mode}",
            path_text(&self.dir.join(".venv/bin/python")),
            path_text(&self.dir.join("lab_server.py"))
        )
    }

    /// The server that breaks the protocol the way `mode` says (`rogue_server.py`), as one
    /// command line.
    pub fn rogue(&self, mode: &str) -> String {
        format!(
            "{} {} {mode}",
            path_text(&self.dir.join(".venv/bin/python")),
            path_text(&self.dir.join("rogue_server.py"))
        )
    }

    /// Starts the lab server over Streamable HTTP on a free port of 127.0.0.1.
    pub fn lab_http(&self) -> HttpLab {
        self.http_server("lab_server.py", &[])
    }

    /// Starts the server that breaks the protocol the way `mode` says over Streamable HTTP.
    pub fn rogue_http(&self, mode: &str) -> HttpLab {
        self.http_server("rogue_server.py", &mode.split(' ').collect::<Vec<_>>())
    }

    /// Starts `script http PORT ARGS…` on a free port of 127.0.0.1, once it listens.
    fn http_server(&self, script: &str, args: &[&str]) -> HttpLab {
        // One server starts at a time: between the free port's release and the server's bind,
        // no other test of this process may take the same port.
        static STARTING: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _starting = STARTING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let port = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
        let child = Command::new(self.dir.join(".venv/bin/python"))
            .arg(self.dir.join(script))
            .args(["http", &port.to_string()])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the server starts");
        let lab = HttpLab { child, url: format!("http://127.0.0.1:{port}/mcp") };
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(started.elapsed() < Duration::from_secs(60), "{script} did not listen on {port}");
            std::thread::sleep(Duration::from_millis(50));
        }
        lab
    }
}

/// A running Streamable HTTP server, stopped when dropped.
pub struct HttpLab {
    child: Child,
    pub url: String,
}

impl Drop for HttpLab {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn path_text(path: &Path) -> String {
    path.to_str().expect("UTF-8 paths").to_owned()
}

/// A fresh scratch directory for one test.
pub fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("runlet-mcp-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}
