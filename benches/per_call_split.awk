# Splits a `perf script` of engine figure (a) into the parts of the per-call path that
# BENCHMARKS.md names ("The per-call path taken apart"): each sample goes to the first part
# whose functions are on its stack, in the order below, and the parts print with their share.
#
#     perf record -F 4999 --call-graph dwarf,65528 -o a.data \
#         target/release/examples/engine_figures a-no-graph
#     perf script -i a.data | awk -f benches/per_call_split.awk
#
# A sample's header line starts in column one with the thread's name; its frames follow,
# indented, one per line, leaf first; a blank line ends it.

/^[^ \t]/ { if (open) flush(); open = 1; thread = $1; stack = ""; leaf_in_kernel = -1; next }
/^[ \t]*$/ { if (open) flush(); open = 0; next }
{
    if (leaf_in_kernel < 0) leaf_in_kernel = ($0 ~ /kernel/)
    stack = stack " " $2
}

function on(pattern) { return stack ~ pattern }

function part() {
    if (thread != "runlet-worker") return "the reader of every event (another thread)"
    if (!on("Runtime::launch")) return "workers outside the run's task (parking, stealing)"
    if (on("records_after")) return "encoding records (MessagePack, CRC-32C, buffer)"
    if (on("MemoryJournal")) return "the in-memory journal's append"
    if (on("RunObserver::publish|Publisher::offer")) return "publishing to the observer"
    if (on("Shell::settle")) {
        if (on("Instrumented")) return "the call itself (executor, output check, answer)"
        return "dispatch bookkeeping (call context, span, permits)"
    }
    if (on("OperationPrefix::derive|dispatch_id|input_digest")) return "core: identities (SHA-256)"
    if (on("iteration_key")) return "core: iteration keys (element digests)"
    if (on("release_retired|reclaim")) return "core: giving finished iterations back"
    if (on("react_into")) return "core: planning, node ids, events"
    if (on("Shell::react|Shell::drain")) return "shell: receiving answers, round bookkeeping"
    return "the run's task: the rest (tokio, channels, futures)"
}

function flush() {
    name = part()
    samples[name]++
    if (leaf_in_kernel) kernel[name]++
    total++
}

END {
    for (name in samples)
        printf "%5.1f%%  (kernel %4.1f%%)  %s\n", 100 * samples[name] / total, 100 * kernel[name] / total, name | "sort -rn"
    close("sort -rn")
    printf "%d samples\n", total
}
