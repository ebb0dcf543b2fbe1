/* The committed layout of every public struct on LP64 targets: a change to a struct's size or a
 * field's offset fails this file's compilation, so an ABI change is always a visible diff here. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "runlet.h"

#define SIZE(type, bytes) _Static_assert(sizeof(type) == (bytes), #type " changed size")
#define OFFSET(type, field, at) _Static_assert(offsetof(type, field) == (at), #type "." #field " moved")

#if UINTPTR_MAX == UINT64_MAX
SIZE(runlet_str, 16);
SIZE(runlet_bytes, 16);
SIZE(runlet_buf, 16);
SIZE(runlet_event, 80);
OFFSET(runlet_event, kind, 8);
OFFSET(runlet_event, kind_name, 16);
OFFSET(runlet_event, run_id, 32);
OFFSET(runlet_event, seq, 48);
OFFSET(runlet_event, unix_ms, 56);
OFFSET(runlet_event, payload_json, 64);
SIZE(runlet_event_listener, 40);
OFFSET(runlet_event_listener, user_data, 8);
OFFSET(runlet_event_listener, kind_mask, 16);
OFFSET(runlet_event_listener, on_event, 24);
OFFSET(runlet_event_listener, drop, 32);
SIZE(runlet_tool_executor, 40);
OFFSET(runlet_tool_executor, user_data, 8);
OFFSET(runlet_tool_executor, invoke, 16);
OFFSET(runlet_tool_executor, drop, 24);
OFFSET(runlet_tool_executor, recover, 32);
SIZE(runlet_journal_record, 24);
OFFSET(runlet_journal_record, bytes, 8);
SIZE(runlet_journal_vtable, 88);
OFFSET(runlet_journal_vtable, abi_major, 8);
OFFSET(runlet_journal_vtable, flags, 12);
OFFSET(runlet_journal_vtable, user_data, 16);
OFFSET(runlet_journal_vtable, create_run, 24);
OFFSET(runlet_journal_vtable, header, 32);
OFFSET(runlet_journal_vtable, append, 40);
OFFSET(runlet_journal_vtable, read, 48);
OFFSET(runlet_journal_vtable, load_snapshot, 56);
OFFSET(runlet_journal_vtable, store_snapshot, 64);
OFFSET(runlet_journal_vtable, drop, 72);
OFFSET(runlet_journal_vtable, runs, 80);
SIZE(runlet_run_options, 72);
OFFSET(runlet_run_options, limits_json, 8);
OFFSET(runlet_run_options, pull_events, 24);
OFFSET(runlet_run_options, traceparent, 32);
OFFSET(runlet_run_options, tracestate, 48);
OFFSET(runlet_run_options, host_tag, 64);
OFFSET(runlet_retry_policy, backoff_cap_ms, 8);
SIZE(runlet_retry_policy, 16);
SIZE(runlet_runtime_options, 280);
OFFSET(runlet_runtime_options, registry_json, 8);
OFFSET(runlet_runtime_options, executor, 24);
OFFSET(runlet_runtime_options, journal, 32);
OFFSET(runlet_runtime_options, listener, 40);
OFFSET(runlet_runtime_options, worker_threads, 48);
OFFSET(runlet_runtime_options, default_loop_limit, 52);
OFFSET(runlet_runtime_options, event_queue_capacity, 56);
OFFSET(runlet_runtime_options, limits_json, 64);
OFFSET(runlet_runtime_options, retry, 80);
OFFSET(runlet_runtime_options, view, 96);
OFFSET(runlet_runtime_options, digest_key_id, 112);
OFFSET(runlet_runtime_options, digest_key, 128);
OFFSET(runlet_runtime_options, sqlite_journal_path, 144);
OFFSET(runlet_runtime_options, sqlite_durability, 160);
OFFSET(runlet_runtime_options, snapshot_every, 168);
OFFSET(runlet_runtime_options, mcp_servers_json, 176);
OFFSET(runlet_runtime_options, mcp_trusted_json, 192);
OFFSET(runlet_runtime_options, mcp_flags, 208);
OFFSET(runlet_runtime_options, postgres_journal_url, 216);
OFFSET(runlet_runtime_options, postgres_lease_ms, 232);
OFFSET(runlet_runtime_options, owner, 240);
OFFSET(runlet_runtime_options, runtime_flags, 256);
OFFSET(runlet_runtime_options, mcp_silence_timeout_ms, 264);
OFFSET(runlet_runtime_options, mcp_startup_timeout_ms, 272);
SIZE(runlet_worker_options, 24);
OFFSET(runlet_worker_options, concurrency, 8);
OFFSET(runlet_worker_options, max_recoveries, 12);
OFFSET(runlet_worker_options, poll_ms, 16);
SIZE(runlet_view_policy, 12);
OFFSET(runlet_view_policy, preview_chars, 8);
#endif

int main(void) {
  puts("layout: ok");
  return 0;
}
