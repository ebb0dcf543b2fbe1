/* Durable runs from C: the built-in SQLite journal, a worker process that dies in the middle of a
 * call (fork + _exit), and the host's recovery decisions about the call it left uncertain —
 * resolved applied, not applied or failed, a fresh generation, or answered by the executor's
 * `recover` — then the resumed run and its graph from the journal. */
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support.h"

/* `echo.first` answers first; the `pay.*` tools take its answer, one per execution class. */
static const char *const REGISTRY =
    "{\"tools\": ["
    "  {\"name\": \"echo.first\", \"params\": [{\"name\": \"x\", \"schema\": {\"type\": \"integer\"}}],"
    "   \"outputSchema\": {\"type\": \"integer\"}, \"execution\": \"idempotent\"},"
    "  {\"name\": \"pay.once\", \"params\": [{\"name\": \"x\", \"schema\": {\"type\": \"integer\"}}],"
    "   \"outputSchema\": {\"type\": \"integer\"}, \"execution\": \"at_most_once\"},"
    "  {\"name\": \"pay.risky\", \"params\": [{\"name\": \"x\", \"schema\": {\"type\": \"integer\"}}],"
    "   \"outputSchema\": {\"type\": \"integer\"}, \"execution\": \"unsafe\"},"
    "  {\"name\": \"pay.checked\", \"params\": [{\"name\": \"x\", \"schema\": {\"type\": \"integer\"}}],"
    "   \"outputSchema\": {\"type\": \"integer\"}, \"execution\": \"recoverable\"}"
    "]}";

static const char *const KEY = "the key every worker of these runs shares";

/* Every tool answers its integer argument times ten (echo.first: the argument itself); the tool
 * named `dies_in`, if any, kills its process instead, after telling `report` the run's id. */
static const char *dies_in;
static int report = -1;
/* What `recover` answers: 'c' complete with 5, 'n' not applied, 'u' unknown. */
static char recover_answer;
static atomic_int dispatches, recoveries;
static char last_operation[128];

static void answer(void *user_data, runlet_tool_call *call) {
  (void)user_data;
  runlet_str name = runlet_tool_call_name(call);
  if (dies_in != NULL && str_is(name, dies_in)) {
    runlet_str run_id = runlet_tool_call_run_id(call);
    CHECK(write(report, run_id.ptr, run_id.len) == (ssize_t)run_id.len);
    raise(SIGKILL); /* the worker dies: no cleanup, no leak report, nothing journaled after */
  }
  atomic_fetch_add(&dispatches, 1);
  runlet_str op = runlet_tool_call_operation_id(call);
  CHECK(op.len < sizeof last_operation);
  memcpy(last_operation, op.ptr, op.len);
  last_operation[op.len] = '\0';
  char *args = str_dup(runlet_tool_call_args_json(call));
  long x = strtol(args + 1, NULL, 10);
  free(args);
  char result[32];
  snprintf(result, sizeof result, "%ld", str_is(name, "echo.first") ? x : x * 10);
  CHECK_OK(runlet_tool_call_complete(call, str_of(result)));
}

static void recover(void *user_data, runlet_tool_call *call) {
  (void)user_data;
  CHECK(runlet_tool_call_is_recovery(call));
  CHECK(str_is(runlet_tool_call_name(call), "pay.checked"));
  atomic_fetch_add(&recoveries, 1);
  if (recover_answer == 'c') CHECK_OK(runlet_tool_call_complete(call, RUNLET_STR("5")));
  if (recover_answer == 'n') CHECK_OK(runlet_tool_call_not_applied(call));
  if (recover_answer == 'u') CHECK_OK(runlet_tool_call_outcome_unknown(call));
}

