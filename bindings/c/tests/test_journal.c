/* A journal written in C (in memory) behind the vtable: it passes the shared journal suite, backs
 * real runs, and bad vtables (size, ABI version, flags, missing functions) are refused with
 * their drop still run once. */
#include <pthread.h>
#include <stdatomic.h>

#include "support.h"

typedef struct {
  uint64_t seq;
  uint8_t *bytes;
  size_t len;
} record;

typedef struct {
  char *id;
  char *header;
  record *records;
  size_t count, capacity;
  int has_snapshot;
  record snapshot;
} run_log;

typedef struct {
  pthread_mutex_t lock;
  run_log *runs;
  size_t count, capacity;
  int skip_conflict_check; /* a broken journal the suite must catch */
  int fail_appends;        /* a journal whose storage fails */
  atomic_int drops;
} memory_journal;

static uint8_t *copy_bytes(runlet_bytes bytes) {
  uint8_t *copy = malloc(bytes.len ? bytes.len : 1);
  CHECK(copy != NULL);
  if (bytes.len) memcpy(copy, bytes.ptr, bytes.len);
  return copy;
}

static run_log *find(memory_journal *journal, runlet_str id) {
  for (size_t i = 0; i < journal->count; i++) {
    if (str_is(id, journal->runs[i].id)) return &journal->runs[i];
  }
  return NULL;
}

static runlet_error *unknown(void) {
  return runlet_error_new(RUNLET_ERR_JOURNAL_UNKNOWN_RUN, RUNLET_STR("no such run"));
}

static runlet_error *mj_create_run(void *user_data, runlet_str run_id, runlet_str header_json) {
  memory_journal *journal = user_data;
  pthread_mutex_lock(&journal->lock);
  runlet_error *err = NULL;
  if (find(journal, run_id)) {
    err = runlet_error_new(RUNLET_ERR_JOURNAL_RUN_EXISTS, RUNLET_STR("the run exists"));
  } else {
    if (journal->count == journal->capacity) {
      journal->capacity = journal->capacity ? journal->capacity * 2 : 8;
      journal->runs = realloc(journal->runs, journal->capacity * sizeof *journal->runs);
      CHECK(journal->runs != NULL);
    }
    run_log *log = &journal->runs[journal->count++];
    memset(log, 0, sizeof *log);
    log->id = str_dup(run_id);
    log->header = str_dup(header_json);
  }
  pthread_mutex_unlock(&journal->lock);
  return err;
}

static runlet_error *mj_header(void *user_data, runlet_str run_id, runlet_journal_sink *sink) {
  memory_journal *journal = user_data;
  pthread_mutex_lock(&journal->lock);
  run_log *log = find(journal, run_id);
  runlet_error *err = unknown();
  if (log) {
    runlet_error_free(err);
    runlet_bytes header = {(const uint8_t *)log->header, strlen(log->header)};
    err = runlet_journal_sink_push(sink, 0, header);
  }
  pthread_mutex_unlock(&journal->lock);
  return err;
}

static runlet_error *mj_append(void *user_data, runlet_str run_id, uint64_t expected_seq,
                               const runlet_journal_record *records, size_t count, uint64_t *last_seq_out) {
  memory_journal *journal = user_data;
  pthread_mutex_lock(&journal->lock);
  run_log *log = find(journal, run_id);
  runlet_error *err = NULL;
  if (!log) {
    err = unknown();
  } else if (journal->fail_appends) {
    err = runlet_error_new(RUNLET_ERR_JOURNAL, RUNLET_STR("the disk is full"));
  } else if (!journal->skip_conflict_check && log->count != expected_seq) {
    *last_seq_out = log->count;
    err = runlet_error_new(RUNLET_ERR_JOURNAL_SEQUENCE_CONFLICT, RUNLET_STR("the journal moved on"));
  } else {
    for (size_t i = 0; i < count && !err; i++) {
      if (records[i].seq != expected_seq + 1 + i || expected_seq + 1 + i == 0) {
        err = runlet_error_new(RUNLET_ERR_JOURNAL_INVALID_RECORD, RUNLET_STR("a gap in the batch"));
      }
    }
    if (!err) {
      if (log->count + count > log->capacity) {
        log->capacity = (log->count + count) * 2;
        log->records = realloc(log->records, log->capacity * sizeof *log->records);
        CHECK(log->records != NULL);
      }
      for (size_t i = 0; i < count; i++) {
        record *kept = &log->records[log->count++];
        kept->seq = records[i].seq;
        kept->len = records[i].bytes.len;
        kept->bytes = copy_bytes(records[i].bytes);
      }
      *last_seq_out = log->count;
    }
  }
  pthread_mutex_unlock(&journal->lock);
  return err;
}

