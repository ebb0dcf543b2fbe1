//! The journal's tables, in the `runlet` schema of the database, and their versioned migration:
//! created on first open and brought up to this build's version on later ones, under an
//! advisory lock so that workers opening a fresh database at the same moment create them once.
//!
//! - `workers`: one row per owner name a process claims runs under, with its heartbeat (on the
//!   database clock) and its lease length; a run whose owner's heartbeat is older than the lease
//!   may be taken over.
//! - `runs`: the header (JSON text, as given) with the registry digest it pins (a worker claims
//!   only runs of the registry it runs), the owner and the lease epoch (bumped by every
//!   change of owner: appends are fenced by both), the last sequence number, the status (`open`
//!   until its end is journaled, `left` when a worker left it for an operator), how often it was
//!   taken over for recovery, and whether a cancellation was requested.
//! - `records` (insert-only, keyed by run and sequence), `snapshots` (the latest per run),
//!   `blobs` (by SHA-256, shared) and `blob_refs` (which runs name each blob).
//! - `permits` (version 2): the shared permits of tool and resource-group caps held now, one row
//!   per key of each taken permit, under the name of the holder whose heartbeat row keeps them
//!   counted (`crate::permits`).
//! - `runs.followed_until` (version 3): until when a reader in some process follows the run, so
//!   that its appends notify (`crate::follow`); appends to runs nobody follows send nothing.
//! - `records.at_ms` (version 4): when each record was appended (Unix milliseconds, by the clock
//!   of the appending process, which also timed the run's creation), what events read back are
//!   timed by; `NULL` for records older versions appended.

use tokio_postgres::Client;

use crate::error::{Context, sql};
use runlet::journal::{JournalError, JournalErrorKind};

/// The layout version this build writes, in `runlet.schema_version`.
pub const SCHEMA_VERSION: i32 = 4;

/// The advisory lock key migrations hold (`'runlet'` as bytes).
const MIGRATION_LOCK: i64 = 0x72_75_6e_6c_65_74;

const VERSION_1: &str = "
    CREATE SCHEMA IF NOT EXISTS runlet;
    CREATE TABLE runlet.schema_version (version integer NOT NULL);
    CREATE TABLE runlet.workers (
        owner text PRIMARY KEY,
        heartbeat_at timestamptz NOT NULL,
        lease_ms bigint NOT NULL CHECK (lease_ms > 0));
    CREATE TABLE runlet.runs (
        run_id text PRIMARY KEY,
        created bigserial NOT NULL UNIQUE,
        header text NOT NULL,
        runtime_version text NOT NULL,
        registry_digest text NOT NULL,
        status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'ended', 'left')),
        owner text,
        epoch bigint NOT NULL DEFAULT 0,
        last_seq bigint NOT NULL DEFAULT 0,
        last_append_ms bigint,
        recovery_attempts integer NOT NULL DEFAULT 0,
        cancel_requested boolean NOT NULL DEFAULT false);
    CREATE INDEX runs_open ON runlet.runs (created) WHERE status = 'open';
    CREATE TABLE runlet.records (
        run_id text NOT NULL, seq bigint NOT NULL, bytes bytea NOT NULL,
        PRIMARY KEY (run_id, seq));
    CREATE TABLE runlet.snapshots (
        run_id text PRIMARY KEY, upto_seq bigint NOT NULL, bytes bytea NOT NULL);
    CREATE TABLE runlet.blobs (digest bytea PRIMARY KEY, bytes bytea NOT NULL);
    CREATE TABLE runlet.blob_refs (
        run_id text NOT NULL, digest bytea NOT NULL, PRIMARY KEY (run_id, digest));
    CREATE INDEX blob_refs_by_digest ON runlet.blob_refs (digest);
    INSERT INTO runlet.schema_version (version) VALUES (1);";

const VERSION_2: &str = "
    CREATE TABLE runlet.permits (
        holder text NOT NULL,
        ticket bigint NOT NULL,
        key text NOT NULL,
        taken_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (holder, ticket, key));
    CREATE INDEX permits_by_key ON runlet.permits (key);
    INSERT INTO runlet.schema_version (version) VALUES (2);";

const VERSION_3: &str = "
    ALTER TABLE runlet.runs ADD COLUMN followed_until timestamptz;
    INSERT INTO runlet.schema_version (version) VALUES (3);";

const VERSION_4: &str = "
    ALTER TABLE runlet.records ADD COLUMN at_ms bigint;
    INSERT INTO runlet.schema_version (version) VALUES (4);";

/// Creates the tables in a database that has none, or checks the version of those it has.
pub async fn migrate(client: &mut Client) -> Result<(), JournalError> {
    let tx = client.transaction().await.map_err(sql).context("begin the migration")?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(sql)
        .context("take the migration lock")?;
    let present: bool = tx
        .query_one("SELECT to_regclass('runlet.schema_version') IS NOT NULL", &[])
        .await
        .map_err(sql)?
        .get(0);
    let version: i32 = match present {
        false => 0,
        true => tx
            .query_opt("SELECT max(version) FROM runlet.schema_version", &[])
            .await
            .map_err(sql)?
            .and_then(|row| row.get::<_, Option<i32>>(0))
            .unwrap_or(0),
    };
    match version {
        0 if present => {
            return Err(JournalError::new(
                JournalErrorKind::Storage,
                "the `runlet` schema has a `schema_version` table with no version: it is not a Runlet journal",
            ));
        }
        0 => {
            tx.batch_execute(VERSION_1).await.map_err(sql).context("create the journal's tables")?;
            tx.batch_execute(VERSION_2).await.map_err(sql).context("create the permits table")?;
            tx.batch_execute(VERSION_3).await.map_err(sql).context("add the runs' followers")?;
            tx.batch_execute(VERSION_4).await.map_err(sql).context("add the records' times")?;
        }
        1..=3 => {
            if version == 1 {
                tx.batch_execute(VERSION_2).await.map_err(sql).context("migrate the journal to version 2")?;
            }
            if version <= 2 {
                tx.batch_execute(VERSION_3).await.map_err(sql).context("migrate the journal to version 3")?;
            }
            tx.batch_execute(VERSION_4).await.map_err(sql).context("migrate the journal to version 4")?;
        }
        SCHEMA_VERSION => {}
        newer => {
            return Err(JournalError::new(
                JournalErrorKind::Storage,
                format!("the journal has layout version {newer}; this runtime reads {SCHEMA_VERSION}"),
            ));
        }
    }
    tx.commit().await.map_err(sql).context("commit the migration")
}
