//! [`Worker`]: one process's share of a PostgreSQL journal's runs (INTERFACES.md §4.3). It
//! claims runs no live process owns — submitted ones, and those of workers whose lease ran out
//! — with `FOR UPDATE SKIP LOCKED`, so racing workers never claim one run twice, bumping each
//! run's epoch so the former owner is fenced off. Each claimed run goes through
//! [`Runtime::recover_run`], exactly as a restarted process recovers its own: a run that never
//! started is started from its retained program, any other is resumed from its journal, calls it
//! left dispatching recovered by execution class. A run taken over more than `max_recoveries`
//! times is parked as failed (`RL7306`) instead; one that needs an operator's decision is left
//! (`status = 'left'`) until `runlet resolve`/`resume`.
//!
//! A worker claims only runs that pin the registry its runtime runs (so workers with other
//! tools leave them to others). The worker wakes on `NOTIFY runlet_work` (the `wake` module), on its poll interval (enough
//! alone: notifications are only a shortcut), and whenever one of its runs finishes.

use std::sync::Arc;
use std::time::Duration;

use runlet::diag::{Code, codes};
use runlet::engine::Outcome;
use runlet::journal::{Journal, JournalError, JournalErrorKind, RunId};
use runlet::runtime::{Recovered, Runtime};
use serde_json::json;
use tokio::sync::Notify;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::error::sql;
use crate::journal::{Held, PostgresJournal};
use crate::lease;

/// How a [`Worker`] shares the journal's runs.
#[derive(Debug, Clone)]
pub struct WorkerOptions {
    /// How many runs it drives at once (16 unless set).
    pub concurrency: usize,
    /// How many takeovers a run may need before it is parked as failed (5 unless set).
    pub max_recoveries: u32,
    /// How often it looks for runs when nothing wakes it (1 s unless set).
    pub poll: Duration,
}

impl Default for WorkerOptions {
    fn default() -> Self {
        WorkerOptions { concurrency: 16, max_recoveries: 5, poll: Duration::from_secs(1) }
    }
}

/// What a worker did with a run it claimed.
#[derive(Debug)]
pub enum Handled {
    /// The run ended here: `succeeded`, `failed` or `cancelled`.
    Ended { run: RunId, status: &'static str },
    /// The run stopped here before its end because the journal refused it (another worker
    /// took it over, or this one's lease lapsed); another process goes on with it.
    Lost { run: RunId, error: JournalError },
    /// Taken over too often: parked as failed (`RL7306`).
    Parked { run: RunId },
    /// Left for an operator, for the reason `code` and `message` give.
    Left { run: RunId, code: Code, message: String },
}

impl Handled {
    /// As JSON, the line `runlet worker` prints and C and Go hosts receive:
    /// `{"run_id", "action": "ended"|"lost"|"parked"|"left", "status"?, "code"?, "message"?}`.
    pub fn to_json(&self) -> serde_json::Value {
        let run = self.run_id().as_str();
        match self {
            Handled::Ended { status, .. } => json!({"run_id": run, "action": "ended", "status": status}),
            Handled::Lost { error, .. } => {
                json!({"run_id": run, "action": "lost", "code": error.code().to_string(), "message": error.message})
            }
            Handled::Parked { .. } => json!({
                "run_id": run, "action": "parked", "status": "failed",
                "code": codes::RECOVERY_EXHAUSTED.to_string(),
            }),
            Handled::Left { code, message, .. } => {
                json!({"run_id": run, "action": "left", "code": code.to_string(), "message": message})
            }
        }
    }

    pub fn run_id(&self) -> &RunId {
        match self {
            Handled::Ended { run, .. }
            | Handled::Lost { run, .. }
            | Handled::Parked { run }
            | Handled::Left { run, .. } => run,
        }
    }
}

/// A run this worker claimed: its id and how often it was taken over.
#[derive(Debug, Clone)]
struct Claimed {
    run: RunId,
    recoveries: u32,
}

/// Runs the runs of a PostgreSQL journal in this process; see the module docs.
#[derive(Debug)]
pub struct Worker {
    runtime: Arc<Runtime>,
    journal: PostgresJournal,
    options: WorkerOptions,
}

impl Worker {
    /// A worker running claimed runs on `runtime`, which must journal to `journal` (built with
    /// it, usually behind the group-commit writer) and hold every tool the runs call.
    pub fn new(runtime: Arc<Runtime>, journal: PostgresJournal, options: WorkerOptions) -> Worker {
        Worker { runtime, journal, options }
    }

