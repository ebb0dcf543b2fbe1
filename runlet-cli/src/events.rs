//! `--events OUT.jsonl`: a run's events as they are published, one JSON object per line in
//! sequence order (`seq`, `kind`, `node`, `tool`, `at_ms`, …; INTERFACES.md §4), under the
//! default view, so secret values never reach the file. The file is opened before the run
//! starts, and each line is flushed as it is written, so a run that is killed leaves every event
//! it published.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use runlet::observe::{GraphEvent, RunObserver, ViewPolicy};

use crate::failure::Failure;
use crate::output::unwritable;

/// An events file, created (and so checked writable) before anything runs.
pub struct EventsFile {
    path: PathBuf,
    file: File,
}

impl EventsFile {
    pub fn create(path: &Path) -> Result<EventsFile, Failure> {
        let file = File::create(path).map_err(|error| unwritable(path, &error))?;
        Ok(EventsFile { path: path.to_owned(), file })
    }

    /// Writes `events`, the whole journal of a run this command does not drive on (one that
    /// has ended, or that waits for a decision).
    pub fn write_all(mut self, events: &[GraphEvent]) -> Result<(), Failure> {
        events.iter().try_for_each(|event| self.write(event))
    }

    /// Writes `event` as one line.
    fn write(&mut self, event: &GraphEvent) -> Result<(), Failure> {
        let mut line = serde_json::to_vec(event).map_err(|e| unwritable(&self.path, &e))?;
        line.push(b'\n');
        self.file.write_all(&line).map_err(|e| unwritable(&self.path, &e))
    }

    /// Follows `observer` from the run's first event to its last, writing each as it comes.
    pub fn follow(mut self, observer: &RunObserver) -> Result<(), Failure> {
        let reactor = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| unwritable(&self.path, &e))?;
        let mut subscription = observer.subscribe(0, ViewPolicy::default());
        reactor.block_on(async {
            while let Some(event) = subscription.next().await {
                let event = event.map_err(|e| {
                    Failure::new(e.code(), format!("the run's events could not be read: {e}"))
                })?;
                self.write(&event)?;
            }
            Ok::<(), Failure>(())
        })
    }
}
