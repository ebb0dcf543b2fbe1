/* MCP servers attached from C (runlet_runtime_options.mcp_servers_json): a real stdio server (the
 * Python lab server of tests/mcp-servers, installed by scripts/install-mcp-servers) answering
 * calls with no host executor, beside the host's executor for the host's own tools, and the
 * refusals: a server that does not start, unknown flags, trusted names that are no JSON array,
 * and a tool no one answers; the silence timeout ending a call a server garbled, and the start-up
 * timeout a server that is slow to start. */
#include <stddef.h>
#include <unistd.h>

#include "support.h"

/* The `mcpServers` JSON starting the test server `script` of tests/mcp-servers as `name` (stdio),
 * its arguments after the script the JSON strings `args`; malloc'ed. */
static char *test_servers(const char *name, const char *script, const char *args) {
  const char *dir = RUNLET_MCP_SERVERS_DIR;
  char python[1024];
  snprintf(python, sizeof python, "%s/.venv/bin/python", dir);
  if (access(python, X_OK) != 0) {
    fprintf(stderr, "the MCP test servers are not installed (%s): run scripts/install-mcp-servers\n", python);
    exit(1);
  }
  char *json = malloc(4096);
  snprintf(json, 4096, "{\"mcpServers\": {\"%s\": {\"command\": \"%s\", \"args\": [\"%s/%s\", %s]}}}", name, python,
           dir, script, args);
  return json;
}

/* The `mcpServers` JSON starting the lab server (stdio); malloc'ed. */
static char *lab_servers(void) { return test_servers("lab", "lab_server.py", "\"stdio\""); }

static runlet_error *runtime_over(const char *servers, const char *registry, const runlet_tool_executor *executor,
                                  uint32_t flags, const char *trusted, runlet_runtime **out) {
  runlet_runtime_options options = RUNLET_RUNTIME_OPTIONS_INIT;
  options.registry_json = str_of(registry);
  options.executor = executor;
  options.mcp_servers_json = str_of(servers);
  options.mcp_trusted_json = str_of(trusted);
  options.mcp_flags = flags;
  return runlet_runtime_new(&options, out);
}

static void the_servers_answer_without_a_host_executor(void) {
  char *servers = lab_servers();
  runlet_runtime *runtime = NULL;
  CHECK_OK(runtime_over(servers, "", NULL, 0, "", &runtime));
  runlet_program *program = compile(runtime, "xs = for n in [1, 2, 3] {\n  return lab.add({a: n, b: 10}).result\n}\nreturn xs\n");
  runlet_run *run = start(runtime, program, "", 0);
  char *result = result_of(run);
  if (strcmp(result, "[11,12,13]") != 0) fprintf(stderr, "result: %s\n", result);
  CHECK(strcmp(result, "[11,12,13]") == 0);
  free(result);
  runlet_run_free(run);
  runlet_program_free(program);
  runlet_runtime_free(runtime);
  free(servers);
}

static void host_tools_go_to_the_host_executor(void) {
  char *servers = lab_servers();
  runlet_tool_executor executor = echo_executor();
  runlet_runtime *runtime = NULL;
  CHECK_OK(runtime_over(servers, TEST_REGISTRY, &executor, RUNLET_MCP_AT_MOST_ONCE, "[\"lab\"]", &runtime));
  runlet_program *program = compile(runtime, "n = echo.value(5)\nreturn lab.add({a: n, b: 1}).result\n");
  runlet_run *run = start(runtime, program, "", 0);
  char *result = result_of(run);
  CHECK(strcmp(result, "6") == 0);
  free(result);
  runlet_run_free(run);
  runlet_program_free(program);
  runlet_runtime_free(runtime);
  free(servers);
}

static void refusals_name_what_is_wrong(void) {
  runlet_runtime *runtime = NULL;
  runlet_error *err = runtime_over("{\"mcpServers\": {\"gone\": {\"command\": \"/nonexistent/mcp-server\"}}}", "", NULL,
                                   0, "", &runtime);
  CHECK(err && runlet_error_code(err) == RUNLET_ERR_MCP && runtime == NULL);
  CHECK(str_contains(runlet_error_details_json(err), "\"RL8602\""));
  CHECK(str_contains(runlet_error_message(err), "gone"));
  runlet_error_free(err);

  CHECK_ERR(runtime_over("{\"mcpServers\": 7}", "", NULL, 0, "", &runtime), RUNLET_ERR_MCP);
  char *servers = lab_servers();
  CHECK_ERR(runtime_over(servers, "", NULL, 1u << 7, "", &runtime), RUNLET_ERR_INVALID_ARGUMENT);
  CHECK_ERR(runtime_over(servers, "", NULL, 0, "lab", &runtime), RUNLET_ERR_INVALID_JSON);
  /* The host registry names echo.value, which no server answers and no executor runs. */
  err = runtime_over(servers, TEST_REGISTRY, NULL, 0, "", &runtime);
  CHECK(err && runlet_error_code(err) == RUNLET_ERR_NULL_ARGUMENT);
  CHECK(str_contains(runlet_error_message(err), "`echo.value`"));
  runlet_error_free(err);
  free(servers);
}

