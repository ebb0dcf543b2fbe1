//! `--events OUT.jsonl`: a run's events as they are published, one JSON object per line in
//! sequence order (`seq`, `kind`, `node`, `tool`, `at_ms`, …; INTERFACES.md §4), under the
//! default view, so secret values never reach the file.

use std::io::{BufWriter, Write};
use std::path::Path;

use runlet::observe::{RunObserver, ViewPolicy};

use crate::failure::Failure;
use crate::output::unwritable;

/// Follows `observer` from the run's first event to its last and writes each to `path`.
pub fn write_events(observer: &RunObserver, path: &Path) -> Result<(), Failure> {
    let cannot = |error: &dyn std::fmt::Display| unwritable(path, error);
    let file = std::fs::File::create(path).map_err(|e| cannot(&e))?;
    let mut out = BufWriter::new(file);
    let reactor =
        tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| cannot(&e))?;
    let mut subscription = observer.subscribe(0, ViewPolicy::default());
    reactor.block_on(async {
        while let Some(event) = subscription.next().await {
            let event = event
                .map_err(|e| Failure::new(e.code(), format!("the run's events could not be read: {e}")))?;
            let line = serde_json::to_string(&event).map_err(|e| cannot(&e))?;
            writeln!(out, "{line}").map_err(|e| cannot(&e))?;
        }
        Ok::<(), Failure>(())
    })?;
    out.flush().map_err(|e| cannot(&e))
}
