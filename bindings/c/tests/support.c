/* Helpers shared by the C tests (see support.h). */
#include "support.h"

#include <time.h>

const char *const TEST_REGISTRY =
    "{\"tools\": ["
    "  {\"name\": \"echo.value\", \"params\": [{\"name\": \"x\", \"schema\": {}}], \"execution\": \"pure\"},"
    "  {\"name\": \"echo.slow\", \"params\": [{\"name\": \"x\", \"schema\": {}}], \"execution\": \"pure\"}"
    "], \"inputs\": {\"items\": {\"type\": \"array\", \"items\": {\"type\": \"integer\"}}}}";

void check_ok_at(runlet_error *err, const char *file, int line, const char *expr) {
  if (err == NULL) return;
  runlet_str message = runlet_error_message(err);
  runlet_str details = runlet_error_details_json(err);
  fprintf(stderr, "%s:%d: %s failed with code %u: %.*s %.*s\n", file, line, expr, runlet_error_code(err),
          (int)message.len, message.ptr, (int)details.len, details.ptr);
  runlet_error_free(err);
  exit(1);
}

void check_err_at(runlet_error *err, runlet_code code, const char *file, int line, const char *expr) {
  if (err == NULL) {
    fprintf(stderr, "%s:%d: %s succeeded, expected code %u\n", file, line, expr, code);
    exit(1);
  }
  if (runlet_error_code(err) != code) {
    runlet_str message = runlet_error_message(err);
    fprintf(stderr, "%s:%d: %s gave code %u (%.*s), expected %u\n", file, line, expr, runlet_error_code(err),
            (int)message.len, message.ptr, code);
    exit(1);
  }
  runlet_error_free(err);
}

void sleep_ms(long ms) {
  struct timespec pause = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&pause, NULL);
}

runlet_str str_of(const char *text) {
  runlet_str view = {text, strlen(text)};
  return view;
}

int str_is(runlet_str view, const char *text) {
  return view.len == strlen(text) && (view.len == 0 || memcmp(view.ptr, text, view.len) == 0);
}

int str_contains(runlet_str view, const char *needle) {
  size_t n = strlen(needle);
  for (size_t i = 0; i + n <= view.len; i++) {
    if (memcmp(view.ptr + i, needle, n) == 0) return 1;
  }
  return 0;
}

char *str_dup(runlet_str view) {
  char *copy = malloc(view.len + 1);
  CHECK(copy != NULL);
  if (view.len > 0) memcpy(copy, view.ptr, view.len);
  copy[view.len] = '\0';
  return copy;
}

runlet_runtime *runtime_with(const runlet_tool_executor *executor, const runlet_journal_vtable *journal,
                             const runlet_event_listener *listener) {
  runlet_runtime_options options = RUNLET_RUNTIME_OPTIONS_INIT;
  options.registry_json = str_of(TEST_REGISTRY);
  options.executor = executor;
  options.journal = journal;
  options.listener = listener;
  options.worker_threads = 2;
  runlet_runtime *runtime = NULL;
  CHECK_OK(runlet_runtime_new(&options, &runtime));
  CHECK(runtime != NULL);
  return runtime;
}

runlet_program *compile(runlet_runtime *runtime, const char *source) {
  runlet_program *program = NULL;
  CHECK_OK(runlet_program_compile(runtime, str_of(source), str_of(""), &program));
  return program;
}

runlet_run *start(runlet_runtime *runtime, runlet_program *program, const char *input_json, int pull_events) {
  runlet_run_options options = RUNLET_RUN_OPTIONS_INIT;
  options.pull_events = pull_events != 0;
  runlet_run *run = NULL;
  CHECK_OK(runlet_run_start(runtime, program, str_of(input_json), &options, &run));
  return run;
}

char *result_of(runlet_run *run) {
  CHECK_OK(runlet_run_wait(run, -1));
  CHECK(runlet_run_status(run) == RUNLET_RUN_SUCCEEDED);
  runlet_buf buf = {NULL, 0};
  CHECK_OK(runlet_run_result_json(run, &buf));
  runlet_str view = {(const char *)buf.ptr, buf.len};
  char *json = str_dup(view);
  runlet_buf_free(buf);
  return json;
}

/* Completes with the first element of the argument list `[x]`. */
static void echo_invoke(void *user_data, runlet_tool_call *call) {
  (void)user_data;
  runlet_str args = runlet_tool_call_args_json(call);
  CHECK(args.len >= 2 && args.ptr[0] == '[' && args.ptr[args.len - 1] == ']');
  runlet_str first = {args.ptr + 1, args.len - 2};
  CHECK_OK(runlet_tool_call_complete(call, first));
}

runlet_tool_executor echo_executor(void) {
  runlet_tool_executor executor = RUNLET_TOOL_EXECUTOR_INIT;
  executor.invoke = echo_invoke;
  return executor;
}
