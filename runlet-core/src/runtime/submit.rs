//! Runs submitted by one process and run by another (INTERFACES.md §4.3): [`Runtime::submit`]
//! puts a run's header — which retains its program, registry file, inputs and limits — into the
//! journal, owned by no process, and runs nothing. A runtime that finds a run whose journal holds
//! its header and no event (a submitted run, or one whose process stopped before its start was
//! committed, so nothing of it ran) starts it from what the header retains, under the id it
//! already has.

use std::sync::Arc;

use super::{Executable, PreparedRun, RetainedProgram, RunOptions, Runtime, StartError};
use crate::analyze::Inputs;
use crate::engine::event::unix_ms;
use crate::journal::{RunHeader, RunId};

impl Runtime {
    /// Journals the header of a run of `program` with `inputs` under `options` for another
    /// process to run ([`Runtime::recover_run`], a worker of a shared journal), and returns its
    /// id. Nothing runs here, and no process owns the run until one claims it. Blocks while the
    /// journal stores the header.
    pub fn submit(
        &self,
        program: &Executable,
        inputs: &Inputs,
        options: RunOptions,
    ) -> Result<RunId, StartError> {
        let (run_id, anchor) = self.new_run(&options)?;
        let created = unix_ms(std::time::SystemTime::now());
        let prepared = self.prepare(program, inputs, &options, run_id.clone(), created, &anchor)?;
        self.pool.block_on(async {
            self.journal.create_run(&prepared.header).await?;
            drop(anchor);
            self.journal.release(&run_id, &self.owner).await
        })?;
        Ok(run_id)
    }

    /// Prepares run `header.run_id`, which has a header and no event, from what `retained`
    /// brought back of it, once the header pins exactly the run this runtime would start
    /// ([`Runtime::check_pins`], and the inputs' digest); [`Runtime::begin`] starts it.
    pub(super) fn prepare_retained(
        &self,
        program: &Executable,
        header: &RunHeader,
        retained: &RetainedProgram,
    ) -> Result<PreparedRun, super::RecoveryError> {
        let options = RunOptions { limits: retained.limits.clone(), ..RunOptions::default() };
        let created = header.retained.as_ref().map_or(0, |kept| kept.created_unix_ms);
        // The run's anchor ended when its header was stored; this start is a session under it.
        let mut prepared = self
            .prepare(
                program,
                &retained.inputs,
                &options,
                header.run_id.clone(),
                created,
                &tracing::Span::none(),
            )
            .map_err(|error| super::RecoveryError::Unstartable {
                run: header.run_id.to_string(),
                reason: error.to_string(),
            })?;
        self.check_pins(program, header, &prepared.driving.limits)?;
        if prepared.header.inputs_digest != header.inputs_digest {
            return Err(super::RecoveryError::PinMismatch {
                run: header.run_id.to_string(),
                field: "the inputs digest",
                journal: header.inputs_digest.clone(),
                runtime: prepared.header.inputs_digest.clone(),
            });
        }
        prepared.header = Arc::new(header.clone());
        Ok(prepared)
    }
}