static runlet_error *mj_read(void *user_data, runlet_str run_id, uint64_t after, size_t limit,
                             runlet_journal_sink *sink) {
  memory_journal *journal = user_data;
  pthread_mutex_lock(&journal->lock);
  run_log *log = find(journal, run_id);
  runlet_error *err = log ? NULL : unknown();
  for (uint64_t i = after; log && !err && i < log->count && i - after < limit; i++) {
    runlet_bytes bytes = {log->records[i].bytes, log->records[i].len};
    err = runlet_journal_sink_push(sink, log->records[i].seq, bytes);
  }
  pthread_mutex_unlock(&journal->lock);
  return err;
}

static runlet_error *mj_load_snapshot(void *user_data, runlet_str run_id, runlet_journal_sink *sink) {
  memory_journal *journal = user_data;
  pthread_mutex_lock(&journal->lock);
  run_log *log = find(journal, run_id);
  runlet_error *err = log ? NULL : unknown();
  if (log && log->has_snapshot) {
    runlet_bytes bytes = {log->snapshot.bytes, log->snapshot.len};
    err = runlet_journal_sink_push(sink, log->snapshot.seq, bytes);
  }
  pthread_mutex_unlock(&journal->lock);
  return err;
}

static runlet_error *mj_store_snapshot(void *user_data, runlet_str run_id, uint64_t upto_seq, runlet_bytes bytes) {
  memory_journal *journal = user_data;
  pthread_mutex_lock(&journal->lock);
  run_log *log = find(journal, run_id);
  runlet_error *err = log ? NULL : unknown();
  if (log && upto_seq > log->count) {
    err = runlet_error_new(RUNLET_ERR_JOURNAL_INVALID_RECORD, RUNLET_STR("the snapshot covers missing records"));
  } else if (log) {
    if (log->has_snapshot) free(log->snapshot.bytes);
    log->snapshot.seq = upto_seq;
    log->snapshot.len = bytes.len;
    log->snapshot.bytes = copy_bytes(bytes);
    log->has_snapshot = 1;
  }
  pthread_mutex_unlock(&journal->lock);
  return err;
}

static runlet_error *mj_runs(void *user_data, runlet_journal_sink *sink) {
  memory_journal *journal = user_data;
  pthread_mutex_lock(&journal->lock);
  runlet_error *err = NULL;
  for (size_t i = 0; i < journal->count && !err; i++) {
    runlet_bytes id = {(const uint8_t *)journal->runs[i].id, strlen(journal->runs[i].id)};
    err = runlet_journal_sink_push(sink, journal->runs[i].count, id);
  }
  pthread_mutex_unlock(&journal->lock);
  return err;
}

static void mj_clear(memory_journal *journal) {
  for (size_t i = 0; i < journal->count; i++) {
    run_log *log = &journal->runs[i];
    for (size_t r = 0; r < log->count; r++) free(log->records[r].bytes);
    if (log->has_snapshot) free(log->snapshot.bytes);
    free(log->records), free(log->id), free(log->header);
  }
  free(journal->runs);
  journal->runs = NULL;
  journal->count = journal->capacity = 0;
}

