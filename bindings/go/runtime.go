// The Runtime: options copied into a C-owned runlet_runtime_options (the Go executor, a Go
// journal or the built-in SQLite one, limits, digest key), compiling programs, starting and
// resuming runs; Close frees it once, a cleanup frees a forgotten one.

package runlet

// #include <stdlib.h>
// #include "shims.h"
import "C"

import (
	"context"
	"encoding/json"
	"runtime"
	"sync"
	"time"
	"unsafe"
)

// Options is what a Runtime is built from.
type Options struct {
	// Registry is a registry file (INTERFACES.md §2): the tools and host input schemas.
	Registry []byte
	// Tools maps tool names to the handlers that run their calls.
	Tools Tools
	// Recover maps names of recoverable tools to the functions that tell whether an operation
	// left uncertain by a crash took effect (spec §5.4); a tool without one stays uncertain.
	Recover map[string]RecoverFunc
	// Journal is where runs are journaled: nil for memory (which keeps every run that has not
	// ended and the latest 1,024 that have, forgetting older ones), SQLite(path) for the built-in SQLite
	// journal, Postgres(url) for a PostgreSQL journal shared by many processes (Submit, Work),
	// or any Journal of the host's.
	Journal any
	// Owner is the name the runtime claims its runs under in its journal; "" for this process's
	// name. Runtimes of one process that work one PostgreSQL journal need names of their own.
	Owner string
	// Limits caps every run (spec §10), such as {"tool_calls": 100}.
	Limits Limits
	// DigestKey keys the digests of sensitive values; nil for a random key of this runtime.
	DigestKey *DigestKey
	// WorkerThreads is the size of the runtime's thread pool; 0 for one per core.
	WorkerThreads int
	// View is what events and snapshots may show of values labelled sensitive or secret by the
	// tool schemas; the zero value shows public ones only.
	View View
	// EventBuffer is how many events of a run wait for a reader of Run.Events, in librunlet's
	// queue and again in the channel, before the dropped-events marker replaces the rest; 0 for
	// 1024.
	EventBuffer int
	// NoLiveGraph builds a runtime whose runs fold no live graph, which saves that work on
	// every event: events and Run.Events are as before, but Run.Snapshot and the runs' pages
	// show a run's state and no nodes (the snapshot's integrity_errors say why), while
	// JournalSnapshot folds the graph from the journal.
	NoLiveGraph bool
	// SnapshotEvery is how many journaled events a run's snapshots are at least apart (spec
	// §5.3): Resume restores the latest that verifies and replays only what follows it. 0 for
	// the default (every 10,000 events; none for the in-memory journal), -1 for none.
	SnapshotEvery int64
	// MCP attaches MCP servers (a librunlet built with its mcp feature): their tools join the
	// registry as NAME.<tool>, with Registry laid over them (its entries override what they
	// name, such as a tool's "execution"), and calls of them go to the servers; nil for none.
	MCP *MCP
}

// MCP is the MCP servers a runtime attaches, started by NewRuntime and stopped by Close.
type MCP struct {
	// Config is the {"mcpServers": {NAME: {"command", "args", "env"} | {"url", "headers"}}}
	// JSON other MCP clients read.
	Config []byte
	// Trusted names the servers whose tool annotations are believed: readOnlyHint makes a tool
	// pure, idempotentHint idempotent.
	Trusted []string
	// AtMostOnce makes the tools that neither the registry nor a trusted annotation classifies
	// at_most_once instead of unsafe.
	AtMostOnce bool
	// Strict refuses the servers when one of their tools does not import, instead of leaving
	// it out.
	Strict bool
	// SilenceTimeout is how long a call may go with neither its answer nor a progress
	// notification before it fails (RL6102, retryable and uncertain) and its server is told to
	// cancel it: 0 for the default (five minutes), negative to wait for ever. Like
	// StartupTimeout it is taken in whole milliseconds, at least one.
	SilenceTimeout time.Duration
	// StartupTimeout is how long each server has to start and complete its handshake, and
	// again to list its tools: 0 for the default (30 s); negative is CodeInvalidArgument. A
	// server that npx must first download may need more.
	StartupTimeout time.Duration
}

// View is a view policy (spec §6.2): the strongest label of values shown in previews (stronger
// ones read "<redacted:LABEL>"), of value-derived metadata such as tool error messages (stronger
// is left out), and how many characters a preview keeps (0 for 200).
type View struct {
	Values       Sensitivity
	Metadata     Sensitivity
	PreviewChars uint32
}