static runlet_runtime *durable_runtime(const char *path, int with_recover) {
  runlet_tool_executor executor = RUNLET_TOOL_EXECUTOR_INIT;
  executor.invoke = answer;
  if (with_recover) executor.recover = recover;
  runlet_runtime_options options = RUNLET_RUNTIME_OPTIONS_INIT;
  options.registry_json = str_of(REGISTRY);
  options.executor = &executor;
  options.sqlite_journal_path = str_of(path);
  options.sqlite_durability = RUNLET_DURABILITY_NORMAL;
  options.snapshot_every = 1; /* resumes below restore snapshots through the C ABI */
  options.digest_key.ptr = (const uint8_t *)KEY;
  options.digest_key.len = strlen(KEY);
  options.view.values = RUNLET_SENSITIVITY_SECRET;
  runlet_runtime *runtime = NULL;
  CHECK_OK(runlet_runtime_new(&options, &runtime));
  return runtime;
}

static char *source_for(const char *tool) {
  static char source[128];
  snprintf(source, sizeof source, "a = echo.first(1)\nreturn [a, %s(a)]\n", tool);
  return source;
}

/* A fresh journal file; the caller frees the path. */
static char *fresh_journal(void) {
  char *path = str_dup(str_of("/tmp/runlet-recovery-XXXXXX"));
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  close(fd);
  return path;
}

static void remove_journal(char *path) {
  char side[96];
  unlink(path);
  snprintf(side, sizeof side, "%s-wal", path), unlink(side);
  snprintf(side, sizeof side, "%s-shm", path), unlink(side);
  free(path);
}

/* Runs `source_for(tool)` in a child process over the journal at `path`; the child is killed
 * while `tool` is dispatching. Returns the run's id (malloc'ed). */
static char *crash_in(const char *path, const char *tool) {
  int pipefd[2];
  CHECK(pipe(pipefd) == 0);
  fflush(NULL);
  pid_t child = fork();
  CHECK(child >= 0);
  if (child == 0) {
    close(pipefd[0]);
    dies_in = tool;
    report = pipefd[1];
    runlet_runtime *runtime = durable_runtime(path, 0);
    runlet_program *program = compile(runtime, source_for(tool));
    runlet_run *run = start(runtime, program, "", 0);
    runlet_run_wait(run, 30000);
    _exit(3); /* the tool never ran */
  }
  close(pipefd[1]);
  char id[256];
  ssize_t got = 0, n;
  while ((n = read(pipefd[0], id + got, sizeof id - 1 - (size_t)got)) > 0) got += n;
  close(pipefd[0]);
  int status = 0;
  CHECK(waitpid(child, &status, 0) == child);
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  CHECK(got > 0);
  id[got] = '\0';
  return str_dup(str_of(id));
}

/* The status `runlet_runtime_runs_json` gives run `run_id` (static storage). */
static const char *status_of(runlet_runtime *runtime, const char *run_id) {
  static char status[32];
  runlet_buf buf = {NULL, 0};
  CHECK_OK(runlet_runtime_runs_json(runtime, &buf));
  char *listed = str_dup((runlet_str){(const char *)buf.ptr, buf.len});
  runlet_buf_free(buf);
  CHECK(strncmp(listed, "{\"runs\":[", 9) == 0);
  char key[300];
  snprintf(key, sizeof key, "\"run_id\":\"%s\"", run_id);
  char *found = strstr(listed, key);
  CHECK(found != NULL);
  char *entry = found;
  while (*entry != '{') entry--; /* the run's object */
  char *end = strchr(found, '}');
  *end = '\0';
  char *field = strstr(entry, "\"status\":\"");
  CHECK(field != NULL);
  field += strlen("\"status\":\"");
  size_t len = strcspn(field, "\"");
  CHECK(len < sizeof status);
  memcpy(status, field, len);
  status[len] = '\0';
  CHECK(strstr(entry, "\"program_digest\":\"sha256:") != NULL);
  free(listed);
  return status;
}

