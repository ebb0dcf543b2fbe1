/* An in-memory journal honouring the contract of runlet_journal_vtable: per run a header, records
 * without gaps under optimistic sequence checks, and the latest snapshot. One lock guards all. */
#include "journal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct stored {
  uint64_t seq;
  uint8_t *bytes;
  size_t len;
} stored;

typedef struct run {
  char *id;
  size_t id_len;
  char *header;
  size_t header_len;
  stored *records;
  size_t count, capacity;
  stored snapshot; /* seq 0: none */
} run;

struct memory_journal {
  pthread_mutex_t lock;
  run *runs;
  size_t run_count;
  int64_t appends_left;
};

static void *copy(const void *bytes, size_t len) {
  void *p = malloc(len ? len : 1);
  if (p && len) memcpy(p, bytes, len);
  return p;
}

static runlet_error *fail(runlet_code code, const char *message) {
  return runlet_error_new(code, (runlet_str){message, strlen(message)});
}

/* The run named `id`, or NULL; the lock is held. */
static run *find(memory_journal *j, runlet_str id) {
  for (size_t i = 0; i < j->run_count; i++) {
    if (j->runs[i].id_len == id.len && !memcmp(j->runs[i].id, id.ptr, id.len)) return &j->runs[i];
  }
  return NULL;
}

static uint64_t last_seq(const run *r) { return r->count ? r->records[r->count - 1].seq : 0; }

static runlet_error *create_run(void *user_data, runlet_str run_id, runlet_str header_json) {
  memory_journal *j = user_data;
  runlet_error *err = NULL;
  pthread_mutex_lock(&j->lock);
  run *runs = find(j, run_id) ? NULL : realloc(j->runs, (j->run_count + 1) * sizeof *runs);
  if (find(j, run_id)) {
    err = fail(RUNLET_ERR_JOURNAL_RUN_EXISTS, "the run exists");
  } else if (!runs) {
    err = fail(RUNLET_ERR_JOURNAL, "out of memory");
  } else {
    j->runs = runs;
    run *r = &runs[j->run_count++];
    memset(r, 0, sizeof *r);
    r->id = copy(run_id.ptr, run_id.len);
    r->id_len = run_id.len;
    r->header = copy(header_json.ptr, header_json.len);
    r->header_len = header_json.len;
  }
  pthread_mutex_unlock(&j->lock);
  return err;
}

static runlet_error *header(void *user_data, runlet_str run_id, runlet_journal_sink *sink) {
  memory_journal *j = user_data;
  pthread_mutex_lock(&j->lock);
  run *r = find(j, run_id);
  runlet_error *err = r ? runlet_journal_sink_push(sink, 0, (runlet_bytes){(const uint8_t *)r->header, r->header_len})
                        : fail(RUNLET_ERR_JOURNAL_UNKNOWN_RUN, "unknown run");
  pthread_mutex_unlock(&j->lock);
  return err;
}

static runlet_error *append(void *user_data, runlet_str run_id, uint64_t expected_seq,
                            const runlet_journal_record *records, size_t count, uint64_t *last_seq_out) {
  memory_journal *j = user_data;
  runlet_error *err = NULL;
  pthread_mutex_lock(&j->lock);
  run *r = find(j, run_id);
  if (j->appends_left == 0) {
    err = fail(RUNLET_ERR_JOURNAL, "the host stopped the runtime here");
  } else if (!r) {
    err = fail(RUNLET_ERR_JOURNAL_UNKNOWN_RUN, "unknown run");
  } else if (expected_seq != last_seq(r)) {
    *last_seq_out = last_seq(r);
    err = fail(RUNLET_ERR_JOURNAL_SEQUENCE_CONFLICT, "the journal moved on");
  } else {
    for (size_t i = 0; i < count && !err; i++) {
      if (records[i].seq != expected_seq + 1 + i) err = fail(RUNLET_ERR_JOURNAL_INVALID_RECORD, "a gap in the records");
    }
    if (!err && r->count + count > r->capacity) {
      size_t capacity = (r->count + count) * 2;
      stored *grown = realloc(r->records, capacity * sizeof *grown);
      if (!grown) err = fail(RUNLET_ERR_JOURNAL, "out of memory");
      else { r->records = grown; r->capacity = capacity; }
    }
    for (size_t i = 0; i < count && !err; i++) {
      r->records[r->count++] = (stored){records[i].seq, copy(records[i].bytes.ptr, records[i].bytes.len),
                                        records[i].bytes.len};
    }
    if (!err) {
      *last_seq_out = last_seq(r);
      if (j->appends_left > 0) j->appends_left--;
    }
  }
  pthread_mutex_unlock(&j->lock);
  return err;
}

