/* Events: per-run order on the listener's dispatcher thread, the kind mask, the pull API, a
 * slow listener getting EVENTS_DROPPED markers instead of blocking the run, and one thread
 * following many runs through a ready queue. */
#include <pthread.h>
#include <stdatomic.h>

#include "support.h"

#define MAX_EVENTS 4096
#define RUN_SUCCEEDED_KIND 13
#define RUN_CREATED_KIND 1

typedef struct {
  char run[96];
  uint64_t seq;
  uint32_t kind;
  uint64_t dropped; /* for markers */
} seen_event;

typedef struct {
  pthread_mutex_t lock;
  seen_event events[MAX_EVENTS];
  size_t count;
  long delay_ms;
  atomic_int drops;
  pthread_t dispatcher;
  int concurrent_calls;
  atomic_int inside;
} recorder;

static uint64_t number_after(runlet_str json, const char *key) {
  for (size_t i = 0; i + strlen(key) <= json.len; i++) {
    if (memcmp(json.ptr + i, key, strlen(key)) == 0) return strtoull(json.ptr + i + strlen(key), NULL, 10);
  }
  return 0;
}

static void record(void *user_data, const runlet_event *event) {
  recorder *rec = user_data;
  if (atomic_fetch_add(&rec->inside, 1) != 0) rec->concurrent_calls = 1;
  CHECK(event->struct_size >= sizeof(runlet_event));
  pthread_mutex_lock(&rec->lock);
  if (rec->count == 0) {
    rec->dispatcher = pthread_self();
  } else {
    CHECK(pthread_equal(rec->dispatcher, pthread_self()));
  }
  CHECK(rec->count < MAX_EVENTS);
  seen_event *seen = &rec->events[rec->count++];
  CHECK(event->run_id.len < sizeof seen->run);
  memcpy(seen->run, event->run_id.ptr, event->run_id.len);
  seen->run[event->run_id.len] = '\0';
  seen->seq = event->seq;
  seen->kind = event->kind;
  seen->dropped = event->kind == RUNLET_EVENT_EVENTS_DROPPED ? number_after(event->payload_json, "\"dropped\":") : 0;
  CHECK(event->kind_name.len > 0 && event->payload_json.len >= 2 && event->payload_json.ptr[0] == '{');
  pthread_mutex_unlock(&rec->lock);
  if (rec->delay_ms) sleep_ms(rec->delay_ms);
  atomic_fetch_sub(&rec->inside, 1);
}

static void count_drop(void *user_data) {
  recorder *rec = user_data;
  atomic_fetch_add(&rec->drops, 1);
}

static runlet_runtime *runtime_listening(recorder *rec, uint64_t mask, uint32_t capacity) {
  runlet_tool_executor executor = echo_executor();
  runlet_event_listener listener = RUNLET_EVENT_LISTENER_INIT;
  listener.user_data = rec;
  listener.kind_mask = mask;
  listener.on_event = record;
  listener.drop = count_drop;
  runlet_runtime_options options = RUNLET_RUNTIME_OPTIONS_INIT;
  options.registry_json = str_of(TEST_REGISTRY);
  options.executor = &executor;
  options.listener = &listener;
  options.event_queue_capacity = capacity;
  runlet_runtime *runtime = NULL;
  CHECK_OK(runlet_runtime_new(&options, &runtime));
  return runtime;
}

/* Checks that `run`'s recorded events and markers cover sequence numbers 1.. in order without gaps
 * and returns how many were dropped. */
static uint64_t check_run_order(recorder *rec, const char *run, int expect_end) {
  uint64_t next = 1, dropped = 0;
  uint32_t last_kind = 0;
  for (size_t i = 0; i < rec->count; i++) {
    seen_event *seen = &rec->events[i];
    if (strcmp(seen->run, run) != 0) continue;
    CHECK(seen->seq == next);
    if (seen->kind == RUNLET_EVENT_EVENTS_DROPPED) {
      CHECK(seen->dropped > 0);
      next += seen->dropped;
      dropped += seen->dropped;
    } else {
      if (next == 1) CHECK(seen->kind == RUN_CREATED_KIND);
      next += 1;
    }
    last_kind = seen->kind;
  }
  CHECK(next > 1);
  /* A run's end is never dropped, however slow the listener. */
  if (expect_end) CHECK(last_kind == RUN_SUCCEEDED_KIND);
  return dropped;
}