/* The `operation_id` of the only uncertain operation listed, checking its tool and class. */
static char *the_uncertain(runlet_runtime *runtime, runlet_program *program, const char *run_id, const char *tool,
                           const char *execution) {
  /* Still running as far as the journal knows: no process owns it, so it is interrupted. */
  CHECK(strcmp(status_of(runtime, run_id), "interrupted") == 0);
  runlet_buf buf = {NULL, 0};
  CHECK_OK(runlet_run_uncertain_json(runtime, program, str_of(run_id), NULL, &buf));
  runlet_str listed = {(const char *)buf.ptr, buf.len};
  char expect[96];
  snprintf(expect, sizeof expect, "\"tool\":\"%s\"", tool);
  CHECK(str_contains(listed, expect));
  snprintf(expect, sizeof expect, "\"class\":\"%s\"", execution);
  CHECK(str_contains(listed, expect));
  CHECK(str_contains(listed, "\"generation\":0"));
  char *text = str_dup(listed);
  runlet_buf_free(buf);
  CHECK(text[0] == '[' && strstr(text, "},{") == NULL); /* exactly one */
  char *start = strstr(text, "\"operation_id\":\"");
  CHECK(start != NULL);
  start += strlen("\"operation_id\":\"");
  char *end = strchr(start, '"');
  *end = '\0';
  char *operation = str_dup(str_of(start));
  free(text);
  return operation;
}

/* Resumes `run_id` and returns its result JSON or, for a failed run, its error message. */
static char *resume_outcome(runlet_runtime *runtime, runlet_program *program, const char *run_id) {
  runlet_run *run = NULL;
  CHECK_OK(runlet_run_resume(runtime, program, str_of(run_id), NULL, &run));
  CHECK_OK(runlet_run_wait(run, -1));
  runlet_buf buf = {NULL, 0};
  runlet_error *err = runlet_run_result_json(run, &buf);
  char *outcome;
  if (err == NULL) {
    runlet_str view = {(const char *)buf.ptr, buf.len};
    outcome = str_dup(view);
    runlet_buf_free(buf);
  } else {
    CHECK(runlet_run_status(run) == RUNLET_RUN_FAILED);
    outcome = str_dup(runlet_error_message(err));
    runlet_error_free(err);
  }
  runlet_run_free(run);
  return outcome;
}

static void sqlite_options_are_checked(void) {
  runlet_tool_executor executor = echo_executor();
  runlet_runtime_options options = RUNLET_RUNTIME_OPTIONS_INIT;
  options.registry_json = str_of(REGISTRY);
  options.executor = &executor;
  runlet_runtime *runtime = NULL;
  options.sqlite_journal_path = str_of("/tmp/runlet-never-created.db");
  options.sqlite_durability = 7;
  CHECK_ERR(runlet_runtime_new(&options, &runtime), RUNLET_ERR_INVALID_ARGUMENT);
  CHECK(runtime == NULL && access("/tmp/runlet-never-created.db", F_OK) != 0);
  options.sqlite_durability = RUNLET_DURABILITY_FULL;
  options.sqlite_journal_path = str_of("/");
  runlet_error *err = runlet_runtime_new(&options, &runtime);
  CHECK(runlet_error_code(err) == RUNLET_ERR_JOURNAL);
  CHECK(str_contains(runlet_error_message(err), "RL7"));
  runlet_error_free(err);
}

static void drop_counter(void *user_data) { atomic_fetch_add((atomic_int *)user_data, 1); }

/* Journal callbacks that are never called: registration fails first. */
static runlet_error *no_create(void *ud, runlet_str id, runlet_str header) {
  (void)ud, (void)id, (void)header;
  return NULL;
}
static runlet_error *no_read(void *ud, runlet_str id, uint64_t after, size_t limit, runlet_journal_sink *sink) {
  (void)ud, (void)id, (void)after, (void)limit, (void)sink;
  return NULL;
}
static runlet_error *no_sink(void *ud, runlet_str id, runlet_journal_sink *sink) {
  (void)ud, (void)id, (void)sink;
  return NULL;
}
static runlet_error *no_append(void *ud, runlet_str id, uint64_t expected, const runlet_journal_record *records,
                               size_t count, uint64_t *last) {
  (void)ud, (void)id, (void)expected, (void)records, (void)count, (void)last;
  return NULL;
}
static runlet_error *no_store(void *ud, runlet_str id, uint64_t upto, runlet_bytes bytes) {
  (void)ud, (void)id, (void)upto, (void)bytes;
  return NULL;
}