// Sensitivity is a label of the tool schemas' x-runlet-sensitivity.
type Sensitivity uint32

const (
	Public    Sensitivity = C.RUNLET_SENSITIVITY_PUBLIC
	Sensitive Sensitivity = C.RUNLET_SENSITIVITY_SENSITIVE
	Secret    Sensitivity = C.RUNLET_SENSITIVITY_SECRET
)

// Limits are execution limits by key (tool_calls, wall_clock_ms, …; see runlet.h).
type Limits map[string]uint64

// DigestKey is a key for digests of sensitive values: its ID is pinned by journals, the Key
// never leaves the process.
type DigestKey struct {
	ID  string
	Key []byte
}

// Runtime compiles programs and runs them. Safe for concurrent use; Close it when done.
type Runtime struct {
	mu      sync.RWMutex
	ptr     *C.runlet_runtime
	ready   *readyQueue
	cleanup runtime.Cleanup
	tools   *executor
	events  int
}

const defaultEventBuffer = 1024

// maxEventBuffer is the largest EventBuffer taken: each run's channel is made that large.
const maxEventBuffer = 1 << 20

// maxWorkerThreads is the largest WorkerThreads taken.
const maxWorkerThreads = 1 << 16

// NewRuntime builds a runtime from opts.
func NewRuntime(opts Options) (*Runtime, error) {
	limits := ""
	if len(opts.Limits) > 0 {
		encoded, err := json.Marshal(opts.Limits)
		if err != nil {
			return nil, invalid("the limits do not encode: %v", err)
		}
		limits = string(encoded)
	}
	if opts.EventBuffer < 0 || opts.EventBuffer > maxEventBuffer {
		return nil, invalid("EventBuffer is %d: give 0 for the default (%d) or at most %d events", opts.EventBuffer,
			defaultEventBuffer, maxEventBuffer)
	}
	if opts.WorkerThreads < 0 || opts.WorkerThreads > maxWorkerThreads {
		return nil, invalid("WorkerThreads is %d: give 0 for one per core or at most %d", opts.WorkerThreads,
			maxWorkerThreads)
	}
	if opts.SnapshotEvery < -1 {
		return nil, invalid("SnapshotEvery is %d: give a count of events, 0 for the default or -1 for none", opts.SnapshotEvery)
	}
	c := (*C.runlet_runtime_options)(C.calloc(1, C.sizeof_runlet_runtime_options))
	defer cFree(unsafe.Pointer(c))
	c.struct_size = C.sizeof_runlet_runtime_options
	c.registry_json = cCopy(string(opts.Registry))
	defer cFree(unsafe.Pointer(c.registry_json.ptr))
	c.limits_json = cCopy(limits)
	defer cFree(unsafe.Pointer(c.limits_json.ptr))
	c.worker_threads = C.uint32_t(opts.WorkerThreads)
	if opts.NoLiveGraph {
		c.runtime_flags |= C.RUNLET_RUNTIME_NO_LIVE_GRAPH
	}
	c.owner = cCopy(opts.Owner)
	defer cFree(unsafe.Pointer(c.owner.ptr))
	c.view = C.runlet_view_policy{values: C.uint32_t(opts.View.Values), metadata: C.uint32_t(opts.View.Metadata),
		preview_chars: C.uint32_t(opts.View.PreviewChars)}
	events := opts.EventBuffer
	if events == 0 {
		events = defaultEventBuffer
	}
	c.event_queue_capacity = C.uint32_t(events)
	if opts.SnapshotEvery == -1 {
		c.snapshot_every = C.RUNLET_SNAPSHOTS_OFF
	} else {
		c.snapshot_every = C.uint64_t(opts.SnapshotEvery)
	}
	if key := opts.DigestKey; key != nil {
		c.digest_key_id = cCopy(key.ID)
		defer cFree(unsafe.Pointer(c.digest_key_id.ptr))
		c.digest_key = cCopyBytes(key.Key)
		defer cFree(unsafe.Pointer(c.digest_key.ptr))
	}
	if m := opts.MCP; m != nil {
		if m.StartupTimeout < 0 {
			return nil, invalid("MCP.StartupTimeout is %v: 0 for the default (30 s), or a positive duration", m.StartupTimeout)
		}
		trusted, err := json.Marshal(append([]string{}, m.Trusted...))
		if err != nil {
			return nil, invalid("the trusted MCP servers do not encode: %v", err)
		}
		c.mcp_servers_json = cCopy(string(m.Config))
		defer cFree(unsafe.Pointer(c.mcp_servers_json.ptr))
		c.mcp_trusted_json = cCopy(string(trusted))
		defer cFree(unsafe.Pointer(c.mcp_trusted_json.ptr))
		if m.Strict {
			c.mcp_flags |= C.RUNLET_MCP_STRICT
		}
		if m.AtMostOnce {
			c.mcp_flags |= C.RUNLET_MCP_AT_MOST_ONCE
		}
		switch {
		case m.SilenceTimeout < 0:
			c.mcp_silence_timeout_ms = C.RUNLET_MCP_SILENCE_FOREVER
		case m.SilenceTimeout > 0:
			c.mcp_silence_timeout_ms = millis(m.SilenceTimeout)
		}
		if m.StartupTimeout > 0 {
			c.mcp_startup_timeout_ms = millis(m.StartupTimeout)
		}
	}
	switch journal := opts.Journal.(type) {
	case nil:
	case *SQLiteJournal:
		c.sqlite_journal_path = cCopy(journal.Path)
		defer cFree(unsafe.Pointer(c.sqlite_journal_path.ptr))
		c.sqlite_durability = C.uint32_t(journal.Durability)
	case *PostgresJournal:
		if journal.Lease < 0 || journal.Lease > time.Duration(1<<32-1)*time.Millisecond {
			return nil, invalid("PostgresJournal.Lease is %v: give 0 for the default or a positive duration", journal.Lease)
		}
		c.postgres_journal_url = cCopy(journal.URL)
		defer cFree(unsafe.Pointer(c.postgres_journal_url.ptr))
		c.postgres_lease_ms = C.uint32_t(journal.Lease.Milliseconds())
	case Journal:
		vtable := (*C.runlet_journal_vtable)(C.calloc(1, C.sizeof_runlet_journal_vtable))
		defer cFree(unsafe.Pointer(vtable))
		C.runlet_go_fill_journal(vtable, C.uintptr_t(newHandle(journal)))
		c.journal = vtable
	default:
		return nil, invalid("Options.Journal is a %T: give nil, runlet.SQLite(path), runlet.Postgres(url) or a runlet.Journal", journal)
	}
	tools := newExecutor(opts.Tools, opts.Recover)
	executor := (*C.runlet_tool_executor)(C.calloc(1, C.sizeof_runlet_tool_executor))
	defer cFree(unsafe.Pointer(executor))
	withRecover := C.int(0)
	if len(opts.Recover) > 0 {
		withRecover = 1
	}
	C.runlet_go_fill_executor(executor, C.uintptr_t(newHandle(tools)), withRecover)
	c.executor = executor
	var ptr *C.runlet_runtime
	// The executor's and journal's handles are deleted by their drop, which runs on failure too.
	if err := errorOf(C.runlet_runtime_new(c, &ptr)); err != nil {
		return nil, err
	}
	ready, err := newReadyQueue()
	if err != nil {
		C.runlet_runtime_free(ptr)
		return nil, err
	}
	rt := &Runtime{ptr: ptr, ready: ready, tools: tools, events: events}
	rt.cleanup = runtime.AddCleanup(rt, freeRuntime, runtimeParts{ptr, ready})
	return rt, nil
}

