/* Error codes and messages: host-built errors, compile and registry diagnostics in the details,
 * invalid UTF-8 and invalid JSON inputs, failed tool calls reaching the run's result. */
#include "support.h"

static void host_errors_keep_what_they_were_given(void) {
  runlet_error *plain = runlet_error_new(RUNLET_ERR_JOURNAL, RUNLET_STR("disk full"));
  CHECK(runlet_error_code(plain) == RUNLET_ERR_JOURNAL);
  CHECK(str_is(runlet_error_message(plain), "disk full"));
  CHECK(runlet_error_details_json(plain).len == 0);
  runlet_error_free(plain);

  runlet_error *ok = runlet_error_new(RUNLET_OK, RUNLET_STR("fine"));
  CHECK(runlet_error_code(ok) == RUNLET_ERR_INVALID_ARGUMENT);
  CHECK(str_contains(runlet_error_message(ok), "RUNLET_OK"));
  runlet_error_free(ok);

  runlet_error *tool = runlet_error_new_tool(RUNLET_STR("RATE_LIMITED"), RUNLET_STR("slow down"), true, 250,
                                             RUNLET_STR("{\"bucket\":\"orders\"}"));
  CHECK(runlet_error_code(tool) == RUNLET_ERR_TOOL_FAILED);
  CHECK(str_is(runlet_error_details_json(tool), "{\"bucket\":\"orders\"}"));
  runlet_error_free(tool);

  runlet_error *bad = runlet_error_new_tool(RUNLET_STR("X"), RUNLET_STR(""), false, -1, RUNLET_STR("[1"));
  CHECK(runlet_error_code(bad) == RUNLET_ERR_INVALID_JSON);
  runlet_error_free(bad);
}

static void compile_errors_carry_the_diagnostics_report(runlet_runtime *runtime) {
  runlet_program *program = NULL;
  runlet_error *err = runlet_program_compile(runtime, RUNLET_STR("return echo.valeu(1)\n"), RUNLET_STR(""), &program);
  CHECK(program == NULL);
  CHECK(runlet_error_code(err) == RUNLET_ERR_COMPILE);
  CHECK(str_contains(runlet_error_message(err), "error"));
  runlet_str details = runlet_error_details_json(err);
  CHECK(str_contains(details, "\"source_digest\":\"sha256:"));
  CHECK(str_contains(details, "\"diagnostics\":[{\"code\":\"RL"));
  CHECK(str_contains(details, "echo.value")); /* the did-you-mean candidate */
  runlet_error_free(err);
}

static void registry_errors_carry_the_diagnostics_report(void) {
  runlet_tool_executor executor = echo_executor();
  runlet_runtime_options options = RUNLET_RUNTIME_OPTIONS_INIT;
  options.executor = &executor;
  options.registry_json = RUNLET_STR("{\"tools\": [{\"name\": \"a.b\", \"execution\": \"sometimes\"}]}");
  runlet_runtime *runtime = NULL;
  runlet_error *err = runlet_runtime_new(&options, &runtime);
  CHECK(runtime == NULL);
  CHECK(runlet_error_code(err) == RUNLET_ERR_REGISTRY);
  CHECK(str_contains(runlet_error_details_json(err), "\"code\":\"RL8006\""));
  runlet_error_free(err);
}

static void invalid_utf8_and_json_inputs_are_refused(runlet_runtime *runtime) {
  const char bad_utf8[] = {'r', 'e', 't', 'u', 'r', 'n', ' ', '"', (char)0xC3, (char)0x28, '"', '\n'};
  runlet_str source = {bad_utf8, sizeof bad_utf8};
  runlet_program *program = NULL;
  CHECK_ERR(runlet_program_compile(runtime, source, RUNLET_STR(""), &program), RUNLET_ERR_INVALID_UTF8);
  runlet_str dangling = {NULL, 4};
  CHECK_ERR(runlet_program_compile(runtime, dangling, RUNLET_STR(""), &program), RUNLET_ERR_NULL_ARGUMENT);

  program = compile(runtime, "return items\n");
  runlet_run *run = NULL;
  runlet_error *err = runlet_run_start(runtime, program, RUNLET_STR("{\"items\": [1,\n 2,]}"), NULL, &run);
  CHECK(run == NULL);
  CHECK(runlet_error_code(err) == RUNLET_ERR_INVALID_JSON);
  CHECK(str_contains(runlet_error_details_json(err), "\"line\":2"));
  runlet_error_free(err);
  CHECK_ERR(runlet_run_start(runtime, program, RUNLET_STR("[1]"), NULL, &run), RUNLET_ERR_INVALID_JSON);
  CHECK_ERR(runlet_run_start(runtime, program, RUNLET_STR("{}"), NULL, &run), RUNLET_ERR_INVALID_ARGUMENT);
  CHECK_ERR(runlet_run_start(runtime, program, RUNLET_STR("{\"items\": [\"x\"]}"), NULL, &run),
            RUNLET_ERR_INVALID_ARGUMENT);
  runlet_run_options unknown = RUNLET_RUN_OPTIONS_INIT;
  unknown.struct_size = 1;
  CHECK_ERR(runlet_run_start(runtime, program, RUNLET_STR("{\"items\": []}"), &unknown, &run),
            RUNLET_ERR_VERSION_MISMATCH);
  run = start(runtime, program, "{\"items\": [3, 1]}", 0);
  char *result = result_of(run);
  CHECK(strcmp(result, "[3,1]") == 0);
  free(result);
  runlet_run_free(run);
  runlet_program_free(program);
}

