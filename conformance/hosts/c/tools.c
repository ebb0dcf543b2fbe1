/* Scripted tools over the plan, counted. One lock guards the cases' use counters and the counts;
 * delayed answers run on detached threads that the executor waits for before it goes away. */
#include "tools.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json.h"

typedef struct invocation {
  char *tool, *args;
  size_t tool_len, args_len;
} invocation;

/* Calls of one tool in flight now, and the most there were. */
typedef struct in_flight {
  char *tool;
  size_t tool_len;
  uint64_t now, max;
} in_flight;

struct scripted_tools {
  plan *plan;
  pthread_mutex_t lock;
  pthread_cond_t idle;
  size_t delayed; /* delayed answers not given yet */
  invocation *invocations;
  size_t invocation_count, invocation_capacity;
  in_flight *flights;
  size_t flight_count;
};

/* One call waiting out its case's delay; freed by its thread. */
typedef struct pending {
  scripted_tools *tools;
  runlet_tool_call *call;
  const plan_case *answer;
  char *tool;
  size_t tool_len;
  pthread_mutex_t lock;
  pthread_cond_t wake;
  int cancelled;
} pending;

static char *copy(runlet_str s) {
  char *p = malloc(s.len + 1);
  if (!p) abort();
  memcpy(p, s.ptr, s.len);
  p[s.len] = '\0';
  return p;
}

/* The in-flight counter of `tool`, created at 0; the lock is held. */
static in_flight *flight_of(scripted_tools *t, const char *tool, size_t len) {
  for (size_t i = 0; i < t->flight_count; i++) {
    if (t->flights[i].tool_len == len && !memcmp(t->flights[i].tool, tool, len)) return &t->flights[i];
  }
  in_flight *grown = realloc(t->flights, (t->flight_count + 1) * sizeof *grown);
  if (!grown) abort();
  t->flights = grown;
  in_flight *f = &grown[t->flight_count++];
  *f = (in_flight){copy((runlet_str){tool, len}), len, 0, 0};
  return f;
}

/* Records the invocation, counts it in flight and claims the first case that answers it. */
static const plan_case *begin(scripted_tools *t, runlet_str tool, runlet_str args) {
  pthread_mutex_lock(&t->lock);
  if (t->invocation_count == t->invocation_capacity) {
    t->invocation_capacity = t->invocation_capacity ? 2 * t->invocation_capacity : 16;
    t->invocations = realloc(t->invocations, t->invocation_capacity * sizeof *t->invocations);
    if (!t->invocations) abort();
  }
  t->invocations[t->invocation_count++] = (invocation){copy(tool), copy(args), tool.len, args.len};
  in_flight *f = flight_of(t, tool.ptr, tool.len);
  f->now++;
  if (f->now > f->max) f->max = f->now;
  const plan_case *found = NULL;
  for (size_t i = 0; i < t->plan->case_count && !found; i++) {
    plan_case *c = &t->plan->cases[i];
    if (c->tool.len != tool.len || memcmp(c->tool.ptr, tool.ptr, tool.len)) continue;
    if (c->has_args && !json_same(c->args.ptr, c->args.len, args.ptr, args.len)) continue;
    if (c->times >= 0 && c->used >= c->times) continue;
    c->used++;
    found = c;
  }
  pthread_mutex_unlock(&t->lock);
  return found;
}

/* Takes the call off its tool's in-flight count. */
static void end(scripted_tools *t, const char *tool, size_t len) {
  pthread_mutex_lock(&t->lock);
  flight_of(t, tool, len)->now--;
  pthread_mutex_unlock(&t->lock);
}

static runlet_str str_of(text t) { return (runlet_str){t.ptr, t.len}; }

/* Answers `call` with `c`'s result or error; consumes the token. */
static void answer(runlet_tool_call *call, const plan_case *c) {
  if (!c->is_error) {
    runlet_error *refused = runlet_tool_call_complete(call, str_of(c->result));
    runlet_error_free(refused);
    return;
  }
  runlet_tool_call_fail(call, runlet_error_new_tool(str_of(c->error_code), str_of(c->error_message),
                                                    c->error_retryable, c->error_retry_after_ms,
                                                    str_of(c->error_details)));
}

static void on_cancel(void *user_data) {
  pending *p = user_data;
  pthread_mutex_lock(&p->lock);
  p->cancelled = 1;
  pthread_cond_signal(&p->wake);
  pthread_mutex_unlock(&p->lock);
}