static void a_host_journal_and_a_sqlite_path_are_refused_together(void) {
  static atomic_int drops;
  runlet_tool_executor executor = echo_executor();
  runlet_journal_vtable vtable = RUNLET_JOURNAL_VTABLE_INIT;
  vtable.user_data = &drops;
  vtable.create_run = no_create, vtable.header = no_sink, vtable.append = no_append, vtable.read = no_read;
  vtable.load_snapshot = no_sink, vtable.store_snapshot = no_store, vtable.drop = drop_counter;
  runlet_runtime_options options = RUNLET_RUNTIME_OPTIONS_INIT;
  options.registry_json = str_of(REGISTRY);
  options.executor = &executor;
  options.journal = &vtable;
  options.sqlite_journal_path = str_of("/tmp/runlet-never-created.db");
  runlet_runtime *runtime = NULL;
  CHECK_ERR(runlet_runtime_new(&options, &runtime), RUNLET_ERR_INVALID_ARGUMENT);
  CHECK(runtime == NULL && atomic_load(&drops) == 1);
  CHECK(access("/tmp/runlet-never-created.db", F_OK) != 0);
}

static void an_at_most_once_call_stays_uncertain_until_resolved(void) {
  char *path = fresh_journal();
  char *run_id = crash_in(path, "pay.once");
  runlet_runtime *runtime = durable_runtime(path, 0);
  runlet_program *program = compile(runtime, source_for("pay.once"));
  char *operation = the_uncertain(runtime, program, run_id, "pay.once", "at_most_once");

  runlet_buf fresh = {NULL, 0};
  CHECK_ERR(runlet_run_authorize_fresh_generation(runtime, program, str_of(run_id), NULL, str_of(operation), &fresh),
            RUNLET_ERR_INVALID_ARGUMENT); /* RL8402: only a resolution settles it */
  CHECK(fresh.ptr == NULL);
  CHECK_ERR(runlet_run_resolve_applied(runtime, program, str_of(run_id), NULL, str_of("not-an-id"), str_of("7")),
            RUNLET_ERR_INVALID_ARGUMENT);
  CHECK_ERR(runlet_run_resolve_applied(runtime, program, str_of(run_id), NULL, str_of(operation), str_of("{")),
            RUNLET_ERR_INVALID_JSON);
  runlet_error *err =
      runlet_run_resolve_applied(runtime, program, str_of(run_id), NULL, str_of(operation), str_of("\"seven\""));
  CHECK(runlet_error_code(err) == RUNLET_ERR_INVALID_ARGUMENT && str_contains(runlet_error_message(err), "RL8403"));
  runlet_error_free(err);
  CHECK_ERR(runlet_run_resolve_applied(runtime, program, str_of("no-such-run"), NULL, str_of(operation), str_of("7")),
            RUNLET_ERR_JOURNAL_UNKNOWN_RUN);

  CHECK_OK(runlet_run_resolve_applied(runtime, program, str_of(run_id), NULL, str_of(operation), str_of("7")));
  err = runlet_run_resolve_not_applied(runtime, program, str_of(run_id), NULL, str_of(operation));
  CHECK(runlet_error_code(err) == RUNLET_ERR_INVALID_ARGUMENT && str_contains(runlet_error_message(err), "RL8401"));
  runlet_error_free(err);
  atomic_store(&dispatches, 0);
  char *outcome = resume_outcome(runtime, program, run_id);
  CHECK(strcmp(outcome, "[1,7]") == 0);
  CHECK(atomic_load(&dispatches) == 0); /* neither call is dispatched again */
  free(outcome);

  /* Finished: listed as succeeded, nothing is uncertain, and the journal's graph shows its end. */
  CHECK(strcmp(status_of(runtime, run_id), "succeeded") == 0);
  runlet_buf buf = {NULL, 0};
  CHECK_OK(runlet_run_uncertain_json(runtime, program, str_of(run_id), NULL, &buf));
  CHECK(buf.len == 2 && memcmp(buf.ptr, "[]", 2) == 0);
  runlet_buf_free(buf);
  CHECK_OK(runlet_run_journal_snapshot_json(runtime, program, str_of(run_id), &buf));
  runlet_str graph = {(const char *)buf.ptr, buf.len};
  CHECK(str_contains(graph, "\"state\":\"succeeded\"") && str_contains(graph, "\"pay.once\""));
  runlet_buf_free(buf);
  CHECK_ERR(runlet_run_journal_snapshot_json(runtime, program, str_of("no-such-run"), &buf),
            RUNLET_ERR_JOURNAL_UNKNOWN_RUN);
  free(operation), free(run_id);
  runlet_program_free(program);
  runlet_runtime_free(runtime);
  remove_journal(path);

  /* Without a decision the resumed run fails at once as uncertain. */
  path = fresh_journal();
  run_id = crash_in(path, "pay.once");
  runtime = durable_runtime(path, 0);
  program = compile(runtime, source_for("pay.once"));
  outcome = resume_outcome(runtime, program, run_id);
  CHECK(strstr(outcome, "RL6109") != NULL);
  CHECK(strcmp(status_of(runtime, run_id), "failed") == 0);
  free(outcome), free(run_id);
  runlet_program_free(program);
  runlet_runtime_free(runtime);
  remove_journal(path);
}

