/* The plan a conformance host reads on standard input (conformance/runner/src/plan.rs says the
 * format): the program, the texts handed to Runlet unread, and the scripted tools' cases. */
#ifndef CONFORMANCE_PLAN_H
#define CONFORMANCE_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A field's value: `len` bytes at `ptr`, NUL-terminated for convenience. */
typedef struct text {
  char *ptr;
  size_t len;
} text;

/* One scripted case of a tool. */
typedef struct plan_case {
  text tool;
  bool has_args;
  text args; /* the canonical argument list it answers, when has_args */
  int64_t times; /* how many calls it answers; -1 for any number */
  int64_t used;  /* how many it answered: guarded by the executor's lock */
  int64_t delay_ms;
  bool is_error;
  text result; /* presentation JSON, when !is_error */
  text error_code, error_message, error_details;
  bool error_retryable;
  int64_t error_retry_after_ms; /* -1 for no hint */
} plan_case;

typedef struct plan {
  text source, registry, inputs, limits, unanswered;
  int64_t crash_after_appends; /* -1 for no crash */
  plan_case *cases;
  size_t case_count;
} plan;

/* Reads a plan from `bytes`; on failure returns false with a message in `error` (static). */
bool plan_read(char *bytes, size_t len, plan *out, const char **error);

#endif