static void mj_drop(void *user_data) {
  memory_journal *journal = user_data;
  atomic_fetch_add(&journal->drops, 1);
}

static runlet_journal_vtable vtable_of(memory_journal *journal) {
  runlet_journal_vtable vtable = RUNLET_JOURNAL_VTABLE_INIT;
  vtable.user_data = journal;
  vtable.create_run = mj_create_run;
  vtable.header = mj_header;
  vtable.append = mj_append;
  vtable.read = mj_read;
  vtable.load_snapshot = mj_load_snapshot;
  vtable.store_snapshot = mj_store_snapshot;
  vtable.drop = mj_drop;
  vtable.runs = mj_runs;
  return vtable;
}

static memory_journal journal = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, 0, 0, 0};

static void the_c_journal_passes_the_shared_suite(void) {
  runlet_journal_vtable vtable = vtable_of(&journal);
  CHECK_OK(runlet_journal_conformance_check(&vtable));
  CHECK(atomic_load(&journal.drops) == 1);
  CHECK(journal.count >= 7); /* the suite really ran against it: a run per check */
  mj_clear(&journal);

  journal.skip_conflict_check = 1;
  runlet_error *err = runlet_journal_conformance_check(&vtable);
  CHECK(runlet_error_code(err) == RUNLET_ERR_JOURNAL);
  CHECK(str_contains(runlet_error_message(err), "check `conflicting and gapped appends write nothing`"));
  runlet_error_free(err);
  CHECK(atomic_load(&journal.drops) == 2);
  journal.skip_conflict_check = 0;
  mj_clear(&journal);
}

static void runs_are_journaled_through_the_vtable(void) {
  runlet_journal_vtable vtable = vtable_of(&journal);
  runlet_tool_executor executor = echo_executor();
  runlet_runtime *runtime = runtime_with(&executor, &vtable, NULL);
  runlet_program *program = compile(runtime, "return echo.value(\"journaled\")\n");
  runlet_run *run = start(runtime, program, "", 0);
  char *result = result_of(run);
  CHECK(strcmp(result, "\"journaled\"") == 0);
  free(result);
  pthread_mutex_lock(&journal.lock);
  run_log *log = find(&journal, runlet_run_id(run));
  CHECK(log != NULL);
  CHECK(log->count >= 4); /* RunCreated … CallCompleted … RunSucceeded */
  for (size_t i = 0; i < log->count; i++) CHECK(log->records[i].seq == i + 1);
  CHECK(strstr(log->header, log->id) != NULL);
  size_t journaled = log->count;
  pthread_mutex_unlock(&journal.lock);

  /* The journal lists its runs through `runs`; without it (a first-version vtable) it cannot. */
  runlet_buf listed = {NULL, 0};
  CHECK_OK(runlet_runtime_runs_json(runtime, &listed));
  char *text = str_dup((runlet_str){(const char *)listed.ptr, listed.len});
  runlet_buf_free(listed);
  char *id = str_dup(runlet_run_id(run));
  char expect[256];
  snprintf(expect, sizeof expect, "\"last_seq\":%zu,\"program_digest\":\"sha256:", journaled);
  CHECK(strstr(text, id) != NULL && strstr(text, expect) != NULL && strstr(text, "\"status\":\"succeeded\"") != NULL);
  CHECK(strstr(text, "\"last_event_ms\":null") != NULL);
  free(text), free(id);
  runlet_run_free(run);

  /* A run whose header the journal holds damaged is listed as damaged; the others as before. */
  run = start(runtime, program, "", 0);
  free(result_of(run));
  pthread_mutex_lock(&journal.lock);
  log = find(&journal, runlet_run_id(run));
  free(log->header);
  log->header = str_dup(str_of("{\"garbage\": 1}"));
  pthread_mutex_unlock(&journal.lock);
  CHECK_OK(runlet_runtime_runs_json(runtime, &listed));
  text = str_dup((runlet_str){(const char *)listed.ptr, listed.len});
  runlet_buf_free(listed);
  CHECK(strstr(text, "\"status\":\"succeeded\"") != NULL && strstr(text, "\"status\":\"damaged\"") != NULL);
  CHECK(strstr(text, "is not a run header") != NULL);
  free(text);
  runlet_run_free(run);

  journal.fail_appends = 1;
  run = start(runtime, program, "", 0);
  CHECK_OK(runlet_run_wait(run, -1));
  CHECK(runlet_run_status(run) == RUNLET_RUN_FAILED);
  runlet_buf buf = {NULL, 0};
  runlet_error *err = runlet_run_result_json(run, &buf);
  CHECK(runlet_error_code(err) == RUNLET_ERR_JOURNAL);
  CHECK(str_contains(runlet_error_message(err), "the disk is full"));
  runlet_error_free(err);
  journal.fail_appends = 0;
  runlet_run_free(run);
  runlet_program_free(program);
  int drops = atomic_load(&journal.drops);
  runlet_runtime_free(runtime);
  CHECK(atomic_load(&journal.drops) == drops + 1);
  mj_clear(&journal);
}

