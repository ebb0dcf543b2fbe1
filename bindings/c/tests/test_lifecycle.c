/* Lifecycle: version, creating and freeing handles, NULL handling, option checks, and the
 * executor's drop running exactly once on every path. */
#include <stdatomic.h>

#include "support.h"

static atomic_int drops;

static void count_drop(void *user_data) {
  CHECK(user_data == &drops);
  atomic_fetch_add(&drops, 1);
}

static runlet_tool_executor counted_executor(void) {
  runlet_tool_executor executor = echo_executor();
  executor.user_data = &drops;
  executor.drop = count_drop;
  return executor;
}

static void version_matches_the_macros(void) {
  char expected[32];
  snprintf(expected, sizeof expected, "%d.%d.%d", RUNLET_VERSION_MAJOR, RUNLET_VERSION_MINOR, RUNLET_VERSION_PATCH);
  CHECK(str_is(runlet_version(), expected));
  CHECK(RUNLET_VERSION_NUMBER == RUNLET_VERSION_MAJOR * 10000 + RUNLET_VERSION_MINOR * 100 + RUNLET_VERSION_PATCH);
}

static void frees_accept_null(void) {
  runlet_runtime_free(NULL);
  runlet_program_free(NULL);
  runlet_run_free(NULL);
  runlet_error_free(NULL);
  runlet_event_owned_free(NULL);
  runlet_buf empty = {NULL, 0};
  runlet_buf_free(empty);
  CHECK(runlet_error_code(NULL) == RUNLET_OK);
  CHECK(runlet_run_status(NULL) == 0);
  CHECK(runlet_run_id(NULL).len == 0);
  CHECK(runlet_tool_call_name(NULL).len == 0);
  CHECK(runlet_tool_call_attempt(NULL) == 0);
  CHECK(runlet_event_owned_get(NULL) == NULL);
}

static void null_arguments_are_errors_and_outs_are_nulled(void) {
  runlet_runtime *runtime = (runlet_runtime *)&drops; /* garbage the call must overwrite */
  CHECK_ERR(runlet_runtime_new(NULL, &runtime), RUNLET_ERR_NULL_ARGUMENT);
  CHECK(runtime == NULL);
  runlet_runtime_options too_small = RUNLET_RUNTIME_OPTIONS_INIT;
  too_small.struct_size = 7;
  runtime = (runlet_runtime *)&drops;
  CHECK_ERR(runlet_runtime_new(&too_small, &runtime), RUNLET_ERR_VERSION_MISMATCH);
  CHECK(runtime == NULL);
  runlet_program *program = (runlet_program *)&drops;
  CHECK_ERR(runlet_program_compile(NULL, RUNLET_STR("return 1"), RUNLET_STR(""), &program), RUNLET_ERR_NULL_ARGUMENT);
  CHECK(program == NULL);
  runlet_run *run = (runlet_run *)&drops;
  CHECK_ERR(runlet_run_start(NULL, NULL, RUNLET_STR(""), NULL, &run), RUNLET_ERR_NULL_ARGUMENT);
  CHECK(run == NULL);
  CHECK_ERR(runlet_run_cancel(NULL), RUNLET_ERR_NULL_ARGUMENT);
  CHECK_ERR(runlet_run_wait(NULL, 0), RUNLET_ERR_NULL_ARGUMENT);
  CHECK_ERR(runlet_tool_call_complete(NULL, RUNLET_STR("1")), RUNLET_ERR_NULL_ARGUMENT);
  runlet_tool_call_fail(NULL, runlet_error_new(RUNLET_ERR_INTERNAL, RUNLET_STR("consumed even so")));
}

static void drop_runs_once_on_every_path(void) {
  runlet_tool_executor executor = counted_executor();
  runlet_runtime_options options = RUNLET_RUNTIME_OPTIONS_INIT;
  options.registry_json = str_of(TEST_REGISTRY);
  options.executor = &executor;
  runlet_runtime *runtime = NULL;

  atomic_store(&drops, 0);
  options.registry_json = RUNLET_STR("{\"tools\": 7}");
  CHECK_ERR(runlet_runtime_new(&options, &runtime), RUNLET_ERR_REGISTRY);
  CHECK(runtime == NULL && atomic_load(&drops) == 1);

  options.registry_json = str_of(TEST_REGISTRY);
  CHECK_ERR(runlet_runtime_new(&options, NULL), RUNLET_ERR_NULL_ARGUMENT);
  CHECK(atomic_load(&drops) == 2);

  options.retry.backoff_base_ms = 10; /* a base without a cap */
  CHECK_ERR(runlet_runtime_new(&options, &runtime), RUNLET_ERR_INVALID_ARGUMENT);
  CHECK(atomic_load(&drops) == 3);
  options.retry.backoff_cap_ms = 1000;
  options.retry.backoff_factor = 2;
  options.retry.tool_timeout_ms = 30000;

  executor.invoke = NULL;
  CHECK_ERR(runlet_runtime_new(&options, &runtime), RUNLET_ERR_NULL_ARGUMENT);
  CHECK(atomic_load(&drops) == 4);
  executor = counted_executor();

  runlet_runtime_options unknown = options;
  unknown.struct_size = sizeof options + 8;
  CHECK_ERR(runlet_runtime_new(&unknown, &runtime), RUNLET_ERR_VERSION_MISMATCH);
  CHECK(atomic_load(&drops) == 4); /* an unreadable struct is not touched */
  executor.struct_size = 3;
  CHECK_ERR(runlet_runtime_new(&options, &runtime), RUNLET_ERR_VERSION_MISMATCH);
  CHECK(atomic_load(&drops) == 4);
  executor = counted_executor();

  CHECK_OK(runlet_runtime_new(&options, &runtime));
  runlet_program *program = compile(runtime, "return echo.value(42)\n");
  runlet_run *run = start(runtime, program, "", 0);
  char *result = result_of(run);
  CHECK(strcmp(result, "42") == 0);
  free(result);
  CHECK(atomic_load(&drops) == 4);
  runlet_run_free(run);
  runlet_program_free(program);
  runlet_runtime_free(runtime);
  CHECK(atomic_load(&drops) == 5);
}

static void programs_belong_to_their_runtime(void) {
  runlet_tool_executor executor = echo_executor();
  runlet_runtime *first = runtime_with(&executor, NULL, NULL);
  runlet_runtime *second = runtime_with(&executor, NULL, NULL);
  runlet_program *program = compile(first, "return 1\n");
  runlet_run *run = NULL;
  CHECK_ERR(runlet_run_start(second, program, RUNLET_STR(""), NULL, &run), RUNLET_ERR_INVALID_ARGUMENT);
  CHECK(run == NULL);
  CHECK_OK(runlet_run_start(first, program, RUNLET_STR(""), NULL, &run));
  runlet_program_free(program); /* a run outlives its program handle */
  char *result = result_of(run);
  CHECK(strcmp(result, "1") == 0);
  free(result);
  CHECK(runlet_run_id(run).len > 0);
  runlet_run_free(run);
  runlet_runtime_free(second);
  runlet_runtime_free(first);
}

int main(void) {
  version_matches_the_macros();
  frees_accept_null();
  null_arguments_are_errors_and_outs_are_nulled();
  drop_runs_once_on_every_path();
  programs_belong_to_their_runtime();
  puts("lifecycle: ok");
  return 0;
}
