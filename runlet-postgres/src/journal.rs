//! [`PostgresJournal`]: the [`Journal`] of runs shared by processes on many machines. Its
//! connections (a `deadpool-postgres` pool, and the heartbeat) live on a small tokio runtime of
//! its own, so it works under any host's runtime, or none.
//!
//! Ownership is fenced. Claiming a run ([`Journal::claim`]) makes the claimer its owner — only
//! while no other process's lease on it holds — and, when the owner changes, bumps the run's
//! epoch; the journal remembers which owner and epoch it holds each run as, and every append
//! it makes to that run is one statement that writes only while the run's row still names that
//! owner and epoch, the owner's lease still holds on the database clock, and the run ends at the
//! expected sequence number ([`crate::append`]). A process that lost a run inserts nothing and
//! gets `RL7012` (`LeaseLost`). An append to a run the journal holds no claim on is allowed only
//! while no live owner holds it.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use parking_lot::Mutex;
use tokio_postgres::NoTls;

use crate::append::{self, Fence};
use crate::error::{Context, is_transient, sql, storage, unknown, unreachable};
use crate::lease::{self, Leases};
use crate::schema;
use runlet::journal::{
    AppendBatch, AppendTime, Blob, Bytes, Journal, JournalError, JournalErrorKind, Record, RunEntry,
    RunHeader, RunId, Snapshot, check_read, owner,
};

/// How a [`PostgresJournal`] connects and holds its runs.
#[derive(Debug, Clone)]
pub struct PostgresOptions {
    /// How long a claim holds without a renewed heartbeat before another process may take the
    /// run over (10 s unless set; at most [`LONGEST_LEASE`]). Renewed every quarter of it.
    pub lease: Duration,
    /// Connections in the pool (16 unless set).
    pub pool_size: usize,
    /// How long an operation keeps trying while the database cannot be reached (a restart, a
    /// broken connection) before it fails with `RL7005` (30 s unless set).
    pub retry_for: Duration,
    /// Open even when the server acknowledges commits before they are flushed
    /// (`synchronous_commit = off`, or `fsync = off`); [`Journal::durability`] then says so.
    /// Refused unless set.
    pub accept_unflushed_commits: bool,
}

/// The longest lease a [`PostgresJournal`] takes: a day. A run whose worker died waits that
/// long at most before another takes it over.
pub const LONGEST_LEASE: Duration = Duration::from_secs(24 * 60 * 60);

impl Default for PostgresOptions {
    fn default() -> Self {
        PostgresOptions {
            lease: Duration::from_secs(10),
            pool_size: 16,
            retry_for: Duration::from_secs(30),
            accept_unflushed_commits: false,
        }
    }
}

/// A journal in a PostgreSQL database (tables in its `runlet` schema). Cheap to clone; clones
/// share the pool, the leases and the claims.
#[derive(Debug, Clone)]
pub struct PostgresJournal {
    pub(crate) shared: Arc<Shared>,
}

#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) pool: Pool,
    pub(crate) config: tokio_postgres::Config,
    /// The server and database, named in every storage error.
    location: String,
    pub(crate) leases: Leases,
    /// The owner and epoch this journal holds each claimed run as.
    held: Mutex<HashMap<RunId, Held>>,
    pub(crate) retry_for: Duration,
    durability: String,
    /// Readers waiting for other processes' appends.
    pub(crate) followers: crate::follow::Followers,
    /// The runtime the connections, the heartbeat and every operation run on.
    io: Option<tokio::runtime::Runtime>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        let Some(io) = self.io.take() else { return };
        match tokio::runtime::Handle::try_current() {
            // On a runtime's thread (the journal's own, say) nothing may wait: its threads end
            // by themselves.
            Ok(_) => io.shutdown_background(),
            // Elsewhere its threads are waited for, so none outlives the journal.
            Err(_) => io.shutdown_timeout(Duration::from_secs(5)),
        }
    }
}