static const char *const LOOP = "out = for i in items limit 4 {\n  return echo.value(i)\n}\nreturn out\n";

static void listener_events_are_ordered_per_run(void) {
  static recorder rec = {.lock = PTHREAD_MUTEX_INITIALIZER};
  runlet_runtime *runtime = runtime_listening(&rec, RUNLET_EVENT_MASK_ALL, 0);
  runlet_program *program = compile(runtime, LOOP);
  runlet_run *a = start(runtime, program, "{\"items\": [1, 2, 3, 4, 5, 6]}", 0);
  runlet_run *b = start(runtime, program, "{\"items\": [7, 8, 9]}", 0);
  char *run_a = str_dup(runlet_run_id(a)), *run_b = str_dup(runlet_run_id(b));
  free(result_of(a));
  free(result_of(b));
  runlet_run_free(a);
  runlet_run_free(b);
  runlet_program_free(program);
  runlet_runtime_free(runtime); /* delivers what is queued, then drops the listener */
  CHECK(atomic_load(&rec.drops) == 1);
  CHECK(rec.concurrent_calls == 0);
  CHECK(check_run_order(&rec, run_a, 1) == 0);
  CHECK(check_run_order(&rec, run_b, 1) == 0);
  free(run_a);
  free(run_b);
}

static void the_kind_mask_selects_events(void) {
  static recorder rec = {.lock = PTHREAD_MUTEX_INITIALIZER};
  runlet_runtime *runtime = runtime_listening(&rec, (uint64_t)1 << RUN_SUCCEEDED_KIND, 0);
  runlet_program *program = compile(runtime, LOOP);
  runlet_run *run = start(runtime, program, "{\"items\": [1, 2]}", 0);
  free(result_of(run));
  runlet_run_free(run);
  runlet_program_free(program);
  runlet_runtime_free(runtime);
  CHECK(rec.count == 1);
  CHECK(rec.events[0].kind == RUN_SUCCEEDED_KIND);
}

static void a_slow_listener_gets_markers_and_never_blocks_the_run(void) {
  static recorder rec = {.lock = PTHREAD_MUTEX_INITIALIZER, .delay_ms = 3};
  runlet_runtime *runtime = runtime_listening(&rec, RUNLET_EVENT_MASK_ALL, 4);
  runlet_program *program = compile(runtime, LOOP);
  char input[512] = "{\"items\": [0";
  for (int i = 1; i < 40; i++) {
    char item[8];
    snprintf(item, sizeof item, ",%d", i);
    strcat(input, item);
  }
  strcat(input, "]}");
  runlet_run *run = start(runtime, program, input, 0);
  char *id = str_dup(runlet_run_id(run));
  free(result_of(run));
  runlet_run_free(run);
  runlet_program_free(program);
  runlet_runtime_free(runtime);
  CHECK(check_run_order(&rec, id, 1) > 0);
  free(id);
}

static void the_pull_api_yields_every_event_in_order(void) {
  runlet_tool_executor executor = echo_executor();
  runlet_runtime *runtime = runtime_with(&executor, NULL, NULL);
  runlet_program *program = compile(runtime, LOOP);
  runlet_run *quiet = start(runtime, program, "{\"items\": [1]}", 0);
  runlet_event_owned *event = NULL;
  CHECK_ERR(runlet_run_next_event(quiet, 0, &event), RUNLET_ERR_INVALID_ARGUMENT);
  free(result_of(quiet));
  runlet_run_free(quiet);

  runlet_run *run = start(runtime, program, "{\"items\": [1, 2, 3]}", 1);
  char *id = str_dup(runlet_run_id(run));
  uint64_t next = 1;
  uint32_t last_kind = 0;
  for (;;) {
    CHECK_OK(runlet_run_next_event(run, -1, &event));
    if (event == NULL) break;
    const runlet_event *view = runlet_event_owned_get(event);
    CHECK(view->seq == next++);
    CHECK(str_is(view->run_id, id));
    last_kind = view->kind;
    runlet_event_owned_free(event);
  }
  CHECK(next > 5);
  CHECK(last_kind == RUN_SUCCEEDED_KIND);
  CHECK_OK(runlet_run_next_event(run, 0, &event));
  CHECK(event == NULL);
  CHECK_OK(runlet_run_wait(run, -1));
  CHECK(runlet_run_status(run) == RUNLET_RUN_SUCCEEDED);
  free(id);
  runlet_run_free(run);
  runlet_program_free(program);
  runlet_runtime_free(runtime);
}