static runlet_error *read_records(void *user_data, runlet_str run_id, uint64_t after, size_t limit,
                                  runlet_journal_sink *sink) {
  memory_journal *j = user_data;
  runlet_error *err = NULL;
  pthread_mutex_lock(&j->lock);
  run *r = find(j, run_id);
  if (!r) err = fail(RUNLET_ERR_JOURNAL_UNKNOWN_RUN, "unknown run");
  for (size_t i = 0, pushed = 0; r && !err && i < r->count && pushed < limit; i++) {
    if (r->records[i].seq <= after) continue;
    err = runlet_journal_sink_push(sink, r->records[i].seq, (runlet_bytes){r->records[i].bytes, r->records[i].len});
    pushed++;
  }
  pthread_mutex_unlock(&j->lock);
  return err;
}

static runlet_error *load_snapshot(void *user_data, runlet_str run_id, runlet_journal_sink *sink) {
  memory_journal *j = user_data;
  runlet_error *err = NULL;
  pthread_mutex_lock(&j->lock);
  run *r = find(j, run_id);
  if (!r) err = fail(RUNLET_ERR_JOURNAL_UNKNOWN_RUN, "unknown run");
  else if (r->snapshot.seq) {
    err = runlet_journal_sink_push(sink, r->snapshot.seq, (runlet_bytes){r->snapshot.bytes, r->snapshot.len});
  }
  pthread_mutex_unlock(&j->lock);
  return err;
}

static runlet_error *store_snapshot(void *user_data, runlet_str run_id, uint64_t upto_seq, runlet_bytes bytes) {
  memory_journal *j = user_data;
  runlet_error *err = NULL;
  pthread_mutex_lock(&j->lock);
  run *r = find(j, run_id);
  if (!r) err = fail(RUNLET_ERR_JOURNAL_UNKNOWN_RUN, "unknown run");
  else if (upto_seq > last_seq(r) || upto_seq == 0) err = fail(RUNLET_ERR_JOURNAL_INVALID_RECORD, "the snapshot covers records the journal lacks");
  else {
    free(r->snapshot.bytes);
    r->snapshot = (stored){upto_seq, copy(bytes.ptr, bytes.len), bytes.len};
  }
  pthread_mutex_unlock(&j->lock);
  return err;
}

static runlet_error *runs(void *user_data, runlet_journal_sink *sink) {
  memory_journal *j = user_data;
  runlet_error *err = NULL;
  pthread_mutex_lock(&j->lock);
  for (size_t i = 0; i < j->run_count && !err; i++) {
    err = runlet_journal_sink_push(sink, last_seq(&j->runs[i]), (runlet_bytes){(const uint8_t *)j->runs[i].id, j->runs[i].id_len});
  }
  pthread_mutex_unlock(&j->lock);
  return err;
}

memory_journal *memory_journal_new(void) {
  memory_journal *j = calloc(1, sizeof *j);
  if (!j) return NULL;
  pthread_mutex_init(&j->lock, NULL);
  j->appends_left = -1;
  return j;
}

void memory_journal_free(memory_journal *j) {
  if (!j) return;
  for (size_t i = 0; i < j->run_count; i++) {
    run *r = &j->runs[i];
    for (size_t k = 0; k < r->count; k++) free(r->records[k].bytes);
    free(r->records);
    free(r->snapshot.bytes);
    free(r->id);
    free(r->header);
  }
  free(j->runs);
  pthread_mutex_destroy(&j->lock);
  free(j);
}

void memory_journal_stop_after(memory_journal *j, int64_t appends) {
  pthread_mutex_lock(&j->lock);
  j->appends_left = appends;
  pthread_mutex_unlock(&j->lock);
}

runlet_journal_vtable memory_journal_vtable(memory_journal *j) {
  runlet_journal_vtable vtable = RUNLET_JOURNAL_VTABLE_INIT;
  vtable.user_data = j;
  vtable.create_run = create_run;
  vtable.header = header;
  vtable.append = append;
  vtable.read = read_records;
  vtable.load_snapshot = load_snapshot;
  vtable.store_snapshot = store_snapshot;
  vtable.runs = runs;
  return vtable;
}
