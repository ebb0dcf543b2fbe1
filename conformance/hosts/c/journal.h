/* The C host's journal: runs kept in this process's memory behind a runlet_journal_vtable,
 * which can stop taking appends to crash the runtime using it. */
#ifndef CONFORMANCE_JOURNAL_H
#define CONFORMANCE_JOURNAL_H

#include <stdint.h>

#include "runlet.h"

typedef struct memory_journal memory_journal;

memory_journal *memory_journal_new(void);
void memory_journal_free(memory_journal *journal);

/* From now on the journal takes `appends` more `append` calls and refuses every later one,
 * writing nothing; -1 takes every one. */
void memory_journal_stop_after(memory_journal *journal, int64_t appends);

/* A vtable over `journal`, which must outlive every runtime it is given to (it has no `drop`:
 * two runtimes, one after the other, share it as two processes share a store). */
runlet_journal_vtable memory_journal_vtable(memory_journal *journal);

#endif