static void an_unsafe_call_runs_again_only_under_a_fresh_generation(void) {
  char *path = fresh_journal();
  char *run_id = crash_in(path, "pay.risky");
  runlet_runtime *runtime = durable_runtime(path, 0);
  runlet_program *program = compile(runtime, source_for("pay.risky"));
  char *operation = the_uncertain(runtime, program, run_id, "pay.risky", "unsafe");
  runlet_error *err = runlet_run_resolve_not_applied(runtime, program, str_of(run_id), NULL, str_of(operation));
  CHECK(runlet_error_code(err) == RUNLET_ERR_INVALID_ARGUMENT && str_contains(runlet_error_message(err), "RL8402"));
  runlet_error_free(err);
  runlet_buf fresh = {NULL, 0};
  CHECK_OK(runlet_run_authorize_fresh_generation(runtime, program, str_of(run_id), NULL, str_of(operation), &fresh));
  runlet_str fresh_id = {(const char *)fresh.ptr, fresh.len};
  CHECK(fresh.len > 0 && !str_is(fresh_id, operation));
  char *expected_operation = str_dup(fresh_id);
  runlet_buf_free(fresh);
  atomic_store(&dispatches, 0);
  char *outcome = resume_outcome(runtime, program, run_id);
  CHECK(strcmp(outcome, "[1,10]") == 0);
  CHECK(atomic_load(&dispatches) == 1 && strcmp(last_operation, expected_operation) == 0);
  free(outcome), free(expected_operation), free(operation), free(run_id);
  runlet_program_free(program);
  runlet_runtime_free(runtime);
  remove_journal(path);

  /* Resolved as failed: the call fails with the tool's own code, no longer uncertain. */
  path = fresh_journal();
  run_id = crash_in(path, "pay.risky");
  runtime = durable_runtime(path, 0);
  program = compile(runtime, source_for("pay.risky"));
  operation = the_uncertain(runtime, program, run_id, "pay.risky", "unsafe");
  CHECK_ERR(runlet_run_resolve_failed(runtime, program, str_of(run_id), NULL, str_of(operation), NULL),
            RUNLET_ERR_NULL_ARGUMENT);
  runlet_error *declined = runlet_error_new_tool(RUNLET_STR("CARD_DECLINED"), RUNLET_STR("the provider declined it"),
                                                 false, -1, RUNLET_STR(""));
  CHECK_OK(runlet_run_resolve_failed(runtime, program, str_of(run_id), NULL, str_of(operation), declined));
  outcome = resume_outcome(runtime, program, run_id);
  CHECK(strstr(outcome, "CARD_DECLINED") != NULL && strstr(outcome, "RL6109") == NULL);
  free(outcome), free(operation), free(run_id);
  runlet_program_free(program);
  runlet_runtime_free(runtime);
  remove_journal(path);
}

