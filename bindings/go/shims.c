/* Trampolines from Runlet's callbacks into the exported Go functions (see shims.h). */
#include "shims.h"

#include "_cgo_export.h"

static void invoke(void *user_data, runlet_tool_call *call) { runletGoInvoke((uintptr_t)user_data, call); }
static void recover(void *user_data, runlet_tool_call *call) { runletGoRecover((uintptr_t)user_data, call); }
static void release(void *user_data) { runletGoRelease((uintptr_t)user_data); }
static void cancelled(void *user_data) { runletGoCancelled((uintptr_t)user_data); }

void runlet_go_fill_executor(runlet_tool_executor *executor, uintptr_t handle, int with_recover) {
  executor->struct_size = sizeof *executor;
  executor->user_data = (void *)handle;
  executor->invoke = invoke;
  executor->recover = with_recover ? recover : NULL;
  executor->drop = release;
}

static void resumed(void *user_data, runlet_run *run) { runletGoResumed((uintptr_t)user_data, run); }

runlet_error *runlet_go_recover_interrupted(const runlet_runtime *runtime, uint32_t max_resumes,
                                            const runlet_run_options *options, uintptr_t handle,
                                            runlet_buf *report) {
  return runlet_runtime_recover_interrupted(runtime, max_resumes, options, resumed, (void *)handle, report);
}

static void worker_report(void *user_data, runlet_str json) { runletGoWorkerReport((uintptr_t)user_data, json); }

runlet_error *runlet_go_worker_run(const runlet_worker *worker, uintptr_t handle) {
  return runlet_worker_run(worker, worker_report, (void *)handle);
}

runlet_error *runlet_go_on_cancel(runlet_tool_call *call, uintptr_t handle) {
  return runlet_tool_call_on_cancel(call, cancelled, (void *)handle);
}

static runlet_error *create_run(void *user_data, runlet_str run_id, runlet_str header_json) {
  return runletGoCreateRun((uintptr_t)user_data, run_id, header_json);
}
static runlet_error *header(void *user_data, runlet_str run_id, runlet_journal_sink *sink) {
  return runletGoHeader((uintptr_t)user_data, run_id, sink);
}
static runlet_error *append(void *user_data, runlet_str run_id, uint64_t expected_seq,
                            const runlet_journal_record *records, size_t count, uint64_t *last_seq_out) {
  return runletGoAppend((uintptr_t)user_data, run_id, expected_seq, (runlet_journal_record *)records, count,
                        last_seq_out);
}
static runlet_error *read_records(void *user_data, runlet_str run_id, uint64_t after, size_t limit,
                                  runlet_journal_sink *sink) {
  return runletGoRead((uintptr_t)user_data, run_id, after, limit, sink);
}
static runlet_error *load_snapshot(void *user_data, runlet_str run_id, runlet_journal_sink *sink) {
  return runletGoLoadSnapshot((uintptr_t)user_data, run_id, sink);
}
static runlet_error *store_snapshot(void *user_data, runlet_str run_id, uint64_t upto_seq, runlet_bytes bytes) {
  return runletGoStoreSnapshot((uintptr_t)user_data, run_id, upto_seq, bytes);
}

static runlet_error *runs(void *user_data, runlet_journal_sink *sink) {
  return runletGoRuns((uintptr_t)user_data, sink);
}

void runlet_go_fill_journal(runlet_journal_vtable *vtable, uintptr_t handle) {
  vtable->struct_size = sizeof *vtable;
  vtable->abi_major = RUNLET_JOURNAL_ABI_MAJOR;
  vtable->flags = 0;
  vtable->user_data = (void *)handle;
  vtable->create_run = create_run;
  vtable->header = header;
  vtable->append = append;
  vtable->read = read_records;
  vtable->load_snapshot = load_snapshot;
  vtable->store_snapshot = store_snapshot;
  vtable->drop = release;
  vtable->runs = runs;
}
