/* Re-entrancy: blocking functions called from inside Runlet callbacks (a tool's invoke, the
 * listener's on_event) return RUNLET_ERR_INVALID_ARGUMENT instead of deadlocking, while
 * non-blocking ones (cancel, getters, a zero-timeout check) work there. */
#include <stdatomic.h>

#include "support.h"

static _Atomic(runlet_run *) current_run;
static atomic_int invoke_checked, event_checked;

static runlet_run *the_run(void) {
  runlet_run *run;
  while ((run = atomic_load(&current_run)) == NULL) sleep_ms(1);
  return run;
}

static void checking_invoke(void *user_data, runlet_tool_call *call) {
  (void)user_data;
  runlet_run *run = the_run();
  CHECK_ERR(runlet_run_wait(run, -1), RUNLET_ERR_INVALID_ARGUMENT);
  CHECK_ERR(runlet_run_wait(run, 100), RUNLET_ERR_INVALID_ARGUMENT);
  CHECK_ERR(runlet_run_wait(run, 0), RUNLET_ERR_TIMEOUT); /* a check does not block */
  runlet_event_owned *event = NULL;
  CHECK_ERR(runlet_run_next_event(run, 50, &event), RUNLET_ERR_INVALID_ARGUMENT);
  CHECK(event == NULL);
  CHECK(runlet_run_status(run) == RUNLET_RUN_RUNNING);
  atomic_store(&invoke_checked, 1);
  CHECK_OK(runlet_tool_call_complete(call, RUNLET_STR("\"done\"")));
}

static void checking_on_event(void *user_data, const runlet_event *event) {
  (void)user_data;
  if (event->kind != 13) return; /* RunSucceeded */
  runlet_run *run = the_run();
  CHECK_ERR(runlet_run_wait(run, -1), RUNLET_ERR_INVALID_ARGUMENT);
  CHECK_OK(runlet_run_cancel(run)); /* allowed; the run already ended */
  atomic_store(&event_checked, 1);
}

int main(void) {
  runlet_tool_executor executor = RUNLET_TOOL_EXECUTOR_INIT;
  executor.invoke = checking_invoke;
  runlet_event_listener listener = RUNLET_EVENT_LISTENER_INIT;
  listener.kind_mask = RUNLET_EVENT_MASK_ALL;
  listener.on_event = checking_on_event;
  runlet_runtime *runtime = runtime_with(&executor, NULL, &listener);
  runlet_program *program = compile(runtime, "return echo.value(1)\n");
  runlet_run *run = start(runtime, program, "", 0);
  atomic_store(&current_run, run);
  char *result = result_of(run);
  CHECK(strcmp(result, "\"done\"") == 0);
  free(result);
  CHECK(atomic_load(&invoke_checked) == 1);
  for (int i = 0; i < 5000 && atomic_load(&event_checked) == 0; i++) sleep_ms(1);
  CHECK(atomic_load(&event_checked) == 1);
  runlet_run_free(run);
  runlet_program_free(program);
  runlet_runtime_free(runtime);
  puts("reentrancy: ok");
  return 0;
}