/// A claim this journal holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Held {
    pub owner: String,
    pub epoch: i64,
}

impl PostgresJournal {
    /// Connects to the database at `url` (`postgres://user@host:port/db`), creates or checks
    /// the journal's tables, and starts renewing the leases of the owners that claim runs
    /// through it. Refuses a server that acknowledges commits before they are durable unless
    /// `options` accept it. Blocks while it connects; callable from inside an async task too.
    pub fn connect(url: &str, options: PostgresOptions) -> Result<PostgresJournal, JournalError> {
        let config: tokio_postgres::Config = url.parse().map_err(|err| {
            JournalError::new(
                JournalErrorKind::Storage,
                format!("`{}` is not a PostgreSQL URL: {err}", redact(url)),
            )
        })?;
        if options.lease < Duration::from_millis(1) || options.lease > LONGEST_LEASE {
            return Err(JournalError::new(
                JournalErrorKind::Storage,
                format!(
                    "a lease of {} ms is out of range: give at least 1 ms and at most {} ms (a day)",
                    options.lease.as_millis(),
                    LONGEST_LEASE.as_millis()
                ),
            ));
        }
        let location = location_of(&config);
        let in_location = |error: JournalError| JournalError {
            message: format!("postgres journal `{location}`: {}", error.message),
            ..error
        };
        let io = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("runlet-postgres")
            .enable_all()
            .build()
            .map_err(|err| storage(format!("cannot start the journal's runtime: {err}")))?;
        let manager = Manager::from_config(
            config.clone(),
            NoTls,
            ManagerConfig { recycling_method: RecyclingMethod::Fast },
        );
        let pool = Pool::builder(manager)
            .max_size(options.pool_size.max(1))
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .wait_timeout(Some(options.retry_for))
            .create_timeout(Some(options.retry_for))
            .build()
            .map_err(|err| storage(format!("cannot build the connection pool: {err}")))?;
        let opened = {
            let (pool, handle) = (pool.clone(), io.handle().clone());
            let accept = options.accept_unflushed_commits;
            // On a thread of its own: `block_on` is refused on a thread that runs async tasks.
            std::thread::spawn(move || handle.block_on(open(&pool, accept)))
                .join()
                .unwrap_or_else(|_| Err(storage("opening the journal panicked")))
        };
        let durability = opened.map_err(in_location)?;
        let heartbeat = io.handle().clone();
        let shared = Arc::new(Shared {
            pool,
            config,
            location,
            leases: Leases::new(options.lease),
            held: Mutex::new(HashMap::new()),
            retry_for: options.retry_for,
            durability,
            followers: Default::default(),
            io: Some(io),
        });
        heartbeat.spawn(renew_leases(Arc::downgrade(&shared)));
        Ok(PostgresJournal { shared })
    }

    /// Runs `work` on the journal's runtime; a storage error names the database.
    pub(crate) async fn on_io<T, F>(&self, work: F) -> Result<T, JournalError>
    where
        T: Send + 'static,
        F: std::future::Future<Output = Result<T, JournalError>> + Send + 'static,
    {
        let io = self.shared.io.as_ref().ok_or_else(|| storage("the journal is closed"))?;
        let answer = io.spawn(work).await.map_err(|err| storage(format!("journal task failed: {err}")))?;
        answer.map_err(|error| self.shared.in_location(error))
    }

    /// The claim this journal holds on `run`, if any.
    pub(crate) fn held(&self, run: &RunId) -> Option<Held> {
        self.shared.held.lock().get(run).cloned()
    }

    pub(crate) fn hold(&self, run: &RunId, held: Held) {
        self.shared.held.lock().insert(run.clone(), held);
    }

    /// Forgets the claim on `run`, answering the epoch it was held at.
    pub(crate) fn forget(&self, run: &RunId) -> Option<i64> {
        self.shared.held.lock().remove(run).map(|held| held.epoch)
    }
}

