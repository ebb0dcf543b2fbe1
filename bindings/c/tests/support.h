/* Shared by the C tests: a CHECK macro, error helpers, string helpers, a small registry and a
 * runtime built around an executor. Plain C11. */
#ifndef RUNLET_TEST_SUPPORT_H
#define RUNLET_TEST_SUPPORT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runlet.h"

/* Fails the test with the expression and its place when `cond` is false. */
#define CHECK(cond)                                                                   \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);        \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)

/* Fails the test when `err` is not NULL, printing its code and message. */
#define CHECK_OK(expr) check_ok_at((expr), __FILE__, __LINE__, #expr)

/* Checks that `err` has `code`, then frees it. */
#define CHECK_ERR(expr, code) check_err_at((expr), (code), __FILE__, __LINE__, #expr)

void check_ok_at(runlet_error *err, const char *file, int line, const char *expr);
void check_err_at(runlet_error *err, runlet_code code, const char *file, int line, const char *expr);

/* A view of a NUL-terminated string. */
runlet_str str_of(const char *text);

/* Whether `view` holds exactly `text`. */
int str_is(runlet_str view, const char *text);

/* Whether `view` contains `needle`. */
int str_contains(runlet_str view, const char *needle);

/* A malloc'ed NUL-terminated copy of `view`. */
char *str_dup(runlet_str view);

/* Sleeps `ms` milliseconds. */
void sleep_ms(long ms);

/* One tool `echo.value(x)` returning any value, one `echo.slow(x)`, and the host input `items`
 * (a list of integers). */
extern const char *const TEST_REGISTRY;

/* Builds a runtime with `executor` (and optionally a journal and a listener). */
runlet_runtime *runtime_with(const runlet_tool_executor *executor, const runlet_journal_vtable *journal,
                             const runlet_event_listener *listener);

/* Compiles `source` on `runtime`, failing the test on errors. */
runlet_program *compile(runlet_runtime *runtime, const char *source);

/* Starts `program` with `input_json`, failing the test on errors. */
runlet_run *start(runlet_runtime *runtime, runlet_program *program, const char *input_json, int pull_events);

/* Waits for `run` and returns its result JSON (malloc'ed), failing the test unless it succeeded. */
char *result_of(runlet_run *run);

/* An executor whose `invoke` completes every call inline with its first argument. */
runlet_tool_executor echo_executor(void);

#endif
