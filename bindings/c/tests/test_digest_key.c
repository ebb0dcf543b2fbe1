/* The digest key (spec §6.2): a call whose argument is secret gets an operation id keyed with the
 * runtime's key, so the id depends on the key and repeats under the same key; public arguments
 * get the same id under any key; a bad key or id is refused. */
#include "support.h"

static const char *const KEYED_REGISTRY =
    "{\"tools\": [{\"name\": \"vault.use\", \"params\": [{\"name\": \"x\", \"schema\": {\"type\": \"string\"}}],"
    " \"outputSchema\": {\"type\": \"string\"}, \"execution\": \"pure\"}],"
    " \"inputs\": {\"token\": {\"type\": \"string\", \"x-runlet-sensitivity\": \"secret\"},"
    "            \"name\": {\"type\": \"string\"}}}";

/* Completes with "ok" and keeps the call's operation id in `user_data` (a char[80]). */
static void remember_operation(void *user_data, runlet_tool_call *call) {
  runlet_str id = runlet_tool_call_operation_id(call);
  CHECK(id.len > 0 && id.len < 80);
  memcpy(user_data, id.ptr, id.len);
  ((char *)user_data)[id.len] = '\0';
  CHECK_OK(runlet_tool_call_complete(call, str_of("\"ok\"")));
}

static runlet_runtime *runtime_keyed(const char *key_id, const char *key, char *operation) {
  runlet_tool_executor executor = RUNLET_TOOL_EXECUTOR_INIT;
  executor.invoke = remember_operation;
  executor.user_data = operation;
  runlet_runtime_options options = RUNLET_RUNTIME_OPTIONS_INIT;
  options.registry_json = str_of(KEYED_REGISTRY);
  options.executor = &executor;
  options.digest_key_id = str_of(key_id);
  options.digest_key.ptr = (const uint8_t *)key;
  options.digest_key.len = strlen(key);
  runlet_runtime *runtime = NULL;
  CHECK_OK(runlet_runtime_new(&options, &runtime));
  return runtime;
}

/* The operation id of `vault.use(<input>)` run with the key `key` (id `key_id`). */
static void operation_of(const char *key_id, const char *key, const char *input, char *operation) {
  runlet_runtime *runtime = runtime_keyed(key_id, key, operation);
  char source[64];
  snprintf(source, sizeof source, "return vault.use(%s)\n", input);
  runlet_program *program = NULL;
  CHECK_OK(runlet_program_compile(runtime, str_of(source), str_of(""), &program));
  runlet_run *run = start(runtime, program, "{\"token\": \"t0ken-9\", \"name\": \"ada\"}", 0);
  free(result_of(run));
  runlet_run_free(run);
  runlet_program_free(program);
  runlet_runtime_free(runtime);
}

static void secret_arguments_are_keyed_by_the_runtime_key(void) {
  char one[80], again[80], two[80], fingerprinted[80];
  operation_of("tenant-1", "first key", "token", one);
  operation_of("tenant-1", "first key", "token", again);
  operation_of("tenant-2", "second key", "token", two);
  operation_of("", "first key", "token", fingerprinted);
  CHECK(strcmp(one, again) == 0);
  CHECK(strcmp(one, two) != 0);
  CHECK(strcmp(fingerprinted, two) != 0);
}

static void public_arguments_are_not_keyed(void) {
  char one[80], two[80];
  operation_of("tenant-1", "first key", "name", one);
  operation_of("tenant-2", "second key", "name", two);
  CHECK(strcmp(one, two) == 0);
}

static void bad_keys_are_refused(void) {
  runlet_tool_executor executor = RUNLET_TOOL_EXECUTOR_INIT;
  executor.invoke = remember_operation;
  runlet_runtime_options options = RUNLET_RUNTIME_OPTIONS_INIT;
  options.registry_json = str_of(KEYED_REGISTRY);
  options.executor = &executor;
  options.digest_key_id = str_of("no spaces allowed");
  options.digest_key.ptr = (const uint8_t *)"k";
  options.digest_key.len = 1;
  runlet_runtime *runtime = NULL;
  CHECK_ERR(runlet_runtime_new(&options, &runtime), RUNLET_ERR_INVALID_ARGUMENT);
  options.digest_key_id = str_of("tenant-1");
  options.digest_key.len = 0;
  CHECK_ERR(runlet_runtime_new(&options, &runtime), RUNLET_ERR_INVALID_ARGUMENT);
  CHECK(runtime == NULL);
}

int main(void) {
  secret_arguments_are_keyed_by_the_runtime_key();
  public_arguments_are_not_keyed();
  bad_keys_are_refused();
  puts("digest_key: ok");
  return 0;
}