impl Shared {
    /// The runtime the journal's connections live on, while the journal is open.
    pub(crate) fn io(&self) -> Option<&tokio::runtime::Handle> {
        self.io.as_ref().map(tokio::runtime::Runtime::handle)
    }

    fn in_location(&self, error: JournalError) -> JournalError {
        match error.kind {
            JournalErrorKind::Storage | JournalErrorKind::Corrupt => JournalError {
                message: format!("postgres journal `{}`: {}", self.location, error.message),
                ..error
            },
            _ => error,
        }
    }

    /// A pooled connection, waiting (with backoff, up to `retry_for`) while the database cannot
    /// be reached.
    pub(crate) async fn client(&self) -> Result<deadpool_postgres::Client, JournalError> {
        let give_up = tokio::time::Instant::now() + self.retry_for;
        let mut pause = Duration::from_millis(20);
        loop {
            match self.pool.get().await {
                Ok(client) => return Ok(client),
                Err(err) if tokio::time::Instant::now() + pause < give_up => {
                    tracing::debug!(error = %err, "the journal's database is unreachable; trying again");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(1));
                }
                Err(err) => return Err(unreachable(err)),
            }
        }
    }
}

/// Opens the pool's first connection: the tables, and what commits survive.
async fn open(pool: &Pool, accept_unflushed: bool) -> Result<String, JournalError> {
    let mut client = pool.get().await.map_err(unreachable)?;
    schema::migrate(&mut client).await?;
    let setting = |name: &'static str| {
        let client = &client;
        async move {
            let row = client.query_one(&format!("SHOW {name}"), &[]).await.map_err(sql)?;
            Ok::<String, JournalError>(row.get(0))
        }
    };
    let (synchronous, fsync) = (setting("synchronous_commit").await?, setting("fsync").await?);
    let unflushed = synchronous == "off" || fsync == "off";
    if unflushed && !accept_unflushed {
        return Err(storage(format!(
            "the server acknowledges commits before they are durable (synchronous_commit = {synchronous}, fsync = {fsync}): \
             a crash of the database could lose journaled events; turn both on, or accept it explicitly"
        )));
    }
    Ok(format!("postgres-synchronous-commit-{synchronous}{}", if fsync == "off" { "-fsync-off" } else { "" }))
}

/// Renews the held leases every quarter lease while the journal lives. A failed renewal is
/// tried again at the next tick; until one succeeds the local trust runs out on its own.
async fn renew_leases(shared: std::sync::Weak<Shared>) {
    let every = match shared.upgrade() {
        Some(shared) => shared.leases.renew_every(),
        None => return,
    };
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(shared) = shared.upgrade() else { return };
        if shared.leases.owners().is_empty() {
            continue;
        }
        let renewed = match shared.pool.get().await {
            Ok(client) => shared.leases.renew(&client, &[]).await,
            Err(err) => Err(unreachable(err)),
        };
        if let Err(error) = renewed {
            tracing::warn!(error = %error, "runlet: a lease renewal failed");
        }
    }
}

/// `host:port/db` of `config`, for messages (never the password).
fn location_of(config: &tokio_postgres::Config) -> String {
    let host = config
        .get_hosts()
        .first()
        .map(|host| match host {
            tokio_postgres::config::Host::Tcp(name) => name.clone(),
            #[cfg(unix)]
            tokio_postgres::config::Host::Unix(path) => path.display().to_string(),
        })
        .unwrap_or_else(|| "localhost".to_owned());
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!("{host}:{port}/{}", config.get_dbname().unwrap_or("postgres"))
}

/// `url` without its password, for messages.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let credentials = &url[scheme + 3..at];
            match credentials.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

