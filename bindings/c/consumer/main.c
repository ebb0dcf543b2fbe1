/* A host linking an installed Runlet: one tool answered inline, one run, its result printed. */
#include <stdio.h>
#include <string.h>

#include <runlet.h>

static void echo(void *user_data, runlet_tool_call *call) {
  (void)user_data;
  runlet_str args = runlet_tool_call_args_json(call); /* "[x]" */
  runlet_str first = {args.ptr + 1, args.len - 2};
  runlet_error_free(runlet_tool_call_complete(call, first));
}

static int failed(runlet_error *err) {
  if (err == NULL) return 0;
  runlet_str message = runlet_error_message(err);
  fprintf(stderr, "error %u: %.*s\n", runlet_error_code(err), (int)message.len, message.ptr);
  runlet_error_free(err);
  return 1;
}

int main(void) {
  runlet_tool_executor executor = RUNLET_TOOL_EXECUTOR_INIT;
  executor.invoke = echo;
  runlet_runtime_options options = RUNLET_RUNTIME_OPTIONS_INIT;
  options.registry_json = RUNLET_STR("{\"tools\": [{\"name\": \"echo.value\", \"params\": [{\"name\": \"x\", \"schema\": {}}]}]}");
  options.executor = &executor;
  runlet_runtime *runtime = NULL;
  runlet_program *program = NULL;
  runlet_run *run = NULL;
  runlet_buf result = {NULL, 0};
  int status = failed(runlet_runtime_new(&options, &runtime)) ||
               failed(runlet_program_compile(runtime, RUNLET_STR("return echo.value(\"hello from C\")\n"),
                                             RUNLET_STR(""), &program)) ||
               failed(runlet_run_start(runtime, program, RUNLET_STR(""), NULL, &run)) ||
               failed(runlet_run_wait(run, -1)) || failed(runlet_run_result_json(run, &result));
  if (status == 0) {
    printf("runlet %.*s: %.*s\n", (int)runlet_version().len, runlet_version().ptr, (int)result.len, (const char *)result.ptr);
    status = result.len != 14 || memcmp(result.ptr, "\"hello from C\"", 14) != 0;
  }
  runlet_buf_free(result);
  runlet_run_free(run);
  runlet_program_free(program);
  runlet_runtime_free(runtime);
  return status;
}
