/* The C conformance host: reads a plan on standard input, runs it through librunlet's C API with
 * a C tool executor and a C journal, and prints what it saw as one JSON observation
 * (conformance/runner/src/observation.rs). With `crash`, the first runtime's journal stops
 * taking appends, that runtime is freed, and a fresh one resumes the run from the journal. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "journal.h"
#include "json.h"
#include "plan.h"
#include "runlet.h"
#include "tools.h"

/* The digest key every host's runtimes share, as two processes of one host would. */
static const char DIGEST_KEY_ID[] = "conformance";
static const char DIGEST_KEY[] = "the key of the conformance hosts";

/* What the host saw: events (as JSON items), and how the run ended (a JSON object). */
typedef struct seen {
  char *events;
  size_t events_len;
  FILE *events_out;
  char *outcome;
} seen;

static runlet_str str_of(text t) { return (runlet_str){t.ptr, t.len}; }

static char *read_all(FILE *in, size_t *len) {
  size_t capacity = 1 << 16, used = 0;
  char *bytes = malloc(capacity + 1);
  size_t n;
  while (bytes && (n = fread(bytes + used, 1, capacity - used, in)) > 0) {
    used += n;
    if (used == capacity) bytes = realloc(bytes, (capacity *= 2) + 1);
  }
  if (!bytes) abort();
  *len = used;
  return bytes;
}

/* The outcome `{"status": "host_error", "message": …}`, malloc'ed. */
static char *host_error(const char *what, runlet_error *err) {
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  runlet_str message = runlet_error_message(err);
  char line[256];
  snprintf(line, sizeof line, "%s (code %u): ", what, err ? runlet_error_code(err) : 0);
  fputs("{\"status\": \"host_error\", \"message\": ", out);
  size_t line_len = strlen(line);
  char *whole = malloc(line_len + message.len + 1);
  memcpy(whole, line, line_len);
  if (message.len) memcpy(whole + line_len, message.ptr, message.len);
  json_write_string(out, whole, line_len + message.len);
  free(whole);
  fputc('}', out);
  fclose(out);
  runlet_error_free(err);
  return text;
}

/* The outcome `{"status": STATUS, KEY: JSON}`, malloc'ed. */
static char *outcome_with(const char *status, const char *key, const char *json, size_t json_len) {
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  fprintf(out, "{\"status\": \"%s\"", status);
  if (key) {
    fprintf(out, ", \"%s\": ", key);
    fwrite(json, 1, json_len, out);
  }
  fputc('}', out);
  fclose(out);
  return text;
}

/* Takes every event of `run` off its pull queue until the run's stream closes. */
static void drain_events(runlet_run *run, seen *seen) {
  for (;;) {
    runlet_event_owned *owned = NULL;
    runlet_error *err = runlet_run_next_event(run, -1, &owned);
    if (err || !owned) {
      runlet_error_free(err);
      return;
    }
    const runlet_event *event = runlet_event_owned_get(owned);
    fprintf(seen->events_out, "%s{\"seq\": %llu, \"kind\": ", ftell(seen->events_out) ? ", " : "",
            (unsigned long long)event->seq);
    json_write_string(seen->events_out, event->kind_name.ptr, event->kind_name.len);
    fputc('}', seen->events_out);
    runlet_event_owned_free(owned);
  }
}

/* How `run` ended, as an outcome object. */
static char *ending(runlet_run *run) {
  runlet_buf buf = {0};
  runlet_error *err = runlet_run_result_json(run, &buf);
  runlet_run_state state = runlet_run_status(run);
  char *outcome;
  if (state == RUNLET_RUN_SUCCEEDED && !err) {
    outcome = outcome_with("succeeded", "value", (const char *)buf.ptr, buf.len);
  } else if (state == RUNLET_RUN_CANCELLED) {
    outcome = outcome_with("cancelled", NULL, NULL, 0);
    runlet_error_free(err);
    err = NULL;
  } else if (state == RUNLET_RUN_FAILED && err && runlet_error_code(err) != RUNLET_ERR_JOURNAL) {
    runlet_str details = runlet_error_details_json(err);
    outcome = outcome_with("failed", "error", details.ptr, details.len);
    runlet_error_free(err);
    err = NULL;
  } else {
    outcome = host_error("the run ended without a result", err);
    err = NULL;
  }
  runlet_error_free(err);
  runlet_buf_free(buf);
  return outcome;
}