/* Holds the first call it gets instead of answering it (a worker that stops mid-call). */
static _Atomic(runlet_tool_call *) held_call = NULL;

static void hold_invoke(void *user_data, runlet_tool_call *call) {
  (void)user_data;
  CHECK(atomic_exchange(&held_call, call) == NULL);
}

/* A runtime over the C journal whose digest key is fixed, so another runtime can resume its runs. */
static runlet_runtime *keyed_runtime(const runlet_tool_executor *executor, const runlet_journal_vtable *vtable) {
  runlet_runtime_options options = RUNLET_RUNTIME_OPTIONS_INIT;
  options.registry_json = str_of(TEST_REGISTRY);
  options.executor = executor;
  options.journal = vtable;
  options.digest_key.ptr = (const uint8_t *)"a key every worker shares";
  options.digest_key.len = strlen("a key every worker shares");
  runlet_runtime *runtime = NULL;
  CHECK_OK(runlet_runtime_new(&options, &runtime));
  return runtime;
}

static void an_interrupted_run_resumes_from_the_c_journal(void) {
  static const char *const SOURCE = "a = echo.value(\"first\")\nreturn [a, echo.slow(a)]\n";
  runlet_journal_vtable vtable = vtable_of(&journal);
  runlet_tool_executor holding = RUNLET_TOOL_EXECUTOR_INIT;
  holding.invoke = hold_invoke;
  runlet_runtime *first = keyed_runtime(&holding, &vtable);
  runlet_program *program = compile(first, SOURCE);
  runlet_run *run = start(first, program, "", 0);
  char *run_id = str_dup(runlet_run_id(run));
  /* The first call is held; the second reads its answer, so nothing else is dispatched. */
  while (atomic_load(&held_call) == NULL) sleep_ms(1);
  /* The worker's storage fails: its answer cannot be journaled, so the journal stays with the
   * call dispatching, as after a crash. */
  journal.fail_appends = 1;
  CHECK_OK(runlet_tool_call_complete(atomic_exchange(&held_call, NULL), str_of("\"first\"")));
  CHECK_OK(runlet_run_wait(run, -1));
  CHECK(runlet_run_status(run) == RUNLET_RUN_FAILED);
  runlet_run_free(run);
  runlet_program_free(program);
  runlet_runtime_free(first);
  journal.fail_appends = 0;

  runlet_tool_executor echo = echo_executor();
  runlet_runtime *second = keyed_runtime(&echo, &vtable);
  program = compile(second, SOURCE);
  runlet_run *resumed = NULL;
  CHECK_ERR(runlet_run_resume(second, program, str_of("no-such-run"), NULL, &resumed),
            RUNLET_ERR_JOURNAL_UNKNOWN_RUN);
  CHECK(resumed == NULL);
  CHECK_OK(runlet_run_resume(second, program, str_of(run_id), NULL, &resumed));
  CHECK(str_is(runlet_run_id(resumed), run_id));
  char *result = result_of(resumed);
  CHECK(strcmp(result, "[\"first\",\"first\"]") == 0);
  free(result);
  runlet_run_free(resumed);
  runlet_program_free(program);

  /* Another program (or configuration) than the journal pins is refused. */
  program = compile(second, "return echo.value(\"other\")\n");
  CHECK_ERR(runlet_run_resume(second, program, str_of(run_id), NULL, &resumed), RUNLET_ERR_VERSION_MISMATCH);
  runlet_program_free(program);
  runlet_runtime_free(second);
  free(run_id);
  mj_clear(&journal);
}

