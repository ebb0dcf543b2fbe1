/* The tool executor: the call token's accessors, progress reports, completion inline, from another thread, from
 * many threads at once, late after the run was cancelled, and after the runtime was freed. */
#include <math.h>
#include <stddef.h>
#include <pthread.h>
#include <stdatomic.h>

#include "support.h"

/* --- accessors ------------------------------------------------------------------------------ */

static char *seen_name, *seen_args, *seen_run, *seen_node, *seen_operation, *seen_dispatch;
static uint32_t seen_attempt;
static int64_t seen_deadline;
static uint64_t seen_tag;

static void recording_invoke(void *user_data, runlet_tool_call *call) {
  (void)user_data;
  seen_name = str_dup(runlet_tool_call_name(call));
  seen_args = str_dup(runlet_tool_call_args_json(call));
  seen_run = str_dup(runlet_tool_call_run_id(call));
  seen_node = str_dup(runlet_tool_call_node_id(call));
  seen_operation = str_dup(runlet_tool_call_operation_id(call));
  seen_dispatch = str_dup(runlet_tool_call_dispatch_id(call));
  seen_attempt = runlet_tool_call_attempt(call);
  seen_deadline = runlet_tool_call_deadline_unix_ms(call);
  seen_tag = runlet_tool_call_run_tag(call);
  CHECK_OK(runlet_tool_call_complete(call, RUNLET_STR("{\"ok\": true}")));
}

static void the_token_describes_the_call(void) {
  runlet_tool_executor executor = RUNLET_TOOL_EXECUTOR_INIT;
  executor.invoke = recording_invoke;
  runlet_runtime *runtime = runtime_with(&executor, NULL, NULL);
  runlet_program *program = compile(runtime, "r = echo.value({id: \"c-42\", n: 7})\nreturn r.ok\n");
  runlet_run *run = start(runtime, program, "", 0);
  char *result = result_of(run);
  CHECK(strcmp(result, "true") == 0);
  CHECK(strcmp(seen_name, "echo.value") == 0);
  CHECK(strcmp(seen_args, "[{\"id\":\"c-42\",\"n\":7}]") == 0);
  CHECK(str_is(runlet_run_id(run), seen_run));
  CHECK(strlen(seen_node) > 0 && strlen(seen_operation) > 0 && strlen(seen_dispatch) > 0);
  CHECK(strcmp(seen_operation, seen_dispatch) != 0);
  CHECK(seen_attempt == 0); /* no boundary around the call */
  CHECK(seen_deadline == -1);
  CHECK(seen_tag == 0);
  CHECK(runlet_tool_call_run_tag(NULL) == 0);
  free(result);
  free(seen_name), free(seen_args), free(seen_run), free(seen_node), free(seen_operation), free(seen_dispatch);
  runlet_run_free(run);

  /* The run's host tag reaches its first call. */
  runlet_run_options options = RUNLET_RUN_OPTIONS_INIT;
  options.host_tag = 0xfeedbeef;
  CHECK_OK(runlet_run_start(runtime, program, RUNLET_STR(""), &options, &run));
  free(result_of(run));
  CHECK(seen_tag == 0xfeedbeef);
  free(seen_name), free(seen_args), free(seen_run), free(seen_node), free(seen_operation), free(seen_dispatch);
  runlet_run_free(run);
  /* Options of the layout before host_tag are taken, without a tag. */
  options.struct_size = offsetof(runlet_run_options, host_tag);
  CHECK_OK(runlet_run_start(runtime, program, RUNLET_STR(""), &options, &run));
  free(result_of(run));
  CHECK(seen_tag == 0);
  free(seen_name), free(seen_args), free(seen_run), free(seen_node), free(seen_operation), free(seen_dispatch);
  runlet_run_free(run);
  runlet_program_free(program);
  runlet_runtime_free(runtime);
}

/* --- progress ------------------------------------------------------------------------------ */

static void reporting_invoke(void *user_data, runlet_tool_call *call) {
  (void)user_data;
  CHECK_ERR(runlet_tool_call_report_progress(NULL, 1, 2, RUNLET_STR("")), RUNLET_ERR_NULL_ARGUMENT);
  CHECK_ERR(runlet_tool_call_report_progress(call, NAN, 2, RUNLET_STR("")), RUNLET_ERR_INVALID_ARGUMENT);
  CHECK_OK(runlet_tool_call_report_progress(call, 1, 2, RUNLET_STR("half")));
  /* Reported before the run took the first: the two coalesce to the latest. */
  CHECK_OK(runlet_tool_call_report_progress(call, 2, 2, RUNLET_STR("done")));
  CHECK_OK(runlet_tool_call_complete(call, RUNLET_STR("7")));
}

