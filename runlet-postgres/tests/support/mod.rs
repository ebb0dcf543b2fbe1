//! The PostgreSQL server the tests use: `RUNLET_TEST_POSTGRES_URL` (which `scripts/test` sets,
//! having started one with `scripts/postgres`), and a fresh database on it for each test. Without
//! the variable a test fails under `CI=true` and is skipped (saying so) elsewhere.

#![allow(dead_code)]

use std::sync::atomic::{AtomicU64, Ordering};

use tokio_postgres::NoTls;

/// The variable naming the server.
pub const SERVER_URL: &str = "RUNLET_TEST_POSTGRES_URL";

/// A database of its own for one test, dropped with it: its URL.
#[derive(Debug)]
pub struct Database {
    pub url: String,
    name: String,
    server: String,
}

static NEXT: AtomicU64 = AtomicU64::new(1);

/// A fresh, empty database on the test server; `None` (the test then returns) when no server is
/// configured outside CI.
pub fn database(label: &str) -> Option<Database> {
    let server = match std::env::var(SERVER_URL) {
        Ok(url) if !url.is_empty() => url,
        _ if std::env::var("CI").is_ok_and(|ci| ci == "true") => {
            panic!(
                "{SERVER_URL} is not set and CI=true: these tests need a PostgreSQL server (scripts/postgres start DIR)"
            )
        }
        _ => {
            eprintln!(
                "skipped: {SERVER_URL} is not set (scripts/test starts a server with scripts/postgres)"
            );
            return None;
        }
    };
    let name = format!("runlet_{label}_{}_{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
    admin(&server, &format!("CREATE DATABASE {name}"));
    let base = server.rsplit_once('/').map_or(server.as_str(), |(base, _)| base);
    Some(Database { url: format!("{base}/{name}"), name, server })
}

impl Drop for Database {
    fn drop(&mut self) {
        admin(&self.server, &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name));
    }
}

/// Runs `statement` on the server's `postgres` database.
pub fn admin(server: &str, statement: &str) {
    execute(server, statement);
}

/// Runs `statement` on the database at `url`, on a connection of its own.
pub fn execute(url: &str, statement: &str) {
    let pool = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio");
    pool.block_on(async {
        let (client, connection) =
            tokio_postgres::connect(url, NoTls).await.expect("connect to the test server");
        let driver = tokio::spawn(connection);
        client
            .batch_execute(statement)
            .await
            .unwrap_or_else(|err| panic!("{statement}: {:?}", err.as_db_error().map(|db| db.message())));
        drop(client);
        let _ = driver.await;
    });
}

/// A PostgreSQL server of one test's own (`scripts/postgres`), for tests that restart it;
/// stopped and removed when dropped.
#[derive(Debug)]
pub struct Server {
    pub url: String,
    dir: std::path::PathBuf,
}

fn script() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/postgres")
}

impl Server {
    pub fn start(label: &str) -> Server {
        let dir = std::env::temp_dir().join(format!("runlet-pg-{label}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let output =
            std::process::Command::new(script()).arg("start").arg(&dir).output().expect("scripts/postgres");
        assert!(
            output.status.success(),
            "scripts/postgres start: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let url = String::from_utf8(output.stdout).expect("a URL").trim().to_owned();
        Server { url, dir }
    }

    /// Stops the server and starts it again on the same port.
    pub fn restart(&self) {
        let output = std::process::Command::new(script())
            .arg("restart")
            .arg(&self.dir)
            .output()
            .expect("scripts/postgres");
        assert!(
            output.status.success(),
            "scripts/postgres restart: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = std::process::Command::new(script()).arg("stop").arg(&self.dir).output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A run header with fixed digests, for journal-level tests.
pub fn header(id: &str) -> runlet::journal::RunHeader {
    runlet::journal::RunHeader {
        run_id: runlet::journal::RunId::new(id),
        language_version: 1,
        runtime_version: "0.1.0".into(),
        source_digest: "sha256:source".into(),
        registry_digest: "sha256:registry".into(),
        inputs_digest: "sha256:inputs".into(),
        config_digest: "sha256:config".into(),
        keyed_digest: "hmac-sha256:test".into(),
        value_encoding_version: 1,
        event_encoding_version: 1,
        retained: None,
    }
}
