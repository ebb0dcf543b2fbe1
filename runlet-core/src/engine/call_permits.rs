//! The shell's side of permits (spec §4.5): a run's calls waiting for their permits, and the
//! permits granted but not yet handed to the call's dispatch. The core asks with
//! `Effect::AwaitPermits` and is answered with `Input::PermitsGranted`; only then does it
//! journal `CallDispatchPrepared`, so a call that waits has nothing uncertain about it.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::core::{CallHandle, Input};
use super::metrics::Metrics;
use super::permits::{PermitRequest, PermitWaits, RunPermits};
use crate::registry::ToolId;

/// One run's permit requests.
pub(super) struct CallPermits {
    /// Where permits come from; `None` when nothing is capped (every request is granted).
    permits: Option<RunPermits>,
    /// Told which calls wait and when they stop waiting.
    waits: Option<Arc<dyn PermitWaits>>,
    /// Requests not granted when made: the task waiting for each, and the call's node id and
    /// when it began to wait.
    waiting: BTreeMap<CallHandle, Waiting>,
    /// Permits granted and not yet taken by the call's dispatch.
    granted: Arc<Mutex<BTreeMap<CallHandle, PermitRequest>>>,
    /// Counts the calls waiting and how long they waited.
    metrics: Arc<Metrics>,
}

struct Waiting {
    task: JoinHandle<()>,
    node: Arc<str>,
    since: Instant,
}

impl CallPermits {
    pub(super) fn new(
        permits: Option<RunPermits>,
        waits: Option<Arc<dyn PermitWaits>>,
        metrics: Arc<Metrics>,
    ) -> CallPermits {
        CallPermits { permits, waits, waiting: BTreeMap::new(), granted: Arc::default(), metrics }
    }

    /// Requests the permits of `call` (node `node_id`), a call of `tool`, in request order;
    /// `Input::PermitsGranted` goes to `answers` once every one is held.
    pub(super) fn request(
        &mut self,
        call: CallHandle,
        tool: ToolId,
        node_id: Arc<str>,
        answers: &mpsc::UnboundedSender<Input>,
    ) {
        let Some(permits) = &self.permits else {
            let _ = answers.send(Input::PermitsGranted { call });
            return;
        };
        let mut request = permits.request(tool);
        if request.is_granted() {
            self.granted.lock().insert(call, request);
            let _ = answers.send(Input::PermitsGranted { call });
            return;
        }
        let blocked = !request.blocked_on().is_empty();
        if let (Some(waits), true) = (&self.waits, blocked) {
            waits.waiting(&node_id, request.blocked_on().iter().map(ToString::to_string).collect());
        }
        let (granted, waits, answers) = (Arc::clone(&self.granted), self.waits.clone(), answers.clone());
        let node = node_id.clone();
        let task = tokio::spawn(async move {
            let mut told = blocked;
            request
                .granted(|shared| {
                    if let Some(waits) = &waits {
                        waits.waiting(&node, shared.iter().map(ToString::to_string).collect());
                        told = true;
                    }
                })
                .await;
            if let (Some(waits), true) = (&waits, told) {
                waits.granted(&node);
            }
            granted.lock().insert(call, request);
            let _ = answers.send(Input::PermitsGranted { call });
        });
        self.metrics.permits_awaited();
        self.waiting.insert(call, Waiting { task, node: node_id, since: Instant::now() });
    }

    /// The permits granted to `call`, for its dispatch to hold until the call ends.
    pub(super) fn take(&mut self, call: CallHandle) -> Option<PermitRequest> {
        if let Some(waited) = self.waiting.remove(&call) {
            self.metrics.permits_settled(waited.since.elapsed());
        }
        self.granted.lock().remove(&call)
    }

    /// Withdraws `call`'s request, or gives back permits granted to it that no dispatch took.
    pub(super) fn withdraw(&mut self, call: CallHandle) {
        if let Some(Waiting { task, node, since }) = self.waiting.remove(&call) {
            task.abort();
            self.metrics.permits_settled(since.elapsed());
            if let Some(waits) = &self.waits {
                waits.granted(&node);
            }
        }
        self.granted.lock().remove(&call);
    }

    /// Withdraws every request and gives back every permit not taken: the run ended.
    pub(super) fn withdraw_all(&mut self) {
        let calls: Vec<CallHandle> = self.waiting.keys().copied().collect();
        for call in calls {
            self.withdraw(call);
        }
        self.granted.lock().clear();
    }
}