/* Fails `echo.value` calls with the tool's own error; completes `echo.slow` with invalid JSON. */
static void failing_invoke(void *user_data, runlet_tool_call *call) {
  (void)user_data;
  if (str_is(runlet_tool_call_name(call), "echo.value")) {
    runlet_tool_call_fail(call, runlet_error_new_tool(RUNLET_STR("NOT_FOUND"), RUNLET_STR("no customer c-9"), false,
                                                      -1, RUNLET_STR("{\"customer\":\"c-9\"}")));
  } else {
    CHECK_ERR(runlet_tool_call_complete(call, RUNLET_STR("{not json")), RUNLET_ERR_INVALID_JSON);
  }
}

static void failed_calls_reach_the_result_with_their_code(void) {
  runlet_tool_executor executor = RUNLET_TOOL_EXECUTOR_INIT;
  executor.invoke = failing_invoke;
  runlet_runtime *runtime = runtime_with(&executor, NULL, NULL);

  runlet_program *program = compile(runtime, "return echo.value(1)\n");
  runlet_run *run = start(runtime, program, "", 0);
  CHECK_OK(runlet_run_wait(run, -1));
  CHECK(runlet_run_status(run) == RUNLET_RUN_FAILED);
  runlet_buf buf = {(uint8_t *)1, 5};
  runlet_error *err = runlet_run_result_json(run, &buf);
  CHECK(buf.ptr == NULL && buf.len == 0);
  CHECK(runlet_error_code(err) == RUNLET_ERR_TOOL_FAILED);
  CHECK(str_contains(runlet_error_message(err), "NOT_FOUND: no customer c-9"));
  runlet_str details = runlet_error_details_json(err);
  CHECK(str_contains(details, "\"code\":\"NOT_FOUND\""));
  CHECK(str_contains(details, "\"customer\":\"c-9\""));
  CHECK(str_contains(details, "\"tool\":\"echo.value\""));
  runlet_error_free(err);
  runlet_run_free(run);
  runlet_program_free(program);

  program = compile(runtime, "return echo.slow(1)\n");
  run = start(runtime, program, "", 0);
  CHECK_OK(runlet_run_wait(run, -1));
  err = runlet_run_result_json(run, &buf);
  CHECK(runlet_error_code(err) == RUNLET_ERR_TOOL_FAILED);
  CHECK(str_contains(runlet_error_details_json(err), "\"code\":\"RL8101\""));
  runlet_error_free(err);
  runlet_run_free(run);
  runlet_program_free(program);
  runlet_runtime_free(runtime);
}

static void limits_are_checked_and_enforced(void) {
  runlet_tool_executor executor = echo_executor();
  runlet_runtime_options options = RUNLET_RUNTIME_OPTIONS_INIT;
  options.registry_json = str_of(TEST_REGISTRY);
  options.executor = &executor;
  runlet_runtime *runtime = NULL;
  options.limits_json = RUNLET_STR("{\"tool_callz\": 2}");
  runlet_error *err = runlet_runtime_new(&options, &runtime);
  CHECK(runlet_error_code(err) == RUNLET_ERR_INVALID_ARGUMENT);
  CHECK(str_contains(runlet_error_message(err), "tool_calls"));
  runlet_error_free(err);
  options.limits_json = RUNLET_STR("{\"tool_calls\": -1}");
  CHECK_ERR(runlet_runtime_new(&options, &runtime), RUNLET_ERR_INVALID_ARGUMENT);
  options.limits_json = RUNLET_STR("{\"tool_calls\": 2");
  CHECK_ERR(runlet_runtime_new(&options, &runtime), RUNLET_ERR_INVALID_JSON);

  options.limits_json = RUNLET_STR("{\"tool_calls\": 2}");
  CHECK_OK(runlet_runtime_new(&options, &runtime));
  runlet_program *program = compile(runtime, "a = echo.value(1)\nb = echo.value(2)\nc = echo.value(3)\nreturn [a, b, c]\n");
  runlet_run *run = start(runtime, program, "", 0);
  CHECK_OK(runlet_run_wait(run, -1));
  CHECK(runlet_run_status(run) == RUNLET_RUN_FAILED);
  runlet_buf buf = {NULL, 0};
  err = runlet_run_result_json(run, &buf);
  CHECK(runlet_error_code(err) == RUNLET_ERR_LIMIT);
  CHECK(str_contains(runlet_error_details_json(err), "tool_calls"));
  runlet_error_free(err);
  runlet_run_free(run);

  runlet_run_options more = RUNLET_RUN_OPTIONS_INIT;
  more.limits_json = RUNLET_STR("{\"tool_calls\": 3}");
  CHECK_OK(runlet_run_start(runtime, program, RUNLET_STR(""), &more, &run));
  char *result = result_of(run);
  CHECK(strcmp(result, "[1,2,3]") == 0);
  free(result);
  runlet_run_free(run);
  runlet_program_free(program);
  runlet_runtime_free(runtime);
}

int main(void) {
  host_errors_keep_what_they_were_given();
  runlet_tool_executor executor = echo_executor();
  runlet_runtime *runtime = runtime_with(&executor, NULL, NULL);
  compile_errors_carry_the_diagnostics_report(runtime);
  registry_errors_carry_the_diagnostics_report();
  invalid_utf8_and_json_inputs_are_refused(runtime);
  runlet_runtime_free(runtime);
  failed_calls_reach_the_result_with_their_code();
  limits_are_checked_and_enforced();
  puts("errors: ok");
  return 0;
}
