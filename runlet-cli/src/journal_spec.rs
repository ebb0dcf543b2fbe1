//! `--journal memory|sqlite:PATH|postgres://…` and `--durability full|normal`: where runs are
//! journaled, as every command that runs or manages runs takes it (INTERFACES.md §4.1, §4.3),
//! and the digest key a durable journal's runs are keyed with when the command line names none.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use runlet::diag::codes;
use runlet::engine::SharedPermits;
use runlet::journal::{Durability, Journal, MemoryJournal, SqliteJournal};
use runlet::runtime::RuntimeBuilder;
use runlet_postgres::{PostgresJournal, PostgresOptions};

use crate::digest_key::{self, HostKey};
use crate::failure::Failure;

/// How many of a run's latest records a `--journal memory` run keeps.
const MEMORY_RECORDS_KEPT: usize = 4096;

/// `--durability`: what an acknowledged append of an SQLite journal survives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum DurabilityArg {
    /// Each commit is on stable storage before the run goes on (survives a power loss).
    #[default]
    Full,
    /// Survives a crash of the process; a power loss may drop the last commits.
    Normal,
}

/// Where runs are journaled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JournalSpec {
    Memory,
    Sqlite(PathBuf),
    /// A PostgreSQL URL (`postgres://` or `postgresql://`), shared by many processes.
    Postgres(String),
}