static void progress_reports_become_heartbeat_events(void) {
  runlet_tool_executor executor = RUNLET_TOOL_EXECUTOR_INIT;
  executor.invoke = reporting_invoke;
  runlet_runtime *runtime = runtime_with(&executor, NULL, NULL);
  runlet_program *program = compile(runtime, "return echo.value(1)\n");
  runlet_run *run = start(runtime, program, "", 1);
  int heartbeats = 0, completed_after = 0;
  char *last = NULL;
  runlet_event_owned *event;
  for (;;) {
    CHECK_OK(runlet_run_next_event(run, -1, &event));
    if (event == NULL) break;
    const runlet_event *view = runlet_event_owned_get(event);
    if (str_is(view->kind_name, "CallHeartbeat")) {
      heartbeats++;
      free(last);
      last = str_dup(view->payload_json);
    } else if (str_is(view->kind_name, "CallCompleted")) {
      completed_after = heartbeats > 0;
    }
    runlet_event_owned_free(event);
  }
  CHECK(heartbeats >= 1 && heartbeats <= 2 && completed_after);
  CHECK(last != NULL && strstr(last, "\"progress\":2.0") && strstr(last, "\"total\":2.0"));
  CHECK(strstr(last, "\"message\":\"done\"") != NULL);
  free(last);
  free(result_of(run));
  runlet_run_free(run);
  runlet_program_free(program);
  runlet_runtime_free(runtime);
}

/* --- completion from other threads ---------------------------------------------------------- */

static atomic_int in_flight, most_in_flight;

static void *complete_later(void *token) {
  runlet_tool_call *call = token;
  sleep_ms(2);
  runlet_str args = runlet_tool_call_args_json(call);
  runlet_str first = {args.ptr + 1, args.len - 2};
  atomic_fetch_sub(&in_flight, 1);
  CHECK_OK(runlet_tool_call_complete(call, first));
  return NULL;
}

/* Completes every call on a thread of its own. */
static void threaded_invoke(void *user_data, runlet_tool_call *call) {
  (void)user_data;
  int now = atomic_fetch_add(&in_flight, 1) + 1;
  int most = atomic_load(&most_in_flight);
  while (now > most && !atomic_compare_exchange_weak(&most_in_flight, &most, now)) {
  }
  pthread_t thread;
  CHECK(pthread_create(&thread, NULL, complete_later, call) == 0);
  CHECK(pthread_detach(thread) == 0);
}

static void calls_complete_from_other_threads_concurrently(void) {
  runlet_tool_executor executor = RUNLET_TOOL_EXECUTOR_INIT;
  executor.invoke = threaded_invoke;
  runlet_runtime *runtime = runtime_with(&executor, NULL, NULL);
  runlet_program *program = compile(runtime, "return echo.slow(5)\n");
  runlet_run *run = start(runtime, program, "", 0);
  char *one = result_of(run);
  CHECK(strcmp(one, "5") == 0);
  free(one);
  runlet_run_free(run);
  runlet_program_free(program);

  program = compile(runtime, "out = for i in items limit 16 {\n  return echo.slow(i)\n}\nreturn out\n");
  char input[1024] = "{\"items\": [";
  char expected[1024] = "[";
  for (int i = 0; i < 64; i++) {
    char item[16];
    snprintf(item, sizeof item, "%s%d", i ? "," : "", i * 3);
    strcat(input, item);
    strcat(expected, item);
  }
  strcat(input, "]}");
  strcat(expected, "]");
  run = start(runtime, program, input, 0);
  char *all = result_of(run);
  CHECK(strcmp(all, expected) == 0);
  CHECK(atomic_load(&most_in_flight) > 1);
  CHECK(atomic_load(&most_in_flight) <= 16);
  free(all);
  runlet_run_free(run);
  runlet_program_free(program);
  runlet_runtime_free(runtime);
}

/* --- late completion ------------------------------------------------------------------------ */

static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static runlet_tool_call *held;
static atomic_int cancel_notices, executor_drops;

static void on_cancel(void *user_data) {
  CHECK(user_data == &cancel_notices);
  atomic_fetch_add(&cancel_notices, 1);
}

/* Keeps the token for the test to complete later. */
static void holding_invoke(void *user_data, runlet_tool_call *call) {
  (void)user_data;
  CHECK_OK(runlet_tool_call_on_cancel(call, on_cancel, &cancel_notices));
  CHECK_ERR(runlet_tool_call_on_cancel(call, on_cancel, &cancel_notices), RUNLET_ERR_INVALID_ARGUMENT);
  pthread_mutex_lock(&held_lock);
  held = call;
  pthread_mutex_unlock(&held_lock);
}

