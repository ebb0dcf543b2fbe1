/* The PostgreSQL journal from C (runlet_runtime_options.postgres_journal_url): runs submitted by
 * one runtime (runlet_runtime_submit) and run by two workers of two more runtimes on threads of
 * their own (runlet_worker_*), each run once, with its result; and the refusals. Needs the server
 * RUNLET_TEST_POSTGRES_URL names (scripts/test starts one): without it the test fails under
 * CI=true and is skipped elsewhere. */
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "support.h"

#define RUNS 6

static const char *KEY = "the key every process of the journal shares";

/* A registry of `echo.value` whose digest is this process's own (the unused tool's name), so
 * the workers claim only the runs this test submitted; malloc'ed. */
static char *own_registry(void) {
  char *json = malloc(1024);
  snprintf(json, 1024,
           "{\"tools\": [{\"name\": \"echo.value\", \"params\": [{\"name\": \"x\", \"schema\": {\"type\": \"integer\"}}],"
           " \"outputSchema\": {\"type\": \"integer\"}, \"execution\": \"idempotent\"},"
           " {\"name\": \"nonce.t%ldx%ld\", \"params\": [], \"outputSchema\": {}}],"
           " \"inputs\": {\"n\": {\"type\": \"integer\"}}}",
           (long)getpid(), (long)time(NULL));
  return json;
}

static runlet_error *runtime_on(const char *url, const char *registry, const char *owner,
                                const runlet_tool_executor *executor, runlet_runtime **out) {
  runlet_runtime_options options = RUNLET_RUNTIME_OPTIONS_INIT;
  options.registry_json = str_of(registry);
  options.executor = executor;
  options.postgres_journal_url = str_of(url);
  options.postgres_lease_ms = 2000;
  options.owner = str_of(owner);
  options.digest_key_id = str_of("c-test");
  options.digest_key.ptr = (const uint8_t *)KEY;
  options.digest_key.len = strlen(KEY);
  options.worker_threads = 1;
  return runlet_runtime_new(&options, out);
}

/* What the workers reported, shared by their threads. */
struct reports {
  pthread_mutex_t lock;
  int count;
  char *lines[RUNS * 2];
  runlet_worker *workers[2];
};

static void on_report(void *user_data, runlet_str json) {
  struct reports *reports = user_data;
  pthread_mutex_lock(&reports->lock);
  if (reports->count < RUNS * 2) reports->lines[reports->count++] = str_dup(json);
  int done = reports->count >= RUNS;
  pthread_mutex_unlock(&reports->lock);
  if (done) {
    runlet_worker_stop(reports->workers[0]);
    runlet_worker_stop(reports->workers[1]);
  }
}

struct working {
  runlet_worker *worker;
  struct reports *reports;
};

static void *work(void *arg) {
  struct working *working = arg;
  CHECK_OK(runlet_worker_run(working->worker, on_report, working->reports));
  return NULL;
}

