//! Appends: one fenced statement per batch, a transaction only when blobs come with it, and a
//! transaction with a savepoint per batch for the group-commit writer's batches of many runs.
//!
//! The fence is in the statement: the run's row is updated — and its records inserted — only
//! while it ends at the expected sequence number and either names the claim this journal holds
//! (owner, epoch, and the owner's lease still holds on the database clock), or, for a run this
//! journal holds no claim on, names no live owner. A batch is all or nothing.
//!
//! When the connection breaks before the answer came, the append may or may not have
//! committed. It is never simply sent again: the records after the expected sequence number are
//! read back and compared byte for byte, and only when none are there is the (still fenced)
//! append tried again.

use std::time::Duration;

use deadpool_postgres::Client;
use tokio_postgres::GenericClient;
use tokio_postgres::types::ToSql;

use crate::error::{is_ambiguous, is_transient, sql};
use crate::journal::{PostgresJournal, Shared};
use crate::lease;
use runlet::journal::{AppendBatch, JournalError, JournalErrorKind, RunId, check_contiguous, now_unix_ms};

/// Whose writes an append is fenced by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fence {
    /// The claim this journal holds on the run.
    Held { owner: String, epoch: i64 },
    /// No claim: allowed while no live owner holds the run.
    Unowned,
}

impl Fence {
    /// The fence of an append by `journal` to `run`. Refused at once (`LeaseLost`) when the
    /// journal holds the run but could not renew its owner's lease in time.
    pub fn of(journal: &PostgresJournal, run: &RunId) -> Result<Fence, JournalError> {
        match journal.held(run) {
            None => Ok(Fence::Unowned),
            Some(held) if journal.shared.leases.trusted(&held.owner) => {
                Ok(Fence::Held { owner: held.owner, epoch: held.epoch })
            }
            Some(held) => Err(JournalError::new(
                JournalErrorKind::LeaseLost,
                format!(
                    "this process could not renew its lease as `{}` in time, so it no longer writes to run `{run}`",
                    held.owner
                ),
            )),
        }
    }

    fn params(&self) -> (Option<&str>, Option<i64>) {
        match self {
            Fence::Held { owner, epoch } => (Some(owner), Some(*epoch)),
            Fence::Unowned => (None, None),
        }
    }
}

/// The fenced append of one batch's records: `$1` run, `$2`/`$3` owner and epoch (NULL for an
/// unowned append), `$4` the expected last sequence number, `$5`/`$6` the records' sequence
/// numbers and bytes, `$7` when the appending process appended them (Unix milliseconds).
/// Answers how many runs it updated: 1, or 0 when the fence held it off. A run a reader follows
/// is announced on `runlet_records` when the append commits.
fn append_statement() -> String {
    format!(
        "WITH fenced AS (
            UPDATE runlet.runs r SET last_seq = $4 + cardinality($5::bigint[]), last_append_ms = $7
            WHERE r.run_id = $1 AND r.last_seq = $4 AND CASE
                WHEN $2::text IS NULL THEN r.owner IS NULL OR NOT {}
                ELSE r.owner = $2 AND r.epoch = $3 AND {} END
            RETURNING r.run_id, r.followed_until > now() AS followed),
         inserted AS (
            INSERT INTO runlet.records (run_id, seq, bytes, at_ms)
            SELECT fenced.run_id, x.seq, x.bytes, $7::bigint
            FROM fenced, unnest($5::bigint[], $6::bytea[]) AS x(seq, bytes)
            RETURNING 1)
         SELECT count(*) FROM fenced
            LEFT JOIN LATERAL (SELECT pg_notify('runlet_records', fenced.run_id) WHERE fenced.followed) AS woken ON true",
        lease::holds("r.owner"),
        lease::holds("$2"),
    )
}

const STORE_BLOBS: &str = "INSERT INTO runlet.blobs (digest, bytes)
    SELECT * FROM unnest($1::bytea[], $2::bytea[]) ON CONFLICT (digest) DO NOTHING";
const NAME_BLOBS: &str = "INSERT INTO runlet.blob_refs (run_id, digest)
    SELECT $1, digest FROM unnest($2::bytea[]) AS digest ON CONFLICT DO NOTHING";

/// An attempt that did not append.
enum Failed {
    /// For good: the fence, the run, or the server refused it.
    Refused(JournalError),
    /// The connection or the server went away; `ambiguous` when it may have committed.
    Broken { error: tokio_postgres::Error, ambiguous: bool },
}

impl From<tokio_postgres::Error> for Failed {
    fn from(error: tokio_postgres::Error) -> Failed {
        match is_transient(&error) {
            true => Failed::Broken { ambiguous: is_ambiguous(&error), error },
            false => Failed::Refused(sql(error)),
        }
    }
}

