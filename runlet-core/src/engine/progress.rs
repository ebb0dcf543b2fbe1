//! A call's progress while it runs (spec §5.2 `CallHeartbeat`): the [`Heartbeat`] reporter a
//! call's context carries to the run's shell, through which a tool reports its [`Progress`] (an
//! MCP server's `notifications/progress`, a C or Go executor's report).
//!
//! Reports coalesce: while one is waiting for the shell, later ones replace its content, so a
//! chatty tool costs at most one queued message per call and one journal record per round of
//! the shell, and what is journaled is always the latest report.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

use super::core::{CallHandle, Input};
use super::event::Progress;

/// Reports a call's progress to its run. Cheap to clone; a default one (a call outside a run,
/// as in tests) discards its reports.
#[derive(Debug, Clone, Default)]
pub struct Heartbeat(Option<(Arc<Reports>, CallHandle)>);

/// One run's reports not yet taken by its shell, by call: at most one message per call is
/// queued, and a report while it waits replaces the one it carries.
#[derive(Debug)]
pub(crate) struct Reports {
    waiting: Mutex<BTreeMap<CallHandle, Progress>>,
    shell: mpsc::UnboundedSender<Input>,
}

impl Reports {
    /// The reports of a run whose shell reads `shell`.
    pub(crate) fn new(shell: mpsc::UnboundedSender<Input>) -> Arc<Reports> {
        Arc::new(Reports { waiting: Mutex::new(BTreeMap::new()), shell })
    }

    /// The reporter of `call`.
    pub(crate) fn heartbeat(self: &Arc<Reports>, call: CallHandle) -> Heartbeat {
        Heartbeat(Some((Arc::clone(self), call)))
    }

    /// The latest report of `call`, taken: its next report queues a new message.
    pub(crate) fn take(&self, call: CallHandle) -> Option<Progress> {
        self.waiting().remove(&call)
    }

    fn waiting(&self) -> std::sync::MutexGuard<'_, BTreeMap<CallHandle, Progress>> {
        self.waiting.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Heartbeat {
    /// Reports `progress`. Returns false when the run no longer listens (it ended) or the
    /// reporter belongs to no run.
    pub fn report(&self, progress: Progress) -> bool {
        let Some((reports, call)) = &self.0 else { return false };
        if reports.waiting().insert(*call, progress.clone()).is_some() {
            return !reports.shell.is_closed();
        }
        reports.shell.send(Input::CallHeartbeat { call: *call, progress }).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::event::MAX_PROGRESS_MESSAGE;

    #[test]
    fn reports_coalesce_into_one_message_carrying_the_latest() {
        let (sender, mut receiver) = mpsc::unbounded_channel();
        let reports = Reports::new(sender);
        let (heartbeat, other) = (reports.heartbeat(CallHandle(3)), reports.heartbeat(CallHandle(4)));
        for step in 1..=5 {
            assert!(heartbeat.report(Progress::new(f64::from(step), Some(5.0), None).unwrap()));
        }
        let Ok(Input::CallHeartbeat { call, progress }) = receiver.try_recv() else { panic!("no message") };
        assert_eq!((call, progress.progress.get()), (CallHandle(3), 1.0));
        assert!(receiver.try_recv().is_err(), "one message while one is queued");
        assert!(other.report(Progress::new(1.0, None, None).unwrap()));
        assert!(receiver.try_recv().is_ok(), "another call's report queues its own");
        assert_eq!(reports.take(CallHandle(3)).map(|p| p.progress.get()), Some(5.0));
        assert!(heartbeat.report(Progress::new(6.0, None, Some("again")).unwrap()));
        assert!(receiver.try_recv().is_ok(), "a report after the take queues again");
    }

    #[test]
    fn numbers_must_be_finite_and_messages_are_cut_at_a_character() {
        assert!(Progress::new(f64::NAN, None, None).is_none());
        assert!(Progress::new(1.0, Some(f64::INFINITY), None).is_none());
        let long = "é".repeat(MAX_PROGRESS_MESSAGE);
        let cut = Progress::new(1.0, None, Some(&long)).unwrap().message.unwrap();
        assert!(cut.len() <= MAX_PROGRESS_MESSAGE && cut.chars().all(|c| c == 'é'));
    }

    #[test]
    fn a_reporter_outside_a_run_discards() {
        assert!(!Heartbeat::default().report(Progress::new(1.0, None, None).unwrap()));
    }
}