/// Tries `attempt` until it succeeds, fails for good, or the database stayed unreachable for
/// `retry_for`: for operations that are safe to repeat (reads, and writes whose repetition
/// changes nothing).
pub(crate) async fn retrying<T, F, Fut>(shared: &Shared, mut attempt: F) -> Result<T, JournalError>
where
    F: FnMut(deadpool_postgres::Client) -> Fut,
    Fut: std::future::Future<Output = Result<T, tokio_postgres::Error>>,
{
    let give_up = tokio::time::Instant::now() + shared.retry_for;
    let mut pause = Duration::from_millis(20);
    loop {
        let client = shared.client().await?;
        match attempt(client).await {
            Ok(answer) => return Ok(answer),
            Err(err) if is_transient(&err) && tokio::time::Instant::now() + pause < give_up => {
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(1));
            }
            Err(err) => return Err(sql(err)),
        }
    }
}

fn seq_param(seq: u64) -> Result<i64, JournalError> {
    i64::try_from(seq).map_err(|_| {
        JournalError::new(
            JournalErrorKind::InvalidRecord,
            format!("sequence number {seq} exceeds PostgreSQL's bigint"),
        )
    })
}

#[async_trait]
impl Journal for PostgresJournal {
    async fn create_run(&self, header: &RunHeader) -> Result<(), JournalError> {
        let text = serde_json::to_string(header).map_err(|err| storage(err.to_string()))?;
        let (run, version, registry) =
            (header.run_id.to_string(), header.runtime_version.clone(), header.registry_digest.clone());
        let shared = Arc::clone(&self.shared);
        self.on_io(async move {
            let attempts = std::sync::atomic::AtomicU32::new(0);
            let inserted = retrying(&shared, |client| {
                let (run, text, version, registry) =
                    (run.clone(), text.clone(), version.clone(), registry.clone());
                attempts.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                async move {
                    client
                        .execute(
                            "INSERT INTO runlet.runs (run_id, header, runtime_version, registry_digest)
                             VALUES ($1, $2, $3, $4) ON CONFLICT (run_id) DO NOTHING",
                            &[&run, &text, &version, &registry],
                        )
                        .await
                }
            })
            .await?;
            if inserted == 1 {
                return Ok(());
            }
            // A retried insert whose lost first attempt committed finds its own header.
            let retried = attempts.into_inner() > 1;
            let stored = stored_header(&shared, &run).await?;
            match retried && stored.as_deref() == Some(text.as_str()) {
                true => Ok(()),
                false => Err(JournalError::new(
                    JournalErrorKind::RunExists,
                    format!("run `{run}` already exists in this journal"),
                )),
            }
        })
        .await
    }

    async fn header(&self, run: &RunId) -> Result<RunHeader, JournalError> {
        let (shared, run) = (Arc::clone(&self.shared), run.clone());
        self.on_io(async move {
            let text = stored_header(&shared, run.as_str()).await?.ok_or_else(|| unknown(run.as_str()))?;
            serde_json::from_str(&text).map_err(|err| {
                JournalError::new(
                    JournalErrorKind::Corrupt,
                    format!("the header of run `{run}` is unreadable: {err}"),
                )
            })
        })
        .await
    }

    async fn append(&self, run: &RunId, expected_seq: u64, records: &[Record]) -> Result<u64, JournalError> {
        self.append_with_blobs(run, expected_seq, records, &[]).await
    }

    async fn append_with_blobs(
        &self,
        run: &RunId,
        expected_seq: u64,
        records: &[Record],
        blobs: &[Blob],
    ) -> Result<u64, JournalError> {
        let batch =
            AppendBatch { run: run.clone(), expected_seq, records: records.to_vec(), blobs: blobs.to_vec() };
        let fence = Fence::of(self, run)?;
        let shared = Arc::clone(&self.shared);
        self.on_io(async move { append::one(&shared, &batch, &fence).await }).await
    }

    async fn append_many(&self, batches: &[AppendBatch]) -> Vec<Result<u64, JournalError>> {
        let fences: Vec<_> = batches.iter().map(|batch| Fence::of(self, &batch.run)).collect();
        let (shared, batches) = (Arc::clone(&self.shared), batches.to_vec());
        let count = batches.len();
        match self.on_io(async move { Ok(append::many(&shared, &batches, fences).await) }).await {
            Ok(answers) => answers.into_iter().map(|a| a.map_err(|e| self.shared.in_location(e))).collect(),
            Err(error) => vec![Err(error); count],
        }
    }

