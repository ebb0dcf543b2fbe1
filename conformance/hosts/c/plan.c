/* Reads the plan: `KEY LENGTH\n` then LENGTH bytes and `\n`, field after field. */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

#define HEADER "runlet-conformance-plan 1\n"

/* Parses a decimal integer text (an optional minus, then digits); false when it is not one. */
static bool decimal(text value, int64_t *out) {
  const char *p = value.ptr;
  bool negative = *p == '-';
  if (negative) p++;
  if (*p == '\0') return false;
  int64_t n = 0;
  for (; *p; p++) {
    if (*p < '0' || *p > '9' || n > (INT64_MAX - 9) / 10) return false;
    n = n * 10 + (*p - '0');
  }
  *out = negative ? -n : n;
  return true;
}

/* The case the next case field belongs to, or NULL before the first `case`. */
static plan_case *current(plan *out) { return out->case_count ? &out->cases[out->case_count - 1] : NULL; }

static bool add_case(plan *out, text tool) {
  plan_case *cases = realloc(out->cases, (out->case_count + 1) * sizeof *cases);
  if (!cases) return false;
  out->cases = cases;
  plan_case *c = &cases[out->case_count++];
  memset(c, 0, sizeof *c);
  c->tool = tool;
  c->times = -1;
  c->error_retry_after_ms = -1;
  return true;
}

/* Stores one field; false for an unknown key or a bad value. */
static bool field(plan *out, const char *key, text value, const char **error) {
  plan_case *c = current(out);
  int64_t number = 0;
  if (!strcmp(key, "source")) out->source = value;
  else if (!strcmp(key, "registry")) out->registry = value;
  else if (!strcmp(key, "inputs")) out->inputs = value;
  else if (!strcmp(key, "limits")) out->limits = value;
  else if (!strcmp(key, "unanswered")) out->unanswered = value;
  else if (!strcmp(key, "tool")) { /* the Go host registers handlers by name; C needs none */ }
  else if (!strcmp(key, "crash")) {
    if (!decimal(value, &out->crash_after_appends)) { *error = "`crash` is not a number"; return false; }
  } else if (!strcmp(key, "case")) {
    if (!add_case(out, value)) { *error = "out of memory"; return false; }
  } else if (!c) {
    *error = "a case field comes before any `case`";
    return false;
  } else if (!strcmp(key, "args")) { c->has_args = true; c->args = value; }
  else if (!strcmp(key, "times")) {
    if (!decimal(value, &c->times)) { *error = "`times` is not a number"; return false; }
  } else if (!strcmp(key, "delay_ms")) {
    if (!decimal(value, &c->delay_ms)) { *error = "`delay_ms` is not a number"; return false; }
  } else if (!strcmp(key, "result")) c->result = value;
  else if (!strcmp(key, "error_code")) { c->is_error = true; c->error_code = value; }
  else if (!strcmp(key, "error_message")) c->error_message = value;
  else if (!strcmp(key, "error_retryable")) c->error_retryable = !strcmp(value.ptr, "true");
  else if (!strcmp(key, "error_retry_after_ms")) {
    if (!decimal(value, &number)) { *error = "`error_retry_after_ms` is not a number"; return false; }
    c->error_retry_after_ms = number;
  } else if (!strcmp(key, "error_details")) c->error_details = value;
  else {
    *error = "the plan has an unknown field";
    return false;
  }
  return true;
}

bool plan_read(char *bytes, size_t len, plan *out, const char **error) {
  memset(out, 0, sizeof *out);
  out->crash_after_appends = -1;
  size_t header = strlen(HEADER);
  if (len < header || memcmp(bytes, HEADER, header)) {
    *error = "standard input is not a conformance plan (version 1)";
    return false;
  }
  size_t at = header;
  while (at < len) {
    char *line_end = memchr(bytes + at, '\n', len - at);
    char *space = line_end ? memchr(bytes + at, ' ', (size_t)(line_end - (bytes + at))) : NULL;
    if (!space) { *error = "a plan line is not `KEY LENGTH`"; return false; }
    *space = '\0';
    *line_end = '\0';
    const char *key = bytes + at;
    int64_t value_len = 0;
    if (!decimal((text){space + 1, (size_t)(line_end - space - 1)}, &value_len) || value_len < 0) {
      *error = "a plan field's length is not a number";
      return false;
    }
    size_t start = (size_t)(line_end - bytes) + 1;
    if ((size_t)value_len > len - start || start + (size_t)value_len >= len ||
        bytes[start + (size_t)value_len] != '\n') {
      *error = "a plan field runs past the end of the input";
      return false;
    }
    text value = {bytes + start, (size_t)value_len};
    value.ptr[value.len] = '\0'; /* the value's newline becomes its terminator */
    if (!field(out, key, value, error)) return false;
    at = start + (size_t)value_len + 1;
  }
  return true;
}