/* A runtime over the tools and the journal. */
static runlet_error *runtime_new(const plan *p, const runlet_tool_executor *executor,
                                 const runlet_journal_vtable *journal, runlet_runtime **out) {
  runlet_runtime_options options = RUNLET_RUNTIME_OPTIONS_INIT;
  options.registry_json = str_of(p->registry);
  options.executor = executor;
  options.journal = journal;
  options.limits_json = str_of(p->limits);
  options.event_queue_capacity = 1u << 20;
  options.digest_key_id = (runlet_str){DIGEST_KEY_ID, sizeof DIGEST_KEY_ID - 1};
  options.digest_key = (runlet_bytes){(const uint8_t *)DIGEST_KEY, sizeof DIGEST_KEY - 1};
  return runlet_runtime_new(&options, out);
}

/* Runs the plan; returns the outcome object, writing events into `seen`. */
static char *run_plan(const plan *p, scripted_tools *tools, memory_journal *store, seen *seen) {
  runlet_tool_executor executor = scripted_tools_executor(tools);
  runlet_journal_vtable journal = memory_journal_vtable(store);
  runlet_run_options run_options = RUNLET_RUN_OPTIONS_INIT;
  run_options.pull_events = true;
  memory_journal_stop_after(store, p->crash_after_appends);
  runlet_runtime *runtime = NULL;
  runlet_error *err = runtime_new(p, &executor, &journal, &runtime);
  if (err) return host_error("the runtime does not build", err);
  runlet_program *program = NULL;
  err = runlet_program_compile(runtime, str_of(p->source), str_of(p->inputs), &program);
  if (err) {
    char *outcome;
    if (runlet_error_code(err) == RUNLET_ERR_COMPILE) {
      runlet_str report = runlet_error_details_json(err);
      outcome = outcome_with("compile_error", "report", report.ptr, report.len);
      runlet_error_free(err);
    } else {
      outcome = host_error("the program does not compile", err);
    }
    runlet_runtime_free(runtime);
    return outcome;
  }
  runlet_run *run = NULL;
  err = runlet_run_start(runtime, program, str_of(p->inputs), &run_options, &run);
  if (err) {
    runlet_program_free(program);
    runlet_runtime_free(runtime);
    return host_error("the run does not start", err);
  }
  runlet_error_free(runlet_run_wait(run, -1));
  drain_events(run, seen);
  if (p->crash_after_appends >= 0) {
    /* The process is gone: its calls answer into nothing; a fresh one resumes from the journal. */
    runlet_str id = runlet_run_id(run);
    char *run_id = malloc(id.len + 1);
    memcpy(run_id, id.ptr, id.len);
    size_t run_id_len = id.len;
    runlet_run_free(run);
    runlet_program_free(program);
    scripted_tools_quiesce(tools);
    runlet_runtime_free(runtime);
    memory_journal_stop_after(store, -1);
    run = NULL;
    program = NULL;
    err = runtime_new(p, &executor, &journal, &runtime);
    if (!err) err = runlet_program_compile(runtime, str_of(p->source), str_of(p->inputs), &program);
    if (!err) err = runlet_run_resume(runtime, program, (runlet_str){run_id, run_id_len}, &run_options, &run);
    free(run_id);
    if (err) {
      runlet_program_free(program);
      runlet_runtime_free(runtime);
      return host_error("the run does not resume", err);
    }
    runlet_error_free(runlet_run_wait(run, -1));
    drain_events(run, seen);
  }
  char *outcome = ending(run);
  runlet_run_free(run);
  runlet_program_free(program);
  scripted_tools_quiesce(tools);
  runlet_runtime_free(runtime);
  return outcome;
}

int main(void) {
  size_t len = 0;
  char *bytes = read_all(stdin, &len);
  plan p;
  const char *problem = NULL;
  if (!plan_read(bytes, len, &p, &problem)) {
    fprintf(stderr, "conformance-host-c: %s\n", problem);
    return 2;
  }
  scripted_tools *tools = scripted_tools_new(&p);
  memory_journal *store = memory_journal_new();
  seen seen = {0};
  seen.events_out = open_memstream(&seen.events, &seen.events_len);
  char *outcome = run_plan(&p, tools, store, &seen);
  fclose(seen.events_out);
  printf("{\"outcome\": %s, ", outcome);
  scripted_tools_write_counts(tools, stdout);
  printf(", \"events\": [%s]}\n", seen.events);
  free(outcome);
  free(seen.events);
  scripted_tools_free(tools);
  memory_journal_free(store);
  free(p.cases);
  free(bytes);
  return 0;
}