/* Waits out the delay (or the cancellation), then answers. */
static void *answer_later(void *arg) {
  pending *p = arg;
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += p->answer->delay_ms / 1000;
  until.tv_nsec += (p->answer->delay_ms % 1000) * 1000000L;
  if (until.tv_nsec >= 1000000000L) {
    until.tv_sec++;
    until.tv_nsec -= 1000000000L;
  }
  pthread_mutex_lock(&p->lock);
  int waited = 0;
  while (!p->cancelled && waited != ETIMEDOUT) waited = pthread_cond_timedwait(&p->wake, &p->lock, &until);
  int cancelled = p->cancelled;
  pthread_mutex_unlock(&p->lock);
  scripted_tools *t = p->tools;
  end(t, p->tool, p->tool_len);
  if (cancelled) runlet_tool_call_fail(p->call, runlet_error_new(RUNLET_ERR_CANCELLED, (runlet_str){"cancelled", 9}));
  else answer(p->call, p->answer);
  pthread_mutex_destroy(&p->lock);
  pthread_cond_destroy(&p->wake);
  free(p->tool);
  free(p);
  pthread_mutex_lock(&t->lock);
  if (--t->delayed == 0) pthread_cond_broadcast(&t->idle);
  pthread_mutex_unlock(&t->lock);
  return NULL;
}

static void invoke(void *user_data, runlet_tool_call *call) {
  scripted_tools *t = user_data;
  runlet_str tool = runlet_tool_call_name(call), args = runlet_tool_call_args_json(call);
  const plan_case *c = begin(t, tool, args);
  if (!c) {
    char message[512];
    int n = snprintf(message, sizeof message, "no case of the tool fixtures answers `%.*s` called with %.*s",
                     (int)tool.len, tool.ptr, (int)(args.len > 300 ? 300 : args.len), args.ptr);
    end(t, tool.ptr, tool.len);
    runlet_tool_call_fail(call, runlet_error_new_tool(str_of(t->plan->unanswered),
                                                      (runlet_str){message, n < 0 ? 0 : (size_t)n}, false, -1,
                                                      (runlet_str){NULL, 0}));
    return;
  }
  if (c->delay_ms <= 0) {
    end(t, tool.ptr, tool.len);
    answer(call, c);
    return;
  }
  pending *p = calloc(1, sizeof *p);
  if (!p) abort();
  *p = (pending){.tools = t, .call = call, .answer = c, .tool = copy(tool), .tool_len = tool.len};
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->wake, NULL);
  pthread_mutex_lock(&t->lock);
  t->delayed++;
  pthread_mutex_unlock(&t->lock);
  runlet_error_free(runlet_tool_call_on_cancel(call, on_cancel, p));
  pthread_t thread;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  if (pthread_create(&thread, &attr, answer_later, p) != 0) abort();
  pthread_attr_destroy(&attr);
}

scripted_tools *scripted_tools_new(plan *plan) {
  scripted_tools *t = calloc(1, sizeof *t);
  if (!t) abort();
  t->plan = plan;
  pthread_mutex_init(&t->lock, NULL);
  pthread_cond_init(&t->idle, NULL);
  return t;
}

void scripted_tools_quiesce(scripted_tools *t) {
  pthread_mutex_lock(&t->lock);
  while (t->delayed) pthread_cond_wait(&t->idle, &t->lock);
  pthread_mutex_unlock(&t->lock);
}

void scripted_tools_free(scripted_tools *t) {
  scripted_tools_quiesce(t);
  for (size_t i = 0; i < t->invocation_count; i++) {
    free(t->invocations[i].tool);
    free(t->invocations[i].args);
  }
  for (size_t i = 0; i < t->flight_count; i++) free(t->flights[i].tool);
  free(t->invocations);
  free(t->flights);
  pthread_mutex_destroy(&t->lock);
  pthread_cond_destroy(&t->idle);
  free(t);
}

runlet_tool_executor scripted_tools_executor(scripted_tools *t) {
  runlet_tool_executor executor = RUNLET_TOOL_EXECUTOR_INIT;
  executor.user_data = t;
  executor.invoke = invoke;
  return executor;
}

void scripted_tools_write_counts(scripted_tools *t, FILE *out) {
  pthread_mutex_lock(&t->lock);
  fputs("\"invocations\": [", out);
  for (size_t i = 0; i < t->invocation_count; i++) {
    fputs(i ? ", {\"tool\": " : "{\"tool\": ", out);
    json_write_string(out, t->invocations[i].tool, t->invocations[i].tool_len);
    fputs(", \"args\": ", out);
    fwrite(t->invocations[i].args, 1, t->invocations[i].args_len, out);
    fputc('}', out);
  }
  fputs("], \"max_in_flight\": {", out);
  for (size_t i = 0; i < t->flight_count; i++) {
    if (i) fputs(", ", out);
    json_write_string(out, t->flights[i].tool, t->flights[i].tool_len);
    fprintf(out, ": %llu", (unsigned long long)t->flights[i].max);
  }
  fputc('}', out);
  pthread_mutex_unlock(&t->lock);
}