    fn commits_batches_together(&self) -> bool {
        true
    }

    fn keeps_blobs(&self) -> bool {
        true
    }

    async fn blob(&self, digest: &[u8; 32]) -> Result<Option<Arc<[u8]>>, JournalError> {
        let (shared, digest) = (Arc::clone(&self.shared), digest.to_vec());
        self.on_io(async move {
            let row = retrying(&shared, |client| {
                let digest = digest.clone();
                async move {
                    client.query_opt("SELECT bytes FROM runlet.blobs WHERE digest = $1", &[&digest]).await
                }
            })
            .await?;
            Ok(row.map(|row| Arc::from(row.get::<_, Vec<u8>>(0))))
        })
        .await
    }

    async fn delete_run(&self, run: &RunId) -> Result<(), JournalError> {
        self.forget(run);
        let (shared, run) = (Arc::clone(&self.shared), run.to_string());
        self.on_io(async move {
            let mut client = shared.client().await?;
            let tx = client.transaction().await.map_err(sql)?;
            let deleted =
                tx.execute("DELETE FROM runlet.runs WHERE run_id = $1", &[&run]).await.map_err(sql)?;
            if deleted == 0 {
                return Err(unknown(&run));
            }
            for table in ["records", "snapshots", "blob_refs"] {
                tx.execute(&format!("DELETE FROM runlet.{table} WHERE run_id = $1"), &[&run])
                    .await
                    .map_err(sql)?;
            }
            tx.commit().await.map_err(sql).context("commit the deletion")
        })
        .await
    }

    async fn collect_blobs(&self) -> Result<u64, JournalError> {
        let shared = Arc::clone(&self.shared);
        self.on_io(async move {
            retrying(&shared, |client| async move {
                client
                    .execute(
                        "DELETE FROM runlet.blobs b
                         WHERE NOT EXISTS (SELECT 1 FROM runlet.blob_refs r WHERE r.digest = b.digest)",
                        &[],
                    )
                    .await
            })
            .await
        })
        .await
    }

    async fn read(&self, run: &RunId, after: u64, limit: usize) -> Result<Vec<Record>, JournalError> {
        let (shared, run) = (Arc::clone(&self.shared), run.clone());
        let after_param = i64::try_from(after).unwrap_or(i64::MAX);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.on_io(async move {
            let id = run.to_string();
            let (exists, rows) = retrying(&shared, |client| {
                let id = id.clone();
                async move {
                    let exists = client.query_opt("SELECT 1 FROM runlet.runs WHERE run_id = $1", &[&id]).await?;
                    let statement = client
                        .prepare_cached(
                            "SELECT seq, bytes FROM runlet.records WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
                        )
                        .await?;
                    let rows = client.query(&statement, &[&id, &after_param, &limit]).await?;
                    Ok((exists.is_some(), rows))
                }
            })
            .await?;
            if !exists {
                return Err(unknown(run.as_str()));
            }
            let records: Vec<Record> = rows
                .iter()
                .map(|row| Record { seq: row.get::<_, i64>(0) as u64, bytes: Bytes::from(row.get::<_, Vec<u8>>(1))})
                .collect();
            check_read(&run, after, &records)?;
            Ok(records)
        })
        .await
    }

