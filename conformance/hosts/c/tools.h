/* The C host's tool executor: answers calls from the plan's scripted cases (first matching case
 * with a use left), after each case's delay on a thread of its own, and counts what it was asked:
 * every invocation with its arguments, and the most calls of each tool in flight at once. */
#ifndef CONFORMANCE_TOOLS_H
#define CONFORMANCE_TOOLS_H

#include <stdio.h>

#include "plan.h"
#include "runlet.h"

typedef struct scripted_tools scripted_tools;

/* Tools over `plan`'s cases; `plan` must outlive them. */
scripted_tools *scripted_tools_new(plan *plan);
void scripted_tools_free(scripted_tools *tools);

/* An executor over `tools` (no `drop`: runtimes come and go, the tools and their counters stay). */
runlet_tool_executor scripted_tools_executor(scripted_tools *tools);

/* Waits until every delayed answer has been given. */
void scripted_tools_quiesce(scripted_tools *tools);

/* Writes `"invocations": [...], "max_in_flight": {...}` (the observation's fields). */
void scripted_tools_write_counts(scripted_tools *tools, FILE *out);

#endif