/* Crashes in `pay.checked`, then resumes with an executor whose `recover` answers `with`. */
static char *recovered(char with, int *recovered_calls, int *dispatched_calls) {
  char *path = fresh_journal();
  char *run_id = crash_in(path, "pay.checked");
  runlet_runtime *runtime = durable_runtime(path, 1);
  runlet_program *program = compile(runtime, source_for("pay.checked"));
  recover_answer = with;
  atomic_store(&dispatches, 0), atomic_store(&recoveries, 0);
  char *outcome = resume_outcome(runtime, program, run_id);
  *recovered_calls = atomic_load(&recoveries), *dispatched_calls = atomic_load(&dispatches);
  free(run_id);
  runlet_program_free(program);
  runlet_runtime_free(runtime);
  remove_journal(path);
  return outcome;
}

static void a_recoverable_call_asks_the_executors_recover(void) {
  int asked, dispatched;
  char *outcome = recovered('c', &asked, &dispatched);
  CHECK(strcmp(outcome, "[1,5]") == 0 && asked == 1 && dispatched == 0);
  free(outcome);
  outcome = recovered('n', &asked, &dispatched);
  CHECK(strcmp(outcome, "[1,10]") == 0 && asked == 1 && dispatched == 1);
  free(outcome);
  outcome = recovered('u', &asked, &dispatched);
  CHECK(strstr(outcome, "RL6109") != NULL && asked == 1 && dispatched == 0);
  free(outcome);

  /* An executor of the first struct version (no `recover`) is still accepted: uncertain. */
  char *path = fresh_journal();
  char *run_id = crash_in(path, "pay.checked");
  runlet_tool_executor executor = RUNLET_TOOL_EXECUTOR_INIT;
  executor.struct_size = offsetof(runlet_tool_executor, recover);
  executor.invoke = answer;
  runlet_runtime_options options = RUNLET_RUNTIME_OPTIONS_INIT;
  options.registry_json = str_of(REGISTRY);
  options.executor = &executor;
  options.sqlite_journal_path = str_of(path);
  options.digest_key.ptr = (const uint8_t *)KEY;
  options.digest_key.len = strlen(KEY);
  runlet_runtime *runtime = NULL;
  CHECK_OK(runlet_runtime_new(&options, &runtime));
  runlet_program *program = compile(runtime, source_for("pay.checked"));
  outcome = resume_outcome(runtime, program, run_id);
  CHECK(strstr(outcome, "RL6109") != NULL);
  CHECK(strcmp(status_of(runtime, run_id), "failed") == 0);
  free(outcome), free(run_id);
  runlet_program_free(program);
  runlet_runtime_free(runtime);
  remove_journal(path);
}

static void an_interrupted_run_is_cancelled_from_the_journal(void) {
  /* The resume of a run cancelled while interrupted ends at once, cancelled; a second cancel is
   * refused. */
  char *path = fresh_journal();
  char *run_id = crash_in(path, "pay.once");
  runlet_runtime *runtime = durable_runtime(path, 0);
  runlet_program *program = compile(runtime, source_for("pay.once"));
  CHECK_OK(runlet_run_cancel_interrupted(runtime, program, str_of(run_id), NULL));
  CHECK(strcmp(status_of(runtime, run_id), "cancelled") == 0);
  runlet_error *err = runlet_run_cancel_interrupted(runtime, program, str_of(run_id), NULL);
  CHECK(runlet_error_code(err) == RUNLET_ERR_INVALID_ARGUMENT && str_contains(runlet_error_message(err), "RL8404"));
  runlet_error_free(err);
  runlet_run *run = NULL;
  CHECK_OK(runlet_run_resume(runtime, program, str_of(run_id), NULL, &run));
  CHECK_OK(runlet_run_wait(run, -1));
  CHECK(runlet_run_status(run) == RUNLET_RUN_CANCELLED);
  runlet_run_free(run);
  free(run_id);
  runlet_program_free(program);
  runlet_runtime_free(runtime);
  remove_journal(path);
}

static void not_applied(void *user_data, runlet_tool_call *call) {
  (void)user_data;
  CHECK(!runlet_tool_call_is_recovery(call));
  CHECK_ERR(runlet_tool_call_not_applied(call), RUNLET_ERR_INVALID_ARGUMENT);
}