/* Acknowledges the cancellation of the call it is given by failing it, which consumes it. */
static void fail_on_cancel(void *user_data) {
  runlet_tool_call_fail(user_data, runlet_error_new(RUNLET_ERR_CANCELLED, RUNLET_STR("acknowledged")));
  atomic_fetch_add(&cancel_notices, 1);
}

/* Keeps the token without registering for its cancellation. */
static void keeping_invoke(void *user_data, runlet_tool_call *call) {
  (void)user_data;
  pthread_mutex_lock(&held_lock);
  held = call;
  pthread_mutex_unlock(&held_lock);
}

static void count_executor_drop(void *user_data) {
  (void)user_data;
  atomic_fetch_add(&executor_drops, 1);
}

static runlet_tool_call *wait_for_held_call(void) {
  for (int i = 0; i < 5000; i++) {
    pthread_mutex_lock(&held_lock);
    runlet_tool_call *call = held;
    held = NULL;
    pthread_mutex_unlock(&held_lock);
    if (call != NULL) return call;
    sleep_ms(1);
  }
  CHECK(!"the tool call never arrived");
  return NULL;
}

static void late_completion_is_a_safe_no_op(void) {
  runlet_tool_executor executor = RUNLET_TOOL_EXECUTOR_INIT;
  executor.invoke = holding_invoke;
  executor.drop = count_executor_drop;
  runlet_runtime *runtime = runtime_with(&executor, NULL, NULL);
  runlet_program *program = compile(runtime, "return echo.slow(1)\n");

  runlet_run *run = start(runtime, program, "", 0);
  runlet_tool_call *call = wait_for_held_call();
  CHECK(runlet_run_status(run) == RUNLET_RUN_RUNNING);
  CHECK_ERR(runlet_run_wait(run, 10), RUNLET_ERR_TIMEOUT);
  runlet_buf buf = {NULL, 0};
  CHECK_ERR(runlet_run_result_json(run, &buf), RUNLET_ERR_NOT_FINISHED);
  CHECK_OK(runlet_run_cancel(run));
  CHECK_OK(runlet_run_cancel(run));
  CHECK_OK(runlet_run_wait(run, -1));
  CHECK(runlet_run_status(run) == RUNLET_RUN_CANCELLED);
  CHECK_ERR(runlet_run_result_json(run, &buf), RUNLET_ERR_CANCELLED);
  for (int i = 0; i < 5000 && atomic_load(&cancel_notices) == 0; i++) sleep_ms(1);
  CHECK(atomic_load(&cancel_notices) == 1);
  CHECK_OK(runlet_tool_call_complete(call, RUNLET_STR("1"))); /* the run ended: ignored */
  CHECK(runlet_run_status(run) == RUNLET_RUN_CANCELLED);
  runlet_run_free(run);

  /* A run freed while running is cancelled; its token outlives the runtime. */
  run = start(runtime, program, "", 0);
  call = wait_for_held_call();
  runlet_run_free(run);
  runlet_program_free(program);
  for (int i = 0; i < 5000 && atomic_load(&cancel_notices) < 2; i++) sleep_ms(1);
  CHECK(atomic_load(&cancel_notices) == 2);
  CHECK(atomic_load(&executor_drops) == 0);
  runlet_runtime_free(runtime); /* awaits the cancelled run, then drops the executor */
  CHECK(atomic_load(&executor_drops) == 1);
  runlet_tool_call_fail(call, runlet_error_new(RUNLET_ERR_TIMEOUT, RUNLET_STR("too late")));
  CHECK(atomic_load(&executor_drops) == 1);

  /* Registering for the cancellation of a call whose runtime is gone runs the callback at once. */
  executor.invoke = keeping_invoke;
  runtime = runtime_with(&executor, NULL, NULL);
  program = compile(runtime, "return echo.slow(1)\n");
  run = start(runtime, program, "", 0);
  call = wait_for_held_call();
  runlet_run_free(run);
  runlet_program_free(program);
  runlet_runtime_free(runtime);
  /* Its callback completes the call, which frees the token, inside the registration. */
  CHECK_OK(runlet_tool_call_on_cancel(call, fail_on_cancel, call));
  CHECK(atomic_load(&cancel_notices) == 3);
}

int main(void) {
  the_token_describes_the_call();
  progress_reports_become_heartbeat_events();
  calls_complete_from_other_threads_concurrently();
  late_completion_is_a_safe_no_op();
  puts("executor: ok");
  return 0;
}
