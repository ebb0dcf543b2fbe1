//! Shared permits ([`SharedPermits`]): tool and resource-group caps (spec §4.5) that hold over
//! every process whose runtime takes permits from the same database.
//!
//! A permit is one row per key in `runlet.permits`, under a holder name of its own (one per
//! [`PostgresPermits`]) whose heartbeat row in `runlet.workers` the journal renews like any
//! lease. Taking is one transaction: a transaction-scoped advisory lock per key, in key order
//! (so takers of overlapping keys queue instead of racing, and never deadlock), then the count
//! of rows under live holders, then the insert — all or none of a call's keys. Rows of holders
//! whose lease lapsed (a process that died) count no more and are swept by the next taker.
//! Giving back deletes the rows and NOTIFYs `runlet_permits`; waiters LISTEN, and poll too.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use runlet::engine::{SharedKey, SharedPermit, SharedPermits};
use runlet::journal::JournalError;
use tokio::sync::{Notify, OnceCell};
use tokio_util::sync::CancellationToken;

use crate::error::{Context, sql};
use crate::journal::{PostgresJournal, Shared};
use crate::lease;

/// How often a waiter looks again without a notification.
const POLL: Duration = Duration::from_millis(250);

/// Takes the advisory lock of every key, in the given order (the caller sorts them).
const LOCK: &str = "SELECT pg_advisory_xact_lock(hashtextextended('runlet.permit:' || key, 0))
                    FROM (SELECT key FROM unnest($1::text[]) WITH ORDINALITY AS k(key, n) ORDER BY n) AS keys";

/// Forgets the permits of lapsed holders under the keys `$1`.
fn sweep() -> String {
    format!("DELETE FROM runlet.permits p WHERE p.key = ANY($1) AND NOT {}", lease::holds("p.holder"))
}

/// How many permits of each key `$1` are held now (by holders whose lease holds).
fn count() -> String {
    format!(
        "SELECT k.key, count(p.holder) FROM unnest($1::text[]) AS k(key)
         LEFT JOIN runlet.permits p ON p.key = k.key AND {}
         GROUP BY k.key",
        lease::holds("p.holder")
    )
}

const INSERT: &str = "INSERT INTO runlet.permits (holder, ticket, key) SELECT $1, $2, unnest($3::text[])";

const GIVE_BACK: &str =
    "WITH gone AS (DELETE FROM runlet.permits WHERE holder = $1 AND ticket = $2 RETURNING key)
                         SELECT pg_notify('runlet_permits', key) FROM gone";

/// The permits a [`PostgresJournal`]'s database holds for every process that shares it. Hand
/// it to [`RuntimeBuilder::shared_permits`](runlet::runtime::RuntimeBuilder::shared_permits).
#[derive(Debug, Clone)]
pub struct PostgresPermits {
    store: Arc<Store>,
}

#[derive(Debug)]
struct Store {
    shared: Arc<Shared>,
    /// The name this store's permits are held under (its lease row).
    holder: String,
    /// Woken by `runlet_permits` notifications and by this store's own give-backs.
    released: Arc<Notify>,
    /// The LISTEN connection, opened by the first waiter.
    listening: OnceCell<()>,
    stop: CancellationToken,
}

impl Drop for Store {
    fn drop(&mut self) {
        self.stop.cancel();
        self.shared.leases.forget(&self.holder);
    }
}

impl PostgresJournal {
    /// The permits shared by every process on this journal's database: with them, tools'
    /// `max_concurrency` and resource groups' caps hold over all those processes, not within
    /// each. Each call of this function is a holder of its own.
    pub fn permits(&self) -> PostgresPermits {
        let holder = format!("permits:{}", hex_nonce());
        PostgresPermits {
            store: Arc::new(Store {
                shared: Arc::clone(&self.shared),
                holder,
                released: Arc::new(Notify::new()),
                listening: OnceCell::new(),
                stop: CancellationToken::new(),
            }),
        }
    }
}

impl PostgresPermits {
    /// The name this store's permits are held under in `runlet.permits`.
    pub fn holder(&self) -> &str {
        &self.store.holder
    }
}