/* One thread follows many runs: each run's token comes out of the ready queue when it has
 * events to pull or has ended; draining with zero timeouts never blocks. */
static void one_thread_follows_many_runs_through_a_ready_queue(void) {
  enum { RUNS = 64 };
  runlet_tool_executor executor = echo_executor();
  runlet_runtime *runtime = runtime_with(&executor, NULL, NULL);
  runlet_program *program = compile(runtime, LOOP);
  runlet_ready_queue *queue = NULL;
  CHECK_ERR(runlet_ready_queue_new(NULL), RUNLET_ERR_NULL_ARGUMENT);
  CHECK_OK(runlet_ready_queue_new(&queue));
  uint64_t token = 99;
  CHECK_ERR(runlet_ready_queue_next(queue, 0, &token), RUNLET_ERR_TIMEOUT);
  CHECK_ERR(runlet_ready_queue_next(queue, 0, NULL), RUNLET_ERR_NULL_ARGUMENT);
  runlet_run *runs[RUNS];
  uint64_t next_seq[RUNS];
  uint32_t last_kind[RUNS];
  int ended[RUNS], left = RUNS;
  for (int i = 0; i < RUNS; i++) {
    runs[i] = start(runtime, program, "{\"items\": [1, 2, 3, 4, 5, 6]}", 1);
    CHECK_OK(runlet_run_set_ready_queue(runs[i], queue, (uint64_t)i));
    next_seq[i] = 1;
    last_kind[i] = 0;
    ended[i] = 0;
  }
  CHECK_ERR(runlet_run_set_ready_queue(runs[0], queue, 0), RUNLET_ERR_INVALID_ARGUMENT);
  CHECK_ERR(runlet_run_set_ready_queue(runs[0], NULL, 0), RUNLET_ERR_NULL_ARGUMENT);
  while (left > 0) {
    CHECK_OK(runlet_ready_queue_next(queue, 10000, &token));
    CHECK(token < RUNS);
    runlet_run *run = runs[token];
    for (;;) {
      runlet_event_owned *event = NULL;
      runlet_error *err = runlet_run_next_event(run, 0, &event);
      if (err != NULL) {
        CHECK(runlet_error_code(err) == RUNLET_ERR_TIMEOUT);
        runlet_error_free(err);
        break;
      }
      if (event == NULL) break; /* every event pulled */
      const runlet_event *view = runlet_event_owned_get(event);
      CHECK(view->seq == next_seq[token]++);
      last_kind[token] = view->kind;
      runlet_event_owned_free(event);
    }
    runlet_error *err = runlet_run_wait(run, 0);
    if (err == NULL) {
      if (!ended[token]) left--;
      ended[token] = 1;
    } else {
      CHECK(runlet_error_code(err) == RUNLET_ERR_TIMEOUT);
      runlet_error_free(err);
    }
  }
  for (int i = 0; i < RUNS; i++) {
    /* The run's end is queued before its outcome: the last pull saw it. */
    runlet_event_owned *event = NULL;
    CHECK_OK(runlet_run_next_event(runs[i], 0, &event));
    CHECK(event == NULL);
    CHECK(last_kind[i] == RUN_SUCCEEDED_KIND && next_seq[i] > 10);
    CHECK(runlet_run_status(runs[i]) == RUNLET_RUN_SUCCEEDED);
    runlet_run_free(runs[i]);
  }
  CHECK_OK(runlet_ready_queue_close(queue));
  CHECK_ERR(runlet_ready_queue_next(queue, -1, &token), RUNLET_ERR_CANCELLED);
  runlet_ready_queue_free(queue);
  runlet_ready_queue_free(NULL);
  runlet_program_free(program);
  runlet_runtime_free(runtime);
}

int main(void) {
  listener_events_are_ordered_per_run();
  the_kind_mask_selects_events();
  a_slow_listener_gets_markers_and_never_blocks_the_run();
  the_pull_api_yields_every_event_in_order();
  one_thread_follows_many_runs_through_a_ready_queue();
  puts("events: ok");
  return 0;
}