    async fn append_times(
        &self,
        run: &RunId,
        after: u64,
        through: u64,
    ) -> Result<Vec<AppendTime>, JournalError> {
        let (shared, id) = (Arc::clone(&self.shared), run.to_string());
        let (after, through) =
            (i64::try_from(after).unwrap_or(i64::MAX), i64::try_from(through).unwrap_or(i64::MAX));
        self.on_io(async move {
            let rows = retrying(&shared, |client| {
                let id = id.clone();
                async move {
                    let statement = client
                        .prepare_cached(
                            "SELECT seq, at_ms FROM runlet.records WHERE run_id = $1 AND seq > $2 AND seq <= $3
                             ORDER BY seq",
                        )
                        .await?;
                    client.query(&statement, &[&id, &after, &through]).await
                }
            })
            .await?;
            // Up to the first record an older version appended without a time.
            Ok(rows
                .iter()
                .map_while(|row| {
                    let unix_ms = u64::try_from(row.get::<_, Option<i64>>(1)?).ok()?;
                    Some(AppendTime { through_seq: row.get::<_, i64>(0) as u64, unix_ms })
                })
                .collect())
        })
        .await
    }

    async fn load_snapshot(&self, run: &RunId) -> Result<Option<Snapshot>, JournalError> {
        let (shared, run) = (Arc::clone(&self.shared), run.to_string());
        self.on_io(async move {
            let rows = retrying(&shared, |client| {
                let run = run.clone();
                async move {
                    client
                        .query(
                            "SELECT s.upto_seq, s.bytes FROM runlet.runs r
                             LEFT JOIN runlet.snapshots s ON s.run_id = r.run_id WHERE r.run_id = $1",
                            &[&run],
                        )
                        .await
                }
            })
            .await?;
            let row = rows.first().ok_or_else(|| unknown(&run))?;
            Ok(row
                .get::<_, Option<i64>>(0)
                .map(|upto| Snapshot { upto_seq: upto as u64, bytes: Arc::from(row.get::<_, Vec<u8>>(1)) }))
        })
        .await
    }

    async fn store_snapshot(&self, run: &RunId, snapshot: Snapshot) -> Result<(), JournalError> {
        let (shared, run) = (Arc::clone(&self.shared), run.to_string());
        let upto = seq_param(snapshot.upto_seq)?;
        let bytes = snapshot.bytes.to_vec();
        self.on_io(async move {
            let last: Option<i64> = retrying(&shared, |client| {
                let (run, bytes) = (run.clone(), bytes.clone());
                async move {
                    let row = client
                        .query_opt(
                            "WITH target AS (SELECT run_id, last_seq FROM runlet.runs WHERE run_id = $1),
                                  stored AS (
                                    INSERT INTO runlet.snapshots (run_id, upto_seq, bytes)
                                    SELECT run_id, $2, $3 FROM target WHERE last_seq >= $2
                                    ON CONFLICT (run_id) DO UPDATE SET upto_seq = excluded.upto_seq, bytes = excluded.bytes
                                    RETURNING 1)
                             SELECT last_seq FROM target",
                            &[&run, &upto, &bytes],
                        )
                        .await?;
                    Ok(row.map(|row| row.get(0)))
                }
            })
            .await?;
            match last {
                None => Err(unknown(&run)),
                Some(last) if last < upto => Err(JournalError::new(
                    JournalErrorKind::InvalidRecord,
                    format!("snapshot of run `{run}` covers sequence {upto} but the journal ends at {last}"),
                )),
                Some(_) => Ok(()),
            }
        })
        .await
    }

    async fn appended(&self, run: &RunId, after: u64, within: Duration) {
        self.wait_for_records(run.as_str(), after, within).await
    }

    fn durability(&self) -> Option<&str> {
        Some(&self.shared.durability)
    }

    async fn runs(&self) -> Result<Vec<RunEntry>, JournalError> {
        let shared = Arc::clone(&self.shared);
        self.on_io(async move {
            let query = run_entries("ORDER BY created");
            let rows = retrying(&shared, |client| {
                let query = query.clone();
                async move { client.query(&query, &[]).await }
            })
            .await?;
            Ok(rows.iter().map(run_entry).collect())
        })
        .await
    }

    async fn run_entry(&self, run: &RunId) -> Result<RunEntry, JournalError> {
        let (shared, id) = (Arc::clone(&self.shared), run.to_string());
        self.on_io(async move {
            let query = run_entries("WHERE run_id = $1");
            let row = retrying(&shared, |client| {
                let (query, id) = (query.clone(), id.clone());
                async move { client.query_opt(&query, &[&id]).await }
            })
            .await?;
            row.as_ref().map(run_entry).ok_or_else(|| unknown(&id))
        })
        .await
    }

