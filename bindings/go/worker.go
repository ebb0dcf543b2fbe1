// Many machines: a runtime over a PostgreSQL journal (Options.Journal = Postgres(url)) submits
// runs for any worker to run (Submit) and runs the journal's runs as one of its workers (Work),
// taking over those of workers that died once their lease has expired — what `runlet submit`
// and `runlet worker` do. Needs a librunlet built with its opt-in postgres feature.

package runlet

// #include <stdlib.h>
// #include "shims.h"
import "C"

import (
	"context"
	"encoding/json"
	"runtime/cgo"
	"time"
	"unsafe"
)

// PostgresJournal selects the PostgreSQL journal at URL (postgres://user@host:port/db), shared
// by processes on many machines, whose claims are held by leases of Lease (0 for 10 s).
type PostgresJournal struct {
	URL   string
	Lease time.Duration
}

// Postgres selects the PostgreSQL journal at url with the default lease.
func Postgres(url string) *PostgresJournal { return &PostgresJournal{URL: url} }

// Submit journals a run of prog with inputs for a worker to run, and returns its id (r-…).
// Nothing runs here; the run's header retains the program, registry and inputs. Blocks while
// the journal stores it.
func (rt *Runtime) Submit(prog *Program, inputs map[string]any) (string, error) {
	input, err := inputsJSON(inputs)
	if err != nil {
		return "", err
	}
	var buf C.runlet_buf
	err = rt.with(prog, func(r *C.runlet_runtime, p *C.runlet_program) error {
		return errorOf(C.runlet_runtime_submit(r, p, view(input), nil, &buf))
	})
	if err != nil {
		return "", err
	}
	return string(takeBuf(buf)), nil
}

// WorkerOptions is how a worker shares its journal's runs; the zero value takes the defaults.
type WorkerOptions struct {
	// Concurrency is how many runs it drives at once; 0 for 16.
	Concurrency int
	// MaxRecoveries is how many takeovers a run may need before it is parked as failed
	// (RL7306); 0 for 5.
	MaxRecoveries int
	// Poll is how often it looks for runs when no notification wakes it; 0 for 1 s.
	Poll time.Duration
}

// Handled is what a worker did with a run it claimed.
type Handled struct {
	RunID string `json:"run_id"`
	// Action is "ended" (Status says how), "lost" (another process took it over, or this one's
	// lease lapsed), "parked" (taken over too often) or "left" (for an operator: Code, Message).
	Action  string `json:"action"`
	Status  string `json:"status"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Work runs the runs of the runtime's PostgreSQL journal in this process until ctx is done,
// calling report (may be nil) as each claimed run is handled, from the goroutine that called
// Work; then it claims nothing more and returns once the runs it drives have ended. Runtimes of
// one process that work the same journal need Options.Owner names of their own. A runtime
// without a PostgreSQL journal is ErrInvalidArgument.
func (rt *Runtime) Work(ctx context.Context, opts WorkerOptions, report func(Handled)) error {
	if opts.Concurrency < 0 || opts.MaxRecoveries < 0 || opts.Poll < 0 {
		return invalid("WorkerOptions must not be negative")
	}
	c := (*C.runlet_worker_options)(C.calloc(1, C.sizeof_runlet_worker_options))
	defer cFree(unsafe.Pointer(c))
	c.struct_size = C.sizeof_runlet_worker_options
	c.concurrency = C.uint32_t(opts.Concurrency)
	c.max_recoveries = C.uint32_t(opts.MaxRecoveries)
	c.poll_ms = C.uint32_t(opts.Poll.Milliseconds())
	return rt.with(nil, func(r *C.runlet_runtime, _ *C.runlet_program) error {
		var worker *C.runlet_worker
		if err := errorOf(C.runlet_worker_new(r, c, &worker)); err != nil {
			return err
		}
		defer C.runlet_worker_free(worker)
		stopped := make(chan struct{})
		defer close(stopped)
		go func() {
			select {
			case <-ctx.Done():
				C.runlet_worker_stop(worker)
			case <-stopped:
			}
		}()
		handle := cgo.NewHandle(reporter(report))
		defer handle.Delete()
		return errorOf(C.runlet_go_worker_run(worker, C.uintptr_t(handle)))
	})
}

// reporter is what runletGoWorkerReport calls with each report's JSON.
type reporter func(Handled)

//export runletGoWorkerReport
func runletGoWorkerReport(handle C.uintptr_t, report C.runlet_str) {
	defer func() { _ = recover() }()
	deliver := cgo.Handle(handle).Value().(reporter)
	var handled Handled
	if deliver == nil || json.Unmarshal([]byte(goString(report)), &handled) != nil {
		return
	}
	deliver(handled)
}