#[async_trait]
impl SharedPermits for PostgresPermits {
    async fn try_take(&self, keys: &[SharedKey]) -> Result<Option<SharedPermit>, JournalError> {
        let store = Arc::clone(&self.store);
        let keys: Vec<(String, i64)> =
            keys.iter().map(|k| (k.key.to_string(), i64::try_from(k.cap).unwrap_or(i64::MAX))).collect();
        let journal = PostgresJournal { shared: Arc::clone(&store.shared) };
        let ticket = journal.on_io(take(Arc::clone(&store), keys)).await?;
        Ok(ticket.map(|ticket| SharedPermit::new(move || give_back(store, ticket))))
    }

    async fn released(&self) {
        let store = &self.store;
        store
            .listening
            .get_or_init(|| async {
                let released = Arc::clone(&store.released);
                let listen = crate::wake::listen(
                    store.shared.config.clone(),
                    crate::wake::PERMITS,
                    move |_| released.notify_waiters(),
                    store.stop.clone(),
                );
                if let Some(io) = store.shared.io() {
                    io.spawn(listen);
                }
            })
            .await;
        let _ = tokio::time::timeout(POLL, store.released.notified()).await;
    }
}

/// One attempt: the ticket of the permit taken, or `None` when a key is full.
async fn take(store: Arc<Store>, keys: Vec<(String, i64)>) -> Result<Option<i64>, JournalError> {
    let shared = &store.shared;
    if !shared.leases.trusted(&store.holder) {
        let client = shared.client().await?;
        shared
            .leases
            .renew(&client, std::slice::from_ref(&store.holder))
            .await
            .context("start the permits' lease")?;
    }
    let names: Vec<String> = keys.iter().map(|(name, _)| name.clone()).collect();
    let ticket = i64::from_le_bytes(nonce()) & i64::MAX;
    let mut client = shared.client().await?;
    let tx = client.transaction().await.map_err(sql).context("begin taking permits")?;
    tx.execute(LOCK, &[&names]).await.map_err(sql).context("lock the permits' keys")?;
    tx.execute(&sweep(), &[&names]).await.map_err(sql).context("sweep lapsed permits")?;
    let held = tx.query(&count(), &[&names]).await.map_err(sql).context("count the permits held")?;
    let full = held.iter().any(|row| {
        let (key, count): (String, i64) = (row.get(0), row.get(1));
        keys.iter().any(|(name, cap)| *name == key && count >= *cap)
    });
    if full {
        return Ok(None);
    }
    tx.execute(INSERT, &[&store.holder, &ticket, &names]).await.map_err(sql).context("take the permits")?;
    tx.commit().await.map_err(sql).context("commit the permits")?;
    Ok(Some(ticket))
}

/// Deletes the rows of permit `ticket`, trying again until it can while the journal lives (once
/// it is gone, the holder's lease lapses and the rows count no more), and wakes the waiters.
fn give_back(store: Arc<Store>, ticket: i64) {
    let Some(io) = store.shared.io().cloned() else { return };
    let (shared, holder, released) =
        (Arc::downgrade(&store.shared), store.holder.clone(), Arc::clone(&store.released));
    drop(store);
    io.spawn(async move {
        let mut pause = Duration::from_millis(20);
        while let Some(shared) = shared.upgrade() {
            let given = async {
                let client = shared.client().await?;
                client.execute(GIVE_BACK, &[&holder, &ticket]).await.map_err(sql)
            };
            match given.await {
                Ok(_) => break,
                Err(error) => {
                    drop(shared);
                    tracing::warn!(error = %error, "runlet: cannot give shared permits back; trying again");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(1));
                }
            }
        }
        released.notify_waiters();
    });
}

fn nonce() -> [u8; 8] {
    let mut bytes = [0u8; 8];
    // Without randomness, the clock still tells holders and tickets apart.
    if getrandom::fill(&mut bytes).is_err() {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        bytes = (now.as_nanos() as u64 ^ u64::from(std::process::id())).to_le_bytes();
    }
    bytes
}

fn hex_nonce() -> String {
    nonce().iter().map(|b| format!("{b:02x}")).collect()
}