    fn keeps_owners(&self) -> bool {
        true
    }

    /// Takes the run for `owner` (bumping its epoch unless `owner` holds it already) and starts
    /// renewing `owner`'s lease. Refused (`OwnedElsewhere`, RL7010) while another owner's lease
    /// holds on the database clock, unless this journal renews that owner's lease itself (this
    /// process under another name) or the owner is a process of this machine known to have
    /// ended ([`owner::is_alive`]): two processes never drive one run. A run whose owner's lease
    /// lapsed or whose owner ended is taken over, its former owner fenced off by the new epoch.
    async fn claim(&self, run: &RunId, owner: &str) -> Result<(), JournalError> {
        let (shared, id, owner) = (Arc::clone(&self.shared), run.to_string(), owner.to_owned());
        let epoch = self
            .on_io(async move {
                let mut client = shared.client().await?;
                shared.leases.renew(&client, std::slice::from_ref(&owner)).await?;
                let tx = client.transaction().await.map_err(sql)?;
                // The row is locked first, and the lease read by a later statement (a later
                // snapshot): a claim that committed while this one waited is seen with its lease.
                let locked = tx
                    .query_opt("SELECT owner FROM runlet.runs WHERE run_id = $1 FOR UPDATE", &[&id])
                    .await
                    .map_err(sql)?;
                let current: Option<String> = locked.ok_or_else(|| unknown(&id))?.get(0);
                if let Some(current) = current.filter(|current| *current != owner) {
                    let live = format!("SELECT {}", lease::holds("$1"));
                    let held = tx.query_one(&live, &[&current]).await.map_err(sql)?.get::<_, bool>(0);
                    let ended = owner::is_alive(&current) == Some(false);
                    if held && !ended && !shared.leases.owners().contains(&current) {
                        return Err(JournalError::new(
                            JournalErrorKind::OwnedElsewhere,
                            format!(
                                "run `{id}` is running in another process ({current}, whose lease holds): wait for it, or cancel it with `runlet cancel {id}`"
                            ),
                        ));
                    }
                }
                let row = tx
                    .query_one(
                        "UPDATE runlet.runs SET owner = $2, cancel_requested = false,
                                epoch = CASE WHEN owner IS NOT DISTINCT FROM $2 THEN epoch ELSE epoch + 1 END,
                                status = CASE WHEN status = 'left' THEN 'open' ELSE status END
                         WHERE run_id = $1 RETURNING epoch",
                        &[&id, &owner],
                    )
                    .await
                    .map_err(sql)?;
                tx.commit().await.map_err(sql)?;
                Ok((owner, row.get::<_, i64>(0)))
            })
            .await?;
        self.hold(run, Held { owner: epoch.0, epoch: epoch.1 });
        Ok(())
    }

    async fn release(&self, run: &RunId, owner: &str) -> Result<(), JournalError> {
        self.let_go(run, owner, "open").await
    }

    async fn end(&self, run: &RunId, owner: &str) -> Result<(), JournalError> {
        self.let_go(run, owner, "ended").await
    }

    async fn request_cancel(&self, run: &RunId) -> Result<(), JournalError> {
        let (shared, run) = (Arc::clone(&self.shared), run.to_string());
        self.on_io(async move {
            let query = format!(
                "WITH target AS (SELECT run_id FROM runlet.runs WHERE run_id = $1),
                      marked AS (UPDATE runlet.runs r SET cancel_requested = true
                                 WHERE r.run_id = $1 AND r.status = 'open' AND {} RETURNING 1)
                 SELECT (SELECT count(*) FROM target), (SELECT count(*) FROM marked)",
                lease::holds("r.owner")
            );
            let row = retrying(&shared, |client| {
                let (query, run) = (query.clone(), run.clone());
                async move { client.query_one(&query, &[&run]).await }
            })
            .await?;
            match (row.get::<_, i64>(0), row.get::<_, i64>(1)) {
                (0, _) => Err(unknown(&run)),
                (_, 0) => {
                    Err(JournalError::new(JournalErrorKind::NotOwned, format!("no process owns run `{run}`")))
                }
                _ => Ok(()),
            }
        })
        .await
    }