/// Appends `batch` under `fence`, trying again while the database is unreachable (up to the
/// journal's `retry_for`), reading back after every attempt whose outcome is unknown.
pub async fn one(shared: &Shared, batch: &AppendBatch, fence: &Fence) -> Result<u64, JournalError> {
    check_contiguous(batch.expected_seq, &batch.records)?;
    let end = batch.expected_seq + batch.records.len() as u64;
    let give_up = tokio::time::Instant::now() + shared.retry_for;
    let mut pause = Duration::from_millis(20);
    let mut uncertain = false;
    loop {
        let mut client = shared.client().await?;
        let failed = match attempt(&mut client, batch, fence).await {
            Ok(()) => return Ok(end),
            Err(failed) => failed,
        };
        drop(client);
        match failed {
            Failed::Refused(error) => {
                // An earlier attempt that did commit makes this one a conflict: it was ours.
                let conflict = matches!(error.kind, JournalErrorKind::SequenceConflict { .. });
                if uncertain && conflict && landed(shared, batch).await.unwrap_or(false) {
                    return Ok(end);
                }
                return Err(error);
            }
            Failed::Broken { error, ambiguous } => {
                if tokio::time::Instant::now() + pause >= give_up {
                    return Err(sql(error));
                }
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(1));
                if ambiguous {
                    uncertain = true;
                    if landed(shared, batch).await.unwrap_or(false) {
                        return Ok(end);
                    }
                }
            }
        }
    }
}

/// Appends `batches` in one transaction, a savepoint each, and answers each: a batch that fails
/// fails alone. When the connection breaks, every batch not known to have committed goes on its
/// own through [`one`].
pub async fn many(
    shared: &Shared,
    batches: &[AppendBatch],
    fences: Vec<Result<Fence, JournalError>>,
) -> Vec<Result<u64, JournalError>> {
    if let ([batch], [fence]) = (batches, fences.as_slice()) {
        return vec![match fence {
            Ok(fence) => one(shared, batch, fence).await,
            Err(error) => Err(error.clone()),
        }];
    }
    let mut answers: Vec<Option<Result<u64, JournalError>>> = fences
        .iter()
        .zip(batches)
        .map(|(fence, batch)| match fence {
            Err(error) => Some(Err(error.clone())),
            Ok(_) => check_contiguous(batch.expected_seq, &batch.records).err().map(Err),
        })
        .collect();
    let committed = match shared.client().await {
        Ok(mut client) => together(&mut client, batches, &fences, &mut answers).await,
        Err(_) => Err(None),
    };
    match committed {
        Ok(()) => {}
        // Refused for good (the commit itself): every batch that had gone in fails with it.
        Err(Some(error)) => {
            for answer in answers.iter_mut().filter(|answer| matches!(answer, Some(Ok(_)))) {
                *answer = Some(Err(error.clone()));
            }
        }
        // Broken: the batches that went in may have committed; those that did are answered,
        // the rest go again on their own, as do those never tried.
        Err(None) => {
            for (index, batch) in batches.iter().enumerate() {
                let went_in = matches!(answers[index], Some(Ok(_)));
                if went_in && landed(shared, batch).await.unwrap_or(false) {
                    continue;
                }
                if went_in || answers[index].is_none() {
                    let fence = fences[index].as_ref().expect("a batch without a fence has its answer");
                    answers[index] = Some(one(shared, batch, fence).await);
                }
            }
        }
    }
    answers
        .into_iter()
        .map(|answer| {
            answer.unwrap_or_else(|| Err(JournalError::new(JournalErrorKind::Storage, "unanswered")))
        })
        .collect()
}

/// The body of [`many`] on one connection: `answers` gets each batch it tried. `Err(None)` when
/// the connection broke, `Err(Some(_))` when the commit was refused.
async fn together(
    client: &mut Client,
    batches: &[AppendBatch],
    fences: &[Result<Fence, JournalError>],
    answers: &mut [Option<Result<u64, JournalError>>],
) -> Result<(), Option<JournalError>> {
    let broken = |error: tokio_postgres::Error| match is_transient(&error) {
        true => None,
        false => Some(sql(error)),
    };
    let statement = client.prepare_cached(&append_statement()).await.map_err(broken)?;
    let mut tx = client.transaction().await.map_err(broken)?;
    for (index, batch) in batches.iter().enumerate() {
        let (Ok(fence), None) = (&fences[index], &answers[index]) else { continue };
        let savepoint = tx.savepoint("batch").await.map_err(broken)?;
        match append_on(&*savepoint, &statement, batch, fence).await {
            Ok(()) => {
                savepoint.commit().await.map_err(broken)?;
                answers[index] = Some(Ok(batch.expected_seq + batch.records.len() as u64));
            }
            Err(Failed::Refused(error)) => {
                savepoint.rollback().await.map_err(broken)?;
                answers[index] = Some(Err(error));
            }
            Err(Failed::Broken { .. }) => return Err(None),
        }
    }
    if answers.iter().any(|answer| matches!(answer, Some(Ok(_)))) {
        tx.commit().await.map_err(broken)?;
    }
    Ok(())
}

/// One attempt of [`one`] on `client`: a single statement, or a transaction with the blobs.
async fn attempt(client: &mut Client, batch: &AppendBatch, fence: &Fence) -> Result<(), Failed> {
    let statement = client.prepare_cached(&append_statement()).await?;
    if batch.blobs.is_empty() {
        return append_on(&***client, &statement, batch, fence).await;
    }
    let tx = client.transaction().await?;
    append_on(&*tx, &statement, batch, fence).await?;
    tx.commit().await?;
    Ok(())
}

