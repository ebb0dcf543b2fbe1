/* Compares JSON texts token by token, numbers by value; escapes strings. */
#include "json.h"

#include <stdlib.h>
#include <string.h>

static bool starts_number(char c) { return c == '-' || (c >= '0' && c <= '9'); }

/* Copies the number at `s` (at most `left` bytes) and parses it; `*used` is its length. */
static double number_at(const char *s, size_t left, size_t *used) {
  char buf[128];
  size_t n = 0;
  while (n < left && n < sizeof buf - 1 && strchr("+-0123456789.eE", s[n])) {
    buf[n] = s[n];
    n++;
  }
  buf[n] = '\0';
  *used = n;
  return strtod(buf, NULL);
}

bool json_same(const char *a, size_t a_len, const char *b, size_t b_len) {
  size_t i = 0, j = 0;
  bool in_string = false;
  while (i < a_len && j < b_len) {
    if (!in_string && starts_number(a[i]) && starts_number(b[j])) {
      size_t a_used = 0, b_used = 0;
      double x = number_at(a + i, a_len - i, &a_used), y = number_at(b + j, b_len - j, &b_used);
      if (x != y) return false;
      i += a_used;
      j += b_used;
      continue;
    }
    if (a[i] != b[j]) return false;
    if (in_string && a[i] == '\\') {
      /* An escape: the escaped character is compared as it is, never as a quote. */
      if (i + 1 >= a_len || j + 1 >= b_len || a[i + 1] != b[j + 1]) return false;
      i += 2;
      j += 2;
      continue;
    }
    if (a[i] == '"') in_string = !in_string;
    i++;
    j++;
  }
  return i == a_len && j == b_len;
}

void json_write_string(FILE *out, const char *s, size_t len) {
  fputc('"', out);
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    switch (c) {
      case '"': fputs("\\\"", out); break;
      case '\\': fputs("\\\\", out); break;
      case '\n': fputs("\\n", out); break;
      case '\r': fputs("\\r", out); break;
      case '\t': fputs("\\t", out); break;
      default:
        if (c < 0x20) fprintf(out, "\\u%04x", c);
        else fputc(c, out);
    }
  }
  fputc('"', out);
}