static void two_workers_run_every_submitted_run_once(const char *url) {
  char *registry = own_registry();
  runlet_tool_executor executor = echo_executor();
  runlet_runtime *submitter = NULL, *first = NULL, *second = NULL;
  CHECK_OK(runtime_on(url, registry, "c-submitter", &executor, &submitter));
  CHECK_OK(runtime_on(url, registry, "c-worker-1", &executor, &first));
  CHECK_OK(runtime_on(url, registry, "c-worker-2", &executor, &second));
  runlet_program *program = compile(submitter, "a = echo.value(n)\nreturn a + 1\n");
  char *ids[RUNS];
  for (int i = 0; i < RUNS; i++) {
    char inputs[64];
    snprintf(inputs, sizeof inputs, "{\"n\": %d}", i * 10);
    runlet_buf id = {0};
    CHECK_OK(runlet_runtime_submit(submitter, program, str_of(inputs), NULL, &id));
    CHECK(id.len > 2 && id.ptr[0] == 'r' && id.ptr[1] == '-');
    ids[i] = str_dup((runlet_str){(const char *)id.ptr, id.len});
    runlet_buf_free(id);
  }
  struct reports reports = {.count = 0};
  pthread_mutex_init(&reports.lock, NULL);
  runlet_worker_options options = RUNLET_WORKER_OPTIONS_INIT;
  options.poll_ms = 50;
  CHECK_OK(runlet_worker_new(first, &options, &reports.workers[0]));
  CHECK_OK(runlet_worker_new(second, NULL, &reports.workers[1]));
  pthread_t threads[2];
  struct working working[2] = {{reports.workers[0], &reports}, {reports.workers[1], &reports}};
  for (int i = 0; i < 2; i++) CHECK(pthread_create(&threads[i], NULL, work, &working[i]) == 0);
  for (int i = 0; i < 2; i++) CHECK(pthread_join(threads[i], NULL) == 0);
  CHECK(reports.count == RUNS);
  for (int i = 0; i < RUNS; i++) {
    int seen = 0;
    for (int j = 0; j < reports.count; j++) {
      if (strstr(reports.lines[j], ids[i]) != NULL) {
        seen++;
        if (strstr(reports.lines[j], "\"status\":\"succeeded\"") == NULL) fprintf(stderr, "%s\n", reports.lines[j]);
        CHECK(strstr(reports.lines[j], "\"action\":\"ended\"") != NULL);
        CHECK(strstr(reports.lines[j], "\"status\":\"succeeded\"") != NULL);
      }
    }
    CHECK(seen == 1);
  }
  for (int j = 0; j < reports.count; j++) free(reports.lines[j]);
  for (int i = 0; i < RUNS; i++) free(ids[i]);
  runlet_worker_free(reports.workers[0]);
  runlet_worker_free(reports.workers[1]);
  pthread_mutex_destroy(&reports.lock);
  runlet_program_free(program);
  runlet_runtime_free(second);
  runlet_runtime_free(first);
  runlet_runtime_free(submitter);
  free(registry);
}

static void what_cannot_be_used_is_refused(void) {
  runlet_tool_executor executor = echo_executor();
  runlet_runtime *runtime = NULL;
  CHECK_ERR(runtime_on("not a url", TEST_REGISTRY, "", &executor, &runtime), RUNLET_ERR_JOURNAL);
  CHECK(runtime == NULL);
  runlet_runtime_options both = RUNLET_RUNTIME_OPTIONS_INIT;
  both.registry_json = str_of(TEST_REGISTRY);
  both.executor = &executor;
  both.sqlite_journal_path = str_of("unused.db");
  both.postgres_journal_url = str_of("postgres://nobody@127.0.0.1:1/none");
  CHECK_ERR(runlet_runtime_new(&both, &runtime), RUNLET_ERR_INVALID_ARGUMENT);
  runlet_runtime *in_memory = runtime_with(&executor, NULL, NULL);
  runlet_worker *worker = NULL;
  CHECK_ERR(runlet_worker_new(in_memory, NULL, &worker), RUNLET_ERR_INVALID_ARGUMENT);
  CHECK(worker == NULL);
  runlet_worker_stop(NULL);
  runlet_worker_free(NULL);
  runlet_runtime_free(in_memory);
}

int main(void) {
  what_cannot_be_used_is_refused();
  const char *url = getenv("RUNLET_TEST_POSTGRES_URL");
  if (url == NULL || url[0] == '\0') {
    const char *ci = getenv("CI");
    if (ci != NULL && strcmp(ci, "true") == 0) {
      fprintf(stderr, "CI=true and RUNLET_TEST_POSTGRES_URL is not set: this test needs a PostgreSQL server\n");
      return 1;
    }
    fprintf(stderr, "test_postgres: skipped the workers (RUNLET_TEST_POSTGRES_URL is not set)\n");
    return 0;
  }
  two_workers_run_every_submitted_run_once(url);
  return 0;
}