// runtimeParts is what freeing a Runtime frees.
type runtimeParts struct {
	ptr   *C.runlet_runtime
	ready *readyQueue
}

// freeRuntime frees the C runtime (its runs end), then its ready queue.
func freeRuntime(parts runtimeParts) {
	C.runlet_runtime_free(parts.ptr)
	parts.ready.stop()
}

// with runs call with the C runtime and, when prog is not nil, the C program, both kept from
// Close until call returns. It panics when either is closed.
func (rt *Runtime) with(prog *Program, call func(*C.runlet_runtime, *C.runlet_program) error) error {
	if gcStress {
		runtime.GC()
	}
	rt.mu.RLock()
	defer rt.mu.RUnlock()
	if rt.ptr == nil {
		panic("runlet: the Runtime is closed")
	}
	if prog == nil {
		return call(rt.ptr, nil)
	}
	prog.mu.RLock()
	defer prog.mu.RUnlock()
	return call(rt.ptr, prog.handle())
}

// Close cancels the runs still running, waits for them to end and frees the runtime.
// Idempotent. Runs and programs of the runtime stay valid to Close.
func (rt *Runtime) Close() error {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.ptr == nil {
		return nil
	}
	rt.cleanup.Stop()
	freeRuntime(runtimeParts{rt.ptr, rt.ready})
	rt.ptr = nil
	return nil
}

