/* C side of the Go binding: fills the executor and journal structs with trampolines into the
 * exported Go functions of callbacks.go, turning the cgo.Handle (a uintptr_t) into user_data, so
 * Go code never converts an integer to a pointer. */
#ifndef RUNLET_GO_SHIMS_H
#define RUNLET_GO_SHIMS_H

#include <stdint.h>

#include "runlet.h"

void runlet_go_fill_executor(runlet_tool_executor *executor, uintptr_t handle, int with_recover);
void runlet_go_fill_journal(runlet_journal_vtable *vtable, uintptr_t handle);
runlet_error *runlet_go_on_cancel(runlet_tool_call *call, uintptr_t handle);
runlet_error *runlet_go_recover_interrupted(const runlet_runtime *runtime, uint32_t max_resumes,
                                            const runlet_run_options *options, uintptr_t handle,
                                            runlet_buf *report);
runlet_error *runlet_go_worker_run(const runlet_worker *worker, uintptr_t handle);

#endif