    async fn cancel_requests(&self, owner: &str) -> Result<Vec<RunId>, JournalError> {
        let (shared, owner) = (Arc::clone(&self.shared), owner.to_owned());
        self.on_io(async move {
            let rows = retrying(&shared, |client| {
                let owner = owner.clone();
                async move {
                    client
                        .query(
                            "SELECT run_id FROM runlet.runs WHERE owner = $1 AND cancel_requested ORDER BY run_id",
                            &[&owner],
                        )
                        .await
                }
            })
            .await?;
            Ok(rows.iter().map(|row| RunId::new(row.get::<_, String>(0))).collect())
        })
        .await
    }
}

impl PostgresJournal {
    /// `owner` stops driving `run`, leaving it `status`: `open` for another process to take
    /// (workers are woken, also for a run no process owned: a submitted one), `ended`, or
    /// `left` for an operator. Nothing changes when another owner holds it by now, and an
    /// ended run stays ended (a process that claimed it, to read it to its end, lets it go).
    pub(crate) async fn let_go(
        &self,
        run: &RunId,
        owner: &str,
        status: &'static str,
    ) -> Result<(), JournalError> {
        // The epoch of this journal's claim, when it holds one: a claim lost and won again by
        // the same owner since is not let go by a stale release.
        let epoch = self.forget(run);
        let (shared, run, owner) = (Arc::clone(&self.shared), run.to_string(), owner.to_owned());
        self.on_io(async move {
            retrying(&shared, |client| {
                let (run, owner) = (run.clone(), owner.clone());
                async move {
                    client
                        .execute(
                            "WITH freed AS (UPDATE runlet.runs SET owner = NULL,
                                                   status = CASE WHEN status = 'ended' THEN status ELSE $3 END
                                            WHERE run_id = $1 AND owner = $2
                                              AND ($4::bigint IS NULL OR epoch = $4)
                                            RETURNING run_id)
                             SELECT pg_notify('runlet_work', r.run_id) FROM runlet.runs r
                             WHERE $3 = 'open' AND r.run_id = $1 AND r.status = 'open'
                               AND (r.owner IS NULL OR EXISTS (SELECT 1 FROM freed))",
                            &[&run, &owner, &status, &epoch],
                        )
                        .await
                }
            })
            .await
            .map(drop)
        })
        .await
    }
}

/// The query of the runs' entries that `tail` selects and orders: an owner is told only while
/// its lease holds.
fn run_entries(tail: &str) -> String {
    format!(
        "SELECT run_id, last_seq, last_append_ms, CASE WHEN {} THEN owner END FROM runlet.runs r {tail}",
        lease::holds("r.owner")
    )
}

/// One row of [`run_entries`].
fn run_entry(row: &tokio_postgres::Row) -> RunEntry {
    RunEntry {
        run_id: RunId::new(row.get::<_, String>(0)),
        last_seq: row.get::<_, i64>(1) as u64,
        last_append_unix_ms: row.get::<_, Option<i64>>(2).and_then(|at| u64::try_from(at).ok()),
        owner: row.get(3),
    }
}

/// The header text of `run`, if the journal has the run.
async fn stored_header(shared: &Shared, run: &str) -> Result<Option<String>, JournalError> {
    let run = run.to_owned();
    let row = retrying(shared, |client| {
        let run = run.clone();
        async move { client.query_opt("SELECT header FROM runlet.runs WHERE run_id = $1", &[&run]).await }
    })
    .await?;
    Ok(row.map(|row| row.get(0)))
}