static void a_first_version_vtable_cannot_list_runs(void) {
  runlet_journal_vtable vtable = vtable_of(&journal);
  vtable.struct_size = offsetof(runlet_journal_vtable, runs);
  runlet_tool_executor executor = echo_executor();
  runlet_runtime *runtime = runtime_with(&executor, &vtable, NULL);
  runlet_buf listed = {NULL, 0};
  runlet_error *err = runlet_runtime_runs_json(runtime, &listed);
  CHECK(runlet_error_code(err) == RUNLET_ERR_JOURNAL && str_contains(runlet_error_message(err), "cannot list"));
  CHECK(listed.ptr == NULL);
  runlet_error_free(err);
  runlet_runtime_free(runtime);
  mj_clear(&journal);
}

static void bad_vtables_are_refused_at_registration(void) {
  runlet_tool_executor executor = echo_executor();
  runlet_runtime_options options = RUNLET_RUNTIME_OPTIONS_INIT;
  options.registry_json = str_of(TEST_REGISTRY);
  options.executor = &executor;
  runlet_runtime *runtime = NULL;
  int drops = atomic_load(&journal.drops);

  runlet_journal_vtable vtable = vtable_of(&journal);
  vtable.abi_major = RUNLET_JOURNAL_ABI_MAJOR + 1;
  options.journal = &vtable;
  CHECK_ERR(runlet_runtime_new(&options, &runtime), RUNLET_ERR_VERSION_MISMATCH);
  CHECK(runtime == NULL && atomic_load(&journal.drops) == drops + 1);

  vtable = vtable_of(&journal);
  vtable.flags = 1;
  CHECK_ERR(runlet_runtime_new(&options, &runtime), RUNLET_ERR_VERSION_MISMATCH);
  CHECK(atomic_load(&journal.drops) == drops + 2);

  vtable = vtable_of(&journal);
  vtable.read = NULL;
  CHECK_ERR(runlet_runtime_new(&options, &runtime), RUNLET_ERR_NULL_ARGUMENT);
  CHECK(atomic_load(&journal.drops) == drops + 3);

  vtable = vtable_of(&journal);
  vtable.struct_size = sizeof vtable - 2 * sizeof(void *);
  CHECK_ERR(runlet_runtime_new(&options, &runtime), RUNLET_ERR_VERSION_MISMATCH);
  CHECK(atomic_load(&journal.drops) == drops + 3); /* an unreadable struct is not touched */
  CHECK_ERR(runlet_journal_conformance_check(&vtable), RUNLET_ERR_VERSION_MISMATCH);
  CHECK_ERR(runlet_journal_conformance_check(NULL), RUNLET_ERR_NULL_ARGUMENT);
}

int main(void) {
  the_c_journal_passes_the_shared_suite();
  runs_are_journaled_through_the_vtable();
  an_interrupted_run_resumes_from_the_c_journal();
  a_first_version_vtable_cannot_list_runs();
  bad_vtables_are_refused_at_registration();
  mj_clear(&journal);
  puts("journal: ok");
  return 0;
}