static void recovery_answers_are_refused_for_dispatches(void) {
  runlet_tool_executor executor = RUNLET_TOOL_EXECUTOR_INIT;
  executor.invoke = not_applied;
  runlet_runtime *runtime = runtime_with(&executor, NULL, NULL);
  runlet_program *program = compile(runtime, "return echo.value(1)\n");
  runlet_run *run = start(runtime, program, "", 0);
  CHECK_OK(runlet_run_wait(run, -1));
  runlet_buf buf = {NULL, 0};
  runlet_error *err = runlet_run_result_json(run, &buf);
  CHECK(runlet_error_code(err) == RUNLET_ERR_TOOL_FAILED);
  CHECK(str_contains(runlet_error_message(err), "INVALID_ARGUMENT"));
  runlet_error_free(err);
  CHECK(!runlet_tool_call_is_recovery(NULL));
  CHECK_ERR(runlet_tool_call_not_applied(NULL), RUNLET_ERR_NULL_ARGUMENT);
  CHECK_ERR(runlet_tool_call_outcome_unknown(NULL), RUNLET_ERR_NULL_ARGUMENT);

  /* The live graph of the run, under the runtime's (default, public) view. */
  CHECK_OK(runlet_run_snapshot_json(run, &buf));
  runlet_str graph = {(const char *)buf.ptr, buf.len};
  CHECK(str_contains(graph, "\"nodes\":[") && str_contains(graph, "\"echo.value\""));
  CHECK(str_contains(graph, "\"state\":\"failed\""));
  runlet_buf_free(buf);
  CHECK_ERR(runlet_run_snapshot_json(NULL, &buf), RUNLET_ERR_NULL_ARGUMENT);
  CHECK_ERR(runlet_run_snapshot_json(run, NULL), RUNLET_ERR_NULL_ARGUMENT);
  runlet_run_free(run);
  runlet_program_free(program);
  runlet_runtime_free(runtime);
}

/* --- recovery at start ---------------------------------------------------------------------- */

static runlet_run *resumed_runs[4];
static int resumed_count;

static void keep_resumed(void *user_data, runlet_run *run) {
  CHECK(user_data == (void *)&resumed_count);
  CHECK(resumed_count < 4);
  resumed_runs[resumed_count++] = run;
}

/* The report of one recovery at start (malloc'ed). */
static char *recover_at_start(runlet_runtime *runtime, uint32_t max_resumes) {
  runlet_buf buf = {NULL, 0};
  CHECK_OK(runlet_runtime_recover_interrupted(runtime, max_resumes, NULL, keep_resumed, &resumed_count, &buf));
  char *report = str_dup((runlet_str){(const char *)buf.ptr, buf.len});
  runlet_buf_free(buf);
  return report;
}