// Compile compiles source against the runtime's registry. inputs are sample host inputs whose
// schemas the registry does not declare (inferred from the values), or nil. A program that does
// not compile gives a *CompileError.
func (rt *Runtime) Compile(source string, inputs map[string]any) (*Program, error) {
	sample, err := inputsJSON(inputs)
	if err != nil {
		return nil, err
	}
	var ptr *C.runlet_program
	err = rt.with(nil, func(r *C.runlet_runtime, _ *C.runlet_program) error {
		return errorOf(C.runlet_program_compile(r, view(source), view(sample), &ptr))
	})
	if err != nil {
		return nil, compileError(err)
	}
	return newProgram(ptr), nil
}

func compileError(err error) error {
	e, ok := err.(*Error)
	if !ok || e.Code != CodeCompile {
		return err
	}
	var report struct {
		Diagnostics []Diagnostic `json:"diagnostics"`
	}
	if json.Unmarshal(e.Details, &report) != nil {
		return err
	}
	errs := report.Diagnostics[:0]
	for _, d := range report.Diagnostics {
		if d.Severity == "error" {
			errs = append(errs, d)
		}
	}
	return &CompileError{Diagnostics: errs, err: e}
}

// inputsJSON encodes host inputs for C: empty for none.
func inputsJSON(inputs map[string]any) (string, error) {
	if inputs == nil {
		return "", nil
	}
	encoded, err := json.Marshal(inputs)
	if err != nil {
		return "", invalid("the inputs do not encode as JSON: %v", err)
	}
	return string(encoded), nil
}

// Start starts a run of prog with inputs (host input values by name, or nil). It never blocks:
// the run goes on on the runtime's threads. When ctx is done the run is cancelled, and Wait's
// error then matches both ErrCancelled and ctx's error (context.Canceled,
// context.DeadlineExceeded or its cause); when ctx is done already, Start returns its error and
// starts nothing. A trace context ctx carries (WithTraceContext) is the parent of the run's
// trace. The contexts of the run's handlers carry ctx's values.
func (rt *Runtime) Start(ctx context.Context, prog *Program, inputs map[string]any) (*Run, error) {
	input, err := inputsJSON(inputs)
	if err != nil {
		return nil, err
	}
	return rt.follow(ctx, prog, func(r *C.runlet_runtime, p *C.runlet_program, o *C.runlet_run_options, out **C.runlet_run) *C.runlet_error {
		return C.runlet_run_start(r, p, view(input), o, out)
	})
}

// Resume continues the interrupted run runID of prog from the runtime's journal: finished calls
// are not dispatched again. The journal's header must pin this program and configuration
// (ErrVersionMismatch otherwise); an unknown run is ErrUnknownRun. When ctx is done the run is
// cancelled, as for Start (and when it is done already, nothing is resumed). A run this runtime
// is driving is refused (RL7010) until it ends. Blocks while the journal is read.
func (rt *Runtime) Resume(ctx context.Context, prog *Program, runID string) (*Run, error) {
	return rt.follow(ctx, prog, func(r *C.runlet_runtime, p *C.runlet_program, o *C.runlet_run_options, out **C.runlet_run) *C.runlet_error {
		return C.runlet_run_resume(r, p, view(runID), o, out)
	})
}

// follow starts or resumes a run of prog under ctx with begin (unless ctx is done already),
// giving it the run options of ctx, and follows it.
func (rt *Runtime) follow(ctx context.Context, prog *Program,
	begin func(*C.runlet_runtime, *C.runlet_program, *C.runlet_run_options, **C.runlet_run) *C.runlet_error,
) (*Run, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var run *Run
	tag := rt.tools.runs.hold(ctx)
	defer rt.tools.runs.release(tag)
	err := rt.with(prog, func(r *C.runlet_runtime, p *C.runlet_program) error {
		return runOptions(ctx, tag, func(options *C.runlet_run_options) error {
			var ptr *C.runlet_run
			if err := errorOf(begin(r, p, options, &ptr)); err != nil {
				return err
			}
			run = launch(ctx, rt, ptr, tag)
			return nil
		})
	})
	return run, err
}

// millis is d in whole milliseconds, at least one: a timeout of the C options.
func millis(d time.Duration) C.uint64_t {
	return C.uint64_t(max(d.Milliseconds(), 1))
}