    /// Claims and drives runs until `stop` is cancelled, calling `report` as each claimed run is
    /// handled; then claims nothing more and waits for the runs it drives to end. A journal
    /// that cannot be reached is retried at every poll.
    pub async fn run(&self, stop: CancellationToken, mut report: impl FnMut(&Handled)) {
        let wake = Arc::new(Notify::new());
        let listening = CancellationToken::new();
        let woken = Arc::clone(&wake);
        tokio::spawn(crate::wake::listen(
            self.journal.shared.config.clone(),
            crate::wake::WORK,
            move |_| woken.notify_one(),
            listening.clone(),
        ));
        let _stop_listening = listening.drop_guard();
        let mut active = JoinSet::new();
        let mut driving = std::collections::BTreeMap::new();
        loop {
            let free = self.options.concurrency.saturating_sub(active.len());
            if !stop.is_cancelled() && free > 0 {
                let ids = driving.values().map(|run: &RunId| run.to_string()).collect();
                let registry = self.runtime.registry().digest().to_string();
                match self.journal.claim_work(self.runtime.owner(), &registry, free, ids).await {
                    Ok(claimed) => {
                        for run in claimed {
                            let id = run.run.clone();
                            let (runtime, journal) = (Arc::clone(&self.runtime), self.journal.clone());
                            let task =
                                active.spawn(handle(runtime, journal, run, self.options.max_recoveries));
                            driving.insert(task.id(), id);
                        }
                    }
                    Err(error) => tracing::warn!(error = %error, "runlet worker: cannot claim runs"),
                }
            }
            if stop.is_cancelled() && active.is_empty() {
                return;
            }
            tokio::select! {
                _ = wake.notified() => {}
                _ = tokio::time::sleep(self.options.poll) => {}
                _ = stop.cancelled(), if !stop.is_cancelled() => {}
                Some(done) = active.join_next_with_id(), if !active.is_empty() => match done {
                    Ok((task, handled)) => {
                        driving.remove(&task);
                        report(&handled);
                    }
                    Err(failed) => {
                        driving.remove(&failed.id());
                    }
                },
            }
        }
    }
}

/// Recovers the claimed run on `runtime` and follows it to where this process is done with it.
async fn handle(runtime: Arc<Runtime>, journal: PostgresJournal, claimed: Claimed, max: u32) -> Handled {
    let Claimed { run, recoveries } = claimed;
    let owner = runtime.owner().to_owned();
    // Taken over more often than allowed: the core parks a run resumed this often, so ask it
    // with no resumes left.
    let allowed = if recoveries > max { 0 } else { max };
    let recovered = {
        let (runtime, run) = (Arc::clone(&runtime), run.clone());
        tokio::task::spawn_blocking(move || runtime.recover_run(&run, allowed)).await
    };
    let recovered = match recovered {
        Ok(recovered) => recovered,
        Err(panicked) => {
            let _ = journal.let_go(&run, &owner, "open").await;
            return Handled::Lost {
                run,
                error: JournalError::new(
                    JournalErrorKind::RunPanicked,
                    format!("recovering the run panicked: {panicked}"),
                ),
            };
        }
    };
    match recovered {
        Recovered::Resumed(handle) => match handle.outcome().await {
            Ok(outcome) => {
                // The runtime marks the end too, after the outcome; marked here before the
                // report, a worker that stops right after reporting leaves nothing to take over.
                let _ = journal.end(&run, &owner).await;
                Handled::Ended { run, status: status_of(&outcome) }
            }
            Err(error) => Handled::Lost { run, error },
        },
        Recovered::Parked { .. } => {
            let _ = journal.end(&run, &owner).await;
            Handled::Parked { run }
        }
        // Another process holds it by now (this worker's lease lapsed meanwhile): it goes on there.
        Recovered::Left { code, message, .. } if code == codes::RUN_OWNED_ELSEWHERE => {
            Handled::Lost { run, error: JournalError::new(JournalErrorKind::OwnedElsewhere, message) }
        }
        Recovered::Left { code, message, .. } => {
            let _ = journal.let_go(&run, &owner, "left").await;
            Handled::Left { run, code, message }
        }
    }
}

fn status_of(outcome: &Outcome) -> &'static str {
    match outcome {
        Outcome::Succeeded(_) => "succeeded",
        Outcome::Failed(_) => "failed",
        Outcome::Cancelled => "cancelled",
    }
}

impl PostgresJournal {
    /// Claims up to `limit` runs of the registry `registry` (its digest) for `owner` that no
    /// live process owns, oldest first, skipping rows other workers are claiming at the same
    /// moment; a run that had started counts one more recovery. Never a run it is `driving`
    /// (even one its own lapsed lease left claimable); runs `owner` holds but is not driving (a
    /// claim whose answer was lost) are claimed again. Renews `owner`'s lease first. Not
    /// retried: a claim is not repeated blindly.
    async fn claim_work(
        &self,
        owner: &str,
        registry: &str,
        limit: usize,
        driving: Vec<String>,
    ) -> Result<Vec<Claimed>, JournalError> {
        let (shared, owner, registry) = (Arc::clone(&self.shared), owner.to_owned(), registry.to_owned());
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let claimed_owner = owner.clone();
        let rows = self
            .on_io(async move {
                let client = shared.client().await?;
                shared.leases.renew(&client, std::slice::from_ref(&owner)).await?;
                let query = format!(
                    "WITH candidates AS (
                        SELECT run_id FROM runlet.runs r
                        WHERE r.status = 'open' AND r.registry_digest = $4 AND r.run_id <> ALL($3)
                          AND (r.owner IS NULL OR r.owner = $1 OR NOT {})
                        ORDER BY r.created LIMIT $2 FOR UPDATE SKIP LOCKED)
                     UPDATE runlet.runs r SET owner = $1, epoch = r.epoch + 1, cancel_requested = false,
                            recovery_attempts = r.recovery_attempts + CASE WHEN r.last_seq > 0 THEN 1 ELSE 0 END
                     FROM candidates c WHERE r.run_id = c.run_id
                     RETURNING r.run_id, r.epoch, r.recovery_attempts",
                    lease::holds("r.owner")
                );
                client.query(&query, &[&owner, &limit, &driving, &registry]).await.map_err(sql)
            })
            .await?;
        let mut claimed = Vec::with_capacity(rows.len());
        for row in rows {
            let run = RunId::new(row.get::<_, String>(0));
            self.hold(&run, Held { owner: claimed_owner.clone(), epoch: row.get(1) });
            claimed.push(Claimed { run, recoveries: u32::try_from(row.get::<_, i32>(2)).unwrap_or(0) });
        }
        Ok(claimed)
    }
}
