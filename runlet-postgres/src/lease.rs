//! Leases: every owner name this process claims runs under has a row in `runlet.workers` whose
//! heartbeat the process renews every quarter lease. The database decides whether a lease holds
//! (`heartbeat_at` against its own `now()`), so clocks of the machines never meet; this process
//! also keeps a local deadline — the moment its last renewal was sent plus four fifths of the
//! lease — past which it trusts its lease no more and refuses to append (so it dispatches
//! nothing) until a renewal succeeds again.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use deadpool_postgres::Client;
use parking_lot::Mutex;

use crate::error::sql;
use runlet::journal::JournalError;

use crate::journal::LONGEST_LEASE;

/// Renews the heartbeat rows of `owners` (inserting the missing) with the database's clock.
pub const RENEW: &str = "
    INSERT INTO runlet.workers (owner, heartbeat_at, lease_ms)
    SELECT owner, now(), $2 FROM unnest($1::text[]) AS owner
    ON CONFLICT (owner) DO UPDATE SET heartbeat_at = now(), lease_ms = excluded.lease_ms";

/// The SQL condition that owner `{owner}`'s lease holds, on the database clock. A lease is
/// read as at most [`LONGEST_LEASE`], so a row written with a longer one (by a process that did
/// not check it) cannot overflow the interval and fail every query that asks.
pub fn holds(owner: &str) -> String {
    format!(
        "EXISTS (SELECT 1 FROM runlet.workers w WHERE w.owner = {owner}
                 AND w.heartbeat_at > now() - LEAST(w.lease_ms, {longest}) * interval '1 millisecond')",
        longest = LONGEST_LEASE.as_millis()
    )
}

/// The owners this process holds leases as, and until when it trusts each.
#[derive(Debug)]
pub struct Leases {
    lease: Duration,
    trusted_until: Mutex<BTreeMap<String, Instant>>,
}

impl Leases {
    pub fn new(lease: Duration) -> Leases {
        Leases { lease, trusted_until: Mutex::new(BTreeMap::new()) }
    }

    /// How often renewals are sent.
    pub fn renew_every(&self) -> Duration {
        self.lease / 4
    }

    /// The owners to renew.
    pub fn owners(&self) -> Vec<String> {
        self.trusted_until.lock().keys().cloned().collect()
    }

    /// Whether this process may still act as `owner`: it renewed the lease recently enough.
    pub fn trusted(&self, owner: &str) -> bool {
        self.trusted_until.lock().get(owner).is_some_and(|until| Instant::now() < *until)
    }

    /// Stops renewing `owner`'s lease: it lapses on the database a lease later.
    pub fn forget(&self, owner: &str) {
        self.trusted_until.lock().remove(owner);
    }

    /// Renews the leases of `owners` (all held ones when empty, adding `owners` to them) on
    /// `client`, and trusts them from the moment the renewal was sent.
    pub async fn renew(&self, client: &Client, owners: &[String]) -> Result<(), JournalError> {
        let owners = match owners {
            [] => self.owners(),
            given => given.to_vec(),
        };
        if owners.is_empty() {
            return Ok(());
        }
        let sent = Instant::now();
        let lease_ms = i64::try_from(self.lease.as_millis()).unwrap_or(i64::MAX);
        let statement = client.prepare_cached(RENEW).await.map_err(sql)?;
        client.execute(&statement, &[&owners, &lease_ms]).await.map_err(sql)?;
        let until = sent + self.lease * 4 / 5;
        let mut trusted = self.trusted_until.lock();
        for owner in owners {
            trusted.insert(owner, until);
        }
        Ok(())
    }
}
