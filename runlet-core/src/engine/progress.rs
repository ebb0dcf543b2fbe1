//! A call's progress while it runs (spec §5.2 `CallHeartbeat`): the [`Progress`] a tool reports
//! (an MCP server's `notifications/progress`, a C or Go executor's report) and the
//! [`Heartbeat`] reporter a call's context carries to the run's shell.
//!
//! Reports coalesce: while one is waiting for the shell, later ones replace its content, so a
//! chatty tool costs at most one queued message per call and one journal record per round of
//! the shell, and what is journaled is always the latest report.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use super::core::{CallHandle, Input};

/// The longest progress message kept, in bytes (longer ones are cut at a character boundary).
pub const MAX_PROGRESS_MESSAGE: usize = 512;

/// A finite number of a progress report. Compared by its bits, so records of it are `Eq`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Amount(f64);

impl Amount {
    /// The amount `value`, if it is finite.
    pub fn new(value: f64) -> Option<Amount> {
        value.is_finite().then_some(Amount(value))
    }

    pub fn get(self) -> f64 {
        self.0
    }
}

impl PartialEq for Amount {
    fn eq(&self, other: &Amount) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

impl Eq for Amount {}

/// How far a running call is, as its tool says: `progress` so far, of `total` when known, with
/// an optional human-readable message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    pub progress: Amount,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<Amount>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl Progress {
    /// A report of `progress` (of `total`), or None when a number is not finite. The message
    /// is cut to [`MAX_PROGRESS_MESSAGE`] bytes.
    pub fn new(progress: f64, total: Option<f64>, message: Option<&str>) -> Option<Progress> {
        let total = match total {
            Some(total) => Some(Amount::new(total)?),
            None => None,
        };
        let message = message.map(|text| {
            let mut end = text.len().min(MAX_PROGRESS_MESSAGE);
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text[..end].to_owned()
        });
        Some(Progress { progress: Amount::new(progress)?, total, message })
    }
}

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
