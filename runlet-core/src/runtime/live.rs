//! What a runtime has not finished: its runs, and the tasks hosts attach to them (the C ABI's
//! event forwarding), which [`Runtime::shutdown`](super::Runtime::shutdown) cancels and waits for,
//! and which a cancellation requested through the journal finds by run id.

use parking_lot::{Condvar, Mutex};
use std::collections::BTreeMap;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

use crate::journal::RunId;

/// The runs and attached tasks of one runtime that have not ended.
#[derive(Debug, Default)]
pub(super) struct Live {
    state: Mutex<LiveState>,
    ended: Condvar,
}

#[derive(Debug, Default)]
struct LiveState {
    /// Each unfinished run's cancellation, by a key of its own (a resumed run may share its id
    /// with a handle still held elsewhere).
    runs: BTreeMap<u64, (RunId, CancellationToken)>,
    next_key: u64,
    /// Attached tasks not yet finished.
    tasks: usize,
    /// `shutdown` has begun: runs started from now on are cancelled at once.
    closing: bool,
}

/// Keeps one run or attached task counted as live until it is dropped, also when the task
/// holding it panics.
#[derive(Debug)]
pub(super) struct LiveEntry {
    live: Arc<Live>,
    run: Option<u64>,
}

impl Drop for LiveEntry {
    fn drop(&mut self) {
        let mut state = self.live.state.lock();
        match self.run {
            Some(key) => {
                state.runs.remove(&key);
            }
            None => state.tasks -= 1,
        }
        self.live.ended.notify_all();
    }
}

impl Live {
    /// Counts a run as live until the entry is dropped; a run started while the runtime shuts
    /// down is cancelled at once (it journals its cancellation and ends).
    pub(super) fn add_run(self: &Arc<Self>, run: &RunId, cancel: &CancellationToken) -> LiveEntry {
        let mut state = self.state.lock();
        if state.closing {
            cancel.cancel();
        }
        let key = state.next_key;
        state.next_key += 1;
        state.runs.insert(key, (run.clone(), cancel.clone()));
        LiveEntry { live: Arc::clone(self), run: Some(key) }
    }

    /// Counts a task attached to a run as live until the entry is dropped.
    pub(super) fn add_task(self: &Arc<Self>) -> LiveEntry {
        self.state.lock().tasks += 1;
        LiveEntry { live: Arc::clone(self), run: None }
    }

    /// Cancels every run that has not ended, and those started from now on, then blocks until
    /// every run and attached task has ended.
    pub(super) fn shut_down(&self) {
        let mut state = self.state.lock();
        state.closing = true;
        for (_, cancel) in state.runs.values() {
            cancel.cancel();
        }
        while !state.runs.is_empty() || state.tasks > 0 {
            self.ended.wait(&mut state);
        }
    }

    /// How many runs have not ended.
    pub(super) fn runs(&self) -> usize {
        self.state.lock().runs.len()
    }

    /// Cancels the runs among `runs` that have not ended.
    pub(super) fn cancel(&self, runs: &[RunId]) {
        for (run, cancel) in self.state.lock().runs.values() {
            if runs.contains(run) {
                cancel.cancel();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shutting_down_cancels_runs_and_waits_for_every_entry() {
        let live = Arc::new(Live::default());
        let (first, second) = (CancellationToken::new(), CancellationToken::new());
        let run = live.add_run(&RunId::new("first"), &first);
        let task = live.add_task();
        let waiter = {
            let live = Arc::clone(&live);
            std::thread::spawn(move || live.shut_down())
        };
        while !first.is_cancelled() {
            std::thread::yield_now();
        }
        let late = live.add_run(&RunId::new("second"), &second);
        assert!(second.is_cancelled(), "a run started during shutdown is cancelled at once");
        assert_eq!(live.runs(), 2);
        drop((run, late));
        assert!(!waiter.is_finished(), "an attached task is still running");
        drop(task);
        waiter.join().expect("shutdown returns once everything ended");
        assert_eq!(live.runs(), 0);
    }
}
