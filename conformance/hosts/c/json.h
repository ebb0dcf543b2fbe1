/* The little JSON a conformance host needs: comparing two JSON texts as values, and writing
 * strings. */
#ifndef CONFORMANCE_JSON_H
#define CONFORMANCE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Whether two JSON texts of one encoder (Runlet's presentation JSON: keys in one order, no
 * insignificant space) hold the same value, numbers compared by value (`1` equals `1.0`). */
bool json_same(const char *a, size_t a_len, const char *b, size_t b_len);

/* Writes `len` bytes of UTF-8 as a JSON string literal. */
void json_write_string(FILE *out, const char *s, size_t len);

#endif