/// The batch's blobs, then its fenced records, on `client` (a connection or a transaction); a
/// fenced-off append is diagnosed there.
async fn append_on<C: GenericClient + Sync>(
    client: &C,
    statement: &tokio_postgres::Statement,
    batch: &AppendBatch,
    fence: &Fence,
) -> Result<(), Failed> {
    let run = batch.run.as_str();
    if !batch.blobs.is_empty() {
        let digests: Vec<&[u8]> = batch.blobs.iter().map(|blob| &blob.digest[..]).collect();
        let bytes: Vec<&[u8]> = batch.blobs.iter().map(|blob| &blob.bytes[..]).collect();
        client.execute(STORE_BLOBS, &[&digests, &bytes]).await?;
        client.execute(NAME_BLOBS, &[&run, &digests]).await?;
    }
    let expected =
        i64::try_from(batch.expected_seq).map_err(|_| Failed::Refused(out_of_range(batch.expected_seq)))?;
    let seqs = batch
        .records
        .iter()
        .map(|record| i64::try_from(record.seq).map_err(|_| Failed::Refused(out_of_range(record.seq))))
        .collect::<Result<Vec<i64>, Failed>>()?;
    let bytes: Vec<&[u8]> = batch.records.iter().map(|record| &record.bytes[..]).collect();
    let (owner, epoch) = fence.params();
    // The appending process's clock, as the run's creation time in its header is.
    let at_ms = i64::try_from(now_unix_ms()).unwrap_or(i64::MAX);
    let params: [&(dyn ToSql + Sync); 7] = [&run, &owner, &epoch, &expected, &seqs, &bytes, &at_ms];
    let fenced: i64 = client.query_one(statement, &params).await?.get(0);
    match fenced {
        1 => Ok(()),
        _ => Err(Failed::Refused(diagnose(client, batch, fence).await?)),
    }
}

/// Why the fence held an append off: the run is unknown, another process holds it (or this
/// one's lease ran out), or the run does not end where the writer thought.
async fn diagnose<C: GenericClient + Sync>(
    client: &C,
    batch: &AppendBatch,
    fence: &Fence,
) -> Result<JournalError, Failed> {
    let run = batch.run.as_str();
    let query = format!(
        "SELECT r.owner, r.epoch, r.last_seq, {} FROM runlet.runs r WHERE r.run_id = $1",
        lease::holds("r.owner")
    );
    let Some(row) = client.query_opt(&query, &[&run]).await? else {
        return Ok(crate::error::unknown(run));
    };
    let (owner, epoch, last_seq, live): (Option<String>, i64, i64, bool) =
        (row.get(0), row.get(1), row.get(2), row.get::<_, Option<bool>>(3).unwrap_or(false));
    let lost = |message: String| JournalError::new(JournalErrorKind::LeaseLost, message);
    let held_elsewhere = || match &owner {
        Some(owner) => format!("`{owner}` (epoch {epoch})"),
        None => format!("no process (epoch {epoch})"),
    };
    match fence {
        Fence::Held { owner: mine, epoch: my_epoch }
            if owner.as_deref() != Some(mine) || epoch != *my_epoch =>
        {
            return Ok(lost(format!(
                "run `{run}` was taken over: it is held by {} where this process held it as `{mine}` (epoch {my_epoch})",
                held_elsewhere()
            )));
        }
        Fence::Held { owner: mine, .. } if !live => {
            return Ok(lost(format!("the lease of `{mine}` on run `{run}` expired before the append")));
        }
        Fence::Unowned if live => {
            return Ok(lost(format!(
                "run `{run}` is held by {}: claim it before appending",
                held_elsewhere()
            )));
        }
        _ => {}
    }
    let actual = last_seq as u64;
    Ok(JournalError::new(
        JournalErrorKind::SequenceConflict { expected: batch.expected_seq, actual },
        format!("append to run `{run}` expected last sequence {}, journal has {actual}", batch.expected_seq),
    ))
}

/// Whether exactly `batch`'s records are in the journal after its expected sequence number: an
/// append whose answer was lost that did commit.
async fn landed(shared: &Shared, batch: &AppendBatch) -> Result<bool, JournalError> {
    let client = shared.client().await?;
    let (run, after) = (batch.run.as_str(), batch.expected_seq as i64);
    let count = batch.records.len() as i64;
    let rows = client
        .query(
            "SELECT seq, bytes FROM runlet.records WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
            &[&run, &after, &count],
        )
        .await
        .map_err(sql)?;
    Ok(rows.len() == batch.records.len()
        && rows.iter().zip(&batch.records).all(|(row, record)| {
            row.get::<_, i64>(0) as u64 == record.seq && row.get::<_, &[u8]>(1) == &record.bytes[..]
        }))
}

fn out_of_range(seq: u64) -> JournalError {
    JournalError::new(
        JournalErrorKind::InvalidRecord,
        format!("sequence number {seq} exceeds PostgreSQL's bigint"),
    )
}