static void recovery_at_start_resumes_parks_and_leaves_runs(void) {
  char *path = fresh_journal();
  char *resumed = crash_in(path, "echo.first");
  char *left = crash_in(path, "pay.once");
  dies_in = NULL;
  runlet_runtime *runtime = durable_runtime(path, 0);
  /* The idempotent call is sent again; the at-most-once one waits for a host's decision. */
  char *report = recover_at_start(runtime, 3);
  char expect[512];
  snprintf(expect, sizeof expect, "{\"outcome\":\"resumed\",\"run_id\":\"%s\"}", resumed);
  CHECK(strstr(report, expect) != NULL);
  snprintf(expect, sizeof expect, "\"outcome\":\"left\",\"run_id\":\"%s\"", left);
  if (strstr(report, expect) == NULL || strstr(report, "\"code\":\"RL8405\"") == NULL) fprintf(stderr, "report: %s\n", report);
  CHECK(strstr(report, expect) != NULL && strstr(report, "\"code\":\"RL8405\"") != NULL);
  CHECK(resumed_count == 1 && str_is(runlet_run_id(resumed_runs[0]), resumed));
  char *result = result_of(resumed_runs[0]);
  CHECK(strcmp(result, "[1,1]") == 0);
  free(result);
  runlet_run_free(resumed_runs[0]);
  resumed_count = 0;
  free(report);
  runlet_runtime_free(runtime);

  /* A run resumed as often as allowed is parked as failed instead. */
  char *parked = crash_in(path, "echo.first");
  dies_in = NULL;
  runtime = durable_runtime(path, 0);
  report = recover_at_start(runtime, 0);
  snprintf(expect, sizeof expect, "{\"outcome\":\"parked\",\"resumes\":0,\"run_id\":\"%s\"}", parked);
  CHECK(strstr(report, expect) != NULL);
  CHECK(strstr(report, resumed) == NULL); /* it ended */
  CHECK(resumed_count == 0);
  CHECK(strcmp(status_of(runtime, parked), "failed") == 0);
  /* Limits are the journal's: giving some is refused. */
  runlet_run_options options = RUNLET_RUN_OPTIONS_INIT;
  options.limits_json = RUNLET_STR("{\"tool_calls\": 3}");
  runlet_buf buf = {NULL, 0};
  CHECK_ERR(runlet_runtime_recover_interrupted(runtime, 3, &options, NULL, NULL, &buf), RUNLET_ERR_INVALID_ARGUMENT);
  free(report);
  free(parked);
  free(left);
  free(resumed);
  runlet_runtime_free(runtime);
  remove_journal(path);
}

/* --- a runtime without a live graph ---------------------------------------------------------- */

static void a_runtime_without_a_live_graph_shows_the_graph_from_its_journal(void) {
  char *path = fresh_journal();
  runlet_tool_executor executor = RUNLET_TOOL_EXECUTOR_INIT;
  executor.invoke = answer;
  runlet_runtime_options options = RUNLET_RUNTIME_OPTIONS_INIT;
  options.registry_json = str_of(REGISTRY);
  options.executor = &executor;
  options.sqlite_journal_path = str_of(path);
  options.runtime_flags = 0x80;
  runlet_runtime *runtime = NULL;
  CHECK_ERR(runlet_runtime_new(&options, &runtime), RUNLET_ERR_INVALID_ARGUMENT);
  options.runtime_flags = RUNLET_RUNTIME_NO_LIVE_GRAPH;
  CHECK_OK(runlet_runtime_new(&options, &runtime));
  runlet_program *program = compile(runtime, "return echo.first(1)\n");
  runlet_run *run = start(runtime, program, "", 0);
  CHECK_OK(runlet_run_wait(run, -1));
  runlet_buf buf = {NULL, 0};
  CHECK_OK(runlet_run_snapshot_json(run, &buf));
  runlet_str live = {(const char *)buf.ptr, buf.len};
  CHECK(str_contains(live, "\"nodes\":[]") && str_contains(live, "\"state\":\"succeeded\""));
  CHECK(str_contains(live, "live_graph(false)"));
  runlet_buf_free(buf);
  CHECK_OK(runlet_run_journal_snapshot_json(runtime, program, runlet_run_id(run), &buf));
  runlet_str journaled = {(const char *)buf.ptr, buf.len};
  CHECK(str_contains(journaled, "\"echo.first\"") && str_contains(journaled, "\"state\":\"succeeded\""));
  CHECK(!str_contains(journaled, "live_graph(false)"));
  runlet_buf_free(buf);
  runlet_run_free(run);
  runlet_program_free(program);
  runlet_runtime_free(runtime);
  remove_journal(path);
}

int main(void) {
  a_host_journal_and_a_sqlite_path_are_refused_together();
  sqlite_options_are_checked();
  an_at_most_once_call_stays_uncertain_until_resolved();
  an_unsafe_call_runs_again_only_under_a_fresh_generation();
  a_recoverable_call_asks_the_executors_recover();
  an_interrupted_run_is_cancelled_from_the_journal();
  recovery_answers_are_refused_for_dispatches();
  recovery_at_start_resumes_parks_and_leaves_runs();
  a_runtime_without_a_live_graph_shows_the_graph_from_its_journal();
  puts("recovery: ok");
  return 0;
}
