//! Runlet on PostgreSQL: a [`Journal`](runlet::journal::Journal) shared by processes on many
//! machines ([`PostgresJournal`]), and the [`Worker`] loop that runs the runs submitted to it and
//! takes over those of workers that died.
//!
//! ```text
//!  runlet submit ──create_run + release──▶ runlet.runs (status open, no owner) ──NOTIFY runlet_work
//!                                              │ claim: FOR UPDATE SKIP LOCKED, epoch + 1
//!  Worker (each process) ◀─────────────────────┘ Runtime::recover_run: start, or resume from the journal
//!     │ heartbeat every lease/4 (runlet.workers, database clock)
//!     └─ appends fenced by (owner, epoch, lease, expected seq): a process that lost a run writes nothing
//! ```
//!
//! - `journal`: the store — runs, records, snapshots, blobs — and its claims.
//! - `append`: the fenced append statement, batches of many runs in one transaction, and the
//!   read-back that settles an append whose acknowledgement was lost.
//! - `follow`: readers of runs other processes drive, woken by the appends' notifications.
//! - `lease`: heartbeats and how long this process trusts its own lease.
//! - `permits`: tool and resource-group caps shared by every process on the database.
//! - `wake`: the LISTEN connections that wake workers and permit waiters; polling works
//!   without them.
//! - `worker`: claiming runs, running them, parking those that keep failing recovery.
//! - `schema`: the tables and their versioned migration.

mod append;
mod error;
mod follow;
mod journal;
mod lease;
mod permits;
mod schema;
mod wake;
mod worker;

pub use journal::{LONGEST_LEASE, PostgresJournal, PostgresOptions};
pub use permits::PostgresPermits;
pub use worker::{Handled, Worker, WorkerOptions};