/* Runs `return rogue.echo({})` against a server that garbles its answer, which the transport
 * drops, with `silence_ms` as the silence timeout and `limits` as the runtime's limits; the run's
 * error. The wait is bounded, so a setting that did not reach the library fails the test. */
static runlet_error *garbled_call(uint64_t silence_ms, const char *limits) {
  char *servers = test_servers("rogue", "rogue_server.py", "\"garbled-result\"");
  runlet_runtime_options options = RUNLET_RUNTIME_OPTIONS_INIT;
  options.mcp_servers_json = str_of(servers);
  options.mcp_silence_timeout_ms = silence_ms;
  options.limits_json = str_of(limits);
  runlet_runtime *runtime = NULL;
  CHECK_OK(runlet_runtime_new(&options, &runtime));
  runlet_program *program = compile(runtime, "return rogue.echo({})\n");
  runlet_run *run = start(runtime, program, "", 0);
  CHECK_OK(runlet_run_wait(run, 30000));
  CHECK(runlet_run_status(run) == RUNLET_RUN_FAILED);
  runlet_buf buf = {NULL, 0};
  runlet_error *err = runlet_run_result_json(run, &buf);
  runlet_run_free(run);
  runlet_program_free(program);
  runlet_runtime_free(runtime);
  free(servers);
  return err;
}

/* The call fails with RL6102 once `mcp_silence_timeout_ms` passes, instead of waiting for ever;
 * with RUNLET_MCP_SILENCE_FOREVER it waits, here until the run's wall-clock limit. */
static void a_call_its_server_goes_silent_on_fails_at_the_silence_timeout(void) {
  runlet_error *err = garbled_call(600, "");
  CHECK(runlet_error_code(err) == RUNLET_ERR_TOOL_FAILED);
  CHECK(str_contains(runlet_error_details_json(err), "RL6102"));
  CHECK(str_contains(runlet_error_message(err), "for 600 ms"));
  runlet_error_free(err);
  err = garbled_call(RUNLET_MCP_SILENCE_FOREVER, "{\"wall_clock_ms\": 1500}");
  CHECK(runlet_error_code(err) == RUNLET_ERR_LIMIT);
  CHECK(str_contains(runlet_error_details_json(err), "wall_clock_ms"));
  runlet_error_free(err);
}

/* A server that answers nothing for 3 s after it starts, given 300 ms: RUNLET_ERR_MCP (RL8602),
 * naming the time it had. */
static void a_server_slower_than_the_startup_timeout_is_refused(void) {
  char *servers = test_servers("slow", "rogue_server.py", "\"slow-start\", \"3\"");
  runlet_runtime_options options = RUNLET_RUNTIME_OPTIONS_INIT;
  options.mcp_servers_json = str_of(servers);
  options.mcp_startup_timeout_ms = 300;
  runlet_runtime *runtime = NULL;
  runlet_error *err = runlet_runtime_new(&options, &runtime);
  CHECK(err && runlet_error_code(err) == RUNLET_ERR_MCP && runtime == NULL);
  CHECK(str_contains(runlet_error_details_json(err), "\"RL8602\""));
  CHECK(str_contains(runlet_error_message(err), "within 300 ms"));
  runlet_error_free(err);

  /* Options of the layout before the MCP timeouts get their defaults: 30 s is time enough. */
  options.struct_size = offsetof(runlet_runtime_options, mcp_silence_timeout_ms);
  CHECK_OK(runlet_runtime_new(&options, &runtime));
  runlet_runtime_free(runtime);
  free(servers);
}

int main(void) {
  the_servers_answer_without_a_host_executor();
  a_call_its_server_goes_silent_on_fails_at_the_silence_timeout();
  a_server_slower_than_the_startup_timeout_is_refused();
  host_tools_go_to_the_host_executor();
  refusals_name_what_is_wrong();
  puts("test_mcp: ok");
  return 0;
}