impl JournalSpec {
    /// Reads the value of `--journal`.
    pub fn parse(text: &str) -> Result<JournalSpec, Failure> {
        if text == "memory" {
            return Ok(JournalSpec::Memory);
        }
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            return Ok(JournalSpec::Postgres(text.to_owned()));
        }
        match text.strip_prefix("sqlite:") {
            // `sqlite://j.db` reads like a URL, and would be the file `/j.db`; `sqlite:file:j.db`
            // is an SQLite URI, whose file is not the path the journal's key file is named after;
            // `sqlite::memory:` keeps nothing (`--journal memory` says so).
            Some(path) if path.starts_with("//") || path.starts_with("file:") || path == ":memory:" => {
                Err(Failure::new(
                    codes::INVALID_ARGUMENT,
                    format!(
                        "`--journal {text}`: `sqlite:` takes a path, not a URL or an SQLite URI: `sqlite:j.db`, `sqlite:/var/lib/runs.db`"
                    ),
                ))
            }
            Some(path) if !path.is_empty() => Ok(JournalSpec::Sqlite(PathBuf::from(path))),
            _ => Err(Failure::new(
                codes::INVALID_ARGUMENT,
                format!("`--journal {text}`: use `memory`, `sqlite:PATH` or `postgres://…`"),
            )),
        }
    }

    /// A journal that outlives the process and holds runs already: what the run manager and the
    /// page server read. An SQLite journal must exist (they never make one, so a mistyped path
    /// is an error rather than an empty journal made beside the real one).
    pub fn durable(text: &str) -> Result<JournalSpec, Failure> {
        match JournalSpec::parse(text)? {
            JournalSpec::Memory => Err(Failure::new(
                codes::INVALID_ARGUMENT,
                "`--journal memory` keeps nothing once its process ends: name the journal runs were written to (`sqlite:PATH` or `postgres://…`)",
            )),
            JournalSpec::Sqlite(path) if !path.exists() => Err(Failure::new(
                codes::JOURNAL_STORAGE,
                format!(
                    "there is no journal at `{}`: runs are journaled there by `runlet run … --journal sqlite:{}`",
                    path.display(),
                    path.display()
                ),
            )),
            // An empty file would be made a fresh journal: a file no run was journaled to.
            JournalSpec::Sqlite(path)
                if std::fs::metadata(&path).is_ok_and(|file| file.is_file() && file.len() == 0) =>
            {
                Err(Failure::new(
                    codes::JOURNAL_STORAGE,
                    format!(
                        "`{}` is an empty file, not a journal: runs are journaled by `runlet run … --journal sqlite:PATH`",
                        path.display()
                    ),
                ))
            }
            durable => Ok(durable),
        }
    }

    /// Opens the journal. A memory journal keeps only each run's latest records: a one-shot run
    /// is never read back, and its memory then stays flat however long it runs.
    pub fn open(&self, durability: DurabilityArg) -> Result<OpenedJournal, Failure> {
        let journal: Arc<dyn Journal> = match self {
            JournalSpec::Postgres(_) if durability == DurabilityArg::Normal => {
                return Err(Failure::new(
                    codes::INVALID_ARGUMENT,
                    "`--durability normal` applies to SQLite journals: a PostgreSQL journal's commits are as durable as its server's `synchronous_commit`, which must be on",
                ));
            }
            JournalSpec::Postgres(url) => {
                return open_postgres(url, PostgresOptions::default()).map(OpenedJournal::postgres);
            }
            JournalSpec::Memory => Arc::new(MemoryJournal::keeping_last(MEMORY_RECORDS_KEPT)),
            JournalSpec::Sqlite(path) => {
                let durability = match durability {
                    DurabilityArg::Full => Durability::Full,
                    DurabilityArg::Normal => Durability::Normal,
                };
                Arc::new(SqliteJournal::open(path, durability).map_err(|error| {
                    Failure::new(
                        error.code(),
                        format!("cannot open the journal `{}`: {error}", path.display()),
                    )
                })?)
            }
        };
        Ok(OpenedJournal { journal, permits: None })
    }

    /// The digest key of `flag` (or `RUNLET_DIGEST_KEY_FILE`); without either, an SQLite
    /// journal's own key file beside it ([`JournalSpec::key_file`], made on first use), so its
    /// runs can be resumed by a later process; a memory journal's runs use a random key of
    /// this process. A PostgreSQL journal's runs move between machines, so every process must
    /// be given the same key: without one it is an error.
    pub fn digest_key(&self, flag: Option<&Path>) -> Result<Option<HostKey>, Failure> {
        self.key(flag, true)
    }

    /// Like [`JournalSpec::digest_key`], for runs journaled already: an SQLite journal's key
    /// file is read and never made, since a new key could not verify them.
    pub fn existing_digest_key(&self, flag: Option<&Path>) -> Result<Option<HostKey>, Failure> {
        self.key(flag, false)
    }

    fn key(&self, flag: Option<&Path>, make: bool) -> Result<Option<HostKey>, Failure> {
        if let Some(key) = digest_key::load(flag)? {
            return Ok(Some(key));
        }
        if let JournalSpec::Postgres(_) = self {
            return Err(Failure::new(
                codes::INVALID_ARGUMENT,
                "the runs of a PostgreSQL journal are taken over by other processes, which must key their digests alike: give every process the same key with `--digest-key-file PATH` or `RUNLET_DIGEST_KEY_FILE`",
            ));
        }
        match self.key_file() {
            Some(path) if make => digest_key::load_or_create(&path).map(Some),
            Some(path) if !path.exists() => Err(Failure::new(
                codes::INVALID_DIGEST_KEY,
                format!(
                    "no digest key: the journal's key file `{}` does not exist; give the key its runs were keyed with (`--digest-key-file PATH` or `RUNLET_DIGEST_KEY_FILE`)",
                    path.display()
                ),
            )),
            Some(path) => digest_key::load(Some(&path)),
            None => Ok(None),
        }
    }

    /// The files of an SQLite journal, named for messages: the database, its write-ahead log
    /// and shared memory, its rollback journal and its digest key; none for other journals.
    pub fn files(&self) -> Vec<(&'static str, PathBuf)> {
        let JournalSpec::Sqlite(path) = self else { return Vec::new() };
        let beside = |suffix: &str| {
            let mut name = path.clone().into_os_string();
            name.push(suffix);
            PathBuf::from(name)
        };
        let mut files = vec![
            ("the journal", path.clone()),
            ("the journal's write-ahead log", beside("-wal")),
            ("the journal's shared memory", beside("-shm")),
            ("the journal's rollback journal", beside("-journal")),
        ];
        files.extend(self.key_file().map(|key| ("the journal's digest key", key)));
        files
    }

    /// `PATH.digest-key` beside an SQLite journal at `PATH`.
    fn key_file(&self) -> Option<PathBuf> {
        match self {
            JournalSpec::Memory | JournalSpec::Postgres(_) => None,
            JournalSpec::Sqlite(path) => {
                let mut name = path.clone().into_os_string();
                name.push(".digest-key");
                Some(PathBuf::from(name))
            }
        }
    }
}

/// An open journal, and the permits runtimes on it share with other processes (a PostgreSQL
/// journal's: tools' and resource groups' caps then hold over every process on the database).
#[derive(Clone)]
pub struct OpenedJournal {
    pub journal: Arc<dyn Journal>,
    permits: Option<Arc<dyn SharedPermits>>,
}

impl OpenedJournal {
    pub fn postgres(journal: PostgresJournal) -> OpenedJournal {
        let permits = Arc::new(journal.permits()) as Arc<dyn SharedPermits>;
        OpenedJournal { journal: Arc::new(journal), permits: Some(permits) }
    }

    /// `builder` journaling here, sharing the journal's permits.
    pub fn attach(&self, builder: RuntimeBuilder) -> RuntimeBuilder {
        let builder = builder.journal(Arc::clone(&self.journal));
        match &self.permits {
            Some(permits) => builder.shared_permits(Arc::clone(permits)),
            None => builder,
        }
    }
}

/// Connects to the PostgreSQL journal at `url`.
pub fn open_postgres(url: &str, options: PostgresOptions) -> Result<PostgresJournal, Failure> {
    PostgresJournal::connect(url, options)
        .map_err(|error| Failure::new(error.code(), format!("cannot open the journal: {error}")))
}
